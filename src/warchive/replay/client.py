"""The script put into every replayed HTML page, right after its ``<head>``: the page's place in
the archive (collection, prefix, timestamp, URL, modifier) as JSON and the client script
(``static/wa_client.js``) that routes what the page does at run time through the archive and
tells the banner, in the frame's parent, where the frame is.

The JSON is in a ``<script type="application/json">`` with every ``<``, ``>``, ``&`` and line
separator escaped, so no URL or title of an archived page can end the element or run as script.
"""

from __future__ import annotations

import json

from .config import ReplayConfig
from .urls import ArchivalUrl

STATIC = "static/"


def script_json(data: object) -> str:
    """JSON safe inside a <script> element of an HTML page."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def static_prefix(full_prefix: str, coll: str) -> str:
    """The URL of the static assets, from a collection's full prefix (``http://h/app/coll/``)."""
    base = full_prefix[: -len(coll) - 1] if full_prefix.endswith(coll + "/") else full_prefix
    return base + STATIC


def client_insert(coll: str, page: ArchivalUrl, full_prefix: str, timestamp: str, config: ReplayConfig) -> bytes:
    """The bytes inserted after a replayed page's ``<head>``."""
    info = {"coll": coll, "prefix": full_prefix, "url": page.url, "timestamp": timestamp, "mod": page.modifier,
            "framed": config.framed_replay, "static": static_prefix(full_prefix, coll)}
    return (f'<script type="application/json" id="wa-replay-info">{script_json(info)}</script>'
            f'<script src="{static_prefix(full_prefix, coll)}wa_client.js"></script>').encode("ascii")


__all__ = ["client_insert", "script_json", "static_prefix"]
