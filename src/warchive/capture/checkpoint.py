"""The frontier's checkpoint: a snapshot of every queued URL and an append log of every change since.

docs/format.md ("Frontier checkpoint") specifies the files::

    FRONTIER/
      frontier.snap      JSON head line, one A/a line per queued (and leased) URL, E<TAB>COUNT<TAB>CRC32
      frontier.G.log     A/a (queued), T (leased), F (finished) lines since snapshot G

Each call into the frontier appends its lines with one ``write`` (``CheckpointLog.flush``),
so a SIGKILL loses nothing the process had returned from. A snapshot is published
atomically (``AtomicOutput``) after the empty log of its generation exists, and the
previous log is deleted after it: a crash leaves the old snapshot and its complete
log, or the new snapshot and its empty log. ``restore`` reads them back. This module
reads and writes the files; it must not queue or schedule URLs.
"""

from __future__ import annotations

import json
import os
import zlib
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Tuple

from ..durable import AtomicOutput
from ..errors import FrontierFormatError

__all__ = ["CheckpointLog", "FrontierFormatError", "Queued", "Restored", "a_line", "f_line", "restore", "t_line"]

SNAPSHOT = "frontier.snap"
FORMAT_VERSION = 1


# --------------------------------------------------------------------------------------------
# Lines


def _esc(s: str) -> str:
    if "\\" in s or "\t" in s or "\n" in s or "\r" in s:
        return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    return s


