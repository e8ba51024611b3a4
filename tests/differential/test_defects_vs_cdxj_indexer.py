"""Files with framing defects: ``warchive index`` against cdxj-indexer 1.5.0, the reader's
offsets against warcio's, and each defect reported once at its byte.

The files are the ``recover`` fixtures of tests/warcgen.py (one per defect
class, ARC and WARC, plain and gzipped, see tests/data/README.md) and, in
the hypothesis tests, record sets of the valid fixtures with one defect class
injected at a drawn record (warcgen.inject_defect), the garbage drawn too:
lines of words, some of five fields, some with a length. The peers read as
far as they can; where warcio gives up, tests/peer_resync.py reads again
from the next record as built, so the oracle is cdxj-indexer's own lines
throughout. The text records warcio reads out of lines of five fields where
it parses the next record are in it as cdxj-indexer writes them, and
warchive must write them alike (warcgen.text_records says where they are).

The differences are documented (docs/format.md, "Where we differ") and held
here exactly, each applied to the peer's output only where the file was
built with that defect:

- in a gzip file, the ARC heads warcio makes of text inside a gzip member
  after a record, or of compressed bytes it reads as text
  (peer_resync.not_a_record_head): left out of the oracle, and warchive must
  have reported a defect at or before them (a plain file has none);
- a zero-length gzip member, which warcio counts into the next record:
  warchive gives that record the offset of its own member
  (tests/unit/test_bad_input.py proves warcio's offset unloadable);
- a gzip member holding only blank lines, which warcio reads as a record
  without WARC-Type (and cdxj-indexer --records all crashes on it): warchive
  reports an empty member; the oracle of --records all names every type;
- a record split across gzip members, where warcio gives up (a WARC
  record) or reads the record without content, ending with its first member
  (an ARC record): warchive reads it across them; its line is cdxj-indexer's for the record inflated into one
  member, at the first member's offset, its length covering both;
- a record of a gzip file after which warcio reads on inside the same member
  (and gives up, or reads a record of the first kind): warcio's length is how
  far its buffered reader had got into the member; warchive's is the
  member's size.
"""

from __future__ import annotations

import json
import os
import re
import zlib
from pathlib import Path
from typing import List, Tuple

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import peer_resync
import warcgen
from conftest import BROKEN_IDS
from warchive.errors import ArchiveError
from warchive.index.cdx import FileStats, IndexOptions, index_file
from warchive.warc.reader import open as open_archive

MODES = {"cdxj": [], "cdx11": ["--cdx11"], "records-all": ["--records", "all"], "post-append": ["-p"]}
RECOVER_IDS = [i for i in BROKEN_IDS if i in warcgen.recover_names()]
EMPTY_SHA1 = "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"
SCALE = float(os.environ.get("WARCHIVE_FUZZ_SCALE", "1"))   # as in tests/unit/test_fuzz.py


def _opts(args, said: List[str]) -> IndexOptions:
    records = args[args.index("--records") + 1] if "--records" in args else None
    return IndexOptions(cdx11="--cdx11" in args, records=records, post_append="-p" in args, report=said.append)


def warchive_lines(path: Path, args) -> Tuple[List[bytes], List[str]]:
    """warchive's index lines of path (in process: kernel and reference as `warchive index` runs
    them) and what it reported."""
    out: List[bytes] = []
    said: List[str] = []
    stats = index_file(str(path), out.append, _opts(args, said))
    assert isinstance(stats, FileStats)
    return b"".join(out).splitlines(keepends=True), said


def _post_append_fixed(lines: List[bytes], plain: List[bytes]) -> List[bytes]:
    """cdxj-indexer -p digests an already-read payload when a record has no WARC-Payload-Digest
    (the SHA-1 of nothing; see test_cdxj_vs_cdxj_indexer._post_append_oracle): those digests from
    its run without -p."""
    real = {}
    for x in plain:
        f = json.loads(x.split(b" ", 2)[2])
        real[f["offset"]] = f.get("digest")
    out = []
    for x in lines:
        key, ts, js = x.split(b" ", 2)
        f = json.loads(js)
        if f.get("digest") == EMPTY_SHA1 and real.get(f["offset"]) not in (None, EMPTY_SHA1):
            f["digest"] = real[f["offset"]]
            x = key + b" " + ts + b" " + json.dumps(f).encode() + b"\n"
        out.append(x)
    return out


