"""What the text of an HTML attribute value or of CSS means to a browser, and how to write a
string back into either: character references decoded as the HTML standard decodes them in an
attribute value, CSS escapes decoded as CSS does, and the escaping that puts a rewritten URL
back where it came from.

Replay's rewriting and the crawler's link extraction use it on the URLs the rewriting kernel
(ext/html_rewrite) hands to Python; the kernel's C decoder (ext/csrc/wa_htmlref.h) is the same
algorithm, and the tests compare the two. It lives below both (they may not import each other),
and must not parse documents: that is the kernel's job.
"""

from __future__ import annotations

import codecs
import html.entities
import re
from typing import Optional

__all__ = ["unescape_attr", "css_unescape", "escape_attr", "css_escape", "C0_OR_SPACE", "codec_name", "transcodes"]

# What the URL parser strips from both ends of a URL.
C0_OR_SPACE = "".join(map(chr, range(0x21)))

_ENTITIES = html.entities.html5
_LEGACY = frozenset(k for k in _ENTITIES if not k.endswith(";"))
_NUMERIC = re.compile(r"&#(?:[xX]([0-9a-fA-F]+)|([0-9]+));?")
_NAME = re.compile(r"[A-Za-z0-9]+")
_ALNUM_OR_EQ = re.compile(r"[A-Za-z0-9=]")
# 0x80-0x9F as windows-1252 has them (the standard's table); the others are kept.
_C1 = {0x80: 0x20AC, 0x82: 0x201A, 0x83: 0x0192, 0x84: 0x201E, 0x85: 0x2026, 0x86: 0x2020, 0x87: 0x2021,
       0x88: 0x02C6, 0x89: 0x2030, 0x8A: 0x0160, 0x8B: 0x2039, 0x8C: 0x0152, 0x8E: 0x017D, 0x91: 0x2018,
       0x92: 0x2019, 0x93: 0x201C, 0x94: 0x201D, 0x95: 0x2022, 0x96: 0x2013, 0x97: 0x2014, 0x98: 0x02DC,
       0x99: 0x2122, 0x9A: 0x0161, 0x9B: 0x203A, 0x9C: 0x0153, 0x9E: 0x017E, 0x9F: 0x0178}


def _code_point(cp: int) -> str:
    if cp == 0 or cp > 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
        return "\ufffd"
    return chr(_C1.get(cp, cp))


def unescape_attr(s: str) -> str:
    """``s`` (an attribute value as written) with its character references decoded as the HTML
    standard's tokenizer decodes them in an attribute value. Unlike ``html.unescape``: a legacy
    name without ``;`` before ``=`` or a letter or digit stays as it is (``?a=1&copy=2``), and
    control and non-characters are kept (``&#1;`` is U+0001)."""
    if "&" not in s:
        return s
    out = []
    i, n = 0, len(s)
    while True:
        j = s.find("&", i)
        if j < 0:
            out.append(s[i:])
            return "".join(out)
        out.append(s[i:j])
        m = _NUMERIC.match(s, j)
        if m:
            digits = m.group(1) or m.group(2)
            out.append(_code_point(int(digits, 16 if m.group(1) else 10)))
            i = m.end()
            continue
        m = _NAME.match(s, j + 1)
        if m:
            name, e = m.group(), m.end()
            if e < n and s[e] == ";" and name + ";" in _ENTITIES:
                out.append(_ENTITIES[name + ";"])
                i = e + 1
                continue
            for size in range(min(len(name), 6), 1, -1):
                if name[:size] in _LEGACY:
                    nxt = j + 1 + size
                    if nxt < n and _ALNUM_OR_EQ.match(s[nxt]):
                        break                     # the attribute-value rule: literal
                    out.append(_ENTITIES[name[:size]])
                    i = nxt
                    break
            if i > j:
                continue
        out.append("&")
        i = j + 1


_CSS_ESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{1,6})(?:\r\n|[ \t\n\r\f])?|(\r\n|[\n\r\f])|(.)|$)", re.S)


def _css_one(m: "re.Match[str]") -> str:
    if m.group(1):
        return _code_point(int(m.group(1), 16))
    if m.group(2):            # an escaped newline: a line continuation in a string
        return ""
    return m.group(3) or ""   # any other character stands for itself; a '\' at the end, nothing


def css_unescape(s: str) -> str:
    """``s`` (the text of a CSS url() or string) with its escapes decoded as CSS does: ``\\`` and
    1 to 6 hex digits (and one white space after them) a code point, ``\\`` and a newline
    nothing, ``\\`` and any other character that character."""
    return _CSS_ESCAPE.sub(_css_one, s) if "\\" in s else s


def escape_attr(s: str, quote: str, amp: bool) -> str:
    """``s`` written into an attribute value quoted by ``quote`` (``'"'``, ``"'"``, or ``""`` for
    an unquoted one). When ``amp`` (the value held character references, so that ``s`` may hold
    anything): ``&`` as ``&amp;``, both quotes where they could end the value, and unquoted,
    white space and ``<>=``` too, as character references. Otherwise only what would end the
    value: its quote, or white space and ``>``."""
    if amp:
        s = s.replace("&", "&amp;")
        if quote != "'":
            s = s.replace('"', "&quot;")
        if quote != '"':
            s = s.replace("'", "&#39;")
        if not quote:
            s = "".join(f"&#x{ord(c):02X};" if c in " \t\n\r\f<>=`" else c for c in s)
        return s
    if quote:
        return s.replace(quote, "&quot;" if quote == '"' else "&#39;")
    return "".join(f"&#x{ord(c):02X};" if c in " \t\n\r\f>" else c for c in s)


_CSS_URL_UNSAFE = re.compile(r"""[\x00-\x20"'()\\\x7f]""")
_CSS_STR_UNSAFE = {'"': re.compile(r'["\\\n\r\f]'), "'": re.compile(r"['\\\n\r\f]")}


def css_escape(s: str, quote: str) -> str:
    """``s`` written into a CSS url() (``quote`` ``""``) or string (``'"'``, ``"'"``): the
    characters that would end or break it as hex escapes."""
    rx = _CSS_URL_UNSAFE if not quote else _CSS_STR_UNSAFE[quote]
    return rx.sub(lambda m: f"\\{ord(m.group()):X} ", s)


# --------------------------------------------------------------------------- charsets

# Codecs whose bytes the kernel cannot read as ASCII's: stateful ones, whose ASCII bytes may
# stand for other characters, beside those (UTF-16, UTF-32, EBCDIC) the probe below finds.
_STATEFUL = ("utf-7", "iso2022", "hz")
_PROBE = "<a href='x' b=\"y\">&amp; /=\\\t\n"


def codec_name(encoding: Optional[str]) -> str:
    """The Python codec of a charset label, UTF-8 when there is none or it is unknown."""
    if encoding:
        try:
            return codecs.lookup(encoding.strip().strip("'\"")).name
        except LookupError:
            pass
    return "utf-8"


def transcodes(codec: str) -> bool:
    """Whether documents in ``codec`` must be decoded (and encoded again) around the rewriting
    kernel, which reads bytes as ASCII's: UTF-16/32, UTF-7, ISO-2022, HZ, EBCDIC."""
    if codec.startswith(_STATEFUL):
        return True
    try:
        return _PROBE.encode(codec) != _PROBE.encode("ascii")
    except (UnicodeError, LookupError):
        return True
