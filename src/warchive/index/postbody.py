"""Request bodies of POST/PUT captures turned into query strings, as cdxj-indexer does.

pywb looks up a POST capture by its URL plus ``__wb_method=post&<body as
query>``; the indexer must build exactly the same string (the Webrecorder
"request body canonicalization" rules as cdxj-indexer 1.5.0 implements them):

- ``application/x-www-form-urlencoded``: the body, UTF-8 decoded and
  percent/plus-decoded;
- ``multipart/*``: the form fields as ``urlencode`` of (name, value) pairs,
  file parts as their raw bytes;
- ``application/json`` (and JSON in ``text/plain``): leaf values keyed by their
  innermost name, repeated names as ``name.2_``, ``name.3_`` ...;
- anything else, or what cannot be decoded: ``__wb_post_data=<base64>``;
- at most 4096 characters.

Deliberate difference: AMF bodies (``application/x-amf``) are not decoded
(cdxj-indexer needs pyamf for that); they are keyed as binary data.
"""

from __future__ import annotations

import base64
import json
import re
from typing import BinaryIO, List, Optional, Tuple
from urllib.parse import unquote_plus, urlencode

MAX_QUERY_LENGTH = 4096


def method_query(method: str, content_type: Optional[str], length: Optional[str], body: BinaryIO,
                 url: str) -> Tuple[Optional[str], str]:
    """(query, suffix) for a request: suffix is appended to the URL before keying."""
    query: Optional[str] = ""
    if method in ("POST", "PUT"):
        query = body_query(content_type, length, body)
    suffix = ("&" if "?" in url else "?") + "__wb_method=" + method
    if query:
        suffix += "&" + query
    return query, suffix


def _binary(data: bytes) -> str:
    return "__wb_post_data=" + base64.b64encode(data).decode("ascii")


def body_query(content_type: Optional[str], length: Optional[str], body: BinaryIO) -> Optional[str]:
    try:
        n = int(length)  # type: ignore[arg-type]
    except (ValueError, TypeError):
        if length is not None:
            return None
        n = 8192
    data = b""
    while n > 0:
        chunk = body.read(n)
        if not chunk:
            break
        n -= len(chunk)
        data += chunk
    mime = content_type or ""
    query: Optional[str] = ""
    if mime.startswith("application/x-www-form-urlencoded"):
        try:
            query = unquote_plus(data.decode("utf-8"))
        except UnicodeDecodeError:
            query = _binary(data)
    elif mime.startswith("multipart/"):
        query = _multipart_query(mime, data)
    elif mime.startswith("application/json"):
        try:
            query = json_query(data)
        except Exception:
            query = ""
    elif mime.startswith("text/plain"):
        try:
            query = json_query(data)
        except Exception:
            query = _binary(data)
    else:
        query = _binary(data)
    if query:
        query = query[:MAX_QUERY_LENGTH]
    return query


def json_query(data: bytes) -> str:
    """Flatten JSON (or JSON lines) into a query string of its leaf values."""
    out: dict = {}
    seen: dict = {}

    def key(name: str) -> str:
        if name not in out:
            return name
        seen[name] = seen.get(name, 1) + 1
        return f"{name}.{seen[name]}_"

    def walk(obj, name: str = "") -> None:
        if isinstance(obj, dict):
            for k, v in obj.items():
                walk(v, k)
        elif isinstance(obj, list):
            for v in obj:
                walk(v, name)
        elif name:
            out[key(name)] = str(obj)

    try:
        walk(json.loads(data))
    except json.JSONDecodeError:
        if b"\n" not in data:
            raise
        for line in data.split(b"\n"):
            walk(json.loads(line))
    return urlencode(out)


_PARAM = re.compile(r';\s*([^=;\s]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)')


def _header_params(value: str) -> dict:
    params = {}
    for name, val in _PARAM.findall(value):
        val = val.strip()
        if len(val) >= 2 and val[0] == val[-1] == '"':
            val = re.sub(r"\\(.)", r"\1", val[1:-1])
        params[name.lower()] = val
    return params


def _multipart_query(mime: str, data: bytes) -> str:
    try:
        boundary = mime.split("boundary=")[1]
    except IndexError:
        return _binary(data)
    if not boundary:
        return _binary(data)
    parts = _multipart_parts(data, boundary.encode("latin-1", "replace"))
    if parts is None:
        return _binary(data)
    return urlencode(parts, True)


def _multipart_parts(data: bytes, boundary: bytes) -> Optional[List[Tuple[str, object]]]:
    """(name, value) of each form part; value is str for fields, bytes for file uploads."""
    delim = b"--" + boundary
    start = data.find(delim)
    if start < 0:
        return None
    values: List[Tuple[str, object]] = []
    pos = start + len(delim)
    while True:
        if data.startswith(b"--", pos):
            return values
        nl = data.find(b"\n", pos)
        if nl < 0:
            return values
        pos = nl + 1
        head_end = data.find(b"\r\n\r\n", pos)
        sep = 4
        if head_end < 0:
            head_end = data.find(b"\n\n", pos)
            sep = 2
            if head_end < 0:
                return values
        headers = data[pos:head_end].decode("utf-8", "replace")
        body_start = head_end + sep
        nxt = data.find(b"\r\n" + delim, body_start)
        if nxt < 0:
            nxt = data.find(b"\n" + delim, body_start)
            if nxt < 0:
                return values
            body_end, pos = nxt, nxt + 1 + len(delim)
        else:
            body_end, pos = nxt, nxt + 2 + len(delim)
        name = filename = None
        for line in headers.splitlines():
            hname, _, hval = line.partition(":")
            if hname.strip().lower() == "content-disposition":
                params = _header_params(hval)
                name = params.get("name")
                filename = params.get("filename")
        if name is None:
            continue
        raw = data[body_start:body_end]
        values.append((name, raw if filename else raw.decode("utf-8", "replace")))
