"""An open store: its configuration, its volumes, which names it holds, their manifests, and the
lock its writers take.

``Store(path)`` reads STORE/store.json (StoreError if the directory is no store). A stored name
is one whose manifest is on at least one volume; ``manifest(name)`` is the first copy, in volume
order, that parses (a damaged or missing copy on one volume does not hide the file: telling the
copies apart is the light scrub's job, ``manifest_copies`` lists them). A volume whose
volume.json is missing or names another store or index is *unavailable* (``volume_problem``):
nothing on it is read, as if the disk were gone.

Writers (put, rm, and repair) hold ``lock()``, an exclusive flock on STORE/store.lock, for the
whole of their work; readers take no lock: manifests never change, and a chunk file is only ever
replaced whole by rename (by a rerun of an interrupted put, or by repair) with the same bytes.
"""

from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from typing import Dict, Iterator, List, Optional, Set, Tuple

from ..errors import StoreError
from .codec import Codec
from .config import StoreConfig, load_config, volume_problem
from .layout import LOCK_FILE, MANIFEST_SUFFIX, MANIFESTS, TMP_SUFFIX, chunk_path, check_name, manifest_path
from .jsonfile import read_capped
from .manifest import MANIFEST_CAP, Manifest, parse_manifest

MANIFEST_CACHE = 64


class Store:
    """The store at directory ``root``."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.config: StoreConfig = load_config(root)
        self.codec = Codec(self.config.codec, self.config.k, self.config.m)
        self._problems: Optional[Dict[int, str]] = None
        self._manifests: Dict[Tuple[str, int, int, int], Manifest] = {}

    @property
    def volumes(self) -> Tuple[str, ...]:
        return self.config.volumes

    def volume_problem(self, index: int) -> str:
        """Why volume ``index`` is unavailable ("" if it is available); checked once per Store."""
        if self._problems is None:
            self._problems = {i: volume_problem(self.config, i) for i in range(len(self.volumes))}
        return self._problems[index]

    def refresh_volumes(self) -> None:
        """Check the volumes again at the next ``volume_problem`` (repair made one again)."""
        self._problems = None

    def available(self) -> List[int]:
        return [i for i in range(len(self.volumes)) if not self.volume_problem(i)]

    # ---------------------------------------------------------------- names and manifests
    def names(self) -> List[str]:
        """Every stored name (a manifest on at least one available volume), sorted."""
        out: Set[str] = set()
        for i in self.available():
            try:
                entries = os.listdir(os.path.join(self.volumes[i], MANIFESTS))
            except OSError:
                continue
            out.update(e[: -len(MANIFEST_SUFFIX)] for e in entries
                       if e.endswith(MANIFEST_SUFFIX) and not e.endswith(TMP_SUFFIX))
        return sorted(out)

    def manifest_copies(self, name: str) -> List[Tuple[int, str]]:
        """(volume index, path) of every copy of ``name``'s manifest on an available volume."""
        check_name(name, self.root)
        out = []
        for i in self.available():
            p = manifest_path(self.volumes[i], name)
            if os.path.exists(p):
                out.append((i, p))
        return out

    def read_manifest(self, path: str, name: str) -> Manifest:
        """The manifest at ``path`` of ``name``, checked against this store's volumes. Parsed
        manifests are kept (``MANIFEST_CACHE`` of them) while their file is the same (inode, size,
        mtime): a manifest with a record table of 45,000 records takes 0.4 s to parse."""
        st = os.stat(path)
        key = (path, st.st_ino, st.st_size, st.st_mtime_ns)
        got = self._manifests.get(key)
        if got is not None:
            return got
        man = parse_manifest(read_capped(path, MANIFEST_CAP, "manifest"), path, name)
        for c in man.chunks:
            if c.volume >= len(self.volumes):
                raise StoreError(path, None, f"manifest: chunk {c.index} on volume {c.volume}, and the store has "
                                 f"{len(self.volumes)}")
        if len(self._manifests) >= MANIFEST_CACHE:
            self._manifests.pop(next(iter(self._manifests)))
        self._manifests[key] = man
        return man

    def find_manifest(self, name: str) -> Optional[Manifest]:
        """``name``'s manifest (the first good copy), None if no volume has one; StoreError if every
        copy is damaged."""
        errors = []
        for _, p in self.manifest_copies(name):
            try:
                return self.read_manifest(p, name)
            except StoreError as e:
                errors.append(str(e))
            except OSError as e:
                errors.append(f"{p}: {e.strerror or e}")
        if errors:
            raise StoreError(self.root, None, f"every manifest of {name} is damaged: " + "; ".join(errors))
        return None

    def manifest(self, name: str) -> Manifest:
        """``name``'s manifest; StoreError if the name is not stored."""
        man = self.find_manifest(name)
        if man is None:
            raise StoreError(self.root, None, f"no file {name!r} in the store", "see `warchive store ls`")
        return man

    def chunk_path(self, man: Manifest, index: int) -> str:
        return chunk_path(self.volumes[man.chunks[index].volume], man.name, index)

    # ---------------------------------------------------------------- writers
    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the store's writer lock (blocks until the writer before has finished)."""
        fd = os.open(os.path.join(self.root, LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)
