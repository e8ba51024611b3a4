"""warchive against its peers, in one run, as ratios to raw ISA-L decompression.

    python bench/compare.py CORPUS_DIR_OR_FILES... [--repeat N] [--json OUT]

Every row is timed in the same run, on the same warm page cache, and each
figure is the best (min) of N rounds; rounds are interleaved (each round runs
every row once, in a rotated order) so that a noisy minute of the machine
hits all rows alike.  Each measurement is a fresh process:

  cli  rows run a command and are timed from outside (wall clock, start-up of
       the interpreter included: that is what a user waits for);
  py   rows run one job of this file in a fresh interpreter (`--worker`),
       timed inside around the work only (imports excluded).

The ratio column divides by the baseline, "isal.igzip decompress": every file
streamed through ``isal.igzip.open(f).read(1 MiB)`` on one core.  Peak RSS is
the child's maximum resident set size as GNU time reports it (for -j 2: the
largest single process).

The run checks its results and exits with status 1 when one fails:
cdxj-indexer's output equals warchive's, every warchive run gives the same
bytes, the three readers see the same records at the same offsets, and the
SURT keys equal the `surt` package's.  It never judges a timing by itself:
the targets at the end say PASS or SHORT and the exit status ignores them.

Directories are expanded to their ``*.warc.gz`` files (not recursively), and
every tool gets the same explicit file list.  Peers are run with this
interpreter (``sys.executable``), never through console scripts, whose
shebangs may point at another environment.  Children cache bytecode in a
temporary PYTHONPYCACHEPREFIX, warmed before the first round, even where
PYTHONDONTWRITEBYTECODE is set: otherwise an editable install recompiles its
modules in every run while the peers, installed by pip, load theirs compiled.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

MiB = 1 << 20
PY = sys.executable
FASTWARC_CLI = "import sys; from fastwarc.cli import main; sys.exit(main())"
CDXJ_CLI = "import sys; from cdxj_indexer.main import main; sys.exit(main())"
BASELINE = "isal.igzip decompress"


# --------------------------------------------------------------------------- worker jobs
# Each job runs once in a fresh interpreter and returns (seconds, result).  The
# result is what the parent checks; computing it costs a few additions per record.

def _job_isal(paths: Sequence[str]) -> Dict:
    import isal.igzip

    t = time.perf_counter()
    raw = 0
    for p in paths:
        with isal.igzip.open(p) as f:
            while True:
                b = f.read(MiB)
                if not b:
                    break
                raw += len(b)
    return {"seconds": time.perf_counter() - t, "raw_bytes": raw}


def _job_fastwarc(paths: Sequence[str], payload: bool) -> Dict:
    from fastwarc.warc import ArchiveIterator

    t = time.perf_counter()
    n = offsets = body = 0
    for p in paths:
        for rec in ArchiveIterator(p):
            n += 1
            offsets += rec.stream_pos
            if payload:
                body += len(rec.reader.read())
    return {"seconds": time.perf_counter() - t, "records": n, "offset_sum": offsets,
            **({"payload_bytes": body} if payload else {})}


def _job_warcio(paths: Sequence[str]) -> Dict:
    from warcio.archiveiterator import ArchiveIterator

    t = time.perf_counter()
    n = offsets = 0
    for p in paths:
        with open(p, "rb") as fh:
            it = ArchiveIterator(fh)
            for _rec in it:
                n += 1
                offsets += it.get_record_offset()
    return {"seconds": time.perf_counter() - t, "records": n, "offset_sum": offsets}


def _job_warchive_reader(paths: Sequence[str], payload: bool, strict: bool = False) -> Dict:
    import warchive.warc as ww

    t = time.perf_counter()
    n = offsets = body = 0
    for p in paths:
        with (ww.open(p, strict=True) if strict else ww.open(p)) as records:
            for rec in records:
                n += 1
                offsets += rec.offset
                if payload:
                    body += len(rec.payload.read())
    return {"seconds": time.perf_counter() - t, "records": n, "offset_sum": offsets,
            **({"payload_bytes": body} if payload else {})}


def _job_warchive_index(paths: Sequence[str], verify: bool, jobs: int = 1) -> Dict:
    """``index_paths`` in this process, as `warchive index` runs it (one malloc arena for -j N)."""
    try:
        from warchive._ext.sysio import one_malloc_arena
    except ImportError:   # a tree without the sysio kernel (--before)
        from warchive._ext.gzip_members import one_malloc_arena  # type: ignore[attr-defined, no-redef]
    from warchive.index.build import index_paths
    from warchive.index.cdx import IndexOptions

    if jobs > 1:
        one_malloc_arena()
    h = hashlib.sha256()
    t = time.perf_counter()
    index_paths(list(paths), h.update, IndexOptions(verify=verify), jobs=jobs)
    return {"seconds": time.perf_counter() - t, "sha256": h.hexdigest()}


def _target_uris(paths: Sequence[str]) -> List[str]:
    """Every WARC-Target-URI, Wget's <...> stripped (as warcio's loader does)."""
    import warchive.warc as ww

    uris = []
    for p in paths:
        with ww.open(p, parse_http=False) as records:
            for rec in records:
                uri = rec.headers.get("WARC-Target-URI")
                if uri is None:
                    continue
                if uri.startswith("<") and uri.endswith(">"):
                    uri = uri[1:-1]
                uris.append(uri)
    return uris


def _job_surt(paths: Sequence[str], repeat: int) -> Dict:
    import surt as surt_pkg
    from warchive.surt import surt_many

    uris = _target_uris(paths)
    package_raised = 0

    def package() -> List[str]:
        nonlocal package_raised
        keys, package_raised = [], 0
        for u in uris:
            try:
                keys.append(surt_pkg.surt(u))
            except Exception:  # cdxj-indexer's get_url_key keeps the URL
                keys.append(u)
                package_raised += 1
        return keys

    best: Dict[str, float] = {}
    results = {}
    for _ in range(repeat):
        for name, fn in (("warchive", lambda: surt_many(uris, or_url=True)), ("surt", package)):
            t = time.perf_counter()
            results[name] = fn()
            best[name] = min(best.get(name, float("inf")), time.perf_counter() - t)
    diff = [i for i, (a, b) in enumerate(zip(results["warchive"], results["surt"])) if a != b]
    return {"urls": len(uris), "seconds": best, "package_raised": package_raised,
            "equal": results["warchive"] == results["surt"], "first_differences":
            [(uris[i], results["warchive"][i], results["surt"][i]) for i in diff[:5]]}


JOBS: Dict[str, Callable[..., Dict]] = {
    "isal": _job_isal,
    "fastwarc": lambda p: _job_fastwarc(p, payload=False),
    "fastwarc-payload": lambda p: _job_fastwarc(p, payload=True),
    "warcio": _job_warcio,
    "warchive-reader": lambda p: _job_warchive_reader(p, payload=False),
    "warchive-reader-payload": lambda p: _job_warchive_reader(p, payload=True),
    "warchive-reader-strict": lambda p: _job_warchive_reader(p, payload=False, strict=True),
    "warchive-index-skip": lambda p: _job_warchive_index(p, verify=False),
    "warchive-index-verify": lambda p: _job_warchive_index(p, verify=True),
    "warchive-index-skip-j2": lambda p: _job_warchive_index(p, verify=False, jobs=2),
    "warchive-index-verify-j2": lambda p: _job_warchive_index(p, verify=True, jobs=2),
}


def worker_main(job: str, paths: List[str], repeat: int) -> None:
    out = _job_surt(paths, repeat) if job == "surt" else JOBS[job](paths)
    json.dump(out, sys.stdout)


# --------------------------------------------------------------------------- running children

@dataclass
class Run:
    wall: float
    maxrss_kb: int
    stdout: bytes


TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
WARM_IMPORTS = ("import isal.igzip, fastwarc.cli, fastwarc.warc, warcio.archiveiterator, cdxj_indexer.main, surt, "
                "warchive.cli, warchive.cli.index, warchive.index.build, warchive.index.cdx, warchive.warc, "
                "warchive.surt")


def run_child(argv: Sequence[str], capture: bool = False) -> Run:
    """Run argv to completion; its wall time and peak RSS.

    The RSS comes from GNU time (-f %M): a child's ru_maxrss starts from the RSS
    of the process that forked it, so wait4() in this (bigger) process would
    report at least our own size.  Without /usr/bin/time it is wait4's figure,
    an upper bound."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(prefix="rss-") as rss:
        cmd = [TIME, "-o", rss.name, "-f", "%M", *argv] if TIME else list(argv)
        t = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out if capture else subprocess.DEVNULL, stderr=err, env=CHILD_ENV)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            err.seek(0)
            raise RuntimeError(f"{' '.join(argv[:6])} ... exited with {p.returncode}:\n"
                               f"{err.read().decode(errors='replace')[-2000:]}")
        maxrss = int(rss.read().split()[-1]) if TIME else usage.ru_maxrss
        out.seek(0)
        return Run(wall, maxrss, out.read() if capture else b"")


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(MiB), b""):
            h.update(b)
    return h.hexdigest()


