"""Task manifests: how a distributed job knows which of its tasks are finished.

Every task of a job (warchive.distributed.job) publishes its files by atomic
rename and then, last, a small JSON manifest beside them: the task's key (a
digest of everything that determines its output: the plan, the task's own
description, the manifests of its inputs) and what it wrote. A task whose
manifest is there with the same key, and whose files are all there, is not
run again: that is how a rerun after a crashed client reuses finished runs
and shards. docs/format.md ("Distributed index runs") specifies the files.
This module reads and writes manifests; it must not know what tasks do.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Callable, Dict, Iterable, Optional

from ..durable import AtomicOutput

__all__ = ["digest", "load", "publish", "reusable", "VERSION"]

VERSION = 1


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


def reusable(path: str, key: str, files: Iterable[str] = ()) -> Optional[Dict[str, Any]]:
    """The manifest at `path` if it is the one of task `key` and every file it names (`files`
    relative to its directory, and its own "files" list) exists; else None."""
    m = load(path)
    if m is None or m.get("key") != key:
        return None
    d = os.path.dirname(path)
    for name in list(files) + list(m.get("files", [])):
        if not os.path.exists(os.path.join(d, name)):
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
    """Write the manifest of task `key` (after its files are published); returns it."""
    m = dict(body)
    m["warchive-task"] = VERSION
    m["key"] = key
    with AtomicOutput(path) as out:
        out.write(json.dumps(m, sort_keys=True, indent=1).encode() + b"\n")
    return m
