"""Loading captures and resolving revisits at load time (warchive.replay.load), every case
with its expected answer written out here: same-URL, URL-agnostic, empty revisits, Wget's
WARC-Refers-To-only revisits (the committed Wget pair), a missing original and the
next-closest fallback, 3xx revisits, the empty-payload digest, a blank filename, a record
segmented over two WARC files, loads through record indexes, and the refusals (unsafe
filenames, bad lines). tests/unit/test_rix.py tests the record index itself;
tests/differential/test_load_vs_pywb.py compares the same collections with pywb.
"""

from __future__ import annotations

import hashlib
import base64
import json
import os
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
for _p in (TESTS, TESTS / "differential"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import cdx_queries  # noqa: E402
import warcgen  # noqa: E402
from test_load_vs_pywb import (BIG_BODY, CHAIN_BODY, CHUNKED_RAW, GZ_BODY, NET, SHARED_BODY,  # noqa: E402
                               build_collections, index_lines, make_collection, write_load_cases)

from warchive.errors import ArchiveError, CaptureNotFound, CorruptRecordError  # noqa: E402
from warchive.index.query import Index  # noqa: E402
from warchive.replay.archives import Archives  # noqa: E402
from warchive.replay.load import (ArchiveFileNotFound, CaptureLineError, CaptureLoader,  # noqa: E402
                                  OriginalNotFound, SegmentNotFound, SelfRedirect, UnsafeFilename, check_filename,
                                  load_capture, load_closest)
from warchive.warc.digest import Digest, is_empty_digest  # noqa: E402
import warchive.warc  # noqa: E402

HTML = warcgen.HTML
EMPTY_PAYLOAD_SHA1 = "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"   # base32 SHA-1 of no bytes (pywb's EMPTY_DIGEST)


@pytest.fixture(scope="module")
def colls(tmp_path_factory):
    return build_collections(tmp_path_factory.mktemp("revcolls"))


_IDS: dict = {}


def line_of(coll: Path, name: str) -> str:
    """The index line of the record warcgen names ``name`` (its WARC-Record-ID)."""
    if coll not in _IDS:
        m = {}
        for ln in index_lines(coll):
            f = json.loads(ln.split(" ", 2)[2])
            with warchive.warc.open(str(coll / "archive" / f["filename"]), offset=int(f["offset"])) as it:
                m[next(iter(it)).record_id] = ln
        _IDS[coll] = m
    return _IDS[coll][warcgen.rid(name)]


def load(coll: Path, name: str, **kw):
    return load_capture(line_of(coll, name), index=str(coll), **kw)


def payload_id(cap) -> str:
    return [r for r in cap.records if "payload" in r.role][0].record_id


# --------------------------------------------------------------------------- plain captures

def test_plain_response(colls):
    with load(colls["gen"], "tl/root-2019") as cap:
        assert cap.status == 200 and cap.status_line == "200 OK" and cap.headers.protocol == "HTTP/1.1"
        assert cap.headers.get("Content-Type") == "text/html; charset=utf-8"
        assert cap.read() == cdx_queries.BODY_A
        assert cap.resolved_by == "self"
        assert [r.role for r in cap.records] == ["headers+payload"]
        assert cap.records[0].filename == "timeline.warc.gz" and cap.cdx["timestamp"] == "20190304050607"


def test_line_forms(colls):
    """A CDXJ line as str or bytes (with its newline), a dict from Index.query, a CDX-11 line."""
    coll = colls["gen"]
    line = line_of(coll, "tl/root-2019")
    for form in (line, (line + "\n").encode(), json.loads(line.split(" ", 2)[2]) | {"urlkey": "com,example)/",
                                                                                   "timestamp": "20190304050607"}):
        with load_capture(form, index=str(coll)) as cap:
            assert cap.read() == cdx_queries.BODY_A
    cdx11 = [ln for ln in index_lines(colls["gen_cdx11"]) if " 20190304050607 " in ln]
    with load_capture(cdx11[0], index=str(colls["gen_cdx11"])) as cap:
        assert cap.read() == cdx_queries.BODY_A


# --------------------------------------------------------------------------- revisits: the kinds

def test_revisit_with_http_head_keeps_its_head_takes_the_original_payload(colls):
    with load(colls["gen"], "rv/http") as cap:
        assert cap.resolved_by == "WARC-Refers-To-Target-URI"
        assert cap.headers.fields == [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(HTML)))]
        assert cap.read() == HTML
        assert [r.role for r in cap.records] == ["headers", "payload"]
        assert payload_id(cap) == warcgen.rid("rv/orig/response")
        assert cap.warc_headers.get("WARC-Type") == "revisit"


