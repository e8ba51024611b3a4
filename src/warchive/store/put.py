"""Putting a closed WARC/ARC file into a store: chunks first, the manifest last.

``put(store, path)`` stores the file under its base name. In order, under the store's writer lock:

1. refuse what is no closed archive file (an ``.open`` name, an empty file, bytes the reader
   cannot read: warchive.store.records), and a name already stored with other bytes; a name
   already stored with the same sha256 is a no-op ("already stored") that only puts back a
   manifest copy missing from a volume (a put killed while writing manifests);
2. read the file stripe by stripe (k × fragment_size bytes), encode each into k + m fragments,
   append fragment i to chunk file i (a temporary file on its volume), hashing as it goes;
3. fsync and rename every chunk file into place, fsync the directories;
4. write the manifest (warchive.store.manifest) to every volume the same way.

A file is stored when a manifest of it is on a volume. A put killed before step 4 leaves chunks
and temporary files but no manifest: the file is not stored, and the rerun removes the temporary
files and replaces the chunks. A put killed during step 4 leaves a complete file whose manifest
is on some volumes; the rerun writes the rest. ``put_object`` is the same without the archive
checks and with a record table given (tests store arbitrary bytes with it).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import List, Optional, Sequence

from ..durable import AtomicOutput
from ..errors import StoreError
from ..warc.defects import Defect
from .catalog import Store
from .codec import fragment_digest
from .layout import MANIFESTS, TMP_SUFFIX, check_name, chunk_path, manifest_path, placement
from .manifest import ChunkInfo, Manifest, RecordEntry
from .records import record_table

READ_HASH = 1 << 20


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
    before = _identity(path)
    records, defects = record_table(path)
    if _identity(path) != before:
        raise StoreError(path, None, "the file changed while it was read")
    result = put_object(store, path, name, records, expect=before)
    result.defects = defects
    return result


def put_object(store: Store, path: str, name: str, records: Sequence[RecordEntry],
               expect: Optional[tuple] = None) -> PutResult:
    """Store the bytes of ``path`` as ``name`` with the record table ``records`` (see put)."""
    check_name(name, path)
    for i in range(len(store.volumes)):
        if store.volume_problem(i):
            raise StoreError(store.root, None, f"cannot put with a volume unavailable: {store.volume_problem(i)}")
    with store.lock():
        existing = store.find_manifest(name)
        if existing is not None:
            return _already(store, path, existing)
        if expect is not None and _identity(path) != expect:
            raise StoreError(path, None, "the file changed while it was read")
        man = _write_chunks(store, path, name, records)
        written = _write_manifests(store, man)
        return PutResult(name, man, True, written)


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


def _write_chunks(store: Store, path: str, name: str, records: Sequence[RecordEntry]) -> Manifest:
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
            while True:
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
        for out in outs:
            out.commit()
    except BaseException:
        for out in outs:
            out.abort()
        raise
    chunks = tuple(ChunkInfo(i, where[i], csize, hashes[i].hexdigest()) for i in range(n))
    return Manifest(name, codec.name, k, cfg.m, cfg.fragment_size, codec.header_size, size, whole.hexdigest(),
                    chunks, tuple(stripes), tuple(records))


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

