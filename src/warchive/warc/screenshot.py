"""How a page's screenshot is stored in a WARC file: the names both its writer and its readers use.

A screenshot is a ``resource`` record whose WARC-Target-URI is ``urn:screenshot:`` +
the page URL, Content-Type ``image/png``, with its metadata as compact JSON in the
``WARC-JSON-Metadata`` header (docs/format.md, "Screenshots (associated
resources)"). The capture layer writes such records (``warchive.capture.browser``)
and replay finds them (``warchive.replay.screenshots``); neither imports the other,
so what they share is here. This module must not read or write records.
"""

from __future__ import annotations

__all__ = ["JSON_METADATA", "OTHER_PREFIXES", "PNG", "SCREENSHOT_PREFIX", "screenshot_uri"]

SCREENSHOT_PREFIX = "urn:screenshot:"
PNG = "image/png"
JSON_METADATA = "WARC-JSON-Metadata"
# prefixes other crawlers give the same kind of record (Browsertrix Crawler's screenshot types);
# find_screenshots can be asked to look under them too
OTHER_PREFIXES = ("urn:view:", "urn:fullPage:", "urn:thumbnail:")


def screenshot_uri(page_url: str) -> str:
    """The WARC-Target-URI of a page's screenshot record: ``urn:screenshot:`` + page URL."""
    return SCREENSHOT_PREFIX + page_url
