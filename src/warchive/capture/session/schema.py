"""What a session journal line is: the version line, the entry kinds and the fields this version knows.

The file (docs/format.md, "Session journals", is the full specification)::

    {"warchive-session":1,"created":"2026-11-29T22:50:01.123456Z","software":"warchive 0.1.0"}
    {"kind":"session","t":"...","software":"warchive 0.1.0","config":{...},"seeds":["https://a.example/"]}
    {"kind":"fetching","url":"https://a.example/","t":"..."}
    {"kind":"fetch","url":"https://a.example/","t":"...","status":301,"location":"https://a.example/en/"}
    {"kind":"record","url":"https://a.example/","t":"...","type":"response","warc":"WA-....warc.gz","offset":0,"length":612}
    {"kind":"fetch","url":"https://a.example/","hop":"https://a.example/en/","t":"...","status":200,...}
    {"kind":"failed","url":"https://b.example/x","t":"...","reason":"timeout after 30 s"}
    {"kind":"skipped","url":"https://c.example/y.png","t":"...","reason":"duplicate","digest":"sha1:...",...}

Fields and kinds a reader does not know are kept: ``Entry`` decodes the known
fields, the line itself keeps the rest, and a known field of a type this version
does not expect is left out of the ``Entry`` (``lenient``) instead of failing
the line. This module decodes single lines; it must not read or write files.
"""

from __future__ import annotations

import os
import time
import warnings
from typing import Any, Dict, List, Optional, Type, TypeVar, Union

import msgspec

from ... import __version__
from ...errors import SessionFormatError, UnsupportedFormatError

PathLike = Union[str, os.PathLike[str]]

FORMAT_VERSION = 1                 # the "warchive-session" number of the version line
VERSION_KEY = "warchive-session"
SOFTWARE = f"warchive {__version__}"

#: The `reason` of dedup's "write nothing" decisions (``SessionDB.skipped``).
DUPLICATE = "duplicate"

#: The entry kinds this version writes and understands (others are kept as they are).
KINDS = ("session", "fetching", "fetch", "record", "failed", "skipped", "saved", "converted", "outlinks")


class SessionWarning(UserWarning):
    """Something in a session journal was repaired or skipped (torn tail cut, damaged line skipped,
    a live session opened with force)."""


class Head(msgspec.Struct, gc=False):
    """What loading a journal decodes of each entry: enough to group entries by original URL
    and to find a record by any URL of its chain. The rest is decoded when a record is made."""

    kind: str = ""
    url: Optional[str] = None
    hop: Optional[str] = None
    location: Optional[str] = None    # fetch: where a 3xx points


class Entry(Head, omit_defaults=True):
    """The fields of an entry that this version knows (every one optional): its ``Head`` and the
    rest; the journal line holds those it does not know, see ``Session.fields``. ``kind`` is ""
    when the line has none."""

    t: Optional[str] = None
    # fetch
    status: Optional[int] = None
    content_type: Optional[str] = None
    size: Optional[int] = None
    etag: Optional[str] = None
    last_modified: Optional[str] = None
    duration: Optional[float] = None
    digest: Optional[str] = None
    headers: Optional[Dict[str, Any]] = None
    # record
    type: Optional[str] = None
    warc: Optional[str] = None
    offset: Optional[int] = None
    length: Optional[int] = None
    id: Optional[str] = None
    # saved, converted, outlinks
    path: Optional[str] = None
    conversion: Optional[str] = None
    links: Optional[List[Any]] = None
    # failed, skipped
    reason: Optional[str] = None
    attempt: Optional[int] = None
    original_uri: Optional[str] = None
    original_date: Optional[str] = None
    original_record_id: Optional[str] = None
    # session
    software: Optional[str] = None
    config: Optional[Dict[str, Any]] = None
    seeds: Optional[List[Any]] = None


#: Strict decoders: the fast path, for lines whose known fields have the types expected.
decode_entry_strict = msgspec.json.Decoder(Entry).decode
decode_head_strict = msgspec.json.Decoder(Head).decode
#: Any JSON value: every field of a line, those this version does not know included.
decode_any = msgspec.json.Decoder().decode

S = TypeVar("S", bound=msgspec.Struct)


def now() -> str:
    """The current time as entries carry it: ISO 8601 UTC with microseconds."""
    t = time.time()
    s = int(t)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + f".{int((t - s) * 1e6):06d}Z"


def lenient(line: bytes, type_: Type[S]) -> S:
    """`line` decoded as `type_` when some of its known fields have types this version does not
    expect (written by a newer version, or by hand): those fields are left out (the line keeps
    them). Raises msgspec.DecodeError / ValidationError when the line is not a JSON object."""
    d = decode_any(line)
    if not isinstance(d, dict):
        raise msgspec.ValidationError(f"expected a JSON object, got {type(d).__name__}")
    fields = frozenset(type_.__struct_fields__)
    ok: Dict[str, Any] = {}
    for k, v in d.items():
        if k in fields:
            try:
                msgspec.convert({k: v}, type_)
            except msgspec.ValidationError:
                continue
            ok[k] = v
    return msgspec.convert(ok, type_)


def decode_entry(line: bytes) -> Entry:
    """One journal line (without its line feed) as an Entry; raises msgspec.DecodeError when
    it is not a JSON object."""
    try:
        return decode_entry_strict(line)
    except msgspec.ValidationError:
        return lenient(line, Entry)


def decode_head(line: bytes) -> Head:
    """One journal line as a Head; raises msgspec.DecodeError / ValidationError when it is not
    a JSON object."""
    try:
        return decode_head_strict(line)
    except msgspec.ValidationError:
        return lenient(line, Head)


def check_version_line(path: str, line: bytes) -> Dict[str, Any]:
    """The version line of the journal `path`, decoded; raises SessionFormatError when `line`
    is not one, UnsupportedFormatError when a newer version wrote it."""
    try:
        d = decode_any(line)
    except msgspec.DecodeError:
        d = None
    if not isinstance(d, dict) or not isinstance(d.get(VERSION_KEY), int):
        raise SessionFormatError(path, 0, f"not a warchive session journal (the first line must be the version "
                                          f'line {{"{VERSION_KEY}": {FORMAT_VERSION}, ...}})')
    if d[VERSION_KEY] > FORMAT_VERSION:
        raise UnsupportedFormatError(f"{path}: session journal format version {d[VERSION_KEY]} is newer than "
                                     f"this warchive reads ({FORMAT_VERSION}): upgrade warchive")
    if d[VERSION_KEY] < 1:
        raise SessionFormatError(path, 0, f"bad session journal version {d[VERSION_KEY]}")
    return d


def damaged(path: str, pos: int, line: bytes, why: str, skip_errors: bool) -> None:
    """A line that is not an entry in the middle of the journal `path`: raise SessionFormatError,
    or warn (``SessionWarning``) with `skip_errors`."""
    err = SessionFormatError(path, pos, f"damaged entry ({why}): {line[:80]!r}",
                             "a line in the middle of the journal cannot be a torn write; read with "
                             "skip_errors=True / --skip-errors to skip it")
    if not skip_errors:
        raise err
    warnings.warn(str(err), SessionWarning, stacklevel=4)
