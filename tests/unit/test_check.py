"""`warchive check`: what it reports, in which words, with which exit status (warcio's verdicts:
tests/differential/test_check_vs_warcio.py)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import checkgen
import warcgen
from warchive.warc.check import check_file
from warchive.warc.reader import ArchiveIterator
from warchive.warc.verify import DEFECTS


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    return checkgen.generate(tmp_path_factory.mktemp("checkgen"))


def run_check(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "warchive", "check", *map(str, args)], capture_output=True,
                          text=True, errors="replace")


@pytest.mark.parametrize("name, words", [
    ("check_request_payload.warc", "WARC-Payload-Digest sha1:"),
    ("check_get_payload.warc", "WARC-Payload-Digest sha1:"),
    ("check_bad_base32.warc", "WARC-Payload-Digest is malformed: digest 'sha1:0189"),
    ("check_wrong_size.warc", "WARC-Block-Digest is malformed: digest 'sha1:"),
    ("check_unknown_algorithm.warc", "WARC-Block-Digest is malformed: digest 'crc32:0badc0de': unknown algorithm"),
    ("check_no_label.warc", "WARC-Block-Digest is malformed: digest '"),
    ("check_revisit_damaged.warc", "WARC-Block-Digest sha1:"),
    ("check_empty_block.warc", "does not match the block, whose digest is sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"),
])
def test_each_problem_names_its_record(cases, name, words):
    case = cases[name]
    res = check_file(str(case.path))
    rid = re.search(rb"WARC-Record-ID: (<[^>]+>)", case.records[case.record])[1].decode()
    at = checkgen.offsets(case)[case.record]
    assert not res.ok and [(f.offset, f.record_id) for f in res.problems] == [(at, rid)], res.problems
    assert words in res.problems[0].message
    r = run_check(case.path)
    assert r.returncode == 1 and f"{case.path} at byte {at}: record {rid} " in r.stderr


@pytest.mark.parametrize("fid", ["truncated_plain.warc", "truncated_member.warc.gz", "truncated_gzip.warc.gz",
                                 "truncated_gzip_header.warc.gz", "arc_truncated.arc", "arc_truncated.arc.gz"])
def test_a_file_cut_short_is_one_problem_after_its_records(broken_archives, fid):
    """A file that ends inside a record fails, with one problem at that record (its digests, of
    bytes it lacks, are not compared), after every record before it, and the cut one as far as it
    goes, were checked."""
    bf = broken_archives[fid]
    res = check_file(str(bf.path))
    assert [(f.offset, f.message.split(":")[0]) for f in res.problems] == [(bf.bad_offset, "truncated")], res.problems
    assert res.records == len(bf.records) and not res.ok


def test_folded_values_are_read_without_their_fold(tmp_path):
    """Values folded onto a continuation line from an empty first line (``WARC-Date:`` CRLF TAB
    ``2024-...``: WARC/0.17-1.0 writers) are the values after the fold: the records check clean,
    and read as the same records with each value on one line."""
    path = tmp_path / "folded.warc"
    path.write_bytes(b"".join(warcgen.folded_records()))
    res = check_file(str(path))
    assert res.ok and res.records == 5 and not res.warnings, (res.problems, res.warnings)
    one_line = tmp_path / "one-line.warc"
    one_line.write_bytes(b"".join(warcgen.folded_records(warcgen.ONE_LINE)))

    def fields(p):
        with ArchiveIterator(str(p)) as it:
            return [(r.type, r.date, r.record_id, r.target_uri, r.content_length, r.headers.get("Content-Type"),
                     r.http.get("Content-Type") if r.http else None, r.headers.get("X-Note")) for r in it]
    assert fields(path) == fields(one_line)
    assert fields(path)[4][-1] == "first part\tsecond part"


@pytest.mark.parametrize("name, field", [("check_empty_type.warc", "WARC-Type"),
                                         ("check_empty_record_id.warc", "WARC-Record-ID")])
def test_an_empty_mandatory_field_is_a_problem(cases, name, field):
    """A mandatory field that is there with no value is as missing as one that is not there."""
    case = cases[name]
    res = check_file(str(case.path))
    at = checkgen.offsets(case)[case.record]
    assert not res.ok and [(f.offset, f.message) for f in res.problems] == [(at, f"empty {field}")], res.problems
    r = run_check(case.path)
    assert r.returncode == 1 and f"{case.path} at byte {at}:" in r.stderr and f"empty {field}" in r.stderr


@pytest.mark.parametrize("name, defect", [("check_chunked_raw.warc", "chunked-payload-digest"),
                                          ("check_wget_revisit.warc.gz", "revisit-block-digest")])
def test_producer_defects_are_named_and_fail_only_strict(cases, name, defect):
    path = cases[name].path
    res = check_file(str(path))
    assert res.ok and [f.defect for f in res.defects] == [defect] and not res.warnings
    assert res.defects[0].message.startswith(defect + ": ")
    strict = check_file(str(path), strict=True)
    assert not strict.ok and [f.defect for f in strict.problems] == [defect] and not strict.defects
    r = run_check(path)
    assert r.returncode == 0 and r.stderr == (f"warchive: warning: {path}: 1 record with the producer defect {defect} "
                                              f"(first at byte {res.defects[0].offset}): {DEFECTS[defect].what}; "
                                              "not damage (-v lists them, --strict counts them as problems)\n")
    r = run_check("-v", path)
    assert r.returncode == 0 and f"warchive: warning: {res.defects[0]}" in r.stderr
    assert r.stdout == f"{path}: 2 records, 0 problems, 1 producer defects, 0 warnings\n"
    r = run_check("--strict", path)
    assert r.returncode == 1 and f"warchive: check: {path} at byte {res.defects[0].offset}: " in r.stderr


def test_right_digests_in_every_spelling_pass(cases):
    for name in ("check_correct.warc.gz", "check_md5_sha512.warc", "check_md5_hex.warc", "check_blake3.warc",
                 "check_chunked_dechunked.warc", "check_segment.warc"):
        res = check_file(str(cases[name].path), strict=True)
        assert res.ok and not res.defects, (name, res.problems)
    seg = check_file(str(cases["check_segment.warc"].path))
    assert ["segment" in w.message for w in seg.warnings] == [True]
    low = check_file(str(cases["check_lowercase_base32.warc"].path), strict=True)
    assert low.ok and len(low.warnings) == 2 and all("lower case" in w.message for w in low.warnings)


def test_a_gzip_member_of_several_records_is_one_problem(broken_archives):
    for fid, offset in (("single_member.warc.gz", 0), ("two_records_one_member.warc.gz", 305)):
        res = check_file(str(broken_archives[fid].path))
        assert [f.offset for f in res.problems] == [offset] and res.records == 5
        assert "warchive recompress" in res.problems[0].message


def test_messages_name_only_the_options_check_has(broken_archives, cases, tmp_path):
    """The reader's errors suggest --skip-errors (an option of index); check words them itself."""
    opened = tmp_path / "x.warc.gz.open"
    opened.write_bytes(broken_archives["truncated_gzip.warc.gz"].path.read_bytes())
    paths = [b.path for b in broken_archives.values()] + [c.path for c in cases.values()] + [opened]
    out = []
    # one run over the files check reads (it goes on past a bad one); an empty file, which it
    # refuses before reading anything, alone
    runs = [[p for p in paths if p.stat().st_size]] + [[p] for p in paths if not p.stat().st_size]
    for strict in ((), ("--strict",)):
        for run in runs:
            r = run_check("-v", *strict, *run)
            assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
            out.append(r.stderr)
    text = "\n".join(out)
    assert set(re.findall(r"(?<![\w-])--?[a-z][\w-]*", text)) <= {"-v", "--strict"}, text
    assert "warchive recover cuts it after its last whole record" in text     # the .open file
    assert "(the file is cut short)" in text and "(the file is cut short, or the record's Content-Length is too large)" in text


def test_remedies_are_checks_own(broken_archives):
    res = {fid: check_file(str(b.path)) for fid, b in broken_archives.items()}
    assert res["bad_crc.warc.gz"].problems[0].message.endswith(
        "(the member's bytes are damaged: compare the file with another copy)")
    assert res["not_a_warc.warc"].problems[0].message.endswith("(is it a WARC or ARC file?)")
    # a defect the reader reads past: a problem named by its kind, checking goes on after it
    cl = res["content_length_long.warc"]
    bad = broken_archives["content_length_long.warc"].bad_offset
    framing = [f for f in cl.problems if f.message.startswith("content-length: ")]
    assert len(framing) == 1 and framing[0].offset == bad, cl.problems
    assert all(f.offset == bad and "Digest" in f.message for f in cl.problems if f not in framing), cl.problems
    assert cl.records == len(broken_archives["content_length_long.warc"].records)
    assert not [f for r in res.values() for f in r.problems if "--skip-errors" in f.message or "--strict" in f.message]
