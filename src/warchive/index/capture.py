"""The capture record: one index line as the query engine, the loader and replay see it.

It is the one type a capture has from the query to the reply: ``Index.query``
answers with ``Capture`` records, the loader (warchive.replay.load) takes them
as they are and serves one as ``LoadedCapture.cdx``, and replay's Memento
headers, self-redirect rule and revisit lookups read them. What a user gives
instead, an index line or a dict of fields, is made a ``Capture`` where it
comes in (``warchive.index.query.parse_line``, ``Capture.from_fields``).

A ``Capture`` holds the stored line (bytes, trailing whitespace removed) and
the ``Origin`` it came from (the source's name and collection, what pywb adds
to every capture: docs/cdx-api.md R15, R16). Its ``urlkey`` and ``timestamp``
are the line's first two columns; the other fields (the CDXJ line's JSON, or
the CDX columns, R14) are read when one of them is first asked for. It is a
read-only mapping of the fields the CDX API answers with (``output=json``:
the line's fields under pywb's names, then ``source``, ``source-coll`` and
``access``), in that order, so ``c["status"]``, ``c.get("mime")``,
``dict(c)`` and ``c == {...}`` work as on a dict (``c.as_dict()`` for
``json.dumps``); the hot fields are also typed attributes (``.url``,
``.offset``...).

Nothing of the line is read until something is asked for: ``urlkey`` and
``timestamp`` cut its first two columns, any other field reads the whole
line. A malformed line raises ``QueryError`` then (400 for a CDX line of no
known format, 500 for bytes or JSON that do not read), the error the CDX API
answers with; the query engine reads every line before it answers over HTTP
(docs/cdx-api.md D5), ``Index.query`` leaves them to the caller.

This module reads lines; it does not find them (warchive.index.sources) and
knows nothing of query parameters (warchive.index.query).
"""

from __future__ import annotations

import json
from collections.abc import KeysView
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple
from urllib.parse import quote

from ..errors import QueryError

# R34: field aliases (pywb's table; `s` ends up meaning length)
ALIASES = {"u": "url", "original": "url", "statuscode": "status", "mimetype": "mime", "m": "mime",
           "l": "length", "s": "length", "o": "offset", "d": "digest", "t": "timestamp", "k": "urlkey",
           "f": "filename"}

# R14: CDX formats by field count
CDX_FORMATS = {
    7: ("urlkey", "timestamp", "url", "mime", "status", "digest", "length"),
    9: ("urlkey", "timestamp", "url", "mime", "status", "digest", "redirect", "offset", "filename"),
    10: ("urlkey", "timestamp", "url", "mime", "status", "digest", "redirect", "robotflags", "offset",
         "filename"),
    11: ("urlkey", "timestamp", "url", "mime", "status", "digest", "redirect", "robotflags", "length",
         "offset", "filename"),
    14: ("urlkey", "timestamp", "url", "mime", "status", "digest", "redirect", "robotflags", "length",
         "offset", "filename", "orig.length", "orig.offset", "orig.filename"),
}
CDX_FORMATS[12] = CDX_FORMATS[9] + ("orig.length", "orig.offset", "orig.filename")
CDX_FORMATS[13] = CDX_FORMATS[10] + ("orig.length", "orig.offset", "orig.filename")


def _unknown_format(cols: Sequence[bytes]) -> QueryError:
    return QueryError(f"unknown {len(cols)}-field cdx format: {list(cols)!r}")


def _unreadable(line: bytes, e: Exception) -> QueryError:
    return QueryError(f"unreadable index line {line[:200]!r}: {e}", 500)


_DECODER = json.JSONDecoder()
_JSON_SPACE = " \t\n\r"


def _json_object(text: str) -> Any:
    """json.loads(text) for a text that starts with '{' (its errors too), without the steps
    json.loads takes first for any other input."""
    data, end = _DECODER.raw_decode(text)
    if end != len(text):
        rest = text[end:].lstrip(_JSON_SPACE)
        if rest:
            raise json.JSONDecodeError("Extra data", text, len(text) - len(rest))
    return data


