"""SIGKILL at random moments, then --resume: no URL is fetched twice, as the server counts fetches.

The guarantee under test (docs/cli.md, crawl, "What a kill costs"): over a crawl killed any
number of times and resumed each time, every URL in scope is requested from the server
exactly once, except a URL whose fetch was in flight at a kill — the session journal holds
its ``fetching`` entry (written just before the request) and no outcome after it — which is
requested once more after that kill. Nothing else is requested twice: not a URL whose fetch
the journal records (fetched, skipped, failed for good), not a URL queued through another
referrer after the resume. The rest of the contract is checked too: every URL the site
defines is fetched and archived (no finished fetch lost), nothing robots.txt forbids is
requested, every payload is written in full once (the dedup digests written before a kill
are known after it), the WARC files pass ``warcio check`` and the collection's index holds
exactly the lines cdxj-indexer makes of them.

Kill points are random (a seeded ``random.Random``: the seed is in every failure message):
each run is killed after a random number of the server's requests plus a random fraction of
a politeness delay, so kills land while waiting, while fetching, while archiving and while
queueing outlinks. The default run makes at least 50 kills; ``-m slow`` makes 300.
Expected values come from the site's definition (``crawlkill.kill_site``), never from an
earlier run of the crawler.
"""

from __future__ import annotations

import base64
import hashlib
import os
import random
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

import crawlkill
from crawlkill import SAME_BODY, kill_site, seeds
from test_crawler import segment_lines
from testsite import DOMAIN
from warchive.capture.crawler import CrawlConfig
from warchive.capture.session import read_session

MIN_DELAY = 0.01
CONCURRENCY = 3


def config(port: int) -> CrawlConfig:
    return CrawlConfig(seeds=seeds(), delay_factor=0.0, min_delay=MIN_DELAY, max_delay=MIN_DELAY, max_hops=60,
                       dedup_min_size=0, fsync=False, concurrency=CONCURRENCY, read_timeout=3.0, total_timeout=5.0,
                       resolve={"*." + DOMAIN: "127.0.0.1"}, port_map={"80": port}, allow_addresses=["127.0.0.1"],
                       index_every=0.05)


@dataclass
class Kill:
    at: float                   # time.time() just after the child was gone
    finished: Set[str]          # URLs the journal said were done (fetched, skipped, failed for good)
    interrupted: Set[str]       # URLs whose "fetching" entry had no outcome after it


@dataclass
class Case:
    seed: int
    coll: Path
    kills: List[Kill] = field(default_factory=list)


def journal_state(path: Path) -> Tuple[Set[str], Set[str]]:
    """(finished, interrupted) as the journal of a killed run says (read with the session reader;
    the "fetching" entries by kind, in journal order)."""
    s = read_session(str(path), skip_errors=True)
    finished: Set[str] = set()
    interrupted: Set[str] = set()
    for r in s.records():
        open_fetch = False
        for e in r.entries:
            if e.kind == "fetching":
                open_fetch = True
            elif e.kind in ("fetch", "failed", "skipped") and (e.hop or r.url) == r.url:
                open_fetch = False
        if open_fetch:
            interrupted.add(r.url)
        if r.state in ("fetched", "skipped"):
            finished.add(r.url)
    return finished, interrupted


def crawl_with_kills(site, expected: Set[Tuple[str, str]], tmp: Path, seed: int, kills: int) -> Case:
    """One crawl of the site into a new collection, SIGKILLed up to `kills` times at random points
    and resumed after each; the last run goes to the end."""
    rng = random.Random(seed)
    coll = tmp / f"c{seed}"
    session = coll / "crawls" / "s"
    case = Case(seed, coll)
    cfg = config(site.port)
    resume = False
    for _ in range(kills):
        done_before = {(h.host, h.target) for h in site.hits()}
        left = len(expected) - len(done_before)
        if left <= 1:
            break
        target = len(site.log) + rng.randint(1, left - 1)
        pause = rng.uniform(0.0, MIN_DELAY * 1.5)
        p = crawlkill.start(cfg, str(coll), str(session), resume)
        deadline = time.time() + 60
        while len(site.log) < target and p.is_alive() and time.time() < deadline:
            time.sleep(0.0005)
        time.sleep(pause)
        if not p.is_alive():    # the run ended before its kill point
            p.join()
            assert p.exitcode == 0, f"seed {seed}: the crawl exited with {p.exitcode}"
            return case
        p.kill()
        p.join()
        finished, interrupted = journal_state(session / "session.journal")
        case.kills.append(Kill(time.time(), finished, interrupted))
        resume = True
    p = crawlkill.start(cfg, str(coll), str(session), resume)
    p.join(120)
    assert p.exitcode == 0, f"seed {seed}: the last run exited with {p.exitcode}"
    return case


def url(host: str, path: str) -> str:
    return f"http://{host}{path}"


