"""Shared inputs of the pytest-benchmark files in bench/ (not part of the default test run).

The files are the Wget fixtures of tests/data/wget, or every ``*.warc.gz`` of
the directory (or the one file) named by the environment variable
WARCHIVE_CORPUS, e.g. ``WARCHIVE_CORPUS=corpus pytest bench/``.
References (what each benchmark asserts against) are computed once per
session by a peer and never timed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Dict, List

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "data" / "wget"
CORPUS = os.environ.get("WARCHIVE_CORPUS")


def bench_paths() -> List[str]:
    if CORPUS:
        p = Path(CORPUS)
        paths = sorted(p.glob("*.warc.gz")) if p.is_dir() else [p]
    else:
        paths = sorted(FIXTURES.glob("*.warc.gz"))
    if not paths:
        raise pytest.UsageError(f"no *.warc.gz in {CORPUS or FIXTURES}")
    return [str(p) for p in paths]


@pytest.fixture(scope="session")
def warc_paths() -> List[str]:
    return bench_paths()


@pytest.fixture(scope="session")
def warcio_records(warc_paths) -> Dict[str, List[tuple]]:
    """The reference table: per file, warcio's (type, offset, length, payload size) of every record.

    The payload is what follows the HTTP head (the whole block without one), not de-chunked."""
    from warcio.archiveiterator import ArchiveIterator

    table = {}
    for p in warc_paths:
        rows = []
        with open(p, "rb") as fh:
            it = ArchiveIterator(fh)
            for rec in it:
                # before get_record_offset(), which reads the record to its end
                size = sum(len(b) for b in iter(lambda: rec.raw_stream.read(1 << 16), b""))
                off = it.get_record_offset()
                rows.append((rec.rec_type, off, it.get_record_length(), size))
        table[p] = rows
    return table


@pytest.fixture
def run(benchmark) -> Callable:
    """run(fn) -> fn(): pytest-benchmark's own calibration on the fixtures; three plain rounds on a corpus,
    where one call takes seconds."""

    def _run(fn: Callable):
        if CORPUS:
            return benchmark.pedantic(fn, rounds=3, iterations=1, warmup_rounds=0)
        return benchmark(fn)

    return _run
