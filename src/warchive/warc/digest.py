"""Digests of WARC blocks and payloads: one ``Digest`` value for every form they are written in,
and de-chunking for payload digests.

A digest is written ``algorithm:value`` with the value in base32 (RFC 4648,
upper case, padded), as Heritrix, Wget and warcio write ``sha1:``; ``sha256:``
and ``blake3:`` use the same encoding (warcio's Digester writes sha256 so).
Reading, ``Digest.parse`` takes every form met in archives and indexes: the
label in any case (``SHA-1:`` too), base32 with or without padding in either
case, base16 and base64 values (warcio's checker accepts them), and a bare
value without a label, which is SHA-1 as CDX files (Wget's among them) write
it. Two spellings of one digest are one ``Digest``. ``ALGORITHMS`` are those
warchive writes and keys in binary files; ``CHECKED`` adds md5, sha224,
sha384 and sha512, which ``warchive check`` verifies (``Digest.parse(text,
table=CHECKED)``) because writers may label a digest with any algorithm
(warcio's checker takes every name hashlib knows) but nothing else reads them.

The payload of an HTTP message is its transfer-decoded entity body (WARC 1.1
section 6.3.2; iipc/warc-specifications#22): ``dechunk`` removes the chunk
framing of ``Transfer-Encoding: chunked`` bodies held in memory, ``Dechunker``
of bodies read piece by piece (the same rules). This module must not import
the reader or the writer.
"""

from __future__ import annotations

import binascii
import hashlib
from typing import Any, Callable, Dict, Iterable, List, Optional

import blake3

from ..errors import DigestError


class Algorithm:
    """A digest algorithm warchive writes and reads."""

    __slots__ = ("name", "code", "size", "new")

    def __init__(self, name: str, code: int, size: int, new: Callable[..., Any]) -> None:
        self.name = name     # the label: "sha1"
        self.code = code     # the byte naming it in binary files (the dedup digest index); 0: none
        self.size = size     # digest bytes
        self.new = new       # a fresh hasher (update / digest), new(data) one with data in it

    def __repr__(self) -> str:
        return f"Algorithm({self.name!r})"


ALGORITHMS: Dict[str, Algorithm] = {a.name: a for a in (
    Algorithm("sha1", 1, 20, hashlib.sha1),
    Algorithm("sha256", 2, 32, hashlib.sha256),
    Algorithm("blake3", 3, 32, blake3.blake3),
)}
ALGORITHMS_BY_CODE: Dict[int, Algorithm] = {a.code: a for a in ALGORITHMS.values()}
# read to be checked, never written nor keyed
CHECKED: Dict[str, Algorithm] = {**ALGORITHMS, **{a.name: a for a in (
    Algorithm("md5", 0, 16, hashlib.md5),
    Algorithm("sha224", 0, 28, hashlib.sha224),
    Algorithm("sha384", 0, 48, hashlib.sha384),
    Algorithm("sha512", 0, 64, hashlib.sha512),
)}}


def algorithm(name: str, table: Dict[str, Algorithm] = ALGORITHMS) -> Algorithm:
    """The algorithm of a label ("sha1", "SHA-1", "sha256", "blake3") in ``table``; DigestError
    when unknown."""
    a = table.get(name)
    if a is None:
        a = table.get(name.strip().lower().replace("-", ""))
        if a is None:
            raise DigestError(f"unknown digest algorithm {name!r} (one of {', '.join(table)})")
    return a


def new_hasher(name: str) -> Any:
    """A fresh hashlib-like object (update/digest) for the algorithm ``name`` (of ``CHECKED``)."""
    return algorithm(name, CHECKED).new()


_B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
_PAIRS = [a + b for a in _B32 for b in _B32]      # 10 bits -> 2 characters
_SHIFTS80 = tuple(range(70, -1, -10))
# the base32 alphabet (either case) onto int()'s base-32 digits; 0, 1, 8, 9 onto "!" so that
# int() refuses them (everything else that is not alphanumeric fails isalnum() first)
_B32_TO_INT = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567abcdefghijklmnopqrstuvwxyz0189",
                            "0123456789abcdefghijklmnopqrstuv0123456789abcdefghijklmnop!!!!")


