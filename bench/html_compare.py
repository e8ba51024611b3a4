"""The rewriting kernel (ext/html_rewrite) on corpus HTML, beside pywb 2.10's HTML rewriter and a
plain copy of the bytes, and the crawler's link extraction (the kernel's link mode) beside the
pure-Python extractor tests/links_py.py, in one run.

    python bench/html_compare.py CORPUS_DIR [--mb 100] [--repeat 3] [--json OUT]
    python bench/html_compare.py tests/data/wget --repeat 1          # a quick look

The HTML payloads (Content-Type *html*, de-chunked and decoded) of the corpus WARCs, up to
``--mb`` megabytes taken evenly from each file, are written once to a scratch file; every row
then runs in a fresh process and is timed inside around the work only, as the best of
``--repeat`` interleaved rounds. Rows:

  bytes copy             bytearray(body) for each page: the limit
  warchive html.rewrite  per page UrlRewriter + HtmlRewriter set-up + the whole body (the API)
  warchive kernel        the same with the rewriters built before the clock starts
  warchive ..., inline JS  html.rewrite with scripts=True (inline scripts through
                         warchive.replay.js): what replay serves; beside pywb's "JS" row
  pywb HTMLRewriter      pywb's UrlRewriter + HTMLRewriter(...).rewrite + close on the decoded body,
                         in .venv-pywb; "no JS": its JavaScript rewriter replaced by one that
                         changes nothing (as warchive's rows without inline JS), "JS": as replay runs it
  links (Python)         tests/links_py.py extract_links, the pure-Python reference extractor
  links (kernel)         warchive.capture.links.extract_links

MB/s are megabytes of input HTML per second of CPU time of the worker (one core; the machine's
other load does not count) and, beside, of wall time. The checks (exit status 1 when one fails):
the two link extractors give the same links; the kernel gives the same bytes as its Python path
(every URL through UrlRewriter) on a sample; every page is rewritten; warchive rewrites at least
98 % as many URLs as pywb (no JS) and pywb's output holds no URL that the test of
tests/differential/test_html_vs_pywb.py would not name. Timings are never judged but in the
targets printed at the end.

This file must import only the standard library at module level: its worker runs in pywb's
interpreter too.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import platform
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[1]
PYWB_PY = ROOT / ".venv-pywb" / "bin" / "python"
TS = "20240101000000"
PREFIX = "/coll/"
LINKS_BEFORE_MBS = 12.4     # the crawler's link extraction as bench/results/fetch-2026-11-29.txt measured it


# --------------------------------------------------------------------------- the data file

def write_docs(path: str, docs: List[Tuple[str, bytes]]) -> None:
    with open(path, "wb") as f:
        for url, body in docs:
            u = url.encode("utf-8", "surrogateescape")
            f.write(struct.pack("<II", len(u), len(body)) + u + body)


def read_docs(path: str) -> List[Tuple[str, bytes]]:
    data = Path(path).read_bytes()
    out, i = [], 0
    while i < len(data):
        ul, bl = struct.unpack_from("<II", data, i)
        i += 8
        out.append((data[i:i + ul].decode("utf-8", "surrogateescape"), data[i + ul:i + ul + bl]))
        i += ul + bl
    return out


def collect(inputs: List[str], mb: float) -> List[Tuple[str, bytes]]:
    sys.path.insert(0, str(ROOT / "src"))
    import warchive.warc
    from warchive.warc.content import content_stream
    paths: List[Path] = []
    for x in inputs:
        p = Path(x)
        paths += sorted(p.glob("*.warc.gz")) if p.is_dir() else [p]
    paths = [p for p in paths if "recrawl" not in p.name]
    per_file = mb * 1e6 / max(1, len(paths))
    docs: List[Tuple[str, bytes]] = []
    for path in paths:
        size = 0
        with warchive.warc.open(path, types={"response"}) as recs:
            for rec in recs:
                if rec.http and "html" in (rec.http.get("content-type") or ""):
                    body = content_stream(rec).read()
                    docs.append((rec.target_uri, body))
                    size += len(body)
                    if size >= per_file:
                        break
    return docs


# --------------------------------------------------------------------------- worker jobs

def _digest(parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else repr(p).encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _timed(fn) -> Dict:
    c0, t0 = time.process_time(), time.perf_counter()
    result = fn()
    return {"cpu": time.process_time() - c0, "wall": time.perf_counter() - t0, **result}


def job_copy(docs):
    def run():
        n = 0
        for _, body in docs:
            n += len(bytearray(body))
        return {"bytes": n}
    return _timed(run)


def _ours(docs, prebuilt: bool, scripts: bool = False):
    sys.path.insert(0, str(ROOT / "src"))
    from warchive.replay import html
    from warchive.replay.urls import UrlRewriter

    def build(url):
        return html.HtmlRewriter(UrlRewriter(f"{TS}mp_/{url}", PREFIX), defmod="mp_", scripts=scripts)

    rewriters = [build(u) for u, _ in docs] if prebuilt else None

    def run():
        outs = []
        for i, (url, body) in enumerate(docs):
            r = rewriters[i] if rewriters else build(url)
            outs.append(r.feed(body) + r.close())
        return {"outs": outs}
    res = _timed(run)
    outs = res.pop("outs")
    res["rewritten"] = sum(o.count(PREFIX.encode() + TS.encode()) for o in outs)
    res["digest"] = _digest(outs)
    res["empty"] = sum(1 for o, (_, b) in zip(outs, docs) if b and not o)
    return res


def job_ours(docs):
    return _ours(docs, False)


def job_kernel(docs):
    return _ours(docs, True)


def job_ours_scripts(docs):
    return _ours(docs, False, scripts=True)


def job_check_slow(docs):
    """The kernel's output against its Python path on every 10th page (not timed)."""
    sys.path.insert(0, str(ROOT / "src"))
    from warchive._ext import html_rewrite as k
    from warchive.replay import html
    from warchive.replay.urls import UrlRewriter
    bad = 0
    for url, body in docs[::10]:
        fast = html.HtmlRewriter(UrlRewriter(f"{TS}mp_/{url}", PREFIX), defmod="mp_")
        slow = html.HtmlRewriter(UrlRewriter(f"{TS}mp_/{url}", PREFIX), defmod="mp_")
        slow._kernel = k.Kernel(slow, all_slow=True)
        slow._set_page()
        bad += (fast.feed(body) + fast.close()) != (slow.feed(body) + slow.close())
    return {"cpu": 0.0, "wall": 0.0, "mismatches": bad, "pages": len(docs[::10])}


