"""`warchive crawllog-revisits`: every duplicate line of a crawl.log becomes a revisit that loads as its original.

Two sources of crawl logs: hand-written Heritrix lines (tests/data/heritrix/crawl.log, whose
originals warcio writes here from the payloads below) and crawls of tests/testsite.py by our own
crawler, with dedup writing nothing (``--dedup skip``) or revisits that are then lost (the WARCs
copied by warcio without their revisit records). Expected payloads come from the fixture's
definition or the site's, never from our own output; warcio checks the WARCs and cdxj-indexer
indexes them.
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import email.utils
import hashlib
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testsite import DOMAIN, Site, add_standard_host, html
from warchive.capture.crawl_log import read_log
from warchive.capture.crawler import CrawlConfig, Crawler
from warchive.capture.log_duplicates import read_duplicates
from warchive.collection import Collection
from warchive.replay.load import CaptureLoader

DATA = Path(__file__).resolve().parents[1] / "data" / "heritrix"
# warcio's command from the test environment: beside this interpreter, else on PATH
WARCIO = Path(sys.executable).parent / "warcio"
if not WARCIO.exists():
    WARCIO = Path(shutil.which("warcio") or "warcio")

# the payloads of the originals (tests/data/README.md, "Heritrix crawl log")
P1 = b"<html><body>the same URL, fetched twice</body></html>\n"
P2 = b"<html><body>one payload under many URLs</body></html>\n"
P3 = b"<html><body>the payload the DeDuplicator named</body></html>\n"
# (url, WARC-Date, payload, file) of each original
ORIGINALS = [
    ("http://a.test/same", "2024-01-01T10:00:00Z", P1, "ORIG-0.warc.gz"),
    ("http://a.test/orig", "2024-01-01T10:00:05Z", P2, "ORIG-0.warc.gz"),
    ("http://b.test/first", "2024-01-01T10:00:10Z", P3, "ORIG-1.warc.gz"),
    ("http://b.test/second", "2024-01-01T11:00:00Z", P3, "ORIG-2.warc.gz"),
]
# duplicate line URI -> (its original's URI, the payload it must load as)
RESOLVED = {
    "http://a.test/same": ("http://a.test/same", P1),          # same URL
    "http://a.test/copy-1": ("http://a.test/orig", P2),        # URL-agnostic (duplicate:digest)
    "http://x.test/copy-2": ("http://a.test/orig", P2),        # URL-agnostic (warcRevisit:uriAgnosticDigest)
    "http://c.test/copy": ("http://b.test/first", P3),         # DeDuplicator's origin file, not the later one
}
UNRESOLVED = {"http://a.test/lost", "http://a.test/orig"}      # no such payload; a 304


def sha1_label(b: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(b).digest()).decode()


def write_originals(coll: Path) -> None:
    """The originals, written by warcio (not by us), added to a new collection."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    tmp = coll.parent / "originals"
    tmp.mkdir()
    files = {}
    for url, date, payload, name in ORIGINALS:
        fh = files.get(name) or open(tmp / name, "wb")
        files[name] = fh
        w = WARCWriter(fh, gzip=True)
        head = StatusAndHeaders("200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(payload)))],
                                protocol="HTTP/1.1")
        w.write_record(w.create_warc_record(url, "response", payload=io.BytesIO(payload), http_headers=head,
                                            warc_headers_dict={"WARC-Date": date}))
    for fh in files.values():
        fh.close()
    Collection.init(str(coll)).add([str(tmp / n) for n in sorted(files)])


def run_cli(*args) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, "-m", "warchive", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=120)


def revisit_records(out: Path):
    """(headers, block) of every revisit in OUT/archive, read by warcio."""
    from warcio.archiveiterator import ArchiveIterator

    recs = []
    for p in sorted((out / "archive").glob("*.warc.gz")):
        with open(p, "rb") as f:
            for rec in ArchiveIterator(f):
                if rec.rec_type == "revisit":
                    recs.append((rec.rec_headers, rec.content_stream().read()))
    return recs


