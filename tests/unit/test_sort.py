"""warchive sort / merge: output equals ``LC_ALL=C sort -u`` (less empty lines), memory stays bounded.

The reference is coreutils sort run on the same files, and ``sorted(set(lines))``
for hypothesis examples. Documented difference: empty lines are dropped (sort -u
keeps one at the top). The 10 GB run is under ``-m slow``.
"""

from __future__ import annotations

import gzip
import os
import random
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import List

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from warchive._ext import line_sort
from warchive.errors import IndexFormatError, UnsortedInputError
from warchive.index.sort import LineSorter, merge_files, sort_files

HEADER = b" CDX N b a m s k r M S V g"
HAVE_SORT = shutil.which("sort") is not None


def coreutils_sort_u(paths: List[Path]) -> bytes:
    """LC_ALL=C sort -u over plain files, empty lines removed (our one documented difference)."""
    env = dict(os.environ, LC_ALL="C")
    out = subprocess.run(["sort", "-u", *map(str, paths)], env=env, check=True, capture_output=True).stdout
    return b"".join(line + b"\n" for line in out.split(b"\n") if line)


def reference(lines: List[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in sorted(set(x for x in lines if x)))


def cdxj_line(rng: random.Random, i: int) -> bytes:
    host = rng.choice(["com,example", "org,iana", "com,example,www", "de,spiegel", "uk,co,bbc"])
    path = "/".join(rng.choice(["a", "b", "index.html", "x?y=1", "img", "%C3%A9t%C3%A9"])
                    for _ in range(rng.randint(0, 5)))
    ts = f"20{rng.randint(0, 24):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{rng.randint(0, 235959):06d}"
    return (f'{host})/{path} {ts} {{"url": "https://{host}/{path}", "mime": "text/html", "status": "200", '
            f'"digest": "sha1:{rng.getrandbits(160):040X}", "length": "{rng.randint(100, 99999)}", '
            f'"offset": "{i}", "filename": "crawl-{rng.randint(0, 99):05d}.warc.gz"}}').encode()


def odd_line(rng: random.Random) -> bytes:
    """Bytes an index line should not hold but a sort must order anyway."""
    alphabet = b"ab\x00\x01\t\r \x7f\x80\xc3\xa9\xff"
    n = rng.choice([0, 1, 2, 7, 8, 9, 15, 16, 17, 40])
    return bytes(rng.choice(alphabet) for _ in range(n))


def write_lines(path: Path, lines: List[bytes], final_lf: bool = True, gz: bool = False) -> Path:
    data = b"\n".join(lines) + (b"\n" if final_lf and lines else b"")
    if gz:
        data = gzip.compress(data)
    path.write_bytes(data)
    return path


def plain_copy(path: Path, tmp: Path) -> Path:
    """What coreutils sees: gzip inflated, a final LF added (sort adds it too)."""
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    out = tmp / (path.name + ".plain")
    out.write_bytes(data)
    return out


# --- the kernel -----------------------------------------------------------------

@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("seed", range(6))
def test_sort_chunk_matches_sorted_set(seed, threads):
    rng = random.Random(seed)
    # shared prefixes of every length around the 8-byte keys, NUL padding look-alikes, repeats
    base = [b"", b"a", b"a\x00", b"a\x00\x00\x00\x00\x00\x00\x00", b"a\x00\x00\x00\x00\x00\x00\x00\x00",
            b"com,example)/", b"com,example)/ 2", b"\xff" * 9, b"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01"]
    lines = [rng.choice(base) + odd_line(rng) for _ in range(100_000 if seed < 2 else 3_000)]
    data = b"\n".join(lines) + b"\n"
    out: List[bytes] = []
    used, lin, lout = line_sort.sort_chunk(data, len(data), out.append, threads=threads)
    assert used == len(data)
    assert b"".join(out) == reference(lines)
    assert lin == sum(1 for x in lines if x)
    assert lout == len(set(x for x in lines if x))


def test_sort_chunk_max_lines_takes_a_prefix():
    data = b"c\nb\na\nd\n"
    out: List[bytes] = []
    used, lin, _ = line_sort.sort_chunk(data, len(data), out.append, max_lines=2)
    assert (used, lin, b"".join(out)) == (4, 2, b"b\nc\n")


def test_merge_kernel_reports_source_and_line():
    import io

    with pytest.raises(UnsortedInputError) as ei:
        line_sort.merge([io.BytesIO(b"a\nb\n"), io.BytesIO(b"a\n\nc\nb\n")], lambda b: None,
                        names=["one", "two"], check=True, bufsize=1)
    e = ei.value
    assert (e.path, e.lineno, e.line, e.previous) == ("two", 4, b"b", b"c")


# --- sort_files against coreutils -------------------------------------------------

@pytest.mark.skipif(not HAVE_SORT, reason="coreutils sort not installed")
@pytest.mark.parametrize("mem_limit,fan_in", [(256 << 20, 64), (64 << 10, 3), (200 << 10, 2)])
def test_sort_files_equals_coreutils(tmp_path, mem_limit, fan_in):
    rng = random.Random(mem_limit)
    a = [cdxj_line(rng, i) for i in range(6000)]
    a += rng.sample(a, 500)                                      # repeats inside one input
    b = [cdxj_line(rng, i) for i in range(3000)] + a[:200]       # and across inputs
    c = [odd_line(rng) for _ in range(2000)] + [b"x" * 300_000, b"x" * 300_001]  # long lines
    rng.shuffle(a)
    rng.shuffle(b)
    files = [write_lines(tmp_path / "a.cdxj", [HEADER] + a),
             write_lines(tmp_path / "b.cdxj.gz", [HEADER] + b, gz=True),
             write_lines(tmp_path / "c.cdx", c, final_lf=False),
             write_lines(tmp_path / "empty.cdx", [])]
    out = tmp_path / "out.cdxj"
    run_dir = tmp_path / "runs"
    run_dir.mkdir()
    stats = sort_files(files, out, mem_limit=mem_limit, tmpdir=str(run_dir), fan_in=fan_in)
    expected = coreutils_sort_u([plain_copy(p, tmp_path) for p in files])
    assert out.read_bytes() == expected
    assert out.read_bytes().startswith(HEADER + b"\n") or expected.split(b"\n")[0] < HEADER
    assert expected.count(HEADER + b"\n") == 1
    assert stats.lines_out == expected.count(b"\n")
    assert list(run_dir.iterdir()) == []          # runs are unlinked files
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []
    if mem_limit < 1 << 20:
        assert stats.runs > fan_in and stats.passes >= 2   # the multi-pass path


@pytest.mark.skipif(not HAVE_SORT, reason="coreutils sort not installed")
def test_sort_many_runs_tiny_memory(tmp_path):
    """A few MB through 64 KiB of buffer and fan-in 4: thousands of runs, several merge levels."""
    rng = random.Random(7)
    lines = [cdxj_line(rng, rng.randint(0, 50_000)) for _ in range(20_000)]
    src = write_lines(tmp_path / "in.cdxj", lines)
    out = tmp_path / "out.cdxj"
    stats = sort_files([src], out, mem_limit=64 << 10, tmpdir=str(tmp_path), fan_in=4)
    assert out.read_bytes() == coreutils_sort_u([src])
    assert stats.runs >= 64 and stats.passes >= 3


def test_sort_in_place_and_callable(tmp_path):
    p = write_lines(tmp_path / "x.cdxj", [b"b", b"a", b"b"])
    sort_files([p], p)
    assert p.read_bytes() == b"a\nb\n"
    got: List[bytes] = []
    sort_files([p, p], got.append)
    assert b"".join(got) == b"a\nb\n"


def test_sort_zstd_input(tmp_path):
    zstandard = pytest.importorskip("zstandard")
    p = tmp_path / "x.cdxj.zst"
    p.write_bytes(zstandard.ZstdCompressor().compress(b"b\na\n") + zstandard.ZstdCompressor().compress(b"c\na\n"))
    out = tmp_path / "o"
    sort_files([p], out)
    assert out.read_bytes() == b"a\nb\nc\n"


def test_sort_failure_leaves_nothing(tmp_path):
    good = write_lines(tmp_path / "a.cdxj", [b"a"])
    bad = tmp_path / "b.cdxj.gz"
    bad.write_bytes(gzip.compress(b"x\n" * 100_000)[:-40])     # truncated gzip
    out = tmp_path / "out.cdxj"
    with pytest.raises(IndexFormatError, match="b.cdxj.gz: gzip data is damaged or truncated"):
        sort_files([good, bad], out, mem_limit=64 << 10, tmpdir=str(tmp_path))
    with pytest.raises(IndexFormatError, match="b.cdxj.gz: gzip data is damaged or truncated"):
        merge_files([good, bad], out, tmpdir=str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.cdxj", "b.cdxj.gz"]
    with pytest.raises(FileNotFoundError):
        sort_files([good, tmp_path / "missing"], out)
    assert not out.exists()


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.binary(max_size=20).map(lambda b: b.replace(b"\n", b"")), max_size=40),
                min_size=1, max_size=4),
       st.sampled_from([64 << 10, 1 << 20]), st.booleans())
