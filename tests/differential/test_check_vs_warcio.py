"""`warchive check` against warcio 1.8.1's `warcio check -v`, file by file and record by record.

The relation held on every generated fixture (valid and broken), the Wget
files and the check cases of tests/checkgen.py:

- a file warcio fails, warchive fails, and every record warcio names as
  failed warchive names too (a problem at its offset, with its record id) —
  except where warcio fails a digest that is right, each time proven here
  from the bytes (``warcio_wrong``): the de-chunked payload digest of a
  chunked body (warcio digests the chunked body, webrecorder/warcio#74/#75;
  proven with the body warcio's own reader de-chunks), an algorithm hashlib
  lacks (blake3), base32 in lower case (warcio compares text), md5 in hex
  (warcio takes 32 hex digits for base32). When warcio stops on an exception
  without naming a record, warchive reports a problem at or after the last
  record warcio read.
- a file warcio passes, warchive passes — or each problem it reports is a
  real defect that warcio does not look for (``REAL_DEFECTS``, with why);
  but an empty file, which warcio passes, warchive fails (docs/cli.md,
  "Paths": an empty WARC named on the command line is an error).

Producer defects that warchive names (Wget's revisit block digests, payload
digests over the chunked body) leave a file passing, as warcio passes it;
``--strict`` fails it.
"""

from __future__ import annotations

import base64
import hashlib
import io
import re
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import blake3
import pytest

import checkgen
from conftest import BROKEN_IDS, VALID_IDS

CASE_IDS = ["check/" + c.file_name for c in checkgen.cases()]
EMPTY_SHA1 = "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"


# --------------------------------------------------------------------------- running both

@dataclass
class WarcioRecord:
    offset: int
    record_id: str
    type: str
    messages: List[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any("failed" in m or "unknown hash algorithm" in m for m in self.messages)


@dataclass
class WarcioRun:
    status: int
    records: Dict[int, WarcioRecord]
    stopped: Optional[str]      # the exception that ended the file ('saw exception', or a traceback)


def warcio_check(path) -> WarcioRun:
    r = subprocess.run([sys.executable, "-m", "warcio.cli", "check", "-v", str(path)], capture_output=True,
                       text=True, errors="replace")
    records: Dict[int, WarcioRecord] = {}
    last: Optional[WarcioRecord] = None
    stopped = None
    for line in r.stdout.splitlines():
        m = re.match(r"  offset (\d+) WARC-Record-ID (\S+) (\S+)$", line)
        if m:
            last = records[int(m[1])] = WarcioRecord(int(m[1]), m[2], m[3])
        elif line.startswith("  saw exception"):
            stopped = line.strip()
        elif line.startswith("    ") and last is not None:
            last.messages.append(line.strip())
    if r.returncode and stopped is None and "Traceback" in r.stderr:
        stopped = r.stderr.strip().splitlines()[-1]
    return WarcioRun(r.returncode, records, stopped)


@dataclass
class OurProblem:
    offset: Optional[int]
    record_id: Optional[str]
    message: str


def warchive_check(path, *opts) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "warchive", "check", *opts, str(path)], capture_output=True,
                          text=True, errors="replace", timeout=300)


def our_problems(stderr: str, path) -> List[OurProblem]:
    out = []
    prefix = f"warchive: check: {path}"
    for line in stderr.splitlines():
        if not line.startswith(prefix):
            continue
        m = re.match(r"(?: at byte (\d+))?:(?: record (<[^>]*>))? (.*)$", line[len(prefix):])
        assert m, line
        out.append(OurProblem(int(m[1]) if m[1] else None, m[2], m[3]))
    return out


# --------------------------------------------------------------------------- where warcio is wrong

