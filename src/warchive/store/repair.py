"""Repairing stored files: chunks rebuilt from the others byte for byte, manifest copies rewritten from
the good one; nothing written that has not been checked against the manifest, nothing changed when
a stripe has lost more than m fragments.

``repair(store, name)``, under the store's writer lock:

1. the good manifest is the copy the others agree with (warchive.store.scrub.manifest_state: the
   manifest's own checksum tells a torn copy, the majority a disagreeing one); none (every copy
   damaged, or intact copies that disagree with no majority): StoreError, nothing changed;
2. every fragment of every stripe is read and checked against its hash (and every chunk file's
   size); a stripe with more than m bad fragments: StoreError naming it, nothing changed;
3. each chunk with a bad fragment (or missing, or of the wrong size) is written again whole, as a
   temporary file on its volume: its good fragments as they are, its bad ones decoded from k good
   fragments of their stripe and encoded again, each checked against its hash, the whole file
   against the chunk's sha256, then fsync and rename over the old one. A volume that is gone (its
   directory missing or empty: a replaced disk) is made again (volume.json) first; one that holds
   something else (another store's volume.json) is refused;
4. manifest copies that are missing, torn or disagreeing are written again from the good copy.

Records are never looked at: a file whose chunks are intact and whose records fail their digests
was bad at ingest (deep scrub flags it) and is left as it is; its chunks hold exactly what was put.

A repair killed at any moment leaves each chunk file either as it was or rebuilt and checked, and
temporary files the next repair (or put) removes: never a file more damaged than before.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

from ..durable import AtomicOutput, fsync_dir
from ..errors import StoreError
from .catalog import Store
from .codec import Codec, fragment_digest
from .config import volume_json
from .layout import CHUNKS, MANIFESTS, VOLUME_JSON, manifest_path, store_url
from .manifest import Manifest
from .put import _remove_temps
from .scrub import manifest_state, scan_fragments


@dataclass
class RepairResult:
    name: str
    chunks: List[int] = field(default_factory=list)        # chunk indexes rebuilt
    fragments: int = 0                                      # fragments decoded and encoded again
    manifests: List[int] = field(default_factory=list)     # volumes whose manifest copy was written
    volumes: List[int] = field(default_factory=list)       # volumes made again

    @property
    def changed(self) -> bool:
        return bool(self.chunks or self.manifests or self.volumes)


def repair(store: Store, name: str) -> RepairResult:
    """Repair stored file ``name`` (see the module docstring)."""
    with store.lock():
        return _repair(store, name)


def repair_all(store: Store, names: Optional[Sequence[str]] = None) -> Dict[str, object]:
    """Repair ``names`` (default: every stored name): name -> RepairResult or the StoreError."""
    out: Dict[str, object] = {}
    for name in names or store.names():
        try:
            out[name] = repair(store, name)
        except StoreError as e:
            out[name] = e
    return out


def _repair(store: Store, name: str) -> RepairResult:
    url = store_url(store.root, name)
    res = RepairResult(name)
    ms = manifest_state(store, name)
    man = ms.manifest
    if man is None:
        raise StoreError(url, None, "no good copy of its manifest: " + "; ".join(f.detail for f in ms.findings),
                         "nothing changed")
    revive = _volumes_to_make(store, man)
    scan = scan_fragments(store, man, hash_chunks=True)
    lost = {s: bad for s, bad in scan.bad.items() if len(bad) > man.m}
    if lost:
        s = min(lost)
        raise StoreError(url, man.stripe_start(s), f"{len(lost)} stripes have more than m={man.m} bad fragments "
                         f"(stripe {s}: chunks " + ", ".join(f"{i} ({p})" for i, p in sorted(lost[s].items()))
                         + ") and cannot be rebuilt", "nothing changed; restore the file from another copy")
    rebuild = sorted({i for bad in scan.bad.values() for i in bad}
                     | {i for i, ok in scan.chunk_sha_ok.items() if not ok}
                     | {c.index for c in man.chunks if c.index not in scan.chunk_sha_ok and man.stripe_count == 0})
    for v in revive:
        _make_volume(store, v)
        res.volumes.append(v)
    if revive:
        store.refresh_volumes()
    if rebuild:
        res.fragments = _rebuild(store, man, rebuild, scan.bad)
        res.chunks = rebuild
    again = manifest_state(store, name) if revive else ms
    for v in sorted(set(again.bad_volumes) | set(ms.bad_volumes)):
        if store.volume_problem(v):
            continue
        p = manifest_path(store.volumes[v], name)
        _remove_temps(os.path.join(store.volumes[v], MANIFESTS), os.path.basename(p))
        with AtomicOutput(p) as out:
            out.write(ms.data)
        res.manifests.append(v)
    return res


def _volumes_to_make(store: Store, man: Manifest) -> List[int]:
    """Unavailable volumes that are gone (missing, or an empty directory): made again by repair.
    A volume holding anything else is refused (StoreError)."""
    out = []
    for v in range(len(store.volumes)):
        problem = store.volume_problem(v)
        if not problem:
            continue
        d = store.volumes[v]
        if not os.path.exists(d) or (os.path.isdir(d) and _empty(d)):
            out.append(v)
        elif any(c.volume == v for c in man.chunks):
            raise StoreError(store.root, None, f"volume {v} is unavailable and not empty ({problem})",
                             "mount the right disk there, or empty the directory to have repair make it again")
    return out


def _empty(d: str) -> bool:
    for sub in os.listdir(d):
        p = os.path.join(d, sub)
        if sub in (MANIFESTS, CHUNKS) and os.path.isdir(p) and not os.listdir(p):
            continue
        return False
    return True


def _make_volume(store: Store, v: int) -> None:
    d = store.volumes[v]
    for sub in (MANIFESTS, CHUNKS):
        os.makedirs(os.path.join(d, sub), exist_ok=True)
        fsync_dir(os.path.join(d, sub), strict=False)
    with AtomicOutput(os.path.join(d, VOLUME_JSON)) as out:
        out.write(volume_json(store.config, v))


def _rebuild(store: Store, man: Manifest, indexes: List[int], bad: Dict[int, Dict[int, str]]) -> int:
    """Write chunks ``indexes`` of ``man`` again; the number of fragments rebuilt."""
    codec = store.codec
    if (codec.name, codec.k, codec.m, codec.header_size) != (man.codec, man.k, man.m, man.header_size):
        codec = Codec(man.codec, man.k, man.m)
    url = store_url(store.root, man.name)
    paths = {i: store.chunk_path(man, i) for i in indexes}
    fds: Dict[int, int] = {}
    for c in man.chunks:
        if c.index not in indexes:
            fds[c.index] = os.open(store.chunk_path(man, c.index), os.O_RDONLY)
    for i, p in paths.items():
        _remove_temps(os.path.dirname(p), os.path.basename(p))
    outs = {i: AtomicOutput(p) for i, p in paths.items()}
    hashes = {i: hashlib.sha256() for i in indexes}
    src: Dict[int, Optional[int]] = {}
    for i in indexes:   # a rebuilt chunk's good fragments are read from the old file, where there is one
        try:
            src[i] = os.open(paths[i], os.O_RDONLY)
        except OSError:
            src[i] = None
    rebuilt = 0
    try:
        for s in range(man.stripe_count):
            want, off = man.fragment_length(s), man.fragment_offset(s)
            broken = bad.get(s, {})
            frags: Dict[int, bytes] = {}
            for i in indexes:
                fd = src[i]
                if i not in broken and fd is not None:
                    data = os.pread(fd, want, off)
                    if len(data) == want and fragment_digest(data) == man.stripes[s][i]:
                        frags[i] = data
            missing = [i for i in indexes if i not in frags]
            if missing:
                good: Dict[int, bytes] = {}
                for j in range(man.n):
                    if len(good) >= man.k:
                        break
                    if j in broken:
                        continue
                    got = frags.get(j) if j in indexes else os.pread(fds[j], want, off)
                    if got is not None and len(got) == want and fragment_digest(got) == man.stripes[s][j]:
                        good[j] = got
                if len(good) < man.k:
                    raise StoreError(url, man.stripe_start(s), f"stripe {s}: fewer than k={man.k} good fragments "
                                     "while rebuilding (did a chunk change meanwhile?)", "nothing published")
                again = codec.encode(codec.decode(good, man.stripe_size(s)))
                for i in missing:
                    if fragment_digest(again[i]) != man.stripes[s][i]:
                        raise StoreError(url, man.stripe_start(s), f"stripe {s}: fragment {i} encoded again does "
                                         "not match its hash in the manifest", "nothing published")
                    frags[i] = again[i]
                    rebuilt += 1
            for i in indexes:
                outs[i].write(frags[i])
                hashes[i].update(frags[i])
        for i in indexes:
            if hashes[i].hexdigest() != man.chunks[i].sha256:
                raise StoreError(url, None, f"chunk {i} rebuilt does not match its sha256 in the manifest",
                                 "nothing published")
        for i in indexes:
            outs[i].commit()
    except BaseException:
        for out in outs.values():
            if not out.closed:
                out.abort()
        raise
    finally:
        for fd in list(fds.values()) + [f for f in src.values() if f is not None]:
            os.close(fd)
    return rebuilt
