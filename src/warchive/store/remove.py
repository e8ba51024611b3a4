"""Removing a stored file: every manifest copy first, then the chunks, never the other way round.

``remove(store, name)`` holds the writer lock, unlinks the manifest from every volume and fsyncs
those directories (from then on the file is not stored), then unlinks its chunk files and any
temporary files a killed writer left for them. A remove killed half way leaves either a stored
file whose manifest is on fewer volumes (rerun rm, or put the same file to restore the copies) or
an unstored name with leftover chunks (rerun rm, or put again): never a manifest without chunks.
"""

from __future__ import annotations

import os
import re
from typing import List

from ..durable import fsync_dir
from ..errors import StoreError
from .catalog import Store
from .layout import CHUNKS, MANIFESTS, check_name, chunk_path, manifest_path

_CHUNK_OR_TEMP = re.compile(r"\d{1,2}(\.[0-9a-f]{12}\.tmp)?\Z")   # after "NAME.": a chunk, or its temp file


def remove(store: Store, name: str) -> List[str]:
    """Remove stored file ``name``; the paths removed. StoreError if nothing of it is there."""
    check_name(name, store.root)
    removed: List[str] = []
    with store.lock():
        copies = [manifest_path(v, name) for v in store.volumes]
        present = [p for p in copies if os.path.exists(p)]
        n = store.config.k + store.config.m
        chunks = [chunk_path(v, name, i) for v in store.volumes for i in range(n)]
        if not present and not any(os.path.exists(p) for p in chunks):
            raise StoreError(store.root, None, f"no file {name!r} in the store", "see `warchive store ls`")
        for p in present:
            os.unlink(p)
            removed.append(p)
        for v in store.volumes:
            fsync_dir(os.path.join(v, MANIFESTS), strict=False)
        for v in store.volumes:
            d = os.path.join(v, CHUNKS)
            try:
                entries = [e for e in os.listdir(d) if e.startswith(name + ".")]
            except OSError:
                continue
            for e in entries:
                if _CHUNK_OR_TEMP.match(e[len(name) + 1:]):
                    os.unlink(os.path.join(d, e))
                    removed.append(os.path.join(d, e))
            fsync_dir(d, strict=False)
    return removed
