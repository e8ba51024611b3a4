"""Writer-side dedup (warchive.capture.dedup) and its digest index (warchive.capture.digest_index).

Expected values are worked out here from first principles: digests with hashlib and
base64, profile URIs from the WARC 1.1 specification's text, the originals of a crawl from
the records warcio 1.8.1 wrote (and read back). A hypothesis state machine checks that the
index answers like a dict (earliest capture wins) across flushes and reopens, and every
single-byte corruption of a generation file is refused as an IndexFormatError naming it.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from warchive.capture.dedup import (DEFAULT_MIN_SIZE, Deduplicator, PreviousCapture, conditional_headers,
                                    profile_uri, rebuild_index, revisit_headers, seed, seed_from_cdx,
                                    seed_from_warcs)
from warchive.capture.digest_index import DigestError, DigestIndex, Original, date_micros, digest_key
from warchive.errors import ArchiveError, IndexFormatError

WGET = Path(__file__).resolve().parents[1] / "data" / "wget"


def b32(algo: str, data: bytes) -> str:
    return algo + ":" + base64.b32encode(hashlib.new(algo, data).digest()).decode()


def sha1(data: bytes) -> str:
    return b32("sha1", data)


# --------------------------------------------------------------------------- digests

def test_digest_spellings_give_one_key():
    raw = hashlib.sha1(b"payload").digest()
    want = b"\x01" + raw
    assert digest_key("sha1:" + base64.b32encode(raw).decode()) == want
    assert digest_key("SHA1:" + base64.b32encode(raw).decode().lower()) == want
    assert digest_key("sha1:" + raw.hex()) == want
    assert digest_key(base64.b32encode(raw).decode()) == want          # CDX: no label means sha1
    raw256 = hashlib.sha256(b"payload").digest()
    assert digest_key("sha256:" + base64.b32encode(raw256).decode()) == b"\x02" + raw256
    assert digest_key("sha256:" + base64.b32encode(raw256).decode().rstrip("=")) == b"\x02" + raw256
    assert digest_key("blake3:" + raw256.hex()) == b"\x03" + raw256     # any 32 bytes: we store, not hash


@pytest.mark.parametrize("bad", ["md5:XXXX", "sha1:", "sha1:ABC", "sha1:" + "0" * 39, "sha256:" + "A" * 32,
                                 "sha1:" + "1" * 32, "-"])
def test_bad_digests_are_digest_errors(bad):
    with pytest.raises(DigestError) as e:
        digest_key(bad)
    assert isinstance(e.value, ArchiveError) and isinstance(e.value, ValueError)


def test_date_order():
    assert date_micros("2021-01-01T00:00:00Z") < date_micros("2021-01-01T00:00:00.5Z")
    assert date_micros("20210101000000") == date_micros("2021-01-01T00:00:00Z")
    assert date_micros("2021-01-01T00:00:01Z") - date_micros("2021-01-01T00:00:00.000001Z") == 999_999
    assert date_micros("garbage") > date_micros("2999-12-31T23:59:59Z")


# --------------------------------------------------------------------------- policies

P = b"<html>" + b"x" * 1000 + b"</html>"
D = sha1(P)
ORIG = ("http://example.com/a", "2020-05-01T10:00:00Z", "<urn:uuid:11111111-1111-1111-1111-111111111111>")


@pytest.fixture
def index(tmp_path):
    ix = DigestIndex(tmp_path / "ix")
    ix.add(D, *ORIG)
    yield ix
    ix.close()


@pytest.mark.parametrize("policy", ["revisit", "skip"])
def test_duplicate_under_another_url(index, policy):
    d = Deduplicator(index, policy).decide("http://example.org/b", D, len(P), "text/html", 200)
    assert (d.action, d.reason) == (policy, "duplicate")
    assert d.original == Original(D, *ORIG)
    assert d.written == (policy == "revisit")


def test_write_policy_never_dedups(index):
    d = Deduplicator(index, "write").decide("http://example.org/b", D, len(P), "text/html", 200)
    assert (d.action, d.reason, d.original) == ("write", "policy-write", None)
    assert d.annotation == ""


def test_new_payload_is_written_then_becomes_original(index):
    dd = Deduplicator(index, "revisit", min_size=0)
    other = b"other payload"
    first = dd.decide("http://example.org/c", sha1(other), len(other))
    assert (first.action, first.reason) == ("write", "new-payload")
    kept = dd.written("http://example.org/c", sha1(other), "2021-01-01T00:00:00Z", "urn:uuid:c")
    assert kept == Original(sha1(other), "http://example.org/c", "2021-01-01T00:00:00Z", "<urn:uuid:c>")
    again = dd.decide("http://example.org/d", sha1(other), len(other))
    assert (again.action, again.original) == ("revisit", kept)


@pytest.mark.parametrize("status", [301, 302, 304, 404, 500])
def test_only_2xx_is_deduplicated(index, status):
    d = Deduplicator(index, "skip").decide("http://example.org/b", D, len(P), "text/html", status)
    assert (d.action, d.reason) == ("write", "status")
    assert Deduplicator(index).written("http://example.org/b", sha1(b"zz"), "2021-01-01T00:00:00Z", None,
                                       status=status) is None


def test_empty_payload_is_written(index):
    empty = sha1(b"")
    index.add(empty, "http://example.com/empty", "2020-01-01T00:00:00Z")   # even if someone indexed it
    d = Deduplicator(index, "skip", min_size=0).decide("http://example.org/e", empty, 0)
    assert (d.action, d.reason) == ("write", "empty-payload")


def test_minimum_size(index):
    dd = Deduplicator(index, "revisit", min_size=len(P) + 1)
    assert dd.decide("u", D, len(P), "text/html").reason == "below-min-size"
    assert Deduplicator(index, "revisit", min_size=len(P)).decide("u", D, len(P)).action == "revisit"
    assert Deduplicator(index).min_size_for(None) == DEFAULT_MIN_SIZE == 256


def test_minimum_size_per_mime(index):
    dd = Deduplicator(index, "revisit", min_size=0,
                      min_size_by_mime={"text/*": 10_000, "text/css": 5, "image/": 50_000})
    assert dd.min_size_for("text/html; charset=utf-8") == 10_000
    assert dd.min_size_for("TEXT/CSS") == 5
    assert dd.min_size_for("image/png") == 50_000
    assert dd.min_size_for("application/pdf") == 0
    assert dd.decide("u", D, len(P), "text/html").reason == "below-min-size"
    assert dd.decide("u", D, len(P), "text/css").action == "revisit"
    assert dd.decide("u", D, len(P), "application/octet-stream").action == "revisit"


def test_no_index_and_bad_digest(index):
    assert Deduplicator(None).decide("u", D, len(P)).reason == "policy-write"
    d = Deduplicator(index).decide("u", "md5:abcd", len(P))
    assert (d.action, d.reason) == ("write", "bad-digest")
    with pytest.raises(ValueError):
        Deduplicator(index, "drop")
    with pytest.raises(ValueError):
        Deduplicator(index, min_size=-1)


# --------------------------------------------------------------------------- what a revisit and a skip carry

def test_profile_uris_are_the_specifications():
    assert profile_uri("identical-payload-digest", "1.1") == \
        "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
    assert profile_uri("identical-payload-digest", "WARC/1.0") == \
        "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest"
    assert profile_uri("server-not-modified", "1.0") == "http://netpreserve.org/warc/1.0/revisit/server-not-modified"
    with pytest.raises(ValueError):
        profile_uri("identical-payload-digest", "0.9")


def test_revisit_headers(index):
    d = Deduplicator(index).decide("http://example.org/b", D, len(P))
    assert d.revisit_headers("1.0") == [
        ("WARC-Profile", "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest"),
        ("WARC-Refers-To", ORIG[2]),
        ("WARC-Refers-To-Target-URI", ORIG[0]),
        ("WARC-Refers-To-Date", ORIG[1]),
    ]
    no_id = Original(D, "http://x/", "2020-01-01T00:00:00Z", None)
    assert [k for k, _ in revisit_headers(no_id)] == ["WARC-Profile", "WARC-Refers-To-Target-URI",
                                                      "WARC-Refers-To-Date"]
    with pytest.raises(ValueError):
        Deduplicator(index).decide("u", sha1(b"new" * 200), 600).revisit_headers()


def test_skip_is_recordable(index):
    d = Deduplicator(index, "skip").decide("http://example.org/b", D, len(P))
    f = d.skipped_fields()
    assert f["url"] == "http://example.org/b" and f["digest"] == D
    assert (f["original_uri"], f["original_date"], f["original_record_id"]) == ORIG
    assert f["reason"] == "duplicate"
    assert set(f) == {"url", "reason", "digest", "original_uri", "original_date", "original_record_id"}
    assert d.annotation == "duplicate:skipped"
    assert Deduplicator(index).decide("http://example.org/b", D, len(P)).annotation == "duplicate:digest"


# --------------------------------------------------------------------------- conditional requests and 304

PREV = {"url": "http://example.com/a", "warc_date": "2020-05-01T10:00:00Z", "record_id": "<urn:uuid:p>",
        "payload_digest": D, "ETag": 'W/"abc"', "Last-Modified": "Tue, 15 Nov 1994 12:45:26 GMT"}


def test_conditional_headers():
    prev = PreviousCapture.from_entry(PREV)
    assert conditional_headers(prev) == [("If-None-Match", 'W/"abc"'),
                                         ("If-Modified-Since", "Tue, 15 Nov 1994 12:45:26 GMT")]
    assert conditional_headers(PreviousCapture("u", last_modified="yesterday")) == []
    assert conditional_headers(PreviousCapture("u", etag='"a b\r\nX: y"')) == []   # no header injection
    assert conditional_headers(None) == []


@pytest.mark.parametrize("policy", ["revisit", "skip", "write"])
def test_304_becomes_server_not_modified(index, policy):
    prev = PreviousCapture.from_entry(PREV)
    dd = Deduplicator(index, policy)
    d = dd.not_modified("http://example.com/a", 304, prev)
    assert d is not None
    if policy == "write":
        assert d.action == "write"
        return
    assert (d.action, d.reason, d.profile) == (policy, "not-modified", "server-not-modified")
    hs = dict(d.revisit_headers("1.1"))
    assert hs["WARC-Profile"] == "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
    assert hs["WARC-Refers-To"] == "<urn:uuid:p>"
    assert hs["WARC-Refers-To-Date"] == "2020-05-01T10:00:00Z"
    assert hs["WARC-Refers-To-Target-URI"] == "http://example.com/a"
    assert dd.not_modified("http://example.com/a", 200, prev) is None
    assert dd.not_modified("http://example.com/a", 304, None) is None
    assert dd.not_modified("http://example.com/a", 304, prev, conditional=False) is None


# --------------------------------------------------------------------------- persistence

def test_persists_across_reopen_and_only_when_flushed(tmp_path):
    p = tmp_path / "ix"
    with DigestIndex(p) as ix:
        ix.add(D, *ORIG)
    ix = DigestIndex(p)
    assert ix.get(D) == Original(D, *ORIG)
    ix.add(sha1(b"unflushed"), "http://x/", "2021-01-01T00:00:00Z")
    ix.close()                                   # no flush: lost, as documented
    with DigestIndex(p) as ix:
        assert ix.get(sha1(b"unflushed")) is None and len(ix) == 1
    files = sorted(os.listdir(p))
    assert files == ["digests.00000001.wdx", "lock"]


def test_earliest_capture_wins_across_generations(tmp_path):
    p = tmp_path / "ix"
    with DigestIndex(p) as ix:
        ix.add(D, "http://mid/", "2020-06-01T00:00:00Z")
    with DigestIndex(p) as ix:
        assert ix.add(D, "http://late/", "2021-01-01T00:00:00Z").uri == "http://mid/"
        assert ix.add(D, "http://early/", "20190101000000").uri == "http://early/"
        assert ix.get(D).date == "2019-01-01T00:00:00Z"        # the timestamp as a WARC date
    with DigestIndex(p) as ix:
        assert ix.get(D).uri == "http://early/" and len(ix) == 1
        assert ix.stats().generation == 2          # two flushes wrote something


def test_two_writers_merge(tmp_path):
    p = tmp_path / "ix"
    a, b = DigestIndex(p), DigestIndex(p)
    a.add(sha1(b"a"), "http://a/", "2021-01-01T00:00:00Z")
    b.add(sha1(b"b"), "http://b/", "2021-01-01T00:00:00Z")
    a.flush()
    b.flush()                                   # merges into a's generation, loses nothing
    a.close()
    b.close()
    with DigestIndex(p) as ix:
        assert ix.get(sha1(b"a")).uri == "http://a/" and ix.get(sha1(b"b")).uri == "http://b/"


def test_rebuild_replaces(tmp_path):
    p = tmp_path / "ix"
    with DigestIndex(p) as ix:
        ix.add(sha1(b"old"), "http://old/", "2021-01-01T00:00:00Z")
    path, stats = rebuild_index(p, [])
    assert stats.read == 0 and os.path.basename(path) == "digests.00000002.wdx"
    with DigestIndex(p) as ix:
        assert len(ix) == 0 and ix.get(sha1(b"old")) is None


def test_closed_index_refuses(tmp_path):
    ix = DigestIndex(tmp_path / "ix")
    ix.close()
    with pytest.raises(ValueError):
        ix.get(D)


# --------------------------------------------------------------------------- like a dict (hypothesis)

DIGESTS = st.one_of(st.tuples(st.just("sha1"), st.binary(min_size=20, max_size=20)),
                    st.tuples(st.sampled_from(["sha256", "blake3"]), st.binary(min_size=32, max_size=32)))
# few distinct prefixes, so prefix collisions across digests and algorithms happen
COLLIDING = st.tuples(st.sampled_from(["sha1", "sha256"]), st.sampled_from([b"\0" * 8, b"\xff" * 8, b"01234567"]),
                      st.binary(min_size=24, max_size=24)).map(
    lambda t: (t[0], t[1] + t[2][:12 if t[0] == "sha1" else 24]))
LABEL = lambda t: t[0] + ":" + base64.b32encode(t[1]).decode()  # noqa: E731


class IndexLikeDict(RuleBasedStateMachine):
    """The model: digest -> (uri, date) of the earliest capture added (ties: the first)."""

    @initialize()
    def setup(self):
        import tempfile
        self.dir = tempfile.mkdtemp(prefix="dedup-hyp-")
        self.ix = DigestIndex(self.dir)
        self.model: Dict[bytes, Tuple[int, str, str]] = {}
        self.known: List[Tuple[str, bytes]] = []

    @rule(d=st.one_of(DIGESTS, COLLIDING), uri=st.text("abc/é", min_size=1, max_size=8),
          day=st.integers(1, 28), old=st.booleans())
    def add(self, d, uri, day, old):
        if old and self.known:                       # a known digest, maybe earlier, maybe later
            d = self.known[day % len(self.known)]
        date = f"2020-02-{day:02d}T00:00:00Z"
        key = digest_key(LABEL(d))
        self.ix.add(LABEL(d), "http://" + uri, date)
        cur = self.model.get(key)
        if cur is None or day < cur[0]:
            self.model[key] = (day, "http://" + uri, date)
        self.known.append(d)

    @rule()
    def flush(self):
        self.ix.flush()

    @rule()
    def reopen(self):
        self.ix.close(flush=True)
        self.ix = DigestIndex(self.dir)

    @rule(d=DIGESTS)
    def miss(self, d):
        if digest_key(LABEL(d)) not in self.model:
            assert self.ix.get(LABEL(d)) is None

    @invariant()
    def answers_like_the_model(self):
        if not hasattr(self, "ix"):
            return
        for key, (_, uri, date) in self.model.items():
            o = self.ix.get_key(key)
            assert o is not None and (o.uri, o.date) == (uri, date)
        assert len(self.ix) == len(self.model)

    def teardown(self):
        if hasattr(self, "ix"):
            self.ix.close()
            import shutil
            shutil.rmtree(self.dir, ignore_errors=True)


TestIndexLikeDict = IndexLikeDict.TestCase
TestIndexLikeDict.settings = settings(max_examples=60, stateful_step_count=30, deadline=None,
                                      suppress_health_check=[HealthCheck.too_slow])


@settings(max_examples=20, deadline=None)
@given(st.lists(DIGESTS, min_size=1, max_size=300, unique=True), st.lists(DIGESTS, max_size=50))
def test_bulk_then_lookup(tmp_path_factory, present, probes):
    p = tmp_path_factory.mktemp("bulk")
    with DigestIndex(p) as ix:
        for i, d in enumerate(present):
            ix.add(LABEL(d), f"http://e/{i}", "2020-01-01T00:00:00Z", f"urn:uuid:{i}")
    ix = DigestIndex(p)
    try:
        want = {digest_key(LABEL(d)): i for i, d in enumerate(present)}
        for d in present + probes:
            o = ix.get(LABEL(d))
            i = want.get(digest_key(LABEL(d)))
            assert (o is None) == (i is None)
            if o is not None:
                assert (o.uri, o.record_id) == (f"http://e/{i}", f"<urn:uuid:{i}>")
        assert sorted(digest_key(o.digest) for o in ix.items()) == sorted(want)
    finally:
        ix.close()


# --------------------------------------------------------------------------- damaged files

@pytest.fixture
def small_index(tmp_path) -> Path:
    p = tmp_path / "ix"
    with DigestIndex(p) as ix:
        for i in range(40):
            algo = "sha256" if i % 3 == 0 else "sha1"
            ix.add(b32(algo, b"%d" % i), f"http://example.com/{i}", "2020-01-01T00:00:00Z", f"urn:uuid:{i}")
    (f,) = p.glob("digests.*.wdx")
    return f


def _assert_refused(path: Path, match: str = ""):
    with pytest.raises(IndexFormatError) as e:
        DigestIndex(path.parent).close()
    assert str(path) in str(e.value)
    assert match in str(e.value)
    assert isinstance(e.value, ArchiveError)


def test_every_flipped_byte_is_refused(small_index):
    data = small_index.read_bytes()
    rng = random.Random(4)
    positions = sorted(set(list(range(0, 128)) + rng.sample(range(128, len(data)), 150) + [len(data) - 1]))
    for pos in positions:
        bad = bytearray(data)
        bad[pos] ^= 1 << rng.randrange(8)
        small_index.write_bytes(bytes(bad))
        _assert_refused(small_index)
    small_index.write_bytes(data)
    DigestIndex(small_index.parent).close()


@pytest.mark.parametrize("how", ["truncate", "append", "empty", "text", "newer"])
def test_damaged_files_are_refused(small_index, how):
    data = small_index.read_bytes()
    bad = {"truncate": data[:-7], "append": data + b"\0" * 8, "empty": b"",
           "text": b"sha1:ABC http://x/\n" * 10, "newer": data[:8] + b"\x02" + data[9:]}[how]
    if how == "newer":       # a version we do not know, header CRC fixed so the version is what is wrong
        import struct
        import zlib
        bad = bad[:124] + struct.pack("<I", zlib.crc32(bad[:124])) + bad[128:]
    small_index.write_bytes(bad)
    _assert_refused(small_index, {"newer": "version 2", "text": "not a dedup digest index"}.get(how, ""))


def test_unverified_open_still_checks_the_header(small_index):
    data = bytearray(small_index.read_bytes())
    data[-1] ^= 0xFF                        # heap damage: only the full check sees it
    small_index.write_bytes(bytes(data))
    DigestIndex(small_index.parent, verify=False).close()
    _assert_refused(small_index, "heap")


# --------------------------------------------------------------------------- seeding

def _warcio_crawl(path: Path) -> List[dict]:
    """A crawl written by warcio 1.8.1: originals, a same-payload copy, a 404, an empty body, a
    redirect, a revisit, and a request. Returns what was written (as warcio reads it back)."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    def resp(w, url, status, body, date):
        http = StatusAndHeaders(status, [("Content-Type", "text/html"), ("Content-Length", str(len(body)))],
                                protocol="HTTP/1.1")
        return w.create_warc_record(url, "response", payload=io.BytesIO(body), length=len(body),
                                    http_headers=http, warc_headers_dict={"WARC-Date": date})

    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=True)
        w.write_record(resp(w, "http://a.example/1", "200 OK", b"one" * 100, "2021-01-01T00:00:01Z"))
        w.write_record(resp(w, "http://a.example/2", "200 OK", b"two" * 100, "2021-01-01T00:00:02Z"))
        w.write_record(resp(w, "http://a.example/copy", "200 OK", b"one" * 100, "2021-01-01T00:00:03Z"))
        w.write_record(resp(w, "http://a.example/404", "404 Not Found", b"nope" * 100, "2021-01-01T00:00:04Z"))
        w.write_record(resp(w, "http://a.example/empty", "200 OK", b"", "2021-01-01T00:00:05Z"))
        w.write_record(resp(w, "http://a.example/moved", "301 Moved", b"moved" * 50, "2021-01-01T00:00:06Z"))
        w.write_record(w.create_revisit_record("http://a.example/rv", sha1(b"two" * 100), "http://a.example/2",
                                               "2021-01-01T00:00:02Z"))
        w.write_record(w.create_warc_record("http://a.example/1", "request", payload=io.BytesIO(b"GET / HTTP/1.1\r\n\r\n")))
    from warcio.archiveiterator import ArchiveIterator
    out = []
    with open(path, "rb") as f:
        for rec in ArchiveIterator(f):
            if rec.rec_type == "response":
                out.append({"url": rec.rec_headers.get_header("WARC-Target-URI"),
                            "date": rec.rec_headers.get_header("WARC-Date"),
                            "id": rec.rec_headers.get_header("WARC-Record-ID"),
                            "body": rec.content_stream().read()})
    return out