def test_empty_revisit_takes_the_original_head(colls):
    with load(colls["gen"], "rv/orig/response") as orig:
        orig_head = (orig.headers.protocol, orig.headers.statusline, orig.headers.fields)
    with load(colls["gen"], "rv/empty") as cap:
        assert (cap.headers.protocol, cap.headers.statusline, cap.headers.fields) == orig_head
        assert cap.read() == HTML and cap.status == 200


def test_url_agnostic_revisits(colls):
    with load(colls["gen"], "rv/agnostic") as cap:           # mirror.example.org -> example.com/page.html
        assert cap.cdx["url"] == "http://mirror.example.org/copy.html"
        assert cap.read() == HTML and payload_id(cap) == warcgen.rid("rv/orig/response")
    with load(colls["gen"], "tl/mirror-rv") as cap:          # mirror.example.com -> example.com/ at 2020-01-01
        assert cap.read() == cdx_queries.BODY_B and payload_id(cap) == warcgen.rid("tl/root-2020a")


def test_same_url_revisit_of_timeline(colls):
    with load(colls["gen"], "tl/root-rv") as cap:
        assert cap.read() == cdx_queries.BODY_B
        assert payload_id(cap) == warcgen.rid("tl/root-2020a")   # the one at WARC-Refers-To-Date, not 00:00:30


def test_revisit_older_than_its_original(colls):
    with load(colls["gen"], "tl/late-rv") as cap:
        assert cap.read() == cdx_queries._html("late") and payload_id(cap) == warcgen.rid("tl/late")


def test_refers_to_only_resolves_by_same_url_digest_join(colls):
    with load(colls["gen"], "rv/wget") as cap:
        assert cap.resolved_by == "same-URL digest join"
        assert cap.read() == HTML


def test_originals_found_whatever_the_index_spells_their_digest(colls, tmp_path):
    """An index that spells digests in hex (as some tools write them) serves the same originals:
    the lookup filters on every spelling of the revisit's digest and compares Digest values."""
    src = colls["gen"]
    coll = tmp_path / "hex"
    (coll / "indexes").mkdir(parents=True)
    os.symlink(src / "archive", coll / "archive")
    lines = []
    for ln in index_lines(src):
        key, ts, data = ln.split(" ", 2)
        f = json.loads(data)
        d = Digest.find(f.get("digest"))
        if d is not None:
            f["digest"] = d.algorithm + ":" + d.hex
        lines.append(f"{key} {ts} {json.dumps(f)}")
    (coll / "indexes" / "index.cdxj").write_text("".join(ln + "\n" for ln in sorted(lines)))
    for name, how in (("rv/wget", "same-URL digest join"), ("tl/root-rv", None)):
        with load(src, name) as want, load_capture(line_of(src, name), index=str(coll)) as got:
            assert got.read() == want.read() and payload_id(got) == payload_id(want)
            assert got.resolved_by == want.resolved_by == (how or want.resolved_by)


def test_refers_to_without_digest_needs_the_record_index(colls):
    with pytest.raises(OriginalNotFound) as ei:
        load(colls["gen"], "rv/nodigest")
    msg = str(ei.value)
    assert warcgen.rid("rv/orig/response") in msg and "write_record_index" in msg and "load_closest" in msg
    assert isinstance(ei.value, CaptureNotFound)
    with load(colls["gen_rix"], "rv/nodigest") as cap:
        assert cap.resolved_by == "WARC-Refers-To record id"
        assert cap.read() == HTML and payload_id(cap) == warcgen.rid("rv/orig/response")


def test_refers_to_date_absent_uses_the_capture_time(colls):
    with load(colls["gen"], "lc/nodate-rv") as cap:
        assert cap.read() == b"nodate\n" and payload_id(cap) == warcgen.rid("lc/nodate-2021")


def test_revisit_without_digest_takes_the_closest_capture_at_the_target(colls):
    with load(colls["gen"], "lc/nodigest-rv") as cap:
        assert cap.read() == b"no digest\n" and payload_id(cap) == warcgen.rid("lc/nodigest")