def _zero_member_fixed(lines: List[bytes], records: list, defects: list, cdx11: bool) -> List[bytes]:
    """warcio counts an empty gzip member into the next record: that record's line with the offset
    and length of its own member (as built)."""
    empty = {off for off, kind in defects if kind == "empty-member"}
    if not empty:
        return lines
    own = {o: n for o, n, _, _ in records}
    out = []
    for x in lines:
        if x.startswith(b" CDX"):
            out.append(x)
            continue
        off = peer_resync.line_offset(x, cdx11)
        if off in empty:
            nxt = min(o for o in own if o > off)
            x = peer_resync.shift_line(x, nxt - off, cdx11)
            if cdx11:
                cols = x.split(b" ")
                cols[8] = str(own[nxt]).encode()
                x = b" ".join(cols)
            else:
                key, ts, js = x.split(b" ", 2)
                f = json.loads(js)
                f["length"] = str(own[nxt])
                x = key + b" " + ts + b" " + json.dumps(f).encode() + b"\n"
        out.append(x)
    return out


ALL_TYPES = "warcinfo,response,resource,request,metadata,revisit,conversion,continuation"


def _set_length(line: bytes, length: int, cdx11: bool) -> bytes:
    if cdx11:
        cols = line.split(b" ")
        cols[8] = str(length).encode()
        return b" ".join(cols)
    key, ts, js = line.split(b" ", 2)
    f = json.loads(js)
    f["length"] = str(length)
    return key + b" " + ts + b" " + json.dumps(f).encode() + b"\n"


def _inflated_whole(data: bytes) -> bytes:
    """One gzip member holding the data of the gzip members that make up ``data``."""
    out = b""
    while data:
        d = zlib.decompressobj(31)
        out += d.decompress(data)
        data = d.unused_data
    return warcgen.gzip_member(out)


def _split_lines(path: Path, args, records: list, defects: list, work: Path) -> List[Tuple[int, List[bytes]]]:
    """cdxj-indexer's lines for each record split across gzip members, made whole: (offset, lines)."""
    cdx11 = "--cdx11" in args
    length = {o: n for o, n, _, _ in records}
    data = path.read_bytes()
    out = []
    for off, kind in defects:
        if kind != "split-record":
            continue
        d = work / f"whole-{off}"
        d.mkdir(parents=True, exist_ok=True)
        whole = d / path.name
        whole.write_bytes(_inflated_whole(data[off: off + length[off]]))
        lines, err = peer_resync.run_peer(whole, [a for a in args if a != "-p"])   # alone, it pairs with none
        assert err is None, err
        out.append((off, [_set_length(peer_resync.shift_line(x, off, cdx11), length[off], cdx11)
                          for x in lines.splitlines(keepends=True) if not x.startswith(b" CDX")]))
    return out


def expected_lines(path: Path, args, records: list, defects: list, work: Path) -> Tuple[List[bytes], list]:
    """The oracle: cdxj-indexer's lines, read again where it gives up, with the documented
    differences applied; and the records warcio made of lines that are no record head."""
    cdx11 = "--cdx11" in args
    gz = path.name.endswith(".gz")
    starts = [o for o, *_ in records]
    kinds = {k for _, k in defects}
    if "empty-member" in kinds and "--records" in args and args[args.index("--records") + 1] == "all":
        args = [a if a != "all" else ALL_TYPES for a in args]   # cdxj-indexer crashes on the None type
    peer = peer_resync.resynced(path, args, starts, work)
    lines = [x for x in peer.lines if not x.startswith(b" CDX")]   # the CLI writes the header
    if "-p" in args:
        plain = peer_resync.resynced(path, [a for a in args if a != "-p"], starts, work).lines
        lines = _post_append_fixed(lines, plain)
    lines = _zero_member_fixed(lines, records, defects, cdx11)
    if gz:   # a record warcio read more after inside its member: the member's size
        length = {o: n for o, n, _, _ in records}
        lines = [_set_length(x, length[o], cdx11) if (o := peer_resync.line_offset(x, cdx11)) in peer.cut
                 and o in length else x for x in lines]
    for off, more in _split_lines(path, args, records, defects, work):
        lines = [x for x in lines if peer_resync.line_offset(x, cdx11) != off]   # (ARC: its content empty)
        at = next((i for i, x in enumerate(lines) if peer_resync.line_offset(x, cdx11) > off), len(lines))
        lines[at:at] = more
    return lines, peer.dropped


