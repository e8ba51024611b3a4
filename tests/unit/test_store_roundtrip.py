"""put then get gives back the same bytes: whole files (every valid fixture, the Wget crawls),
byte ranges (hypothesis), sizes around stripe boundaries, empty and 1-byte objects; StoreFile
against an in-memory file of the same bytes; the records' listing against warcio."""

import contextlib
import hashlib
import io
import json
import os
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from warchive.errors import StoreError
from warchive.store import Store, StoreFile, get, get_to_path, put, put_object
from warchive.store.layout import placement
from warchive.store.manifest import chunk_size
from warchive.store.records import _list_sl_members, list_records, read_records
from warchive.warc import ArchiveIterator
from storekit import make_store, sha256

WGET = Path(__file__).resolve().parents[1] / "data" / "wget"


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """A store (k=4, m=2, 1000-byte fragments) holding both Wget crawls."""
    root = tmp_path_factory.mktemp("store")
    store = make_store(root, fragment_size=1000)
    for p in sorted(WGET.glob("*.warc.gz")):
        put(store, str(p))
    return store


def _get(store, name, start=0, end=None) -> bytes:
    out = io.BytesIO()
    get(store, name, out, start, end)
    return out.getvalue()


def test_every_valid_fixture_round_trips(tmp_path, valid_archives):
    store = make_store(tmp_path, fragment_size=700)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fx in valid_archives.values():
            data = Path(fx.path).read_bytes()
            if not data:
                continue
            r = put(store, str(fx.path))
            assert r.stored and r.manifest.sha256 == sha256(data)
            assert sha256(_get(store, fx.path.name)) == sha256(data)


def test_wget_crawls_round_trip_to_a_file(shared, tmp_path):
    for p in WGET.glob("*.warc.gz"):
        out = tmp_path / p.name
        get_to_path(shared, p.name, str(out))
        assert hashlib.sha256(out.read_bytes()).hexdigest() == hashlib.sha256(p.read_bytes()).hexdigest()
        assert [e for e in os.listdir(tmp_path) if e.endswith(".tmp")] == []


def _warcio_records(path):
    from warcio.archiveiterator import ArchiveIterator as WarcioIterator
    out = []
    with open(path, "rb") as fh, contextlib.redirect_stderr(io.StringIO()):
        it = WarcioIterator(fh)
        for rec in it:
            h = rec.rec_headers
            out.append((it.get_record_offset(), it.get_record_length(), h.get_header("WARC-Record-ID"),
                        h.get_header("WARC-Block-Digest"), h.get_header("WARC-Payload-Digest")))
    return out


def test_the_records_are_warcios_listing_and_the_manifest_keeps_their_hash(shared):
    for p in WGET.glob("*.warc.gz"):
        want = _warcio_records(p)
        records, _ = list_records(str(p))
        assert [(r.offset, r.length, r.record_id, r.block_digest, r.payload_digest) for r in records] == want
        man = shared.manifest(p.name)
        assert [(r.offset, r.length) for r in man.records] == [w[:2] for w in want]
        lines = json.dumps([list(w) for w in want], sort_keys=True, separators=(",", ":")) + "\n"
        assert man.listing_sha256 == hashlib.sha256(lines.encode()).hexdigest()


def test_the_fast_listing_is_the_readers_on_every_fixture(valid_archives):
    fast = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fx in valid_archives.values():
            got = _list_sl_members(str(fx.path))
            if got is not None:
                fast += 1
                assert got == read_records(str(fx.path))[0], fx.path
    assert fast >= 2   # the Wget crawls at least


def test_arc_records_have_no_record_id(tmp_path, valid_archives):
    arc = next(fx for name, fx in valid_archives.items() if name.endswith(".arc.gz"))
    records, _ = list_records(str(arc.path))
    assert records and all(r.record_id is None and r.block_digest is None and r.payload_digest is None
                           for r in records)
    store = make_store(tmp_path)
    man = put(store, str(arc.path)).manifest
    assert [r.offset for r in man.records] == [o for o, *_ in _warcio_offsets(arc.path)]


