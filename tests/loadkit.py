"""Load on ``warchive serve``: wrk with a mixed path list, the server's RSS sampled, and a
collection changed underneath (a WARC added, then the collection compacted) while it serves.

Shared by tests/unit/test_load.py (seconds, in the default run) and bench/load_soak.py (minutes,
the README's figures). wrk counts socket errors and non-2xx/3xx answers itself; the Lua
script below also counts answers by status class across its threads, so a 5xx is told apart
from a 404 (and a 307 TimeGate counts as the answer it should be).
"""

from __future__ import annotations

import contextlib
import json
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from warcgen import w_http, write_warc

# Each thread cycles through the paths from its own start; answers are counted by class per
# thread (globals, read back with thread:get) and summed in done().
WRK_LUA = """
local threads = {}
local paths = {}
for line in io.lines("%(paths)s") do paths[#paths + 1] = line end
c2, c3, c4, c5 = 0, 0, 0, 0
local i = 0
function setup(thread)
  thread:set("start", #threads * 7919)
  table.insert(threads, thread)
end
function init(args)
  i = (start or 0) %% #paths
end
function request()
  i = i %% #paths + 1
  return wrk.format("GET", paths[i])
end
function response(status, headers, body)
  if status >= 500 then c5 = c5 + 1
  elseif status >= 400 then c4 = c4 + 1
  elseif status >= 300 then c3 = c3 + 1
  else c2 = c2 + 1 end
end
function done(summary, latency, requests)
  local t = {0, 0, 0, 0}
  for _, th in ipairs(threads) do
    t[1] = t[1] + th:get("c2"); t[2] = t[2] + th:get("c3")
    t[3] = t[3] + th:get("c4"); t[4] = t[4] + th:get("c5")
  end
  io.write(string.format("STATUS 2xx=%%d 3xx=%%d 4xx=%%d 5xx=%%d\\n", t[1], t[2], t[3], t[4]))
  io.write(string.format("LATENCY p50=%%d p99=%%d p999=%%d max=%%d\\n", latency:percentile(50),
    latency:percentile(99), latency:percentile(99.9), latency.max))
  io.write(string.format("ERRORS connect=%%d read=%%d write=%%d status=%%d timeout=%%d\\n",
    summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.status,
    summary.errors.timeout))
end
"""


def parse(out: str) -> Dict:
    """wrk's output with the script's lines: requests/s, latency percentiles (ms), statuses, errors."""
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    total = int(re.search(r"(\d+) requests in", out).group(1))
    st = dict((k, int(v)) for k, v in re.findall(r"(\dxx)=(\d+)", out))
    lat = {k: int(v) / 1000 for k, v in re.findall(r"(p50|p99|p999|max)=(\d+)", out)}   # us -> ms
    errs = {k: int(v) for k, v in re.findall(r"(connect|read|write|status|timeout)=(\d+)", out)}
    return {"rps": rps, "requests": total, "status": st, "latency_ms": lat, "errors": errs}


def run_wrk(base: str, paths: Sequence[str], seconds: float, conns: int, work: Path,
            threads: int = 2, timeout_s: int = 10) -> Dict:
    """wrk against ``base`` cycling over ``paths``: the parsed figures (``parse``)."""
    pf = work / "load-paths.txt"
    pf.write_text("".join(p + "\n" for p in paths))
    script = work / "load.lua"
    script.write_text(WRK_LUA % {"paths": pf})
    out = subprocess.run(["wrk", f"-t{threads}", f"-c{conns}", f"-d{int(seconds)}s", f"--timeout={timeout_s}s",
                          "-s", str(script), base], check=True, capture_output=True, text=True).stdout
    r = parse(out)
    r["raw"] = out
    return r


