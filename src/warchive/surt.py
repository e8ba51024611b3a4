"""SURT keys: URLs canonicalized and host-reversed so that captures sort by site.

``surt(url)`` equals ``surt.surt(url)`` of the `surt` package (0.3.1, default
options) byte for byte, as cdxj-indexer and pywb use it; the work is done by
the compiled kernel ``warchive._ext.surt``.  ``canonicalize`` and ``unsurt``
follow pywb 2.x (``pywb.utils.canonicalize``).  The deliberate deviations are
listed in docs/format.md, "SURT keys".  This module must not canonicalize
anything itself.
"""

from __future__ import annotations

from typing import AnyStr

from warchive._ext.surt import surt, surt_many, surt_or_url
from warchive.errors import UrlError

__all__ = ["UrlError", "canonicalize", "surt", "surt_many", "surt_or_url", "unsurt"]


def canonicalize(url: AnyStr, surt_ordered: bool = True) -> AnyStr:
    """The index key of ``url`` as pywb computes it.

    The SURT key, or with ``surt_ordered=False`` the same canonical URL with
    its host back in reading order ("example.com/path").  A URL without a key
    that starts with "urn:" is its own key; any other raises ``UrlError``.
    """
    try:
        key = surt(url)
    except UrlError:
        if url.startswith("urn:" if isinstance(url, str) else b"urn:"):
            return url
        raise UrlError(f"Invalid Url: {url!r}") from None
    if not surt_ordered:
        key = unsurt(key)
    return key


def unsurt(key: AnyStr) -> AnyStr:
    """``"com,example)/path"`` -> ``"example.com/path"``; a key without ``")/"`` is returned as it is."""
    if isinstance(key, str):
        i = key.find(")/")
        if i < 0:
            return key
        return ".".join(reversed(key[:i].split(","))) + key[i + 1 :]
    j = key.find(b")/")
    if j < 0:
        return key
    return b".".join(reversed(key[:j].split(b","))) + key[j + 1 :]
