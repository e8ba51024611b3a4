"""The Python API as docs/api.md presents it to a developer embedding warchive: one import per
job, single paths taken as paths, the decoded payload on the record, collections made and grown
from Python. Expected payloads are warcio's content_stream()."""

from __future__ import annotations

import gzip
import io
import pathlib
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from warcio.archiveiterator import ArchiveIterator as WarcioIterator

import warchive.warc
from budget import examples
from warchive.collection import Collection
from warchive.index.build import index_paths
from warchive.index.cdx import IndexOptions
from warchive.warc.writer import WarcWriter

REQ = b"GET /a HTTP/1.1\r\nHost: example.com\r\n\r\n"
BODY = b"hello, decoded world " * 20
ZIPPED = gzip.compress(BODY)
CHUNKED = b"".join(b"%x\r\n%s\r\n" % (len(ZIPPED[i:i + 100]), ZIPPED[i:i + 100])
                   for i in range(0, len(ZIPPED), 100)) + b"0\r\n\r\n"
RESP = (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Encoding: gzip\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n" + CHUNKED)


@pytest.fixture
def warc(tmp_path) -> pathlib.Path:
    path = tmp_path / "one.warc.gz"
    with WarcWriter(str(path)) as w:
        w.write_exchange("http://example.com/a", REQ, RESP, date="2026-01-02T03:04:05Z")
    return path


def warcio_payloads(path):
    with open(path, "rb") as f:
        return [r.content_stream().read() for r in WarcioIterator(f) if r.rec_type == "response"]


# --------------------------------------------------------------------------- index_paths


def lines_of(inputs) -> bytes:
    out = io.BytesIO()
    index_paths(inputs, out.write, IndexOptions(), sort=True)
    return out.getvalue()


def test_index_paths_takes_a_single_path_as_one_path(warc):
    expected = lines_of([str(warc)])
    assert expected.count(b"\n") == 1
    assert lines_of(str(warc)) == expected
    assert lines_of(warc) == expected
    assert lines_of((p for p in [warc])) == expected


# --------------------------------------------------------------------------- collections


def test_a_collection_is_made_and_grown_from_python(tmp_path, warc):
    from warchive.index.query import Index

    coll = Collection.init(tmp_path / "web")
    assert coll.path == str(tmp_path / "web")
    seg = coll.add(warc)   # one path, as a PathLike
    assert seg is not None and seg.endswith(".seg")
    assert (tmp_path / "web" / "archive" / "one.warc.gz").read_bytes() == warc.read_bytes()
    coll.add([str(warc)])   # the same file again: a second segment, the same captures
    assert len(coll.segments()) == 2
    merged = coll.compact()
    assert coll.segments() == [merged]
    with Index(str(tmp_path / "web")) as idx:
        caps = idx.query("http://example.com/a")
    assert [(c.timestamp, c.status, c.filename) for c in caps] == [("20260102030405", "200", "one.warc.gz")]


# --------------------------------------------------------------------------- the decoded payload


@pytest.mark.parametrize("decode", [True, False])
def test_records_give_the_dechunked_payload_as_warcio_does(warc, decode):
    got = []
    with warchive.warc.open(str(warc), types={"response"}) as records:
        for rec in records:
            got.append(rec.content_stream(decode=decode).read())
    if decode:
        assert got == warcio_payloads(warc) == [BODY]
    else:
        assert got == [ZIPPED]


# --------------------------------------------------------------------------- package faces


def test_one_import_per_job():
    from warchive.index import Capture, Index, IndexOptions, QueryError, Segment, index_file, index_paths as ip
    from warchive.index import write_segment
    from warchive.replay import CaptureLoader, LoadedCapture, load_capture, load_closest
    from warchive.warc import WarcWriter, Written, content_stream, read_whole
    import warchive.index.build
    import warchive.index.capture
    import warchive.index.query
    import warchive.index.segment
    import warchive.replay.load
    import warchive.warc.writer

    assert (Index, Capture, QueryError) == (warchive.index.query.Index, warchive.index.capture.Capture,
                                            warchive.index.capture.QueryError)
    assert (ip, IndexOptions, index_file) == (index_paths, warchive.index.cdx.IndexOptions,
                                              warchive.index.cdx.index_file)
    assert (Segment, write_segment) == (warchive.index.segment.Segment, warchive.index.segment.write_segment)
    assert (CaptureLoader, LoadedCapture, load_capture, load_closest) == (
        warchive.replay.load.CaptureLoader, warchive.replay.load.LoadedCapture, warchive.replay.load.load_capture,
        warchive.replay.load.load_closest)
    assert (WarcWriter, Written) == (warchive.warc.writer.WarcWriter, warchive.warc.writer.Written)
    assert content_stream is warchive.warc.content.content_stream and read_whole is warchive.warc.whole.read_whole
    with pytest.raises(AttributeError):
        warchive.index.Nothing  # noqa: B018


def test_the_faces_leave_the_query_engine_and_the_writer_unimported():
    """``warchive index`` imports warchive.index and warchive.warc: neither imports what it
    does not use until one of its names is asked for."""
    code = ("import sys, warchive.index, warchive.warc; "
            "print([m for m in ('warchive.index.query', 'warchive.warc.writer') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "[]"


# --------------------------------------------------------------------------- Index.query's parameters

LINES = [b'com,example)/%03d 2020010%d000000 {"url": "http://example.com/%03d", "status": "200"}' % (i, i % 10, i)
         for i in range(300)]


@pytest.fixture
def cdxj(tmp_path) -> pathlib.Path:
    path = tmp_path / "sorted.cdxj"
    path.write_bytes(b"\n".join(LINES) + b"\n")
    return path


@pytest.mark.parametrize("params, named", [
    ({"closet": "2020"}, "'closet' (did you mean 'closest'?)"),
    ({"matchtype": "prefix"}, "'matchtype' (did you mean 'matchType'?)"),
    ({"closest": "yesterday"}, "closest='yesterday'"),
    ({"from": "2020-01"}, "from='2020-01'"),
    ({"matchType": "exakt"}, "matchType='exakt'"),
    ({"sort": "newest"}, "sort='newest'"),
    ({"limit": "ten"}, "limit='ten'"),
    ({"reverse": "maybe"}, "reverse='maybe'"),
])
def test_a_misspelt_parameter_or_a_meaningless_value_is_named(cdxj, params, named):
    from warchive.errors import ArchiveError
    from warchive.index import Index, QueryError

    with Index(str(cdxj)) as idx:
        with pytest.raises(QueryError) as e:
            idx.query("http://example.com/001", **params)
        assert named in str(e.value) and e.value.status == 400 and isinstance(e.value, ArchiveError)


@pytest.mark.parametrize("name", ["closet", "matchtype", "fom", "offset", "gzip"])
def test_the_http_endpoint_still_ignores_other_names_as_pywb_does(cdxj, name):
    from warchive.index import Index

    with Index(str(cdxj)) as idx:
        answer = idx.answer({"url": "http://example.com/001", name: "2020"})
        assert answer.status == 200 and answer.read().count(b"\n") == 1


def test_good_parameters_in_python_spellings(cdxj):
    from warchive.index import Index

    with Index(str(cdxj)) as idx:
        got = idx.query("http://example.com/00*", closest="20200105000000", limit=3, reverse=False,
                        filter="=status:200", allowFuzzy=False, matchType=None)
        assert [c.url for c in got] == ["http://example.com/005", "http://example.com/004", "http://example.com/006"]
        assert len(idx.query("http://example.com/001", closest="now", sort="closest")) == 1


# --------------------------------------------------------------------------- unsorted index files


def test_an_unsorted_index_file_is_named_not_answered_empty(tmp_path, cdxj):
    from warchive.errors import UnsortedInputError
    from warchive.index import Index

    shuffled = tmp_path / "shuffled.cdxj"
    shuffled.write_bytes(b"\n".join(LINES[150:] + LINES[:150]) + b"\n")
    with Index(str(cdxj)) as idx:   # the sorted file answers every key
        assert all(len(idx.query(f"http://example.com/{i:03d}")) == 1 for i in range(0, 300, 7))
    with Index(str(shuffled)) as idx:
        for i in range(0, 300, 7):
            with pytest.raises(UnsortedInputError) as e:
                idx.query(f"http://example.com/{i:03d}")
            assert str(shuffled) in str(e.value) and "sort it first" in str(e.value)


# --------------------------------------------------------------------------- errors

# raised by the command line or the replay server only, and warnings: defined where they are used
ELSEWHERE = {"UsageError", "MissingExtra", "SessionPathError", "BadRequest", "DefectWarning", "SessionWarning"}


def test_every_public_exception_is_defined_in_warchive_errors():
    """A class of the package deriving from an exception is defined in warchive.errors (so that
    ``from warchive.errors import X`` finds it), unless it is private or listed in ELSEWHERE."""
    import ast
    import inspect

    import warchive.errors

    errors = {n for n, v in vars(warchive.errors).items() if inspect.isclass(v) and issubclass(v, BaseException)}
    bases_ok = errors | {"Exception", "ValueError", "LookupError", "UserWarning", "OSError", "RuntimeError"}
    src = pathlib.Path(warchive.errors.__file__).parent
    elsewhere = {}
    for path in src.rglob("*.py"):
        if path.name == "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
                if bases & bases_ok:
                    elsewhere[node.name] = str(path.relative_to(src))
    assert set(elsewhere) <= ELSEWHERE, elsewhere


@pytest.mark.parametrize("module, names", [
    ("warchive.index.query", ["QueryError"]),
    ("warchive.index.capture", ["QueryError"]),
    ("warchive.warc.digest", ["DigestError"]),
    ("warchive.replay.load", ["CaptureLineError", "ArchiveFileNotFound", "UnsafeFilename", "OriginalNotFound",
                              "SegmentNotFound", "SelfRedirect"]),
    ("warchive.replay.urls", ["ArchivalUrlError"]),
    ("warchive.replay.memento", ["MementoError"]),
    ("warchive.replay.config", ["ConfigError"]),
    ("warchive.replay.collections", ["CollectionUnavailable"]),
    ("warchive.capture.crawl_config", ["CrawlError"]),
    ("warchive.capture.crawl_log", ["CrawlLogError"]),
    ("warchive.capture.checkpoint", ["FrontierFormatError"]),
    ("warchive.capture.seen", ["SeenFormatError"]),
    ("warchive.wacz.zipread", ["ZipFormatError", "UnsafeZipEntry", "CompressedEntry"]),
    ("warchive.wacz.datapackage", ["PackageError"]),
    ("warchive.wacz.indexlines", ["IndexTooLarge"]),
    ("warchive.wacz.pages", ["PagesError"]),
])
def test_exceptions_answer_to_their_old_homes_too(module, names):
    import importlib

    import warchive.errors

    mod = importlib.import_module(module)
    for name in names:
        cls = getattr(warchive.errors, name)
        assert getattr(mod, name) is cls and issubclass(cls, warchive.errors.ArchiveError)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.binary(min_size=1, max_size=12).filter(lambda b: b"\n" not in b), max_size=80),
       st.lists(st.binary(max_size=6), min_size=1, max_size=6), st.booleans())
def test_a_sorted_file_is_never_taken_for_an_unsorted_one(tmp_path, lines, keys, final_lf):
    """No false alarm: on any sorted file (repeated lines, no final LF), every range is what
    bisect finds in the sorted list."""
    import bisect

    from warchive.sortedfile import SortedFile

    lines = sorted(x for x in lines if not x.startswith(b" CDX "))
    path = tmp_path / "sorted.txt"
    path.write_bytes(b"\n".join(lines) + (b"\n" if final_lf and lines else b""))
    f = SortedFile(str(path))
    try:
        for k in keys:
            want = lines[bisect.bisect_left(lines, k):bisect.bisect_left(lines, k + b"\x80")]
            assert list(f.range(k, k + b"\x80")) == want
    finally:
        f.close()
