"""The quick path against the whole pipeline: the same captures, the same bytes.

``Engine.quick`` (what ``Index.query`` and the HTTP door run for the common
queries) answers without the pipeline of docs/cdx-api.md R28; here both run
on the indexes of tests/differential/cdx_queries.py, as sorted files and as
index segments: for every query case of ``cdx_queries.CASES`` and for
parameter sets drawn by hypothesis, ``Engine.query`` (``Index.query``) must
equal, list of dicts for list of dicts, the pipeline's ``output=json``
answer (its resume-key line left out) or raise the pipeline's QueryError;
and ``Engine.answer`` (the HTTP door, quick or not) must give the
pipeline's status, Content-Type and bytes. The cases' answers against pywb
itself are tests/differential/test_cdx_vs_pywb.py's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cdx_queries
from cdx_queries import CASES, SOURCE_SETS
from warchive.index.query import Engine, NamedSource, Query, QueryError, closest_first, error_answer, params_from
from warchive.index.segment import Segment, write_segment
from warchive.index.zipnum import ZipNumIndex
from warchive.sortedfile import SortedFile

NOW = "20240101000000"


@pytest.fixture(scope="session")
def cdx_indexes(tmp_path_factory):
    ix = cdx_queries.build_indexes(tmp_path_factory.mktemp("quickidx"))
    segs = tmp_path_factory.mktemp("quickseg")
    for name, path in list(ix.items()):
        if name != "zipnum":
            seg = segs / (Path(path).name + ".seg")
            write_segment([x for x in Path(path).read_bytes().split(b"\n") if x], seg)
            ix[name + ".seg"] = seg
    return ix


def _engine(ix, set_name: str, layout: str, kind: str) -> Engine:
    """The engine of a source set, named as pywb names it (as test_cdx_vs_pywb does); kind
    "file" reads the sorted files, "segment" the segments made of them."""
    paths = [ix[n] for n in SOURCE_SETS[set_name]]
    srcs = []
    for p in paths:
        base = os.path.basename(str(p))
        if layout == "auto":
            name = f"coll/indexes/{base}"
        else:
            name = f"coll:{base}" if len(paths) > 1 else "coll"
        if str(p).endswith(".idx"):
            srcs.append(NamedSource(ZipNumIndex(str(p)), name, "coll", kind="zipnum"))
        elif kind == "segment":
            srcs.append(NamedSource(Segment(str(_seg_of(ix, p))), name, "coll"))
        else:
            srcs.append(NamedSource(SortedFile(str(p)), name, "coll"))
    return Engine(srcs, access="allow" if layout == "auto" else None, now=lambda: NOW,
                  selectable=layout != "auto")


def _seg_of(ix, p):
    """The segment made of index file p."""
    return ix[next(n for n, q in ix.items() if q == p) + ".seg"]


@pytest.fixture(scope="session")
def engines(cdx_indexes):
    made: Dict[Tuple[str, str, str], Engine] = {}

    def get(set_name: str, layout: str, kind: str) -> Engine:
        key = (set_name, layout, kind)
        if key not in made:
            made[key] = _engine(cdx_indexes, set_name, layout, kind)
        return made[key]
    return get


def pipeline_json(engine: Engine, p: Dict[str, Any]) -> List[Dict[str, Any]]:
    """What the pipeline answers with output=json, as dicts (resume-key line left out)."""
    ans = engine._answer(Query(dict(p, output="json"), now=engine.now))
    return [json.loads(line) for line in ans.read().splitlines() if line and not line.startswith(b'{"resumeKey"')]


def pipeline_answer(engine: Engine, p: Dict[str, Any]) -> Tuple[int, str, bytes]:
    try:
        ans = engine._answer(Query(dict(p), now=engine.now))
    except QueryError as e:
        ans = error_answer(e)
    return ans.status, ans.content_type, ans.read()


def check(engine: Engine, params: Any) -> bool:
    """Index.query and the HTTP door against the pipeline; True when the quick path answered."""
    p = params_from(params)
    try:
        want = pipeline_json(engine, p)
        err = None
    except QueryError as e:
        want, err = [], e
    if err is not None:
        with pytest.raises(QueryError) as got_err:
            engine.query(p)
        assert (got_err.value.status, got_err.value.message) == (err.status, err.message), p
    else:
        got = engine.query(p)
        assert [dict(c) for c in got] == want, p
        assert got == want, p      # a Capture equals the dict of its fields
        assert [list(c) for c in got] == [list(d) for d in want], p   # in the same order
        if set(p) <= {"url", "output"}:   # Index.query(url): the commonest question's own path
            got = engine.query_url(p["url"])
            assert [list(c.items()) for c in got] == [list(d.items()) for d in want], p
    quick = engine.quick({k: v for k, v in p.items() if k != "output"}) is not None
    got_http = engine.answer(p)
    assert (got_http.status, got_http.content_type, got_http.read()) == pipeline_answer(engine, p), p
    return quick


def _case_params(case) -> Any:
    if isinstance(case.params, str):
        return case.params
    return {k: v for k, v in case.params.items()}


@pytest.mark.parametrize("kind", ["file", "segment"])
def test_every_case_quick_equals_pipeline(kind, engines):
    quick = 0
    for case in CASES:
        engine = engines(case.sources, case.layout, kind)
        params = _case_params(case)
        if isinstance(params, str):
            params = params_from(params)
        quick += check(engine, params)
        # and as JSON, which is what Index.query answers
        quick += check(engine, dict(params_from(params), output="json"))
    # the quick path must have answered a good part of them, or this test says nothing
    assert quick >= 150, quick


# --------------------------------------------------------------------------- drawn parameter sets

SETS = ["wget", "timeline", "merged", "twice", "mixed", "cdx11", "wget_pair", "unicode", "revisits"]


@pytest.fixture(scope="session")
def urls_of(cdx_indexes):
    """The urls and timestamps of every source set's lines."""
    out = {}
    for s in SETS:
        urls, stamps = set(), set()
        for n in SOURCE_SETS[s]:
            for line in Path(cdx_indexes[n]).read_bytes().splitlines():
                parts = line.split(b" ", 2)
                if len(parts) < 3:
                    continue
                stamps.add(parts[1].decode())
                if parts[2].startswith(b"{"):
                    u = json.loads(parts[2]).get("url")
                else:
                    u = parts[2].split(b" ")[0].decode()
                if u:
                    urls.add(u)
        out[s] = (sorted(urls), sorted(stamps))
    return out