def _expected_originals(written: List[dict], ids: bool) -> Dict[str, Tuple[str, Optional[str]]]:
    """By hand: 2xx, non-empty bodies; the earliest capture of each payload."""
    want: Dict[str, Tuple[str, Optional[str]]] = {}
    for r in written:
        if r["body"] and not r["url"].endswith(("/404", "/moved")):
            want.setdefault(sha1(r["body"]), (r["url"], r["id"] if ids else None))
    return want


def _index_contents(ix: DigestIndex) -> Dict[str, Tuple[str, Optional[str]]]:
    return {o.digest: (o.uri, o.record_id) for o in ix.items()}


def test_seed_from_warcio_warc(tmp_path):
    warc = tmp_path / "crawl.warc.gz"
    written = _warcio_crawl(warc)
    with DigestIndex(tmp_path / "ix") as ix:
        stats = seed_from_warcs(ix, [tmp_path])            # a directory is walked
        assert _index_contents(ix) == _expected_originals(written, ids=True)
        assert len(ix) == 2
        assert stats.added == 2 and stats.known == 1
        assert stats.ignored == {"status not 2xx": 2, "no or empty payload digest": 1}
        dates = {o.uri: o.date for o in ix.items()}
        assert dates["http://a.example/1"] == "2021-01-01T00:00:01Z"