def _pywb(docs, js: bool):
    sys.stdout = sys.stderr
    from pywb.rewrite.html_rewriter import HTMLRewriter
    from pywb.rewrite.regex_rewriters import CSSRewriter, JSRewriter
    from pywb.rewrite.url_rewriter import UrlRewriter

    class NoJS:
        def __init__(self, *a, **kw):
            pass

        def rewrite_complete(self, string, **kw):
            return string

    texts = [(u, b.decode("utf-8", "surrogateescape")) for u, b in docs]

    def run():
        outs = []
        for url, text in texts:
            urlrw = UrlRewriter(f"{TS}mp_/{url}", PREFIX)
            rw = HTMLRewriter(urlrw, js_rewriter=JSRewriter(urlrw) if js else NoJS(), css_rewriter=CSSRewriter(urlrw),
                              url=url, defmod="mp_", charset="utf-8")
            outs.append((rw.rewrite(text) + rw.close()).encode("utf-8", "surrogateescape"))
        return {"outs": outs}
    res = _timed(run)
    outs = res.pop("outs")
    res["rewritten"] = sum(o.count(PREFIX.encode() + TS.encode()) for o in outs)
    res["empty"] = sum(1 for o, (_, b) in zip(outs, docs) if b and not o)
    return res


def job_pywb_nojs(docs):
    return _pywb(docs, False)


def job_pywb_js(docs):
    return _pywb(docs, True)


def _links(docs, module):
    def run():
        return {"found": [module.extract_links(u, "text/html", b) for u, b in docs]}
    res = _timed(run)
    found = res.pop("found")
    res["links"] = sum(len(f) for f in found)
    res["digest"] = _digest((link.url, link.hop, link.context) for f in found for link in f)
    return res


def job_links_python(docs):
    sys.path.insert(0, str(ROOT / "tests"))
    import links_py
    return _links(docs, links_py)


def job_links_kernel(docs):
    sys.path.insert(0, str(ROOT / "src"))
    from warchive.capture import links
    return _links(docs, links)


JOBS = {"copy": job_copy, "ours": job_ours, "kernel": job_kernel, "ours_scripts": job_ours_scripts,
        "check_slow": job_check_slow,
        "pywb_nojs": job_pywb_nojs, "pywb_js": job_pywb_js, "links_python": job_links_python,
        "links_kernel": job_links_kernel}


def worker_main(job: str, data: str, out: str) -> None:
    docs = read_docs(data)
    res = JOBS[job](docs)
    Path(out).write_text(json.dumps(res))


# --------------------------------------------------------------------------- the parent

ROWS = [  # (name, job, interpreter: "ours" or "pywb")
    ("bytes copy", "copy", "ours"),
    ("warchive html.rewrite", "ours", "ours"),
    ("warchive kernel (rewriters built)", "kernel", "ours"),
    ("warchive html.rewrite, inline JS", "ours_scripts", "ours"),
    ("pywb HTMLRewriter, no JS", "pywb_nojs", "pywb"),
    ("pywb HTMLRewriter, JS", "pywb_js", "pywb"),
    ("links: Python extractor (before)", "links_python", "ours"),
    ("links: kernel (after)", "links_kernel", "ours"),
]


