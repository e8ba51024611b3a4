"""Rewriting archived style sheets for replay (the ``cs_`` modifier): every ``url()``, ``@import``
and ``image-set()`` URL becomes an archival URL, every other byte stays as archived.

``rewrite(body, rewriter)`` for a whole body, ``CssRewriter(rewriter)`` chunk by chunk. The same
kernel as ``warchive.replay.html`` (whose ``<style>`` elements and ``style`` attributes it rewrites
the same way): ``@import`` URLs get ``cs_``, the others ``oe_``, as in pywb.
"""

from __future__ import annotations

from typing import Optional

from .kernel import StreamRewriter
from .urls import UrlRewriter

__all__ = ["CssRewriter", "rewrite"]


class CssRewriter(StreamRewriter):
    """A style sheet rewritten chunk by chunk (``feed``/``close``, as HtmlRewriter);
    ``encoding`` its charset (default UTF-8; a byte-order mark overrides it)."""

    def __init__(self, rewriter: UrlRewriter, *, encoding: Optional[str] = None) -> None:
        super().__init__(rewriter, css=True, encoding=encoding)


def rewrite(body: bytes, rewriter: UrlRewriter, *, encoding: Optional[str] = None) -> bytes:
    """The whole of a style sheet rewritten (see CssRewriter)."""
    r = CssRewriter(rewriter, encoding=encoding)
    out = r.feed(body)
    rest = r.close()
    return out + rest if rest else out
