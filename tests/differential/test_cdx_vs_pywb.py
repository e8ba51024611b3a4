"""warchive's CDX query engine against pywb 2.10, case by case (tests/differential/cdx_queries.py).

Every case runs through pywb (one subprocess per source set, tests/pywb_oracle.py)
and through warchive's engine over the same index files, named as pywb names
them in the same layout; status, Content-Type and body must be equal byte for
byte. Cases where warchive deliberately answers otherwise (docs/cdx-api.md
D1-D7, W1-W20) are compared with that rule instead: D1 (pywb's 500s) must be
400 with a JSON message; the others are checked by tests/unit/test_query.py
against hand-written expectations and here only for a well-formed answer.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

import pytest

import cdx_queries
from cdx_queries import CASES, SOURCE_SETS
from warchive.index.query import ERROR_CTYPE, Engine, NamedSource
from warchive.sortedfile import SortedFile

pywb_oracle = pytest.importorskip("pywb_oracle")


@pytest.fixture(scope="session")
def cdx_indexes(tmp_path_factory):
    return cdx_queries.build_indexes(tmp_path_factory.mktemp("cdxidx"))


def _engine(paths, layout: str, coll: str = "coll") -> Engine:
    srcs = []
    several = len(paths) > 1
    for p in paths:
        p = str(p)
        base = os.path.basename(p)
        if layout == "auto":
            name = f"{coll}/indexes/{base}"
        else:
            name = f"{coll}:{base}" if several else coll
        if p.endswith((".idx", ".summary")):
            from warchive.index.zipnum import ZipNumIndex

            srcs.append(NamedSource(ZipNumIndex(p), name, coll, kind="zipnum"))
        else:
            srcs.append(NamedSource(SortedFile(p), name, coll))
    return Engine(srcs, access="allow" if layout == "auto" else None, now=lambda: "20240101000000",
                  selectable=layout != "auto")


@pytest.fixture(scope="session")
def pywb_answers(cdx_indexes):
    """{case id: (status, content type, body)} from pywb, one subprocess per (source set, layout)."""
    pywb_oracle.require_pywb()
    groups = defaultdict(list)
    for c in CASES:
        groups[(c.sources, c.layout)].append(c)
    answers = {}
    for (sources, layout), cases in groups.items():
        paths = [cdx_indexes[n] for n in SOURCE_SETS[sources]]
        got = pywb_oracle.pywb_cdx(paths, [c.params for c in cases], coll="coll", layout=layout)
        for c, a in zip(cases, got):
            answers[c.id] = a
    return answers


def _params(case):
    return case.params if isinstance(case.params, str) else dict(case.params)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_query_like_pywb(case, cdx_indexes, pywb_answers):
    paths = [cdx_indexes[n] for n in SOURCE_SETS[case.sources]]
    engine = _engine(paths, case.layout)
    params = case.params
    if not isinstance(params, str):
        from urllib.parse import urlencode

        params = urlencode([(k, v) for k, vals in params.items()
                            for v in (vals if isinstance(vals, list) else [vals])])
    ans = engine.answer(params)
    got = (ans.status, ans.content_type, ans.read())
    pywb = pywb_answers[case.id]
    if case.differs.startswith("D1") or (case.differs == "" and pywb[0] == 500):
        assert got[0] == 400 and got[1] == ERROR_CTYPE, f"{case.id}: {got!r}"
        return
    if case.differs:
        assert got[0] in (200, 400), f"{case.id}: {got!r}"
        return
    assert got[0] == pywb[0], f"{case.id}: status {got[0]} != pywb {pywb[0]}\nwarchive: {got[2][:500]!r}\npywb: {pywb[2][:500]!r}"
    assert got[1] == pywb[1], f"{case.id}: content type {got[1]!r} != pywb {pywb[1]!r}"
    if got[2] != pywb[2]:
        a, b = got[2].splitlines(), pywb[2].splitlines()
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                raise AssertionError(f"{case.id}: line {i} differs\nwarchive: {x[:400]!r}\npywb:     {y[:400]!r}")
        raise AssertionError(f"{case.id}: warchive {len(a)} lines, pywb {len(b)}\nwarchive: {got[2][-300:]!r}\n"
                             f"pywb:     {pywb[2][-300:]!r}")


def test_pywb_serves_our_zipnum_cluster(cdx_indexes, tmp_path):
    """A cluster written by warchive (write_zipnum) is read by pywb exactly as by warchive."""
    from warchive.index.zipnum import write_zipnum

    pywb_oracle.require_pywb()
    lines = sorted(set(Path(cdx_indexes["wget"]).read_bytes().splitlines()))
    cluster = write_zipnum(lines, tmp_path / "ours", lines_per_block=50)
    idx = cluster.idx
    queries = [{"url": "http://docs.python.org/3.11/index.html", "output": "json"},
               {"url": "docs.python.org/3.11/*", "output": "text", "pageSize": "3", "page": "1"},
               {"url": "docs.python.org/3.11/*", "showNumPages": "true", "pageSize": "4"},
               {"url": "*.python.org", "output": "json", "showPagedIndex": "true"}]
    pywb = pywb_oracle.pywb_cdx([idx], queries)
    engine = _engine([idx], "auto")
    from urllib.parse import urlencode

    for q, (status, ctype, body) in zip(queries, pywb):
        ans = engine.answer(urlencode(q))
        assert (ans.status, ans.content_type, ans.read()) == (status, ctype, body), q
        assert status == 200 and body


def test_pywb_reads_our_cluster_in_parts(cdx_indexes, tmp_path):
    """A cluster of two shard files with small blocks: every match type, and the paged index
    (the summary lines pywb lists for a range), as pywb answers them."""
    from urllib.parse import urlencode

    from warchive.index.zipnum import write_zipnum

    pywb_oracle.require_pywb()
    lines = sorted(set(Path(cdx_indexes["wget"]).read_bytes().splitlines()))
    cluster = write_zipnum(lines, str(tmp_path / "zn") + "/", lines_per_block=30, parts=2)
    queries = []
    for url, match in [("http://docs.python.org/3.11/index.html", "exact"), ("docs.python.org/3.11/library/", "prefix"),
                       ("docs.python.org", "host"), ("python.org", "domain"), ("nothere.zz/", "prefix")]:
        # pywb reads a ZipNum one page of blocks at a time (10 by default): ask for one big page
        queries.append({"url": url, "matchType": match, "output": "json", "pageSize": "1000"})
        queries.append({"url": url, "matchType": match, "output": "json", "pageSize": "1000",
                        "showPagedIndex": "true"})
    pywb = pywb_oracle.pywb_cdx([cluster.idx], queries)
    engine = _engine([cluster.idx], "auto")
    nonempty = 0
    for q, (status, ctype, body) in zip(queries, pywb):
        ans = engine.answer(urlencode(q))
        assert (ans.status, ans.content_type, ans.read()) == (status, ctype, body), q
        nonempty += bool(body.strip())
    assert nonempty >= 8   # all but the two for a host that is not there