def assert_index_matches(path: Path, args, records: list, defects: list, work: Path, label: str) -> None:
    expected, dropped = expected_lines(path, args, records, defects, work)
    got, said = warchive_lines(path, args)
    assert got == expected, f"{label}\nexpected:\n{b''.join(expected).decode(errors='replace')}\n" \
                            f"got:\n{b''.join(got).decode(errors='replace')}\nsaid: {said}"
    # each defect once, at its byte, naming the file
    warned = [x for x in said if x.startswith("warchive: warning: ")]
    assert len(warned) == len(defects), (label, said, defects)
    for line, (off, _) in zip(warned, defects):
        assert line.startswith(f"warchive: warning: {path} at byte {off}: "), (label, line)
    # what warcio took for records inside gzip members: after a defect reported before it
    garbage = [off for off, kind in defects if kind in ("garbage", "content-length", "separator", "text-record")]
    cdx11 = "--cdx11" in args
    assert not dropped or path.name.endswith(".gz"), (label, dropped)
    for x in dropped:
        off = peer_resync.line_offset(x, cdx11)
        assert any(g <= off for g in garbage), (label, x, defects)


def assert_offsets_match(path: Path, records: list, defects: list, work: Path, label: str) -> None:
    """The reader's (offset, length, type, uri) of every record are warcio's (read again where it
    gives up), with the differences of the module docstring."""
    theirs, cut = peer_resync.warcio_resynced(path, [o for o, *_ in records], work)
    built = {o: r for o, *_ in records for r in [next(x for x in records if x[0] == o)]}
    kinds = {o: k for o, k in defects}
    theirs = [r for r in theirs if not (r[2] is None and kinds.get(r[0]) == "empty-member")]
    if path.name.endswith(".gz"):
        theirs = [built[r[0]] if r[0] in cut and r[0] in built else r for r in theirs]
    for off, kind in defects:
        if kind == "split-record" and not any(r[0] == off for r in theirs):
            assert off in cut, (label, cut)   # where warcio gave up
            theirs.append(built[off])
    theirs.sort()
    with open_archive(str(path), on_defect=lambda d: None) as it:
        ours = [(r.offset, r.length, r.type, r.target_uri) for r in it]
    assert len(ours) == len(theirs), (label, ours, theirs)
    for mine, peer, built in zip(ours, theirs, records):
        if mine != peer:   # only where warcio counts an empty member into this record
            assert mine == built and peer[0] < mine[0] and peer[0] + peer[1] == mine[0] + mine[1], \
                (label, mine, peer)
            assert path.read_bytes()[peer[0]: mine[0]] == warcgen.gzip_member(b""), (label, mine, peer)


# --------------------------------------------------------------------------- the fixtures

@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("fid", RECOVER_IDS)
def test_defective_fixture_indexes_as_cdxj_indexer(fid, mode, broken_archives, tmp_path):
    bf = broken_archives[fid]
    assert_index_matches(bf.path, MODES[mode], bf.records, bf.defects, tmp_path, f"{fid} [{mode}]")


@pytest.mark.parametrize("fid", RECOVER_IDS)
def test_defective_fixture_offsets_are_warcios(fid, broken_archives, tmp_path):
    bf = broken_archives[fid]
    assert_offsets_match(bf.path, bf.records, bf.defects, tmp_path, fid)


