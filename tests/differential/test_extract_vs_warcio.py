"""`warchive extract` against `warcio extract` (warcio 1.8.1), byte for byte.

Every record of every valid archive (the generated WARC and ARC fixtures,
plain and gzipped, and the committed Wget crawls), in the three modes
(default, ``--headers``, ``--payload``), at the offsets warcio reports: the
output of `warchive extract FILE OFFSET` must equal warcio's. A file of
records built here covers what the fixtures do not (several
WARC-Target-URI fields, continuation lines in the WARC head, a Latin-1
header byte, raw deflate, a chunked body that breaks off, ARC lines with
spaces in the URL and an ARC version block with metadata). Expected output
comes from warcio only.
"""

from __future__ import annotations

import gzip
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

import warcgen
from clibatch import run_batch, warcio_extract

MODES = [[], ["--headers"], ["--payload"]]


def _compare(path: Path, offsets: list) -> list:
    """Problems of `warchive extract` against warcio at these offsets (all three modes)."""
    argvs = [["extract", str(path), str(off), *mode] for off in offsets for mode in MODES]
    got = run_batch(argvs, reuse=True)
    problems = []
    for argv, (rc, out, err) in zip(argvs, got):
        expected = warcio_extract(path, argv[2], argv[3:])
        if rc != 0 or out != expected:
            first = next((i for i in range(min(len(out), len(expected))) if out[i] != expected[i]),
                         min(len(out), len(expected)))
            problems.append(f"{' '.join(argv[2:])}: exit {rc} {err.strip()!r}; {len(expected)} bytes expected, "
                            f"{len(out)} got, first difference at byte {first}: warcio "
                            f"{expected[max(0, first - 40):first + 40]!r} warchive {out[max(0, first - 40):first + 40]!r}")
    return problems


def test_every_record_as_warcio_extracts_it(valid_archive, warcio_list):
    offsets = [r[0] for r in warcio_list(valid_archive.path)]
    assert offsets
    problems = _compare(valid_archive.path, offsets)
    assert not problems, f"{valid_archive.id}: {len(problems)} differ; " + "\n".join(problems[:5])


# --------------------------------------------------------------------------- records the fixtures lack

def _http(first: bytes, headers: list, body: bytes) -> bytes:
    return warcgen.http_bytes(first, headers, body)


def odd_records() -> list:
    """Raw WARC records (bytes) whose heads and bodies warcio's writer would not write."""
    chunked_cut = b"5\r\nHello\r\n5\r\nWorldXX3\r\nabc\r\n0\r\n\r\n"     # a chunk without its CRLF
    raw_deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    dfl = raw_deflate.compress(warcgen.HTML) + raw_deflate.flush()
    big = bytes(range(256)) * 300   # more than one 16 KiB block of warcio's readers
    big_gz = gzip.compress(big, mtime=0)
    resp = "application/http; msgtype=response"

    def rec(name, uri, block, extra=(), rtype="response", ctype=resp, version=b"WARC/1.0"):
        return warcgen.r_rec(rtype, name, uri, ctype, block, extra=extra, version=version).raw

    page = _http(b"HTTP/1.1 200 OK", [("Content-Type", "text/html")], warcgen.HTML)
    return [
        rec("odd/two-uris", "<http://example.com/a b>", page,
            extra=(("WARC-Target-URI", "<http://example.com/second one>"),)),
        rec("odd/continued", "http://example.com/continued", page,
            extra=(("X-Folded", "first part\r\n  second part\r\n\tthird"),)),
        rec("odd/lowercase-version", "http://example.com/lower", page, version=b"warc/1.0"),
        rec("odd/latin1-warc", "http://example.com/latin1", page, extra=((b"X-Note", b"caf\xe9 na\xefve"),)),
        rec("odd/deflate-raw", "http://example.com/raw-deflate",
            _http(b"HTTP/1.1 200 OK", [("Content-Encoding", "deflate")], dfl)),
        rec("odd/chunk-cut", "http://example.com/chunk-cut",
            _http(b"HTTP/1.1 200 OK", [("Transfer-Encoding", "chunked")], chunked_cut)),
        rec("odd/big-gzip", "http://example.com/big.bin",
            _http(b"HTTP/1.1 200 OK", [("Content-Encoding", "GZIP"), ("Content-Type", "application/x-bin")],
                  big_gz)),
        rec("odd/encoding-unknown", "http://example.com/compress",
            _http(b"HTTP/1.1 200 OK", [("Content-Encoding", "compress")], b"not decoded\n")),
        rec("odd/empty-http-head", "http://example.com/empty-head", b"\r\nbody after an empty head\n"),
        rec("odd/request-post", "http://example.com/form",
            _http(b"POST /form HTTP/1.1", [("Host", "example.com"), ("Content-Type", "text/plain")], b"a=1&b=2"),
            rtype="request", ctype="application/http; msgtype=request"),
        rec("odd/https-revisit", "https://example.com/revisit",
            _http(b"HTTP/1.1 304 Not Modified", [("ETag", '"x"')], b""), rtype="revisit",
            extra=(("WARC-Profile", "http://netpreserve.org/warc/1.0/revisit/server-not-modified"),)),
        rec("odd/dns", "dns:example.com", b"20240102030405\nexample.com.\t300\tIN\tA\t192.0.2.1\n",
            rtype="response", ctype="text/dns"),
    ]


