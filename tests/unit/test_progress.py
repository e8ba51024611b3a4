"""The crawl's progress display names host queues as hosts (``127.0.0.1:45449``), not by their
SURT keys (``1,0,0,127:45449)``)."""

from __future__ import annotations

import pytest

from warchive.capture.politeness import host_key
from warchive.cli.progress import host_of_queue


@pytest.mark.parametrize("url,host", [
    ("http://127.0.0.1:45449/x", "127.0.0.1:45449"),
    ("http://www.example.com/", "example.com"),           # the queue drops www, the name too
    ("https://sub.example.co.uk:8443/a", "sub.example.co.uk:8443"),
    ("http://[::1]:8080/", "[::1]:8080"),
    ("http://[::1]/", "[::1]"),
    ("http://xn--bcher-kva.example/", "xn--bcher-kva.example"),
    ("http://localhost/", "localhost"),
])
def test_queue_names_read_as_hosts(url: str, host: str) -> None:
    assert host_of_queue(host_key(url)) == host