def test_sort_files_is_sorted_set(tmp_path_factory, inputs, mem_limit, final_lf):
    # a file is told gzip or zstd by its first bytes, whatever its name
    assume(not any(lines and lines[0][:2] in (b"\x1f\x8b", b"\x28\xb5") for lines in inputs))
    d = tmp_path_factory.mktemp("s")
    paths = [write_lines(d / f"{i}.cdx", lines, final_lf=final_lf) for i, lines in enumerate(inputs)]
    out = d / "out"
    sort_files(paths, out, mem_limit=mem_limit, tmpdir=str(d), fan_in=2)
    assert out.read_bytes() == reference([x for lines in inputs for x in lines])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")), max_size=300),
       st.integers(min_value=1, max_value=9))
def test_line_sorter_chunks(lines, cut):
    data = b"".join(x + b"\n" for x in lines)
    sorter = LineSorter(mem_limit=64 << 10)
    for i in range(0, len(data), cut * 7):
        sorter.add(data[i:i + cut * 7])
    got: List[bytes] = []
    sorter.finish(got.append)
    assert b"".join(got) == reference(lines)


def test_line_sorter_spills(tmp_path):
    rng = random.Random(3)
    lines = [cdxj_line(rng, i) for i in range(5000)]
    sorter = LineSorter(mem_limit=64 << 10, tmpdir=str(tmp_path))
    for x in lines:
        sorter.add(x + b"\n")
    got: List[bytes] = []
    sorter.finish(got.append)
    assert b"".join(got) == reference(lines)
    assert sorter.stats.runs > 1 and list(tmp_path.iterdir()) == []


