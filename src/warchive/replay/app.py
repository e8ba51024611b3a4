"""The ASGI application: `GET /<coll>/cdx?<params>` over the collections under a root directory.

Answers are the query engine's (warchive.index.query), byte for byte what
`warchive cdx` prints; an unknown collection is 404 with a JSON message, a
collection whose index cannot be opened 503 with a message naming it (the
others are served as usual), an index that fails while answering 500 with a
message naming the collection. A collection's sources are opened once and
reopened when a file is added to or removed from its `indexes/` directory. The app binds nothing itself:
`warchive serve` runs it with uvicorn, and other servers can mount it.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from typing import Any, Dict, List, Optional, Tuple, Union

from starlette.applications import Starlette
from starlette.datastructures import URL
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from ..errors import ArchiveError
from ..index.query import Answer, Engine, named_sources

log = logging.getLogger("warchive.serve")


class CollectionUnavailable(ArchiveError):
    """A collection whose index cannot be opened (the message names it and says why)."""


class Collections:
    """Engines of the collections under root, cached by the listing of their indexes/ directory."""

    def __init__(self, root: str) -> None:
        self.root = os.path.abspath(root)
        self._cache: Dict[str, Tuple[Tuple[Any, ...], Union[Engine, CollectionUnavailable]]] = {}
        self._lock = threading.Lock()

    def names(self) -> List[str]:
        """The collections under root (directories with an indexes/ directory), in name order."""
        try:
            entries = sorted(os.listdir(self.root))
        except FileNotFoundError:
            return []
        return [n for n in entries if not n.startswith(".") and os.path.isdir(os.path.join(self.root, n, "indexes"))]

    def engine(self, coll: str) -> Optional[Engine]:
        """The engine of collection `coll`; None when there is no such collection;
        CollectionUnavailable when its index cannot be opened."""
        if not coll or coll.startswith(".") or "/" in coll:
            return None
        path = os.path.join(self.root, coll)
        idx = os.path.join(path, "indexes")
        try:
            st = os.stat(idx)
            stamp: Tuple[Any, ...] = (st.st_mtime_ns, st.st_ino)
        except FileNotFoundError:
            return None
        with self._lock:
            hit = self._cache.get(coll)
            if hit is not None and hit[0] == stamp:
                if isinstance(hit[1], CollectionUnavailable):
                    raise hit[1]
                return hit[1]
            try:
                sources, access, selectable = named_sources([path])
                eng: Union[Engine, CollectionUnavailable] = Engine(sources, access=access, selectable=selectable)
            except (ArchiveError, OSError) as e:   # told once per change of its indexes/, then remembered
                eng = CollectionUnavailable(f"collection {coll!r} is unavailable: {e}")
                log.error("%s", eng)
            old = self._cache.get(coll)
            self._cache[coll] = (stamp, eng)
        if old is not None and isinstance(old[1], Engine):
            for s in old[1].sources:
                try:
                    s.source.close()
                except Exception:
                    pass
        if isinstance(eng, CollectionUnavailable):
            raise eng
        return eng


def query_string(scope: Scope) -> str:
    """The request's query string, as Starlette's ``request.url.query`` gives it, without
    building the URL (a tenth of a request's time): urlsplit drops tabs and line breaks and
    ends the query at `#`, so a query string holding one is left to Starlette."""
    qs: str = scope.get("query_string", b"").decode()
    if "#" in qs or "\t" in qs or "\n" in qs or "\r" in qs:
        return str(URL(scope=scope).query)
    return qs


class CdxEndpoint:
    """``GET /{coll}/cdx``, an ASGI endpoint of its own: the answer is sent as two messages,
    with the headers a Starlette ``Response`` would give it, without building a Request and a
    Response around it (a fifth of a request's time)."""

    def __init__(self, colls: Collections) -> None:
        self.colls = colls

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        coll = scope["path_params"]["coll"]
        try:
            eng = self.colls.engine(coll)   # short CPU work: answered on the event loop
        except CollectionUnavailable as e:
            await _message(503, str(e))(scope, receive, send)
            return
        if eng is None:
            await _message(404, f"no collection {coll!r}")(scope, receive, send)
            return
        try:
            ans: Answer = eng.answer(query_string(scope))
            body = b"".join(ans.body)
        except ArchiveError as e:   # an index damaged under the server: this request fails, not the server
            log.error("collection %r: %s", coll, e)
            await _message(500, f"collection {coll!r}: {e}")(scope, receive, send)
            return
        await send({"type": "http.response.start", "status": ans.status,
                    "headers": [(b"content-type", ans.content_type.encode("latin-1")),
                                (b"content-length", str(len(body)).encode("latin-1"))]})
        await send({"type": "http.response.body", "body": body})


def _message(status: int, message: str) -> Response:
    return Response(json.dumps({"message": message}).encode("utf-8"), status,
                    media_type="application/json; charset=utf-8")


def create_app(root: str) -> Starlette:
    """A Starlette app serving the CDX API of every collection under root."""
    return Starlette(routes=[Route("/{coll}/cdx", CdxEndpoint(Collections(root)), methods=["GET"])])
