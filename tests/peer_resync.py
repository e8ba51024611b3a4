"""cdxj-indexer and warcio read again where they give up: the oracle for files with defects.

warcio (and so cdxj-indexer) stops with ArchiveLoadFailed at some framing
defects (a Content-Length that eats the next record's first line, bytes
between gzip members, ...), where warchive's lenient reader finds the next
record and reads on. What warchive must then write is what the peer writes
for the bytes before it gave up, followed by what the peer writes for the
rest of the file read from the next record on: ``resynced`` runs the peer on
the file, and after each give-up again on the file's tail from the first
record start (known from how the file was built) after the last record it
read, shifting the offsets of what it reports by where the tail begins.

warcio takes any line of five space-separated fields, where it parses the
next record, for an ARC record head, so a line of text between records such
as ``<html>a page saved in the middle</html>`` becomes a record (URL
``<html>a page``, a date of ``in``, no content) that cdxj-indexer indexes
with timestamp 29991231235959. warchive reads those text records too, and
their offsets are among the record starts a file was built with (warcgen
text_records). In a gzip file warcio also makes them of the text inside a
gzip member after a record (its offsets there are where its buffered reader
stood) and of compressed bytes it reads as text (after a record that is not
compressed), which warchive does not read as records (docs/format.md, "Where
we differ"): ``not_a_record_head`` says which peer records those are.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List, Optional, Sequence, Tuple

from cdxj_indexer.main import main
from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")


NO_DATE = "29991231235959"   # warcio's timestamp of an ARC date that is no number


def not_a_record_head(offset: int, url: Optional[str], timestamp: str, starts: Sequence[int], gz: bool) -> bool:
    """Is the record warcio reports at ``offset`` (with this URL and 14-digit timestamp) of a
    gzip file an ARC head it made of text where warchive reads none: of a gzip member's
    compressed bytes (its URL begins with the gzip magic), or not at a record start as built,
    with a URL without a scheme or a date that is no number? (Inside a gzip member warcio's
    offset of such a record is where its buffered reader stood, so the bytes there tell
    nothing; every other record built has a URL with a scheme or none, and a date.)"""
    if not gz or url is None:   # no URL: a record of another type than ARC's
        return False
    if url.startswith("\x1f\x8b"):   # a gzip member's bytes read as text (at its start, too)
        return True
    return offset not in starts and (not _SCHEME.match(url) or timestamp == NO_DATE)


def line_fields(line: bytes, cdx11: bool) -> Tuple[int, Optional[str], str]:
    """(offset, url, timestamp) of an index line."""
    if cdx11:
        cols = line.split(b" ")
        url = cols[2].decode("utf-8", "replace")
        return int(cols[9]), url if url != "-" else None, cols[1].decode()
    _, ts, js = line.split(b" ", 2)
    f = json.loads(js)
    return int(f["offset"]), f.get("url"), ts.decode()


# --------------------------------------------------------------------------- cdxj-indexer


def run_peer(path: Path, args: Sequence[str]) -> Tuple[bytes, Optional[BaseException]]:
    """cdxj-indexer ARGS PATH, in process: (its output, the exception it stopped with)."""
    out = path.with_name(path.name + ".peer-out")
    if out.exists():
        out.unlink()
    error = None
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            main(list(args) + [str(path), "-o", str(out)])
    except Exception as e:   # noqa: BLE001 - the peer's give-up is the point
        error = e
    data = out.read_bytes() if out.exists() else b""
    out.unlink(missing_ok=True)
    return data, error


def _cdx11(args: Sequence[str]) -> bool:
    return "--cdx11" in args or "-11" in args


def line_offset(line: bytes, cdx11: bool) -> int:
    if cdx11:
        return int(line.split(b" ")[9])
    return int(json.loads(line.split(b" ", 2)[2])["offset"])


def shift_line(line: bytes, by: int, cdx11: bool) -> bytes:
    """The index line with its offset moved by ``by`` bytes."""
    if by == 0:
        return line
    if cdx11:
        cols = line.split(b" ")
        cols[9] = str(int(cols[9]) + by).encode()
        return b" ".join(cols)
    key, ts, js = line.split(b" ", 2)
    f = json.loads(js)
    f["offset"] = str(int(f["offset"]) + by)
    return key + b" " + ts + b" " + json.dumps(f).encode() + (b"\n" if js.endswith(b"\n") else b"")


@dataclass
class Resynced:
    lines: List[bytes]      # the index lines, offsets in the whole file (a --cdx11 header once)
    gave_up: List[int]      # where each run before the last stopped (after the last record it read)
    dropped: List[bytes]    # lines of records warcio made of lines that are no record head
    cut: List[int]          # records warcio read more after in the same run: a give-up or a dropped one


def _tails(path: Path, starts: Sequence[int], run: Callable[[Path], Tuple[list, bool]],
           last_of: Callable[[list, int], Optional[int]], work: Path) -> Tuple[list, List[int]]:
    """Run ``run`` on the file, then on its tail from the first of ``starts`` after where each run
    gave up; items of every run, offsets relative to the tail (with the tail's start)."""
    data = path.read_bytes()
    pos = 0
    got: list = []
    gave_up: List[int] = []
    k = 0
    while True:
        if pos == 0:
            part = path
        else:
            k += 1
            d = work / f"tail-{k}"
            d.mkdir(parents=True, exist_ok=True)
            part = d / path.name   # the same name: it is in every index line
            part.write_bytes(data[pos:])
        items, failed = run(part)
        got.append((pos, items))
        if not failed:
            return got, gave_up
        last = last_of(items, pos)
        # nothing read: the record at pos is unreadable (max: warcio's offsets in a member may go back)
        after = max(last, pos) if last is not None else pos
        gave_up.append(after)
        nxt = [s for s in starts if s > after]
        if not nxt:
            return got, gave_up
        pos = nxt[0]


def resynced(path: Path, args: Sequence[str], starts: Sequence[int], work: Path) -> Resynced:
    """cdxj-indexer's lines for path read again at the first record of ``starts`` after each
    give-up (see the module docstring); the lines of not_a_record_head records are left out."""
    cdx11 = _cdx11(args)
    gz = path.name.endswith(".gz")

    def last_of(lines: list, pos: int) -> Optional[int]:
        """The offset (in the whole file) of the last record of a run on the tail at pos."""
        offs = [line_offset(y, cdx11) for y in (shift_line(x, pos, cdx11) for x in lines if not x.startswith(b" CDX"))
                if not not_a_record_head(*line_fields(y, cdx11), starts, gz)]
        return max(offs) if offs else None

    def run(part: Path) -> Tuple[list, bool]:
        out, err = run_peer(part, args)
        if err is not None and type(err).__name__ != "ArchiveLoadFailed":
            raise AssertionError(f"cdxj-indexer crashed on {part}: {err!r}")
        lines = out.splitlines(keepends=True)
        if err is not None and "-p" in args:
            # -p holds each record back until the next one is read (to pair them): the one read
            # last before giving up is written by the run without -p (alone, it pairs with none)
            plain, _ = run_peer(part, [a for a in args if a != "-p"])
            offs = [line_offset(x, cdx11) for x in lines if not x.startswith(b" CDX")]
            last = max(offs) if offs else None
            lines += [x for x in plain.splitlines(keepends=True) if last is None or line_offset(x, cdx11) > last]
        return lines, err is not None

    runs, gave_up = _tails(path, starts, run, last_of, work)
    lines: List[bytes] = []
    dropped: List[bytes] = []
    cut = list(gave_up)
    for pos, part in runs:
        for x in part:
            if x.startswith(b" CDX"):
                if not lines:
                    lines.append(x)
                continue
            x = shift_line(x, pos, cdx11)
            if not_a_record_head(*line_fields(x, cdx11), starts, gz):
                dropped.append(x)
                real = [y for y in lines if not y.startswith(b" CDX")]
                if real:
                    cut.append(line_offset(real[-1], cdx11))
            else:
                lines.append(x)
    return Resynced(lines, gave_up, dropped, cut)


# --------------------------------------------------------------------------- warcio


def warcio_records(path: Path) -> Tuple[list, bool]:
    """[(offset, length, type, uri)] as warcio's iterator reports them, and whether it gave up."""
    out = []
    with open(path, "rb") as fh, contextlib.redirect_stderr(io.StringIO()):
        it = ArchiveIterator(fh, arc2warc=True)
        try:
            for rec in it:
                out.append((it.get_record_offset(), it.get_record_length(), rec.rec_type,
                            rec.rec_headers.get_header("WARC-Target-URI"), rec.rec_headers.get_header("WARC-Date")))
        except ArchiveLoadFailed:
            return out, True
    return out, False


def _ts(date: Optional[str]) -> str:
    return re.sub(r"\D", "", date or "")[:14]


def warcio_resynced(path: Path, starts: Sequence[int], work: Path) -> Tuple[list, List[int]]:
    """warcio's records of path, read again at the next record of ``starts`` where it gives up
    (offsets in the whole file), less those made of lines that are no record head; and the
    records it read more after in the same run (a give-up, or one of those left out)."""
    gz = path.name.endswith(".gz")

    def last_of(recs: list, pos: int) -> Optional[int]:
        real = [pos + off for off, _, _, u, date in recs if not not_a_record_head(pos + off, u, _ts(date), starts, gz)]
        return real[-1] if real else None

    runs, gave_up = _tails(path, starts, warcio_records, last_of, work)
    out: list = []
    cut = list(gave_up)
    for pos, recs in runs:
        for off, length, t, u, date in recs:
            if not not_a_record_head(pos + off, u, _ts(date), starts, gz):
                out.append((pos + off, length, t, u))
            elif out:
                cut.append(out[-1][0])
    return out, cut