def line_fields(line: bytes) -> Tuple[Dict[str, Any], bool]:
    """The fields of a stored line (trailing whitespace removed) as pywb reads it (R14), and
    whether it is CDXJ. A malformed line raises QueryError."""
    parts = line.split(b" ", 2)
    try:
        if parts[-1].startswith(b"{"):
            fields: Dict[str, Any] = {"urlkey": parts[0].decode("utf-8"),
                                      "timestamp": parts[1].decode("utf-8") if len(parts) > 1 else ""}
            data = _json_object(parts[-1].decode("utf-8"))
            if ALIASES.keys().isdisjoint(data):
                # the usual line: nothing renamed (a plain update keeps pywb's order and overrides)
                status = data.get("status")
                if type(status) is int:
                    data["status"] = str(status)
                url = data.get("url")
                if type(url) is str and not url.isascii():
                    data["url"] = quote(url.encode("utf-8"), safe=":/")
                fields.update(data)
                return fields, True
            status = data.get("status")
            if isinstance(status, int) and not isinstance(status, bool):
                data["status"] = str(status)
            for name, value in data.items():
                name = ALIASES.get(name, name)
                if name == "url" and isinstance(value, str) and not value.isascii():
                    value = quote(value.encode("utf-8"), safe=":/")
                fields[name] = value
            return fields, True
        cols = parts[:-1] + parts[-1].split(b" ")
        names = CDX_FORMATS.get(len(cols))
        if names is None:
            raise _unknown_format(cols)
        return dict(zip(names, (c.decode("utf-8") for c in cols))), False
    except QueryError:
        raise
    except (UnicodeDecodeError, ValueError) as e:
        raise _unreadable(line, e) from None


def visible(fields: Dict[str, Any]) -> Dict[str, Any]:
    """The fields an answer shows: not those whose names start with `_` (the engine's own)."""
    for k in fields:
        if k[:1] == "_":
            return {k: v for k, v in fields.items() if k[:1] != "_"}
    return fields


class Origin:
    """Where captures come from, and what pywb adds to them (R15, R16): ``source`` (``name``,
    prefixed to a line's own source) and ``source-coll`` (``coll``) unless ``named`` is off
    (``nosource=true``), then ``access`` when it is not None. Nothing is added to a capture
    without a url."""

    __slots__ = ("name", "coll", "named", "access")

    def __init__(self, name: str, coll: str, named: bool = True, access: Optional[str] = None) -> None:
        self.name = name
        self.coll = coll
        self.named = named
        self.access = access

    def __repr__(self) -> str:
        return f"Origin({self.name!r}, {self.coll!r}, named={self.named}, access={self.access!r})"


def _int_or_none(v: Any) -> Optional[int]:
    if type(v) is int:
        return v
    if isinstance(v, str) and v.isascii() and v.isdigit():
        return int(v)
    return None


def _str_or_none(v: Any) -> Optional[str]:
    if v is None or type(v) is str:
        return v
    return str(v)


def _safe(s: str) -> bool:
    """Is ``s`` written by json.dumps as itself, and is every character above '"'? Then
    comparing such strings compares their JSON text (R19)."""
    return s.isascii() and s.isprintable() and " " not in s and "!" not in s and '"' not in s and "\\" not in s