def test_every_defect_class_has_a_fixture(broken_archives):
    """Each defect class of warcgen.DEFECT_CLASSES, in each kind of file it applies to, is built
    into at least one fixture (ARC and WARC where it applies to both)."""
    seen = {(b.injected, b.path.name.endswith(".gz"), ".arc" in b.path.name)
            for b in broken_archives.values() if b.expect == "recover"}
    for kind, (files, what) in warcgen.DEFECT_CLASSES.items():
        for f in files.split():
            gz = f == "gz"
            assert (kind, gz, False) in seen or (kind, gz, True) in seen, (kind, f, what)


# --------------------------------------------------------------------------- generated files

_POOL_WARC = warcgen.warc_pieces(warcgen.recs_get_pairs() + warcgen.recs_non_http() + warcgen.recs_resource_metadata()
                                 + warcgen.recs_chunked()[:3] + warcgen.recs_unicode_urls()[:4])
_POOL_ARC = warcgen.arc_pieces(warcgen.arc_records("generated.arc"))


# words of drawn lines of text: none a record's first line (no WARC/, no date of 8 digits), some empty
# (two spaces in a row), a URL, numbers, Latin-1 and UTF-8
WORDS = ["a", "page", "<p>", "</p>", "text", "of", "five", "words", "", "http://example.com/x", "2024", "12",
         "-3", "café", "<b>x</b>", "end.", "\t", "0x10"]
FILLER = st.text(alphabet="abc xyz\n\r", max_size=30)


@st.composite
def text_garbage(draw) -> bytes:
    """Lines of words (the first not blank), some of five fields, some of those followed by as
    many bytes as their last field (a number) says."""
    lines = []
    for j in range(draw(st.integers(1, 4))):
        words = draw(st.lists(st.sampled_from(WORDS), min_size=5, max_size=7)   # (five fields, or more)
                     | st.lists(st.sampled_from(WORDS), min_size=1, max_size=4))
        if j == 0 and not " ".join(words).strip():
            words.insert(0, "text")
        if len(words) >= 5 and draw(st.booleans()):   # a length that is a number, and its bytes
            content = draw(FILLER)
            words[-1] = str(len(content))
            lines.append(" ".join(words).encode("utf-8") + b"\n" + content.encode())
        else:
            line = " ".join(words)
            lines.append(line.encode("utf-8" if draw(st.booleans()) else "latin-1"))
        lines[-1] += draw(st.sampled_from([b"\n", b"\r\n", b"\n\n"]))
    return b"".join(lines)


def _draw_pieces(draw, arc: bool) -> list:
    if arc:   # the filedesc record first, then some of the others
        rest = draw(st.lists(st.sampled_from(_POOL_ARC[1:]), min_size=1, max_size=5))
        return [_POOL_ARC[0]] + rest
    return draw(st.lists(st.sampled_from(_POOL_WARC), min_size=2, max_size=6))


def _injected(draw, pieces: list, gz: bool, kind: str, i: int, k: int, garbage=None):
    try:
        return warcgen.inject_defect(pieces, gz, kind, i, k, garbage)
    except warcgen.Unmodelled:   # (a text record running into the next record)
        assume(False)
        raise


@st.composite
def defective_files(draw):
    arc = draw(st.booleans())
    gz = draw(st.booleans())
    pieces = _draw_pieces(draw, arc)
    kind = draw(st.sampled_from(sorted(warcgen.DEFECT_CLASSES)))
    i = draw(st.integers(0, len(pieces) - 1))
    garbage = None
    if kind in ("garbage", "text_member"):
        n = len(warcgen.GARBAGE_BYTES if gz and kind == "garbage" else warcgen.GARBAGE_LINES)
        k = draw(st.integers(0, n))
        if k == n:   # drawn lines of text
            garbage, k = draw(text_garbage()), 0
    else:
        k = draw(st.integers(0, 200))
        if not warcgen.defect_applies(pieces, gz, kind, i, k):
            k = draw(st.integers(1, 3))
    assume(warcgen.defect_applies(pieces, gz, kind, i, k))
    data, records, defects, _ = _injected(draw, pieces, gz, kind, i, k, garbage)
    return (("gen.arc" if arc else "gen.warc") + (".gz" if gz else ""), data, records, defects, kind)


