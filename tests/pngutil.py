"""A minimal PNG encoder and decoder for the screenshot tests (zlib and struct only, no Pillow).

``decode`` reads 8-bit greyscale, RGB and RGBA images, non-interlaced, with
every filter type (0-4), which is what Chromium writes; anything else raises
so a test cannot pass on an image it did not read.
"""

from __future__ import annotations

import struct
import zlib
from typing import List, Tuple

SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def encode_solid(width: int, height: int, rgb: Tuple[int, int, int]) -> bytes:
    """An RGB PNG of one colour."""
    row = b"\x00" + bytes(rgb) * width
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return SIGNATURE + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(row * height)) + _chunk(b"IEND", b"")


class Image:
    def __init__(self, width: int, height: int, channels: int, rows: List[bytes]) -> None:
        self.width, self.height, self.channels, self.rows = width, height, channels, rows

    def pixel(self, x: int, y: int) -> Tuple[int, ...]:
        """(r, g, b) (alpha dropped) at column x, row y."""
        c = self.channels
        px = self.rows[y][x * c:(x + 1) * c]
        return tuple(px[:3]) if c >= 3 else (px[0],) * 3

    def colours(self) -> set:
        return {self.pixel(x, y) for y in range(0, self.height, 7) for x in range(0, self.width, 7)}


def decode(data: bytes) -> Image:
    if data[:8] != SIGNATURE:
        raise ValueError("not a PNG")
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        if zlib.crc32(kind + body) & 0xFFFFFFFF != struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]:
            raise ValueError(f"bad CRC in {kind!r}")
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        pos += 12 + n
    if ihdr is None:
        raise ValueError("no IHDR")
    width, height, depth, ctype, _, _, interlace = ihdr
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(ctype)
    if depth != 8 or channels is None or interlace:
        raise ValueError(f"unsupported PNG: depth {depth}, colour type {ctype}, interlace {interlace}")
    raw = zlib.decompress(idat)
    stride = width * channels
    rows: List[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        off = y * (stride + 1)
        ftype, line = raw[off], bytearray(raw[off + 1:off + 1 + stride])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 0xFF
            elif ftype == 2:
                line[i] = (line[i] + b) & 0xFF
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
            elif ftype != 0:
                raise ValueError(f"bad filter type {ftype} in row {y}")
        rows.append(bytes(line))
        prev = line
    return Image(width, height, channels, rows)
