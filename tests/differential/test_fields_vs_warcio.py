"""`warchive index --fields` against `warcio index -f` (warcio 1.8.1), byte for byte.

Every valid archive, with field sets that take in every kind of field warcio
knows (offset, length, filename, http:status, http:HEADER, WARC headers in
any case, names it does not know, repeated and empty names), one file at a
time and several at once, from a path and from standard input. ARC records
get a random WARC-Record-ID from both tools, so it is not asked of them.
Expected lines come from warcio only.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from clibatch import run_batch, warcio_cli

FIELD_SETS = [
    "offset,warc-type,warc-target-uri",            # warcio's default
    "offset,length,filename,http:status",
    "WARC-Date,warc-record-id,content-type,Content-Length,warc-payload-digest,WARC-Block-Digest,"
    "warc-concurrent-to,warc-refers-to,warc-refers-to-target-uri,warc-refers-to-date,warc-profile",
    "warc-type,http:content-type,http:Content-Length,http:location,http:transfer-encoding,"
    "http:content-encoding,http:status,http:host,http:user-agent,http:etag",
    "warc-type,warc-type,Offset,http:Status,http:,,no-such-header,warc-filename,warc-ip-address,length",
    "",
]


def _for(path, spec: str) -> str:
    if str(path).endswith((".arc", ".arc.gz")):
        spec = ",".join(f for f in spec.split(",") if f.lower() != "warc-record-id")
    return spec


def test_fields_as_warcio_indexes_them(valid_archive):
    path = valid_archive.path
    specs = [_for(path, s) for s in FIELD_SETS]
    got = run_batch([["index", "--fields", spec, path] for spec in specs], reuse=True)
    for spec, (rc, out, err) in zip(specs, got):
        expected, _ = warcio_cli(["index", "-f", spec, str(path)])
        assert rc == 0, err
        assert out == expected, (valid_archive.id, spec, _first_diff(expected, out))


def _first_diff(expected: bytes, got: bytes) -> str:
    a, b = expected.splitlines(), got.splitlines()
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"line {i + 1}: warcio {x!r} warchive {y!r}"
    return f"warcio {len(a)} lines, warchive {len(b)}"


def test_several_files_a_directory_and_standard_input(valid_archives, tmp_path):
    names = ["get_pairs.warc.gz", "example.arc", "unicode_urls.warc", "revisits.warc.gz"]
    paths = [str(valid_archives[n].path) for n in names]
    spec = "offset,length,filename,warc-type,warc-target-uri,http:status"
    expected, _ = warcio_cli(["index", "-f", spec, *paths])
    (rc, out, err), = run_batch([["index", "-f", spec, *paths]])
    assert (rc, out) == (0, expected), err
    d = tmp_path / "dir"   # a directory: its archives in os.walk order, as the CDXJ index walks it
    (d / "sub").mkdir(parents=True)
    for i, p in enumerate(paths):
        (d / ("sub" if i % 2 else "") / f"{i}-{os.path.basename(p)}").write_bytes(open(p, "rb").read())
    (d / "notes.txt").write_text("not an archive")
    walked = [os.path.join(root, f) for root, _, files in os.walk(d) for f in files if not f.endswith(".txt")]
    expected, _ = warcio_cli(["index", "-f", spec, *walked])
    (rc, out, err), = run_batch([["index", "-f", spec, d]])
    assert (rc, out) == (0, expected), err
    for name in names:   # standard input: warcio and warchive both name it "-"
        data = valid_archives[name].path.read_bytes()
        r = subprocess.run([sys.executable, "-m", "warchive", "index", "--fields", spec, "-"], input=data,
                           capture_output=True, timeout=120)
        w = subprocess.run([sys.executable, "-m", "warcio.cli", "index", "-f", spec], input=data,
                           capture_output=True, timeout=120)
        assert (r.returncode, r.stdout) == (0, w.stdout), (name, r.stderr)


def test_the_other_index_options(valid_archives, tmp_path):
    """--records keeps the types named (default: all, as warcio), --dir-root names files as the
    CDXJ index does, -o publishes the file; options of the CDXJ index alone are usage errors."""
    fx = valid_archives["kitchen_sink.warc.gz"]
    out = tmp_path / "fields.jsonl"
    got = run_batch([
        ["index", "-f", "warc-type,offset", "--records", "response,revisit", fx.path],
        ["index", "-f", "filename", "--dir-root", fx.path.parent.parent, fx.path],
        ["index", "-f", "offset", fx.path, "-o", out],
        ["index", "-f", "offset", "--cdx11", fx.path],
        ["index", "-f", "offset", "-s", fx.path],
        ["index", "-f", "offset", "-j", "2", fx.path],
        ["index", "-f", "offset", "-p", fx.path],
        ["index", "-f", "offset", fx.path.parent / "missing.warc.gz"],
    ])
    all_types, _ = warcio_cli(["index", "-f", "warc-type,offset", str(fx.path)])
    kept = [ln for ln in all_types.splitlines(keepends=True)
            if b'"warc-type": "response"' in ln or b'"warc-type": "revisit"' in ln]
    assert got[0][:2] == (0, b"".join(kept))
    assert set(got[1][1].splitlines()) == {b'{"filename": "%s/%s"}' % (fx.path.parent.name.encode(),
                                                                      fx.path.name.encode())}
    assert got[2][:2] == (0, b"") and out.read_bytes() == warcio_cli(["index", "-f", "offset", str(fx.path)])[0]
    for rc, stdout, err in got[3:7]:
        assert rc == 2 and "does not go with --fields" in err and stdout == b"", err
    assert got[7][0] == 1 and "no such file" in got[7][2]


def test_skip_errors_goes_on_after_a_damaged_record(broken_archives):
    bf = broken_archives["bad_crc.warc.gz"]
    got = run_batch([["index", "-f", "offset,warc-type", bf.path], ["index", "-f", "offset", "--skip-errors", bf.path]])
    (rc1, out1, err1), (rc2, out2, err2) = got
    assert rc1 == 1 and f"at byte {bf.bad_offset}" in err1
    assert out1.count(b"\n") == len(bf.good_records)
    assert rc2 == 0 and f"skipped: {bf.path} at byte {bf.bad_offset}" in err2
    assert out2.count(b"\n") > len(bf.good_records)


@pytest.mark.parametrize("name", ["two_records_one_member.warc.gz", "single_member.warc.gz"])
def test_records_sharing_a_member_have_no_offsets(broken_archives, name):
    bf = broken_archives[name]
    (rc, out, err), (rc2, out2, _) = run_batch([["index", "-f", "offset,warc-type", bf.path],
                                                ["index", "-f", "warc-type", bf.path]])
    assert rc == 1 and "holds several records" in err
    assert (rc2, out2.count(b"\n")) == (0, 5)   # without offsets every record has its line