def _url_forms(u: str) -> List[str]:
    bare = u.split("://", 1)[-1]
    host = bare.split("/", 1)[0]
    return [u, bare, "www." + bare, "https://" + bare, u + "*", u.rsplit("/", 1)[0] + "/*", "*." + host, host,
            u + "?utm_source=x", u.rstrip("/") + "/nothing-here"]


TS = st.one_of(st.none(), st.sampled_from(["2019", "2020", "202001", "20200101000030", "2022022810", "now", "abc",
                                           "20201399999999", "99991231235959", "18991231235959", "20200230000000",
                                           "20240229120000", "2020010100000", "202001010000001"]))


@st.composite
def queries(draw, urls_of):
    set_name = draw(st.sampled_from(SETS))
    urls, stamps = urls_of[set_name]
    url = draw(st.sampled_from(_url_forms(draw(st.sampled_from(urls)))))
    p: Dict[str, Any] = {"url": url}
    if draw(st.booleans()):
        p["matchType"] = draw(st.sampled_from(["exact", "prefix", "host", "domain", "", "bogus"]))
    if draw(st.booleans()):
        p["limit"] = draw(st.sampled_from(["0", "1", "2", "3", "10", "-1", "-2", "+2", " 1", "abc", "100000"]))
    if draw(st.booleans()):
        p["closest"] = draw(st.one_of(st.sampled_from(stamps), TS))
    for name in ("from", "to", "from_ts"):
        if draw(st.integers(0, 3)) == 0:
            p[name] = draw(st.one_of(st.sampled_from(stamps), TS))
    if draw(st.integers(0, 2)) == 0:
        p["sort"] = draw(st.sampled_from(["reverse", "closest", "bogus", ""]))
    if draw(st.integers(0, 3)) == 0:
        p["reverse"] = draw(st.sampled_from(["true", "false", "1", "0", "off", "maybe"]))
    if draw(st.integers(0, 2)) == 0:
        p[draw(st.sampled_from(["fl", "fields"]))] = ",".join(draw(st.lists(st.sampled_from(
            ["urlkey", "timestamp", "url", "mime", "status", "digest", "length", "offset", "filename", "source",
             "source-coll", "access", "nope", "robotflags", "redirect", "status"]), min_size=1, max_size=4)))
    if draw(st.integers(0, 2)) == 0:
        p["nosource"] = draw(st.sampled_from(["true", "1", "false"]))
    if draw(st.booleans()):
        p["allowFuzzy"] = draw(st.sampled_from(["false", "true", "0"]))
    layout = draw(st.sampled_from(["auto", "config"]))
    if layout == "config" and draw(st.integers(0, 3)) == 0:
        p["sources"] = draw(st.sampled_from(["coll", "nothing", "!coll", "*", "coll:x"]))
    if draw(st.integers(0, 5)) == 0:   # the pipeline's own: the quick path steps aside
        p[draw(st.sampled_from(["filter", "collapse", "resolveRevisits", "showResumeKey"]))] = \
            draw(st.sampled_from(["status:200", "true", "digest"]))
    p["output"] = draw(st.sampled_from(["cdxj", "json", "text", "link"]))
    kind = draw(st.sampled_from(["file", "segment"]))
    return set_name, layout, kind, p


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(data=st.data())
def test_drawn_queries_quick_equals_pipeline(data, engines, urls_of):
    set_name, layout, kind, p = data.draw(queries(urls_of))
    check(engines(set_name, layout, kind), p)


