"""The `surt` package (0.3.1) as the oracle of SURT keys: DNS-free, and fast
enough to run once per option combination.

``no_dns()`` swaps the socket module inside surt.GoogleURLCanonicalizer for a
stand-in that answers numeric names as glibc does (without DNS) and fails
every other lookup, recording it: warchive never does DNS and answers as surt
does when the lookup fails (docs/format.md, "SURT keys", deviation 1).

``Staged(url)`` is ``surt.surt(url, **options)`` cut where the options begin:
the package's ``_surt_bytes`` runs handyurl.parse and
GoogleURLCanonicalizer.canonicalize, neither of which reads an option, then
IAURLCanonicalizer.canonicalize and handyurl.geturl_bytes, which do. Staged
runs the first two once and the package's own last two per option set, on a
copy of the parsed URL, so that 2^15 option sets of one URL cost what 2^15
calls of IA + geturl cost. tests/differential/test_surt_options_vs_surt.py
checks that it equals ``surt.surt(url, **options)``.
"""

from __future__ import annotations

import contextlib
import socket
from typing import Dict, Iterator, List, NamedTuple, Optional, Union

import surt as surt_pkg
import surt.GoogleURLCanonicalizer as google_canon
import surt.IAURLCanonicalizer as ia_canon
from surt.handyurl import handyurl

Url = Union[str, bytes]


class NoDnsSocket:
    """The parts of ``socket`` that surt.GoogleURLCanonicalizer uses, minus DNS."""

    gaierror = socket.gaierror
    herror = socket.herror
    inet_ntoa = staticmethod(socket.inet_ntoa)

    def __init__(self) -> None:
        self.dns_names: List[bytes] = []       # lookups that would have gone to DNS
        self.numeric_names: List[bytes] = []   # answered as numbers, as glibc does without DNS

    def gethostbyname_ex(self, name: bytes):
        text = name.decode("ascii", "replace")
        if text and all(c in "0123456789." for c in text):
            try:
                packed = socket.inet_aton(text)
            except OSError:
                pass
            else:
                self.numeric_names.append(name)
                return text, [], [socket.inet_ntoa(packed)]
        self.dns_names.append(name)
        raise socket.gaierror(socket.EAI_NONAME, "warchive tests: no DNS")


@contextlib.contextmanager
def no_dns() -> Iterator[NoDnsSocket]:
    stand_in = NoDnsSocket()
    real = google_canon.socket
    google_canon.socket = stand_in  # type: ignore[assignment]
    try:
        yield stand_in
    finally:
        google_canon.socket = real


class Outcome(NamedTuple):
    key: Optional[Url]          # None when the package raised
    error: Optional[str]        # the exception's type name
    needs_dns: bool


def reference(url: Optional[Url], stand_in: NoDnsSocket, **options: object) -> Outcome:
    """surt.surt(url, **options) under no_dns() (whose stand-in is given)."""
    before = len(stand_in.dns_names)
    try:
        key, error = surt_pkg.surt(url, **options), None
    except Exception as e:  # the package raises several types; cdxj-indexer catches them all
        key, error = None, type(e).__name__
    return Outcome(key, error, len(stand_in.dns_names) > before)


class Staged:
    """surt.surt(url, **options) for many option sets of one URL (see the module docstring).
    Build it inside no_dns() (or not, for the package as it is)."""

    def __init__(self, url: Optional[Url], stand_in: Optional[NoDnsSocket] = None) -> None:
        self.url = url
        self.fixed: Optional[Outcome] = None
        self.hurl: Optional[handyurl] = None
        self.needs_dns = False
        before = len(stand_in.dns_names) if stand_in is not None else 0
        raw = url.encode("utf-8") if isinstance(url, str) else url
        try:
            if not raw or raw.startswith(b"filedesc"):      # _surt_bytes answers before any option
                self.fixed = Outcome(surt_pkg.surt(url), None, False)
                return
            self.hurl = google_canon.canonicalize(handyurl.parse(raw))
        except Exception as e:
            self.fixed = Outcome(None, type(e).__name__, False)
        self.needs_dns = stand_in is not None and len(stand_in.dns_names) > before
        if self.fixed is not None:
            self.fixed = self.fixed._replace(needs_dns=self.needs_dns)

    def key(self, options: Dict[str, object]) -> Outcome:
        if self.fixed is not None:
            return self.fixed
        opts = dict(options)
        opts.setdefault("surt", True)                      # as _surt_bytes
        opts.setdefault("with_scheme", False)
        try:
            h = handyurl.__new__(handyurl)                  # copy.copy, four times faster
            h.__dict__.update(self.hurl.__dict__)
            h = ia_canon.canonicalize(h, **opts)
            key: Url = h.geturl_bytes(**opts)
            if isinstance(self.url, str):
                key = key.decode("utf-8")
        except Exception as e:
            return Outcome(None, type(e).__name__, self.needs_dns)
        return Outcome(key, None, self.needs_dns)
