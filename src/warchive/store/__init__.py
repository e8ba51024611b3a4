"""The durable store: closed WARC/ARC files kept as k data + m parity chunks (Reed-Solomon through
pyeclib), described by immutable manifests, read back verified (docs/format.md,
"Durable store", specifies the files).

    from warchive.store import Store, init_store, put, get, StoreFile
    init_store("STORE", ["/disk1/v", "/disk2/v", ...], k=4, m=2)
    store = Store("STORE")
    put(store, "crawl.warc.gz")                      # chunks, then the manifest on every volume
    with StoreFile(store, "crawl.warc.gz") as f:     # seekable, verified, degraded reads on the fly
        f.pread(length, offset)

The modules, one job each, and what the scrub, repair and ``store://`` code builds on:

  layout     names inside a volume, valid stored names, placement of chunks on volumes
  jsonfile   canonical JSON and the strict parser of store.json, volume.json and manifests
  config     store.json and volume.json; ``init_store``
  codec      ``Codec``: pyeclib's ECDriver, with the fragment layout checked; ``fragment_digest``
  manifest   ``Manifest`` (geometry: stripes, fragment offsets and lengths), ``parse_manifest``
  catalog    ``Store``: an open store, its volumes (available or not), names, manifests, writer lock
  records    the records of a file: their listing (fast for Wget's `sl` members), its hash, the table
  put        ``put``, ``put_object``: chunks first, manifest last
  fragments  ``FragmentReader``: verified fragment reads, decode when one is bad, ``Damage``
  get        ``get``, ``get_to_path``, ``parse_range``
  storefile  ``StoreFile``: a read-only seekable file object over a stored file
  remove     ``remove``: manifests first, then chunks
  urls       ``store://STORE/NAME``: parsing, ``open_url``, ``Stores`` (what index, extract, check and
             replay's archive paths open a stored file by)

Errors are ``warchive.errors.StoreError`` (an ArchiveError) naming the file and what is wrong.
"""

from ..errors import StoreError
from .catalog import Store
from .config import StoreConfig, init_store
from .fragments import Damage, FragmentReader
from .get import get, get_to_path, parse_range
from .manifest import Manifest, parse_manifest
from .put import PutResult, put, put_object
from .records import RecordEntry, RecordSpan, list_records, listing_digest
from .remove import remove
from .storefile import StoreFile

__all__ = ["Damage", "FragmentReader", "Manifest", "PutResult", "RecordEntry", "RecordSpan", "Store", "StoreConfig",
           "StoreError", "StoreFile", "get", "get_to_path", "init_store", "list_records", "listing_digest", "parse_manifest", "parse_range", "put",
           "put_object", "remove"]