def _warcio_read(path, offset: int):
    """(WARC head, block as stored, payload de-chunked by warcio's ChunkedDataReader when the HTTP
    head says chunked, Content-Encoding kept) of the record at ``offset``, read by warcio."""
    from warcio.archiveiterator import ArchiveIterator
    from warcio.bufferedreaders import ChunkedDataReader
    with open(path, "rb") as f:
        f.seek(offset)
        r = next(iter(ArchiveIterator(f, no_record_parse=True)))
        block = r.raw_stream.read()
    with open(path, "rb") as f:
        f.seek(offset)
        r = next(iter(ArchiveIterator(f)))
        payload = r.raw_stream.read()
        chunked = r.http_headers is not None and r.http_headers.get_header("Transfer-Encoding") == "chunked"
        if chunked:
            payload = ChunkedDataReader(io.BytesIO(payload)).read()
        return r.rec_headers, block, payload, chunked


def _decode(value: str) -> List[bytes]:
    """Every byte string the digest text can stand for (base32 in any case, hex, base64)."""
    out = []
    for dec in (lambda v: base64.b32decode(v, casefold=True), bytes.fromhex, base64.b64decode):
        try:
            out.append(dec(value))
        except ValueError:   # binascii.Error is a ValueError
            pass
    return out


def _digest(alg: str, data: bytes) -> Optional[bytes]:
    if alg == "blake3":
        return blake3.blake3(data).digest()
    try:
        return hashlib.new(alg, data).digest()
    except ValueError:
        return None


def warcio_wrong(path, rec: WarcioRecord) -> Optional[str]:
    """Why every failure warcio reports on this record is its own mistake, proven from the bytes: the
    digest is right. None when one failure is not excused."""
    fields, block, payload, chunked = _warcio_read(path, rec.offset)
    reasons = []
    for m in rec.messages:
        if not ("failed" in m or "unknown hash algorithm" in m):
            continue
        name = "WARC-Block-Digest" if "block" in m else "WARC-Payload-Digest"
        alg, _, value = (fields.get_header(name) or "").partition(":")
        if _digest(alg, block if name == "WARC-Block-Digest" else payload) not in _decode(value):
            return None
        if alg == "blake3":
            reasons.append(f"{name}: blake3, which hashlib lacks")
        elif alg == "md5" and len(value) == 32 and hashlib.md5(block).hexdigest() == value.lower():
            reasons.append(f"{name}: md5 in hex, taken for base32")
        elif value != value.upper() and _digest(alg, block if name == "WARC-Block-Digest" else payload) \
                == base64.b32decode(value.upper()):
            reasons.append(f"{name}: base32 in lower case")
        elif name == "WARC-Payload-Digest" and chunked:
            reasons.append(f"{name}: over the de-chunked body (webrecorder/warcio#74)")
        else:
            return None
    return "; ".join(reasons) or None


# Problems warchive reports on records (and files) that warcio passes, with why warcio passes them.
REAL_DEFECTS = [
    (r"^truncated: |the file is cut short",
     "warcio 1.8.1 reads a record the file ends inside as far as it goes (its digests 'not checked'), or "
     "drops it, and passes the file"),
    (r"^WARC-(Block|Payload)-Digest is malformed",
     "warcio reads no digest of a revisit (a malformed digest is a problem on any record)"),
    (r"^WARC-Block-Digest \S+ does not match the block, whose digest is " + EMPTY_SHA1,
     "warcio compares a block digest after the last byte of the block, so never for an empty one"),
    (r"^WARC-Block-Digest \S+ does not match the block", "warcio checks no digest of a revisit"),
    (r"^((no|empty) WARC-(Type|Record-ID|Date)|invalid WARC-Date)", "warcio checks no mandatory field"),
    (r"^(content-length|separator|blank-lines|garbage|text-record|empty-member|plain-record|split-record|"
     r"filedesc-fields): ",
     "warcio warns about a framing defect it reads past (or reads past it silently) but passes the file"),
]


def real_defect(problem: OurProblem, warcio_rec: Optional[WarcioRecord]) -> Optional[str]:
    for pattern, why in REAL_DEFECTS:
        if re.search(pattern, problem.message):
            if "revisit" in why and (warcio_rec is None or warcio_rec.type != "revisit"):
                continue
            return why
    return None


# --------------------------------------------------------------------------- the files

@pytest.fixture(scope="module")
def check_cases(tmp_path_factory):
    return checkgen.generate(tmp_path_factory.mktemp("checkgen"))