@st.composite
def text_files(draw):
    """Drawn lines of text after a drawn record: between records, or in a gzip member of their own."""
    arc = draw(st.booleans())
    gz = draw(st.booleans())
    pieces = _draw_pieces(draw, arc)
    kind = "text_member" if gz and draw(st.booleans()) else "garbage"
    i = draw(st.integers(0, len(pieces) - 1))
    data, records, defects, _ = _injected(draw, pieces, gz, kind, i, 0, draw(text_garbage()))
    return (("gen.arc" if arc else "gen.warc") + (".gz" if gz else ""), data, records, defects, kind)


@settings(max_examples=int(60 * SCALE), deadline=None, database=None, derandomize=not os.environ.get("WARCHIVE_FUZZ_SEED"),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                 HealthCheck.function_scoped_fixture])
@given(case=defective_files(), mode=st.sampled_from(list(MODES)))
def test_generated_defects_index_as_cdxj_indexer(case, mode, tmp_path_factory):
    _check_drawn(case, mode, tmp_path_factory.mktemp("gen"), "")


def _check_drawn(case, mode, work, what: str) -> None:
    """A drawn file (name, bytes, records, defects, kind) indexed as cdxj-indexer indexes it, its
    offsets warcio's."""
    name, data, records, defects, kind = case
    path = work / name
    path.write_bytes(data)
    label = f"{what}{kind} in {name} [{mode}]" + (f": {data!r}" if what else "")
    assert_index_matches(path, MODES[mode], records, defects, work, label)
    assert_offsets_match(path, records, defects, work, label)


@settings(max_examples=int(40 * SCALE), deadline=None, database=None,
          derandomize=not os.environ.get("WARCHIVE_FUZZ_SEED"),
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                 HealthCheck.function_scoped_fixture])
@given(case=text_files(), mode=st.sampled_from(list(MODES)))
def test_generated_text_lines_index_as_cdxj_indexer(case, mode, tmp_path_factory):
    _check_drawn(case, mode, tmp_path_factory.mktemp("text"), "text ")


@pytest.mark.parametrize("fid", ["garbage_between_records.warc", "text_between_members.warc.gz",
                                 "text_member.warc.gz", "arc_text_line.arc"])
def test_a_text_line_warcio_takes_for_an_arc_head_is_indexed_as_cdxj_indexer(fid, broken_archives, tmp_path):
    """Fixtures where warcio reads records out of lines of text: cdxj-indexer indexes them (no URL
    scheme, or timestamp 29991231235959); warchive writes the same lines, reports a text-record
    defect at each, once, and fails there with --strict."""
    bf = broken_archives[fid]
    peer = peer_resync.resynced(bf.path, [], [o for o, *_ in bf.records], tmp_path)
    texts = [o for o, k in bf.defects if k == "text-record"]
    assert texts and not peer.dropped
    theirs = {peer_resync.line_offset(x, False): x for x in peer.lines}
    for off in texts:
        _, url, ts = peer_resync.line_fields(theirs[off], False)
        assert ts == peer_resync.NO_DATE or not re.match(r"[a-z]+:", url or ""), theirs[off]
    got, said = warchive_lines(bf.path, [])
    assert got == peer.lines
    assert [x.split(" at byte ")[1].split(":")[0] for x in said if ": a line that is no record head" in x] \
        == [str(o) for o in texts], said
    with pytest.raises(ArchiveError) as e:
        index_file(str(bf.path), lambda b: None, IndexOptions(strict=True, report=lambda m: None))
    assert e.value.offset == bf.defects[0][0] and "no record head" in str(e.value), e.value