def test_seed_from_cdxj_of_warcio_warc(tmp_path):
    from cdxj_indexer.main import CDXJIndexer

    warc = tmp_path / "crawl.warc.gz"
    written = _warcio_crawl(warc)
    cdxj = tmp_path / "crawl.cdxj"
    CDXJIndexer(output=str(cdxj), inputs=[str(warc)]).process_all()
    lines = cdxj.read_text().splitlines()
    assert any('"mime": "warc/revisit"' in ln for ln in lines)      # the revisit is there, and ignored
    with DigestIndex(tmp_path / "ix") as ix:
        stats = seed_from_cdx(ix, [cdxj])
        assert _index_contents(ix) == _expected_originals(written, ids=False)
        assert stats.ignored["revisit"] == 1
        assert ix.get(sha1(b"one" * 100)).date == "2021-01-01T00:00:01Z"


def test_seed_from_wget_cdx_keeps_record_ids(tmp_path):
    cdx = WGET / "docs-python-3.11.cdx"
    want = {}
    for line in cdx.read_text().splitlines()[1:]:          # " CDX a b a m s k r M V g u"
        a, b, _a, m, s, k, *_rest, u = line.split(" ")
        if s.startswith("2"):
            want.setdefault("sha1:" + k, (a, u))
    with DigestIndex(tmp_path / "ix") as ix:
        seed(ix, [cdx])
        assert _index_contents(ix) == want