# --- merge_files -------------------------------------------------------------------

@pytest.mark.skipif(not HAVE_SORT, reason="coreutils sort not installed")
@pytest.mark.parametrize("fan_in", [64, 3])
def test_merge_files_equals_coreutils(tmp_path, fan_in):
    rng = random.Random(fan_in)
    files = []
    for i in range(8):
        lines = sorted([cdxj_line(rng, rng.randint(0, 3000)) for _ in range(rng.randint(0, 800))] + [HEADER])
        lines += lines[-3:] if i % 2 else []  # a sorted file may repeat its last lines
        files.append(write_lines(tmp_path / (f"{i}.cdxj" + (".gz" if i == 3 else "")), sorted(lines),
                                 gz=i == 3))
    out = tmp_path / "out.cdxj"
    stats = merge_files(files, out, fan_in=fan_in, tmpdir=str(tmp_path))
    assert out.read_bytes() == coreutils_sort_u([plain_copy(p, tmp_path) for p in files])
    assert stats.inputs == 8 and (stats.passes == 2) == (fan_in < 8)


@pytest.mark.parametrize("fan_in", [64, 2])
def test_merge_files_rejects_unsorted(tmp_path, fan_in):
    ok = write_lines(tmp_path / "ok.cdxj", [b"a 1", b"b 1", b"c 1"])
    bad = write_lines(tmp_path / "bad.cdxj", [HEADER, b"a 2", b"", b"c 2", b"b 2", b"d 2"])
    out = tmp_path / "out.cdxj"
    with pytest.raises(UnsortedInputError) as ei:
        merge_files([ok, ok, bad], out, fan_in=fan_in, tmpdir=str(tmp_path))
    e = ei.value
    assert e.path == str(bad) and e.lineno == 5 and e.line == b"b 2" and e.previous == b"c 2"
    assert "bad.cdxj: line 5 is out of order" in str(e)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.cdxj", "ok.cdxj"]


def test_merge_files_unsorted_gzip_and_missing_lf(tmp_path):
    p = write_lines(tmp_path / "x.cdxj.gz", [b"b", b"a"], final_lf=False, gz=True)
    with pytest.raises(UnsortedInputError) as ei:
        merge_files([p], tmp_path / "o")
    assert ei.value.lineno == 2


# --- memory: a small always-run check, and 10 GB under -m slow -----------------------

GEN = textwrap.dedent(r'''
    import random, sys
    # realistic CDXJ lines, about 330 bytes each; every 16th line is written twice
    total, seed, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    rng = random.Random(seed)
    hosts = [",".join(reversed(f"www.site{h}.{tld}".split("."))) for h in range(5000) for tld in ("com", "org", "de")]
    words = ["index.html", "about", "news", "2024", "img", "css", "main.js", "search?q=web+archive", "a", "b"]
    written, i = 0, 0
    with open(path, "wb", buffering=1 << 24) as f:
        while written < total:
            buf = []
            for _ in range(10000):
                host = rng.choice(hosts)
                path_ = "/".join(rng.choice(words) for _ in range(rng.randint(0, 4)))
                ts = "20%02d%02d%02d%06d" % (rng.randint(10, 24), rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 235959))
                url = "https://" + ".".join(reversed(host.split(","))) + "/" + path_
                line = ('%s)/%s %s {"url": "%s", "mime": "text/html", "status": "200", "digest": "sha1:%040X", '
                        '"length": "%d", "offset": "%d", "filename": "CC-MAIN-%05d.warc.gz"}\n'
                        % (host, path_, ts, url, rng.getrandbits(160), rng.randint(500, 90000), i, i % 70000))
                buf.append(line)
                if i % 16 == 0:
                    buf.append(line)
                i += 1
            data = "".join(buf).encode()
            f.write(data)
            written += len(data)
    print(i)
''')

