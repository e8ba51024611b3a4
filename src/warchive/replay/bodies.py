"""A payload sent as a body, whole or a Range of it, in bounded memory, when its length is not
known (its Content-Encoding undone, a chunked body de-chunked) or the archive's Content-Length
may not be it (an archived ``Content-Length: 1000000000000`` over 11 bytes).

    length, body = sized(payload, declared)            # a payload sent as stored
    part = ranged(payload, "bytes=100-199", declared)  # 206/416/200, its headers, its body

``declared`` is the archived length of a payload sent as stored, None when the body sent is not
the stored one. Both read the payload: ``ranged`` may decode and discard up to a range's start,
so the replay server runs it off its event loop. At most HELD bytes of a payload are ever held:

* a payload that ends within HELD bytes is held whole: its length is the one it has (less than
  ``declared`` when the archive claims more), and a range of it is answered exactly (206, 416
  past its end; 200 and the whole body for a Range header we do not answer);
* a longer one with a declared length is sent with it: a range is skipped to its start and sent
  to its end (``bytes FIRST-LAST/DECLARED``). If the payload then ends early the server closes
  the connection (warchive.replay.app): its length was promised;
* a longer one of unknown length answers ``bytes=FIRST-LAST`` of at most HELD bytes by skipping
  to FIRST and holding the range: 206 ``bytes FIRST-LAST/*`` (RFC 9110 14.4, the complete length
  unknown), or exactly when the payload ends within it. Any other range (``bytes=FIRST-``, a
  suffix, a longer one) is answered 200 with the whole body, streamed without a length, as a
  server ignoring Range answers. Browsers' media players play that (chromium: an infinite
  duration, seeking within what has arrived), where a 206 of fewer bytes than asked with an
  unknown length is taken for the end of the media (chromium then stops there).

This module reads the streams it is given and closes nothing.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from itertools import chain
from typing import BinaryIO, Iterator, List, Optional, Tuple

CHUNK = 64 * 1024
HELD = 4 * 1024 * 1024   # the most of a payload held to learn its length or answer a range
FAR = 1 << 62            # a byte position past any payload (a longer number is read as this)
_RANGE = re.compile(r"\s*bytes\s*=\s*([0-9]*)\s*-\s*([0-9]*)\s*")

Span = Tuple[Optional[int], Optional[int]]   # (first, last): first None for a suffix of last bytes


@dataclass
class Part:
    """An answer to a Range request: status, the headers it adds, its body."""
    status: int
    headers: List[Tuple[str, str]] = field(default_factory=list)
    body: Iterator[bytes] = field(default_factory=lambda: iter(()))


def parse(value: str) -> Optional[Span]:
    """The span of a ``Range: bytes=FIRST-[LAST]`` or ``bytes=-SUFFIX`` header; None for any other
    (several ranges, another unit, LAST before FIRST, malformed): answered with the whole body,
    as RFC 9110 lets a server ignore a Range. A position of any number of digits is read (int()
    refuses more than 4300)."""
    m = _RANGE.fullmatch(value)
    if m is None or not (m.group(1) or m.group(2)):
        return None
    first = position(m.group(1)) if m.group(1) else None
    last = position(m.group(2)) if m.group(2) else None
    if first is not None and last is not None and last < first:
        return None
    return first, last


def position(digits: str) -> int:
    """A byte position of a Range header: FAR when it has more digits than that."""
    digits = digits.lstrip("0") or "0"
    return int(digits) if len(digits) <= 18 else FAR


def read_up_to(payload: BinaryIO, n: int) -> bytes:
    """n bytes of the payload, fewer when it ends first."""
    parts: List[bytes] = []
    while n > 0:
        b = payload.read(min(n, HELD))
        if not b:
            break
        parts.append(b)
        n -= len(b)
    return b"".join(parts)


def skip(payload: BinaryIO, n: int) -> int:
    """Read past n bytes of the payload (decoded and discarded a piece at a time, or seeked):
    the number skipped, fewer when it ends first."""
    try:
        if payload.seekable():
            here = payload.tell()
            end = payload.seek(0, io.SEEK_END)
            payload.seek(min(here + n, end))
            return min(n, end - here)
    except (OSError, ValueError):
        pass
    done = 0
    while done < n:
        b = payload.read(min(CHUNK, n - done))
        if not b:
            break
        done += len(b)
    return done


def pieces(payload: BinaryIO) -> Iterator[bytes]:
    """The rest of the payload, CHUNK bytes at a time."""
    while True:
        b = payload.read(CHUNK)
        if not b:
            return
        yield b


def exactly(payload: BinaryIO, n: int) -> Iterator[bytes]:
    """n bytes of the payload, fewer when it ends first."""
    while n > 0:
        b = payload.read(min(CHUNK, n))
        if not b:
            return
        n -= len(b)
        yield b


def sized(payload: BinaryIO, declared: int) -> Tuple[int, Iterator[bytes]]:
    """The length to send and the body of a payload sent as stored whose archive says it has
    ``declared`` bytes: what it has when it ends within HELD bytes (or within ``declared``, never
    more), else ``declared``, read as it is sent."""
    held = read_up_to(payload, min(declared, HELD + 1))
    if len(held) <= HELD:
        return len(held), iter([held])
    return declared, chain([held], exactly(payload, declared - len(held)))


def ranged(payload: BinaryIO, value: str, declared: Optional[int]) -> Part:
    """The answer to ``Range: value`` from the payload (see the module docstring)."""
    span = parse(value)
    held = read_up_to(payload, HELD + 1 if declared is None else min(declared, HELD + 1))
    if len(held) <= HELD:   # the whole payload (or all of it the archive claims)
        return _exact(held, span)
    if declared is not None:
        return _declared(payload, held, span, declared)
    first, last = span if span is not None else (None, None)
    if first is not None and last is not None and last - first < HELD:
        return _window(payload, held, first, last)
    return Part(200, [], chain([held], pieces(payload)))


def _bounds(span: Span, total: int) -> Tuple[int, int]:
    first, last = span
    if first is None:   # the last `last` bytes
        return max(total - (last or 0), 0), total - 1
    return first, (min(last, total - 1) if last is not None else total - 1)


def _unsatisfiable(total: int) -> Part:
    return Part(416, [("Content-Range", f"bytes */{total}"), ("Content-Length", "0")])


def _partial(first: int, last: int, total: str, body: Iterator[bytes]) -> Part:
    return Part(206, [("Content-Range", f"bytes {first}-{last}/{total}"), ("Content-Length", str(last - first + 1)),
                      ("Accept-Ranges", "bytes")], body)


def _exact(data: bytes, span: Optional[Span]) -> Part:
    """A range of a payload held whole."""
    total = len(data)
    if span is None:
        return Part(200, [("Content-Length", str(total))], iter([data]))
    first, last = _bounds(span, total)
    if first >= total or first > last:
        return _unsatisfiable(total)
    return _partial(first, last, str(total), iter([data[first:last + 1]]))


def _at(payload: BinaryIO, held: bytes, first: int) -> Tuple[bytes, int]:
    """To byte ``first`` of a payload whose first bytes were read into ``held``: (the held bytes
    from there on, the position reached: ``first``, or the payload's end when it is before)."""
    if first <= len(held):
        return held[first:], first
    return b"", len(held) + skip(payload, first - len(held))


def _declared(payload: BinaryIO, held: bytes, span: Optional[Span], total: int) -> Part:
    """A range of a payload longer than the ``held`` bytes read from it, which the archive says
    has ``total`` bytes."""
    if span is None:
        return Part(200, [("Content-Length", str(total))], chain([held], exactly(payload, total - len(held))))
    first, last = _bounds(span, total)
    if first >= total or first > last:
        return _unsatisfiable(total)
    rest, at = _at(payload, held, first)
    del held
    if at < first:   # it ends before the range starts: its length is known now
        return _unsatisfiable(at)
    n = last - first + 1
    return _partial(first, last, str(total), chain([rest[:n]], exactly(payload, n - len(rest[:n]))))


def _window(payload: BinaryIO, held: bytes, first: int, last: int) -> Part:
    """``bytes=FIRST-LAST`` (at most HELD bytes) of a payload of unknown length, longer than the
    ``held`` bytes read from it: skipped to FIRST, held, and one byte more read to see whether
    the payload goes on."""
    want = last - first + 2
    rest, at = _at(payload, held, first)
    del held
    if at < first:
        return _unsatisfiable(at)
    part = rest[:want]
    del rest
    part += read_up_to(payload, want - len(part))
    if len(part) == want:   # it goes on: its length is not known
        return _partial(first, last, "*", iter([part[:-1]]))
    total = first + len(part)
    if not part:
        return _unsatisfiable(total)
    return _partial(first, total - 1, str(total), iter([part]))


__all__ = ["CHUNK", "FAR", "HELD", "Part", "exactly", "parse", "pieces", "position", "ranged", "read_up_to",
           "sized", "skip"]