def b32(raw: bytes) -> str:
    """base64.b32encode(raw).decode() (upper case, padded); a few times faster for 20 and 40 bytes."""
    n = len(raw)
    if n == 20:  # sha1, the default: unrolled
        T = _PAIRS
        a = int.from_bytes(raw[:10], "big")
        b = int.from_bytes(raw[10:], "big")
        return "".join((T[a >> 70], T[(a >> 60) & 1023], T[(a >> 50) & 1023], T[(a >> 40) & 1023],
                        T[(a >> 30) & 1023], T[(a >> 20) & 1023], T[(a >> 10) & 1023], T[a & 1023],
                        T[b >> 70], T[(b >> 60) & 1023], T[(b >> 50) & 1023], T[(b >> 40) & 1023],
                        T[(b >> 30) & 1023], T[(b >> 20) & 1023], T[(b >> 10) & 1023], T[b & 1023]))
    if n % 10 == 0 and n:
        T = _PAIRS
        parts = []
        for i in range(0, n, 10):
            v = int.from_bytes(raw[i : i + 10], "big")
            parts.append("".join([T[(v >> s) & 1023] for s in _SHIFTS80]))
        return "".join(parts)
    return _b32_any(raw) if n else ""


def _b32_any(raw: bytes) -> str:
    """RFC 4648 base32 of any length, padded."""
    bits = len(raw) * 8
    chars = (bits + 4) // 5
    v = int.from_bytes(raw, "big") << (chars * 5 - bits)
    text = "".join(_B32[(v >> (5 * (chars - 1 - i))) & 31] for i in range(chars))
    return text + "=" * (-chars % 8)


def _from_b32(value: str, size: int) -> Optional[bytes]:
    """``size`` bytes in RFC 4648 base32 (either case, padding optional), decoded through
    int(..., 32) after mapping the alphabet onto int's digits (10x base64.b32decode)."""
    v = value.rstrip("=")
    if len(v) != (size * 8 + 4) // 5 or not v.isascii() or not v.isalnum():
        return None
    t = v.translate(_B32_TO_INT)
    if "!" in t:
        return None
    extra = len(v) * 5 - size * 8
    return (int(t, 32) >> extra).to_bytes(size, "big")


def _from_b16(value: str, size: int) -> Optional[bytes]:
    if len(value) != 2 * size:
        return None
    try:
        return bytes.fromhex(value)
    except ValueError:
        return None


def _from_b64(value: str, size: int) -> Optional[bytes]:
    if len(value.rstrip("=")) != (size * 4 + 2) // 3 or not value.isascii():
        return None
    t = value.replace("-", "+").replace("_", "/")
    try:
        raw = binascii.a2b_base64(t + "=" * (-len(t) % 4), strict_mode=True)
    except (binascii.Error, ValueError):
        return None
    return raw if len(raw) == size else None


