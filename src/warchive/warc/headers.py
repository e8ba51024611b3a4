"""Heads of WARC records and HTTP messages, parsed exactly as warcio parses them.

A head is a status line, then ``Name: value`` lines (continuation lines start
with a space or tab), ended by a line that is blank once trailing whitespace is
stripped. Each line is decoded as UTF-8, or as Latin-1 when it is not valid
UTF-8, and right-stripped; names lose trailing blanks, values leading
whitespace; continuation lines are joined to the value as they are; a line
without ':' is dropped with its continuations. These rules are warcio's, so
that our index keys and fields match the tools archivists use, but for one: a
value folded onto its continuation lines from an empty first line
(``WARC-Type:`` CRLF TAB ``metadata``) loses its leading white space, as the
WARC grammar (like HTTP/1.1's) says (white space around a value is not part
of it), where warcio keeps the tab (docs/format.md, "Where we differ").

This module only parses bytes already in memory; it never reads files.
"""

from __future__ import annotations

from typing import Dict, Iterator, List, Optional, Tuple

from .._ext.warc_headers import parse_head as _parse_head_c

Field = Tuple[str, str]


def decode_line(raw: bytes) -> str:
    """A header line as text: UTF-8, or Latin-1 when it is not valid UTF-8."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


class Headers:
    """A parsed head: ``protocol``, ``statusline`` and ordered ``(name, value)`` fields.

    Lookups by name are case-insensitive and return the first match, as in
    warcio's StatusAndHeaders; the object is falsy when it has neither a status
    line nor fields. ``fields`` is changed through ``replace`` (or by adding fields):
    lookups go through an index of the lower-case names, made at the first lookup.
    """

    __slots__ = ("protocol", "statusline", "fields", "total_len", "_index")

    def __init__(self, protocol: str, statusline: str, fields: List[Field], total_len: int = 0) -> None:
        self.protocol = protocol
        self.statusline = statusline
        self.fields = fields
        self.total_len = total_len
        self._index: Optional[Tuple[int, Dict[str, str]]] = None   # (fields indexed, lower name -> first value)

    def get(self, name: str, default: Optional[str] = None) -> Optional[str]:
        index = self._index
        fields = self.fields
        if index is None or index[0] != len(fields):
            first: Dict[str, str] = {}
            for k, v in fields:
                first.setdefault(k.lower(), v)
            index = self._index = (len(fields), first)
        return index[1].get(name.lower(), default)

    def get_all(self, name: str) -> List[str]:
        low = name.lower()
        if name.isascii():
            n = len(name)
            return [v for k, v in self.fields if len(k) == n and k.lower() == low]
        return [v for k, v in self.fields if k.lower() == low]

    def __getitem__(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def items(self) -> List[Field]:
        return list(self.fields)

    def __iter__(self) -> Iterator[Field]:
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    def __bool__(self) -> bool:
        return bool(self.statusline or self.fields)

    @property
    def status(self) -> str:
        """The status code of an HTTP response head ('' when there is none)."""
        return self.statusline.split(" ", 1)[0]

    def replace(self, name: str, value: str) -> None:
        """Set the last field called ``name`` to ``value`` (append when absent), as warcio does."""
        low = name.lower()
        self._index = None
        for i in range(len(self.fields) - 1, -1, -1):
            if self.fields[i][0].lower() == low:
                self.fields[i] = (self.fields[i][0], value)
                return
        self.fields.append((name, value))

    def to_bytes(self) -> bytes:
        """The head as ``protocol statusline`` CRLF fields CRLF CRLF (UTF-8)."""
        first = self.protocol
        if first and self.statusline:
            first += " "
        first += self.statusline
        out = [first + "\r\n"] if first else []
        out.extend(f"{k}: {v}\r\n" for k, v in self.fields)
        out.append("\r\n")
        return "".join(out).encode("utf-8")

    def __repr__(self) -> str:
        return f"Headers({self.protocol!r}, {self.statusline!r}, {self.fields!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Headers):
            return NotImplemented
        return (self.protocol, self.statusline, self.fields) == (other.protocol, other.statusline, other.fields)


class Head:
    """What parse_head found: the status line (stripped), the fields, and where the head ended."""

    __slots__ = ("status", "fields", "end", "total_len")

    def __init__(self, status: str, fields: List[Field], end: int, total_len: int) -> None:
        self.status = status
        self.fields = fields
        self.end = end
        self.total_len = total_len


def _next_line(buf: bytes, i: int, end: int, final: bool) -> Optional[Tuple[bytes, int]]:
    nl = buf.find(b"\n", i, end)
    if nl >= 0:
        return buf[i : nl + 1], nl + 1
    if not final:
        return None
    return buf[i:end], end


def parse_head(buf: bytes, pos: int, end: int, final: bool) -> Optional[Head]:
    """Parse the head at buf[pos:end] (the warc_headers kernel, or the reference for odd lines).

    See parse_head_py for the contract."""
    got = _parse_head_c(memoryview(buf)[pos:end], final)
    if got is False:
        return None
    if got is not None:
        status, fields, e, total = got
        return Head(status, fields, pos + e, total)
    return parse_head_py(buf, pos, end, final)


def parse_head_py(buf: bytes, pos: int, end: int, final: bool) -> Optional[Head]:
    """Parse the head at buf[pos:end] (the reference: every byte, every rule).

    Returns None when the head may continue past ``end`` and ``final`` is false
    (the caller fetches more bytes and calls again). ``Head.end`` is the
    position after the terminating blank line (or ``end`` when the input ends
    first). An empty input gives a Head whose ``end`` equals ``pos`` and whose
    status is ''. ``total_len`` counts characters of the decoded lines, as
    warcio does.
    """
    got = _next_line(buf, pos, end, final)
    if got is None:
        return None
    raw, i = got
    first = decode_line(raw)
    total = len(first)
    status = first.rstrip()
    fields: List[Field] = []
    if not status:
        return Head(status, fields, i, total)
    name = ""
    value: Optional[str] = None
    have = False
    while True:
        got = _next_line(buf, i, end, final)
        if got is None:
            return None
        raw, i = got
        text = decode_line(raw)
        total += len(text)
        s = text.rstrip()
        if not s:
            break
        if have and s[0] in " \t":
            if value is not None:   # (a value folded from an empty first line: no leading white space)
                value = value + s if value else s.lstrip()
            continue
        if have and value is not None:
            fields.append((name, value))
        name, sep, rest = s.partition(":")
        if sep:
            name = name.rstrip(" \t")
            value = rest.lstrip()
        else:
            value = None
        have = True
    if have and value is not None:
        fields.append((name, value))
    return Head(status, fields, i, total)


def warcio_head(head: Headers) -> Headers:
    """A copy of a WARC head as warcio presents it after parsing: its WARC-Target-URI without <>
    and with spaces as %20 (warcio fixes the first such field and writes the result over the
    last, as here)."""
    out = Headers(head.protocol, head.statusline, list(head.fields), head.total_len)
    uri = out.get("WARC-Target-URI")
    if uri is not None and uri.startswith("<") and uri.endswith(">"):
        uri = uri[1:-1]
        out.replace("WARC-Target-URI", uri)
    if uri is not None and " " in uri:
        out.replace("WARC-Target-URI", uri.replace(" ", "%20"))
    return out


WARC_PROTOCOLS = ("WARC/1.1", "WARC/1.0", "WARC/0.17", "WARC/0.18")


def warc_protocol(status: str) -> Optional[Tuple[str, str]]:
    """(protocol, rest) when a stripped first line starts a WARC record, else None."""
    upper = status.upper()
    for proto in WARC_PROTOCOLS:
        if upper.startswith(proto):
            return proto, status[len(proto) :].strip()
    return None


def http_head(head: Head) -> Headers:
    """Headers of an HTTP request or response head (no verification of the first line)."""
    parts = head.status.split(" ", 1)
    statusline = parts[1].strip() if len(parts) > 1 else ""
    return Headers(parts[0], statusline, head.fields, head.total_len)
