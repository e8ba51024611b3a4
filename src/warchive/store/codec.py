"""The erasure code of a store: pyeclib's ECDriver with the checks it does not make.

``Codec(name, k, m)`` encodes one stripe (up to k × fragment_size bytes of a file) into k + m
fragments and decodes a stripe from any k of them. pyeclib trusts what it is given: a fragment
with a flipped bit decodes, without an error, into wrong bytes (tests/unit/test_store_codec.py
shows it on pyeclib itself). So nothing is decoded here that the caller has not checked against
the manifest's hash of that fragment (``fragment_digest``); this module only refuses fragments of
the wrong length.

The codes are systematic, and the layout of a fragment is fixed: a header of ``header_size``
bytes (80 for liberasurecode 1.6+: index, sizes, backend) and then a payload of
``payload_size(L) = ceil(L / k)`` bytes; data fragment j's payload is bytes ``[j*P, (j+1)*P)``
of the stripe, zero-padded at the end. Readers take the bytes of a range straight from the data
fragments' payloads and call ``decode`` only when one of them is bad. ``encode`` checks that
layout on every stripe it makes, so a backend that laid its fragments out otherwise would fail
the put, never a later read.

The fragment hash is BLAKE3 (256 bits): every read checks the fragments it reads, and BLAKE3
hashes 4-5 GB/s on one core here against 1 GB/s for SHA-256 (with SHA-NI), so a verified read
costs little more than the read. Whole files and chunk files keep SHA-256, the digest users and
other tools compare.
"""

from __future__ import annotations

from typing import Dict, List, Sequence

import blake3
from pyeclib.ec_iface import ECDriver, ECDriverError

from ..errors import StoreError

CODECS = ("isa_l_rs_cauchy", "isa_l_rs_vand")   # their fragments hold ceil(L/k) payload bytes; liberasurecode_rs_vand pads to words
DEFAULT_CODEC = "isa_l_rs_cauchy"
FRAGMENT_HASH = "blake3"
MAX_FRAGMENTS = 32   # k + m: ISA-L's Reed-Solomon tables are built for at most 32


def fragment_digest(data: bytes) -> str:
    """The hash the manifest keeps of one fragment (header and payload): BLAKE3, hex."""
    return blake3.blake3(data).hexdigest()


def payload_size(stripe_size: int, k: int) -> int:
    """Bytes of payload in each fragment of a stripe of ``stripe_size`` bytes."""
    return -(-stripe_size // k)


class Codec:
    """k data + m parity fragments per stripe with the pyeclib backend ``name``."""

    def __init__(self, name: str, k: int, m: int) -> None:
        if name not in CODECS:
            raise StoreError(None, None, f"unknown codec {name!r} (known: {', '.join(CODECS)})")
        if not (1 <= k and 1 <= m and k + m <= MAX_FRAGMENTS):
            raise StoreError(None, None, f"k={k}, m={m}: need k >= 1, m >= 1, k + m <= {MAX_FRAGMENTS}")
        self.name, self.k, self.m, self.n = name, k, m, k + m
        try:
            self.driver = ECDriver(k=k, m=m, ec_type=name)
            self.header_size = len(self.driver.encode(b"")[0])
        except ECDriverError as e:
            raise StoreError(None, None, f"codec {name} k={k} m={m} is not available: {e}") from e

    def fragment_length(self, stripe_size: int) -> int:
        """Bytes of each fragment of a stripe of ``stripe_size`` bytes, header included."""
        return self.header_size + payload_size(stripe_size, self.k)

    def encode(self, stripe: bytes) -> List[bytes]:
        """The k + m fragments of ``stripe``, checked to have the layout readers rely on."""
        frags = self.driver.encode(stripe)
        p = payload_size(len(stripe), self.k)
        h = self.header_size
        view = memoryview(stripe)
        if len(frags) != self.n or any(len(f) != h + p for f in frags):
            raise StoreError(None, None, f"codec {self.name}: {len(frags)} fragments of lengths "
                             f"{sorted({len(f) for f in frags})}, expected {self.n} of {h + p}")
        for j in range(self.k):
            part = view[j * p: (j + 1) * p]
            f = frags[j]
            pad = len(f) - h - len(part)
            if not f.startswith(part, h) or (pad and f[h + len(part):] != bytes(pad)):
                raise StoreError(None, None, f"codec {self.name}: data fragment {j} does not hold the "
                                 "stripe's bytes as they are (not a systematic layout)")
        return frags

    def decode(self, fragments: Dict[int, bytes], stripe_size: int) -> bytes:
        """The stripe from k (or more) fragments by index, each already checked against its hash."""
        use: Sequence[bytes] = [fragments[i] for i in sorted(fragments)[: self.k]]
        want = self.fragment_length(stripe_size)
        if len(use) < self.k or any(len(f) != want for f in use):
            raise StoreError(None, None, f"decode needs {self.k} fragments of {want} bytes")
        data = self.driver.decode(list(use))
        if len(data) != stripe_size:
            raise StoreError(None, None, f"codec {self.name} decoded {len(data)} bytes, not {stripe_size}")
        return bytes(data)
