"""Replay: the web server over collections (app: pywb's URL space, the CDX API, TimeMaps), and
what it stands on: loading captures with revisits resolved (load and the modules beside it),
archival URLs and URL rewriting (urls), header rewriting (headers), body rewriting (content).

    from warchive.replay import CaptureLoader, load_capture, load_closest   # warchive.replay.load
"""

from .app import create_app
from .load import CaptureLoader, LoadedCapture, load_capture, load_closest

__all__ = ["CaptureLoader", "LoadedCapture", "create_app", "load_capture", "load_closest"]
