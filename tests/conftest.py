"""Shared fixtures: the generated WARC/ARC corpus and the peer oracles.

Everything under tests/ that reads archives gets them from here: the files
of tests/warcgen.py are generated once per session into a temporary
directory, the committed Wget files are used in place (read-only). Tests ask
for ``valid_archive`` or ``broken_archive`` and are run once per file.
The oracles (warcio, cdxj-indexer) run in-process; warchive runs in a
subprocess so a crash or hang in a kernel fails one test, not the session.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest
from hypothesis import settings

# No per-example deadline: the machines that run the tests are shared and noisy, and a test must
# not fail on timing (any @settings without a deadline inherits this profile's).
settings.register_profile("warchive", deadline=None)
settings.load_profile("warchive")

TESTS = Path(__file__).resolve().parent
if str(TESTS) not in sys.path:  # so test modules can `import warcgen` whatever their rootdir/import mode
    sys.path.insert(0, str(TESTS))

import warcgen  # noqa: E402

WGET_DIR = TESTS / "data" / "wget"
WGET_IDS = ["wget/" + p.name for p in sorted(WGET_DIR.glob("*.warc.gz"))]
VALID_IDS = warcgen.valid_names() + WGET_IDS
BROKEN_IDS = warcgen.broken_names()

# What the committed Wget files hold (see tests/data/wget/PROVENANCE.md).
WGET_WHAT = {
    "wget/docs-python-3.11.warc.gz": "GNU Wget crawl: warcinfo, 557 request/response pairs, resources, metadata; "
                                     "every member has an `sl` extra field; <...> target URIs",
    "wget/docs-python-3.11-recrawl.warc.gz": "GNU Wget re-crawl with --warc-dedup: 556 Wget-style revisits",
}


# --------------------------------------------------------------------------- the corpus

@dataclass
class Corpus:
    root: Path
    valid: dict     # id -> warcgen.Fixture
    broken: dict    # id -> warcgen.BrokenFile


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> Corpus:
    """Every generated fixture, written once per session (about 0.3 s)."""
    root = tmp_path_factory.mktemp("warcgen")
    valid = warcgen.generate_valid(root / "valid")
    broken = warcgen.generate_broken(root / "broken")
    for wid in WGET_IDS:
        valid[wid] = warcgen.Fixture(WGET_DIR / wid.split("/", 1)[1], WGET_WHAT.get(wid, "GNU Wget crawl"))
    for fid, item in [*valid.items(), *broken.items()]:
        item.id = fid
    return Corpus(root, valid, broken)


@pytest.fixture(scope="session")
def valid_archives(corpus) -> dict:
    """All valid archive files: {id: Fixture(path, what, records)}; generated + tests/data/wget/*.warc.gz."""
    return corpus.valid


@pytest.fixture(scope="session")
def broken_archives(corpus) -> dict:
    """All broken files: {id: BrokenFile(path, what, bad_offset, expect, good_records)}."""
    return corpus.broken


def pytest_generate_tests(metafunc):
    if "valid_archive" in metafunc.fixturenames:
        metafunc.parametrize("valid_archive", VALID_IDS, indirect=True)
    if "broken_archive" in metafunc.fixturenames:
        metafunc.parametrize("broken_archive", BROKEN_IDS, indirect=True)


@pytest.fixture
def valid_archive(request, valid_archives):
    """One valid archive (the test runs once per file of VALID_IDS)."""
    return valid_archives[request.param]


@pytest.fixture
def broken_archive(request, broken_archives):
    """One broken file (the test runs once per file of BROKEN_IDS)."""
    return broken_archives[request.param]


# --------------------------------------------------------------------------- oracles

def warcio_listing(path, types=None) -> list:
    """[(offset, length, WARC-Type, WARC-Target-URI)] as warcio reports them (arc2warc=True)."""
    from warcio.archiveiterator import ArchiveIterator
    out = []
    with open(path, "rb") as fh, contextlib.redirect_stderr(io.StringIO()):
        it = ArchiveIterator(fh, arc2warc=True)
        for rec in it:
            if types is not None and rec.rec_type not in types:
                continue
            out.append((it.get_record_offset(), it.get_record_length(), rec.rec_type,
                        rec.rec_headers.get_header("WARC-Target-URI")))
    return out


@dataclass
class PeerRun:
    output: bytes                 # what cdxj-indexer wrote to -o (partial if it crashed)
    error: Optional[BaseException]
    stderr: str


_cdxj_cache: dict = {}


def run_cdxj_indexer(inputs, args, out_dir: Path) -> PeerRun:
    """``cdxj-indexer ARGS INPUTS -o OUT`` through its own CLI entry point, in-process.

    Results are cached per (inputs, args) for the session; a crash is kept as
    ``error`` together with what it had written before crashing.
    """
    from cdxj_indexer.main import main
    key = (tuple(str(p) for p in inputs), tuple(args))
    if key in _cdxj_cache:
        return _cdxj_cache[key]
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"cdxj-indexer-{len(_cdxj_cache)}.out"
    err = io.StringIO()
    error = None
    try:
        with contextlib.redirect_stderr(err):
            main(list(args) + [str(p) for p in inputs] + ["-o", str(out)])
    except Exception as e:  # cdxj-indexer's own crash: reported by the caller, never ignored
        error = e
    res = PeerRun(out.read_bytes() if out.exists() else b"", error, err.getvalue())
    _cdxj_cache[key] = res
    return res


@pytest.fixture(scope="session")
def cdxj_indexer(tmp_path_factory):
    """Function (inputs, args) -> PeerRun, cached for the session."""
    out_dir = tmp_path_factory.mktemp("cdxj-indexer")
    return lambda inputs, args: run_cdxj_indexer(inputs, args, out_dir)


WARCHIVE_TIMEOUT = 120


def run_warchive(args, timeout: int = WARCHIVE_TIMEOUT, cwd=None) -> subprocess.CompletedProcess:
    """``python -m warchive ARGS`` in a subprocess (bytes stdout/stderr)."""
    env = dict(os.environ)
    env.setdefault("PYTHONFAULTHANDLER", "1")
    return subprocess.run([sys.executable, "-m", "warchive", *map(str, args)], capture_output=True,
                          timeout=timeout, cwd=cwd, env=env)


@pytest.fixture(scope="session")
def warchive_cli():
    """Function (args, timeout=120) -> CompletedProcess of ``python -m warchive``."""
    return run_warchive


@pytest.fixture(scope="session")
def warcio_list():
    """Function (path, types=None) -> [(offset, length, type, target-uri)] from warcio."""
    return warcio_listing


def diff_report(expected: bytes, got: bytes, label: str = "", context: int = 2, max_lines: int = 40) -> str:
    """Unified diff of the first differing lines of two outputs (for assertion messages)."""
    a = expected.decode("utf-8", "replace").splitlines(keepends=True)
    b = got.decode("utf-8", "replace").splitlines(keepends=True)
    first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    lo = max(0, first - context)
    hi = first + max_lines // 2
    lines = list(difflib.unified_diff(a[lo:hi], b[lo:hi], "cdxj-indexer (expected)", "warchive (got)",
                                      n=context, lineterm=""))
    head = (f"{label}: outputs differ first at line {first + 1} "
            f"(expected {len(a)} lines, got {len(b)})\n")
    return head + "\n".join(x.rstrip("\n") for x in lines[:max_lines])


@pytest.fixture(scope="session")
def output_diff():
    """Function (expected, got, label) -> readable diff of the first differing lines."""
    return diff_report