def test_seed_from_the_wget_pair_gives_the_same_originals(tmp_path):
    first = WGET / "docs-python-3.11.warc.gz"
    recrawl = WGET / "docs-python-3.11-recrawl.warc.gz"
    with DigestIndex(tmp_path / "a") as a, DigestIndex(tmp_path / "b") as b:
        seed(a, [first, recrawl])                          # the recrawl's revisits add nothing
        seed(b, [WGET / "docs-python-3.11.cdx"])
        assert {k: v[0] for k, v in _index_contents(a).items()} == {k: v[0] for k, v in _index_contents(b).items()}
        assert len(a) > 500


def test_seed_bad_cdx_line(tmp_path):
    bad = tmp_path / "bad.cdxj"
    bad.write_text('com,example)/ 20200101000000 {"url": "http://example.com/", "status": "200"\n')
    with DigestIndex(tmp_path / "ix") as ix:
        with pytest.raises(IndexFormatError) as e:
            seed_from_cdx(ix, [bad])
        assert str(bad) in str(e.value) and "line 1" in str(e.value)
        assert seed_from_cdx(ix, [bad], skip_errors=True).ignored == {"unreadable line": 1}


# --------------------------------------------------------------------------- the command

def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "warchive", *args], capture_output=True, text=True, timeout=120)