def test_chain_of_revisits_through_record_ids(colls):
    with pytest.raises(OriginalNotFound):
        load(colls["gen"], "lc/chain-rv2")
    with load(colls["gen_rix"], "lc/chain-rv2") as cap:
        assert cap.read() == CHAIN_BODY and payload_id(cap) == warcgen.rid("lc/chain-orig")
    with load(colls["gen"], "lc/chain-rv1") as cap:           # its WARC-Refers-To names nothing
        assert cap.resolved_by == "same-URL digest join" and cap.read() == CHAIN_BODY


def test_url_agnostic_by_digest_alone(colls):
    with pytest.raises(OriginalNotFound) as ei:
        load(colls["gen"], "lc/agnostic-rv")
    assert "url=http://cdn.example.net/copy.txt" in str(ei.value)
    with load(colls["gen_rix"], "lc/agnostic-rv") as cap:
        assert cap.resolved_by == "digest in the record index"
        assert cap.read() == SHARED_BODY and payload_id(cap) == warcgen.rid("lc/shared")


# --------------------------------------------------------------------------- 3xx and the empty payload

def test_304_revisit_is_served_alone(colls):
    with load(colls["gen"], "rv/304") as cap:
        assert cap.status == 304 and cap.resolved_by == "3xx revisit"
        assert cap.headers.get("Content-Length") == "0" and cap.read() == b""


def test_3xx_revisit_content_length_zero(colls):
    with load(colls["gen"], "lc/moved-rv") as cap:      # no Content-Length in its head: appended
        assert cap.status == 301 and cap.headers.fields == [("Location", NET + "new"), ("Content-Length", "0")]
        assert cap.read() == b"" and [r.role for r in cap.records] == ["headers+payload"]
    with load(colls["gen"], "lc/found-rv") as cap:      # replaced, and the original's body is not served
        assert cap.status == 302 and cap.headers.get("Content-Length") == "0"
        assert cap.headers.get("Location") == "/elsewhere" and cap.read() == b""


def test_empty_payload_digest(colls):
    assert is_empty_digest("sha1:" + EMPTY_PAYLOAD_SHA1) and is_empty_digest(EMPTY_PAYLOAD_SHA1)
    with load(colls["gen"], "lc/empty-rv") as cap:      # its original (elsewhere) is missing: not needed
        assert cap.resolved_by == "empty-payload digest" and cap.status == 200 and cap.read() == b""
        assert cap.headers.get("Content-Length") == "0"
    with load(colls["gen"], "lc/empty-empty-rv") as cap:   # no head of its own: the original's
        assert cap.headers.fields == [("Content-Type", "text/plain"), ("Content-Length", "0")]
        assert cap.read() == b"" and payload_id(cap) == warcgen.rid("lc/empty")
    cdx11 = colls["gen_cdx11"]
    line = [ln for ln in index_lines(cdx11) if " http://example.net/empty " in ln and " 20210601000000 " in ln][0]
    assert EMPTY_PAYLOAD_SHA1 in line and "sha1:" not in line
    with load_capture(line, index=str(cdx11)) as cap:
        assert cap.resolved_by == "empty-payload digest"


# --------------------------------------------------------------------------- bodies

def test_chunked_original_and_its_revisits(colls):
    with load(colls["gen"], "lc/chunked") as cap:
        assert cap.read() == b"hello world" and cap.transfer_decoded
        assert cap.headers.get("Transfer-Encoding") == "chunked"      # headers stay as archived
    with load(colls["gen"], "lc/chunked", dechunk=False) as cap:
        assert cap.read() == CHUNKED_RAW and not cap.transfer_decoded
    with load(colls["gen"], "lc/chunked-rv") as cap:
        assert cap.headers.get("X-Revisit") == "own head" and cap.read() == b"hello world"
    with load(colls["gen"], "lc/chunked-empty-rv") as cap:
        assert cap.headers.get("X-Revisit") is None and cap.read() == b"hello world"


def test_content_encoding(colls):
    with load(colls["gen"], "lc/gz-rv") as cap:
        assert cap.read() == GZ_BODY and not cap.content_decoded
    with load(colls["gen"], "lc/gz-rv", decompress=True) as cap:
        assert cap.read() == b"hello gzip\n" * 20 and cap.content_decoded


def test_payload_stream_reads_in_pieces_and_closes(colls):
    cap = load(colls["gen"], "lc/big")
    got = b""
    while True:
        b = cap.payload.read(1000)
        if not b:
            break
        got += b
    assert got == BIG_BODY
    cap.close()
    cap.close()   # twice is fine


