"""The CDX app reads the query string from the ASGI scope as Starlette's request.url.query
gives it (warchive.replay.app.query_string), whatever bytes the request holds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.requests import Request

from warchive.replay.app import query_string

CHARS = st.sampled_from(list("ab=&%+2F3Azé?#/ \t\r\n\x00\x1f") + ["%zz", "url=http%3A%2F%2Fexample.com%2F"])


def _scope(qs: bytes, host: bytes = b"127.0.0.1:8000"):
    return {"type": "http", "method": "GET", "scheme": "http", "path": "/c/cdx", "raw_path": b"/c/cdx",
            "query_string": qs, "root_path": "", "headers": [(b"host", host)], "server": ("127.0.0.1", 8000)}


@settings(max_examples=2000, deadline=None)
@given(st.lists(CHARS, max_size=12).map("".join), st.sampled_from([b"127.0.0.1:8000", b"example.com", b"bad host?"]))
def test_query_string_is_starlettes(text, host):
    scope = _scope(text.encode("utf-8"), host)
    assert query_string(scope) == Request(scope).url.query
