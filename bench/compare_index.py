"""The capture index against pywb's, in one run: lookups in process, index bytes, HTTP load.

    python bench/compare_index.py [--cdxj SORTED.cdxj | --corpus DIR] [--seconds 10] [--json OUT]

Input: a sorted CDXJ file (``--cdxj``), else the index of the ``*.warc.gz`` of
``--corpus`` (default ``$WARCHIVE_CORPUS`` or corpus/ at the repository root) made with
``warchive index --sort``. From it the run builds a warchive index segment
(default settings), a ZipNum cluster of 3,000-line blocks (``write_zipnum``,
gzip level 6 as Common Crawl's tools) and gzip -9 of the whole CDXJ.

Lookups: every line's URL (shuffled, seed 7) is looked up exactly, the SURT key
of the query URL computed inside the timed call, warm (each index read once
before timing), on one core. Rows:

  warchive segment       ``Segment.lookup(surt(url))``: the mmap lookup kernel
  warchive Index.query   ``Index(seg).query(url)``: the Python API, capture records
                         (the quick path: no Query, no JSON; fields read lazily)
  Index.query closest    ``Index(seg).query(url, closest=ts)``, ts the line's own
                         timestamp: the captures in closest order
  warchive Index.answer  ``Index(seg).answer("url=...")``: the whole CDX API path
                         (query string, SURT, lookup, CDXJ body), what the HTTP
                         endpoint runs per request
  warchive ZipNum        ``ZipNumIndex.range`` on the cluster (3,000-line blocks)
  bisect                 ``bisect`` over the list of lines in RAM
  pywb binsearch         ``canonicalize(url)`` + ``pywb.utils.binsearch.iter_exact``
                         on the open sorted CDXJ (pywb 2.10, in .venv-pywb)
  pywb FileIndexSource   ``FileIndexSource(cdxj).load_index(CDXQuery(url))``: what
                         pywb's warcserver does per query (opens the file each time)
  pywb aggregator        ``SimpleAggregator({coll: FileIndexSource})(params)``: pywb's
                         query of one collection (lines named, merged, processed:
                         the warcserver's less fuzzy matching), beside Index.query
  pywb aggregator closest  the same with ``closest=ts``, beside Index.query closest
  pywb ZipNum            ``ZipNumIndexSource(idx).load_index(CDXQuery(url))``
                         (a row slower than 2,500/s is timed on the first 5,000 URLs)

Each row's answers are checked (the number of lines per URL, and for the
warchive rows the lines themselves, equal bisect's, in closest order for the
closest rows); a mismatch fails the run (exit 1). Rates are the best of 3
rounds over all URLs; p50/p99 are of single calls (perf_counter_ns).

HTTP: ``warchive serve`` (uvicorn, one process) on a collection holding the
segment, and pywb 2.10's server (its ``wayback`` app, gevent) on the sorted
CDXJ, each loaded by ``wrk -t2 -c50 -d SECONDS --latency`` with a Lua script
cycling through the URLs as ``/<coll>/cdx?url=...`` (exact), after a 2 s warm-up.
wrk shares the machine's cores with the server. ``--baseline-src DIR`` adds a
``warchive serve`` run from another source tree (e.g. an export of another
revision, kernels built), so that a change is measured against it in one run.

Nothing is asserted about time: targets are printed as PASS or SHORT.
"""

from __future__ import annotations

import argparse
import bisect
import calendar
import contextlib
import gzip
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

ZIPNUM_LINES = 3000
ROUNDS = 3

