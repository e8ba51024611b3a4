"""The manifest of a stored file: what it is, how it is striped, the hash of every fragment, where
its records are, and the hash of its records' listing. Immutable: written once by put (last, on every volume), never rewritten (repair
rebuilds chunks to match it); removed only by rm.

A file of ``size`` bytes is cut into stripes of k × fragment_size bytes (the last one shorter);
stripe s becomes k + m fragments of equal length, fragment i going to chunk file i. Every
full stripe's fragments are ``header_size + fragment_size`` bytes, so fragment i of stripe s
starts at byte ``s × (header_size + fragment_size)`` of chunk file i::

    file   | stripe 0: k*F bytes             | stripe 1 | ... | last (<= k*F) |
    chunk i| hdr | payload F | hdr | payload F | ...         | hdr | ceil(L/k) |

The manifest's JSON (canonical, see warchive.store.jsonfile; docs/format.md "Durable store")::

    {"checksum": sha256 hex of the canonical JSON of every other field,
     "chunks": [{"index": i, "sha256": hex, "size": bytes, "volume": volume index}, ...k+m],
     "codec": "isa_l_rs_cauchy", "format": "warchive-store-manifest", "fragment_hash": "blake3",
     "fragment_size": F, "header_size": 80, "k": 4, "m": 2, "name": "NAME",
     "listing_sha256": sha256 hex of the records' listing (warchive.store.records.listing_digest),
     "record_count": records, "record_table": base64 of the zlib'ed varint offsets and lengths,
     "sha256": hex of the whole file, "size": bytes,
     "stripes": [[hash of fragment 0, ..., hash of fragment k+m-1], ...one per stripe],
     "version": 1}

``parse_manifest`` checks every field, the counts against the sizes (so a manifest cannot claim
more stripes or bigger chunks than its size implies), and the checksum, and raises StoreError
naming the file and the field. Use ``Manifest.stripes_for(start, end)`` and the geometry methods
to find which bytes of which chunk hold a range.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ..errors import StoreError
from .codec import CODECS, FRAGMENT_HASH, MAX_FRAGMENTS
from .jsonfile import HEX64, Fields, canonical, parse, require_list
from .layout import name_problem
from .records import RecordSpan, decode_table, encode_table

FORMAT = "warchive-store-manifest"
VERSION = 2
MAX_SIZE = 1 << 50
MAX_HEADER = 4096
MAX_FRAGMENT_SIZE = 1 << 30
MAX_VOLUME = 4095
MANIFEST_CAP = 1 << 28
KEYS = {"checksum", "chunks", "codec", "format", "fragment_hash", "fragment_size", "header_size", "k", "listing_sha256",
        "m", "name", "record_count", "record_table", "sha256", "size", "stripes", "version"}
CHUNK_KEYS = {"index", "sha256", "size", "volume"}


@dataclass(frozen=True)
class ChunkInfo:
    index: int
    volume: int       # index into the store's volumes (store.json)
    size: int
    sha256: str


@dataclass(frozen=True)
class Manifest:
    name: str
    codec: str
    k: int
    m: int
    fragment_size: int
    header_size: int
    size: int
    sha256: str
    chunks: Tuple[ChunkInfo, ...]
    stripes: Tuple[Tuple[str, ...], ...]
    records: Tuple[RecordSpan, ...] = field(default=())
    listing_sha256: str = hashlib.sha256(b"").hexdigest()

    # ---------------------------------------------------------------- geometry
    @property
    def n(self) -> int:
        return self.k + self.m

    @property
    def stripe_bytes(self) -> int:
        """File bytes in a full stripe."""
        return self.k * self.fragment_size

    @property
    def stripe_count(self) -> int:
        return stripe_count(self.size, self.k, self.fragment_size)

    def stripe_start(self, s: int) -> int:
        return s * self.stripe_bytes

    def stripe_size(self, s: int) -> int:
        return min(self.stripe_bytes, self.size - s * self.stripe_bytes)

    def payload_size(self, s: int) -> int:
        return -(-self.stripe_size(s) // self.k)

    def fragment_length(self, s: int) -> int:
        return self.header_size + self.payload_size(s)

    def fragment_offset(self, s: int) -> int:
        """Where fragment (s, i) starts in chunk file i (the same for every i)."""
        return s * (self.header_size + self.fragment_size)

    def stripes_for(self, start: int, end: int) -> range:
        """The stripes holding file bytes [start, end)."""
        if end <= start:
            return range(0)
        return range(start // self.stripe_bytes, (end - 1) // self.stripe_bytes + 1)

    # ---------------------------------------------------------------- JSON
    def body(self) -> Dict[str, Any]:
        return {"chunks": [{"index": c.index, "sha256": c.sha256, "size": c.size, "volume": c.volume}
                           for c in self.chunks],
                "codec": self.codec, "format": FORMAT, "fragment_hash": FRAGMENT_HASH,
                "fragment_size": self.fragment_size, "header_size": self.header_size, "k": self.k, "m": self.m,
                "listing_sha256": self.listing_sha256, "name": self.name,
                "record_count": len(self.records), "record_table": encode_table(self.records),
                "sha256": self.sha256, "size": self.size, "stripes": [list(s) for s in self.stripes],
                "version": VERSION}

    def to_json(self) -> bytes:
        """The manifest's bytes (canonical JSON with its checksum)."""
        body = self.body()
        body["checksum"] = hashlib.sha256(canonical(body)).hexdigest()
        return canonical(body)