def odd_arc_records() -> list:
    meta = (b"1 1 InternetArchive\nURL IP-address Archive-date Content-type Archive-length\n"
            b'<?xml version="1.0"?>\n<arcmetadata><operator>tests</operator></arcmetadata>\n')
    page = _http(b"HTTP/1.1 200 OK", [("Content-Type", "text/html"), ("X-Caf\xe9", "ok")], warcgen.HTML)
    return [
        warcgen.arc_record(b"filedesc://odd.arc", b"0.0.0.0", b"text/plain", meta),
        warcgen.arc_record(b"http://example.com/a page with spaces.html", b"192.0.2.9", b"text/html", page),
        warcgen.arc_record(b"http://example.com/short-date", b"192.0.2.9", b"text/html", page, date=b"20240102"),
        warcgen.arc_record(b"http://example.com/no-type", b"192.0.2.9", b"no-type", page),
    ]


@pytest.mark.parametrize("name", ["odd.warc", "odd.warc.gz", "odd.arc", "odd.arc.gz"])
def test_records_the_fixtures_lack(tmp_path, name, warcio_list):
    recs = odd_arc_records() if ".arc" in name else odd_records()
    path = tmp_path / name
    path.write_bytes(b"".join(warcgen.gzip_member(r) if name.endswith(".gz") else r for r in recs))
    offsets = [r[0] for r in warcio_list(path)]
    assert len(offsets) == len(recs)
    problems = _compare(path, offsets)
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------- the command itself

def test_the_console_script_and_standard_input(valid_archives, warchive_cli):
    """`python -m warchive extract` prints what warcio prints, from a path, from `-` (a pipe: read
    forward to OFFSET) and from /dev/stdin."""
    for name, flags in (("example.arc.gz", []), ("chunked.warc", ["--payload"]), ("get_pairs.warc.gz", ["--headers"])):
        path = valid_archives[name].path
        for off in valid_archives[name].member_offsets[1:-1:2]:
            expected = warcio_extract(path, off, flags)
            r = warchive_cli(["extract", path, off, *flags])
            assert (r.returncode, r.stdout) == (0, expected), (name, off, r.stderr)
            for src in ("-", "/dev/stdin"):
                p = subprocess.run([sys.executable, "-m", "warchive", "extract", src, str(off), *flags],
                                   input=path.read_bytes(), capture_output=True, timeout=120)
                assert (p.returncode, p.stdout) == (0, expected), (name, off, src, p.stderr)


@pytest.mark.parametrize("fid", ["garbage_between_records.warc", "text_between_members.warc.gz",
                                 "text_member.warc.gz", "arc_text_line.arc"])
def test_a_text_record_as_warcio_extracts_it(fid, broken_archives):
    """At the offset of a text record (a line warcio takes for an ARC head, which the index lists
    as cdxj-indexer does) `warchive extract` writes what warcio writes."""
    bf = broken_archives[fid]
    offsets = [o for o, kind in bf.defects if kind == "text-record"]
    assert offsets
    problems = _compare(bf.path, offsets)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("fid", ["truncated_plain.warc", "truncated_member.warc.gz", "arc_truncated.arc",
                                 "arc_truncated.arc.gz"])
def test_a_truncated_record_as_warcio_extracts_it(fid, broken_archives):
    """At the offset of a record the file ends inside (its content cut short; the index lists it as
    cdxj-indexer does) `warchive extract` writes what warcio writes: what there is of it."""
    bf = broken_archives[fid]
    offsets = [o for o, kind in bf.defects if kind == "truncated"]
    assert offsets
    problems = _compare(bf.path, offsets)
    assert not problems, "\n".join(problems)
