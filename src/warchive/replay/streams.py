"""The payload stream of a loaded capture: one record's payload, continued by the payloads of its
segments, with the transfer coding undone by pywb's rule and the content coding on request.

``payload_stream`` decides what to undo and ``warchive.warc.content`` undoes
it; ``Chain`` reads the streams of a segmented record one after the other,
opening each only when it is reached. This module opens no files and closes
nothing it did not make: the loader owns the records.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any, BinaryIO, Callable, List, Optional, Protocol

from ..warc.content import decoded_stream, decodes
from ..warc.headers import Headers


class Readable(Protocol):
    def read(self, n: int = -1, /) -> bytes: ...


class Chain(io.RawIOBase):
    """The first stream, then each of the others (made by calling ``rest``, when reached)."""

    def __init__(self, first: Readable, rest: List[Callable[[], Readable]]) -> None:
        super().__init__()
        self._cur = first
        self._rest = list(rest)

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while True:
            data = self._cur.read(len(b))
            if data:
                b[: len(data)] = data
                return len(data)
            if not self._rest:
                return 0
            self._cur = self._rest.pop(0)()


def is_chunked(http: Optional[Headers]) -> bool:
    """Does this head's payload get de-chunked? pywb's header rewriter de-chunks whenever a
    Transfer-Encoding header says chunked; the reader then passes a body that is not chunked
    through, as warchive's does."""
    return http is not None and any("chunked" in v.lower() for v in http.get_all("Transfer-Encoding"))


@dataclass
class Payload:
    """A payload as served: the stream, and what was undone to it."""
    stream: BinaryIO
    transfer_decoded: bool     # de-chunked
    content_decoded: bool      # its Content-Encoding undone


def payload_stream(raw: Any, http: Optional[Headers], *, dechunk: bool, decompress: bool) -> Payload:
    """``raw`` (a raw stream: a record's payload or a Chain of them) as served under the HTTP head
    ``http`` of the record holding it: de-chunked when ``dechunk`` and the head says chunked,
    its gzip/deflate/br coding undone when ``decompress``."""
    chunked = dechunk and is_chunked(http)
    enc = http.get("Content-Encoding") if (decompress and http is not None) else None
    if enc and not decodes(enc):
        enc = None
    if chunked or enc:
        return Payload(io.BufferedReader(decoded_stream(raw, chunked=chunked, encoding=enc)), chunked, bool(enc))
    return Payload(io.BufferedReader(raw), False, False)


__all__ = ["Chain", "Payload", "Readable", "is_chunked", "payload_stream"]
