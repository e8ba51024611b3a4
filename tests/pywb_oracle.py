"""pywb 2.10 as the test oracle of the CDX query API, always run in a subprocess.

pywb pins old dependencies, so it lives in its own virtual environment
(``.venv-pywb``, made by ``scripts/setup_pywb.sh``) and is never imported by
the tests. This module is both sides of that boundary:

* imported by the tests (standard library only): ``pywb_cdx(sources, queries)``
  answers many queries with ONE pywb process; ``pywb_server(sources)`` runs
  pywb's HTTP server on 127.0.0.1 for load tests;
* run as a script by ``.venv-pywb/bin/python`` (``python pywb_oracle.py JOB``):
  it lays the sources out as a pywb deployment, builds pywb's own WSGI app
  (``FrontEndApp``, what the ``wayback``/``pywb`` command serves) from a
  generated ``config.yaml``, and answers ``GET /<coll>/cdx?<query>`` through
  it. The app forwards the query to its internal warcserver over loopback
  HTTP, exactly as a deployment does, so status, Content-Type and body bytes
  are what a client of a real pywb would see.

Layouts (``layout=``), i.e. how the collection's index is configured:

``"auto"`` (default)
    What ``wb-manager init``/``add`` make: ``collections/<coll>/indexes/``
    holds the index files, the collection is found by pywb's automatic
    collections. pywb adds ``source`` (``<coll>/indexes/<file name>``),
    ``source-coll`` (``<coll>``) and ``access`` (``allow``) to every capture.
``"config"``
    ``config.yaml`` names the index: ``collections: {<coll>: {index: PATH}}``
    where PATH is the one source itself, or a directory holding all sources
    when there are several. pywb adds ``source`` (``<coll>``, or
    ``<coll>:<file name>`` for a directory) and ``source-coll``; no ``access``.

Sources are paths: sorted ``.cdxj``/``.cdx`` files (several are merged by
pywb), or ZipNum clusters given by their ``.idx`` (or ``.summary``) file,
whose ``.loc`` (same stem) and shards come along. Index files are linked
into the deployment under their own base names (they must differ).

This module must not import warchive or anything outside the standard
library at module level: it runs in both interpreters.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

REPO = Path(__file__).resolve().parents[1]
PYWB_VERSION = "2.10.0"
CDX_EXTS = (".cdx", ".cdxj")
ZIPNUM_EXTS = (".idx", ".summary")

Query = Union[str, Mapping[str, object], Sequence[Tuple[str, str]]]
Answer = Tuple[int, str, bytes]   # (HTTP status, Content-Type, body)


class PywbUnavailable(RuntimeError):
    """The pywb virtual environment is missing or broken; run ``bash scripts/setup_pywb.sh``."""


# --------------------------------------------------------------------------- parent side (tests)

def pywb_venv() -> Path:
    """Where pywb is installed: ``$WARCHIVE_PYWB_VENV`` or ``<repo>/.venv-pywb``."""
    return Path(os.environ.get("WARCHIVE_PYWB_VENV", REPO / ".venv-pywb"))


def pywb_python() -> Path:
    py = pywb_venv() / "bin" / "python"
    if not py.exists():
        raise PywbUnavailable(f"{py} not found: run `bash scripts/setup_pywb.sh` to install pywb {PYWB_VERSION}")
    return py


def require_pywb() -> Path:
    """pywb's interpreter, for a test that needs it: without .venv-pywb the test fails under CI
    (environment variable CI set) and is skipped elsewhere."""
    try:
        return pywb_python()
    except PywbUnavailable as e:
        if os.environ.get("CI"):
            raise
        import pytest  # only the tests' side of this module gets here

        pytest.skip(str(e))


def pywb_available() -> bool:
    try:
        pywb_python()
    except PywbUnavailable:
        return False
    return True


def encode_query(query: Query) -> str:
    """A query string: a ``str`` is sent as it is (raw bytes of the URL's query part);
    a mapping or a list of pairs is percent-encoded, a list value giving the
    parameter once per item (``{"filter": ["=status:200", "~mime:text/.*"]}``)."""
    if isinstance(query, str):
        return query
    items = query.items() if isinstance(query, Mapping) else query
    pairs = []
    for name, value in items:
        for v in (value if isinstance(value, (list, tuple)) else [value]):
            pairs.append((name, str(v)))
    return urllib.parse.urlencode(pairs)


def _child_env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _job(kind: str, sources: Iterable, coll: str, layout: str, work: Path, **extra) -> Path:
    if layout not in ("auto", "config"):
        raise ValueError(f"layout must be 'auto' or 'config', not {layout!r}")
    srcs = [str(Path(s).resolve()) for s in sources]
    if not srcs:
        raise ValueError("pywb needs at least one index source")
    for s in srcs:
        if not s.endswith(CDX_EXTS + ZIPNUM_EXTS):
            raise ValueError(f"{s}: not a .cdx/.cdxj file or a ZipNum .idx/.summary")
        if not Path(s).is_file():
            raise FileNotFoundError(s)
    names = [Path(s).name for s in srcs]
    if len(set(names)) != len(names):
        raise ValueError(f"index sources need distinct base names: {names}")
    job = dict(kind=kind, sources=srcs, coll=coll, layout=layout, root=str(work / "deploy"), **extra)
    path = work / "job.json"
    path.write_text(json.dumps(job))
    return path


def pywb_cdx(sources: Iterable, queries: Sequence[Query], coll: str = "coll", layout: str = "auto",
             timeout: float = 600) -> List[Answer]:
    """Answer every query as ``GET /<coll>/cdx?<query>`` of a pywb 2.10 deployment would.

    One subprocess for all queries (start-up about 1 s, then a few ms a query).
    Returns ``[(status, content_type, body)]`` in the order of ``queries``.
    """
    queries = [encode_query(q) for q in queries]
    py = pywb_python()
    with tempfile.TemporaryDirectory(prefix="pywb-oracle-") as tmp:
        work = Path(tmp)
        out = work / "answers.jsonl"
        job = _job("query", sources, coll, layout, work, queries=queries, out=str(out))
        proc = subprocess.run([str(py), "-I", str(Path(__file__).resolve()), str(job)], cwd=tmp,
                              env=_child_env(), stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"pywb oracle failed (exit {proc.returncode}):\n"
                               f"{proc.stderr.decode('utf-8', 'replace')[-4000:]}")
        answers = [json.loads(line) for line in out.read_text().splitlines()]
    if len(answers) != len(queries):
        raise RuntimeError(f"pywb oracle answered {len(answers)} of {len(queries)} queries")
    return [(a["status"], a["content_type"], base64.b64decode(a["body"])) for a in answers]


class PywbServer:
    """A running pywb (``wayback``-style FrontEndApp) on 127.0.0.1; see ``pywb_server``."""

    def __init__(self, port: int, coll: str, proc: subprocess.Popen, log: Path):
        self.port = port
        self.coll = coll
        self.proc = proc
        self.log = log
        self.base_url = f"http://127.0.0.1:{port}"
        self.cdx_url = f"{self.base_url}/{coll}/cdx"

    def query_url(self, query: Query) -> str:
        return f"{self.cdx_url}?{encode_query(query)}"


@contextlib.contextmanager
def pywb_server(sources: Iterable, coll: str = "coll", layout: str = "auto", access_log: bool = True,
                start_timeout: float = 60) -> Iterator[PywbServer]:
    """Run pywb's HTTP server (the app of the ``wayback`` command, gevent) on 127.0.0.1, port 0.

    Yields a ``PywbServer`` (``.port``, ``.cdx_url``, ``.query_url(q)``); the
    process is stopped (SIGTERM, then SIGKILL) when the block ends.
    ``access_log=False`` drops gevent's per-request log line, which the
    ``wayback`` command writes.
    """
    py = pywb_python()
    tmp = tempfile.mkdtemp(prefix="pywb-server-")
    work = Path(tmp)
    ready = work / "port"
    log = work / "server.log"
    job = _job("serve", sources, coll, layout, work, ready=str(ready), access_log=access_log)
    with open(log, "wb") as logf:
        proc = subprocess.Popen([str(py), "-I", str(Path(__file__).resolve()), str(job)], cwd=tmp,
                                env=_child_env(), stdin=subprocess.DEVNULL, stdout=logf, stderr=logf)
    try:
        deadline = time.monotonic() + start_timeout
        while not (ready.exists() and ready.read_text().endswith("\n")):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"pywb server did not start (exit {proc.poll()}):\n"
                                   f"{log.read_text(errors='replace')[-4000:]}")
            time.sleep(0.05)
        yield PywbServer(int(ready.read_text()), coll, proc, log)
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------- child side (.venv-pywb)

def _link(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if not dst.exists():
        os.symlink(src, dst)


def _place(src: str, into: Path) -> None:
    """Link one source into directory ``into``; a ZipNum cluster brings its .loc and
    the shards the .loc names by relative path (resolved from the original .loc)."""
    s = Path(src)
    _link(s, into / s.name)
    if s.name.endswith(ZIPNUM_EXTS):
        loc = s.with_suffix(".loc")
        if not loc.exists():
            raise FileNotFoundError(f"{loc}: the .loc of ZipNum summary {s}")
        _link(loc, into / loc.name)
        for line in loc.read_text().splitlines():
            for path in line.split("\t")[1:]:
                if path and "://" not in path and not os.path.isabs(path):
                    _link((loc.parent / path).resolve(), into / path)


def _deploy(job: dict) -> None:
    """Lay out ``job['root']`` as a pywb deployment and chdir into it (pywb reads ./config.yaml)."""
    root = Path(job["root"])
    root.mkdir(parents=True)
    coll = job["coll"]
    config: dict = {"collections_root": "collections"}
    if job["layout"] == "auto":
        indexes = root / "collections" / coll / "indexes"
        indexes.mkdir(parents=True)
        (root / "collections" / coll / "archive").mkdir()
        for s in job["sources"]:
            _place(s, indexes)
    else:
        if len(job["sources"]) == 1 and not job["sources"][0].endswith(ZIPNUM_EXTS):
            index = job["sources"][0]
        else:
            one = root / "index"
            one.mkdir()
            for s in job["sources"]:
                _place(s, one)
            index = str(one)
            if len(job["sources"]) == 1:
                index = str(one / Path(job["sources"][0]).name)
        config["collections"] = {coll: {"index": index}}
    config.update(job.get("config") or {})
    (root / "config.yaml").write_text(json.dumps(config))   # JSON is YAML
    os.chdir(root)


def _make_app(job: dict):
    # pywb prints chatter (config notes, "Dir ... unchanged") on stdout; keep stdout for nothing.
    sys.stdout = sys.stderr
    from pywb.apps.frontendapp import FrontEndApp   # patches the stdlib for gevent on import
    return FrontEndApp(config_file="./config.yaml")


def _wsgi_get(app, path: str, query: str) -> Answer:
    import io
    env = {
        "REQUEST_METHOD": "GET", "SCRIPT_NAME": "", "PATH_INFO": path, "QUERY_STRING": query,
        "REQUEST_URI": path + ("?" + query if query else ""),
        "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "8080", "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "127.0.0.1:8080", "REMOTE_ADDR": "127.0.0.1",
        "wsgi.version": (1, 0), "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": sys.stderr, "wsgi.multithread": False, "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }
    got: dict = {}

    def start_response(status, headers, exc_info=None):
        got["status"], got["headers"] = status, headers

    chunks = app(env, start_response)
    try:
        body = b"".join(chunks)
    finally:
        close = getattr(chunks, "close", None)
        if close:
            close()
    ctype = next((v for k, v in got["headers"] if k.lower() == "content-type"), "")
    return int(got["status"].split(" ", 1)[0]), ctype, body


def _child_query(job: dict) -> None:
    _deploy(job)
    app = _make_app(job)
    path = f"/{job['coll']}/cdx"
    with open(job["out"], "w") as out:
        for q in job["queries"]:
            status, ctype, body = _wsgi_get(app, path, q)
            out.write(json.dumps({"status": status, "content_type": ctype,
                                  "body": base64.b64encode(body).decode("ascii")}) + "\n")


def _child_serve(job: dict) -> None:
    _deploy(job)
    app = _make_app(job)
    from gevent.pywsgi import WSGIServer
    from pywb.utils.geventserver import RequestURIWSGIHandler   # as the `wayback` command serves
    server = WSGIServer(("127.0.0.1", 0), app, handler_class=RequestURIWSGIHandler,
                        log=sys.stderr if job["access_log"] else None)
    server.init_socket()
    tmp = job["ready"] + ".tmp"
    with open(tmp, "w") as fh:
        fh.write(f"{server.address[1]}\n")
    os.replace(tmp, job["ready"])
    server.serve_forever()


def _child_main(argv: List[str]) -> int:
    job = json.loads(Path(argv[1]).read_text())
    import pywb
    if pywb.__version__ != PYWB_VERSION:
        print(f"pywb {pywb.__version__} found, {PYWB_VERSION} wanted: rerun scripts/setup_pywb.sh", file=sys.stderr)
        return 3
    {"query": _child_query, "serve": _child_serve}[job["kind"]](job)
    return 0


if __name__ == "__main__":
    sys.exit(_child_main(sys.argv))


# --------------------------------------------------------------------------- record loading (resource and replay modes)

Loaded = dict   # one answer of pywb_load: see pywb_load


def pywb_load(archives: Iterable, sources: Iterable, requests: Sequence[Mapping[str, object]], coll: str = "coll",
              timeout: float = 600, config: Optional[Mapping[str, object]] = None) -> List[Loaded]:
    """Load captures as a pywb 2.10 deployment does, in ONE subprocess.

    ``archives`` are WARC files (linked into ``collections/<coll>/archive/``), ``sources``
    the collection's index files (automatic layout). Each request is one of:

    ``{"cdx": LINE}``
        pywb's loader on that one capture: ``WARCPathLoader.load_resource`` (what the
        warcserver's resource mode runs for each capture it tries), with the capture's own
        url and timestamp as the request. Answer: ``ok``, and either ``error``
        (``"ExceptionClass: message"``) or ``warc_headers`` ([[name, value]...], the WARC
        head pywb sends), ``http`` (the HTTP head bytes, base64, or None) and ``payload``
        (the payload as stored, base64: not de-chunked).
    ``{"url": URL, "closest": TS}``
        ``GET /<coll>/resource?url=URL&closest=TS&matchType=exact`` on pywb's warcserver:
        the capture replay would serve, after falling back past captures that fail. Answer:
        ``status``, ``headers`` (its ``Warcserver-Cdx`` names the capture served) and
        ``body`` (base64: a WARC record, WARC head + HTTP head + payload as stored).
    ``{"replay": "TS" "id_/" URL, "accept_encoding": "gzip", "accept_datetime": D}``
        ``GET /<coll>/TSid_/URL`` (any path under the collection: ``timemap/link/URL``...)
        through FrontEndApp, what a browser gets. Answer: ``status``, ``headers``, ``body``
        (base64).

    ``config`` is merged into the deployment's config.yaml (``framed_replay``,
    ``redirect_to_exact``...).
    """
    py = pywb_python()
    with tempfile.TemporaryDirectory(prefix="pywb-oracle-") as tmp:
        work = Path(tmp)
        out = work / "loaded.jsonl"
        job = _job("load", sources, coll, "auto", work, archives=[str(Path(a).resolve()) for a in archives],
                   requests=list(requests), out=str(out), config=dict(config or {}))
        code = ("import sys; sys.path.insert(0, sys.argv[1]); import pywb_oracle; "
                "sys.exit(pywb_oracle._child_load_main(sys.argv[2]))")
        proc = subprocess.run([str(py), "-I", "-c", code, str(Path(__file__).resolve().parent), str(job)], cwd=tmp,
                              env=_child_env(), stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"pywb oracle failed (exit {proc.returncode}):\n"
                               f"{proc.stderr.decode('utf-8', 'replace')[-4000:]}")
        answers = [json.loads(line) for line in out.read_text().splitlines()]
    if len(answers) != len(requests):
        raise RuntimeError(f"pywb oracle answered {len(answers)} of {len(requests)} load requests")
    return answers


def _wsgi_call(app, path: str, query: str, extra_env: Optional[Mapping[str, str]] = None) -> Tuple[int, list, bytes]:
    import io
    env = {
        "REQUEST_METHOD": "GET", "SCRIPT_NAME": "", "PATH_INFO": path, "QUERY_STRING": query,
        "REQUEST_URI": path + ("?" + query if query else ""),
        "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "8080", "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "127.0.0.1:8080", "REMOTE_ADDR": "127.0.0.1",
        "wsgi.version": (1, 0), "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": sys.stderr, "wsgi.multithread": False, "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }
    env.update(extra_env or {})
    got: dict = {}

    def start_response(status, headers, exc_info=None):
        got["status"], got["headers"] = status, headers

    chunks = app(env, start_response)
    try:
        body = b"".join(chunks)
    finally:
        close = getattr(chunks, "close", None)
        if close:
            close()
    return int(got["status"].split(" ", 1)[0]), [list(h) for h in got["headers"]], body


def _child_load_one(loader, coll: str, source: str, line: str) -> dict:
    from pywb.warcserver.index.cdxobject import CDXObject
    cdx = CDXObject(line.encode("utf-8"))
    cdx["source"] = source            # as the aggregator names captures (R15)
    cdx["source-coll"] = coll
    params = {"param.coll": coll, "url": cdx.get("url", ""), "closest": cdx.get("timestamp", ""),
              "matchType": "exact"}
    try:
        warc_headers, http_buff, stream = loader.load_resource(cdx, params)
        payload = stream.read()
    except Exception as e:   # what ResourceHandler would note and skip (or fail on)
        return {"ok": False, "error": f"{type(e).__name__}: {e}"}
    return {"ok": True, "warc_headers": [list(h) for h in warc_headers.headers],
            "http": base64.b64encode(http_buff).decode("ascii") if http_buff else None,
            "payload": base64.b64encode(payload).decode("ascii")}


def _child_load_main(job_path: str) -> int:
    job = json.loads(Path(job_path).read_text())
    import pywb
    if pywb.__version__ != PYWB_VERSION:
        print(f"pywb {pywb.__version__} found, {PYWB_VERSION} wanted: rerun scripts/setup_pywb.sh", file=sys.stderr)
        return 3
    _deploy(job)
    coll = job["coll"]
    archive = Path("collections") / coll / "archive"
    for a in job["archives"]:
        _link(Path(a), archive / Path(a).name)
    app = _make_app(job)                  # FrontEndApp, for replay
    warcserver = app.warcserver           # its warcserver, for resource mode and the loader itself
    handler = warcserver.auto_handler
    loader = handler.resource_loaders[0]  # WARCPathLoader
    source = f"{coll}/indexes/{Path(job['sources'][0]).name}"
    with open(job["out"], "w") as out:
        for req in job["requests"]:
            if "cdx" in req:
                ans = _child_load_one(loader, coll, source, req["cdx"])
            elif "url" in req:
                q = urllib.parse.urlencode({"url": req["url"], "closest": req["closest"], "matchType": "exact"})
                status, headers, body = _wsgi_call(warcserver, f"/{coll}/resource", q)
                ans = {"status": status, "headers": headers, "body": base64.b64encode(body).decode("ascii")}
            else:
                env = {}
                if req.get("accept_encoding"):
                    env["HTTP_ACCEPT_ENCODING"] = str(req["accept_encoding"])
                if req.get("accept_datetime") is not None:
                    env["HTTP_ACCEPT_DATETIME"] = str(req["accept_datetime"])
                path, _, query = f"/{coll}/{req['replay']}".partition("?")
                status, headers, body = _wsgi_call(app, path, query, env)
                ans = {"status": status, "headers": headers, "body": base64.b64encode(body).decode("ascii")}
            out.write(json.dumps(ans) + "\n")
    return 0


# --------------------------------------------------------------------------- URL grammar, URL and header rewriting

class PywbRewrite:
    """One pywb process answering archival-URL, URL-rewriting and header-rewriting requests, one
    JSON line each way (see ``pywb_rewrite``); ``ask(requests)`` answers a list of them."""

    def __init__(self, proc: subprocess.Popen):
        self.proc = proc

    def ask(self, requests: Sequence[Mapping[str, object]]) -> List[dict]:
        if not requests:
            return []
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(list(requests)) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"pywb rewrite oracle died (exit {self.proc.poll()})")
        return json.loads(line)

    def one(self, request: Mapping[str, object]) -> dict:
        return self.ask([request])[0]


@contextlib.contextmanager
def pywb_rewrite() -> Iterator[PywbRewrite]:
    """pywb 2.10's rewrite module (``pywb.rewrite``) in one subprocess for as long as the block
    lasts. Each request is a dict with ``op``; every answer has ``ok`` and, when pywb raised,
    ``error`` ("ExceptionClass: message"):

    ``{"op": "wburl", "path": P}``
        ``WbUrl(P)``: ``type``, ``timestamp``, ``end_timestamp``, ``mod``, ``url`` and ``str``
        (``str(wburl)``; ``str_error`` instead when only that raised).
    ``{"op": "rewrite", "page": P, "prefix": X, "full_prefix": F, "rel_prefix": R, "url": U,
    "mod": M, "force_abs": B}``
        ``UrlRewriter(P, X, full_prefix=F, rel_prefix=R).rewrite(U, M, B)``: ``result``.
        ``"rebase": BASE`` rewrites through ``rebase_rewriter(BASE)`` instead.
    ``{"op": "deprefix", "page": P, "prefix": X, "full_prefix": F}``
        ``UrlRewriter(P, X, F).deprefix_url()``: ``result``.
    ``{"op": "new_url", "page": P, "prefix": X, "url": U, "timestamp": T, "mod": M}``
        ``get_new_url`` with the given (non-null) overrides: ``result``.
    ``{"op": "headers", "page": P, "prefix": X, "full_prefix": F, "rel_prefix": R,
    "statusline": S, "headers": [[name, value]...], "content_rw": B, "accept_encoding": A}``
        ``DefaultHeaderRewriter`` over those HTTP headers, as ``DefaultRewriter.__call__`` runs it
        for a response whose content is (``content_rw``) or is not read to be rewritten, with the
        client's Accept-Encoding ``A`` (None: absent): ``headers``, ``statusline``, ``protocol``,
        ``is_chunked``, ``is_content_rw`` (after the Accept-Encoding check) and ``fields``: for
        each input field, the list of fields ``rewrite_header`` made of it (``headers`` is their
        concatenation, plus Service-Worker-Allowed under ``sw_``).
    ``{"op": "js_location", "text": T, "prefix": P}``
        pywb's ``JSLocationRewriterRules(P)`` (its location-only JS rewriter) over the text T:
        ``edits``, a [start, end, replacement] for each match its ``RegexRewriter`` replaces, and
        ``result``, its ``rewrite(T)``.
    ``{"op": "html", "page": P, "prefix": X, "full_prefix": F, "url": TARGET, "defmod": D, "body": BASE64,
    "css": B}``
        pywb's ``HTMLRewriter`` (or, with ``css``, its ``CSSRewriter``) alone over the body decoded as
        UTF-8 (surrogateescape), as ``DefaultRewriter`` builds it for a page with ``defmod`` D (its
        replay modifier: ``mp_`` in framed replay) and no head insert, but with JavaScript left as it
        is (a rewriter that changes nothing stands for its JS rewriter): ``body`` (base64, UTF-8).
    ``{"op": "content", ...the same, "payload": BASE64, "url": TARGET}``
        the whole of ``DefaultRewriter()(record, ...)`` over a response record of those headers
        and payload (as stored): ``headers``, ``statusline``, ``is_rw`` (a content rewriter ran)
        and ``body`` (base64).
    ``{"op": "http_date", "timestamp": T}`` / ``{"op": "http_date", "warc_date": D}``
        warcio's ``timestamp_to_http_date(T)`` (pywb's Memento-Datetime of a timestamp), or
        ``datetime_to_http_date(iso_date_to_datetime(D))`` (of a WARC-Date): ``result``.
    ``{"op": "accept_datetime", "path": P, "value": V}``
        ``RewriterApp._check_accept_dt`` on ``WbUrl(P)`` with Accept-Datetime ``V`` (None:
        absent): ``is_timegate``, ``type``, ``timestamp``; ``status`` 400 when pywb refuses V.
    ``{"op": "memento_links", "url": U, "full_prefix": F, "memento_dt": D, "memento_ts": T,
    "is_timegate": B, "coll": C, "replay_mod": R, "is_memento": B}``
        ``RewriterApp._add_memento_links`` (replay_mod ``R``) onto an empty head: ``headers``.
    ``{"op": "timemap", "lines": [CDXJ...], "url": U, "full_prefix": F, "replay_mod": R,
    "output": "link"|"json"|"cdxj"}``
        the TimeMap body pywb's replay sends for those index lines: for ``link``
        ``MementoUtils.make_timemap`` with replay's ``memento_format`` wrapped by
        ``wrap_timemap_header``; for ``json``/``cdxj`` the warcserver's lines: ``body`` (text).
    """
    py = pywb_python()
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import pywb_oracle; "
            "sys.exit(pywb_oracle._child_rewrite_main())")
    proc = subprocess.Popen([str(py), "-I", "-c", code, str(Path(__file__).resolve().parent)],
                            env=_child_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, encoding="utf-8", errors="surrogatepass")
    try:
        yield PywbRewrite(proc)
    finally:
        if proc.stdin:
            proc.stdin.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _err(e: BaseException) -> dict:
    return {"ok": False, "error": f"{type(e).__name__}: {e}"}


def _child_url_rewriter(req: dict):
    from pywb.rewrite.url_rewriter import UrlRewriter
    return UrlRewriter(req["page"], req.get("prefix", ""), full_prefix=req.get("full_prefix"),
                       rel_prefix=req.get("rel_prefix"))


def _child_wburl(req: dict) -> dict:
    from pywb.rewrite.wburl import WbUrl
    try:
        w = WbUrl(req["path"])
    except Exception as e:
        return _err(e)
    ans = {"ok": True, "type": w.type, "timestamp": w.timestamp, "end_timestamp": w.end_timestamp,
           "mod": w.mod, "url": w.url}
    try:
        ans["str"] = str(w)
    except Exception as e:
        ans["str_error"] = f"{type(e).__name__}: {e}"
    return ans


def _child_rewrite(req: dict) -> dict:
    try:
        rw = _child_url_rewriter(req)
        if req.get("rebase") is not None:
            rw = rw.rebase_rewriter(req["rebase"])
        return {"ok": True, "result": rw.rewrite(req["url"], req.get("mod"), bool(req.get("force_abs")))}
    except Exception as e:
        return _err(e)


def _child_deprefix(req: dict) -> dict:
    try:
        return {"ok": True, "result": _child_url_rewriter(req).deprefix_url()}
    except Exception as e:
        return _err(e)


def _child_new_url(req: dict) -> dict:
    try:
        over = {k: req[k] for k in ("url", "timestamp", "mod") if req.get(k) is not None}
        return {"ok": True, "result": _child_url_rewriter(req).get_new_url(**over)}
    except Exception as e:
        return _err(e)


def _child_headers(req: dict) -> dict:
    from types import SimpleNamespace

    from warcio.statusandheaders import StatusAndHeaders
    from pywb.rewrite.content_rewriter import RewriteInfo
    from pywb.rewrite.default_rewriter import DefaultRewriter
    try:
        urlrw = _child_url_rewriter(req)
        http = StatusAndHeaders(req["statusline"], [tuple(h) for h in req["headers"]],
                                protocol=req.get("protocol", "HTTP/1.1"))
        rwinfo = SimpleNamespace(record=SimpleNamespace(http_headers=http), url_rewriter=urlrw,
                                 is_content_rw=bool(req.get("content_rw")), is_chunked=False)
        rwinfo.is_url_rw = lambda: RewriteInfo.is_url_rw(rwinfo)
        rwinfo.cookie_rewriter = DefaultRewriter.DEFAULT_REWRITERS["cookie"](urlrw)
        if not rwinfo.is_content_rw:   # as BaseContentRewriter.__call__, before the headers
            ce = http.get_header("Content-Encoding")
            if ce and ce not in (req.get("accept_encoding") or ""):
                rwinfo.is_content_rw = True
        header_rw = DefaultRewriter.DEFAULT_REWRITERS["header"](rwinfo)
        out = header_rw()
        fields = []
        for name, value in http.headers:   # what rewrite_header makes of each field, as __call__ runs it
            got = header_rw.rewrite_header(name, value, header_rw.header_rules.get(name.lower()))
            fields.append([list(h) for h in (got if isinstance(got, list) else [got] if got else [])])
    except Exception as e:
        return _err(e)
    return {"ok": True, "headers": [list(h) for h in out.headers], "statusline": out.statusline,
            "protocol": out.protocol, "fields": fields, "is_chunked": rwinfo.is_chunked,
            "is_content_rw": rwinfo.is_content_rw}


def _child_js_location(req: dict) -> dict:
    from pywb.rewrite.regex_rewriters import JSLocationRewriterRules, RegexRewriter
    try:
        class Rewriter(RegexRewriter):
            rules_factory = JSLocationRewriterRules(req.get("prefix", "WB_wombat_"))
        rw = Rewriter(None)
        text = req["text"]
        edits = [[m.start(), m.end(), rw.replace(m)] for m in rw.regex.finditer(text)]
        return {"ok": True, "edits": edits, "result": rw.rewrite(text)}
    except Exception as e:
        return _err(e)


class _NoJS:
    """Stands for pywb's JavaScript rewriter: leaves scripts as they are."""

    def __init__(self, *args, **kwargs):
        pass

    def rewrite_complete(self, string, **kwargs):
        return string

    def rewrite(self, string):
        return string

    def final_read(self):
        return ""


