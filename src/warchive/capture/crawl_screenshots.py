"""`warchive crawl --screenshots`: each HTML page rendered from the bytes the crawl just fetched.

One ``Screenshotter`` serves the crawl. A page is rendered from its own response (same
fetch: the browser reaches no network) and its subresources from what the crawl
captured so far: the most recent captures are kept in memory (each at most
``RESOURCE_MAX`` bytes, ``RESOURCES_BYTES`` in all, least recently captured dropped
first); the rest is blocked and listed in the record's metadata. The screenshot is
written through the crawl's WARC writer (``browser.write_screenshot``). This module
must not fetch.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Dict, Optional

from ..warc.writer import WarcWriter, Written
from .browser import BrowserUnavailable, Captured, Screenshotter, write_screenshot
from .crawl_config import CrawlConfig, CrawlError
from .fetch import FetchResult

__all__ = ["CrawlScreenshots", "RESOURCE_MAX", "RESOURCES_BYTES"]

RESOURCE_MAX = 4 << 20       # captures kept for screenshots: each at most this big ...
RESOURCES_BYTES = 64 << 20   # ... and this much in all (least recently captured dropped first)


class CrawlScreenshots:
    """The crawl's browser and the recent captures it renders pages from."""

    def __init__(self, shots: Screenshotter) -> None:
        self.shots = shots
        self._resources: "OrderedDict[str, bytes]" = OrderedDict()
        self._resources_bytes = 0

    @classmethod
    async def start(cls, config: CrawlConfig) -> "CrawlScreenshots":
        """The browser started for a crawl of `config` (its ``resolve`` map is Chromium's only resolver);
        a missing browser is a ``CrawlError``."""
        hosts: Dict[str, str] = {k: v for k, v in config.resolve.items() if not k.startswith("*")}
        shots = Screenshotter(concurrency=max(1, min(2, config.concurrency)), host_map=hosts or None)
        try:
            await shots.__aenter__()
        except BrowserUnavailable as e:
            raise CrawlError(f"--screenshots: {e}") from None
        return cls(shots)

    def keep(self, url: str, r: FetchResult) -> None:
        """Remember what `url` gave (a 200 of at most RESOURCE_MAX bytes), for the pages that use it."""
        if r.status == 200 and len(r.response) <= RESOURCE_MAX:
            self._resources[url] = r.response
            self._resources.move_to_end(url)
            self._resources_bytes += len(r.response)
            while self._resources_bytes > RESOURCES_BYTES and self._resources:
                _, old = self._resources.popitem(last=False)
                self._resources_bytes -= len(old)

    def resource(self, url: str) -> Optional[Captured]:
        data = self._resources.get(url)
        return Captured.from_http(url, data) if data is not None else None

    async def shoot(self, writer: WarcWriter, url: str, r: FetchResult, page: Written) -> Written:
        """Render the page `url` from its response `r` and write the screenshot record, linked to
        the page's response (or revisit) record `page`."""
        shot = await self.shots.screenshot(url, response=Captured.from_http(url, r.response), resources=self.resource)
        return write_screenshot(writer, shot, page_record_id=page.record_id, page_date=page.date)

    async def close(self) -> None:
        await self.shots.close()
