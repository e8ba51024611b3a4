"""Pipes and streams: `cat FILE | warchive index -` writes what `warchive index FILE` writes (but
for the filename field, which cdxj-indexer too makes "-"), and so do `/dev/stdin`, a FIFO and
`warchive check -`; the Python reader on a pipe yields the records, offsets and defects it
yields on the file.

The stream runs are in process, with a real pipe (os.pipe, fed by a thread) as standard input:
nothing can seek. The file runs go through tests/clibatch.py. cdxj-indexer reading `-` is the
oracle for the filename field and for the valid files.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import List, Tuple

import pytest

import warcgen
from clibatch import run_batch
from warchive.cli import main as warchive_main
from warchive.warc.reader import open as open_archive

VALID = ["kitchen_sink.warc.gz", "kitchen_sink.warc", "example.arc", "example.arc.gz", "post_put.warc.gz",
         "kitchen_sink_sl.warc.gz", "wget/docs-python-3.11.warc.gz"]
RECOVER = warcgen.recover_names()
MODES = {"cdxj": [], "cdx11": ["--cdx11"], "post-append": ["-p"], "records-all": ["--records", "all"]}


def _feed(fd: int, data: bytes) -> threading.Thread:
    def run() -> None:
        with os.fdopen(fd, "wb") as w:
            try:
                w.write(data)
            except BrokenPipeError:
                pass
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def run_on_pipe(argv: List[str], data: bytes) -> Tuple[int, bytes, str]:
    """warchive ARGV in process with standard input a pipe that carries data."""
    r, w = os.pipe()
    feeder = _feed(w, data)
    out = io.BytesIO()
    err = io.StringIO()
    old_in, old_out = sys.stdin, sys.stdout
    sys.stdin = io.TextIOWrapper(os.fdopen(r, "rb"))
    sys.stdout = io.TextIOWrapper(out, write_through=True)
    try:
        with contextlib.redirect_stderr(err):
            try:
                rc = warchive_main(argv)
            except SystemExit as e:
                rc = int(e.code or 0)
        sys.stdout.flush()
    finally:
        sys.stdout.detach()
        sys.stdin.close()
        sys.stdin, sys.stdout = old_in, old_out
        feeder.join(10)
    return rc, out.getvalue(), err.getvalue()


def _named(out: bytes, old: str, name: str = "-") -> bytes:
    """Index lines with the filename field (CDXJ; CDX-11: the last column) old set to name."""
    out = out.replace(b'"filename": "' + old.encode() + b'"', b'"filename": "' + name.encode() + b'"')
    return re.sub(rb"(?m) " + re.escape(old.encode()) + rb"$", b" " + name.encode(), out)


def _path(fid: str, valid_archives, broken_archives) -> Path:
    return (valid_archives.get(fid) or broken_archives[fid]).path


@pytest.mark.parametrize("mode", list(MODES))
def test_index_of_a_pipe_is_the_index_of_the_file(mode, valid_archives, broken_archives):
    ids = VALID + RECOVER
    paths = [_path(i, valid_archives, broken_archives) for i in ids]
    files = run_batch([["index", p, *MODES[mode]] for p in paths], reuse=True)
    for fid, p, (rc, out, err) in zip(ids, paths, files):
        prc, pout, perr = run_on_pipe(["index", "-", *MODES[mode]], p.read_bytes())
        assert (prc, rc) == (0, 0), (fid, perr, err)
        assert pout == _named(out, p.name), fid   # "-": cdxj-indexer's name of standard input
        assert perr.replace("warning: - at byte", f"warning: {p} at byte") == err, (fid, perr, err)


def test_the_filename_of_standard_input_is_cdxj_indexers(valid_archives):
    """cdxj-indexer reading `-` (a pipe): the same lines, filename "-" included."""
    for fid in ("kitchen_sink.warc.gz", "example.arc"):
        data = valid_archives[fid].path.read_bytes()
        peer = subprocess.run([sys.executable, "-m", "cdxj_indexer.main", "-"], input=data, capture_output=True)
        assert peer.returncode == 0, peer.stderr
        rc, out, err = run_on_pipe(["index", "-"], data)
        assert rc == 0 and out == peer.stdout, (fid, err)


@pytest.mark.parametrize("how", ["dev-stdin", "fifo"])
def test_non_seekable_paths(how, valid_archives, broken_archives, tmp_path):
    """/dev/stdin and a named pipe given as paths read as standard input does."""
    for fid in ("kitchen_sink.warc.gz", "content_length_long.warc", "garbage_between_members.warc.gz",
                "split_record.warc.gz"):
        p = _path(fid, valid_archives, broken_archives)
        want = run_batch([["index", p]])[0]
        if how == "dev-stdin":   # a child: /dev/stdin is file descriptor 0, a pipe
            r = subprocess.run([sys.executable, "-m", "warchive", "index", "/dev/stdin"], input=p.read_bytes(),
                               capture_output=True)
            rc, out, err = r.returncode, r.stdout, r.stderr.decode()
            name = "stdin"
        else:
            fifo = tmp_path / (fid + ".fifo")
            os.mkfifo(fifo)
            feeder = threading.Thread(target=fifo.write_bytes, args=(p.read_bytes(),), daemon=True)
            feeder.start()
            rc, out, err = run_on_pipe(["index", str(fifo)], b"")
            feeder.join(10)
            name = fifo.name
        assert rc == want[0] == 0, (fid, err)
        assert out == _named(want[1], p.name, name), fid
        assert err.count("warning:") == want[2].count("warning:"), (fid, err)


def test_check_of_a_pipe_is_the_check_of_the_file(valid_archives, broken_archives):
    ids = ["kitchen_sink.warc.gz", "example.arc.gz", "wget/docs-python-3.11-recrawl.warc.gz"] + RECOVER
    paths = [_path(i, valid_archives, broken_archives) for i in ids]
    files = run_batch([["check", p] for p in paths], reuse=True)
    for fid, p, (rc, out, err) in zip(ids, paths, files):
        prc, pout, perr = run_on_pipe(["check", "-"], p.read_bytes())
        assert prc == rc, (fid, perr, err)
        assert perr.replace("warchive: check: - ", f"warchive: check: {p} ").replace(
            "warchive: warning: -: ", f"warchive: warning: {p}: ") == err, (fid, perr, err)


def _listing(source) -> Tuple[list, list]:
    said: list = []
    with open_archive(source, on_defect=lambda d: said.append((d.offset, d.kind, d.problem, d.action))) as it:
        recs = []
        for r in it:
            payload = r.payload.read()   # before its length: a stream cannot go back
            recs.append((r.offset, r.length, r.type, r.target_uri, payload))
    return recs, said


@pytest.mark.parametrize("fid", VALID + RECOVER)
def test_the_python_reader_on_a_pipe(fid, valid_archives, broken_archives):
    p = _path(fid, valid_archives, broken_archives)
    want = _listing(str(p))
    r, w = os.pipe()
    feeder = _feed(w, p.read_bytes())
    with os.fdopen(r, "rb") as f:
        assert not f.seekable()
        got = _listing(f)
    feeder.join(10)
    assert got == want