def test_cli_build_add_lookup_stats(tmp_path):
    warc = tmp_path / "crawl.warc.gz"
    written = _warcio_crawl(warc)
    ix = str(tmp_path / "ix")
    r = _cli("dedup-index", "build", ix, str(warc))
    assert r.returncode == 0, r.stderr
    assert "2 added" in r.stderr
    one = sha1(b"one" * 100)
    r = _cli("dedup-index", "lookup", ix, one)
    assert r.returncode == 0
    got = json.loads(r.stdout)
    assert got["original"]["uri"] == "http://a.example/1"
    assert got["original"]["record_id"] == written[0]["id"]
    r = _cli("dedup-index", "lookup", ix, one, sha1(b"absent"))
    assert r.returncode == 1 and json.loads(r.stdout.splitlines()[1])["original"] is None
    extra = tmp_path / "more.cdxj"
    extra.write_text('com,example)/x 20220101000000 {"url": "http://example.com/x", "mime": "text/html", '
                     f'"status": "200", "digest": "{sha1(b"x" * 300)}", "length": "1", "offset": "0", '
                     '"filename": "x.warc.gz"}\n')
    r = _cli("dedup-index", "add", ix, str(extra))
    assert r.returncode == 0 and "1 added" in r.stderr
    r = _cli("dedup-index", "stats", ix, "--verify")
    assert r.returncode == 0 and "entries 3" in r.stdout and "generation 2" in r.stdout
    (f,) = Path(ix).glob("digests.*.wdx")
    data = bytearray(f.read_bytes())
    data[-3] ^= 0x10
    f.write_bytes(bytes(data))
    r = _cli("dedup-index", "stats", ix, "--verify")
    assert r.returncode == 1 and str(f) in r.stderr
    r = _cli("dedup-index", "lookup", str(tmp_path / "nowhere"), one)
    assert r.returncode != 0


