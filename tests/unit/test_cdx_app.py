"""The CDX app (warchive.replay.app): the query string read from the ASGI scope as the client sent
it (WSGI's QUERY_STRING, what pywb reads), whatever bytes the request holds, and the endpoint's
answer sent with the headers a Starlette Response would give it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from warchive.replay.app import query_string

CHARS = st.sampled_from(list("ab=&%+2F3Azé?#/ \t\r\n\x00\x1f") + ["%zz", "url=http%3A%2F%2Fexample.com%2F"])


def _scope(qs: bytes, host: bytes = b"127.0.0.1:8000"):
    return {"type": "http", "method": "GET", "scheme": "http", "path": "/c/cdx", "raw_path": b"/c/cdx",
            "query_string": qs, "root_path": "", "headers": [(b"host", host)], "server": ("127.0.0.1", 8000)}


@settings(max_examples=500, deadline=None)
@given(st.lists(CHARS, max_size=12).map("".join), st.sampled_from([b"127.0.0.1:8000", b"example.com", b"bad host?"]))
def test_query_string_is_the_bytes_sent(text, host):
    raw = text.encode("utf-8")
    scope = _scope(raw, host)
    assert query_string(scope).encode("latin-1") == raw


def test_the_endpoint_sends_what_a_starlette_response_would(tmp_path):
    from starlette.responses import Response
    from starlette.testclient import TestClient

    from warchive.index.query import Index
    from warchive.replay.app import create_app

    (tmp_path / "web" / "indexes").mkdir(parents=True)
    (tmp_path / "web" / "indexes" / "a.cdxj").write_bytes(
        b'com,example)/ 20240101000000 {"url": "http://example.com/", "status": "200"}\n')
    client = TestClient(create_app(str(tmp_path)))
    for q in ("url=http://example.com/", "url=http://example.com/&output=json", "url=example.com&limit=x",
              "url=http%3A%2F%2Fexample.com%2F&output=text#frag"):
        r = client.get("/web/cdx?" + q)
        ans = Index(str(tmp_path / "web")).answer(q.split("#")[0])
        want = Response(ans.read(), ans.status, headers={"Content-Type": ans.content_type})
        assert r.status_code == ans.status and r.content == want.body
        assert [(k, v) for k, v in r.headers.raw if k in (b"content-type", b"content-length")] == want.raw_headers
    r = client.get("/nope/cdx?url=x")
    assert r.status_code == 404 and r.json() == {"message": "no collection 'nope'"}