PYWB_CHILD = r'''
import json, sys, time
from pywb.utils.binsearch import iter_exact
from pywb.utils.canonicalize import canonicalize
from pywb.warcserver.index.indexsource import FileIndexSource
from pywb.warcserver.index.zipnum import ZipNumIndexSource
from pywb.warcserver.index.query import CDXQuery
from pywb.warcserver.index.aggregator import SimpleAggregator

cdxj, idx, urls_path, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
urls = json.load(open(urls_path))        # [url, timestamp] pairs
SAMPLE = 5000
now = time.perf_counter_ns
fh = open(cdxj, "rb")

def binsearch(p):
    return sum(1 for _ in iter_exact(fh, canonicalize(p[0]).encode("utf-8")))

fsrc = FileIndexSource(cdxj)
def filesource(p):
    return sum(1 for _ in fsrc.load_index(CDXQuery({"url": p[0], "matchType": "exact"}).params))

agg = SimpleAggregator({"coll": fsrc})
def load(p):
    return sum(1 for _ in agg({"url": p[0], "matchType": "exact"})[0])

def load_closest(p):
    return sum(1 for _ in agg({"url": p[0], "matchType": "exact", "closest": p[1]})[0])

zsrc = ZipNumIndexSource(idx, None)
def zipnum(p):
    return sum(1 for _ in zsrc.load_index(CDXQuery({"url": p[0], "matchType": "exact"}).params))

out = {}
for name, fn in (("pywb binsearch", binsearch), ("pywb FileIndexSource", filesource), ("pywb aggregator", load),
                 ("pywb aggregator closest", load_closest), ("pywb ZipNum", zipnum)):
    t = time.perf_counter()
    counts = [fn(u) for u in urls[:500]]
    if time.perf_counter() - t > 0.2:   # slower than 2,500/s: a sample of the URLs is enough
        urls = urls[:SAMPLE]
    counts += [fn(u) for u in urls[500:]]      # warm, and the answers
    best = None
    for _ in range(rounds):
        t = time.perf_counter()
        for u in urls:
            fn(u)
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    lat = []
    for u in urls:
        t = now()
        fn(u)
        lat.append(now() - t)
    lat.sort()
    out[name] = {"rate": len(urls) / best, "p50_us": lat[len(lat) // 2] / 1e3,
                 "p99_us": lat[int(len(lat) * 0.99)] / 1e3, "counts": counts, "n": len(urls)}
    urls = json.load(open(urls_path))
json.dump(out, sys.stdout)
'''

WRK_LUA = r'''
local paths = {}
for line in io.lines("%s") do paths[#paths + 1] = line end
local i = 0
request = function()
  i = i + 1
  if i > #paths then i = 1 end
  return wrk.format("GET", paths[i])
end
'''


# --------------------------------------------------------------------------- inputs

def corpus_cdxj(corpus: str, work: Path) -> Path:
    files = sorted(str(p) for p in Path(corpus).glob("*.warc.gz"))
    if not files:
        raise SystemExit(f"no *.warc.gz in {corpus}; give --cdxj or --corpus")
    out = work / "corpus.cdxj"
    subprocess.run([sys.executable, "-m", "warchive", "index", "--sort", *files, "-o", str(out)], check=True)
    return out


def read_lines(path: Path) -> List[bytes]:
    lines = [x for x in path.read_bytes().split(b"\n") if x]
    if lines != sorted(lines):
        raise SystemExit(f"{path} is not sorted bytewise")
    return lines


def line_urls(lines: Sequence[bytes]) -> List[Tuple[str, str]]:
    """(url, timestamp) of every CDXJ line with a url, shuffled."""
    out = []
    for line in lines:
        parts = line.split(b" ", 2)
        if len(parts) == 3 and parts[2].startswith(b"{"):
            url = json.loads(parts[2]).get("url")
            if url:
                out.append((url, parts[1].decode()))
    random.Random(7).shuffle(out)
    return out


# --------------------------------------------------------------------------- in-process lookups

def bisect_lookup(lines: List[bytes], key: bytes) -> List[bytes]:
    a = bisect.bisect_left(lines, key + b" ")
    return lines[a:bisect.bisect_left(lines, key + b"!", a)]


def seconds(ts: str) -> int:
    """The reference for closest order (R43): timestamp_to_datetime's clamping, in seconds."""
    from warchive.timestamps import timestamp_to_datetime

    return calendar.timegm(timestamp_to_datetime(ts).utctimetuple())


def closest_order(lines: List[bytes], ts: str) -> List[bytes]:
    target = seconds(ts)
    return sorted(lines, key=lambda x: abs(target - seconds(x.split(b" ", 2)[1].decode())))