def count_lines(path: str) -> int:
    with open(path, "rb") as f:
        return sum(b.count(b"\n") for b in iter(lambda: f.read(MiB), b""))


# --------------------------------------------------------------------------- the rows

@dataclass
class Row:
    name: str
    kind: str                           # "cli" or "py"
    argv: Callable[[str], List[str]]    # tmp output path -> argv
    out_kind: Optional[str] = None      # "cdxj": hash the output file; "lines": count them
    times: List[float] = field(default_factory=list)
    rss_kb: int = 0
    results: List[Dict] = field(default_factory=list)
    skipped: Optional[str] = None

    @property
    def seconds(self) -> float:
        return min(self.times)


def make_rows(paths: List[str], me: str, before: Optional[str] = None) -> List[Row]:
    def worker(job: str, py: str = PY) -> Callable[[str], List[str]]:
        return lambda out: [py, me, "--worker", job, *paths]

    def warchive(*opts: str, py: str = PY) -> Callable[[str], List[str]]:
        return lambda out: [py, "-m", "warchive", "index", *opts, *paths, "-o", out]

    rows = [
        Row(BASELINE, "py", worker("isal")),
        Row("igzip -d -c > /dev/null (ISA-L CLI)", "cli", lambda out: ["igzip", "-d", "-c", *paths]),
        Row("fastwarc ArchiveIterator, records", "py", worker("fastwarc")),
        Row("fastwarc ArchiveIterator, + payloads", "py", worker("fastwarc-payload")),
        Row("fastwarc index (CLI)", "cli", lambda out: [PY, "-c", FASTWARC_CLI, "index", *paths, "-o", out],
            out_kind="lines"),
        Row("warcio ArchiveIterator, records", "py", worker("warcio")),
        Row("warchive.warc iteration, records", "py", worker("warchive-reader")),
        Row("warchive.warc iteration, + payloads", "py", worker("warchive-reader-payload")),
        Row("cdxj-indexer (CLI)", "cli", lambda out: [PY, "-c", CDXJ_CLI, *paths, "-o", out], out_kind="cdxj"),
        Row("warchive index, skip-length, -j 1", "cli", warchive(), out_kind="cdxj"),
        Row("warchive index, --verify, -j 1", "cli", warchive("--verify"), out_kind="cdxj"),
        Row("warchive index, skip-length, -j 2", "cli", warchive("-j", "2"), out_kind="cdxj"),
        Row("warchive index, --verify, -j 2", "cli", warchive("--verify", "-j", "2"), out_kind="cdxj"),
        Row("  in-process index_paths, skip-length, -j 1", "py", worker("warchive-index-skip")),
        Row("  in-process index_paths, --verify, -j 1", "py", worker("warchive-index-verify")),
        Row("  in-process index_paths, skip-length, -j 2", "py", worker("warchive-index-skip-j2")),
        Row("  in-process index_paths, --verify, -j 2", "py", worker("warchive-index-verify-j2")),
        Row("warchive index --strict, skip-length, -j 1", "cli", warchive("--strict"), out_kind="cdxj"),
        Row("warchive index --strict, --verify, -j 1", "cli", warchive("--strict", "--verify"), out_kind="cdxj"),
        Row("warchive.warc iteration, records, strict", "py", worker("warchive-reader-strict")),
        Row("  start-up: python alone", "cli", lambda out: [PY, "-c", "pass"]),
        Row("  start-up: python + warchive index's imports", "cli",
            lambda out: [PY, "-c", "import warchive.cli, warchive.cli.index"]),
    ]
    if before:   # the same warchive rows with another tree's interpreter, in the same rounds
        rows += [
            Row("before: warchive.warc iteration, records", "py", worker("warchive-reader", before)),
            Row("before: warchive.warc iteration, + payloads", "py", worker("warchive-reader-payload", before)),
            Row("before: warchive index, skip-length, -j 1", "cli", warchive(py=before), out_kind="cdxj"),
            Row("before: warchive index, --verify, -j 1", "cli", warchive("--verify", py=before), out_kind="cdxj"),
            Row("before: warchive index, skip-length, -j 2", "cli", warchive("-j", "2", py=before), out_kind="cdxj"),
            Row("before: warchive index, --verify, -j 2", "cli", warchive("--verify", "-j", "2", py=before),
                out_kind="cdxj"),
            Row("  before: in-process index_paths, skip-length, -j 1", "py", worker("warchive-index-skip", before)),
            Row("  before: in-process index_paths, --verify, -j 1", "py", worker("warchive-index-verify", before)),
            Row("  before: in-process index_paths, skip-length, -j 2", "py",
                worker("warchive-index-skip-j2", before)),
            Row("  before: in-process index_paths, --verify, -j 2", "py",
                worker("warchive-index-verify-j2", before)),
            Row("  before: start-up: python + warchive index's imports", "cli",
                lambda out: [before, "-c", "import warchive.cli, warchive.index.build, warchive.index.cdx"]),
        ]
    if shutil.which("igzip") is None:
        rows[1].skipped = "igzip not installed (Debian package isal)"
    return rows


