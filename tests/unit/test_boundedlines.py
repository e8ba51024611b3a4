"""Index lines longer than ``MAX_LINE`` (warchive.boundedlines) are refused on every path that
reads them, before they are held whole (docs/format.md, "CDXJ and CDX-11 index lines";
docs/security.md, "Resource exhaustion").

First the readers against references on small inputs with a small limit (``LineGuard`` and
``read_lines`` against splitting the bytes, ``SortedFile`` against itself without a limit), and a
line of exactly ``MAX_LINE`` bytes against one byte more on each path. Then a CDXJ of a few normal
lines and one line of 100 MB, made here and deleted after, given to each command and to the server:
each must refuse it with one line naming the file and the line, and its peak RSS (VmHWM of a fresh
process) must stay within ``BOUND`` of the same command's over the file without that line.
"""

from __future__ import annotations

import http.client
import io
import json
import os
import random
import shutil
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path
from typing import List, Optional, Tuple

import pytest
from hypothesis import given, strategies as st

from loadkit import serve
from warchive.boundedlines import MAX_LINE, GuardedReader, LineGuard, read_lines
from warchive.errors import LineTooLongError
from warchive.index.query import Index
from warchive.index.segment import Segment, build_segment
from warchive.index.sort import merge_files, sort_files
from warchive.index.zipnum import ZipNumIndex, write_zipnum
from warchive.sortedfile import SortedFile

GIANT = 100 << 20       # the hostile line's padding
BOUND = 32 << 10        # KiB of peak RSS a command may take over its baseline: a third of the line


# --------------------------------------------------------------------------- the readers, small

def first_long(data: bytes, limit: int) -> Optional[Tuple[int, int]]:
    """(line number, first byte) of the first line of ``data`` longer than ``limit``, or None."""
    offset = 0
    for n, line in enumerate(data.split(b"\n"), 1):
        if len(line) > limit:
            return n, offset
        offset += len(line) + 1
    return None


lines_st = st.lists(st.integers(0, 30), max_size=30).map(lambda ns: b"\n".join(b"x" * n for n in ns))


@given(data=lines_st, end_lf=st.booleans(), limit=st.integers(1, 20), cuts=st.lists(st.integers(0, 1000)))
def test_the_guard_finds_the_first_long_line_wherever_the_pieces_are_cut(data, end_lf, limit, cuts):
    data += b"\n" if end_lf and data else b""
    bounds = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    want = first_long(data, limit)
    for separate in (False, True):   # pieces of one buffer, and pieces as bytes of their own
        g = LineGuard("f", limit)
        got = None
        for a, b in zip(bounds, bounds[1:]):
            try:
                g.check(data[a:b], 0, b - a) if separate else g.check(data, a, b)
            except LineTooLongError as e:
                got = (e.lineno, e.offset)
                assert a <= e.offset + limit < b   # in the piece that holds its byte `limit` + 1
                break
        assert got == want
        if want is None:
            assert g.lines == data.count(b"\n") and g.offset == len(data)


@given(data=lines_st, end_lf=st.booleans(), limit=st.integers(1, 20), sizes=st.lists(st.integers(1, 50), min_size=1))
def test_guarded_reader_and_read_lines_agree_with_splitting(data, end_lf, limit, sizes):
    data += b"\n" if end_lf and data else b""
    want = first_long(data, limit)
    expected = data.split(b"\n")
    if expected[-1] == b"":
        expected.pop()
    try:
        got = list(read_lines(io.BytesIO(data), "f", limit))
        assert want is None and got == expected
    except LineTooLongError as e:
        assert (e.lineno, e.offset) == want
    r = GuardedReader(io.BytesIO(data), "f", limit)
    out = bytearray()
    try:
        for i in range(len(data) + 1):
            buf = bytearray(sizes[i % len(sizes)])
            n = r.readinto(memoryview(buf))
            if not n:
                break
            out += buf[:n]
        assert want is None and out == data
    except LineTooLongError as e:
        assert (e.lineno, e.offset) == want
        assert len(out) <= e.offset + limit   # its byte `limit` + 1 never reached the caller


@given(lengths=st.lists(st.integers(1, 40), min_size=1, max_size=25), limit=st.integers(8, 30),
       keys=st.lists(st.integers(0, 30), min_size=1, max_size=5), seed=st.integers(0, 1000))
def test_sorted_file_bound_answers_as_unbounded_or_names_a_long_line(tmp_path_factory, lengths, limit, keys, seed):
    rng = random.Random(seed)
    lines = sorted({(b"%03d " % rng.randrange(30)) + b"z" * n for n in lengths})
    data = b"\n".join(lines) + b"\n"
    path = tmp_path_factory.mktemp("sf") / "x.cdxj"
    path.write_bytes(data)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    long = [(s, s + len(line)) for s, line in zip(starts, lines) if len(line) > limit]
    with SortedFile(str(path)) as free, SortedFile(str(path), max_line=limit) as bound:
        for k in keys:
            start, stop = b"%03d" % k, b"%03d" % (k + rng.randrange(1, 5))
            want = list(free.range(start, stop))
            try:
                assert list(bound.range(start, stop)) == want
            except LineTooLongError as e:
                assert e.limit == limit and any(a <= e.offset < b for a, b in long), (e, long)
                if not e.inside:
                    assert any(a == e.offset for a, _ in long)
            if not long:
                assert list(bound.range(start, stop)) == want


