"""What a record is to its users, whoever made it: its WARC header fields, its heads and its place.

``HeaderFields`` gives the fields every user asks for by name (``record_id``,
``date``, ``target_uri`` as warcio presents it, ``payload_digest``,
``block_digest``) as properties over a ``headers`` attribute; the reader's
``Record`` (warchive.warc.reader) and the writer's ``Written``
(warchive.warc.warcfile) both inherit them. ``LocatedRecord`` is either of
them as the index formatter (warchive.index.cdx) reads one: the heads, the
type, and the offset and length in its file. ``new_record_id`` makes the
WARC-Record-ID of a new record (the builder's, and the reader's for the ARC
records it presents as WARC ones).

This module holds no state and reads no bytes.
"""

from __future__ import annotations

import io
import os
from typing import Optional, Protocol

from .headers import Headers


def new_record_id() -> str:
    """<urn:uuid:...> of a random (version 4) UUID."""
    b = bytearray(os.urandom(16))
    b[6] = (b[6] & 0x0F) | 0x40
    b[8] = (b[8] & 0x3F) | 0x80
    h = b.hex()
    return f"<urn:uuid:{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}>"


class HeaderFields:
    """The WARC header fields of a record as properties, over its ``headers`` (the WARC head).

    No slots of its own, so that a slotted subclass (the reader's Record) stays without a
    ``__dict__``."""

    __slots__ = ()

    headers: Headers

    @property
    def record_id(self) -> Optional[str]:
        return self.headers.get("WARC-Record-ID")

    @property
    def date(self) -> Optional[str]:
        return self.headers.get("WARC-Date")

    @property
    def target_uri(self) -> Optional[str]:
        """WARC-Target-URI as warcio presents it: <...> removed, spaces as %20."""
        uri = self.headers.get("WARC-Target-URI")
        if uri is not None:
            if uri.startswith("<") and uri.endswith(">"):
                uri = uri[1:-1]
            if " " in uri:
                uri = uri.replace(" ", "%20")
        return uri

    @property
    def payload_digest(self) -> Optional[str]:
        return self.headers.get("WARC-Payload-Digest")

    @property
    def block_digest(self) -> Optional[str]:
        return self.headers.get("WARC-Block-Digest")


class LocatedRecord(Protocol):
    """A record with its heads and its place in a file, as an index line is made of it.

    ``source`` is the file that error messages name (None when there is none to
    name); ``length`` is None for a record inside a gzip member it shares with
    others; ``payload`` is read only when the head carries no WARC-Payload-Digest."""

    @property
    def type(self) -> Optional[str]: ...

    @property
    def headers(self) -> Headers: ...

    @property
    def http(self) -> Optional[Headers]: ...

    @property
    def offset(self) -> int: ...

    @property
    def length(self) -> Optional[int]: ...

    @property
    def target_uri(self) -> Optional[str]: ...

    @property
    def source(self) -> Optional[str]: ...

    @property
    def payload(self) -> io.RawIOBase: ...


class WrittenRecord(LocatedRecord, Protocol):
    """A record just written (the writer's ``Written``): located, in the file ``filename``."""

    @property
    def filename(self) -> str: ...
