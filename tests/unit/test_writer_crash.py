"""A writer killed with SIGKILL at random points loses at most the record it was writing.

A forked child writes records (small and multi-megabyte, rolling over often)
and tells the parent through a pipe where each one went once ``write``
returned; the parent kills it after a random delay. Then: every closed file
reads whole with warcio (digests checked); the ``.open`` file holds every
reported record and at most one more, is valid up to its last whole record
for warcio and our reader, and ``recover`` turns it into a valid file.
"""

from __future__ import annotations

import io
import os
import random
import signal
import time

import pytest
from warcio.archiveiterator import ArchiveIterator as WarcioIterator

from warchive.warc.check import check_file
from warchive.warc.recover import recover, valid_prefix
from warchive.warc.writer import WarcWriter


def _bodies(rng: random.Random):
    text = b"<html><body>" + b"".join(b"<p>line %d of some text</p>\n" % i for i in range(40000)) + b"</body></html>"
    return [text[: rng.randrange(100, 2000)] for _ in range(6)] + \
        [os.urandom(rng.randrange(200_000, 1_500_000)) for _ in range(2)] + [text[: rng.randrange(500_000, 1_200_000)]]


def _child(directory: str, compression: str, fd: int, bodies, seed: int, threads: int) -> None:
    rng = random.Random(seed)

    def report(w) -> None:
        os.write(fd, f"{w.filename} {w.offset} {w.length} {w.type}\n".encode())

    w = WarcWriter(directory, "CRASH", compression=compression, max_size=1_500_000, on_record=report,
                   threads=threads)
    i = 0
    while True:
        body = bodies[rng.randrange(len(bodies))]
        msg = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n" % len(body) + body
        w.write_exchange(f"http://example.com/{i}", b"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n", msg)
        i += 1


def _warcio_count(data: bytes) -> int:
    n = 0
    for rec in WarcioIterator(io.BytesIO(data), check_digests=True):
        rec.content_stream().read()
        assert rec.digest_checker.passed is not False, rec.digest_checker.problems
        n += 1
    return n


def _warcio_until_error(data: bytes) -> int:
    """Whole records warcio reads from a file with a torn tail before it stops."""
    n = 0
    try:
        for rec in WarcioIterator(io.BytesIO(data)):
            rec.content_stream().read()
            n += 1
    except Exception:  # warcio raises various errors at a torn tail; n counts whole reads before it
        return n
    return n


def _one_kill(tmp_path, rng: random.Random, bodies, k: int) -> None:
    d = tmp_path / f"k{k}"
    d.mkdir()
    compression = rng.choice(["gzip", "gzip", "none", "zstd"])
    threads = rng.choice([0, 1])
    r, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child never returns into pytest
        try:
            os.close(r)
            _child(str(d), compression, wfd, bodies, rng.randrange(1 << 30), threads)
        finally:
            os._exit(0)
    os.close(wfd)
    time.sleep(rng.uniform(0.0, 0.06))
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    reported: dict = {}
    with os.fdopen(r, "rb") as f:
        for line in f.read().decode().splitlines():
            name, off, length, _t = line.split()
            reported.setdefault(name, []).append((int(off), int(length)))
    names = os.listdir(d)
    assert len([n for n in names if n.endswith(".open")]) <= 1
    for name in names:
        path = str(d / name)
        data = open(path, "rb").read()
        mine = reported.get(name.removesuffix(".open"), [])
        if not name.endswith(".open"):
            assert check_file(path).ok
            if compression != "zstd":
                assert _warcio_count(data) == len(mine)
            continue
        records, good = valid_prefix(path)
        # every reported record is whole, at most the one being written is lost or also whole
        assert records >= len(mine) and records <= len(mine) + 1, (records, mine)
        assert all(off + length <= good for off, length in mine)
        if compression != "zstd":
            assert _warcio_count(data[:good]) == records
            assert _warcio_until_error(data) >= len(mine)   # warcio reads the .open file as it is, too
        rec = recover(path)
        assert check_file(rec.path).ok and rec.records == records


def test_sigkill_at_random_points(tmp_path):
    rng = random.Random(20261129)
    bodies = _bodies(rng)
    for k in range(50):
        _one_kill(tmp_path, rng, bodies, k)


@pytest.mark.slow
def test_sigkill_at_random_points_long(tmp_path):
    rng = random.Random()
    bodies = _bodies(rng)
    for k in range(500):
        _one_kill(tmp_path, rng, bodies, k)