def assert_valid_and_indexed_as_cdxj_indexer(out: Path, cdxj_indexer) -> None:
    warcs = sorted((out / "archive").glob("*.warc.gz"))
    assert warcs
    check = subprocess.run([str(WARCIO), "check", "-v", *map(str, warcs)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    run = cdxj_indexer(warcs, [])
    assert run.error is None, run.error
    ours = b"".join(p.read_bytes() for p in sorted((out / "indexes").glob("*.cdxj")))
    assert sorted(ours.splitlines()) == sorted(run.output.splitlines())


def loads_as(loader: CaptureLoader, url: str, ts: str):
    """(URI of the record the payload came from, the payload) of the capture of url closest to ts,
    which must be a revisit."""
    with loader.load_closest(url, ts) as cap:
        assert cap.warc_headers.get("WARC-Type") == "revisit", f"{url} at {ts} is not the revisit"
        assert cap.resolved_by != "self"
        payload_from = [r.target_uri for r in cap.records if "payload" in r.role]
        return payload_from[0], cap.read()


@pytest.fixture
def heritrix(tmp_path):
    coll = tmp_path / "coll"
    write_originals(coll)
    return coll, tmp_path / "out"


def test_the_fixture_is_what_the_readme_says():
    lines = (DATA / "crawl.log").read_text().splitlines()
    digests = {ln.split()[3]: ln.split()[9] for ln in lines}
    for uri, (_, payload) in RESOLVED.items():
        assert digests[uri] == sha1_label(payload), uri
    assert digests["http://a.test/lost"] == sha1_label(b"<html><body>never archived</body></html>\n")


def test_heritrix_lines_become_revisits_that_load_as_their_originals(heritrix, cdxj_indexer):
    coll, out = heritrix
    r = run_cli("crawllog-revisits", DATA / "crawl.log", "--index", coll, "-o", out, "--no-fsync")
    assert r.returncode == 1, r.stderr       # two lines unresolved
    recs = revisit_records(out)
    assert sorted(h.get_header("WARC-Target-URI") for h, _ in recs) == sorted(RESOLVED)
    log = {ln.split()[3]: ln.split() for ln in (DATA / "crawl.log").read_text().splitlines()}
    dates = {u: d for u, d, _, _ in ORIGINALS}
    for h, block in recs:
        uri = h.get_header("WARC-Target-URI")
        orig_uri, payload = RESOLVED[uri]
        fetch = log[uri][8].split("+")[0]    # field 9: the fetch's begin, 17 digits
        assert h.get_header("WARC-Date").startswith(
            f"{fetch[:4]}-{fetch[4:6]}-{fetch[6:8]}T{fetch[8:10]}:{fetch[10:12]}:{fetch[12:14]}.{fetch[14:17]}")
        assert h.get_header("WARC-Payload-Digest") == log[uri][9] == sha1_label(payload)
        assert h.get_header("WARC-Profile") == "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
        assert h.get_header("WARC-Refers-To-Target-URI") == orig_uri
        assert h.get_header("WARC-Refers-To-Date") == dates[orig_uri]
        assert h.get_header("WARC-Refers-To", "").startswith("<urn:uuid:")
        assert h.get_header("Content-Length") == "0" and block == b""
    with CaptureLoader([str(coll), str(out)]) as loader:
        for uri, (orig_uri, payload) in RESOLVED.items():
            got_uri, body = loads_as(loader, uri, log[uri][8][:14])
            assert (got_uri, body) == (orig_uri, payload), uri
    # the CLI's load, as a user runs it
    ld = subprocess.run([sys.executable, "-m", "warchive", "load", "http://a.test/copy-1", "20240102090002",
                         str(coll), str(out)], capture_output=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert ld.returncode == 0, ld.stderr
    assert ld.stdout.endswith(b"\r\n\r\n" + P2)
    # unresolved lines: listed on stderr with the reason, kept as they were
    kept = (out / "unresolved.crawl.log").read_text().splitlines()
    assert {ln.split()[3] for ln in kept} == UNRESOLVED
    assert all(ln in (DATA / "crawl.log").read_text().splitlines() for ln in kept)
    for uri in UNRESOLVED:
        assert f"{uri}: not written" in r.stderr
    assert_valid_and_indexed_as_cdxj_indexer(out, cdxj_indexer)


def test_a_second_run_writes_nothing_twice(heritrix):
    coll, out = heritrix
    run_cli("crawllog-revisits", DATA / "crawl.log", "--index", coll, "-o", out, "--no-fsync")
    again = out.parent / "again"
    r = run_cli("crawllog-revisits", DATA / "crawl.log", "--index", coll, "--index", out, "-o", again, "--no-fsync")
    assert r.returncode == 1
    assert not list(again.glob("archive/*.warc*"))
    assert f"{len(RESOLVED)} already in the index" in r.stderr


def test_add_puts_the_revisits_into_the_collection(heritrix):
    coll, out = heritrix
    r = run_cli("crawllog-revisits", DATA / "crawl.log", "--index", coll, "-o", out, "--add", "--no-fsync")
    assert r.returncode == 1, r.stderr
    with CaptureLoader([str(coll)]) as loader:
        for uri, (orig_uri, payload) in RESOLVED.items():
            assert loads_as(loader, uri, "20240102090010") == (orig_uri, payload)


def test_size_capped_files(heritrix, cdxj_indexer):
    coll, out = heritrix
    r = run_cli("crawllog-revisits", DATA / "crawl.log", "--index", coll, "-o", out, "--max-size", "1500",
                "--no-fsync")
    assert r.returncode == 1, r.stderr
    warcs = sorted((out / "archive").glob("*.warc.gz"))
    assert len(warcs) >= 2
    assert sum(len(revisit_records_of(p)) for p in warcs) == len(RESOLVED)
    for p in warcs:       # over the cap only when a file holds its warcinfo and one record
        assert p.stat().st_size <= 1500 or len(revisit_records_of(p)) == 1
    assert_valid_and_indexed_as_cdxj_indexer(out, cdxj_indexer)


def revisit_records_of(p: Path):
    from warcio.archiveiterator import ArchiveIterator

    with open(p, "rb") as f:
        return [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(f) if r.rec_type == "revisit"]


def test_warc_1_0(heritrix):
    coll, out = heritrix
    run_cli("crawllog-revisits", DATA / "crawl.log", "--index", coll, "-o", out, "--warc-version", "1.0",
            "--no-fsync")
    recs = revisit_records(out)
    assert recs and all(h.protocol == "WARC/1.0" and h.get_header("WARC-Profile") ==
                        "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest" for h, _ in recs)


def test_bad_input_is_one_line(tmp_path, heritrix):
    coll, out = heritrix
    bad = tmp_path / "bad.log"
    bad.write_text((DATA / "crawl.log").read_text() + "not a crawl log line\n")
    r = run_cli("crawllog-revisits", bad, "--index", coll, "-o", out)
    assert r.returncode == 1 and "Traceback" not in r.stderr and f"{bad} line 9" in r.stderr
    assert not list(out.glob("archive/*.warc*")) and not (out / "unresolved.crawl.log").exists()
    r = run_cli("crawllog-revisits", bad, "--index", coll, "-o", out, "--skip-errors", "--no-fsync")
    assert "1 bad lines skipped" in r.stderr and "Traceback" not in r.stderr
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    warc = sorted((coll / "archive").glob("*.warc.gz"))[0]
    for args, named in (([tmp_path / "missing.log", "--index", coll], tmp_path / "missing.log"),
                        ([tmp_path, "--index", coll], tmp_path),
                        ([empty, "--index", coll], empty),
                        ([warc, "--index", coll], warc),
                        ([DATA / "crawl.log", "--index", tmp_path / "nope"], tmp_path / "nope"),
                        ([DATA / "crawl.log", "--index", empty], empty),
                        ([DATA / "crawl.log", "--index", DATA / "crawl.log"], DATA / "crawl.log"),
                        ([DATA / "crawl.log", "--index", warc], warc)):
        r = run_cli("crawllog-revisits", *args, "-o", out)
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        assert r.stderr.startswith(f"warchive: error: {named}") and len(r.stderr.splitlines()) == 1, r.stderr


# --------------------------------------------------------------------------- our own crawler

def site_with_duplicates() -> Site:
    site = Site()
    for i in (1, 2):
        add_standard_host(site, f"h{i:03d}.{DOMAIN}", i, pages=2)
    return site


def crawl(site: Site, coll: Path, dedup: str) -> Crawler:
    cfg = CrawlConfig(seeds=[f"http://h001.{DOMAIN}/", f"http://h002.{DOMAIN}/"], delay_factor=0.0,
                      min_delay=0.02, max_delay=0.02, max_hops=3, dedup=dedup, dedup_min_size=0, fsync=False,
                      concurrency=4, read_timeout=3.0, total_timeout=5.0, resolve={"*." + DOMAIN: "127.0.0.1"},
                      port_map={"80": site.port}, allow_addresses=["127.0.0.1"])
    c = Crawler(cfg, str(coll))
    asyncio.run(c.run())
    return c


def strip_revisits(src: Path, dst: Path) -> None:
    """A copy of a collection's WARCs without their revisit records (warcio reads and writes),
    indexed anew: an archive whose revisits were lost."""
    from warcio.archiveiterator import ArchiveIterator
    from warcio.warcwriter import WARCWriter

    tmp = dst.parent / "stripped"
    tmp.mkdir()
    for p in sorted((src / "archive").glob("*.warc.gz")):
        with open(p, "rb") as f, open(tmp / p.name, "wb") as o:
            w = WARCWriter(o, gzip=True)
            for rec in ArchiveIterator(f):
                if rec.rec_type != "revisit":
                    w.write_record(rec)
    Collection.init(str(dst)).add(sorted(str(p) for p in tmp.iterdir()))


def check_every_duplicate_loads(log_path: str, coll: Path, out: Path) -> int:
    dups = list(read_duplicates([log_path]))
    assert dups
    dup = html("duplicate", "<p>the same payload under two URLs</p>")
    with CaptureLoader([str(coll), str(out)]) as loader:
        for d in dups:
            _, body = loads_as(loader, d.entry.uri, d.timestamp)
            assert sha1_label(body) == d.entry.digest, d.entry.uri    # the payload the crawler saw
            if d.entry.uri.endswith(("/dup/a", "/dup/b")):
                assert body == dup
    return len(dups)


@pytest.mark.parametrize("dedup", ["skip", "revisit"])
def test_our_crawl_log(tmp_path, dedup, cdxj_indexer):
    with site_with_duplicates() as site:
        crawled = tmp_path / "crawled"
        c = crawl(site, crawled, dedup)
    log_path = os.path.join(c.session_dir, "crawl.log")
    notes = [a for e in read_log(log_path) for a in e.annotations if a.startswith("duplicate:")]
    assert notes and set(notes) == {"duplicate:skipped" if dedup == "skip" else "duplicate:digest"}
    if dedup == "revisit":
        # its own collection has the revisits: nothing to write
        r = run_cli("crawllog-revisits", log_path, "--index", crawled, "-o", tmp_path / "none", "--no-fsync")
        assert r.returncode == 0 and f"{len(notes)} already in the index" in r.stderr, r.stderr
        coll = tmp_path / "lost"
        strip_revisits(crawled, coll)
    else:
        coll = crawled
    out = tmp_path / "out"
    r = run_cli("crawllog-revisits", log_path, "--index", coll, "-o", out, "--no-fsync")
    assert r.returncode == 0, r.stderr
    assert len(revisit_records(out)) == len(notes)
    assert any(h.get_header("WARC-Refers-To-Target-URI") != h.get_header("WARC-Target-URI")
               for h, _ in revisit_records(out)), "no URL-agnostic duplicate in the crawl"
    assert check_every_duplicate_loads(log_path, coll, out) == len(notes)
    assert_valid_and_indexed_as_cdxj_indexer(out, cdxj_indexer)
    shutil.rmtree(out)


def test_pywb_replays_the_revisits_as_their_originals(heritrix, cdxj_indexer):
    """pywb 2.10, given the originals' WARCs and the revisits' (and cdxj-indexer's index of the
    originals beside ours of the revisits), serves each revisit with its original's payload."""
    import pywb_oracle

    pywb_oracle.require_pywb()
    coll, out = heritrix
    r = run_cli("crawllog-revisits", DATA / "crawl.log", "--index", coll, "-o", out, "--no-fsync")
    assert r.returncode == 1, r.stderr
    originals = sorted((coll / "archive").glob("*.warc.gz"))
    run = cdxj_indexer(originals, [])
    assert run.error is None, run.error
    orig_index = out.parent / "originals.cdxj"
    orig_index.write_bytes(b"".join(sorted(ln + b"\n" for ln in run.output.splitlines() if ln)))
    ours = sorted((out / "indexes").glob("*.cdxj"))
    log = {ln.split()[3]: ln.split() for ln in (DATA / "crawl.log").read_text().splitlines()}
    cases = sorted(RESOLVED)
    answers = pywb_oracle.pywb_load(originals + sorted((out / "archive").glob("*.warc.gz")),
                                    [orig_index, *ours],
                                    [{"replay": f"{log[u][8][:14]}id_/{u}"} for u in cases])
    for uri, ans in zip(cases, answers):
        assert int(str(ans["status"]).split()[0]) == 200, (uri, ans["status"])
        assert base64.b64decode(ans["body"]) == RESOLVED[uri][1], uri
        served = dict((k.lower(), v) for k, v in ans["headers"])
        ts = log[uri][8][:14]     # the revisit's own time, not its original's
        when = datetime.datetime.strptime(ts, "%Y%m%d%H%M%S").replace(tzinfo=datetime.timezone.utc)
        assert served.get("memento-datetime") == email.utils.format_datetime(when, usegmt=True), served


def test_a_loose_index_file_with_and_without_the_archive(heritrix, cdxj_indexer):
    """--index a CDXJ file (cdxj-indexer's): with --archive the originals' heads give
    WARC-Refers-To and the exact date; without it the date is the index's timestamp."""
    coll, out = heritrix
    originals = sorted((coll / "archive").glob("*.warc.gz"))
    run = cdxj_indexer(originals, [])
    assert run.error is None, run.error
    cdxj = out.parent / "originals.cdxj"
    cdxj.write_bytes(b"".join(sorted(ln + b"\n" for ln in run.output.splitlines() if ln)))
    dates = {u: d for u, d, _, _ in ORIGINALS}
    for archive, out_dir in (([], out.parent / "bare"), (["--archive", coll / "archive"], out)):
        r = run_cli("crawllog-revisits", DATA / "crawl.log", "--index", cdxj, *archive, "-o", out_dir, "--no-fsync")
        assert r.returncode == 1, r.stderr
        recs = revisit_records(out_dir)
        assert sorted(h.get_header("WARC-Target-URI") for h, _ in recs) == sorted(RESOLVED)
        for h, _ in recs:
            orig = RESOLVED[h.get_header("WARC-Target-URI")][0]
            assert h.get_header("WARC-Refers-To-Target-URI") == orig
            assert h.get_header("WARC-Refers-To-Date") == dates[orig]     # whole seconds either way
            assert (h.get_header("WARC-Refers-To") is not None) == bool(archive)
        with CaptureLoader([str(cdxj), str(out_dir)], archive_paths=[str(coll / "archive"),
                                                                     str(out_dir / "archive")]) as loader:
            for uri, (orig_uri, payload) in RESOLVED.items():
                assert loads_as(loader, uri, "20240102090010") == (orig_uri, payload)
