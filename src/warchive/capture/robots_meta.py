"""Page-level robots directives: ``<meta name="robots">`` and ``X-Robots-Tag``.

A page may ask not to be indexed (``noindex``), followed (``nofollow``) or archived
(``noarchive``), for every robot or for one product token. Heritrix's "obey"
policy honours them (the crawler extracts no links from a ``nofollow`` page);
the others ignore them. This module reads a response; it must not fetch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping

from .robots import TOKEN, Headers, header_value, product_token

__all__ = ["Directives", "meta_robots", "page_directives", "x_robots_tag"]


@dataclass(frozen=True)
class Directives:
    """Page-level robots directives. Heritrix's "obey" honours ``nofollow`` (no links extracted)."""

    noindex: bool = False
    nofollow: bool = False
    noarchive: bool = False

    def __or__(self, other: "Directives") -> "Directives":
        return Directives(self.noindex or other.noindex, self.nofollow or other.nofollow,
                          self.noarchive or other.noarchive)


def _directives(values: Iterable[str]) -> Directives:
    noindex = nofollow = noarchive = False
    for v in values:
        for word in v.replace(";", ",").split(","):
            w = word.strip().lower()
            if w == "none":
                noindex = nofollow = True
            elif w == "noindex":
                noindex = True
            elif w == "nofollow":
                nofollow = True
            elif w == "noarchive":
                noarchive = True
    return Directives(noindex, nofollow, noarchive)


_META = re.compile(rb"<meta\b[^>]*>", re.I)
_ATTR = re.compile(rb"""([a-zA-Z-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")
_HEAD_BYTES = 256 * 1024


def meta_robots(html: bytes, agent: str = "") -> Directives:
    """Directives of ``<meta name="robots">`` and ``<meta name="TOKEN">`` (the agent's token) in ``html``.

    Only the first 256 KiB are searched; names and values are case-insensitive.
    """
    token = product_token(agent) if agent else ""
    values = []
    for m in _META.finditer(html[:_HEAD_BYTES]):
        attrs = {}
        for a in _ATTR.finditer(m.group(0)):
            attrs[a.group(1).lower()] = (a.group(2) or a.group(3) or a.group(4) or b"")
        name = attrs.get(b"name", b"").strip().lower().decode("latin-1")
        if name == "robots" or (token and name == token):
            values.append(attrs.get(b"content", b"").decode("latin-1"))
    return _directives(values)


_XRT_NOT_AGENT = frozenset(["unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"])


def x_robots_tag(headers: Headers, agent: str = "") -> Directives:
    """Directives of the ``X-Robots-Tag`` headers that apply to ``agent``.

    A value may start with a user-agent (``"otherbot: noindex"``); it then applies to that agent only.
    """
    token = product_token(agent) if agent else ""
    items = headers.items() if isinstance(headers, Mapping) else headers
    values = []
    for k, v in items:
        if k.lower() != "x-robots-tag":
            continue
        head, sep, rest = v.partition(":")
        who = head.strip().lower()
        if sep and TOKEN.fullmatch(who) and who not in _XRT_NOT_AGENT:
            if who == token:
                values.append(rest)
        else:
            values.append(v)
    return _directives(values)


def page_directives(policy: str, headers: Headers, body: bytes, agent: str = "",
                    content_type: str = "") -> Directives:
    """The page-level directives a crawler with ``policy`` must honour: none unless ``obey``."""
    if policy != "obey":
        return Directives()
    d = x_robots_tag(headers, agent)
    ctype = content_type or (header_value(headers, "content-type") or "")
    if "html" in ctype.lower():
        d = d | meta_robots(body, agent)
    return d