def measure(row: Row, tmpdir: str, keep: Dict[str, str]) -> None:
    out = os.path.join(tmpdir, "out")
    run = run_child(row.argv(out), capture=row.kind == "py")
    row.rss_kb = max(row.rss_kb, run.maxrss_kb)
    if row.kind == "py":
        res = json.loads(run.stdout)
        row.times.append(res.pop("seconds"))
    else:
        row.times.append(run.wall)
        res = {}
        if row.out_kind == "cdxj":
            res = {"sha256": sha256_file(out), "bytes": os.path.getsize(out)}
            if row.name not in keep:    # the first output of each row, for a diff on mismatch
                keep[row.name] = os.path.join(tmpdir, f"keep-{len(keep)}.cdxj")
                os.replace(out, keep[row.name])
        elif row.out_kind == "lines":
            res = {"lines": count_lines(out)}
    row.results.append(res)
    if os.path.exists(out):
        os.unlink(out)


# --------------------------------------------------------------------------- checks

class Checks:
    def __init__(self) -> None:
        self.items: List[Dict] = []

    def __call__(self, ok: bool, what: str, detail: str = "") -> None:
        self.items.append({"ok": bool(ok), "what": what, "detail": detail})

    @property
    def failed(self) -> List[Dict]:
        return [c for c in self.items if not c["ok"]]


