"""Benchmark: `warchive sort` (sort_files) against `LC_ALL=C sort -u` (coreutils) on a generated CDXJ.

Input: about 200 MB of realistic CDXJ lines (SURT keys of a few thousand
hosts, 14-digit timestamps, JSON with base32-like digests; one line in 16
repeated), shuffled, generated once per session (WARCHIVE_SORT_BENCH_MB sets
the size). Every benchmark compares its output with coreutils' bytes before
its time means anything. Both sides use every core (coreutils sort's default
--parallel; warchive sorts each run in two threads). Not part of the default
test run:

    pytest bench/test_sort_bench.py --benchmark-only -s
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from warchive.index.sort import sort_files

MB = int(os.environ.get("WARCHIVE_SORT_BENCH_MB", "200"))
C_ENV = dict(os.environ, LC_ALL="C")

pytestmark = pytest.mark.skipif(shutil.which("sort") is None, reason="coreutils sort not installed")


def _generate(path: Path, size: int, seed: int = 1) -> int:
    rng = random.Random(seed)
    hosts = [",".join(reversed(f"www.site{h}.{tld}".split("."))) for h in range(3000) for tld in ("com", "org", "de")]
    words = ["index.html", "about", "news", "2024", "img", "css", "main.js", "search?q=web+archive", "a", "b"]
    lines = []
    total = 0
    i = 0
    while total < size:
        host = rng.choice(hosts)
        p = "/".join(rng.choice(words) for _ in range(rng.randint(0, 4)))
        ts = "20%02d%02d%02d%06d" % (rng.randint(10, 24), rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 235959))
        url = "https://" + ".".join(reversed(host.split(","))) + "/" + p
        line = ('%s)/%s %s {"url": "%s", "mime": "text/html", "status": "200", "digest": "sha1:%032X", '
                '"length": "%d", "offset": "%d", "filename": "CC-MAIN-%05d.warc.gz"}\n'
                % (host, p, ts, url, rng.getrandbits(128), rng.randint(500, 90000), i, i % 70000)).encode()
        lines.append(line)
        if i % 16 == 0:
            lines.append(line)
        total += len(line)
        i += 1
    rng.shuffle(lines)
    path.write_bytes(b"".join(lines))
    return len(lines)


@pytest.fixture(scope="session")
def cdxj(tmp_path_factory):
    d = tmp_path_factory.mktemp("sortbench")
    src = d / "in.cdxj"
    _generate(src, MB * 10**6)
    ref = d / "ref.cdxj"
    subprocess.run(["sort", "-u", "-o", str(ref), str(src)], env=C_ENV, check=True)
    return d, src, ref.read_bytes()


def _report(benchmark, src: Path, name: str) -> None:
    mb = os.path.getsize(src) / 1e6
    secs = benchmark.stats.stats.min
    benchmark.extra_info["MB/s"] = round(mb / secs, 1)
    print(f"\n{name}: {mb:.0f} MB in {secs:.2f} s = {mb / secs:.0f} MB/s (best round)")


def test_warchive_sort(benchmark, cdxj):
    d, src, ref = cdxj
    out = d / "ours.cdxj"
    benchmark.pedantic(sort_files, args=([src], out), kwargs=dict(tmpdir=str(d)), rounds=3, iterations=1)
    assert out.read_bytes() == ref
    _report(benchmark, src, "warchive sort (256 MB limit)")


def test_warchive_sort_external(benchmark, cdxj):
    """32 MB of memory: runs on disk and a k-way merge."""
    d, src, ref = cdxj
    out = d / "ours32.cdxj"
    benchmark.pedantic(sort_files, args=([src], out), kwargs=dict(mem_limit=32 << 20, tmpdir=str(d)),
                       rounds=3, iterations=1)
    assert out.read_bytes() == ref
    _report(benchmark, src, "warchive sort (32 MB limit)")


def test_coreutils_sort(benchmark, cdxj):
    d, src, ref = cdxj
    out = d / "coreutils.cdxj"
    benchmark.pedantic(subprocess.run, args=(["sort", "-u", "-o", str(out), str(src)],),
                       kwargs=dict(env=C_ENV, check=True), rounds=3, iterations=1)
    assert out.read_bytes() == ref
    _report(benchmark, src, "LC_ALL=C sort -u")


def test_coreutils_sort_external(benchmark, cdxj):
    d, src, ref = cdxj
    out = d / "coreutils32.cdxj"
    benchmark.pedantic(subprocess.run, args=(["sort", "-u", "-S", "32M", "-T", str(d), "-o", str(out), str(src)],),
                       kwargs=dict(env=C_ENV, check=True), rounds=3, iterations=1)
    assert out.read_bytes() == ref
    _report(benchmark, src, "LC_ALL=C sort -u -S 32M")


def test_python_sorted_set(benchmark, cdxj):
    """The floor of a pure-Python sort: bytes.split + set + list.sort + join, all in memory."""
    d, src, ref = cdxj

    def run() -> bytes:
        lines = sorted(set(src.read_bytes().split(b"\n")) - {b""})
        return b"\n".join(lines) + b"\n"
    out = benchmark.pedantic(run, rounds=3, iterations=1)
    assert out == ref
    _report(benchmark, src, "Python sorted(set(split))")