def _child_html(req: dict) -> dict:
    from pywb.rewrite.html_rewriter import HTMLRewriter
    from pywb.rewrite.regex_rewriters import CSSRewriter
    try:
        urlrw = _child_url_rewriter(req)
        text = base64.b64decode(req["body"]).decode("utf-8", "surrogateescape")
        if req.get("css"):
            rw = CSSRewriter(urlrw)
            out = rw.rewrite_complete(text)
        else:
            rw = HTMLRewriter(urlrw, js_rewriter=_NoJS(), css_rewriter=CSSRewriter(urlrw), url=req["url"],
                              defmod=req.get("defmod", ""), charset="utf-8")
            out = rw.rewrite(text) + rw.close()
    except Exception as e:
        return _err(e)
    return {"ok": True, "body": base64.b64encode(out.encode("utf-8", "surrogateescape")).decode("ascii")}


def _child_content(req: dict, rewriter) -> dict:
    import io

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import BufferWARCWriter
    from warcio.archiveiterator import ArchiveIterator
    try:
        urlrw = _child_url_rewriter(req)
        http = StatusAndHeaders(req["statusline"], [tuple(h) for h in req["headers"]],
                                protocol=req.get("protocol", "HTTP/1.1"))
        writer = BufferWARCWriter(gzip=False)
        payload = base64.b64decode(req["payload"])
        rec = writer.create_warc_record(req["url"], "response", payload=io.BytesIO(payload),
                                        length=len(payload), http_headers=http)
        writer.write_record(rec)
        record = next(iter(ArchiveIterator(io.BytesIO(writer.get_contents()), no_record_parse=False,
                                           ensure_http_headers=True)))
        environ = {}
        if req.get("accept_encoding") is not None:
            environ["HTTP_ACCEPT_ENCODING"] = req["accept_encoding"]
        cdx = {"urlkey": req.get("urlkey", "com,example)/"), "url": req["url"]}
        headers, gen, is_rw = rewriter(record, urlrw, None, head_insert_func=None, cdx=cdx, environ=environ)
        body = b"".join(gen)
    except Exception as e:
        return _err(e)
    return {"ok": True, "headers": [list(h) for h in headers.headers], "statusline": headers.statusline,
            "is_rw": bool(is_rw), "body": base64.b64encode(body).decode("ascii")}