class Digest:
    """A digest: its algorithm's name and its bytes. Equal digests are equal however spelled.

        d = Digest.parse("sha1:KI6XY5N7QQASCEP6N4VNIH7AOOSI4NHE")   # or hex, base64, bare (CDX)
        d.label      # "sha1:KI6XY5N7QQASCEP6N4VNIH7AOOSI4NHE" (as the writer writes it)
        d.base32, d.hex, d.raw, d.key, d.is_empty

    (A class of its own rather than a dataclass: `warchive index` imports this module, and
    dataclasses would add 5-8 ms to its start-up, with inspect.)"""

    __slots__ = ("algorithm", "raw")

    def __init__(self, algorithm: str, raw: bytes) -> None:
        self.algorithm = algorithm
        self.raw = raw

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Digest):
            return NotImplemented
        return self.algorithm == other.algorithm and self.raw == other.raw

    def __hash__(self) -> int:
        return hash((self.algorithm, self.raw))

    def __repr__(self) -> str:
        return f"Digest({self.label!r})"

    @classmethod
    def parse(cls, text: str, default: Optional[str] = "sha1",
              table: Dict[str, Algorithm] = ALGORITHMS) -> "Digest":
        """Every form in which digests are written (module docstring); a value without a label
        is of the algorithm ``default`` (None: a label is required); the algorithms are those
        of ``table``. DigestError otherwise."""
        name, sep, value = text.strip().partition(":")
        if not sep:
            if default is None:
                raise DigestError(f"digest {text!r} has no algorithm label")
            name, value = default, name
        try:
            alg = algorithm(name, table)
        except DigestError:
            raise DigestError(f"digest {text!r}: unknown algorithm {name!r} "
                              f"(one of {', '.join(table)})") from None
        value = value.strip()
        size = alg.size
        raw = _from_b32(value, size) or _from_b16(value, size) or _from_b64(value, size)
        if raw is None:
            raise DigestError(f"digest {text!r}: not {size} bytes of {alg.name} in base32, base16 or base64")
        return cls(alg.name, raw)

    @classmethod
    def find(cls, text: Optional[str], default: Optional[str] = "sha1") -> Optional["Digest"]:
        """``parse``, or None for no digest (None, "", "-" as CDX files write it) and for one that
        cannot be read."""
        if not text or text == "-":
            return None
        try:
            return cls.parse(text, default)
        except DigestError:
            return None

    @classmethod
    def of(cls, name: str, pieces: Iterable[Any]) -> "Digest":
        """The digest of the concatenated ``pieces`` (bytes-like)."""
        alg = algorithm(name)
        h = alg.new()
        for p in pieces:
            h.update(p)
        return cls(alg.name, h.digest())

    @classmethod
    def from_key(cls, key: bytes) -> "Digest":
        """The digest of a ``key`` (algorithm code byte + digest bytes)."""
        alg = ALGORITHMS_BY_CODE.get(key[0]) if key else None
        if alg is None or len(key) != 1 + alg.size:
            raise DigestError(f"not a digest key: {key!r}")
        return cls(alg.name, bytes(key[1:]))

    @property
    def base32(self) -> str:
        return b32(self.raw)

    @property
    def hex(self) -> str:
        return self.raw.hex()

    @property
    def label(self) -> str:
        """``algorithm:BASE32``, as WARC-*-Digest fields are written."""
        return self.algorithm + ":" + b32(self.raw)

    @property
    def key(self) -> bytes:
        """The algorithm's code byte and the digest bytes: how binary files store it."""
        alg = ALGORITHMS.get(self.algorithm)
        if alg is None:
            raise DigestError(f"{self.algorithm} digests are checked, never stored in binary files")
        return bytes((alg.code,)) + self.raw

    @property
    def is_empty(self) -> bool:
        """Is this the digest of no bytes (an empty payload)?"""
        return self.raw == _EMPTY[self.algorithm]

    def __str__(self) -> str:
        return self.label


_EMPTY: Dict[str, bytes] = {name: a.new().digest() for name, a in CHECKED.items()}


def is_empty_digest(text: Optional[str]) -> bool:
    """Is ``text`` (any spelling; bare means SHA-1) the digest of an empty payload?"""
    d = Digest.find(text)
    return d is not None and d.is_empty


def label(name: str, raw: bytes) -> str:
    """``name:BASE32`` of the raw digest ``raw``."""
    return name + ":" + b32(raw)


def digest_of(name: str, pieces: Iterable[Any]) -> str:
    """The label of the digest of the concatenated ``pieces``."""
    return Digest.of(name, pieces).label


def digest_one(name: str, data: Any) -> str:
    """The label of the digest of ``data`` (one bytes-like object)."""
    return name + ":" + b32(algorithm(name).new(data).digest())


