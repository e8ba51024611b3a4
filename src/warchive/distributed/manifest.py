"""Task manifests: how a distributed job knows which of its tasks are finished.

Every task of a job (warchive.distributed.job) publishes its files by rename
(warchive.distributed.scratch: not fsynced) and then, last, a small JSON
manifest beside them: the task's key (a digest of everything that determines
its output: the plan, the task's own description, the manifests of its
inputs), the size and CRC-32 of each file it wrote, and what it found. A
task whose manifest is there with the same key, and whose files are all
there with those sizes and CRCs, is not run again: that is how a rerun after
a crashed client reuses finished runs and shards, and how a file that a
power loss left short or zeroed is computed again instead of trusted.
docs/format.md ("Distributed index runs") specifies the files.
This module reads and writes manifests; it must not know what tasks do.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Callable, Dict, Optional

from .scratch import intact, publish_bytes

__all__ = ["digest", "load", "publish", "reusable", "VERSION"]

VERSION = 2   # 1: "files" were names only, and everything was fsynced


def digest(*parts: Any) -> str:
    """A short hex digest of JSON-able values (the key of a task or plan)."""
    h = hashlib.sha256(json.dumps(parts, sort_keys=True, separators=(",", ":")).encode())
    return h.hexdigest()[:32]


def load(path: str) -> Optional[Dict[str, Any]]:
    """The manifest at `path`, or None when there is none (or it is not one of ours)."""
    try:
        with open(path, "rb") as f:
            m = json.loads(f.read())
    except (OSError, ValueError):
        return None
    if not isinstance(m, dict) or m.get("warchive-task") != VERSION:
        return None
    return m


def reusable(path: str, key: str) -> Optional[Dict[str, Any]]:
    """The manifest at `path` if it is the one of task `key` and every file it lists
    ([name relative to its directory, size, CRC-32]) is there, whole; else None."""
    m = load(path)
    if m is None or m.get("key") != key:
        return None
    d = os.path.dirname(path)
    for entry in m.get("files", []):
        if not (isinstance(entry, list) and len(entry) == 3 and intact(os.path.join(d, entry[0]), entry[1], entry[2])):
            return None
    return m


def once(path: str, key: str, run: Callable[[], Dict[str, Any]]) -> Dict[str, Any]:
    """The manifest of task `key` at `path`: the one there if `reusable`, else `run()`'s body
    published; "ran" in it says whether the task ran now (a rerun's finished tasks are skipped)."""
    done = reusable(path, key)
    if done is not None:
        done["ran"] = False
        return done
    m = publish(path, key, run())
    m["ran"] = True
    return m


def publish(path: str, key: str, body: Dict[str, Any]) -> Dict[str, Any]:
    """Write the manifest of task `key` (after its files are published); returns it. `body`'s
    "files" are the entries of ScratchFile.entry. Not fsynced either: a manifest that a power
    loss damaged does not parse, and its task runs again."""
    m = dict(body)
    m["warchive-task"] = VERSION
    m["key"] = key
    publish_bytes(path, json.dumps(m, sort_keys=True, indent=1).encode() + b"\n")
    return m
