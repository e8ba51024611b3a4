"""Helpers of the store tests: a small store in a temporary directory, and damage to its chunks."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import List

from warchive.store import Store, init_store


def make_store(root: Path, k: int = 4, m: int = 2, fragment_size: int = 512, volumes: int = 0) -> Store:
    """A new store at root/S over k+m (or ``volumes``) volumes root/v0, root/v1, ..."""
    n = volumes or k + m
    init_store(str(root / "S"), [str(root / f"v{i}") for i in range(n)], k=k, m=m, fragment_size=fragment_size)
    return Store(str(root / "S"))


def chunk_files(store: Store, name: str) -> List[str]:
    man = store.manifest(name)
    return [store.chunk_path(man, i) for i in range(man.n)]


def flip(path: str, offset: int) -> None:
    """Invert one byte of the file at ``offset``."""
    with open(path, "r+b") as f:
        f.seek(offset)
        b = f.read(1)
        f.seek(offset)
        f.write(bytes([b[0] ^ 0xFF]))


def truncate(path: str, size: int) -> None:
    os.truncate(path, size)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def store_in_place(archive_dir: Path, volumes_root: Path, k: int = 4, m: int = 2, fragment_size: int = 1024) -> Store:
    """Make ``archive_dir`` (a collection's archive/) a store of its own WARC files: a store is
    initialised at that directory over k+m volumes under ``volumes_root``, every file in it is put,
    and then removed, so that the collection's records can only come from the chunks. Small
    fragments (1 KiB: stripes of 4 KiB) make most records straddle stripes."""
    from warchive.store import put

    files = sorted(p for p in Path(archive_dir).iterdir() if p.is_file())
    init_store(str(archive_dir), [str(volumes_root / f"v{i}") for i in range(k + m)], k=k, m=m,
               fragment_size=fragment_size)
    store = Store(str(archive_dir))
    for p in files:
        put(store, str(p))
        p.unlink()
    return store
