"""SURT keys: URLs canonicalized and host-reversed so that captures sort by site.

``surt(url, **options)`` equals ``surt.surt(url, **options)`` of the `surt`
package (0.3.1) byte for byte; with no options that is the key cdxj-indexer
and pywb use.  ``OPTIONS`` names the package's keyword arguments with their
defaults.  The work is done by the compiled kernel ``warchive._ext.surt``.
``canonicalize`` and ``unsurt`` follow pywb 2.x (``pywb.utils.canonicalize``).
The deliberate deviations are listed in docs/format.md, "SURT keys".  This
module must not canonicalize anything itself.
"""

from __future__ import annotations

from typing import AnyStr, Dict, Mapping

from warchive._ext.surt import DEFAULTS, surt, surt_many, surt_or_url
from warchive.errors import UrlError

__all__ = ["OPTIONS", "UrlError", "canonicalize", "parse_options", "surt", "surt_many", "surt_or_url", "unsurt"]

OPTIONS: Mapping[str, bool] = DEFAULTS
"""Every option of ``surt()`` and its default, as the `surt` package has them (read-only)."""

_TRUTH = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


def canonicalize(url: AnyStr, surt_ordered: bool = True, **options: bool) -> AnyStr:
    """The index key of ``url`` as pywb computes it (with ``options`` as ``surt()`` takes them).

    The SURT key, or with ``surt_ordered=False`` the same canonical URL with
    its host back in reading order ("example.com/path").  A URL without a key
    that starts with "urn:" is its own key; any other raises ``UrlError``.
    """
    try:
        key = surt(url, **options)
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


def parse_options(text: str) -> Dict[str, bool]:
    """``"with_scheme,trailing_comma,host_massage=false"`` -> the keyword arguments of ``surt()``.

    Comma-separated option names, each set true, or ``name=true|false`` (also
    yes/no, 1/0); spaces around items are ignored, an empty text is no option.
    Raises ``ValueError`` naming an unknown option or value, and for options
    that ``surt()`` refuses (public_suffix=true).
    """
    out: Dict[str, bool] = {}
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        name, eq, value = item.partition("=")
        name = name.strip()
        if name not in OPTIONS:
            raise ValueError(f"unknown SURT option {name!r} (the options: {', '.join(OPTIONS)})")
        if eq:
            truth = _TRUTH.get(value.strip().lower())
            if truth is None:
                raise ValueError(f"SURT option {name}={value.strip()!r}: the value must be true or false")
            out[name] = truth
        else:
            out[name] = True
    try:
        surt("http://example.com/", **out)   # what the kernel refuses, refused now
    except TypeError as e:  # pragma: no cover - every name was checked above
        raise ValueError(str(e)) from None
    return out
