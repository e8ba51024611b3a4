"""The server's view of a collection while its index changes underneath (replay/collections.py):
a segment listed and then removed by a compaction before it was opened, and a change made in
the same clock tick as the view was opened (the directory's mtime unchanged). Under load
(tests/unit/test_load.py) either happens by chance and must not be a 5xx; here each is made to
happen on purpose."""

from __future__ import annotations

import os
import time
from pathlib import Path

import warcgen
import warchive.replay.collections as collections_mod
from warchive.collection import Collection
from warchive.index.query import Index
from warchive.replay.collections import Collections


def _warc(tmp: Path, name: str) -> str:
    return str(warcgen.write_warc(tmp, name, warcgen.get_pair(name, f"http://{name}.example/", "/")).path)


def _urls(colls: Collections) -> set:
    served = colls.get("web")
    assert served is not None
    index = Index.of(served.engine)
    return {c.url for u in ("http://one.example/", "http://two.example/") for c in index.query(u)}


def test_a_segment_removed_between_listing_and_opening_is_looked_at_again(tmp_path, monkeypatch):
    coll = Collection.init(str(tmp_path / "root" / "web"))
    coll.add([_warc(tmp_path, "one")])
    coll.add([_warc(tmp_path, "two")])
    assert len(coll.segments()) == 2
    real = collections_mod.named_sources
    raced = []

    def racing(paths, name):
        if not raced:   # listed, then the segments merged and removed before they were opened
            raced.append(1)
            time.sleep(0.02)   # (past a clock tick: the directory's mtime moves)
            coll.compact()
            raise FileNotFoundError(2, "No such file or directory", coll.segments()[0] + ".gone")
        return real(paths, name)

    monkeypatch.setattr(collections_mod, "named_sources", racing)
    colls = Collections(str(tmp_path / "root"))
    assert _urls(colls) == {"http://one.example/", "http://two.example/"}
    assert raced == [1]


def test_a_change_in_the_same_clock_tick_as_the_view_is_seen(tmp_path):
    coll = Collection.init(str(tmp_path / "root" / "web"))
    coll.add([_warc(tmp_path, "one")])
    idx = tmp_path / "root" / "web" / "indexes"
    colls = Collections(str(tmp_path / "root"))
    tick = time.time_ns()
    os.utime(idx, ns=(tick, tick))
    assert _urls(colls) == {"http://one.example/"}      # opened in the tick of the last change
    coll.add([_warc(tmp_path, "two")])
    os.utime(idx, ns=(tick, tick))                       # ... and changed again in that same tick
    assert _urls(colls) == {"http://one.example/", "http://two.example/"}


def test_a_view_opened_well_after_the_change_is_kept(tmp_path, monkeypatch):
    coll = Collection.init(str(tmp_path / "root" / "web"))
    coll.add([_warc(tmp_path, "one")])
    idx = tmp_path / "root" / "web" / "indexes"
    past = time.time_ns() - 10**9
    os.utime(idx, ns=(past, past))
    colls = Collections(str(tmp_path / "root"))
    first = colls.get("web")
    opened = []
    monkeypatch.setattr(collections_mod, "_open", lambda where: opened.append(where) or first)
    assert colls.get("web") is first and opened == []   # trusted: not opened again on each request
