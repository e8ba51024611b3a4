"""The collections a server answers for: pywb's automatic ones under a root directory and the
ones a configuration names, each opened once (its query engine and its capture loader) and
reopened when its index files change.

A file ROOT/NAME.wacz is the read-only collection NAME (a directory NAME
wins): its records are read by byte range inside the zip (warchive.wacz.reader),
nothing is extracted; its index entries, once checked against their hashes and
the limits across a WACZ's index, are sorted into a temporary segment
(``_open_wacz``). A WACZ that fails is unavailable, as below.

A collection whose index cannot be opened is ``CollectionUnavailable``, told once per change
of its index files and remembered, so the server can answer 503 for it and serve the others.
An index that changes while it is opened (a segment listed, then removed by a compaction
before it was opened) is looked at again, up to OPEN_ATTEMPTS times, not reported unavailable;
a view opened in the same clock tick as the last change is not trusted (``_trusted``).
A name that is not a collection (hidden, with a separator, ``..``) is no collection: nothing
here ever makes a path from a name it was not given by the directory listing or the config.
"""

from __future__ import annotations

import functools
import logging
import os
import stat
import threading
import time
from typing import Any, Dict, List, Optional, Tuple, Union

from ..errors import ArchiveError, CollectionUnavailable
from ..index.query import Engine, Index, NamedSource, named_sources
from ..wacz.indexsegment import spooled
from ..wacz.keys import Rekeyed
from ..wacz.reader import INDEXES, WaczFile
from .config import CollectionConfig, ReplayConfig
from .load import CaptureLoader

log = logging.getLogger("warchive.serve")
WACZ_EXT = ".wacz"   # ROOT/NAME.wacz is the read-only collection NAME, read inside the zip


OPEN_ATTEMPTS = 5   # opens of a collection whose index changes while it is opened
RACY_NS = 50_000_000   # a view opened closer than this (50 ms) to its index's last change is checked again


class Served:
    """One collection being served: ``engine`` answers CDX queries, ``loader`` loads captures."""

    def __init__(self, name: str, engine: Engine, loader: CaptureLoader, wacz: Optional[WaczFile] = None) -> None:
        self.name = name
        self.engine = engine
        self.loader = loader
        self.wacz = wacz   # the zip its sources read (closed last)

    def close(self) -> None:
        try:
            self.loader.close()
        finally:
            for s in self.engine.sources:
                try:
                    s.source.close()
                except Exception:
                    pass
            if self.wacz is not None:
                self.wacz.close()


_Stamp = Tuple[Any, ...]
_Entry = Tuple[_Stamp, Union[Served, CollectionUnavailable], bool]   # (stamp, opened, trusted)


class Collections:
    """The collections of a root directory (pywb's automatic layout: a directory with an
    ``indexes/`` directory) and of a configuration; a configured name hides a directory of the
    same name under the root."""

    def __init__(self, root: Optional[str] = None, config: Optional[ReplayConfig] = None) -> None:
        self.config = config or ReplayConfig()
        root = root if root is not None else self.config.collections_root
        self.root = os.path.abspath(root) if root is not None else None
        self._cache: Dict[str, _Entry] = {}
        self._lock = threading.Lock()

    def names(self) -> List[str]:
        """Every collection, in name order."""
        found = set(self.config.collections)
        if self.root is not None:
            try:
                entries = os.listdir(self.root)
            except FileNotFoundError:
                entries = []
            found.update(n for n in entries
                         if not n.startswith(".") and os.path.isdir(os.path.join(self.root, n, "indexes")))
            found.update(n[:-len(WACZ_EXT)] for n in entries if n.endswith(WACZ_EXT) and not n.startswith(".")
                         and len(n) > len(WACZ_EXT) and os.path.isfile(os.path.join(self.root, n)))
        return sorted(found)

    def _where(self, coll: str) -> Optional[Tuple[CollectionConfig, _Stamp]]:
        """The index paths of collection ``coll`` and their stamp as they are now (None: no
        such collection, or it has gone)."""
        if not coll or coll.startswith(".") or "/" in coll or "\\" in coll or "\0" in coll:
            return None
        conf = self.config.collections.get(coll)
        if conf is not None:
            stamp = _stamp(conf)
            return (conf, stamp) if stamp is not None else None
        if self.root is None:
            return None
        path, idx = _paths(self.root, coll)
        st = _dir_stat(idx)
        if st is None:
            return _wacz_where(coll, path + WACZ_EXT)
        return CollectionConfig(coll, [path]), ((idx, st.st_mtime_ns, st.st_ino),)   # (_stamp's, one stat)

    def get(self, coll: str) -> Optional[Served]:
        """Collection ``coll`` opened (None when there is no such collection); raises
        CollectionUnavailable when its index cannot be opened."""
        found = self._where(coll)
        if found is None:
            return None
        where, stamp = found
        with self._lock:
            hit = self._cache.get(coll)
            if hit is not None and hit[0] == stamp and hit[2]:
                if isinstance(hit[1], CollectionUnavailable):
                    raise hit[1]
                return hit[1]
            made: Union[Served, CollectionUnavailable]
            opened_ns = time.time_ns()
            for attempt in range(OPEN_ATTEMPTS):
                try:
                    made = _open(where)
                    break
                except (ArchiveError, OSError) as e:
                    # A file listed may have gone before it was opened (a compaction removing the
                    # segments it merged): if the index changed meanwhile, look again.
                    again = self._where(coll)
                    gone = isinstance(e, FileNotFoundError) or isinstance(e.__cause__, FileNotFoundError)
                    if again is not None and (again[1] != stamp or gone) and attempt + 1 < OPEN_ATTEMPTS:
                        where, stamp = again
                        opened_ns = time.time_ns()
                        continue
                    # told once per change of its index files, then remembered
                    made = CollectionUnavailable(f"collection {coll!r} is unavailable: {e}")
                    log.error("%s", made)
                    break
            old = self._cache.get(coll)
            self._cache[coll] = (stamp, made, _trusted(stamp, opened_ns))
        if old is not None and isinstance(old[1], Served):
            old[1].close()   # (requests still holding it finish with the files they have open)
        if isinstance(made, CollectionUnavailable):
            raise made
        return made

    def engine(self, coll: str) -> Optional[Engine]:
        """The query engine of collection ``coll`` (as ``get``)."""
        s = self.get(coll)
        return s.engine if s is not None else None

    def close(self) -> None:
        with self._lock:
            entries, self._cache = list(self._cache.values()), {}
        for _, s, _ in entries:
            if isinstance(s, Served):
                s.close()