def first_difference(a: str, b: str) -> str:
    with open(a, "rb") as fa, open(b, "rb") as fb:
        for n, (la, lb) in enumerate(zip(fa, fb), 1):
            if la != lb:
                return f"line {n}:\n    warchive: {la[:300]!r}\n    peer:     {lb[:300]!r}"
    return "one output is a prefix of the other (different line counts)"


def check_results(rows: Dict[str, Row], surt: Dict, keep: Dict[str, str], check: Checks) -> None:
    def same(name: str, key: str) -> set:
        return {r.get(key) for r in rows[name].results}

    ref = rows["cdxj-indexer (CLI)"]
    ref_hash = same(ref.name, "sha256")
    check(len(ref_hash) == 1, "cdxj-indexer gives the same bytes every round")
    for r in rows.values():
        if r.out_kind == "cdxj" and r is not ref:
            ok = same(r.name, "sha256") == ref_hash
            check(ok, f"{r.name.strip()}: output equals cdxj-indexer's",
                  "" if ok else first_difference(keep[r.name], keep[ref.name]))
    for name in [r for r in rows if "in-process index_paths" in r]:
        check(same(name, "sha256") == ref_hash, f"{name.strip()}: output equals cdxj-indexer's")

    readers = ["fastwarc ArchiveIterator, records", "fastwarc ArchiveIterator, + payloads",
               "warcio ArchiveIterator, records", "warchive.warc iteration, records",
               "warchive.warc iteration, + payloads", "warchive.warc iteration, records, strict"]
    readers += [n for n in rows if n.startswith("before: warchive.warc iteration")]
    seen = {name: (same(name, "records"), same(name, "offset_sum")) for name in readers}
    check(len(set(map(str, seen.values()))) == 1 and all(len(a) == 1 for a, _ in seen.values()),
          "readers: same record count and offsets (fastwarc, warcio, warchive)", json.dumps(
              {k: [sorted(a), sorted(b)] for k, (a, b) in seen.items()}))
    payloads = {same(n, "payload_bytes").pop() for n in readers if "payloads" in n}
    check(len(payloads) == 1, "readers: same payload bytes (fastwarc, warchive)", str(payloads))
    records = next(iter(seen[readers[0]][0]))
    fw_lines = same("fastwarc index (CLI)", "lines")
    check(fw_lines == {records}, "fastwarc index: one line per record", f"{fw_lines} vs {records}")
    check(surt["equal"], f"SURT: surt_many equals surt.surt on {surt['urls']:,} URLs",
          json.dumps(surt["first_differences"]))