def _child_http_date(req: dict) -> dict:
    from warcio.timeutils import datetime_to_http_date, iso_date_to_datetime, timestamp_to_http_date
    try:
        if req.get("warc_date") is not None:
            return {"ok": True, "result": datetime_to_http_date(iso_date_to_datetime(req["warc_date"]))}
        return {"ok": True, "result": timestamp_to_http_date(req["timestamp"])}
    except Exception as e:
        return _err(e)


def _child_accept_datetime(req: dict) -> dict:
    from pywb.apps.rewriterapp import RewriterApp
    from pywb.rewrite.wburl import WbUrl
    from pywb.utils.wbexception import WbException
    wb_url = WbUrl(req["path"])
    environ = {} if req.get("value") is None else {"HTTP_ACCEPT_DATETIME": req["value"]}
    try:
        is_timegate = RewriterApp._check_accept_dt(None, wb_url, environ)   # uses nothing of self
    except WbException as e:
        return {"ok": True, "status": e.status_code}
    except Exception as e:
        return _err(e)
    return {"ok": True, "status": 200, "is_timegate": is_timegate, "type": wb_url.type, "timestamp": wb_url.timestamp}


def _child_memento_links(req: dict) -> dict:
    import types

    from warcio.statusandheaders import StatusAndHeaders
    from pywb.apps.rewriterapp import RewriterApp
    app = types.SimpleNamespace(replay_mod=req.get("replay_mod", ""))
    app._get_timegate_timemap = types.MethodType(RewriterApp._get_timegate_timemap, app)
    head = StatusAndHeaders("200 OK", [])
    try:
        RewriterApp._add_memento_links(app, req["url"], req["full_prefix"], req.get("memento_dt"), req.get("memento_ts"),
                                       head, bool(req.get("is_timegate")), False, req.get("coll"),
                                       is_memento=req.get("is_memento", True))
    except Exception as e:
        return _err(e)
    return {"ok": True, "headers": [list(h) for h in head.headers]}