def _member_read_as_text() -> "warcgen.Piece":
    """A resource record whose gzip member, read as text from its first LF on, has a line of five
    fields next (found by trying bodies of one length: the deflate bytes are what they are; its
    digests are those of the first)."""
    first = warcgen.warc_pieces([warcgen.w_block("resource", "bad/r", "http://broken.example.com/r", "text/plain",
                                                 b"resource number 00000\n")])[0]
    for n in range(100000):
        p = warcgen.Piece(first.head, b"resource number %05d\n" % n, first.sep, first.rtype, first.uri, False)
        m = warcgen.gzip_member(p.plain())
        q = m.find(b"\n") + 1
        while 0 < q < len(m) and not warcgen._line_at(m, q).rstrip():
            q += len(warcgen._line_at(m, q))
        if 0 < q < len(m) and warcgen._five_fields(warcgen._line_at(m, q)) is not None:
            return p
    raise AssertionError("no such body")


def test_compressed_bytes_after_a_text_record_are_a_member(tmp_path):
    """A text record between gzip members whose separator line is the next member's first bytes:
    warcio, reading on as text, makes a record of the member's compressed bytes too; warchive
    reads the member (and indexes it as cdxj-indexer does from there)."""
    pieces = warcgen.warc_pieces(warcgen._base_recs())
    pieces[2:2] = [_member_read_as_text()]
    text = b"a line of text of five words or more\n"
    chunks = [warcgen.gzip_member(p.plain()) for p in pieces[:2]] + [text] + [
        warcgen.gzip_member(p.plain()) for p in pieces[2:]]
    offs = [sum(map(len, chunks[:j])) for j in range(len(chunks) + 1)]
    kinds = [(p.rtype, p.uri) for p in pieces[:2]] + [("response", "a%20line%20of%20text%20of")] + [
        (p.rtype, p.uri) for p in pieces[2:]]
    records = [(offs[j], offs[j + 1] - offs[j], t, u) for j, (t, u) in enumerate(kinds)]
    defects = [(offs[2], "text-record")]
    data = b"".join(chunks)
    path = tmp_path / "text.warc.gz"
    path.write_bytes(data)
    peer = peer_resync.resynced(path, [], [o for o, *_ in records], tmp_path)
    assert len(peer.dropped) == 1 and peer_resync.line_offset(peer.dropped[0], False) > records[3][0], peer.dropped
    assert_index_matches(path, [], records, defects, tmp_path, "compressed bytes")
    assert_offsets_match(path, records, defects, tmp_path, "compressed bytes")


def test_a_split_record_whose_rest_begins_with_a_text_line(tmp_path):
    """A record whose head is in one gzip member and whose block, in the next, begins with a line
    of five fields: warcio ends the record with its member and reads a text record out of the
    next one; so does warchive (it does not read the record across the members)."""
    pieces = warcgen.warc_pieces(warcgen._base_recs())
    rec = warcgen.warc_pieces([warcgen.w_block("resource", "bad/x", "http://broken.example.com/x", "text/plain",
                                               b"a line of five words here\nmore text\n")])[0]
    chunks = [warcgen.gzip_member(p.plain()) for p in pieces[:2]] + [
        warcgen.gzip_member(rec.head), warcgen.gzip_member(rec.block + rec.sep), warcgen.gzip_member(pieces[2].plain())]
    offs = [sum(map(len, chunks[:j])) for j in range(len(chunks) + 1)]
    records = [(offs[j], offs[j + 1] - offs[j], t, u) for j, (t, u) in enumerate(
        [(p.rtype, p.uri) for p in pieces[:2]] + [(rec.rtype, rec.uri), ("response", "a%20line"),
                                                 (pieces[2].rtype, pieces[2].uri)])]
    defects = [(offs[2], "content-length"), (offs[3], "text-record")]
    path = tmp_path / "split.warc.gz"
    path.write_bytes(b"".join(chunks))
    for mode in MODES:
        assert_index_matches(path, MODES[mode], records, defects, tmp_path, f"split text [{mode}]")
    assert_offsets_match(path, records, defects, tmp_path, "split text")