# --------------------------------------------------------------------------- a record split over two files

def test_segmented_record(colls):
    for name in ("gen", "gen_rix"):
        with load(colls[name], "lc/big") as cap:
            assert cap.read() == BIG_BODY
            segs = [r for r in cap.records if r.role == "segment"]
            assert [(r.filename, r.type, r.record_id) for r in segs] == \
                [("loadcases-seg-2.warc.gz", "continuation", warcgen.rid("lc/big/2"))]
            assert hashlib.sha1(BIG_BODY).digest() == base64.b32decode(
                cap.warc_headers.get("WARC-Payload-Digest").split(":")[1])


def test_segment_missing(tmp_path):
    warcs = tmp_path / "w"
    warcs.mkdir()
    seg1 = write_load_cases(warcs)[1]
    coll = make_collection(tmp_path, "c", [seg1])
    (line,) = index_lines(coll)
    with pytest.raises(SegmentNotFound) as ei:
        load_capture(line, index=str(coll))
    assert "segment 2" in str(ei.value) and warcgen.rid("lc/big")[1:-1] in str(ei.value)


# --------------------------------------------------------------------------- orig.* and blank filenames

def test_orig_fields_from_resolve_revisits(colls):
    coll = colls["gen"]
    caps = Index(str(coll)).query("http://example.com/", resolveRevisits="true")
    (rv,) = [c for c in caps if c["timestamp"] == "20200615120000"]
    assert rv["orig.filename"] == "timeline.warc.gz"
    with load_capture(rv, index=str(coll)) as cap:
        assert cap.resolved_by == "orig.* fields" and cap.read() == cdx_queries.BODY_B
    # the 14-field CDX form, without any index for lookups
    c11 = [ln for ln in index_lines(colls["gen_cdx11"]) if ln.startswith("com,example)/ 20200615120000 ")][0]
    line14 = f"{c11} {rv['orig.length']} {rv['orig.offset']} {rv['orig.filename']}"
    with load_capture(line14, archive_paths=[coll / "archive"]) as cap:
        assert cap.resolved_by == "orig.* fields" and cap.read() == cdx_queries.BODY_B


def test_blank_filename(colls):
    coll = colls["gen"]
    rv = json.loads(line_of(coll, "tl/root-rv").split(" ", 2)[2]) | {"urlkey": "com,example)/",
                                                                    "timestamp": "20200615120000"}
    orig = json.loads(line_of(coll, "tl/root-2020a").split(" ", 2)[2])
    blank = dict(rv, filename="-", offset="-", length="-")
    with load_capture(dict(blank, **{"orig.filename": orig["filename"], "orig.offset": orig["offset"],
                                     "orig.length": orig["length"]}), index=str(coll)) as cap:
        # headers and payload from the same record: the original's
        assert cap.resolved_by == "blank-filename, orig.* fields"
        assert [r.role for r in cap.records] == ["payload"] and payload_id(cap) == warcgen.rid("tl/root-2020a")
        assert cap.headers.get("Content-Length") == str(len(cdx_queries.BODY_B))
        assert cap.read() == cdx_queries.BODY_B
    with load_capture(blank, index=str(coll)) as cap:          # no orig.*: the same-URL digest join
        assert cap.resolved_by == "blank-filename, same-URL digest join" and cap.read() == cdx_queries.BODY_B
    with pytest.raises(OriginalNotFound):
        load_capture(dict(blank, digest="-"), index=str(coll))


# --------------------------------------------------------------------------- missing originals, fallback

def test_missing_original_names_what_was_looked_for(colls):
    with pytest.raises(OriginalNotFound) as ei:
        load(colls["gen"], "lc/page-rv")
    e = ei.value
    assert e.what.startswith("revisit of http://example.net/page at 20210601000000 (loadcases.warc.gz:")
    assert "url=http://example.net/page closest to 20200101000000, not a revisit, digest sha1:" in str(e)
    assert "load_closest" in str(e)


def test_load_closest_falls_back_to_the_next_closest(colls):
    with load_closest(NET + "page", "20210601000000", str(colls["gen"])) as cap:
        assert cap.read() == b"old page\n" and cap.cdx["timestamp"] == "20210101000000"
        ((skipped, why),) = cap.skipped
        assert skipped["timestamp"] == "20210601000000" and "original was not found" in why
    with load_closest(NET + "page", "20211201000000", str(colls["gen"])) as cap:
        assert cap.read() == b"new page\n" and cap.skipped == []


