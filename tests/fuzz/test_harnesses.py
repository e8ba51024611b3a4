"""The fuzz harnesses (tests/fuzz/harnesses.py) as tests.

Default run: every harness over its seed corpus, in process (a seed that raises
anything but the allowed errors fails the test). ``-m fuzz``: every harness
under atheris for WARCHIVE_FUZZ_RUNS inputs (default 20000) in a subprocess
(``python -m tests.fuzz.run``) with a fixed seed; the run passes when libFuzzer exits 0, i.e. found
no unexpected exception, crash or hang (-timeout=10 s per input).
"""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

import warchive

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
    # warchive from where this process has it (src/ in development, site-packages in CI)
    where = str(Path(warchive.__file__).resolve().parents[1])
    # a fixed seed (WARCHIVE_FUZZ_SEED, default 1) and hash seed: the short run in CI tries the
    # same inputs each time, so a failure there is reproducible and never a lottery; long runs
    # (scripts/fuzz.sh, scripts/fuzz_long.py) draw their own seeds
    seed = os.environ.get("WARCHIVE_FUZZ_SEED", "1")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([where, str(ROOT), str(ROOT / "tests")]),
               PYTHONHASHSEED="0")
    p = subprocess.run([sys.executable, "-m", "tests.fuzz.run", name, f"-runs={runs}", f"-seed={seed}",
                        f"-artifact_prefix={tmp_path}/"],
                       cwd=ROOT, env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-4000:]


CRASHERS = Path(__file__).parent / "crashers"


def test_crasher_warc_content_length_overflow() -> None:
    # harness warc: a resynced text record at byte 453 whose length is 7777...7 (34 digits) makes
    # an offset past a C int64, which must not escape as an OverflowError from read_at
    checked("warc")((CRASHERS / "warc-content-length-overflow").read_bytes())


@pytest.mark.parametrize("crasher, harness", [
    # a resumeKey decoded to a lone surrogate: a 400 answer (QueryError), no UnicodeEncodeError
    ("cdx-query-resume-key-surrogate", "cdx_query"),
    # a journal line whose "t" holds a byte that is no UTF-8: SessionFormatError at the line
    # (damage) from read_session, not msgspec's DecodeError from Session.fields()
    ("journal-not-utf8", "journal"),
    # a style sheet with a UTF-32 BOM and a unit past U+10FFFF: U+FFFD in its place, no
    # UnicodeDecodeError from the transcoding
    ("css-utf32-past-unicode", "css"),
    # "PK\x05\x06" in the last 21 bytes of a ZIP: ZipFormatError, not struct.error
    ("wacz-end-signature-at-the-end", "wacz"),
    # a Wget request whose WARC-Target-URI <...> is repeated: warcio corrects the last copy and
    # reads the first (the harness's comparison applies warcio's correction to the first)
    ("reader-repeated-target-uri", "diff_reader"),
])
def test_crasher(crasher: str, harness: str) -> None:
    checked(harness)((CRASHERS / crasher).read_bytes())


def _resource(length: bytes) -> bytes:
    return (b"WARC/1.0\r\nWARC-Type: resource\r\nWARC-Target-URI: urn:x\r\nContent-Length: " + length
            + b"\r\n\r\nabc\r\n\r\n")


def _read(data: bytes) -> object:
    from warchive.errors import ArchiveError
    from warchive.warc import reader
    found: list = []
    try:
        return [(r.offset, r.payload.read()) for r in reader.open(io.BytesIO(data), on_defect=found.append)], \
            [(d.offset, d.kind) for d in found]
    except ArchiveError as e:
        return type(e).__name__, e.offset


@pytest.mark.parametrize("length", [b"7" * 34, str(1 << 63).encode(), str((1 << 64) + 5).encode()])
@pytest.mark.parametrize("gz", [False, True])
def test_absurd_content_length_reads_as_one_past_the_end(length: bytes, gz: bool) -> None:
    # a Content-Length no file can reach is read as one just past the end of the file is: the
    # second record's content, then what is left of its gzip member (a content-length defect) or
    # of the plain file (a truncated one)
    def file(cl: bytes) -> bytes:
        first, second = _resource(b"3"), _resource(cl)
        return gzip.compress(first) + gzip.compress(second) if gz else first + second
    past_eof = _read(file(b"100"))
    second = len(gzip.compress(_resource(b"3"))) if gz else len(_resource(b"3"))
    records, defects = past_eof   # type: ignore[misc]
    assert records[1] == (second, b"abc\r\n\r\n")
    assert defects == [(second, "content-length" if gz else "truncated")]
    assert _read(file(length)) == past_eof