def _warcio_offsets(path):
    from warcio.archiveiterator import ArchiveIterator as WarcioIterator
    with open(path, "rb") as fh, contextlib.redirect_stderr(io.StringIO()):
        it = WarcioIterator(fh, arc2warc=True)
        return [(it.get_record_offset(),) for _ in it]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_ranges_equal_the_slice_of_the_original(shared, data):
    p = WGET / "docs-python-3.11-recrawl.warc.gz"
    orig = p.read_bytes()
    start = data.draw(st.one_of(st.integers(0, len(orig) - 1),
                                st.sampled_from([0, 999, 1000, 3999, 4000, 4001, len(orig) - 1])))
    length = data.draw(st.one_of(st.integers(1, 9000), st.sampled_from([1, 1000, 4000, 4001, len(orig)])))
    assert _get(shared, p.name, start, start + length) == orig[start:start + length]


@pytest.mark.parametrize("size", [0, 1, 2, 3, 4, 5, 63, 64, 65, 255, 256, 257, 511, 512, 513, 767, 768, 769, 1000])
def test_sizes_around_stripe_boundaries(tmp_path, size):
    store = make_store(tmp_path, k=4, m=2, fragment_size=64)   # stripes of 256 bytes
    data = os.urandom(size)
    src = tmp_path / "obj.warc"
    src.write_bytes(data)
    man = put_object(store, str(src), "obj.warc", ()).manifest
    assert man.stripe_count == -(-size // 256)
    for c in man.chunks:
        assert os.path.getsize(store.chunk_path(man, c.index)) == chunk_size(size, 4, 64, man.header_size) == c.size
    assert _get(store, "obj.warc") == data
    for a in range(0, size, 37):
        for b in (a + 1, a + 63, a + 64, a + 256, size):
            assert _get(store, "obj.warc", a, b) == data[a:b]


def test_empty_objects_are_stored_but_put_refuses_an_empty_warc(tmp_path):
    store = make_store(tmp_path)
    src = tmp_path / "empty.warc.gz"
    src.write_bytes(b"")
    with pytest.raises(StoreError, match="empty file is no WARC"):
        put(store, str(src))
    man = put_object(store, str(src), "empty.warc.gz", ()).manifest
    assert man.size == 0 and man.stripes == () and _get(store, "empty.warc.gz") == b""
    with StoreFile(store, "empty.warc.gz") as f:
        assert f.read() == b"" and f.pread(10, 0) == b""


def test_put_twice_is_a_no_op_and_other_bytes_under_the_name_are_refused(tmp_path):
    store = make_store(tmp_path)
    p = WGET / "docs-python-3.11-recrawl.warc.gz"
    first = put(store, str(p))
    before = {f: os.path.getmtime(f) for f in _all_files(tmp_path)}
    again = put(store, str(p))
    assert first.stored and not again.stored and again.manifests_written == 0
    assert {f: os.path.getmtime(f) for f in _all_files(tmp_path)} == before
    other = tmp_path / "x" / p.name
    other.parent.mkdir()
    data = p.read_bytes()
    other.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    with pytest.raises(StoreError, match="already stored with other bytes"):
        put(store, str(other))


def test_a_lost_manifest_copy_is_put_back_by_a_rerun(tmp_path):
    store = make_store(tmp_path)
    p = WGET / "docs-python-3.11-recrawl.warc.gz"
    put(store, str(p))
    copies = store.manifest_copies(p.name)
    os.unlink(copies[2][1])
    r = put(store, str(p))
    assert not r.stored and r.manifests_written == 1
    assert Path(copies[2][1]).read_bytes() == Path(copies[0][1]).read_bytes()


def test_leftover_chunks_of_a_killed_put_are_replaced(tmp_path):
    store = make_store(tmp_path, fragment_size=256)
    p = WGET / "docs-python-3.11-recrawl.warc.gz"
    n = 6
    where = placement(p.name, n, 6)
    for i in range(n):   # what a put killed before its manifest leaves: stale chunks and temp files
        d = tmp_path / f"v{where[i]}" / "chunks"
        (d / f"{p.name}.{i}").write_bytes(b"stale")
        (d / f"{p.name}.{i}.0123456789ab.tmp").write_bytes(b"half")
    assert store.names() == []
    put(store, str(p))
    assert _get(store, p.name) == p.read_bytes()
    assert [f for f in _all_files(tmp_path) if f.endswith(".tmp")] == []


def _all_files(root):
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if not f.endswith(".lock"))