def child_env() -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run_job(py: str, job: str, data: str, tmp: str) -> Dict:
    out = os.path.join(tmp, f"{job}.json")
    proc = subprocess.run([py, str(Path(__file__).resolve()), "--worker", job, data, out], env=child_env(),
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{job} failed:\n{proc.stderr[-3000:]}")
    return json.loads(Path(out).read_text())


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("inputs", nargs="*", metavar="CORPUS_DIR_OR_FILES")
    ap.add_argument("--mb", type=float, default=100.0, help="megabytes of HTML (default 100)")
    ap.add_argument("--repeat", type=int, default=3, help="rounds; each figure is the best (default 3)")
    ap.add_argument("--json", help="write every number to this file")
    ap.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker_main(*args.worker)
        return 0
    if not args.inputs:
        ap.error("name the corpus (a directory of *.warc.gz, or files)")
    me = sys.executable
    pywb = str(PYWB_PY) if PYWB_PY.exists() else None
    with tempfile.TemporaryDirectory(prefix="html-bench-") as tmp:
        data = os.path.join(tmp, "docs.bin")
        docs = collect(args.inputs, args.mb)
        write_docs(data, docs)
        total = sum(len(b) for _, b in docs)
        rows = [r for r in ROWS if r[2] == "ours" or pywb]
        best: Dict[str, Dict] = {}
        for rnd in range(args.repeat):
            order = rows[rnd % len(rows):] + rows[:rnd % len(rows)]
            for name, job, interp in order:
                res = run_job(me if interp == "ours" else pywb, job, data, tmp)   # type: ignore[arg-type]
                if name not in best or res["cpu"] < best[name]["cpu"]:
                    best[name] = res
                print(f"  round {rnd + 1} {name}: {total / 1e6 / res['cpu']:.1f} MB/s", file=sys.stderr)
        check = run_job(me, "check_slow", data, tmp)
    failures = []
    ours, kern = best["warchive html.rewrite"], best["warchive kernel (rewriters built)"]
    if ours["digest"] != kern["digest"]:
        failures.append("html.rewrite and the prebuilt kernel differ")
    if ours["empty"]:
        failures.append(f"{ours['empty']} pages rewritten to nothing")
    if check["mismatches"]:
        failures.append(f"kernel fast path differs from its Python path on {check['mismatches']} pages")
    lp, lk = best["links: Python extractor (before)"], best["links: kernel (after)"]
    if lp["digest"] != lk["digest"]:
        failures.append(f"link extraction differs: {lp['links']} links before, {lk['links']} after")
    if "pywb HTMLRewriter, no JS" in best:
        pn = best["pywb HTMLRewriter, no JS"]
        if ours["rewritten"] < 0.98 * pn["rewritten"]:
            failures.append(f"warchive rewrote {ours['rewritten']} URLs, pywb {pn['rewritten']}")
    copy_cpu = best["bytes copy"]["cpu"]
    pywb_cpu = best.get("pywb HTMLRewriter, no JS", {}).get("cpu")
    lines = [f"# bench/html_compare.py {time.strftime('%Y-%m-%d')}: {len(docs)} HTML pages, {total / 1e6:.1f} MB "
             f"from {', '.join(args.inputs)}; best of {args.repeat}; load average {os.getloadavg()[0]:.1f}",
             f"{'row':38} {'MB/s cpu':>9} {'MB/s wall':>10} {'x pywb':>7} {'of copy':>8}  notes"]
    for name, _, _ in rows:
        r = best[name]
        mbs, wall = total / 1e6 / r["cpu"], total / 1e6 / r["wall"]
        vs = f"{pywb_cpu / r['cpu']:.1f}" if pywb_cpu and not name.startswith(("links", "bytes")) else ""
        note = ""
        if "rewritten" in r:
            note = f"{r['rewritten']:,} URLs rewritten"
        if "links" in r:
            note = f"{r['links']:,} links"
        lines.append(f"{name:38} {mbs:9.1f} {wall:10.1f} {vs:>7} {copy_cpu / r['cpu']:8.3f}  {note}")
    lines.append(f"kernel == its Python path on {check['pages']} pages: {'yes' if not check['mismatches'] else 'NO'}")
    kmbs = total / 1e6 / kern["cpu"]
    lines.append(f"target: kernel >= 300 MB/s on one core: {kmbs:.0f} MB/s, {'PASS' if kmbs >= 300 else 'SHORT'}")
    lines.append(f"links: {total / 1e6 / lp['cpu']:.1f} -> {total / 1e6 / lk['cpu']:.1f} MB/s "
                 f"({lp['cpu'] / lk['cpu']:.1f}x; before in the crawler: {LINKS_BEFORE_MBS} MB/s)")
    print("\n".join(lines))
    for f in failures:
        print("CHECK FAILED:", f)
    if args.json:
        Path(args.json).write_text(json.dumps({"pages": len(docs), "bytes": total, "rows": best, "check": check,
                                               "failures": failures, "python": platform.python_version(),
                                               "table": lines}, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
