"""Replay: the web server over collections (app: pywb's URL space, the CDX API, TimeMaps), and
what it stands on: loading captures with revisits resolved (load and the modules beside it),
archival URLs and URL rewriting (urls), header rewriting (headers), body rewriting (content)."""

from .app import create_app

__all__ = ["create_app"]
