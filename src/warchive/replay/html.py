"""Rewriting archived HTML for replay: every URL a browser would load or follow from the page
becomes an archival URL under the collection's prefix, every other byte stays as archived.

``rewrite(body, rewriter)`` rewrites a whole body; ``HtmlRewriter(rewriter)`` the same chunk by
chunk (``feed``/``close``), for streaming responses. ``rewriter`` is the page's
``warchive.replay.urls.UrlRewriter``, whose semantics every rewritten URL has. The work is done
by the rewriting kernel (ext/html_rewrite, with warchive.replay.kernel); docs/replay.md lists
the attributes and style sheets it rewrites, how, and where it differs from pywb.

With ``scripts=True`` (what replay serves), the text of inline JavaScript ``<script>`` elements
(no ``type``, or one naming JavaScript, ECMAScript or a module) is rewritten as ``js_`` bodies are
(warchive.replay.js), and so are event handler attributes (``onclick=...``); by default
scripts pass as they are. ``javascript:`` URLs always do. It inserts nothing: that is the server's.
"""

from __future__ import annotations

from typing import Optional

from .kernel import StreamRewriter
from .urls import UrlRewriter

__all__ = ["HtmlRewriter", "rewrite"]


class HtmlRewriter(StreamRewriter):
    """An HTML document rewritten chunk by chunk: ``feed(chunk) -> bytes`` as chunks arrive, then
    ``close() -> bytes``; the output is the same however the document is cut.

    ``defmod``: the modifier of links, forms and other navigations (pywb's default modifier:
    ``mp_`` in framed replay); default, the page's own. ``encoding``: the document's charset
    (from Content-Type or its ``<meta charset>``); default UTF-8. A byte-order mark overrides it.
    ``scripts``: rewrite inline scripts too (see the module docstring).
    """

    def __init__(self, rewriter: UrlRewriter, *, defmod: Optional[str] = None,
                 encoding: Optional[str] = None, scripts: bool = False) -> None:
        super().__init__(rewriter, css=False, defmod=defmod, encoding=encoding, scripts=scripts)


def rewrite(body: bytes, rewriter: UrlRewriter, *, defmod: Optional[str] = None,
            encoding: Optional[str] = None, scripts: bool = False) -> bytes:
    """The whole of an HTML body rewritten (see HtmlRewriter)."""
    r = HtmlRewriter(rewriter, defmod=defmod, encoding=encoding, scripts=scripts)
    out = r.feed(body)
    rest = r.close()
    return out + rest if rest else out