def _unesc(s: str) -> str:
    if "\\" not in s:
        return s
    out = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            out.append({"t": "\t", "n": "\n", "r": "\r"}.get(s[i + 1], s[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def a_line(priority: int, attempts: int, hops: str, due: Optional[float], url: str, via: Optional[str],
           front: bool = False) -> str:
    """URL queued (``front``: at the head of its host's queue); `due` in seconds from now, or None."""
    return (f"{'a' if front else 'A'}\t{priority}\t{attempts}\t{hops or '-'}\t"
            f"{'-' if due is None else repr(due)}\t{_esc(url)}\t{'-' if via is None else _esc(via)}\n")


def t_line(url: str) -> str:
    """URL leased to a fetcher."""
    return f"T\t{_esc(url)}\n"


def f_line(url: str) -> str:
    """URL's fetch finished (or its lease given back)."""
    return f"F\t{_esc(url)}\n"


class Queued:
    """A queued URL as an A line gives it (the URL is the key it is filed under)."""

    __slots__ = ("priority", "attempts", "hops", "due", "via", "front")

    def __init__(self, priority: int, attempts: int, hops: str, due: Optional[float], via: Optional[str],
                 front: bool) -> None:
        self.priority, self.attempts, self.hops, self.due, self.via, self.front = \
            priority, attempts, hops, due, via, front


def _parse_a(fields: List[str], path: str, pos: int) -> Tuple[str, Queued]:
    if len(fields) != 7:
        raise FrontierFormatError(path, pos, f"an A line has {len(fields)} fields, not 7")
    try:
        prio, att = int(fields[1]), int(fields[2])
        due = None if fields[4] == "-" else float(fields[4])
    except ValueError as e:
        raise FrontierFormatError(path, pos, f"bad number in an A line: {e}") from None
    hops = "" if fields[3] == "-" else fields[3]
    via = None if fields[6] == "-" else _unesc(fields[6])
    return _unesc(fields[5]), Queued(prio, att, hops, due, via, fields[0] == "a")


# --------------------------------------------------------------------------------------------
# Writing


def log_path(directory: str, gen: int) -> str:
    return os.path.join(directory, f"frontier.{gen}.log")


class CheckpointLog:
    """The checkpoint files of a frontier in `directory`, at generation `gen`: lines are buffered
    by ``add`` and appended to the log by ``flush`` (one ``write``); ``snapshot`` starts the next
    generation. ``ops`` counts the lines logged since the last snapshot."""

    def __init__(self, directory: str, gen: int = 0) -> None:
        self.dir = directory
        self.gen = gen
        self.ops = 0
        self._buf: List[str] = []
        self._fd: Optional[int] = None

    def add(self, line: str) -> None:
        self._buf.append(line)

    def discard(self) -> None:
        """Forget the lines not yet flushed (what a restore queued again: the snapshot has them)."""
        self._buf = []

    def flush(self) -> bool:
        """Append the buffered lines with one write; False when there were none."""
        if not self._buf:
            return False
        if self._fd is None:
            self._fd = os.open(log_path(self.dir, self.gen), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        data = "".join(self._buf).encode("utf-8", "surrogateescape")
        self.ops += len(self._buf)
        self._buf = []
        view = memoryview(data)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]
        return True

    def sync(self) -> None:
        """Everything flushed so far durable against a power cut (fsync the log)."""
        if self._fd is not None:
            os.fsync(self._fd)

    def snapshot(self, created: float, hosts: Dict[str, Any], lines: Iterable[str]) -> None:
        """Publish `lines` (A/a lines: every queued and leased URL) as the snapshot of the next
        generation, with the hosts' politeness state, and start that generation's log."""
        gen = self.gen + 1
        head = {"warchive-frontier": FORMAT_VERSION, "gen": gen, "created": created, "hosts": hosts}
        crc = 0
        n = 0
        with AtomicOutput(os.path.join(self.dir, SNAPSHOT)) as out:
            out.write(json.dumps(head, sort_keys=True).encode() + b"\n")
            chunk: List[bytes] = []
            for line in lines:
                chunk.append(line.encode("utf-8", "surrogateescape"))
                if len(chunk) >= 4096:
                    data = b"".join(chunk)
                    crc = zlib.crc32(data, crc)
                    n += len(chunk)
                    out.write(data)
                    chunk = []
            data = b"".join(chunk)
            crc = zlib.crc32(data, crc)
            n += len(chunk)
            out.write(data)
            out.write(f"E\t{n}\t{crc:08x}\n".encode())
            open(log_path(self.dir, gen), "ab").close()   # the new log exists before its snapshot does
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        old = self.gen
        self.gen = gen
        self.ops = 0
        if os.path.exists(log_path(self.dir, old)):
            os.unlink(log_path(self.dir, old))

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


# --------------------------------------------------------------------------------------------
# Reading


class Restored(NamedTuple):
    """What a checkpoint directory holds: its generation, the hosts' politeness state, the URLs
    queued, and those leased when the process stopped (by URL)."""

    gen: int
    hosts: Dict[str, Any]
    queued: Dict[str, Queued]
    leased: Dict[str, Queued]


def restore(directory: str) -> Restored:
    """Read the snapshot and replay its log; logs of other generations (a checkpoint cut short,
    or stale) and snapshots never published are deleted."""
    snap = os.path.join(directory, SNAPSHOT)
    queued: Dict[str, Queued] = {}
    leased: Dict[str, Queued] = {}
    hosts: Dict[str, Any] = {}
    gen = 0
    if os.path.exists(snap):
        gen, hosts = _read_snapshot(snap, queued)
    for name in os.listdir(directory):
        if (name.startswith("frontier.") and name.endswith(".log") and name != f"frontier.{gen}.log") or \
                (name.startswith(SNAPSHOT + ".") and name.endswith(".tmp")):
            os.unlink(os.path.join(directory, name))
    log = log_path(directory, gen)
    if os.path.exists(log):
        _replay_log(log, queued, leased)
    return Restored(gen, hosts, queued, leased)


def _read_snapshot(path: str, entries: Dict[str, Queued]) -> Tuple[int, Dict[str, Any]]:
    with open(path, "rb") as fh:
        data = fh.read()
    nl = data.find(b"\n")
    try:
        head = json.loads(data[:nl])
        if head.get("warchive-frontier") != FORMAT_VERSION:
            raise FrontierFormatError(path, 0, f"frontier snapshot version {head.get('warchive-frontier')!r}",
                                      "upgrade warchive")
    except ValueError:
        raise FrontierFormatError(path, 0, "not a frontier snapshot (no JSON head line)") from None
    end = data.rfind(b"\nE\t", nl - 1 if nl > 0 else 0)
    if not data.endswith(b"\n") or end < 0:
        raise FrontierFormatError(path, len(data), "snapshot has no end line (it was cut short)",
                                  "delete it to resume from the log alone is not possible: restart the crawl's "
                                  "frontier from the session journal")
    body = data[nl + 1:end + 1]
    _, n_s, crc_s = data[end + 1:].decode().split("\t")
    if zlib.crc32(body) != int(crc_s, 16):
        raise FrontierFormatError(path, nl + 1, "snapshot entries fail their CRC")
    lines = body.decode("utf-8", "surrogateescape").split("\n")[:-1] if body else []
    if len(lines) != int(n_s):
        raise FrontierFormatError(path, nl + 1, f"snapshot holds {len(lines)} entries, its end line says {n_s}")
    pos = nl + 1
    for line in lines:
        url, e = _parse_a(line.split("\t"), path, pos)
        entries[url] = e
        pos += len(line.encode("utf-8", "surrogateescape")) + 1
    return int(head["gen"]), dict(head.get("hosts") or {})


def _replay_log(path: str, entries: Dict[str, Queued], taken: Dict[str, Queued]) -> None:
    with open(path, "rb") as fh:
        data = fh.read()
    end = data.rfind(b"\n") + 1   # a torn last line is ignored
    pos = 0
    for raw in data[:end].split(b"\n")[:-1]:
        fields = raw.decode("utf-8", "surrogateescape").split("\t")
        op = fields[0]
        if op in ("A", "a"):
            url, e = _parse_a(fields, path, pos)
            entries[url] = e
        elif op == "T" and len(fields) == 2:
            url = _unesc(fields[1])
            e2 = entries.pop(url, None)
            if e2 is not None:
                taken[url] = e2
        elif op == "F" and len(fields) == 2:
            url = _unesc(fields[1])
            if taken.pop(url, None) is None:   # leased when the snapshot was written
                entries.pop(url, None)
        else:
            raise FrontierFormatError(path, pos, f"unknown frontier log line {raw[:60]!r}")
        pos += len(raw) + 1
