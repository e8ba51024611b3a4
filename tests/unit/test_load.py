"""``warchive serve`` under load, briefly (bench/load_soak.py holds it for minutes).

wrk opens 200 connections on loopback and cycles through a mix of what a replay server is
asked: rewritten HTML (``mp_``), images as archived (``id_``), TimeGates (307), TimeMaps and CDX
queries. Every path is fetched once first and must answer what it should; under load, wrk must
then see no socket error (connect, read, write, timeout) and no 4xx or 5xx. The second test
changes the collection underneath while it is served: WARCs added (each a new segment, whose
URL the server must find without a restart) and the collection compacted (the segments being
read removed), with the same promise of no failed request.
"""

from __future__ import annotations

import shutil
import urllib.parse
from pathlib import Path

import pytest

from loadkit import Churn, Sampler, run_wrk, serve, status
from replaysite import TS1, TS2, write_site
from warchive.collection import Collection

pytestmark = pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk (Debian package) is not installed")

CONNS = 200


def mixed_paths() -> list:
    q = urllib.parse.quote
    return [f"/web/{TS2}mp_/http://example.com/", f"/web/{TS1}mp_/http://example.com/docs/",
            f"/web/{TS1}id_/http://example.com/logo.png", f"/web/{TS1}id_/http://example.com/logo.png",
            "/web/http://example.com/", "/web/2021/http://example.com/logo.png",
            "/web/timemap/link/http://example.com/",
            f"/web/cdx?url={q('example.com/')}&output=json", f"/web/cdx?url={q('example.com/*')}&limit=5"]


def expected(path: str) -> int:
    return 307 if path in ("/web/http://example.com/", "/web/2021/http://example.com/logo.png") else 200


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    r = tmp_path / "colls"
    coll = Collection.init(str(r / "web"))
    coll.add([str(write_site(tmp_path))])
    return r


def test_mixed_load_at_200_connections_has_no_failed_request(root: Path, tmp_path: Path) -> None:
    paths = mixed_paths()
    log: list = []
    with serve(root, "--redirect-to-exact", log=log) as (base, pid):
        assert [status(base + p) for p in paths] == [expected(p) for p in paths]
        sampler = Sampler(pid, 0.5)
        sampler.start()
        r = run_wrk(base, paths, 4, CONNS, tmp_path)
        rss = sampler.stop()
        assert status(base + paths[0]) == 200   # still serving
    assert r["requests"] > CONNS, r["raw"]
    assert r["errors"] == dict(connect=0, read=0, write=0, status=0, timeout=0), (r["raw"], log)
    assert r["status"]["4xx"] == 0 and r["status"]["5xx"] == 0, (r["raw"], log)
    assert r["status"]["2xx"] + r["status"]["3xx"] == r["requests"], r["raw"]
    # 2 of the 9 paths are TimeGates: their share of the answers is the 3xx
    assert r["status"]["3xx"] == pytest.approx(r["requests"] * 2 / 9, rel=0.2), r["raw"]
    assert rss and all(k > 0 for _, k in rss)


def test_load_while_the_collection_changes_underneath(root: Path, tmp_path: Path) -> None:
    paths = mixed_paths()
    work = tmp_path / "churn"
    work.mkdir()
    log: list = []
    with serve(root, "--redirect-to-exact", log=log) as (base, pid):
        churn = Churn(root, "web", base, work, pause=0.0)
        churn.start()
        r = run_wrk(base, paths, 6, CONNS, tmp_path)
        churn.stop()
        segments = Collection(str(root / "web")).segments()
    assert churn.failures == [], log
    assert len(churn.cycles) >= 2, churn.cycles   # each cycle: a segment added, found, compacted
    assert all(segs >= 2 for _, segs in churn.cycles)   # compaction had something to merge
    assert len(segments) == 1
    assert r["errors"] == dict(connect=0, read=0, write=0, status=0, timeout=0), (r["raw"], log)
    assert r["status"]["4xx"] == 0 and r["status"]["5xx"] == 0, (r["raw"], log)
