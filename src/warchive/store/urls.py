"""``store://STORE/NAME``: how a stored file is named wherever a WARC path is taken (``warchive
index``, ``load``, ``extract``, ``check``, replay's archive paths), and opening one.

    store:///srv/store/crawl-00001.warc.gz      stored file crawl-00001.warc.gz of store /srv/store
    store://stores/main/crawl-00001.warc.gz     the same, the store's directory relative (stores/main)
    store:///srv/store                          (where a directory of WARCs is taken) the whole store

A stored name never has a ``/`` (warchive.store.layout), so the name is what follows the last
``/`` and the store is what comes before it; ``layout.store_url`` writes the same form. A store
whose directory is itself named like the file is told apart by its store.json: when
``STORE/NAME/store.json`` exists, the URL names that store as a whole (``split``).

Opening fails with a StoreError (an ArchiveError) naming the URL: a directory that is no store,
a name the store does not hold. This module does no reading of its own: ``open_url`` gives a
``StoreFile``.
"""

from __future__ import annotations

import os
from typing import Dict, Optional, Tuple

from ..errors import StoreError
from .catalog import Store
from .layout import SCHEME, STORE_JSON, check_name
from .storefile import StoreFile


def is_store_url(text: object) -> bool:
    return isinstance(text, str) and text.startswith(SCHEME)


def is_store_dir(path: str) -> bool:
    """Does ``path`` hold a store (its store.json)?"""
    return os.path.isfile(os.path.join(path, STORE_JSON))


def split(url: str) -> Tuple[str, Optional[str]]:
    """(store directory, stored name or None: the whole store) of a ``store://`` URL; StoreError
    when it names neither."""
    rest = url[len(SCHEME):] if is_store_url(url) else url
    if not rest or rest == "/":
        raise StoreError(url, None, "a store URL needs a store: store://STORE/NAME")
    if rest.endswith("/") or is_store_dir(rest):
        return rest.rstrip("/") or "/", None
    root, _, name = rest.rpartition("/")
    if not root:
        raise StoreError(url, None, "a store URL is store://STORE/NAME (STORE: the store's directory)")
    check_name(name, url)
    return root, name


class Stores:
    """Open stores by directory, each opened once (its configuration read once, its manifests
    cached): what a process that reads many stored files (replay, indexing many URLs) keeps."""

    def __init__(self) -> None:
        self._open: Dict[str, Store] = {}

    def store(self, root: str) -> Store:
        key = os.path.abspath(root)
        got = self._open.get(key)
        if got is None:
            got = self._open[key] = Store(key)
        return got

    def open(self, url: str, cache_bytes: Optional[int] = None) -> StoreFile:
        """The stored file a ``store://STORE/NAME`` URL names (StoreError when there is none)."""
        root, name = split(url)
        if name is None:
            raise StoreError(url, None, "names a whole store, not a stored file (store://STORE/NAME)")
        store = self.store(root)
        if cache_bytes is None:
            return StoreFile(store, name)
        return StoreFile(store, name, cache_bytes)


def check_url(url: str) -> None:
    """StoreError unless ``url`` names a store, and a stored file of it (or the whole store); cheap
    (store.json and a look for the manifest, not parsed), so that a command can refuse a missing
    input before it starts."""
    root, name = split(url)
    store = Store(root)
    if name is not None and not store.manifest_copies(name):
        raise StoreError(store.root, None, f"no file {name!r} in the store", "see `warchive store ls`")


def open_url(url: str) -> StoreFile:
    """The stored file ``store://STORE/NAME`` names (StoreError: no such store, no such name)."""
    return Stores().open(url)


def names(url: str) -> Tuple[Store, list]:
    """(the store, its stored names) of a URL naming a whole store (``store://STORE``)."""
    root, name = split(url)
    store = Store(root)
    return store, ([name] if name is not None else store.names())
