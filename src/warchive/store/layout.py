"""Where a store keeps what: the names of files inside a volume, which names may be stored, and on
which volume each chunk of a file goes.

A volume directory holds (docs/format.md, "Durable store")::

    VOLUME/volume.json             which store and which volume index this directory is
    VOLUME/manifests/NAME.json     the manifest of stored file NAME (one copy on every volume)
    VOLUME/chunks/NAME.I           chunk I (0 <= I < k+m) of NAME: fragment I of every stripe

Temporary files (a put or repair in progress) are ``NAME.I.<random>.tmp`` and
``NAME.json.<random>.tmp`` beside them (warchive.durable.AtomicOutput), never read.

A stored NAME is a file's base name and nothing else: no directory separators, no leading dot (so
it is never ``.``, ``..`` or hidden), no control characters, at most 200 bytes of UTF-8, so that
``NAME.json`` and ``NAME.I.<random>.tmp`` are valid file names on every POSIX filesystem.
This module does no I/O.
"""

from __future__ import annotations

import hashlib
import os
from typing import List

from ..errors import StoreError

STORE_JSON = "store.json"
VOLUME_JSON = "volume.json"
LOCK_FILE = "store.lock"
MANIFESTS = "manifests"
CHUNKS = "chunks"
MANIFEST_SUFFIX = ".json"
TMP_SUFFIX = ".tmp"
NAME_MAX = 200
SCHEME = "store://"   # how a stored file is named where a path is taken: store://STORE/NAME (warchive.store.urls)


def name_problem(name: object) -> str:
    """What is wrong with ``name`` as a stored name ("" if nothing)."""
    if not isinstance(name, str):
        return f"a name must be a string, not {type(name).__name__}"
    if not name:
        return "the name is empty"
    if "/" in name or "\\" in name:
        return f"the name {name!r} has a directory separator (a stored name is a base name)"
    if name.startswith("."):
        return f"the name {name!r} starts with a dot"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return f"the name {name!r} has a control character"
    try:
        n = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        return f"the name {name!r} is not valid UTF-8"
    if n > NAME_MAX:
        return f"the name is {n} bytes long (at most {NAME_MAX})"
    if name.endswith(TMP_SUFFIX):
        return f"the name {name!r} ends with {TMP_SUFFIX} (the suffix of temporary files)"
    return ""


def check_name(name: str, where: str) -> str:
    """``name`` if it is a valid stored name, else StoreError naming ``where``."""
    problem = name_problem(name)
    if problem:
        raise StoreError(where, None, problem)
    return name


def manifest_path(volume: str, name: str) -> str:
    return os.path.join(volume, MANIFESTS, name + MANIFEST_SUFFIX)


def chunk_path(volume: str, name: str, index: int) -> str:
    return os.path.join(volume, CHUNKS, f"{name}.{index}")


def placement(name: str, fragments: int, volumes: int) -> List[int]:
    """The volume index of each fragment index 0..fragments-1 of ``name``: with as many volumes as
    fragments, fragment i on volume i; with more, a rotation starting at a volume chosen by the
    sha256 of the name (so files spread evenly, and the same name always lands the same way).
    Every fragment on its own volume; fewer volumes than fragments is refused at init."""
    if volumes < fragments:
        raise ValueError(f"{fragments} fragments need {fragments} volumes, not {volumes}")
    if volumes == fragments:
        return list(range(fragments))
    start = int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "big") % volumes
    return [(start + i) % volumes for i in range(fragments)]


def store_url(store: str, name: str) -> str:
    """How messages name stored file ``name`` of the store at ``store``: store://STORE/NAME."""
    return f"{SCHEME}{os.path.abspath(store)}/{name}"