def test_self_redirect_is_skipped(colls):
    with load_closest(NET + "loop", "20210601000000", str(colls["gen"])) as cap:
        assert cap.read() == b"loop ok\n"
        assert "redirects to itself" in cap.skipped[0][1]
    line = line_of(colls["gen"], "lc/loop-302")
    with pytest.raises(SelfRedirect):
        load_capture(line, index=str(colls["gen"]), request_url="HTTP://example.net/loop")
    with load_capture(line, index=str(colls["gen"])) as cap:     # not asked for: just the capture
        assert cap.status == 302


def test_no_capture_at_all(colls):
    with pytest.raises(CaptureNotFound):
        load_closest("http://nowhere.invalid/", "2020", str(colls["gen"]), fuzzy=False)


# --------------------------------------------------------------------------- Wget's real pair

def _wget_revisits(coll: Path):
    for ln in index_lines(coll):
        if '"mime": "warc/revisit"' in ln:
            yield ln


def test_wget_revisits_by_same_url_digest_join(colls):
    coll = colls["wget"]
    n = 0
    with CaptureLoader(str(coll)) as loader:
        for ln in _wget_revisits(coll):
            with loader.load(ln) as cap:
                assert cap.resolved_by == "same-URL digest join"
                body = cap.read()
                digest = cap.warc_headers.get("WARC-Payload-Digest")
                assert "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode() == digest
                assert cap.headers.get("Server", "").startswith("SimpleHTTP")      # the revisit's own head
                assert cap.records[1].filename == "docs-python-3.11.warc.gz"
                assert cap.records[1].record_id == cap.warc_headers.get("WARC-Refers-To")
                n += 1
    assert n == 556


def test_wget_revisits_by_record_id(colls):
    coll = colls["wget_rix"]      # indexes: the re-crawl only, and a record index of the first crawl
    n = 0
    with CaptureLoader(str(coll)) as loader:
        for ln in _wget_revisits(coll):
            with loader.load(ln) as cap:
                assert cap.resolved_by == "WARC-Refers-To record id"
                assert payload_id(cap) == cap.warc_headers.get("WARC-Refers-To")
                body = cap.read()
                assert "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode() == \
                    cap.warc_headers.get("WARC-Payload-Digest")
                n += 1
    assert n == 556


def test_wget_revisit_without_its_first_crawl(colls):
    coll = colls["wget_recrawl"]
    ln = next(_wget_revisits(coll))
    with pytest.raises(OriginalNotFound) as ei:
        load_capture(ln, index=str(coll))
    assert "WARC-Refers-To <urn:uuid:" in str(ei.value) and "same-URL digest join" in str(ei.value)
    url = json.loads(ln.split(" ", 2)[2])["url"]
    with pytest.raises(CaptureNotFound) as ei2:      # and there is no other capture to fall back to
        load_closest(url, ln.split(" ")[1], str(coll))
    assert "could be loaded" in str(ei2.value)


# --------------------------------------------------------------------------- refusals

@pytest.mark.parametrize("name", ["../timeline.warc.gz", "a/../../x.warc.gz", "/etc/passwd", "\\\\host\\x",
                                  "C:\\x.warc", "http://example.com/x.warc.gz", "", "a\0b"])
def test_unsafe_filenames(colls, name):
    with pytest.raises(UnsafeFilename):
        check_filename(name)
    with pytest.raises(ArchiveError):
        load_capture({"url": "http://example.com/", "timestamp": "2020", "filename": name, "offset": "0"},
                     index=str(colls["gen"]))


def test_missing_file_and_no_archive_dirs(colls):
    with pytest.raises(ArchiveFileNotFound) as ei:
        load_capture({"filename": "nope.warc.gz", "offset": "0"}, index=str(colls["gen"]))
    assert "nope.warc.gz" in str(ei.value)
    line = line_of(colls["gen"], "tl/root-2019")
    with pytest.raises(ArchiveFileNotFound) as ei:
        load_capture(line)
    assert "archive_paths" in str(ei.value)
    # archive_paths alone serves plain captures; a revisit then has nothing to look it up in
    with load_capture(line, archive_paths=[colls["gen"] / "archive"]) as cap:
        assert cap.read() == cdx_queries.BODY_A
    with pytest.raises(OriginalNotFound) as ei:
        load_capture(line_of(colls["gen"], "tl/root-rv"), archive_paths=[colls["gen"] / "archive"])
    assert "no index to look it up in" in str(ei.value)


