"""The fuzz harnesses (tests/fuzz/harnesses.py) as tests.

Default run: every harness over its seed corpus, in process (a seed that raises
anything but the allowed errors fails the test). ``-m fuzz``: every harness
under atheris for WARCHIVE_FUZZ_RUNS inputs (default 20000) in a subprocess
(``python -m tests.fuzz.run``); the run passes when libFuzzer exits 0, i.e. found
no unexpected exception, crash or hang (-timeout=10 s per input).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fuzz import seeds
from tests.fuzz.harnesses import HARNESSES, checked

ROOT = Path(__file__).resolve().parents[2]
SEEDS = seeds.build()


@pytest.mark.parametrize("name", sorted(HARNESSES))
def test_seed_corpus(name: str) -> None:
    assert SEEDS[name], f"no seeds for {name}"
    run = checked(name)
    for s in SEEDS[name]:
        run(s)


def test_harness_catches_what_it_must() -> None:
    # the property is not vacuous: an input the parser rejects raises an allowed error (swallowed)
    # and the unchecked harness does raise it
    from warchive.errors import ArchiveError
    with pytest.raises(ArchiveError):
        HARNESSES["cdxj"](b"not a line")
    checked("cdxj")(b"not a line")


@pytest.mark.fuzz
@pytest.mark.parametrize("name", sorted(HARNESSES))
def test_fuzz(name: str, tmp_path: Path) -> None:
    runs = int(os.environ.get("WARCHIVE_FUZZ_RUNS", "20000"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT)]))
    p = subprocess.run([sys.executable, "-m", "tests.fuzz.run", name, f"-runs={runs}",
                        f"-artifact_prefix={tmp_path}/"],
                       cwd=ROOT, env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-4000:]


CRASHERS = Path(__file__).parent / "crashers"


@pytest.mark.xfail(raises=OverflowError, strict=True,
                   reason="open: a resynced record at byte 453 with Content-Length 7777...7 (34 digits) "
                          "reaches gzip_members.Reader.read_at with an offset past a C long "
                          "(warc/reader.py _finish_plain_record)")
def test_crasher_warc_content_length_overflow() -> None:
    # found by atheris (harness warc, 20,791 inputs): must raise an ArchiveError child, raises OverflowError
    checked("warc")((CRASHERS / "warc-content-length-overflow").read_bytes())
