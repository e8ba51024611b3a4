"""Reads through damage: up to m deleted, flipped or truncated chunks (or a lost volume) and get
is still byte-identical; m + 1 is a clear error; intact data fragments are served without decode."""

import io
import itertools
import os
import random
from pathlib import Path

import pytest

from warchive.errors import StoreError
from warchive.store import Store, StoreFile, get, put
from warchive.store.codec import Codec
from storekit import chunk_files, flip, make_store, truncate

WGET = Path(__file__).resolve().parents[1] / "data" / "wget"
SRC = WGET / "docs-python-3.11-recrawl.warc.gz"


@pytest.fixture
def stored(tmp_path):
    store = make_store(tmp_path, k=4, m=2, fragment_size=2048)
    put(store, str(SRC))
    return store


def _get(store, start=0, end=None):
    out = io.BytesIO()
    r = get(store, SRC.name, out, start, end)
    return out.getvalue(), r.damage


def _damage(store, how, index, rng):
    path = chunk_files(store, SRC.name)[index]
    size = os.path.getsize(path)
    if how == "delete":
        os.unlink(path)
    elif how == "flip":
        for _ in range(5):
            flip(path, rng.randrange(size))
    elif how == "truncate":
        truncate(path, rng.randrange(size))
    elif how == "swap":   # another chunk of the same file under this one's name
        other = chunk_files(store, SRC.name)[(index + 1) % 6]
        if os.path.exists(other):
            Path(path).write_bytes(Path(other).read_bytes())
        else:
            os.unlink(path)


@pytest.mark.parametrize("hows", list(itertools.product(["delete", "flip", "truncate", "swap"], repeat=2)))
def test_up_to_m_damaged_chunks_read_back_byte_identical(stored, hows):
    rng = random.Random(str(hows))
    orig = SRC.read_bytes()
    pairs = ([0, 1], [2, 5], [4, 5], [1, 3])
    for pair in pairs[::2] if rng.random() < 0.5 else pairs[1::2]:   # every pair, over the combinations
        store = Store(stored.root)
        for how, index in zip(hows, pair):
            _damage(store, how, index, rng)
        got, damage = _get(store)
        assert got == orig
        assert {d.index for d in damage} <= set(pair)
        a = rng.randrange(len(orig))
        assert _get(store, a, a + 3000)[0] == orig[a:a + 3000]
        with StoreFile(store, SRC.name) as f:
            f.seek(a)
            assert f.read(777) == orig[a:a + 777]
        _restore(stored)


def _restore(store):
    """Put the chunks back as they were: remove and put again (the fixture's store is reused)."""
    from warchive.store import remove
    remove(store, SRC.name)
    put(store, str(SRC))


def test_m_plus_one_damaged_chunks_are_an_error_naming_the_chunks(stored):
    rng = random.Random(1)
    for how, index in zip(["delete", "flip", "truncate"], [0, 2, 4]):
        _damage(stored, how, index, rng)
    with pytest.raises(StoreError) as e:
        _get(stored)
    msg = str(e.value)
    assert SRC.name in msg and "stripe" in msg and "good fragments of the 4 needed" in msg
    assert "chunk 0 " in msg and "missing" in msg


def test_a_lost_volume_is_read_around(stored, tmp_path):
    man = stored.manifest(SRC.name)
    vol = stored.volumes[man.chunks[1].volume]
    os.rename(vol, vol + ".gone")
    store = Store(stored.root)
    assert store.names() == [SRC.name]
    got, damage = _get(store)
    assert got == SRC.read_bytes()
    assert {d.index for d in damage} == {1} and "volume unavailable" in damage[0].problem


def test_a_volume_of_another_store_is_not_read(stored, tmp_path):
    man = stored.manifest(SRC.name)
    vol = stored.volumes[man.chunks[3].volume]
    other = make_store(tmp_path / "other")
    (Path(vol) / "volume.json").write_bytes((Path(other.volumes[3]) / "volume.json").read_bytes())
    store = Store(stored.root)
    assert "not volume 3 of store" in store.volume_problem(man.chunks[3].volume)
    got, damage = _get(store)
    assert got == SRC.read_bytes() and {d.index for d in damage} == {3}


def test_intact_data_fragments_are_served_without_decode(stored, monkeypatch):
    def no_decode(self, fragments, size):
        raise AssertionError("decode called")
    monkeypatch.setattr(Codec, "decode", no_decode)
    assert _get(stored) == (SRC.read_bytes(), [])
    _damage(stored, "delete", 5, random.Random(0))   # parity damage does not matter to a read of intact data
    assert _get(stored)[0] == SRC.read_bytes()
    _damage(stored, "delete", 0, random.Random(0))
    with pytest.raises(AssertionError, match="decode called"):
        _get(stored)


def test_a_small_range_reads_only_the_fragments_holding_it(stored, monkeypatch):
    calls = []
    real = os.pread

    def pread(fd, n, off):
        calls.append((os.readlink(f"/proc/self/fd/{fd}"), n, off))
        return real(fd, n, off)
    monkeypatch.setattr(os, "pread", pread)
    man = stored.manifest(SRC.name)
    start = man.stripe_start(3) + 2048 * 2 + 10        # inside fragment 2 of stripe 3
    assert _get(stored, start, start + 100)[0] == SRC.read_bytes()[start:start + 100]
    assert [(os.path.basename(p), n, off) for p, n, off in calls] == \
        [(f"{SRC.name}.2", man.fragment_length(3), man.fragment_offset(3))]