# --------------------------------------------------------------------------- every path, at the limit

def line(path: bytes, pad: int = 0) -> bytes:
    """A CDXJ line of http://example.com/PATH; with ``pad``, a field of that many bytes more."""
    extra = b', "pad": "' + b"x" * pad + b'"' if pad else b""
    return (b'com,example)/%s 20200101000000 {"url": "http://example.com/%s", "mime": "text/html", '
            b'"status": "200", "length": "100", "offset": "0", "filename": "a.warc.gz"%s}' % (path, path, extra))


def with_line(giant: bytes) -> bytes:
    """A sorted CDXJ: eight lines, ``giant`` (the key com,example)/m), eight more."""
    return b"".join(line(bytes([k])) + b"\n" for k in b"abcdefgh") + giant + b"\n" + \
        b"".join(line(bytes([k])) + b"\n" for k in b"stuvwxyz")


def of_length(n: int) -> bytes:
    """The line of com,example)/m, padded to ``n`` bytes."""
    return line(b"m", n - len(line(b"m", 1)) + 1)


def sort_it(src: Path, out: Path) -> None:
    sort_files([str(src)], str(out), mem_limit=1 << 20)


def merge_it(src: Path, out: Path) -> None:
    merge_files([str(src)], str(out))


def build_it(src: Path, out: Path) -> None:
    build_segment([str(src)], str(out))


def zipnum_it(src: Path, out: Path) -> None:
    out.mkdir()
    write_zipnum(str(src), str(out) + "/", lines_per_block=4)


def query_it(src: Path, out: Path) -> None:
    with Index(str(src)) as idx:
        got = [c["url"] for c in idx.query("example.com/*")]
    out.write_text("\n".join(got))


PATHS = [sort_it, merge_it, build_it, zipnum_it, query_it]


@pytest.mark.parametrize("run", PATHS, ids=lambda f: f.__name__)
def test_a_line_of_max_line_bytes_is_read_and_one_byte_more_is_not(tmp_path, run):
    ok, bad = tmp_path / "ok.cdxj", tmp_path / "bad.cdxj"
    ok.write_bytes(with_line(of_length(MAX_LINE)))
    bad.write_bytes(with_line(of_length(MAX_LINE + 1)))
    assert len(of_length(MAX_LINE)) == MAX_LINE
    run(ok, tmp_path / "ok.out")
    if run is build_it:
        with Segment(str(tmp_path / "ok.out")) as seg:
            assert of_length(MAX_LINE) in list(seg.range(b"", None))
    elif run is zipnum_it:
        with ZipNumIndex(str(tmp_path / "ok.out" / "cluster.idx")) as z:
            assert of_length(MAX_LINE) in list(z)
    elif run is query_it:
        assert "http://example.com/m" in (tmp_path / "ok.out").read_text()
    else:
        assert of_length(MAX_LINE) + b"\n" in (tmp_path / "ok.out").read_bytes()
    with pytest.raises(LineTooLongError) as e:
        run(bad, tmp_path / "bad.out")
    assert e.value.path == str(bad) and e.value.limit == MAX_LINE
    at = len(with_line(b"").split(b"\n\n")[0]) + 1   # the long line's first byte
    if run is query_it:   # a search names a byte of the line
        assert at <= e.value.offset < at + MAX_LINE + 1
    else:
        assert (e.value.lineno, e.value.offset) == (9, at)
    if run is zipnum_it:
        assert list((tmp_path / "bad.out").iterdir()) == []
    elif run is not query_it:
        assert not (tmp_path / "bad.out").exists()


# --------------------------------------------------------------------------- a 100 MB line, each command

RUN = textwrap.dedent(r'''
    import sys
    from warchive.errors import ArchiveError

    def hwm():
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1])

    what, *args = sys.argv[1:]
    if what == "cli":
        from warchive.cli import main
        rc = main(args)
    else:   # Index(PATH).query(URL)
        from warchive.index.query import Index
        rc = 0
        try:
            with Index(args[0]) as idx:
                print(len(idx.query(args[1])))
        except ArchiveError as e:
            print(f"{type(e).__name__}: {e}", file=sys.stderr)
            rc = 1
    sys.stdout.flush()
    print(f"VmHWM {hwm()}", file=sys.stderr)
    sys.exit(rc)
''')