# --------------------------------------------------------------------------- report

def fmt_table(rows: List[Row], base: float, gz_bytes: int, surt: Dict) -> str:
    head = f"{'row':44} {'kind':4} {'seconds':>8} {'× isal':>7} {'MB/s gz':>8} {'peak RSS':>9}  note"
    lines = [head, "-" * len(head)]
    for r in rows:
        if r.skipped:
            lines.append(f"{r.name:44} {r.kind:4} {'-':>8} {'-':>7} {'-':>8} {'-':>9}  skipped: {r.skipped}")
            continue
        note = ""
        if r.name == BASELINE:
            note = f"baseline; {r.results[0]['raw_bytes'] / 1e6:,.1f} MB inflated"
        elif "start-up" in r.name:
            note = "included in every warchive CLI row"
        rss = f"{r.rss_kb / 1024:7.1f}MB"
        mbs = f"{gz_bytes / 1e6 / r.seconds:8.1f}" if "start-up" not in r.name else f"{'-':>8}"
        lines.append(f"{r.name:44} {r.kind:4} {r.seconds:8.3f} {r.seconds / base:7.3f} {mbs} {rss}  {note}")
    for name, label in (("warchive", "SURT: warchive surt_many"), ("surt", "SURT: surt.surt (package)")):
        s = surt["seconds"][name]
        lines.append(f"{label:44} {'py':4} {s:8.3f} {'-':>7} {'-':>8} {'-':>9}  "
                     f"{surt['urls'] / s:,.0f} keys/s ({surt['urls']:,} URLs)")
    return "\n".join(lines)