# Peak RSS is VmHWM, which belongs to this process image: ru_maxrss would also count the
# parent's RSS when the child was forked (or vforked) from a big pytest process.
SORTER = textwrap.dedent(r'''
    import resource, sys, time
    from warchive.index.sort import sort_files
    t = time.time()
    st = sort_files([sys.argv[1]], sys.argv[2], mem_limit=int(sys.argv[3]), tmpdir=sys.argv[4], fan_in=int(sys.argv[5]))
    secs = time.time() - t
    try:
        hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
    except (OSError, StopIteration):
        hwm = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(st.lines_out, st.runs, st.passes, round(secs, 1), hwm)
''')


def _generate_and_sort(tmp: Path, size: int, mem_limit: int, fan_in: int):
    src, out = tmp / "in.cdxj", tmp / "out.cdxj"
    n = int(subprocess.run([sys.executable, "-c", GEN, str(size), "1", str(src)], check=True,
                           capture_output=True, text=True).stdout)
    r = subprocess.run([sys.executable, "-c", SORTER, str(src), str(out), str(mem_limit), str(tmp), str(fan_in)],
                       check=True, capture_output=True, text=True)
    lines_out, runs, passes, secs, rss_kb = r.stdout.split()
    return src, out, n, int(lines_out), int(runs), int(passes), float(secs), int(rss_kb)


@pytest.mark.skipif(not HAVE_SORT, reason="coreutils sort not installed")
def test_sort_bounded_memory_small(tmp_path):
    """30 MB with a 4 MiB limit and fan-in 4: several passes, RSS near the interpreter's own."""
    src, out, n, lines_out, runs, passes, _, rss_kb = _generate_and_sort(tmp_path, 30 << 20, 4 << 20, 4)
    assert lines_out == n and runs > 4 and passes >= 2
    subprocess.run(["sort", "-c", "-u", str(out)], env=dict(os.environ, LC_ALL="C"), check=True)
    assert rss_kb < 150_000


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_SORT, reason="coreutils sort not installed")
def test_sort_10gb_under_512mb(tmp_path_factory):
    """A generated 10 GB CDXJ sorts with default settings in under 512 MB peak RSS.

    Needs about 30 GB of free disk (input, runs, output) in the pytest temporary directory."""
    tmp = tmp_path_factory.mktemp("big")
    if shutil.disk_usage(tmp).free < 32 << 30:
        pytest.skip("needs 32 GB of free disk")
    try:
        src, out, n, lines_out, runs, passes, secs, rss_kb = _generate_and_sort(tmp, 10 * 10**9, 256 << 20, 64)
        print(f"\n10 GB: {n} distinct lines, {runs} runs, {passes} passes, {secs} s, peak RSS {rss_kb // 1024} MiB")
        assert lines_out == n
        assert rss_kb < 512 * 1024
        # strictly increasing: sorted, and every repeat dropped
        subprocess.run(["sort", "-c", "-u", str(out)], env=dict(os.environ, LC_ALL="C"), check=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_write_error_surfaces_and_leaves_nothing(tmp_path, monkeypatch):
    """The output is written by a thread of its own: its errors still reach the caller."""
    import errno

    from warchive import durable

    rng = random.Random(5)
    src = write_lines(tmp_path / "in.cdxj", [cdxj_line(rng, i) for i in range(20_000)])
    calls = []

    def full(self, b):
        calls.append(len(b))
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(durable.AtomicOutput, "write", full)
    out = tmp_path / "out.cdxj"
    with pytest.raises(OSError, match="No space left"):
        sort_files([src], out, mem_limit=1 << 20, tmpdir=str(tmp_path))
    with pytest.raises(OSError, match="No space left"):
        sort_files([src], out)
    assert calls and sorted(p.name for p in tmp_path.iterdir()) == ["in.cdxj"]
    got: List[bytes] = []

    def boom(b):
        got.append(b)
        raise ValueError("callable refused")
    with pytest.raises(ValueError, match="callable refused"):
        sort_files([src], boom)
    assert len(got) == 1
