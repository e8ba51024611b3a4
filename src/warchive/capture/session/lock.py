"""The pid file next to a journal (``JOURNAL.pid``) that marks it as being written by a live process.

The file is one JSON object, ``{"pid": N, "start": "...", "host": "..."}``: the
writer's pid, its start time (Linux: /proc/PID/stat field 22, so that a reused pid
is not taken for the writer) and host name (a pid file of another host counts as
live). A pid file of a dead process is taken over. This module must not read or
write the journal itself.
"""

from __future__ import annotations

import json
import os
import socket
import time
import warnings
from typing import Any, Dict, Optional

from ...errors import SessionLockedError
from .schema import PathLike, SessionWarning

LOCK_SUFFIX = ".pid"


def lock_path(journal: PathLike) -> str:
    return os.fspath(journal) + LOCK_SUFFIX


def _proc_start(pid: int) -> Optional[str]:
    """The start time of process pid (Linux: /proc/PID/stat field 22), to tell a reused pid."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            s = f.read()
        return s[s.rfind(b")") + 2:].split()[19].decode()
    except (OSError, IndexError):
        return None


def _lock_info() -> Dict[str, Any]:
    pid = os.getpid()
    return {"pid": pid, "start": _proc_start(pid), "host": socket.gethostname()}


def read_lock(journal: PathLike) -> Optional[Dict[str, Any]]:
    """What the pid file next to a journal says ({"pid", "start", "host"}), or None."""
    try:
        with open(lock_path(journal), "rb") as f:
            d = json.loads(f.read() or b"null")
    except (OSError, ValueError):
        return None
    return d if isinstance(d, dict) and isinstance(d.get("pid"), int) else None


def lock_is_live(info: Optional[Dict[str, Any]]) -> bool:
    """Is the process a pid file names still running? (A pid file of another host counts as live.)"""
    if not info:
        return False
    if info.get("host") not in (None, socket.gethostname()):
        return True
    pid = info["pid"]
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    start = info.get("start")
    if start is not None:
        cur = _proc_start(pid)
        if cur is not None and cur != start:
            return False  # the pid was reused by another process
    return True


def live_writer(journal: PathLike) -> Optional[int]:
    """The pid of the live process writing a journal, or None."""
    info = read_lock(journal)
    return int(info["pid"]) if info is not None and lock_is_live(info) else None


def acquire(journal: str, force: bool) -> bool:
    """Write this process's pid file for `journal`; True when it is ours. A live writer's pid file
    raises ``SessionLockedError``, or with `force` warns (``SessionWarning``) and returns False
    (the file is left to its owner); a dead one's is taken over."""
    path = lock_path(journal)
    mine = json.dumps(_lock_info()).encode() + b"\n"
    for _ in range(50):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        except FileExistsError:
            pass
        else:
            try:
                os.write(fd, mine)
            finally:
                os.close(fd)
            return True
        info = read_lock(journal)
        if info is None:
            # being written by its creator this very moment, or garbage left by a crash
            try:
                age = time.time() - os.stat(path).st_mtime
            except FileNotFoundError:
                continue
            if age < 2.0:
                time.sleep(0.05)
                continue
        elif lock_is_live(info):
            if not force:
                raise SessionLockedError(journal, int(info["pid"]))
            warnings.warn(f"{journal}: process {info['pid']} is writing this session too; "
                          "appending anyway (force)", SessionWarning, stacklevel=3)
            return False
        # stale: take it over (replace, then check that the file is ours: another
        # process may be taking it over at the same moment)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(mine)
        os.replace(tmp, path)
        back = read_lock(journal)
        if back is not None and back.get("pid") == os.getpid():
            return True
    raise SessionLockedError(journal, -1)


def release(journal: str) -> None:
    """Remove the pid file of `journal` if it is this process's."""
    info = read_lock(journal)
    if info is not None and info.get("pid") == os.getpid():
        try:
            os.unlink(lock_path(journal))
        except FileNotFoundError:
            pass