def _trusted(stamp: _Stamp, opened_ns: int) -> bool:
    """Can a view opened at ``opened_ns`` stand for as long as the stamp stays the same? Not when
    it was opened within RACY_NS of the newest mtime in the stamp: file system times tick
    coarsely (a jiffy), so a file added in the same tick, after the listing, leaves the stamp
    as it was (git's "racily clean" index entries). Such a view is opened again on its next use
    until one is opened late enough."""
    newest = max((x[1] for x in stamp if len(x) > 1 and isinstance(x[1], int)), default=0)
    return opened_ns - newest >= RACY_NS


def _stamp(where: CollectionConfig) -> Optional[_Stamp]:
    """What changes when a file is added to or removed from the collection's index (a
    directory's mtime; a file's mtime and inode). None: the collection has gone."""
    out: List[Any] = []
    for p in where.index_paths:
        idx = os.path.join(p, "indexes")
        target = idx
        st = _dir_stat(idx)
        if st is None:
            target = p
            try:
                st = os.stat(p)
            except FileNotFoundError:
                if len(where.index_paths) == 1:
                    return None
                out.append((target, None))
                continue
        out.append((target, st.st_mtime_ns, st.st_ino))
    return tuple(out)


@functools.lru_cache(maxsize=1024)
def _paths(root: str, coll: str) -> Tuple[str, str]:
    """The directory of collection ``coll`` under ``root``, and its indexes/ directory."""
    path = os.path.join(root, coll)
    return path, os.path.join(path, "indexes")


def _dir_stat(path: str) -> Optional[os.stat_result]:
    """The stat of ``path`` when it is a directory (os.path.isdir's answer, and its stat)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st if stat.S_ISDIR(st.st_mode) else None


def _wacz_where(coll: str, path: str) -> Optional[Tuple[CollectionConfig, _Stamp]]:
    """ROOT/COLL.wacz, served as the read-only collection COLL (None: there is none)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return CollectionConfig(coll, [path]), ((path, st.st_mtime_ns, st.st_ino, st.st_size),)


def _open_wacz(where: CollectionConfig) -> Served:
    """A WACZ as a collection, its records read at their offsets in the zip. Its index entries
    are checked first, a piece at a time: against their hashes in datapackage.json (itself
    checked against datapackage-digest.json when it opened) and the limits across a WACZ's
    index (warchive.wacz.indexlines). Then each index is streamed, its lines given warchive's
    keys (warchive.wacz.keys), into a segment in a temporary directory (warchive.wacz.indexsegment):
    what the server holds for it does not grow with the number of its lines."""
    wz = WaczFile(where.index_paths[0])
    sources: List[NamedSource] = []
    try:
        wz.verify_hashes(only=INDEXES)
        for part, lines in wz.index_lines():
            keyed = Rekeyed(lines)
            # "plain": the CDX API's page queries (showNumPages) are pywb ZipNum clusters' only
            sources.append(NamedSource(spooled(keyed, source=f"{wz.path}: {part.name}"),
                                       f"{where.name}/{part.name}", where.name, "plain"))
            if keyed.changed:
                log.warning("%s: %s: %d index keys are not warchive's key of their url; served under it",
                            wz.path, part.name, keyed.changed)
        engine = Engine(sources, access="allow", selectable=False)
        loader = CaptureLoader(Index.of(engine), archive_paths=[], members=wz.members())
    except BaseException:
        for s in sources:
            s.source.close()
        wz.close()
        raise
    return Served(where.name, engine, loader, wz)


def _open(where: CollectionConfig) -> Served:
    if len(where.index_paths) == 1 and where.index_paths[0].endswith(WACZ_EXT):
        return _open_wacz(where)
    sources, access, selectable = named_sources(where.index_paths, where.name)
    engine = Engine(sources, access=access, selectable=selectable)
    try:
        loader = CaptureLoader(Index.of(engine), archive_paths=where.archive_paths or None)
    except BaseException:
        for s in sources:
            s.source.close()
        raise
    return Served(where.name, engine, loader)


__all__ = ["CollectionUnavailable", "Collections", "Served"]
