"""Self-redirects: a 3xx capture whose Location is the URL asked for, which replay must skip
(serving it would loop), by pywb's rule (``responseloader.py:BaseLoader.raise_on_self_redirect``).

This module only compares a capture (``warchive.index.capture.Capture``) and its served
head with a request URL; it opens nothing.
"""

from __future__ import annotations

from typing import Optional, Protocol
from urllib.parse import urlsplit

from ..errors import SelfRedirect, UrlError
from ..index.capture import Capture
from ..surt import surt
from ..warc.headers import Headers


class Served(Protocol):
    """What the rule looks at of a loaded capture: the HTTP head it is served with."""

    @property
    def headers(self) -> Headers: ...


class SelfRedirects:
    """The rule over the captures tried for one request, closest first. As pywb keeps
    ``sr-urlkey`` in the request's parameters, the key of the first capture found redirecting to
    itself is what later captures' Locations are compared with (``key``)."""

    def __init__(self, request_url: str) -> None:
        self.request_url = request_url
        self.key: Optional[str] = None

    def check(self, cdx: Capture, cap: Served) -> None:
        """Raise SelfRedirect when ``cap`` (the capture ``cdx`` names) redirects to the request:
        only when the index line's status is not 2xx/4xx/5xx and the served status is 3xx other
        than 304; the Location (made absolute with the capture's host when it starts with
        ``/``) and the request URL are compared lower-cased, without scheme and trailing ``/``,
        or the Location's SURT with the key (the capture's, until one redirected to itself)."""
        status = str(cdx.get("status") or "")
        if status.startswith(("2", "4", "5")):
            return
        code = cap.headers.status
        if not code.startswith("3") or code == "304":
            return
        location = cap.headers.get("Location")
        if not location:
            return
        loc = location.lower()
        if loc.startswith("/"):
            loc = urlsplit(str(cdx.get("url") or "")).netloc + loc
        loc = loc.split("://", 1)[-1].rstrip("/")
        req = self.request_url.lower().split("://", 1)[-1].rstrip("/")
        key = self.key or str(cdx.get("urlkey") or "")
        same = req == loc
        if not same:
            try:
                same = surt(loc) == key
            except UrlError:
                same = False
        if same:
            self.key = key
            raise SelfRedirect(f"{cdx.get('url')} at {cdx.get('timestamp')} redirects to itself ({location})")


def check_self_redirect(request_url: str, cdx: Capture, cap: Served) -> None:
    """SelfRedirects(request_url).check(cdx, cap): the rule for one capture alone."""
    SelfRedirects(request_url).check(cdx, cap)


__all__ = ["SelfRedirect", "SelfRedirects", "Served", "check_self_redirect"]
