"""Putting a closed WARC/ARC file into a store: chunks first, the manifest last.

``put(store, path)`` stores the file under its base name. In order, under the store's writer lock:

1. refuse what is no closed archive file (an ``.open`` name, an empty file, bytes the reader
   cannot read: warchive.store.records), and a name already stored with other bytes; a name
   already stored with the same sha256 is a no-op ("already stored") that only puts back a
   manifest copy missing from a volume (a put killed while writing manifests);
2. read the file stripe by stripe (k × fragment_size bytes), encode each into k + m fragments,
   append fragment i to chunk file i (a temporary file on its volume), hashing as it goes; the
   records are listed (warchive.store.records) in a thread meanwhile, and a file the reader
   refuses is refused here, its temporary chunks removed;
3. fsync and rename every chunk file into place, fsync the directories;
4. write the manifest (warchive.store.manifest) to every volume the same way.

A file is stored when a manifest of it is on a volume. A put killed before step 4 leaves chunks
and temporary files but no manifest: the file is not stored, and the rerun removes the temporary
files and replaces the chunks. A put killed during step 4 leaves a complete file whose manifest
is on some volumes; the rerun writes the rest. ``put_object`` is the same without the archive
checks and with the records given (tests store arbitrary bytes with it).
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence, Tuple

from ..durable import AtomicOutput
from ..errors import StoreError
from ..warc.defects import Defect
from .catalog import Store
from .codec import fragment_digest
from .layout import MANIFESTS, TMP_SUFFIX, check_name, chunk_path, manifest_path, placement
from .manifest import ChunkInfo, Manifest
from .records import RecordEntry, list_records, listing_digest

READ_HASH = 1 << 20
Lister = Callable[[], Tuple[Sequence[RecordEntry], Sequence[Defect]]]


@dataclass
class PutResult:
    name: str
    manifest: Manifest
    stored: bool                 # False: it was already stored (same sha256)
    manifests_written: int       # copies of the manifest written by this put
    defects: List[Defect] = field(default_factory=list)


def put(store: Store, path: str) -> PutResult:
    """Store the closed WARC/ARC file at ``path`` under its base name."""
    name = os.path.basename(path)
    if name.endswith(".open"):
        raise StoreError(path, None, "an .open file is still being written",
                         "store it once it is closed, or `warchive recover` it")
    check_name(name, path)
    if not os.path.isfile(path):
        raise StoreError(path, None, "not a regular file" if os.path.exists(path) else "no such file")
    if os.path.getsize(path) == 0:
        raise StoreError(path, None, "an empty file is no WARC/ARC file")
    if store.find_manifest(name) is not None:   # the common rerun: no need to read its records again
        with store.lock():
            existing = store.find_manifest(name)
            if existing is not None:
                return _already(store, path, existing)
    return _put(store, path, name, lambda: list_records(path), _identity(path))


def put_object(store: Store, path: str, name: str, records: Sequence[RecordEntry]) -> PutResult:
    """Store the bytes of ``path`` as ``name`` with the records ``records`` (see put)."""
    check_name(name, path)
    return _put(store, path, name, lambda: (list(records), []), None)


def _put(store: Store, path: str, name: str, lister: Lister, expect: Optional[tuple]) -> PutResult:
    for i in range(len(store.volumes)):
        if store.volume_problem(i):
            raise StoreError(store.root, None, f"cannot put with a volume unavailable: {store.volume_problem(i)}")
    with store.lock():
        existing = store.find_manifest(name)
        if existing is not None:
            return _already(store, path, existing)
        if expect is not None and _identity(path) != expect:
            raise StoreError(path, None, "the file changed while it was read")
        man, defects = _write_chunks(store, path, name, _Listing(lister))
        if expect is not None and _identity(path) != expect:
            raise StoreError(path, None, "the file changed while it was read")
        written = _write_manifests(store, man)
        return PutResult(name, man, True, written, defects)


def _identity(path: str) -> tuple:
    st = os.stat(path)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _already(store: Store, path: str, existing: Manifest) -> PutResult:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(READ_HASH)
            if not b:
                break
            h.update(b)
    if h.hexdigest() != existing.sha256:
        raise StoreError(path, None, f"{existing.name} is already stored with other bytes (sha256 "
                         f"{existing.sha256}, this file's {h.hexdigest()})",
                         "store it under another name, or `warchive store rm` the stored one first")
    return PutResult(existing.name, existing, False, _write_manifests(store, existing))


def _remove_temps(directory: str, prefix: str) -> None:
    """Temporary files a killed writer left for ``prefix`` (AtomicOutput's PREFIX.<random>.tmp)."""
    try:
        entries = os.scandir(directory)
    except OSError:
        return
    with entries:
        for e in entries:
            if e.name.startswith(prefix + ".") and e.name.endswith(TMP_SUFFIX) and \
                    len(e.name) == len(prefix) + 13 + len(TMP_SUFFIX):   # "." + 12 hex + ".tmp"
                try:
                    os.unlink(e.path)
                except OSError:
                    pass


class _Listing:
    """The file's records listed in a thread beside the chunk writing (the two take about as long;
    the kernels and the hashes release the GIL): ``result()`` waits and re-raises its error."""

    def __init__(self, lister: Lister) -> None:
        self._lister = lister
        self._got: Optional[Tuple[List[RecordEntry], List[Defect]]] = None
        self._error: Optional[BaseException] = None
        self._thread = threading.Thread(target=self._run, name="warchive-store-list", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            records, defects = self._lister()
            self._got = (list(records), list(defects))
        except BaseException as e:   # re-raised by result(), in the putting thread
            self._error = e

    @property
    def failed(self) -> bool:
        return self._error is not None

    def result(self) -> Tuple[List[RecordEntry], List[Defect]]:
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._got is not None
        return self._got


def _write_chunks(store: Store, path: str, name: str, listing: _Listing) -> Tuple[Manifest, List[Defect]]:
    codec, cfg = store.codec, store.config
    k, n = cfg.k, cfg.k + cfg.m
    where = placement(name, n, len(store.volumes))
    paths = [chunk_path(store.volumes[where[i]], name, i) for i in range(n)]
    for i, p in enumerate(paths):
        _remove_temps(os.path.dirname(p), os.path.basename(p))
    outs = [AtomicOutput(p) for p in paths]
    try:
        hashes = [hashlib.sha256() for _ in range(n)]
        whole = hashlib.sha256()
        stripes = []
        size = csize = 0
        step = k * cfg.fragment_size
        with open(path, "rb") as f:
            while not listing.failed:
                buf = f.read(step)
                if not buf:
                    break
                size += len(buf)
                csize += codec.fragment_length(len(buf))
                whole.update(buf)
                frags = codec.encode(buf)
                for i, fr in enumerate(frags):
                    outs[i].write(fr)
                    hashes[i].update(fr)
                stripes.append(tuple(fragment_digest(fr) for fr in frags))
        records, defects = listing.result()
        for out in outs:
            out.commit()
    except BaseException:
        for out in outs:
            out.abort()
        raise
    chunks = tuple(ChunkInfo(i, where[i], csize, hashes[i].hexdigest()) for i in range(n))
    return Manifest(name, codec.name, k, cfg.m, cfg.fragment_size, codec.header_size, size, whole.hexdigest(),
                    chunks, tuple(stripes), tuple(r.span for r in records), listing_digest(records)), defects


def _write_manifests(store: Store, man: Manifest) -> int:
    """Put ``man`` on every volume that lacks it; how many copies were written."""
    data = man.to_json()
    written = 0
    for vol in store.volumes:
        p = manifest_path(vol, man.name)
        if os.path.exists(p):
            continue
        _remove_temps(os.path.join(vol, MANIFESTS), os.path.basename(p))
        with AtomicOutput(p) as out:
            out.write(data)
        written += 1
    return written