def dechunk(body: Any, start: int = 0) -> Optional[List[memoryview]]:
    """The data pieces of the chunked body that starts at ``start`` of ``body`` (views into
    ``body``, which is not copied when it is bytes), or None when it is not well chunked.

    Chunk extensions are ignored, and so are trailer fields after the last
    chunk. A body that ends before its last (zero) chunk is not well chunked:
    the payload digest of a truncated message is taken over the bytes as
    they are, which is what readers that do not de-chunk find.
    """
    mv = memoryview(body).cast("B")
    n = len(mv)
    b = bytes(mv) if not isinstance(body, bytes) else body
    pos = start
    out: List[memoryview] = []
    while True:
        eol = b.find(b"\n", pos, pos + 1024)
        if eol < 0:
            return None
        line = b[pos:eol].rstrip(b"\r").split(b";", 1)[0].strip()
        try:
            size = int(line, 16)
        except ValueError:
            return None
        if size < 0 or line.startswith((b"-", b"+", b"0x", b"0X")):
            return None
        pos = eol + 1
        if size == 0:
            return out  # trailers and the final CRLF are not payload
        if pos + size > n:
            return None
        out.append(mv[pos : pos + size])
        pos += size
        if b[pos : pos + 2] == b"\r\n":
            pos += 2
        elif b[pos : pos + 1] == b"\n":
            pos += 1
        else:
            return None


class Dechunker:
    """``dechunk`` of a body fed piece by piece, in constant memory (chunk data is never
    buffered): ``feed(data)`` returns the data pieces found in ``data`` (views into it).

    ``ok`` is True once the last (zero) chunk has been read (what follows is
    trailers, ignored), False as soon as the body is not well chunked (nothing
    more is returned), None while it may still be either. Fed the whole of a
    body, pieces and verdict are those of ``dechunk``: a body that ends before
    its last chunk ends with ``ok`` None, which ``dechunk`` calls not well chunked.
    """

    __slots__ = ("ok", "_line", "_left", "_eol")

    def __init__(self) -> None:
        self.ok: Optional[bool] = None
        self._line = b""      # the size line read so far
        self._left = -1       # chunk data bytes still to come; -1: reading a size line
        self._eol = 0         # after a chunk's data: 2 = expecting CR or LF, 1 = LF after a CR

    def feed(self, data: Any) -> List[memoryview]:
        mv = memoryview(data).cast("B")
        b = bytes(mv) if not isinstance(data, bytes) else data
        n = len(mv)
        pos = 0
        out: List[memoryview] = []
        while pos < n and self.ok is None:
            if self._left > 0:                      # chunk data
                take = min(self._left, n - pos)
                out.append(mv[pos : pos + take])
                pos += take
                self._left -= take
                if self._left == 0:
                    self._eol = 2
            elif self._eol:                         # the line end after chunk data: CRLF or LF
                c = b[pos]
                if self._eol == 2 and c == 13:
                    self._eol = 1
                    pos += 1
                elif c == 10:
                    self._eol = 0
                    self._left = -1
                    pos += 1
                else:
                    self.ok = False
            else:                                   # a size line, at most 1024 bytes with its LF
                room = 1024 - len(self._line)
                eol = b.find(b"\n", pos, pos + room)
                if eol < 0:
                    self._line += b[pos : pos + room]
                    pos = min(n, pos + room)
                    if len(self._line) >= 1024:
                        self.ok = False
                    continue
                line = self._line + b[pos:eol]
                self._line = b""
                pos = eol + 1
                self._size_line(line)
        return out

    def _size_line(self, raw: bytes) -> None:
        line = raw.rstrip(b"\r").split(b";", 1)[0].strip()
        try:
            size = int(line, 16)
        except ValueError:
            self.ok = False
            return
        if size < 0 or line.startswith((b"-", b"+", b"0x", b"0X")):
            self.ok = False
        elif size == 0:
            self.ok = True
        else:
            self._left = size