@contextlib.contextmanager
def serve(root: Path, *args: str, log: Optional[List[str]] = None) -> Iterator[Tuple[str, int]]:
    """``warchive serve --root ROOT`` on 127.0.0.1, a free port, no access log: (base URL, pid).
    What it says on stderr goes into ``log``. Stopped (SIGINT, then SIGKILL) on exit."""
    proc = subprocess.Popen([sys.executable, "-m", "warchive", "serve", "--root", str(root), "--port", "0",
                             "--no-access-log", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        m = re.match(r"warchive serve: (http://127\.0\.0\.1:\d+)/ ", first)
        if not m:
            raise RuntimeError(f"serve did not start: {first!r}")
        # drain stderr so the server never blocks on a full pipe
        said = log if log is not None else []
        threading.Thread(target=lambda: said.extend(proc.stderr or ()), daemon=True).start()
        host, port = m.group(1).rsplit(":", 1)
        for _ in range(600):   # it says where it will listen a moment before it accepts
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", int(port)), 1):
                break
            time.sleep(0.05)
        yield m.group(1), proc.pid
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def hwm_kib(pid: int) -> int:
    """The peak resident set (VmHWM) of process ``pid``, in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class Sampler(threading.Thread):
    """The RSS of ``pid`` every ``every`` seconds until stopped: ``samples`` is [(s, KiB)]."""

    def __init__(self, pid: int, every: float = 1.0) -> None:
        super().__init__(daemon=True)
        self.pid, self.every = pid, every
        self.samples: List[Tuple[float, int]] = []
        self.halt = threading.Event()

    def run(self) -> None:
        t0 = time.monotonic()
        while not self.halt.is_set():
            with contextlib.suppress(OSError):
                self.samples.append((time.monotonic() - t0, rss_kib(self.pid)))
            self.halt.wait(self.every)

    def stop(self) -> List[Tuple[float, int]]:
        self.halt.set()
        self.join()
        return self.samples


def status(url: str, timeout: float = 30) -> int:
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *a, **k):   # type: ignore[no-untyped-def]
            return None
    try:
        return urllib.request.build_opener(NoRedirect).open(url, timeout=timeout).status
    except urllib.error.HTTPError as e:
        return e.code


def new_capture_warc(work: Path, n: int) -> Tuple[Path, str]:
    """A WARC of one response (work/churn-N.warc.gz), at a URL no other cycle uses: (path, URL)."""
    url = f"http://churn.example/page-{n}.html"
    body = f"<html><body>churn {n}</body></html>".encode()
    fx = write_warc(work, f"churn-{n}", [w_http("response", f"c{n}", url, "HTTP/1.1", "200 OK",
                                                [("Content-Type", "text/html"),
                                                 ("Content-Length", str(len(body)))], body,
                                                date="2024-05-01T00:00:00Z")])
    return Path(fx.path), url


class Churn(threading.Thread):
    """Change collection ``coll`` (at ``root/coll``) while it is served at ``base``, until stopped:
    each cycle adds a WARC with a new URL, waits for the server to find it (CDX query), compacts
    the collection and checks the URL is still found. ``cycles`` holds (seconds to pick up the
    new segment, segments before compaction); ``failures`` what went wrong."""

    def __init__(self, root: Path, coll: str, base: str, work: Path, pause: float = 1.0) -> None:
        super().__init__(daemon=True)
        self.root, self.coll, self.base, self.work, self.pause = root, coll, base, work, pause
        self.cycles: List[Tuple[float, int]] = []
        self.failures: List[str] = []
        self.halt = threading.Event()

    def found(self, url: str) -> bool:
        q = urllib.parse.urlencode({"url": url, "output": "json"})
        try:
            with urllib.request.urlopen(f"{self.base}/{self.coll}/cdx?{q}", timeout=30) as r:
                return any(json.loads(line).get("url") == url for line in r.read().splitlines() if line.strip())
        except urllib.error.HTTPError:
            return False

    def run(self) -> None:
        from warchive.collection import Collection
        coll = Collection(str(self.root / self.coll))
        n = 0
        while not self.halt.is_set():
            n += 1
            warc, url = new_capture_warc(self.work, n)
            coll.add([str(warc)])
            t0 = time.monotonic()
            while not self.found(url):
                if time.monotonic() - t0 > 30:
                    self.failures.append(f"cycle {n}: {url} not found 30 s after add")
                    return
                time.sleep(0.05)
            picked = time.monotonic() - t0
            segs = len(coll.segments())
            coll.compact()
            if not self.found(url):
                self.failures.append(f"cycle {n}: {url} lost after compaction")
                return
            self.cycles.append((picked, segs))
            self.halt.wait(self.pause)

    def stop(self) -> None:
        self.halt.set()
        self.join()


def svg_plot(series: Dict[str, List[Tuple[float, int]]], title: str, path: Path) -> None:
    """RSS (MiB) over time (s) of each series as an SVG line chart, written to ``path``."""
    w, h, left, bottom = 720, 360, 60, 40
    xs = [t for s in series.values() for t, _ in s] or [1]
    ys = [k / 1024 for s in series.values() for _, k in s] or [1]
    xmax, ymax = max(xs) or 1, (max(ys) * 1.15) or 1
    def px(t: float) -> float: return left + (w - left - 20) * t / xmax
    def py(v: float) -> float: return h - bottom - (h - bottom - 30) * v / ymax
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{w / 2}" y="18" text-anchor="middle">{title}</text>',
           f'<line x1="{left}" y1="{py(0)}" x2="{w - 20}" y2="{py(0)}" stroke="black"/>',
           f'<line x1="{left}" y1="{py(0)}" x2="{left}" y2="30" stroke="black"/>',
           f'<text x="{w / 2}" y="{h - 8}" text-anchor="middle">seconds</text>',
           f'<text x="14" y="{h / 2}" transform="rotate(-90 14 {h / 2})" text-anchor="middle">RSS (MiB)</text>']
    for i in range(5):
        v = ymax * i / 4
        out.append(f'<text x="{left - 6}" y="{py(v) + 4}" text-anchor="end">{v:.0f}</text>')
        t = xmax * i / 4
        out.append(f'<text x="{px(t)}" y="{py(0) + 16}" text-anchor="middle">{t:.0f}</text>')
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]
    for j, (name, s) in enumerate(series.items()):
        pts = " ".join(f"{px(t):.1f},{py(k / 1024):.1f}" for t, k in s)
        c = colours[j % len(colours)]
        out.append(f'<polyline fill="none" stroke="{c}" stroke-width="1.5" points="{pts}"/>')
        out.append(f'<text x="{left + 10}" y="{44 + 16 * j}" fill="{c}">{name}</text>')
    out.append("</svg>")
    path.write_text("\n".join(out) + "\n")