def test_put_refuses_open_files_and_non_archives(tmp_path):
    store = make_store(tmp_path)
    op = tmp_path / "a.warc.gz.open"
    op.write_bytes((WGET / "docs-python-3.11-recrawl.warc.gz").read_bytes())
    with pytest.raises(StoreError, match=r"\.open file"):
        put(store, str(op))
    html = tmp_path / "page.warc"
    html.write_bytes(b"<html>not a warc</html>\n")
    with pytest.raises(StoreError, match="not a readable WARC/ARC") as e:
        put(store, str(html))
    assert str(html) in str(e.value)
    with pytest.raises(StoreError, match="no such file"):
        put(store, str(tmp_path / "missing.warc"))
    assert store.names() == []


def test_more_volumes_than_fragments_places_by_name(tmp_path):
    store = make_store(tmp_path, volumes=9, fragment_size=300)
    names = []
    for p in sorted(WGET.glob("*.warc.gz")):
        man = put(store, str(p)).manifest
        assert [c.volume for c in man.chunks] == placement(p.name, 6, 9)
        assert len({c.volume for c in man.chunks}) == 6
        assert _get(store, p.name) == p.read_bytes()
        names.append(p.name)
    assert store.names() == sorted(names)
    assert all(len(store.manifest_copies(n)) == 9 for n in names)



@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(st.tuples(st.sampled_from(["read", "seek", "seek_end", "seek_cur", "readinto", "pread"]),
                              st.integers(-5000, 600000), st.integers(0, 20000)), max_size=12))
def test_storefile_behaves_as_a_file_of_the_same_bytes(shared, ops):
    p = WGET / "docs-python-3.11-recrawl.warc.gz"
    orig = p.read_bytes()
    ref = io.BytesIO(orig)
    with StoreFile(shared, p.name, cache_bytes=8000) as f:
        for op, a, b in ops:
            if op == "read":
                assert f.read(b) == ref.read(b)
            elif op == "seek":
                assert f.seek(abs(a)) == ref.seek(abs(a))
            elif op == "seek_end":
                assert f.seek(-b, os.SEEK_END) == ref.seek(-min(b, len(orig)), os.SEEK_END) or b > len(orig)
            elif op == "seek_cur":
                if ref.tell() + a >= 0:
                    assert f.seek(a, os.SEEK_CUR) == ref.seek(a, os.SEEK_CUR)
            elif op == "readinto":
                b1, b2 = bytearray(b), bytearray(b)
                assert f.readinto(b1) == ref.readinto(b2) and b1 == b2
            else:
                assert f.pread(b, abs(a)) == orig[abs(a):abs(a) + b]
            assert f.tell() == ref.tell()


def test_the_reader_reads_a_stored_file_as_the_plain_one(shared):
    """(The reader takes a file object without a descriptor as a forward stream: payload first.)"""
    p = WGET / "docs-python-3.11.warc.gz"
    with ArchiveIterator(str(p)) as it:
        want = [(r.type, r.target_uri, r.payload.read(), r.offset, r.length) for r in it]
    with StoreFile(shared, p.name) as f, ArchiveIterator(f) as it:
        got = [(r.type, r.target_uri, r.payload.read(), r.offset, r.length) for r in it]
    assert got == want
    rec = shared.manifest(p.name).records[500]
    listed = list_records(str(p))[0][500]
    with StoreFile(shared, p.name) as f:
        f.seek(rec.offset)
        with ArchiveIterator(io.BytesIO(f.read(rec.length))) as it:
            r = next(iter(it))
            assert (r.length, r.record_id, r.block_digest) == (rec.length, listed.record_id, listed.block_digest)


def test_a_store_reopened_reads_the_same(shared):
    again = Store(shared.root)
    assert again.names() == shared.names()
    for n in again.names():
        assert again.manifest(n) == shared.manifest(n)