def sha1_label(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def warc_records(coll: Path):
    """(type, target URI, HTTP status or None, WARC-Payload-Digest) of every record, read by warcio."""
    from warcio.archiveiterator import ArchiveIterator

    out = []
    for p in sorted((coll / "archive").glob("*.warc.gz")):
        with open(p, "rb") as f:
            for rec in ArchiveIterator(f):
                status = None
                if rec.http_headers is not None and rec.rec_type in ("response", "revisit"):
                    status = int(rec.http_headers.get_statuscode() or 0)
                out.append((rec.rec_type, rec.rec_headers.get_header("WARC-Target-URI"), status,
                            rec.rec_headers.get_header("WARC-Payload-Digest")))
    return out


def check_case(case: Case, hits, expected: Set[Tuple[str, str]], cdxj_indexer) -> Dict[str, int]:
    """Every promise about one killed-and-resumed crawl; returns its figures."""
    why = f"seed {case.seed}, {len(case.kills)} kills"
    n = Counter((h.host, h.target) for h in hits)
    # complete, and nothing the site does not define (robots.txt's /private/ included) requested
    assert set(n) == expected, f"{why}: missing {expected - set(n)}, unexpected {set(n) - expected}"
    # nothing fetched twice but a fetch in flight at a kill, once more per such kill
    allowed = Counter(u for k in case.kills for u in k.interrupted)
    twice = {url(*k): c for k, c in n.items() if c > 1}
    unexplained = {u: c for u, c in twice.items() if c - 1 > allowed[u]}
    assert not unexplained, f"{why}: fetched more than once: {unexplained} (in flight at a kill: {dict(allowed)})"
    for k in case.kills:
        assert len(k.interrupted) <= CONCURRENCY, f"{why}: {len(k.interrupted)} fetches in flight at once"
        again = sorted({url(h.host, h.target) for h in hits if h.t > k.at} & k.finished)
        assert not again, f"{why}: finished before a kill, fetched after it: {again}"
    # archived: a response or revisit for every URL; each payload written in full once
    recs = warc_records(case.coll)
    archived = {u for t, u, _, _ in recs if t in ("response", "revisit")}
    assert {url(*k) for k in expected} <= archived, f"{why}: not archived: {({url(*k) for k in expected} - archived)}"
    full = Counter(d for t, u, st, d in recs if t == "response" and u.startswith("http") and st and 200 <= st < 300)
    assert full[sha1_label(SAME_BODY)] == 1, f"{why}: the /same/ payload written in full {full[sha1_label(SAME_BODY)]} times"
    assert max(full.values()) == 1, f"{why}: payloads written in full more than once: {[d for d, c in full.items() if c > 1]}"
    # no .open file left; the index is cdxj-indexer's lines over the WARCs
    assert not list((case.coll / "archive").glob("*.open")), why
    files = sorted((case.coll / "archive").glob("*.warc.gz"))
    run = cdxj_indexer(files, [])
    assert run.error is None, run.error
    assert sorted(set(segment_lines(case.coll))) == sorted(ln for ln in run.output.splitlines() if ln), why
    return {"kills": len(case.kills), "twice": len(twice), "interrupted": sum(len(k.interrupted) for k in case.kills)}


def run_cases(tmp_path: Path, cdxj_indexer, n_cases: int, kills_per_case: int, base_seed: int) -> Dict[str, int]:
    site, expected = kill_site()
    total: Counter = Counter()
    cases: List[Case] = []
    with site:
        for i in range(n_cases):
            site.clear_log()
            case = crawl_with_kills(site, expected, tmp_path, base_seed + i, kills_per_case)
            total.update(check_case(case, site.hits(), expected, cdxj_indexer))
            cases.append(case)
    files = [str(p) for c in cases for p in sorted((c.coll / "archive").glob("*.warc.gz"))]
    r = subprocess.run([sys.executable, "-m", "warcio.cli", "check", *files], capture_output=True, timeout=300)
    assert r.returncode == 0, r.stdout.decode()[-2000:]
    print(f"\n{n_cases} crawls, {total['kills']} kills: {total['twice']} URLs fetched twice "
          f"({total['interrupted']} fetches in flight at a kill)")
    return dict(total)


def test_random_kills_never_fetch_twice(tmp_path, cdxj_indexer):
    """At least 50 random SIGKILLs, each resumed: the server sees each URL once (or once more after a
    kill that interrupted its fetch), nothing is lost, dedup and the index survive."""
    seed = int(os.environ.get("WARCHIVE_KILL_SEED", "1000"))
    total = run_cases(tmp_path, cdxj_indexer, 28, 2, seed)
    assert total["kills"] >= 50, f"only {total['kills']} kills landed before the crawls ended"


@pytest.mark.slow
def test_random_kills_never_fetch_twice_many(tmp_path, cdxj_indexer):
    seed = int(os.environ.get("WARCHIVE_KILL_SEED", "5000"))
    total = run_cases(tmp_path, cdxj_indexer, 120, 3, seed)
    assert total["kills"] >= 300, f"only {total['kills']} kills landed before the crawls ended"
