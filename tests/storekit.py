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