GIANT_AT = len(with_line(b"").split(b"\n\n")[0]) + 1   # where the 100 MB line starts


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """A directory with small.cdxj (16 lines), big.cdxj (the same and a line of 100 MB) and
    big.cdxj.gz; removed after the module's tests."""
    d = tmp_path_factory.mktemp("hostile")
    (d / "small.cdxj").write_bytes(with_line(line(b"m")))
    big = with_line(line(b"m", GIANT))
    (d / "big.cdxj").write_bytes(big)
    z = zlib.compressobj(1, zlib.DEFLATED, 31)
    (d / "big.cdxj.gz").write_bytes(z.compress(big) + z.flush())
    (d / "small.cdxj.gz").write_bytes(zlib.compress(with_line(line(b"m")), wbits=31))
    del big
    yield d
    shutil.rmtree(d, ignore_errors=True)


def run(cwd: Path, *args: str) -> Tuple[int, List[str], int]:
    """(exit status, lines on stderr, VmHWM in KiB) of one fresh process."""
    r = subprocess.run([sys.executable, "-c", RUN, *args], cwd=cwd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, timeout=600)
    said = r.stderr.splitlines()
    assert said and said[-1].startswith("VmHWM "), r.stderr[-2000:]
    return r.returncode, said[:-1], int(said[-1].split()[1])


COMMANDS = {
    "cdx": ("cli", "cdx", "{src}", "--url", "example.com/m"),
    "cdx-prefix": ("cli", "cdx", "{src}", "--url", "example.com/*", "--output", "json"),
    "Index.query": ("query", "{src}", "http://example.com/m"),
    "sort": ("cli", "sort", "{src}", "-o", "{out}"),
    "sort-gzip": ("cli", "sort", "{src}.gz", "-o", "{out}"),
    "merge": ("cli", "merge", "{src}", "-o", "{out}"),
    "build": ("cli", "build", "{src}", "-o", "{out}.seg"),
    "zipnum": ("cli", "zipnum", "{src}", "-o", "{out}/"),
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_100mb_line_is_refused_in_bounded_memory(hostile, tmp_path, name):
    def argv(which: str) -> List[str]:
        out = tmp_path / which / "out"
        out.parent.mkdir()
        if name == "zipnum":
            out.mkdir()
        return [a.format(src=hostile / f"{which}.cdxj", out=out) for a in COMMANDS[name]]

    rc, said, base = run(tmp_path, *argv("small"))
    assert rc == 0, said
    rc, said, peak = run(tmp_path, *argv("big"))
    src = str(hostile / "big.cdxj") + (".gz" if name == "sort-gzip" else "")
    assert rc == 1 and len(said) == 1, said
    prefix = "LineTooLongError: " if name == "Index.query" else "warchive: error: "
    assert said[0].startswith(f"{prefix}{src}: "), said
    if name.startswith(("cdx", "Index")):   # a search names a byte of the line
        assert f"is longer than {MAX_LINE} bytes" in said[0] and "the line holding byte " in said[0]
    else:
        assert f": line 9 (at byte {GIANT_AT}) is longer than {MAX_LINE} bytes" in said[0], said
        assert sorted(p.name for p in (tmp_path / "big").iterdir()) == (["out"] if name == "zipnum" else [])
        assert name != "zipnum" or not list((tmp_path / "big" / "out").iterdir())
    assert peak - base < BOUND, (name, base, peak)


def hwm_kib(pid: int) -> int:
    for s in Path(f"/proc/{pid}/status").read_text().splitlines():
        if s.startswith("VmHWM:"):
            return int(s.split()[1])
    raise AssertionError("no VmHWM")


def get(port: int, path: str) -> Tuple[int, bytes]:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def test_the_server_refuses_a_100mb_line_naming_the_collection(hostile, tmp_path):
    root = tmp_path / "colls"
    for coll, src in (("ok", "small.cdxj"), ("bad", "big.cdxj")):
        (root / coll / "archive").mkdir(parents=True)
        (root / coll / "indexes").mkdir()
        os.link(hostile / src, root / coll / "indexes" / "index.cdxj")
    with serve(root) as (base, pid):
        port = int(base.rsplit(":", 1)[1])
        for path in ("/ok/cdx?url=example.com/m&output=json", "/ok/20200101000000id_/http://example.com/m"):
            get(port, path)   # the same routes over a good index: the baseline
        before = hwm_kib(pid)
        status, body = get(port, "/bad/cdx?url=example.com/m&output=json")
        assert status == 500, body[:300]
        text = json.loads(body)["message"]
        assert text.startswith("collection 'bad': ") and f"longer than {MAX_LINE} bytes" in text, text
        status, body = get(port, "/bad/20200101000000id_/http://example.com/m")
        assert status == 500 and b"bad" in body and f"longer than {MAX_LINE} bytes".encode() in body, body[:300]
        assert hwm_kib(pid) - before < BOUND
        status, _ = get(port, "/ok/cdx?url=example.com/m")
        assert status == 200   # the other collection is served as before
