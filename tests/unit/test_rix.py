"""Record indexes (warchive.index.rix): written from Wget's crawl and checked against Wget's own
CDX, refused when they are something else, segments and the write callable, and the column table
read back as it was written. tests/unit/test_load.py loads captures through them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
for _p in (TESTS, TESTS / "differential"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from test_load_vs_pywb import write_load_cases  # noqa: E402

from warchive.errors import IndexFormatError  # noqa: E402
from warchive.index.rix import RecordIndex, RixEntry, record_entries, write_record_index  # noqa: E402


def test_record_index_against_wgets_own_cdx(tmp_path):
    first = TESTS / "data" / "wget" / "docs-python-3.11.warc.gz"
    out = tmp_path / "first.rix"
    stats = write_record_index([first], out)
    data = out.read_bytes().splitlines()
    assert data[0] == b" warchive-record-index 1" and data[1:] == sorted(data[1:])
    assert stats.files == 1
    rix = RecordIndex(out)
    # Wget's --warc-cdx: ` CDX a b a m s k r M V g u` (V offset, g filename, u record id)
    wget_cdx = (TESTS / "data" / "wget" / "docs-python-3.11.cdx").read_text().splitlines()[1:]
    assert len(wget_cdx) == 557
    for ln in wget_cdx:
        f = ln.split(" ")
        (e,) = rix.by_id(f[10])
        assert (e.filename, e.offset, e.type) == (f[9], int(f[8]), "response")
        assert e.digest == "sha1:" + f[5] and e.url == f[0]
        assert any(d.record_id == e.record_id for d in rix.by_digest(f[5]))   # unlabelled digests too
    rix.close()


def test_record_index_refuses_other_files(tmp_path):
    p = tmp_path / "x.rix"
    p.write_text("com,example)/ 2020 {}\n")
    with pytest.raises(IndexFormatError):
        RecordIndex(p)


def test_record_index_segments_and_write_callable(tmp_path):
    warcs = tmp_path / "w"
    warcs.mkdir()
    paths = write_load_cases(warcs)
    chunks = []
    write_record_index([warcs], chunks.append)
    text = b"".join(chunks).decode()
    assert text.startswith(" warchive-record-index 1\n")
    sg = [ln for ln in text.splitlines() if ln.startswith("sg:")]
    assert len(sg) == 1 and sg[0].split(" ")[1:3] == ["2", "loadcases-seg-2.warc.gz"]
    assert len(paths) == 3




def test_docs_example_lines(tmp_path):
    """The two lines docs/format.md shows (wrapped there) are those of Wget's first crawl."""
    first = TESTS / "data" / "wget" / "docs-python-3.11.warc.gz"
    out = tmp_path / "first.rix"
    write_record_index([first], out)
    lines = out.read_bytes().splitlines()
    rid = "urn:uuid:5122ea46-d1c3-4ed4-9b92-4c7a99f3519e"
    dg = ("dg:sha1:KI6XY5N7QQASCEP6N4VNIH7AOOSI4NHE 20261129183042 docs-python-3.11.warc.gz 978 3566 response "
          f"{rid} http://docs.python.org/3.11/index.html").encode()
    id_ = (f"id:{rid} docs-python-3.11.warc.gz 978 3566 response 20261129183042 "
           "sha1:KI6XY5N7QQASCEP6N4VNIH7AOOSI4NHE http://docs.python.org/3.11/index.html").encode()
    assert dg in lines and id_ in lines


def test_entries_read_back_as_written(tmp_path):
    """One column table writes and reads every kind: each entry parses back equal from its line."""
    warcs = tmp_path / "w"
    warcs.mkdir()
    paths = write_load_cases(warcs) + [TESTS / "data" / "wget" / "docs-python-3.11-recrawl.warc.gz"]
    kinds = set()
    for p in paths:
        for e in record_entries(str(p), Path(p).name):
            line = e.line()
            assert line.endswith(b"\n") and line.count(b"\n") == 1
            back = RixEntry.parse(line[:-1])
            assert back == e and back.key == e.key
            kinds.add(e.kind)
    assert kinds == {"id", "dg", "sg"}
    with pytest.raises(ValueError):
        RixEntry.parse(b"id:x a 1")
    with pytest.raises(ValueError):
        RixEntry.parse(b"zz:x a 1 - response - - -")