def record_ok(c: Any) -> bool:
    """Does a capture record of Index(seg).query hold its line's fields, in output=json order?"""
    key, ts, js = c.line.split(b" ", 2)
    want = {"urlkey": key.decode(), "timestamp": ts.decode(), **json.loads(js), "source": "cdx", "source-coll": "cdx"}
    return list(c.items()) == list(want.items())


def strip_source(line: bytes) -> bytes:
    head, _, js = line.partition(b" {")
    fields = json.loads(b"{" + js)
    fields.pop("source", None)
    fields.pop("source-coll", None)
    return head + b" " + json.dumps(fields).encode("utf-8")


def time_row(fn: Callable[[Any], object], urls: Sequence[Any]) -> Dict:
    answers = [fn(u) for u in urls]          # warm
    best = float("inf")
    for _ in range(ROUNDS):
        t = time.perf_counter()
        for u in urls:
            fn(u)
        best = min(best, time.perf_counter() - t)
    now = time.perf_counter_ns
    lat = []
    for u in urls:
        t0 = now()
        fn(u)
        lat.append(now() - t0)
    lat.sort()
    return {"rate": len(urls) / best, "p50_us": lat[len(lat) // 2] / 1e3,
            "p99_us": lat[int(len(lat) * 0.99)] / 1e3, "answers": answers}


def warchive_rows(lines: List[bytes], seg: Path, zipnum_idx: Path, pairs: Sequence[Tuple[str, str]],
                  expected: List[List[bytes]]) -> Tuple[Dict[str, Dict], List[str]]:
    from warchive.index.query import Index
    from warchive.index.segment import Segment
    from warchive.index.zipnum import ZipNumIndex
    from warchive.surt import surt

    rows: Dict[str, Dict] = {}
    bad: List[str] = []
    urls = [u for u, _ in pairs]
    burls = [u.encode("utf-8") for u in urls]     # the kernels take bytes (or str)
    want = {"warchive Index.query closest": [closest_order(e, ts) for e, (_, ts) in zip(expected, pairs)]}
    with Segment(seg) as s:
        lookup = s.lookup
        rows["warchive segment"] = time_row(lambda u: lookup(surt(u)), burls)
    with Index(str(seg)) as ix:
        query = ix.query
        rows["warchive Index.query"] = time_row(query, urls)
        got = rows["warchive Index.query"]["answers"]
        rows["warchive Index.query"]["answers"] = [[c.line for c in caps] for caps in got]
        # and the records are the output=json fields (a loose file's source is named "cdx")
        if not all(record_ok(c) for caps in got[:2000] for c in caps):
            bad.append("warchive Index.query (fields)")

        def closest(p: Tuple[str, str]) -> List[Any]:
            return query(p[0], closest=p[1])
        rows["warchive Index.query closest"] = time_row(closest, pairs)
        got = rows["warchive Index.query closest"]["answers"]
        rows["warchive Index.query closest"]["answers"] = [[c.line for c in caps] for caps in got]
        answer = ix.answer
        quote = urllib.parse.quote

        def http_path(u: str) -> List[bytes]:
            return answer("url=" + quote(u, safe="")).read().splitlines()
        rows["warchive Index.answer"] = time_row(http_path, urls)
    with ZipNumIndex(zipnum_idx, cache_blocks=64) as z:
        rng = z.range

        def zlookup(u: bytes) -> List[bytes]:
            k = surt(u)
            return list(rng(k + b" ", k + b"!"))
        rows["warchive ZipNum"] = time_row(zlookup, burls)
    rows["bisect"] = time_row(lambda u: bisect_lookup(lines, surt(u)), burls)
    for name, row in rows.items():
        got = row.pop("answers")
        if name == "warchive Index.answer":
            # the API's CDXJ lines are the index lines plus pywb's "source" and "source-coll"
            ok = [[strip_source(x) for x in ans] for ans in got] == expected
        else:
            ok = [list(x) for x in got] == want.get(name, expected)
        if not ok:
            bad.append(name)
        row["counts_ok"] = ok
    return rows, bad


def pywb_rows(cdxj: Path, zipnum_idx: Path, pairs: Sequence[Tuple[str, str]], expected: List[List[bytes]],
              work: Path) -> Tuple[Dict[str, Dict], List[str]]:
    from pywb_oracle import pywb_python

    (work / "urls.json").write_text(json.dumps([list(p) for p in pairs]))
    (work / "pywb_child.py").write_text(PYWB_CHILD)
    out = subprocess.run([str(pywb_python()), "-I", str(work / "pywb_child.py"), str(cdxj), str(zipnum_idx),
                          str(work / "urls.json"), str(ROUNDS)], check=True, capture_output=True, cwd=work)
    rows = json.loads(out.stdout)
    want = [len(x) for x in expected]
    bad = []
    for name, row in rows.items():
        counts = row.pop("counts")
        row["counts_ok"] = counts == want[:len(counts)]
        if not row["counts_ok"]:
            diff = sum(1 for a, b in zip(counts, want) if a != b)
            bad.append(f"{name} ({diff} URLs differ)")
    return rows, bad


# --------------------------------------------------------------------------- sizes

def zipnum_cluster(lines: List[bytes], work: Path) -> Tuple[Path, int]:
    from warchive.index.zipnum import write_zipnum

    (work / "zipnum").mkdir()
    cl = write_zipnum(iter(lines), work / "zipnum" / "cluster", lines_per_block=ZIPNUM_LINES,
                      compresslevel=6)
    total = sum(os.path.getsize(p) for p in (work / "zipnum").iterdir() if not p.name.endswith(".loc"))
    return Path(cl.idx), total


def sizes(lines: List[bytes], seg: Path, zipnum_bytes: int, work: Path) -> List[Tuple[str, int]]:
    from warchive.index.segment import write_segment

    raw = sum(len(x) + 1 for x in lines)
    deflate = work / "deflate.seg"
    write_segment(lines, deflate, compression="deflate")
    return [
        ("plain CDXJ", raw),
        ("gzip -9 of the plain CDXJ", len(gzip.compress(b"".join(x + b"\n" for x in lines), 9, mtime=0))),
        (f"ZipNum ({ZIPNUM_LINES}-line blocks, gzip -6, with .idx)", zipnum_bytes),
        ("warchive segment (default: zstd)", os.path.getsize(seg)),
        ("warchive segment (deflate)", os.path.getsize(deflate)),
    ]


# --------------------------------------------------------------------------- HTTP load

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port: int, proc: subprocess.Popen, timeout: float) -> bool:
    """Wait until something listens on 127.0.0.1:port; False when proc ends first or time runs out."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), 0.2):
                return True
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                return False
            time.sleep(0.05)


def stop(proc: subprocess.Popen) -> None:
    """Terminate a server, killing it when it does not end within 10 s."""
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


@contextlib.contextmanager
def warchive_server(seg: Path, work: Path, src: Optional[str] = None) -> Iterator[str]:
    """`warchive serve` on a collection of the segment; from source tree `src` when given."""
    root = work / "collections"
    (root / "coll" / "indexes").mkdir(parents=True, exist_ok=True)
    (root / "coll" / "archive").mkdir(exist_ok=True)
    if not (root / "coll" / "indexes" / "index.seg").exists():
        shutil.copy(seg, root / "coll" / "indexes" / "index.seg")
    port = free_port()
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = src
    # no access log, as pywb's server below (access_log=False)
    proc = subprocess.Popen([sys.executable, "-m", "warchive", "serve", "--root", str(root), "--port", str(port),
                             "--no-access-log"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    try:
        if not wait_listening(port, proc, 30):
            raise RuntimeError(f"warchive serve did not start: {proc.stderr.read().decode()[-2000:]}")
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(proc)


def wrk(base: str, coll: str, urls: Sequence[str], seconds: int, work: Path) -> Dict:
    paths = work / f"paths-{coll}.txt"
    paths.write_text("".join(f"/{coll}/cdx?url={urllib.parse.quote(u, safe='')}\n" for u in urls))
    script = work / "cycle.lua"
    script.write_text(WRK_LUA % paths)
    subprocess.run(["wrk", "-t2", "-c50", "-d2s", "-s", str(script), base], check=True, capture_output=True)
    out = subprocess.run(["wrk", "-t2", "-c50", f"-d{seconds}s", "--latency", "-s", str(script), base],
                         check=True, capture_output=True, text=True).stdout
    return parse_wrk(out)


def parse_wrk(out: str) -> Dict:
    def ms(v: str) -> float:
        m = re.fullmatch(r"([\d.]+)(us|ms|s|m)", v)
        if not m:
            raise ValueError(v)
        return float(m.group(1)) * {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 6e4}[m.group(2)]

    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    lat = {p: ms(v) for p, v in re.findall(r"^\s+(50|75|90|99)%\s+(\S+)", out, re.M)}
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    errors = re.search(r"Socket errors:(.*)", out)
    return {"rps": rps, "p50_ms": lat.get("50"), "p99_ms": lat.get("99"),
            "non_2xx": int(non2xx.group(1)) if non2xx else 0,
            "socket_errors": errors.group(1).strip() if errors else "", "raw": out}


def http_rows(seg: Path, cdxj: Path, urls: Sequence[str], seconds: int, work: Path,
              baseline_src: Optional[str] = None) -> Dict[str, Dict]:
    from pywb_oracle import pywb_server

    some = list(urls[:5000])
    rows = {}
    if baseline_src:
        with warchive_server(seg, work, baseline_src) as base:
            rows["warchive serve (baseline)"] = wrk(base, "coll", some, seconds, work)
    with warchive_server(seg, work) as base:
        rows["warchive serve"] = wrk(base, "coll", some, seconds, work)
    with pywb_server([str(cdxj)], access_log=False) as srv:
        rows["pywb 2.10 (wayback)"] = wrk(srv.base_url, srv.coll, some, seconds, work)
    return rows


# --------------------------------------------------------------------------- report

def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cdxj", help="a sorted CDXJ file (default: index the corpus)")
    ap.add_argument("--corpus", default=os.environ.get("WARCHIVE_CORPUS", str(REPO / "corpus")))
    ap.add_argument("--seconds", type=int, default=10, help="wrk duration per server")
    ap.add_argument("--no-http", action="store_true", help="skip the wrk load")
    ap.add_argument("--baseline-src", help="also load `warchive serve` run from this source tree (before/after)")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args(argv)

    from warchive.index.segment import write_segment

    work = Path(tempfile.mkdtemp(prefix="compare-index-"))
    load = os.getloadavg()
    try:
        cdxj = Path(args.cdxj) if args.cdxj else corpus_cdxj(args.corpus, work)
        lines = read_lines(cdxj)
        pairs = line_urls(lines)
        urls = [u for u, _ in pairs]
        print(f"{cdxj}: {len(lines):,} lines, {sum(map(len, lines)) / len(lines):.0f} B a line; "
              f"{len(urls):,} lookups a round")
        seg = work / "index.seg"
        write_segment(lines, seg)
        zipnum_idx, zipnum_bytes = zipnum_cluster(lines, work)
        from warchive.surt import surt
        expected = [bisect_lookup(lines, surt(u.encode("utf-8"))) for u in urls]

        rows, bad = warchive_rows(lines, seg, zipnum_idx, pairs, expected)
        prow, pbad = pywb_rows(cdxj, zipnum_idx, pairs, expected, work)
        rows.update(prow)
        bad += pbad
        base = rows["pywb binsearch"]["rate"]
        print(f"\nlookups (exact; closest rows: closest=the line's own timestamp), in process, warm, one core, "
              f"SURT of the query URL included (best of {ROUNDS})")
        print(f"{'':28s} {'lookups/s':>12s} {'x pywb binsearch':>17s} {'p50 us':>8s} {'p99 us':>8s}  answers")
        order = ["warchive segment", "warchive Index.query", "warchive Index.query closest", "warchive Index.answer",
                 "warchive ZipNum", "bisect", "pywb binsearch", "pywb FileIndexSource", "pywb aggregator",
                 "pywb aggregator closest", "pywb ZipNum"]
        rows = {k: rows[k] for k in order if k in rows} | {k: v for k, v in rows.items() if k not in order}
        for name, r in rows.items():
            print(f"{name:28s} {r['rate']:12,.0f} {r['rate'] / base:17.1f} {r['p50_us']:8.1f} {r['p99_us']:8.1f}  "
                  f"{'ok' if r['counts_ok'] else 'DIFFER'}{'' if r.get('n', len(urls)) == len(urls) else ' (first %d URLs)' % r['n']}")

        size_rows = sizes(lines, seg, zipnum_bytes, work)
        print(f"\nindex bytes ({len(lines):,} lines)")
        for name, n in size_rows:
            print(f"{name:48s} {n:12,d} B {n / len(lines):7.1f} B/line {n / zipnum_bytes:6.3f} x ZipNum")

        http: Dict[str, Dict] = {}
        if not args.no_http:
            http = http_rows(seg, cdxj, urls, args.seconds, work, args.baseline_src)
            print(f"\nHTTP: wrk -t2 -c50 -d{args.seconds}s, exact /cdx queries cycling over {min(5000, len(urls))} URLs")
            pbase = http["pywb 2.10 (wayback)"]["rps"]
            for name, h in http.items():
                print(f"{name:28s} {h['rps']:10,.0f} req/s {h['rps'] / pbase:6.1f} x pywb  p50 {h['p50_ms']:.2f} ms  "
                      f"p99 {h['p99_ms']:.2f} ms  non-2xx {h['non_2xx']}  {h['socket_errors']}")
                if h["non_2xx"]:
                    bad.append(f"{name}: {h['non_2xx']} non-2xx answers")

        seg_rate = rows["warchive segment"]
        seg_size = dict(size_rows)["warchive segment (default: zstd)"]
        exact, closest = rows["warchive Index.query"], rows["warchive Index.query closest"]
        targets = [
            ("segment exact lookups/s >= 200,000", seg_rate["rate"] >= 200_000, f"{seg_rate['rate']:,.0f}"),
            ("segment p99 <= 100 us", seg_rate["p99_us"] <= 100, f"{seg_rate['p99_us']:.1f} us"),
            ("segment bytes <= 0.75 x ZipNum", seg_size <= 0.75 * zipnum_bytes, f"{seg_size / zipnum_bytes:.3f}"),
            ("Index.query exact >= 250,000/s", exact["rate"] >= 250_000,
             f"{exact['rate']:,.0f} (p50 {exact['p50_us']:.1f} us, p99 {exact['p99_us']:.1f} us)"),
            ("Index.query closest >= 100,000/s", closest["rate"] >= 100_000,
             f"{closest['rate']:,.0f} (p50 {closest['p50_us']:.1f} us, p99 {closest['p99_us']:.1f} us)"),
        ]
        if http:
            w, p = http["warchive serve"], http["pywb 2.10 (wayback)"]
            if "warchive serve (baseline)" in http:
                b = http["warchive serve (baseline)"]
                print(f"  warchive serve: {w['rps'] / b['rps']:.2f} x the baseline tree's")
            targets += [
                ("HTTP >= 3,000 req/s", w["rps"] >= 3000, f"{w['rps']:,.0f}"),
                ("HTTP p99 <= 20 ms", w["p99_ms"] <= 20, f"{w['p99_ms']:.2f} ms"),
                ("HTTP >= 10 x pywb", w["rps"] >= 10 * p["rps"], f"{w['rps'] / p['rps']:.1f} x"),
            ]
        after = os.getloadavg()
        print(f"\nload average (1 min): {load[0]:.2f} before the run, {after[0]:.2f} after (the run itself adds "
              "about 1 on 2 cores, wrk and the server 2): other work on the machine shows in the rates first, "
              "least in p50")
        print("\ntargets")
        for what, ok, val in targets:
            print(f"  {'PASS ' if ok else 'SHORT'} {what}: {val}")
        if bad:
            print("\nCHECKS FAILED: " + "; ".join(bad))
        if args.json:
            for h in http.values():
                h.pop("raw", None)
            Path(args.json).write_text(json.dumps({
                "date": time.strftime("%Y-%m-%d"), "cdxj": str(cdxj), "lines": len(lines),
                "loadavg_before_after": [load, after],
                "lookups": rows, "sizes": dict(size_rows), "http": http,
                "targets": [{"what": w, "pass": ok, "value": v} for w, ok, v in targets], "failed": bad,
            }, indent=1))
        return 1 if bad else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