def targets(rows: Dict[str, Row], base: float, surt: Dict) -> List[Dict]:
    def t(name: str) -> float:
        return rows[name].seconds

    skip1, ver1 = t("warchive index, skip-length, -j 1"), t("warchive index, --verify, -j 1")
    skip2, ver2 = t("warchive index, skip-length, -j 2"), t("warchive index, --verify, -j 2")
    ip_skip, ip_ver = t("  in-process index_paths, skip-length, -j 1"), t("  in-process index_paths, --verify, -j 1")
    ip_skip2 = t("  in-process index_paths, skip-length, -j 2")
    ip_ver2 = t("  in-process index_paths, --verify, -j 2")
    fixed = t("  start-up: python + warchive index's imports")
    rss = max(rows["warchive index, skip-length, -j 1"].rss_kb, rows["warchive index, --verify, -j 1"].rss_kb)
    keys = surt["urls"] / surt["seconds"]["warchive"]
    return [
        {"target": "full-inflate indexing <= 1.05x isal.igzip time", "value": ver1 / base, "ok": ver1 / base <= 1.05,
         "shown": f"CLI {ver1 / base:.3f}x (in-process {ip_ver / base:.3f}x)"},
        {"target": "skip-length indexing >= 2.5x faster than isal.igzip (<= 0.4x)", "value": skip1 / base,
         "ok": skip1 / base <= 0.4,
         "shown": f"CLI {skip1 / base:.3f}x = {base / skip1:.2f}x faster (in-process {ip_skip / base:.3f}x "
                  f"= {base / ip_skip:.2f}x faster)"},
        {"target": "-j 2 >= 1.8x faster than -j 1 in process, skip-length", "value": ip_skip / ip_skip2,
         "ok": ip_skip / ip_skip2 >= 1.8,
         "shown": f"{ip_skip / ip_skip2:.2f}x (CLI {skip1 / skip2:.2f}x; start-up {fixed * 1e3:.0f} ms of each run)"},
        {"target": "-j 2 >= 1.8x faster than -j 1 in process, --verify", "value": ip_ver / ip_ver2,
         "ok": ip_ver / ip_ver2 >= 1.8,
         "shown": f"{ip_ver / ip_ver2:.2f}x (CLI {ver1 / ver2:.2f}x)"},
        {"target": "peak RSS <= 64 MB (warchive index -j 1, both modes)", "value": rss / 1024,
         "ok": rss / 1024 <= 64, "shown": f"{rss / 1024:.1f} MB"},
        {"target": "SURT >= 1,000,000 keys/s", "value": keys, "ok": keys >= 1e6, "shown": f"{keys:,.0f} keys/s"},
    ]


# --------------------------------------------------------------------------- main

def expand(inputs: Sequence[str]) -> List[str]:
    paths: List[str] = []
    for i in inputs:
        p = Path(i)
        if p.is_dir():
            paths += [str(f) for f in sorted(p.glob("*.warc.gz"))]
        elif p.is_file():
            paths.append(str(p))
        else:
            raise SystemExit(f"compare.py: {i}: no such file or directory")
    if not paths:
        raise SystemExit("compare.py: no *.warc.gz files given")
    return paths


def warm_cache(paths: Sequence[str]) -> None:
    for p in paths:
        with open(p, "rb") as f:
            while f.read(8 * MiB):
                pass