class Capture(Mapping[str, Any]):
    """One capture of an index: a stored line and the origin it came from (module docstring).

        c = Capture(b'com,example)/ 20200101000000 {"url": "http://example.com/", ...}', origin)
        c.urlkey, c.timestamp           # the line's first two columns, always there
        c.url, c.offset, c.status       # typed reads of fields (offset, length: int or None)
        c["mime"], c.get("digest")      # the fields the CDX API answers with (output=json)
        dict(c), c == {...}             # a read-only mapping, in that order

    ``line`` is the stored line, ``origin`` the Origin (None: nothing added). The query
    engine may change fields (``set``: resolveRevisits, is_fuzzy, access); ``changed`` then
    says that the stored line no longer shows the capture (R17). A record that ``Index.query``
    answered with ``fl`` shows only those fields.
    """

    __slots__ = ("line", "origin", "source_pos", "_fields", "_names", "_kt", "_changed", "_from_json", "_json")

    line: bytes
    origin: Optional[Origin]
    source_pos: int                 # W13: its place among its urlkey and timestamp's lines (the engine's)
    _fields: Optional[Dict[str, Any]]
    _names: Optional[Tuple[str, ...]]
    _kt: Optional[Tuple[str, str]]  # urlkey, timestamp
    _changed: bool                  # set by whatever fills _fields
    _from_json: bool                # likewise
    _json: Optional[str]            # R19's merge key, once asked for (unset until then)

    def __init__(self, line: bytes, origin: Optional[Origin] = None) -> None:
        # the hot path of every lookup: nothing is read until something is asked for
        self.line = line.rstrip()
        self.origin = origin
        self._fields = self._names = self._kt = None

    @classmethod
    def from_fields(cls, fields: Mapping[str, Any]) -> "Capture":
        """A record of fields that no index line holds (``line`` is empty): the paging
        information ``Index.query`` answers for showNumPages/showPagedIndex on ZipNum, the
        fields a user gives the loader, or what a record's own head says of it."""
        c = cls(b"")
        c._kt = (str(fields.get("urlkey", "")), str(fields.get("timestamp", "")))
        c._fields = dict(fields)
        c._changed = True
        c._from_json = True
        return c

    def _cut(self) -> Tuple[str, str]:
        line = self.line
        try:
            key, ts, _ = line.split(b" ", 2)
            kt = (key.decode("utf-8"), ts.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise _unreadable(line, e) from None
        except ValueError:   # fewer than two spaces: an error, or CDXJ without a timestamp
            if self._fields is None:
                self._parse()
            parts = line.split(b" ", 2)
            kt = (parts[0].decode("utf-8"), parts[1].decode("utf-8") if len(parts) > 1 else "")
        self._kt = kt
        return kt

    @property
    def urlkey(self) -> str:
        """The line's first column: the key it is sorted by (the `urlkey` field, unless a CDXJ
        line's JSON names another, R14)."""
        kt = self._kt
        return (kt or self._cut())[0]

    @property
    def timestamp(self) -> str:
        """The line's second column (the `timestamp` field, unless a CDXJ line's JSON names
        another, R14)."""
        kt = self._kt
        return (kt or self._cut())[1]

    # -- reading
    def _added(self, fields: Dict[str, Any]) -> Dict[str, Any]:
        o = self.origin
        if o is not None and fields.get("url"):
            if o.named:
                src = fields.get("source")
                fields["source"] = o.name + ":" + src if src else o.name
                fields["source-coll"] = o.coll
                self._changed = True
            if o.access is not None:
                fields["access"] = o.access
                self._changed = True
        return fields

    def _parse(self) -> Dict[str, Any]:
        fields, self._from_json = line_fields(self.line)
        self._changed = False
        self._fields = f = self._added(fields)
        return f

    @property
    def fields(self) -> Dict[str, Any]:
        """Every field, as the query engine works on them (the engine's own `_`-names too)."""
        f = self._fields
        return f if f is not None else self._parse()

    @property
    def from_json(self) -> bool:
        """Is the line CDXJ (else CDX)?"""
        if self._fields is None:
            self._parse()
        return self._from_json

    @property
    def changed(self) -> bool:
        """Has anything been added to or changed in the stored line's fields (R17)?"""
        if self._fields is None:
            self._parse()
        return self._changed

    def set(self, name: str, value: Any) -> None:
        """Change a field (the query engine's stages only: records are read-only to callers)."""
        f = self._fields
        if f is None:
            f = self._parse()
        f[name] = value
        self._changed = True
        self._json = None

    def reorigin(self, origin: Optional[Origin]) -> None:
        """Make the capture come from ``origin``; only what it adds after `source` and
        `source-coll` (its `access`) may change once the fields are read (merging reads them
        without access, as pywb merges before the access check)."""
        self.origin = origin
        f = self._fields
        if f is not None and origin is not None and origin.access is not None and f.get("url"):
            f["access"] = origin.access
            self._changed = True
            self._json = None

    # -- the mapping (what output=json shows)
    def __getitem__(self, name: str) -> Any:
        f = self._fields
        if f is None:
            f = self._parse()
        names = self._names
        if names is None:
            v = f[name]
            if name[:1] == "_":   # the engine's own
                raise KeyError(name)
            return v
        if name in names:
            return f[name]
        raise KeyError(name)

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except (KeyError, TypeError):
            return default

    def __contains__(self, name: object) -> bool:
        try:
            self[name]  # type: ignore[index]
        except (KeyError, TypeError):
            return False
        return True

    def _keys(self) -> List[str]:
        f = self._fields
        if f is None:
            f = self._parse()
        names = self._names
        if names is None:
            return [k for k in f if k[:1] != "_"]
        return [k for k in names if k in f]

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys())

    def keys(self) -> KeysView[str]:
        """The names shown, as a view: the fields' own when the capture shows all of them, so
        that ``dict(c)`` walks them without the Mapping's generator."""
        f = self._fields
        if f is None:
            f = self._parse()
        if self._names is None and visible(f) is f:
            return f.keys()
        return KeysView(self)

    def __len__(self) -> int:
        return len(self._keys())

    def as_dict(self) -> Dict[str, Any]:
        """The mapping as a plain dict (what ``json.dumps`` takes)."""
        f = self._fields
        if f is None:
            f = self._parse()
        names = self._names
        if names is None:
            shown = visible(f)
            return dict(shown) if shown is f else shown   # (visible copies only when it drops a name)
        return {k: f[k] for k in names if k in f}

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Capture):
            return self.as_dict() == other.as_dict()
        if isinstance(other, dict):
            return self.as_dict() == other
        if isinstance(other, Mapping):
            return self.as_dict() == dict(other.items())
        return NotImplemented

    def __repr__(self) -> str:
        try:
            return f"Capture({self.as_dict()!r})"
        except QueryError:
            return f"Capture(<unreadable> {self.line[:200]!r})"

    def project(self, names: Optional[Sequence[str]]) -> "Capture":
        """Show only ``names`` (R60's fl: in that order, those the capture has); None: all."""
        self._names = tuple(dict.fromkeys(names)) if names is not None else None
        return self

    # -- typed reads of the hot fields (of the capture, whatever `fl` shows)
    @property
    def url(self) -> Optional[str]:
        return _str_or_none(self.fields.get("url"))

    @property
    def mime(self) -> Optional[str]:
        return _str_or_none(self.fields.get("mime"))

    @property
    def status(self) -> Optional[str]:
        return _str_or_none(self.fields.get("status"))

    @property
    def digest(self) -> Optional[str]:
        return _str_or_none(self.fields.get("digest"))

    @property
    def filename(self) -> Optional[str]:
        return _str_or_none(self.fields.get("filename"))

    @property
    def offset(self) -> Optional[int]:
        """The record's byte offset; None when the field is missing or not a decimal number."""
        return _int_or_none(self.fields.get("offset"))

    @property
    def length(self) -> Optional[int]:
        return _int_or_none(self.fields.get("length"))

    # -- what the engine compares and prints
    def to_json(self, fields: Optional[Sequence[str]] = None) -> str:
        """The JSON object output=json prints (R56, R60: only ``fields``, when given)."""
        f = self.fields
        if fields is None:
            return json.dumps(visible(f))
        return json.dumps({k: f[k] for k in fields if k in f})

    def json_key(self) -> str:
        """R19: what pywb's merge compares (the JSON of all fields)."""
        js: Optional[str] = getattr(self, "_json", None)
        if js is None:
            self._json = js = self.to_json()
        return js

    def _plain_key(self, kt: Tuple[str, str]) -> bool:
        """May merging compare (urlkey, timestamp) instead of the JSON text? Yes when the two
        are the fields' own values and json.dumps writes them as they are (see `_safe`)."""
        f = self._fields
        if f is not None:
            if f.get("urlkey") != kt[0] or f.get("timestamp") != kt[1]:
                return False
        elif may_rename_key(self.line):
            return False
        return _safe(kt[0]) and _safe(kt[1])

    def merge_lt(self, other: "Capture") -> bool:
        """R19: ``self.json_key() < other.json_key()``, without the JSON when the keys and
        timestamps differ and tell it."""
        a = self._kt or self._cut()
        b = other._kt or other._cut()
        if a != b and self._plain_key(a) and other._plain_key(b):
            return a < b
        return self.json_key() < other.json_key()

    def text(self) -> str:
        """R36: the whole-capture subject of a field-less filter."""
        if not self.changed:
            return self.line.decode("utf-8")
        if not self._from_json:
            return " ".join(str(v) for v in self.fields.values())
        return json.dumps(self.fields)


def may_rename_key(line: bytes) -> bool:
    """Might this CDXJ line's JSON name its own urlkey or timestamp (pywb lets it: R14, then
    the fields differ from the line's first two columns)? Cheap and never wrong when it says
    no; a JSON escape (\\u) might spell a name, so it says yes."""
    s = line.decode("latin-1")   # str searches skip the buffer protocol of bytes ones
    return '"t"' in s or '"timestamp"' in s or '"k"' in s or '"urlkey"' in s or "\\u" in s


def may_rename_timestamp(line: bytes) -> bool:
    """``may_rename_key`` for the timestamp alone."""
    s = line.decode("latin-1")
    return '"t"' in s or '"timestamp"' in s or "\\u" in s


class MergeKey:
    """What ``heapq.merge`` compares when it merges sources (R19): a capture by its JSON text,
    equal only to itself, as pywb's CDXObject compares."""

    __slots__ = ("c",)

    def __init__(self, c: Capture) -> None:
        self.c = c

    def __lt__(self, other: "MergeKey") -> bool:
        return self.c.merge_lt(other.c)