def test_query_string_and_mapping_are_one_query(engines):
    """The HTTP door takes the raw query string (R2) as the pipeline does."""
    engine = engines("timeline", "auto", "segment")
    for qs in ["url=http://example.com/", "url=example.com&limit=2&output=json", "url=example.com&closest=2020",
               "url=example.com/*&fl=url&output=text", "url=http://example.com/&sort=reverse&limit=1"]:
        p = params_from(qs)
        assert engine.quick({k: v for k, v in p.items() if k != "output"}) is not None, qs
        ans = engine.answer(qs)
        assert (ans.status, ans.content_type, ans.read()) == pipeline_answer(engine, p), qs


def capture_times(cdx_indexes, set_name: str) -> Dict[str, set]:
    """The times each url of a source set was captured at."""
    times: Dict[str, set] = {}
    for n in SOURCE_SETS[set_name]:
        for line in Path(cdx_indexes[n]).read_bytes().splitlines():
            parts = line.split(b" ", 2)
            if len(parts) == 3 and parts[2].startswith(b"{"):
                u = json.loads(parts[2]).get("url")
                if u:
                    times.setdefault(u, set()).add(parts[1].decode())
    return times


@pytest.mark.parametrize("set_name", ["timeline", "wget_pair", "merged", "mixed"])
def test_closest_of_every_url_at_each_of_its_times(set_name, engines, cdx_indexes):
    """Every url of the set asked closest to each time it was captured at (so that closest
    order differs from index order wherever a url has several captures), and one second
    later, with and without limit=1."""
    times = capture_times(cdx_indexes, set_name)
    several = 0
    for kind in ("file", "segment"):
        engine = engines(set_name, "auto", kind)
        for u, stamps in sorted(times.items()):
            several += len(stamps) > 1
            for ts in sorted(stamps):
                for closest in (ts, str(int(ts) + 1)):
                    assert check(engine, {"url": u, "closest": closest, "output": "json"})
                    assert check(engine, {"url": u, "closest": closest, "limit": "1"})
    assert several > 0


@pytest.mark.parametrize("set_name", ["timeline", "wget_pair", "merged", "mixed"])
def test_exact_and_closest_first_are_the_pipelines(set_name, engines, cdx_indexes):
    """Replay's two doors, for every url of the set (and urls with no capture, or no key):
    ``Engine.exact(url)`` is the pipeline's answer to url=U&matchType=exact&allowFuzzy=false,
    and ``closest_first`` of it is the pipeline's answer with closest=T for each time T the
    url was captured at, and a second later."""
    times = capture_times(cdx_indexes, set_name)
    urls = sorted(times) + ["http://nothing.example/", "http://example.com/*", "javascript:alert(1)"]
    compared = 0
    for layout in ("auto", "config"):
        for kind in ("file", "segment"):
            engine = engines(set_name, layout, kind)
            for u in urls:
                p = {"url": u, "matchType": "exact", "allowFuzzy": "false"}
                try:
                    want = pipeline_json(engine, p)
                except QueryError as e:
                    with pytest.raises(QueryError) as got:
                        engine.exact(u)
                    assert got.value.message == e.message
                    continue
                got = engine.exact(u)
                assert [list(c.items()) for c in got] == [list(d.items()) for d in want], (u, layout, kind)
                compared += bool(want)
                for ts in sorted(times.get(u, ())):
                    for closest in (ts, str(int(ts) + 1)):
                        order = pipeline_json(engine, dict(p, closest=closest))
                        assert [dict(c) for c in closest_first(got, closest)] == order, (u, closest)
    assert compared > 0