def environment() -> Dict:
    from importlib.metadata import version

    from warchive._ext.gzip_members import inflate_libraries

    env = {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
           "loadavg_1_5_15": os.getloadavg(),
           "inflate": inflate_libraries()}
    for pkg in ("warchive", "isal", "fastwarc", "warcio", "cdxj-indexer", "surt"):
        env[pkg] = version(pkg)
    try:
        with open("/proc/cpuinfo") as f:
            env["cpu"] = next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return env


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="+", metavar="CORPUS_DIR_OR_FILES")
    ap.add_argument("--repeat", type=int, default=3, help="rounds; each figure is the best of them (default 3)")
    ap.add_argument("--json", help="write every number to this file")
    ap.add_argument("--before", metavar="PYTHON",
                    help="also run the warchive rows with this interpreter (another tree's venv), in the same rounds")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker_main(args.worker, args.inputs, args.repeat)
        return 0

    paths = expand(args.inputs)
    gz_bytes = sum(os.path.getsize(p) for p in paths)
    env = environment()
    me = os.path.abspath(__file__)
    rows = make_rows(paths, me, args.before)
    by_name = {r.name: r for r in rows}
    live = [r for r in rows if not r.skipped]
    warm_cache(paths)
    keep: Dict[str, str] = {}
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="warchive-bench-") as tmpdir:
        CHILD_ENV["PYTHONPYCACHEPREFIX"] = os.path.join(tmpdir, "pycache")
        run_child([PY, "-c", WARM_IMPORTS])
        if args.before:
            run_child([args.before, "-c", "import warchive.cli, warchive.index.build, warchive.index.cdx, "
                                          "warchive.warc, warchive.surt"])
        for k in range(args.repeat):
            order = live[k % len(live):] + live[:k % len(live)]
            for r in order:
                print(f"\rround {k + 1}/{args.repeat}: {r.name.strip():50}", end="", file=sys.stderr, flush=True)
                measure(r, tmpdir, keep)
        print(f"\r{'SURT keys':70}", end="", file=sys.stderr, flush=True)
        surt = json.loads(run_child([PY, me, "--worker", "surt", "--repeat", str(args.repeat), *paths],
                                    capture=True).stdout)
        print("\r" + " " * 70 + "\r", end="", file=sys.stderr, flush=True)
        check = Checks()
        check_results(by_name, surt, keep, check)

    base = by_name[BASELINE].seconds
    records = by_name["warchive.warc iteration, records"].results[0]["records"]
    raw = by_name[BASELINE].results[0]["raw_bytes"]
    print(f"warchive bench/compare.py: {len(paths)} files, {gz_bytes / 1e6:,.1f} MB gzip, {raw / 1e6:,.1f} MB raw, "
          f"{records:,} records; best of {args.repeat} interleaved rounds")
    print(f"{env.get('cpu', env['machine'])}, {env['cpus']} CPUs; Python {env['python']}; "
          f"warchive {env['warchive']} (inflate: {env['inflate']}); isal {env['isal']}, fastwarc {env['fastwarc']}, "
          f"warcio {env['warcio']}, cdxj-indexer {env['cdxj-indexer']}, surt {env['surt']}")
    after = os.getloadavg()
    print(f"load average (1 min): {load[0]:.2f} before the run, {after[0]:.2f} after (the run itself adds about 1); "
          f"other work on the machine shows in the times, and most in the -j 2 rows\n")
    print(fmt_table(rows, base, gz_bytes, surt))
    print("\nkind cli: a command timed from outside (interpreter start-up included); "
          "py: a fresh interpreter timed around the work only.")
    goals = targets(by_name, base, surt)
    print("\nTargets (ratios to isal.igzip in the same run):")
    for g in goals:
        print(f"  {'PASS ' if g['ok'] else 'SHORT'}  {g['target']:64} {g['shown']}")
    if args.before:
        print(f"\nBefore and after (after / before, same rounds; before = {args.before}):")
        for r in rows:
            name = r.name.strip()
            if name.startswith("before: ") or r.skipped:
                continue
            old = by_name.get(r.name.replace(name, "before: " + name))
            if old is not None and old.times and r.times:
                print(f"  {name:52} {old.seconds:8.3f} -> {r.seconds:8.3f} s   {r.seconds / old.seconds:6.3f}x")
    print("\nLenient (default) and --strict (strict / default, same rounds):")
    for strict_name, default_name in (("warchive index --strict, skip-length, -j 1", "warchive index, skip-length, -j 1"),
                                      ("warchive index --strict, --verify, -j 1", "warchive index, --verify, -j 1"),
                                      ("warchive.warc iteration, records, strict", "warchive.warc iteration, records")):
        a, b = by_name.get(strict_name), by_name.get(default_name)
        if a is not None and b is not None and a.times and b.times:
            print(f"  {default_name:52} {b.seconds:8.3f} -> {a.seconds:8.3f} s   {a.seconds / b.seconds:6.3f}x")
    print("\nChecks:")
    for c in check.items:
        print(f"  {'ok    ' if c['ok'] else 'FAILED'}  {c['what']}")
        if not c["ok"] and c["detail"]:
            print("          " + c["detail"].replace("\n", "\n          "))
    if args.json:
        doc = {"environment": env, "files": {p: os.path.getsize(p) for p in paths}, "gz_bytes": gz_bytes,
               "raw_bytes": raw, "records": records, "repeat": args.repeat, "baseline_seconds": base,
               "loadavg_before": load, "loadavg_after": after,
               "rows": [{"name": r.name.strip(), "kind": r.kind, "skipped": r.skipped, "times": r.times,
                         "seconds": r.seconds if r.times else None,
                         "ratio": r.seconds / base if r.times else None,
                         "peak_rss_mb": r.rss_kb / 1024, "results": r.results} for r in rows],
               "surt": surt, "targets": goals, "checks": check.items}
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
    return 1 if check.failed else 0


if __name__ == "__main__":
    sys.exit(main())