@pytest.fixture
def archive(request, corpus, check_cases):
    fid = request.param
    if fid.startswith("check/"):
        return check_cases[fid.split("/", 1)[1]].path
    return (corpus.valid.get(fid) or corpus.broken[fid]).path


@pytest.mark.parametrize("archive", VALID_IDS + BROKEN_IDS + CASE_IDS, indirect=True)
def test_check_vs_warcio(archive):
    theirs = warcio_check(archive)
    run = warchive_check(archive, "-v")
    if archive.stat().st_size == 0:   # named on the command line, an empty file is an error (docs/cli.md,
        # "Paths"), where warcio passes it: there are no records to compare
        assert theirs.status == 0 and not theirs.records, theirs
        assert run.returncode == 1 and f"{archive}: empty file" in run.stderr, run.stderr
        return
    ours = our_problems(run.stderr, archive)
    assert run.returncode in (0, 1), run.stderr
    assert (run.returncode == 1) == bool(ours), run.stderr
    if theirs.status:
        excused = {}
        for rec in theirs.records.values():
            if not rec.failed:
                continue
            why = warcio_wrong(archive, rec)
            mine = [p for p in ours if p.offset == rec.offset]
            if why:
                excused[rec.offset] = why
                assert not [p for p in mine if "Digest" in p.message], (why, mine)
            else:
                assert [p for p in mine if p.record_id == rec.record_id], (rec, ours)
        if theirs.stopped:
            # where warcio was when it stopped (its offsets are no positions when they go backwards:
            # records inside a shared gzip member)
            seen = list(theirs.records)
            last = seen[-1] if seen == sorted(seen) and seen else 0
            assert any(p.offset is not None and p.offset >= last for p in ours), (theirs.stopped, ours)
        if theirs.stopped or len(excused) < sum(r.failed for r in theirs.records.values()):
            assert run.returncode == 1, (theirs, run.stderr)
            return
    # warcio passes the file (or fails only digests that are right): so do we, but for real defects
    wrong_length = {p.offset for p in ours if p.message.startswith("content-length: ")}
    for p in ours:
        if p.offset in wrong_length and re.match(r"WARC-(Block|Payload)-Digest \S+ does not match", p.message):
            continue   # the block read is not the one digested: its Content-Length is wrong (named too)
        assert real_defect(p, theirs.records.get(p.offset)) is not None, (p, theirs.records.get(p.offset))


@pytest.mark.parametrize("case", checkgen.cases(), ids=lambda c: c.file_name)
def test_check_cases_verdicts(case, check_cases):
    """The verdicts each case records (from how it was built) are those of both checkers."""
    path = check_cases[case.file_name].path
    theirs = warcio_check(path)
    assert ("fail" if theirs.status else "pass") == case.warcio, theirs
    lenient, strict = warchive_check(path), warchive_check(path, "--strict")
    if case.ours == "defect":
        assert lenient.returncode == 0 and "producer defect" in lenient.stderr, lenient.stderr
        assert strict.returncode == 1, strict.stderr
        at = checkgen.offsets(case)[case.record]
        assert [p for p in our_problems(strict.stderr, path) if p.offset == at], strict.stderr
    else:
        assert lenient.returncode == (case.ours == "fail"), lenient.stderr
        assert strict.returncode == lenient.returncode
    if case.ours == "fail":
        at = checkgen.offsets(case)[case.record]
        has_id = re.search(rb"WARC-Record-ID: <", case.records[case.record]) is not None   # (else none to name)
        assert [p for p in our_problems(lenient.stderr, path) if p.offset == at and (p.record_id or not has_id)], \
            lenient.stderr


def test_wget_revisits_pass_unless_strict(valid_archives):
    path = valid_archives["wget/docs-python-3.11-recrawl.warc.gz"].path
    lenient = warchive_check(path)
    assert lenient.returncode == 0
    assert lenient.stderr.count("\n") == 1 and "556 records with the producer defect revisit-block-digest" \
        in lenient.stderr, lenient.stderr
    strict = warchive_check(path, "--strict")
    problems = our_problems(strict.stderr, path)
    assert strict.returncode == 1 and len(problems) == 556
    assert all(p.message.startswith("revisit-block-digest: ") for p in problems)