def _child_timemap(req: dict) -> dict:
    import types

    from pywb.apps.rewriterapp import RewriterApp
    from pywb.utils.memento import MementoUtils
    from pywb.warcserver.index.cdxobject import CDXObject
    try:
        cdxs = [CDXObject(line.encode("utf-8")) for line in req["lines"]]
        prefix, output = req["full_prefix"], req.get("output", "link")
        if output == "json":
            return {"ok": True, "body": "".join(c.to_json(None) for c in cdxs)}
        if output == "cdxj":
            return {"ok": True, "body": "".join(c.to_cdxj(None) for c in cdxs)}
        fmt = prefix + "{timestamp}" + req.get("replay_mod", "") + "/{url}"
        text = "".join(MementoUtils.make_timemap(iter(cdxs), {"memento_format": fmt}))
        app = types.SimpleNamespace()
        timegate, timemap = RewriterApp._get_timegate_timemap(app, req["url"], prefix, "")
        body = MementoUtils.wrap_timemap_header(req["url"], timegate, timemap, text) if text else ""
        return {"ok": True, "body": body}
    except Exception as e:
        return _err(e)


def _child_rewrite_main() -> int:
    sys.stdout, out = sys.stderr, sys.stdout   # pywb's chatter must not reach the answers
    import pywb
    if pywb.__version__ != PYWB_VERSION:
        print(f"pywb {pywb.__version__} found, {PYWB_VERSION} wanted: rerun scripts/setup_pywb.sh", file=sys.stderr)
        return 3
    from pywb.rewrite.default_rewriter import DefaultRewriter
    rewriter = DefaultRewriter()
    ops = {"wburl": _child_wburl, "rewrite": _child_rewrite, "deprefix": _child_deprefix,
           "new_url": _child_new_url, "headers": _child_headers, "js_location": _child_js_location,
           "content": lambda req: _child_content(req, rewriter), "http_date": _child_http_date,
           "accept_datetime": _child_accept_datetime, "memento_links": _child_memento_links,
           "timemap": _child_timemap, "html": _child_html}
    for line in sys.stdin:
        answers = []
        for req in json.loads(line):
            try:
                answers.append(ops[req["op"]](req))
            except Exception as e:   # a broken request, not pywb's answer
                answers.append({"ok": False, "error": f"oracle: {type(e).__name__}: {e}"})
        out.write(json.dumps(answers) + "\n")
        out.flush()
    return 0
