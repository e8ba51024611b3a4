"""The erasure code as the store uses it: what pyeclib does with a corrupt fragment (returns wrong
bytes, raises nothing: the reason the store hashes fragments), the systematic layout the store's
reads rely on, and that the store's read path catches the corruption pyeclib does not."""

import io
import os

import pytest
from hypothesis import given, settings, strategies as st
from pyeclib.ec_iface import ECDriver

from warchive.errors import StoreError
from warchive.store import FragmentReader, get, put_object
from warchive.store.codec import CODECS, Codec, payload_size
from storekit import chunk_files, flip, make_store


def test_pyeclib_decodes_a_corrupt_fragment_into_wrong_bytes_silently():
    d = ECDriver(k=4, m=2, ec_type="isa_l_rs_cauchy")
    data = os.urandom(10000)
    frags = d.encode(data)
    bad = bytearray(frags[1])
    bad[len(bad) // 2] ^= 0x01          # one bit of the payload of a data fragment
    out = d.decode([frags[0], bytes(bad), frags[2], frags[3], frags[4], frags[5]])
    assert len(out) == len(data)
    assert out != data                   # no error, and not the bytes that were encoded
    assert d.decode(frags[2:]) == data   # the same stripe without that fragment is right


def test_a_corrupt_parity_fragment_poisons_a_degraded_decode_silently():
    d = ECDriver(k=4, m=2, ec_type="isa_l_rs_cauchy")
    data = os.urandom(4096)
    frags = d.encode(data)
    bad = bytearray(frags[4])
    bad[-1] ^= 0x80
    out = d.decode([frags[0], frags[1], frags[2], bytes(bad)])   # fragment 3 lost, parity 4 corrupt
    assert out != data


@settings(max_examples=60, deadline=None)
@given(size=st.integers(0, 5000), k=st.integers(1, 8), m=st.integers(1, 4),
       codec=st.sampled_from(CODECS))
def test_data_fragments_hold_the_stripe_bytes_after_a_fixed_header(size, k, m, codec):
    data = os.urandom(size)
    frags = ECDriver(k=k, m=m, ec_type=codec).encode(data)
    p = payload_size(size, k)
    c = Codec(codec, k, m)
    for j in range(k):
        part = data[j * p:(j + 1) * p]
        assert frags[j][c.header_size:] == part + bytes(p - len(part))
    assert c.encode(data) == frags
    assert c.decode(dict(enumerate(frags[m:], m)), size) == data


def test_the_store_reads_detect_what_pyeclib_does_not(tmp_path):
    store = make_store(tmp_path, fragment_size=256)
    data = os.urandom(256 * 4 * 3 + 100)
    src = tmp_path / "blob.warc"
    src.write_bytes(data)
    put_object(store, str(src), "blob.warc", ())
    chunks = chunk_files(store, "blob.warc")
    man = store.manifest("blob.warc")
    flip(chunks[1], man.fragment_offset(1) + man.header_size + 7)    # a payload byte of stripe 1, fragment 1
    with FragmentReader(store, man) as r:
        assert r.read(0, man.size) == data
        assert [(d.stripe, d.index, d.problem.split(" ")[0]) for d in r.damage] == [(1, 1, "hash")]


def test_a_stripe_with_fewer_than_k_good_fragments_is_an_error_naming_stripe_and_chunks(tmp_path):
    store = make_store(tmp_path, fragment_size=128)
    src = tmp_path / "b.warc"
    src.write_bytes(os.urandom(128 * 4 * 2))
    put_object(store, str(src), "b.warc", ())
    man = store.manifest("b.warc")
    chunks = chunk_files(store, "b.warc")
    for i in (0, 3, 5):
        flip(chunks[i], man.fragment_offset(1) + 3)
    with pytest.raises(StoreError) as e:
        get(store, "b.warc", io.BytesIO())
    msg = str(e.value)
    assert "stripe 1" in msg and "3 good fragments of the 4 needed" in msg
    for i in (0, 3, 5):
        assert f"chunk {i} " in msg
    assert "chunk 1 " not in msg and "b.warc" in msg