def test_bad_lines_and_offsets(colls):
    coll = colls["gen"]
    f = json.loads(line_of(coll, "tl/root-2019").split(" ", 2)[2])
    for bad in ("", "a b c d", {"filename": f["filename"], "offset": "x"}, {"filename": f["filename"]},
                {"filename": f["filename"], "offset": "-5"}):
        with pytest.raises(CaptureLineError):
            load_capture(bad, index=str(coll))
    with pytest.raises(CorruptRecordError):
        load_capture(dict(f, offset=str(int(f["offset"]) + 7)), index=str(coll))
    with pytest.raises(CorruptRecordError):
        load_capture(dict(f, offset=str(os.path.getsize(coll / "archive" / f["filename"]))), index=str(coll))


def test_digests_compare_as_the_loader_compares_them():
    """Revisit and original digests are compared as warchive.warc.digest.Digest values (this was
    the loader's own normalize_digest): a bare value is SHA-1, label and value in any case."""
    value = "BSM63ZMQ6GJNINDTSJ5NV4WMEWACK3LQ"
    assert Digest.parse(value).label == "sha1:" + value
    assert Digest.parse("SHA1:" + value.lower()) == Digest.parse("sha1:" + value)
    assert Digest.parse("SHA1:" + value.lower()).label == "sha1:" + value
    hex256 = hashlib.sha256(b"ab").hexdigest()
    assert Digest.parse("sha256:" + hex256) == Digest.parse("SHA256:" + hex256.upper())
    assert Digest.find("-") is None and Digest.find(None) is None and Digest.find("") is None
    assert is_empty_digest("sha256:" + base64.b32encode(hashlib.sha256(b"").digest()).decode())
    assert is_empty_digest("sha1:" + hashlib.sha1(b"").hexdigest())
    assert not is_empty_digest("sha1:BSM63ZMQ6GJNINDTSJ5NV4WMEWACK3LQ")


def test_loader_keeps_an_index_open(colls):
    """One CaptureLoader for many loads; an Index object works as well as a path."""
    coll = colls["gen"]
    with Index(str(coll)) as idx:
        with CaptureLoader(idx) as loader:
            assert loader.archives.dirs == [str(coll / "archive")]
            for name in ("rv/http", "rv/empty", "tl/root-rv"):
                with loader.load(line_of(coll, name)) as cap:
                    assert cap.read()


def test_a_file_still_being_written_is_read_under_its_final_name(colls, tmp_path):
    """While a crawl runs its writer keeps NAME.open (renamed NAME when closed); the index already
    names NAME: the capture loads from NAME.open, and from NAME once it is closed."""
    line = line_of(colls["gen"], "tl/root-2019")
    f = json.loads(line.split(" ", 2)[2])
    archive = tmp_path / "archive"
    archive.mkdir()
    data = (colls["gen"] / "archive" / f["filename"]).read_bytes()
    (archive / (f["filename"] + ".open")).write_bytes(data)
    with load_capture(line, archive_paths=[archive]) as cap:
        assert cap.read() == cdx_queries.BODY_A
        assert cap.records[0].path.endswith(".open")
    os.rename(archive / (f["filename"] + ".open"), archive / f["filename"])
    with load_capture(line, archive_paths=[archive]) as cap:
        assert cap.read() == cdx_queries.BODY_A and not cap.records[0].path.endswith(".open")
    os.remove(archive / f["filename"])
    with pytest.raises(ArchiveFileNotFound):
        load_capture(line, archive_paths=[archive])


def test_a_file_closed_between_looking_and_opening_is_opened_closed(colls, tmp_path, monkeypatch):
    """The writer renames NAME.open to NAME after Archives.path saw NAME.open: the open looks again."""
    line = line_of(colls["gen"], "tl/root-2019")
    f = json.loads(line.split(" ", 2)[2])
    archive = tmp_path / "archive"
    archive.mkdir()
    (archive / f["filename"]).write_bytes((colls["gen"] / "archive" / f["filename"]).read_bytes())
    real = Archives.path
    looks = []

    def path(self, filename):
        looks.append(filename)
        return str(archive / (filename + ".open")) if len(looks) == 1 else real(self, filename)
    monkeypatch.setattr(Archives, "path", path)
    with load_capture(line, archive_paths=[archive]) as cap:
        assert cap.read() == cdx_queries.BODY_A
    assert len(looks) == 2
