"""The pywb 2.10 oracle (tests/pywb_oracle.py) itself, and every query case of
tests/differential/cdx_queries.py run through it once, so that a case that stops
meaning anything (an empty answer where lines are expected, a 200 where a 400
is) is noticed before warchive is ever compared on it.

pywb lives in .venv-pywb (scripts/setup_pywb.sh, run by scripts/test.sh). Without
it these tests skip, except under CI, where a missing oracle is a failure.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
for p in (TESTS, TESTS / "differential"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import cdx_queries  # noqa: E402
import pywb_oracle  # noqa: E402
from pywb_oracle import pywb_cdx, pywb_server  # noqa: E402

KNOWN_URL = "http://docs.python.org/3.11/index.html"
KNOWN_KEY = b"org,python,docs)/3.11/index.html "


@pytest.fixture(scope="session")
def pywb():
    if not pywb_oracle.pywb_available():
        msg = "pywb oracle not installed: run `bash scripts/setup_pywb.sh`"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)


@pytest.fixture(scope="session")
def indexes(tmp_path_factory, pywb):
    """{name: path} of cdx_queries.build_indexes (built once per session with `warchive index`)."""
    return cdx_queries.build_indexes(tmp_path_factory.mktemp("cdx-indexes"))


def lines_of(path: Path, prefix: bytes) -> bytes:
    return b"".join(line + b"\n" for line in path.read_bytes().splitlines() if line.startswith(prefix))


# --------------------------------------------------------------------------- the harness

def test_known_url_gives_its_index_lines(indexes):
    """In the "config" layout with nosource=true, output=text hands back the stored lines unchanged."""
    [(status, ctype, body)] = pywb_cdx([indexes["wget"]], [{"url": KNOWN_URL, "output": "text",
                                                           "nosource": "true"}], layout="config")
    assert (status, ctype) == (200, "text/plain")
    expected = lines_of(indexes["wget"], KNOWN_KEY)
    assert expected.count(b"\n") == 2 and body == expected


def test_default_output_is_cdxj_with_source_fields(indexes):
    [(status, ctype, body)] = pywb_cdx([indexes["wget"]], [{"url": KNOWN_URL}])
    assert (status, ctype) == (200, "text/x-cdxj")
    lines = body.splitlines()
    assert len(lines) == 2 and all(line.startswith(KNOWN_KEY) for line in lines)
    fields = json.loads(lines[0].split(b" ", 2)[2])
    assert (fields["source"], fields["source-coll"], fields["access"]) == ("coll/indexes/wget.cdxj", "coll", "allow")


BAD = [
    ({"url": KNOWN_URL, "matchType": "bogus"}, "Invalid match_type: bogus"),
    ({"url": KNOWN_URL, "output": "xml"}, "output=xml not supported"),
    ({"matchType": "prefix"}, 'The "url" param is required'),
    ("", 'The "url" param is required'),
    ({"url": "http://example.com:99999/"}, "Invalid Url: http://example.com:99999/"),
]


def test_bad_parameter_gives_400(indexes):
    answers = pywb_cdx([indexes["wget"]], [query for query, _ in BAD])
    for (query, message), (status, ctype, body) in zip(BAD, answers):
        assert (status, ctype) == (400, "application/json; charset=utf-8"), query
        assert json.loads(body) == {"message": message}


def test_many_queries_one_process_in_order(indexes):
    first = {}
    for line in indexes["wget"].read_bytes().splitlines():
        key, _, fields = line.split(b" ", 2)
        first.setdefault(key, json.loads(fields)["url"])
    keys = sorted(first)[:150]
    queries = [{"url": first[k], "fl": "urlkey", "output": "text", "allowFuzzy": "false"} for k in keys]
    answers = pywb_cdx([indexes["wget"]], queries)
    assert len(answers) == len(keys)
    for key, (status, _, body) in zip(keys, answers):
        assert status == 200 and set(body.splitlines()) == {key}, key


def test_zipnum_pages_add_up_to_the_plain_index(indexes):
    """A ZipNum query answers one page of blocks (page 0 by default); all pages together
    are the lines of the plain sorted CDXJ of the same lines."""
    base = {"url": "*.python.org", "output": "text", "nosource": "true"}
    [plain] = pywb_cdx([indexes["wget"], indexes["timeline"]], [base], layout="config")
    [(_, _, info)] = pywb_cdx([indexes["zipnum"]], [{**base, "showNumPages": "true", "output": "json"}],
                              layout="config")
    pages = json.loads(info)["pages"]
    assert pages > 1
    answers = pywb_cdx([indexes["zipnum"]], [base] + [{**base, "page": str(p)} for p in range(pages)],
                       layout="config")
    assert answers[0] == answers[1]                     # no page= is page 0
    assert answers[0][2] != plain[2]
    assert b"".join(a[2] for a in answers[1:]) == plain[2]
    assert plain[2].count(b"\n") > 1000


def test_several_sources_are_merged(indexes):
    q = {"url": "http://example.com/page.html", "fl": "timestamp,source", "output": "text"}
    [(status, _, body)] = pywb_cdx([indexes["timeline"], indexes["revisits"]], [q])
    lines = body.decode().splitlines()
    assert status == 200 and lines[0] == "20200505050506 coll/indexes/timeline.cdxj"
    assert lines[1:] == ["20240102030405 coll/indexes/revisits.cdxj"] * 6


def test_server_answers_as_pywb_cdx(indexes):
    q = {"url": KNOWN_URL, "output": "json"}
    [(_, ctype, body)] = pywb_cdx([indexes["wget"]], [q])
    with pywb_server([indexes["wget"]], access_log=False) as server:
        with urllib.request.urlopen(server.query_url(q), timeout=30) as resp:
            assert resp.status == 200
            assert resp.headers["Content-Type"] == ctype
            assert resp.read() == body
        proc = server.proc
    assert proc.poll() is not None


# --------------------------------------------------------------------------- the query cases

def test_cases_are_well_formed():
    ids = [c.id for c in cdx_queries.CASES]
    assert len(ids) == len(set(ids)), "duplicate case ids"
    doc = (TESTS.parent / "docs" / "cdx-api.md").read_text()
    for c in cdx_queries.CASES:
        assert c.sources in cdx_queries.SOURCE_SETS, c.id
        for rule in c.rules:
            assert f"**{rule}**" in doc, f"{c.id}: rule {rule} is not in docs/cdx-api.md"


def test_every_case_through_pywb(indexes):
    """Run every case (one pywb process per source set and layout) and check what it expects."""
    groups: dict = {}
    for c in cdx_queries.CASES:
        groups.setdefault((c.sources, c.layout), []).append(c)

    def run(item):
        (sources, layout), cases = item
        paths = [indexes[name] for name in cdx_queries.SOURCE_SETS[sources]]
        return cases, pywb_cdx(paths, [c.params for c in cases], layout=layout)

    failures = []
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:   # pywb's start-up is the cost
        results = list(pool.map(run, groups.items()))
    for cases, answers in results:
        for c, (status, ctype, body) in zip(cases, answers):
            problem = c.check(status, ctype, body)
            if problem:
                failures.append(f"{c.id} ({', '.join(c.rules)}): {problem}; got {status} {ctype} {body[:200]!r}")
    assert not failures, "\n".join(failures)
