"""Labelled digests of WARC blocks and payloads, and de-chunking for payload digests.

A digest is written ``algorithm:value`` with the value in base32 (RFC 4648,
upper case, padded), as Heritrix, wget and warcio write ``sha1:``; ``sha256:``
and ``blake3:`` use the same encoding (warcio's Digester writes sha256 so).
Reading, base16 and base64 values are accepted too, as warcio's checker does.

The payload of an HTTP message is its transfer-decoded entity body (WARC 1.1
section 6.3.2; iipc/warc-specifications#22): ``dechunk`` removes the chunk
framing of ``Transfer-Encoding: chunked`` bodies. This module must not
import the reader or the writer.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from typing import Any, Iterable, List, Optional, Tuple

ALGORITHMS = ("sha1", "sha256", "blake3")


def new_hasher(algorithm: str) -> Any:
    """A fresh hashlib-like object (update/digest) for ``algorithm``."""
    if algorithm == "sha1":
        return hashlib.sha1()
    if algorithm == "sha256":
        return hashlib.sha256()
    if algorithm == "blake3":
        import blake3

        return blake3.blake3()
    raise ValueError(f"unknown digest algorithm {algorithm!r} (one of {', '.join(ALGORITHMS)})")


_B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
_PAIRS = [a + b for a in _B32 for b in _B32]      # 10 bits -> 2 characters
_SHIFTS80 = tuple(range(70, -1, -10))


def b32(raw: bytes) -> str:
    """base64.b32encode(raw).decode(); a few times faster for 20 and 40 bytes (two per record)."""
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
    return base64.b32encode(raw).decode("ascii")


def label(algorithm: str, raw: bytes) -> str:
    return algorithm + ":" + b32(raw)


def _constructor(algorithm: str) -> Any:
    if algorithm == "sha1":
        return hashlib.sha1
    if algorithm == "sha256":
        return hashlib.sha256
    if algorithm == "blake3":
        import blake3

        return blake3.blake3
    raise ValueError(f"unknown digest algorithm {algorithm!r} (one of {', '.join(ALGORITHMS)})")


def digest_of(algorithm: str, pieces: Iterable[Any]) -> str:
    h = _constructor(algorithm)()
    for p in pieces:
        h.update(p)
    return label(algorithm, h.digest())


def digest_one(algorithm: str, data: Any) -> str:
    """digest_of(algorithm, (data,)) in one call."""
    return algorithm + ":" + b32(_constructor(algorithm)(data).digest())


def parse_label(value: str) -> Optional[Tuple[str, bytes]]:
    """(algorithm, raw digest) of ``alg:value`` in base32, base16 or base64; None when unreadable."""
    alg, sep, text = value.strip().partition(":")
    if not sep:
        return None
    alg = alg.lower().replace("-", "")
    try:
        size = new_hasher(alg).digest_size
    except (ValueError, ImportError):
        return None
    text = text.strip()
    for decode in (_b32, _b16, _b64):
        raw = decode(text)
        if raw is not None and len(raw) == size:
            return alg, raw
    return None


def _b32(t: str) -> Optional[bytes]:
    try:
        return base64.b32decode(t + "=" * (-len(t) % 8), casefold=True)
    except (binascii.Error, ValueError):
        return None


def _b16(t: str) -> Optional[bytes]:
    try:
        return base64.b16decode(t, casefold=True)
    except (binascii.Error, ValueError):
        return None


def _b64(t: str) -> Optional[bytes]:
    try:
        alt = b"-_" if ("-" in t or "_" in t) else None
        return base64.b64decode(t + "=" * (-len(t) % 4), altchars=alt, validate=True)
    except (binascii.Error, ValueError):
        return None


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