def stripe_count(size: int, k: int, fragment_size: int) -> int:
    return -(-size // (k * fragment_size))


def chunk_size(size: int, k: int, fragment_size: int, header_size: int) -> int:
    """Bytes of each chunk file of a file of ``size`` bytes."""
    n = stripe_count(size, k, fragment_size)
    if n == 0:
        return 0
    last = size - (n - 1) * k * fragment_size
    return (n - 1) * (header_size + fragment_size) + header_size + -(-last // k)


def parse_manifest(data: bytes, path: str, name: Optional[str] = None) -> Manifest:
    """The Manifest in ``data`` (the bytes of ``path``), checked field by field; with ``name``,
    it must be the manifest of that stored name. StoreError naming ``path`` otherwise."""
    f = Fields(parse(data, path, "manifest"), path, "manifest", KEYS)
    if f.obj["format"] != FORMAT:
        f.fail(f"manifest: format is {f.obj['format']!r}, not {FORMAT!r}")
    if f.integer("version", 0, 1 << 20) != VERSION:
        f.fail(f"manifest: version {f.obj['version']} (this warchive reads version {VERSION})")
    body = dict(f.obj)
    checksum = f.hex64("checksum")
    del body["checksum"]
    if hashlib.sha256(canonical(body)).hexdigest() != checksum:
        f.fail("manifest: its checksum does not match its content (damaged)")
    mname = f.string("name", 1024)
    problem = name_problem(mname)
    if problem:
        f.fail(f"manifest: {problem}")
    if name is not None and mname != name:
        f.fail(f"manifest: of {mname!r}, not of {name!r}")
    codec = f.string("codec", 64)
    if codec not in CODECS:
        f.fail(f"manifest: unknown codec {codec!r}")
    if f.obj["fragment_hash"] != FRAGMENT_HASH:
        f.fail(f"manifest: unknown fragment hash {f.obj['fragment_hash']!r}")
    k = f.integer("k", 1, MAX_FRAGMENTS - 1)
    m = f.integer("m", 1, MAX_FRAGMENTS - k)
    fs = f.integer("fragment_size", 1, MAX_FRAGMENT_SIZE)
    hs = f.integer("header_size", 0, MAX_HEADER)
    size = f.integer("size", 0, MAX_SIZE)
    sha = f.hex64("sha256")
    csize = chunk_size(size, k, fs, hs)
    chunks = _chunks(f.items("chunks", MAX_FRAGMENTS), k + m, csize, path)
    nstripes = stripe_count(size, k, fs)
    raw_stripes = f.items("stripes", nstripes)
    if len(raw_stripes) != nstripes:
        f.fail(f"manifest: {len(raw_stripes)} stripes listed, {nstripes} for {size} bytes")
    stripes = tuple(_stripe(s, k + m, path, i) for i, s in enumerate(raw_stripes))
    count = f.integer("record_count", 0, size)
    records = decode_table(f.string("record_table", 30 * count + 64), count, size, path)
    listing = f.hex64("listing_sha256")
    return Manifest(mname, codec, k, m, fs, hs, size, sha, chunks, stripes, records, listing)


def _chunks(raw: List[Any], n: int, csize: int, path: str) -> Tuple[ChunkInfo, ...]:
    if len(raw) != n:
        raise StoreError(path, None, f"manifest: {len(raw)} chunks listed, k + m = {n}")
    out = []
    for i, c in enumerate(raw):
        f = Fields(c, path, f"manifest.chunks[{i}]", CHUNK_KEYS)
        if f.integer("index", 0, n - 1) != i:
            f.fail(f"manifest.chunks[{i}].index is {c['index']}, not {i}")
        size = f.integer("size", 0, MAX_SIZE)
        if size != csize:
            f.fail(f"manifest.chunks[{i}].size is {size}, not the {csize} bytes the file's size implies")
        out.append(ChunkInfo(i, f.integer("volume", 0, MAX_VOLUME), size, f.hex64("sha256")))
    if len({c.volume for c in out}) != n:
        raise StoreError(path, None, "manifest: two chunks on one volume")
    return tuple(out)


def _stripe(s: Any, n: int, path: str, i: int) -> Tuple[str, ...]:
    hashes = require_list(s, n, path, f"manifest.stripes[{i}]")
    if len(hashes) != n or not all(isinstance(h, str) and HEX64.match(h) for h in hashes):
        raise StoreError(path, None, f"manifest.stripes[{i}] must be {n} hashes of 64 hex digits")
    return tuple(hashes)