def test_a_member_holding_a_text_line_without_its_content(tmp_path):
    """A gzip member holding only a line of five fields with an http URL and a length: warcio's HTTP
    head parser meets the member's end, it reads no record there and counts the member into the
    next record (as an empty member: docs/format.md, "Where we differ", 11); warchive reports the
    line and gives the next record its own member."""
    pieces = warcgen.warc_pieces(warcgen._base_recs())
    chunks = [warcgen.gzip_member(p.plain()) for p in pieces]
    chunks[2:2] = [warcgen.gzip_member(b"http://example.com/ 93.184.216.34 2024 text/html 5\n")]
    offs = [sum(map(len, chunks[:j])) for j in range(len(chunks) + 1)]
    path = tmp_path / "void.warc.gz"
    path.write_bytes(b"".join(chunks))
    peer = peer_resync.resynced(path, [], offs[:-1], tmp_path)
    assert peer_resync.line_offset(peer.lines[0], False) == offs[2]   # the response, from the text member on
    expected = [_set_length(peer_resync.shift_line(peer.lines[0], offs[3] - offs[2], False), offs[4] - offs[3], False)]
    got, said = warchive_lines(path, [])
    assert got == expected + peer.lines[1:]
    assert [x.split(" at byte ")[1].split(":")[0] for x in said if x.startswith("warchive: warning")] == [str(offs[2])]


def test_a_file_that_begins_with_a_text_line_is_no_archive(tmp_path):
    """warcio reads a line of five fields at the start of a file as a text record; warchive says the
    file is no archive (docs/format.md, "Where we differ", 11)."""
    pieces = warcgen.warc_pieces(warcgen._base_recs())
    path = tmp_path / "text-first.warc"
    path.write_bytes(b"a line of text of five words\n" + b"".join(p.plain() for p in pieces))
    peer, _ = peer_resync.run_peer(path, [])
    assert peer.startswith(b"a%20line%20of)/ " + peer_resync.NO_DATE.encode())
    with pytest.raises(ArchiveError) as e:
        warchive_lines(path, [])
    assert e.value.offset == 0 and "not a WARC or ARC record" in str(e.value)


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_a_record_cut_in_its_head_is_not_read(gz, tmp_path):
    """The file ends inside the last record's WARC head, in its WARC-Payload-Digest: warchive
    writes cdxj-indexer's lines for the records before it and reports the cut record (truncated),
    which cdxj-indexer indexes with the digest cut short (docs/format.md, "Where we differ", 4).
    In a gzip file the member is cut where what inflates ends there."""
    pieces = warcgen.warc_pieces(warcgen._base_recs())
    last = pieces[-1].plain()
    at = last.index(b"WARC-Payload-Digest: sha1:") + len(b"WARC-Payload-Digest: sha1:") + 10
    before = [warcgen.gzip_member(p.plain()) if gz else p.plain() for p in pieces[:-1]]
    if gz:
        member = warcgen.gzip_member(last)
        n = next(n for n in range(len(member)) if len(warcgen.inflated_prefix(member[:n])) >= at)
        cut = member[:n]
        at = len(warcgen.inflated_prefix(cut))
        assert b"\r\n\r\n" not in last[:at]
    else:
        cut = last[:at]
    off = sum(map(len, before))
    path = tmp_path / ("cut.warc.gz" if gz else "cut.warc")
    path.write_bytes(b"".join(before) + cut)
    peer, err = peer_resync.run_peer(path, ["--records", "all"])
    assert err is None, err
    theirs = peer.splitlines(keepends=True)
    got, said = warchive_lines(path, ["--records", "all"])
    assert got == theirs[:-1] and peer_resync.line_offset(theirs[-1], False) == off, (got, theirs)
    digest = json.loads(theirs[-1].split(b" ", 2)[2])["digest"]
    whole = re.search(rb"WARC-Payload-Digest: (\S+)", last)[1].decode()
    assert whole.startswith(digest) and digest != whole, (digest, whole)
    assert [x for x in said if x.startswith("warchive: warning: ")] == \
        [f"warchive: warning: {path} at byte {off}: the file ends inside the head of a record (reading ends "
         "there, with nothing of the record read)"], said
