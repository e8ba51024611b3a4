"""warchive.replay.bodies against a model written from its rules (and RFC 9110's for ranges): for
payloads shorter and longer than HELD (made 16 bytes here, so that hypothesis reaches every
case), archived lengths that are right, too short and too long, and Range headers of every form,
``ranged`` and ``sized`` give the status, headers and bytes the model says, reading the payload
as a stream that cannot seek (a decoded one) and as one that can."""

from __future__ import annotations

import io
from typing import Any, List, Optional, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warchive.replay import bodies

H = 16


class _Raw(io.RawIOBase):
    """A stream that cannot seek, giving at most 5 bytes a read (as a decoder may)."""

    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        n = min(len(b), 5, len(self.data) - self.at)
        b[:n] = self.data[self.at:self.at + n]
        self.at += n
        return n


def _stream(data: bytes, seekable: bool) -> Any:
    return io.BytesIO(data) if seekable else io.BufferedReader(_Raw(data), buffer_size=8)


def _model(data: bytes, declared: Optional[int], value: str) -> Tuple[int, List[Tuple[str, str]], bytes]:
    span = bodies.parse(value)
    known = len(data) <= H or (declared is not None and declared <= H)
    if known:   # held whole: what the payload has, no more than the archive claims
        return _exact(data[:declared] if declared is not None else data, span)
    if declared is not None:
        if span is None:
            return 200, [("Content-Length", str(declared))], data[:declared]
        first, last = _bounds(span, declared)
        if first >= declared or first > last:
            return 416, [("Content-Range", f"bytes */{declared}"), ("Content-Length", "0")], b""
        if first > len(data):
            return 416, [("Content-Range", f"bytes */{len(data)}"), ("Content-Length", "0")], b""
        return 206, _ranges(first, last, declared), data[first:last + 1]   # (short: the server closes)
    if span is not None and span[0] is not None and span[1] is not None and span[1] - span[0] < H:
        first, last = span
        if len(data) > last + 1:
            return 206, _ranges(first, last, "*"), data[first:last + 1]
        return _exact(data, span)
    return 200, [], data


def _bounds(span: Tuple[Optional[int], Optional[int]], total: int) -> Tuple[int, int]:
    first, last = span
    if first is None:
        return max(total - (last or 0), 0), total - 1
    return first, min(last, total - 1) if last is not None else total - 1


def _ranges(first: int, last: int, total: Any) -> List[Tuple[str, str]]:
    return [("Content-Range", f"bytes {first}-{last}/{total}"), ("Content-Length", str(last - first + 1)),
            ("Accept-Ranges", "bytes")]


def _exact(data: bytes, span: Any) -> Tuple[int, List[Tuple[str, str]], bytes]:
    if span is None:
        return 200, [("Content-Length", str(len(data)))], data
    first, last = _bounds(span, len(data))
    if first >= len(data) or first > last:
        return 416, [("Content-Range", f"bytes */{len(data)}"), ("Content-Length", "0")], b""
    return 206, _ranges(first, last, len(data)), data[first:last + 1]


POSITIONS = st.one_of(st.integers(0, 3 * H), st.sampled_from(["0" * 30 + "3", "9" * 5000]))
VALUES = st.one_of(
    st.tuples(POSITIONS, POSITIONS).map(lambda t: f"bytes={t[0]}-{t[1]}"),
    POSITIONS.map(lambda a: f"bytes={a}-"),
    POSITIONS.map(lambda n: f"bytes=-{n}"),
    st.sampled_from(["bytes=-", "bytes=0-1,5-6", "items=0-3", "", "bytes=x-", " bytes = 2 - 5 ", "bytes=²-3"]))


@pytest.fixture(autouse=True)
def small_held(monkeypatch):
    monkeypatch.setattr(bodies, "HELD", H)


@settings(max_examples=3000, deadline=None)
@given(st.binary(max_size=3 * H), st.one_of(st.none(), st.integers(0, 4 * H)), VALUES, st.booleans())
def test_ranged_answers_as_the_model(data, declared, value, seekable):
    part = bodies.ranged(_stream(data, seekable), value, declared)
    assert (part.status, part.headers, b"".join(part.body)) == _model(data, declared, value)


@settings(max_examples=1000, deadline=None)
@given(st.binary(max_size=3 * H), st.integers(0, 4 * H), st.booleans())
def test_sized_sends_the_length_the_payload_has(data, declared, seekable):
    length, body = bodies.sized(_stream(data, seekable), declared)
    got = b"".join(body)
    assert got == data[:declared]
    if len(data) <= H or declared <= H:
        assert length == len(got)   # held: the length it has
    else:
        assert length == declared   # longer than held: as claimed (a short one closes the connection)


def test_a_position_of_thousands_of_digits_is_past_the_end():
    assert bodies.parse("bytes=" + "9" * 5000 + "-") == (bodies.FAR, None)
    assert bodies.parse("bytes=" + "0" * 5000 + "12-13") == (12, 13)
    assert bodies.parse("bytes=-") is None and bodies.parse("bytes=1-2,3-4") is None