# --------------------------------------------------------------------------- killed writers

_KILL_CHILD = r"""
import sys, base64, hashlib
from warchive.capture.digest_index import DigestIndex
ix = DigestIndex(sys.argv[1])
batch = 0
while True:
    for i in range(batch * 500, (batch + 1) * 500):
        ix.add("sha1:" + base64.b32encode(hashlib.sha1(b"%d" % i).digest()).decode(), "http://k/%d" % i,
               "2022-01-01T00:00:00Z", "urn:uuid:%d" % i)
    ix.flush()
    print(batch, flush=True)
    batch += 1
"""


def test_sigkill_while_flushing_leaves_a_whole_generation(tmp_path):
    """A writer killed at random points: the index opens (every check on), holds whole
    batches only (each flushed batch entirely or not at all), and a later flush clears the
    dead writer's temporary file."""
    import signal
    import time

    p = tmp_path / "ix"
    rng = random.Random(11)
    for _round in range(8):
        child = subprocess.Popen([sys.executable, "-c", _KILL_CHILD, str(p)], stdout=subprocess.PIPE)
        assert child.stdout is not None
        child.stdout.readline()                     # at least one flush done
        time.sleep(rng.uniform(0, 0.4))
        child.send_signal(signal.SIGKILL)
        child.wait()
        with DigestIndex(p) as ix:
            n = len(ix)
            assert n % 500 == 0 and n >= 500
            for i in (0, n - 1):
                o = ix.get(sha1(b"%d" % i))
                assert o is not None and o.uri == f"http://k/{i}"
            assert ix.get(sha1(b"%d" % n)) is None
    with DigestIndex(p) as ix:
        ix.add(sha1(b"last"), "http://last/", "2023-01-01T00:00:00Z")
    assert [f for f in os.listdir(p) if ".tmp" in f] == []
