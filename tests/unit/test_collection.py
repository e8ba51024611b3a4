"""Collections grow by segments: `add` writes a new segment and leaves the index there alone,
lookups merge every segment, `compact` merges them into one. Expected answers: the same
query over one sorted CDXJ of all the files (warchive index --sort, held to cdxj-indexer)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from warchive.collection import Collection, add_warcs, compact
from warchive.errors import ArchiveError
from warchive.index.query import Index

WGET = sorted((Path(__file__).resolve().parents[1] / "data" / "wget").glob("*.warc.gz"))
QUERIES = [{"url": "http://docs.python.org/3.11/index.html"},
           {"url": "docs.python.org/3.11/library/*", "limit": "20", "output": "json"},
           {"url": "*.python.org", "output": "text", "fl": "urlkey,timestamp,filename,offset", "limit": "50000"},
           {"url": "docs.python.org/3.11/*", "resolveRevisits": "true", "output": "json", "limit": "30"}]


def _answers(path, nosource=True):
    with Index(str(path)) as idx:
        return [idx.answer({**q, "nosource": "true"}).read() for q in QUERIES]


def test_add_then_compact(tmp_path):
    coll = tmp_path / "web"
    first = add_warcs(str(coll), [str(WGET[0])])
    mtime = os.stat(first).st_mtime_ns
    second = add_warcs(str(coll), [str(WGET[1])])
    assert first != second and os.stat(first).st_mtime_ns == mtime       # the first segment untouched
    assert sorted(os.listdir(coll / "archive")) == sorted(p.name for p in WGET)
    assert len(Collection(str(coll)).index_files()) == 2

    ref = tmp_path / "ref" / "indexes"
    ref.mkdir(parents=True)
    subprocess.run([sys.executable, "-m", "warchive", "index", "--sort", *map(str, WGET), "-o",
                    str(ref / "all.cdxj")], check=True)
    expected = _answers(ref.parent)
    assert all(expected) and _answers(coll) == expected

    merged = compact(str(coll))
    assert [os.path.basename(p) for p in Collection(str(coll)).index_files()] == [os.path.basename(merged)]
    assert _answers(coll) == expected


def test_adding_the_same_file_twice_adds_no_new_capture(tmp_path):
    coll = tmp_path / "web"
    add_warcs(str(coll), [str(WGET[1])])
    add_warcs(str(coll), [str(WGET[1])])          # same name, same bytes: accepted, indexed again
    compact(str(coll))                            # identical lines are kept once
    with Index(str(coll)) as idx:
        caps = idx.query(url="http://docs.python.org/3.11/index.html", nosource="true")
    assert len(caps) == 1


def test_init_makes_an_empty_collection_and_refuses_an_existing_one(tmp_path):
    c = Collection.init(str(tmp_path / "web"))
    assert sorted(p.name for p in (tmp_path / "web").iterdir()) == ["archive", "indexes"]
    assert c.index_files() == [] and c.index_dir == str(tmp_path / "web" / "indexes")
    with pytest.raises(ArchiveError, match="exists already"):
        Collection.init(str(tmp_path / "web"))
    (tmp_path / "file").write_text("x")
    with pytest.raises(ArchiveError):
        Collection.init(str(tmp_path / "file"))
