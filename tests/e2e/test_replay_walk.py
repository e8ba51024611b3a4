"""Walk a replayed web site in Debian's chromium, page by page, by following its links.

A collection is made (``Collection.init`` and ``add``, as ``warchive init`` and ``warchive add``)
of the committed Wget crawl of the Python 3.11 documentation and its --warc-dedup re-crawl
(tests/data/wget, the same files as ../shared/fixtures; a file of ../shared/fixtures not in
tests/data/wget is added too), or, with ``-m corpus``, of the benchmark corpus (``*.warc.gz`` of
``WARCHIVE_CORPUS``, default corpus/ at the repository root; skipped when it is absent). It is served framed under
uvicorn on 127.0.0.1, and chromium starts at the replayed index pages: the first HTML capture
each WARC file made of each host (a crawl's seed), at its own time, so the re-crawl's index is
replayed from its revisit records. From there the walk is breadth-first, one queue per index
page taken in turn, each original URL once: the hrefs are read from the DOM of the banner's
frame (the raw attribute values, which the server rewrote into archive URLs: the client script
shows scripts the original URLs through ``href`` and ``getAttribute``) and the frame is
navigated to each, as a click would.

Every response the browser gets is kept. The test asserts that no request reached the leak
catcher or the route guard, that no response had a 5xx status, that our own scripts (under
/static/) threw nothing, and that every 404 is either an archived 404 (a capture with that
status, served with its Memento-Datetime) or a URL the collection's CDX API has no capture of;
a 404 of a captured URL is a replay bug. So is a failed request (a response blocked by ORB or
CORS: no response event) of a URL captured with a 2xx or 3xx status; aborted requests
(ERR_ABORTED: the walk moved on, or a font's 404 body cut short) are reported only. What the
archived pages' scripts throw is theirs: it is reported, with the 404s, the counts and the wall
time of the walk, in the summary printed (``-s``) and kept as the test's user properties (the
junit report).
"""

from __future__ import annotations

import filecmp
import json
import os
import sys
import time
import urllib.error
import urllib.request
from collections import Counter, deque
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Deque, Dict, List, Optional, Tuple
from urllib.parse import quote, urlsplit

import pytest

TESTS = Path(__file__).resolve().parents[1]
for _p in (TESTS, TESTS / "e2e"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import localsite  # noqa: E402
from replay_kit import Guard, LeakCatcher, launch, serve  # noqa: E402

REPO = TESTS.parent
WGET = TESTS / "data" / "wget"
SHARED = REPO.parent / "shared" / "fixtures"
CORPUS = Path(os.environ.get("WARCHIVE_CORPUS", REPO / "corpus"))
COLL = "walk"
# pages each walk reaches: at least 200 for the full walk of the fixtures (``-m slow``; the corpus
# walk goes on further); the default run walks 60 of the fixtures' pages (about 0.4 s each)
PAGES = {"fixtures": 60, "fixtures-all": 200, "corpus": int(os.environ.get("WARCHIVE_WALK_PAGES", "1000"))}
LINKS = """() => {
  const base = document.querySelector("base[href]");
  const b = base ? new URL(base.attributes.href.value, location.href).href : location.href;
  const out = [];
  for (const a of document.querySelectorAll("a[href], area[href]")) {
    try { out.push(new URL(a.attributes.href.value, b).href); } catch (e) { /* not a URL */ }
  }
  return out;
}"""


def _fixture_warcs() -> List[Path]:
    """tests/data/wget's WARCs, and those of ../shared/fixtures it has no copy of."""
    files = {p.name: p for p in sorted(WGET.glob("*.warc.gz"))}
    for p in sorted(SHARED.glob("*.warc.gz")) if SHARED.is_dir() else []:
        if p.name in files:
            assert filecmp.cmp(p, files[p.name], shallow=False), f"{p} and {files[p.name]} differ"
        else:
            files[p.name] = p
    return list(files.values())


def _corpus_warcs() -> List[Path]:
    files = sorted(CORPUS.glob("*.warc.gz")) if CORPUS.is_dir() else []
    if not files:
        pytest.skip(f"no benchmark corpus in {CORPUS} (bash ../shared/corpus/make_corpus.sh; WARCHIVE_CORPUS)")
    return files


@dataclass
class Index:
    roots: List[Tuple[str, str]]          # (url, timestamp) of the index pages
    revisits: set                         # (url, timestamp) of the revisit captures


def _read_index(coll_dir: Path) -> Index:
    """The index pages, the first HTML capture (a response or a revisit of status 200) of each
    host in each WARC file, in file order: what each crawl started from; and the revisits."""
    from warchive.collection import Collection
    from warchive.index.segment import Segment
    first: Dict[Tuple[str, str], Tuple[int, str, str]] = {}
    revisits = set()
    for seg in Collection(str(coll_dir)).segments():
        s = Segment(seg)
        try:
            for line in s.range(b"", None):
                _, ts, js = line.split(b" ", 2)
                c = json.loads(js)
                url = c.get("url", "")
                if c.get("mime") == "warc/revisit":
                    revisits.add((url, ts.decode()))
                if (not url.startswith(("http:", "https:")) or c.get("status") != "200"
                        or c.get("mime") not in ("text/html", "warc/revisit")):
                    continue
                key = (c["filename"], urlsplit(url).hostname or "")
                off = int(c["offset"])
                if key not in first or off < first[key][0]:
                    first[key] = (off, url, ts.decode())
        finally:
            s.close()
    return Index([(url, ts) for _, (_, url, ts) in sorted(first.items())], revisits)


def _memento_ts(headers) -> str:
    """The 14-digit time of a Memento-Datetime header, or ""."""
    v = headers.get("memento-datetime")
    return parsedate_to_datetime(v).strftime("%Y%m%d%H%M%S") if v else ""


@dataclass
class Walk:
    origin: str
    pages: List[Tuple[str, str]] = field(default_factory=list)   # (url, capture time) of each page reached
    navigations: int = 0
    documents: Counter = field(default_factory=Counter)          # the status of each navigation
    failed_navigations: List[Tuple[str, str]] = field(default_factory=list)
    responses: List[Tuple[int, str, str, str]] = field(default_factory=list)   # status, url, type, memento time
    request_failures: List[Tuple[str, str, str]] = field(default_factory=list)  # url, failure, where
    our_errors: List[str] = field(default_factory=list)
    their_errors: List[str] = field(default_factory=list)
    csp: List[str] = field(default_factory=list)
    live_links: Counter = field(default_factory=Counter)         # hrefs the server left pointing at the live web
    seconds: float = 0.0
    at: str = ""                                                 # the page being walked

    def on_response(self, r) -> None:
        self.responses.append((r.status, r.url, r.request.resource_type, _memento_ts(r.headers)))

    def on_failed(self, r) -> None:
        self.request_failures.append((r.url, f"{r.failure} ({r.resource_type})", self.at))

    def on_error(self, e) -> None:
        """A script error: ours when it was thrown in our static scripts (the client, the banner)."""
        frames = [x.strip() for x in (e.stack or "").splitlines()[1:] if x.strip().startswith("at ")]
        ours = bool(frames) and f"{self.origin}/static/" in frames[0]
        (self.our_errors if ours else self.their_errors).append(
            f"{e.name}: {e.message} | {' < '.join(frames[:3])} | on {self.at}")

    def on_console(self, m) -> None:
        if "Content Security Policy" in m.text:
            self.csp.append(f"{m.text} | on {self.at}")


def _archival(origin: str, url: str) -> Optional[Tuple[str, str, str]]:
    """(timestamp, modifier, original URL) of a replay URL of the collection, else None."""
    from warchive.replay.urls import ArchivalUrl, ArchivalUrlError
    prefix = f"{origin}/{COLL}/"
    if not url.startswith(prefix):
        return None
    try:
        a = ArchivalUrl.parse(url[len(prefix):])
    except (ArchivalUrlError, ValueError):
        return None
    if not a.is_replay:
        return None
    return a.timestamp, a.modifier, a.url


def _page_key(url: str) -> str:
    return url.split("#", 1)[0]


class _Browser:
    """One page of the context and the banner's frame in it; navigates the frame as a click
    would, or opens a URL through the banner (an index page, or after a failed navigation)."""

    def __init__(self, context, w: Walk) -> None:
        self.context, self.w = context, w
        self.page = None
        self.fresh()

    def fresh(self) -> None:
        if self.page is not None:
            self.page.close()
        self.page = self.context.new_page()
        self.page.on("pageerror", self.w.on_error)
        self.page.on("console", self.w.on_console)
        self.frame = None

    def open(self, href: str, through_banner: bool) -> Tuple[int, str]:
        """Navigate to ``href`` (an mp_ URL): the status and capture time of the frame's document."""
        if through_banner or self.frame is None:
            ts, _, url = _archival(self.w.origin, href) or ("", "", "")
            self.page.goto(f"{self.w.origin}/{COLL}/{ts}/{url}", wait_until="load")
            self.frame = self.page.frame(name="wa-frame")
            assert self.frame is not None
            self.frame.wait_for_load_state("load")
            docs = ((s, m) for s, u, t, m in reversed(self.w.responses) if u == self.frame.url and t == "document")
            return next(docs, (0, ""))
        resp = self.frame.goto(href, wait_until="load")
        return (resp.status, _memento_ts(resp.headers)) if resp is not None else (0, "")


def _walk(context, origin: str, roots: List[Tuple[str, str]], limit: int) -> Walk:
    """Breadth-first from each index page in turn, each original URL once, up to ``limit`` pages."""
    from playwright.sync_api import Error as PlaywrightError
    w = Walk(origin)
    context.on("response", w.on_response)
    context.on("requestfailed", w.on_failed)
    br = _Browser(context, w)
    queues: List[Deque[Tuple[str, bool]]] = [deque([(f"{origin}/{COLL}/{ts}mp_/{url}", True)]) for url, ts in roots]
    seen = {url for url, _ in roots}
    walked = set()
    t0 = time.monotonic()
    while len(w.pages) < limit and any(queues):
        for q in queues:
            if not q or len(w.pages) >= limit:
                continue
            href, through_banner = q.popleft()
            w.navigations += 1
            w.at = href
            try:
                status, memento = br.open(href, through_banner)
                ctype = br.frame.evaluate("document.contentType")
                links = br.frame.evaluate(LINKS) if ctype == "text/html" else []
            except PlaywrightError as e:
                w.failed_navigations.append((href, str(e).splitlines()[0]))
                br.fresh()
                continue
            w.documents[status] += 1
            where = _archival(origin, _page_key(br.frame.url))
            if not (200 <= status < 300) or ctype != "text/html" or where is None or where[2] in walked:
                continue                     # not a page, or one reached already (through a redirect)
            walked.add(where[2])
            seen.add(where[2])
            w.pages.append((where[2], memento))
            for link in links:
                key = _page_key(link)
                got = _archival(origin, key)
                if got is None:
                    if link.startswith(("http:", "https:")) and not link.startswith(origin + "/"):
                        w.live_links[urlsplit(link).netloc] += 1
                    continue
                if got[2] not in seen:
                    seen.add(got[2])
                    q.append((key, False))
    w.seconds = time.monotonic() - t0
    br.page.close()
    return w


def _captures(origin: str, url: str) -> List[dict]:
    """The captures of ``url`` (exactly: its SURT key, no fuzzy match), from the CDX API."""
    q = f"{origin}/{COLL}/cdx?url={quote(url, safe='')}&output=json&allowFuzzy=false"
    try:
        with urllib.request.urlopen(q, timeout=30) as r:
            body = r.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return []
        raise
    return [json.loads(line) for line in body.splitlines() if line.strip()]


@dataclass
class Missing:
    """The 404s and failed requests of the walk, by what the index holds of their URLs."""
    uncaptured: List[str] = field(default_factory=list)        # no capture of the URL: as expected
    archived: List[str] = field(default_factory=list)          # replayed as archived (a capture of status 404)
    captured: List[str] = field(default_factory=list)          # a capture the replay did not find: a bug
    ours: List[str] = field(default_factory=list)              # not an archival URL (e.g. /favicon.ico)
    failed_uncaptured: List[str] = field(default_factory=list)  # failed requests (CORS, ORB) of such URLs
    failed_archived_error: List[str] = field(default_factory=list)   # of URLs archived with an error status
    failed_captured: List[str] = field(default_factory=list)    # of URLs captured with a 2xx/3xx
    aborted_captured: List[str] = field(default_factory=list)   # aborted (ERR_ABORTED) with no 404 seen,
    aborted_other: int = 0                                      # of a URL captured with a 2xx/3xx, or not


def _classify(w: Walk) -> Missing:
    m = Missing()
    caps: Dict[str, List[dict]] = {}

    def captures(url: str) -> List[dict]:
        if url not in caps:
            caps[url] = _captures(w.origin, url)
        return caps[url]

    done = set()
    for status, url, _, memento in w.responses:
        if status != 404 or url in done:
            continue
        done.add(url)
        where = _archival(w.origin, url)
        if where is None:
            m.ours.append(url)
            continue
        got = captures(where[2])
        if not got:
            m.uncaptured.append(where[2])
        elif memento and any(c.get("timestamp") == memento and c.get("status") == "404" for c in got):
            m.archived.append(where[2])
        else:
            m.captured.append(f"{url} (served at {memento or 'no capture'}; captures: "
                              f"{[(c.get('timestamp'), c.get('status')) for c in got][:5]})")
    for url, failure, at in w.request_failures:
        where = _archival(w.origin, url)
        if where is None or url in done:
            continue                          # not ours, or its 404 was seen (a font's body cut short)
        done.add(url)
        got = captures(where[2])
        what = f"{where[2]}: {failure}"
        if "ERR_ABORTED" in failure:          # cut short: by the walk moving on, or by the page
            if any((c.get("status") or "").startswith(("2", "3")) for c in got):
                m.aborted_captured.append(f"{what} on {at}")
            else:
                m.aborted_other += 1
        elif not got:
            m.failed_uncaptured.append(what)
        elif all(not (c.get("status") or "").startswith(("2", "3")) for c in got):
            m.failed_archived_error.append(what)
        else:
            shown = [(c.get("timestamp"), c.get("status"), c.get("mime")) for c in got][:3]
            m.failed_captured.append(f"{what} on {at} (captures: {shown})")
    return m


def _summary(name: str, w: Walk, m: Missing, index: Index) -> Dict[str, object]:
    statuses = Counter(s for s, _, _, _ in w.responses)
    return {
        "walk": name, "index pages": [f"{ts} {u}" for u, ts in index.roots], "pages walked": len(w.pages),
        "navigations": w.navigations, "seconds": round(w.seconds, 1),
        "ms per page": round(1000 * w.seconds / max(1, len(w.pages))),
        "pages by host": dict(Counter(urlsplit(u).netloc for u, _ in w.pages)),
        "pages replayed from revisit records": sum((u, t) in index.revisits for u, t in w.pages),
        "responses": len(w.responses), "statuses": dict(sorted(statuses.items())),
        "navigation statuses": dict(sorted(w.documents.items())),
        "404 uncaptured": len(m.uncaptured), "404 archived as 404": len(m.archived),
        "404 of captured URLs": m.captured, "404 not archival URLs": m.ours,
        "404 uncaptured examples": m.uncaptured[:10], "404 archived examples": m.archived[:5],
        "failed requests": dict(Counter(f.split(" ")[0] for _, f, _ in w.request_failures)),
        "failed, uncaptured": len(m.failed_uncaptured), "failed, archived as an error": len(m.failed_archived_error),
        "failed, captured": m.failed_captured[:10],
        "failed examples": (m.failed_uncaptured + m.failed_archived_error)[:5],
        "aborted requests by type": dict(Counter(
            f.split(" ", 1)[1] for _, f, _ in w.request_failures if "ERR_ABORTED" in f)),
        "aborted, no 404 seen, captured URLs": len(m.aborted_captured), "aborted examples": m.aborted_captured[:4],
        "aborted, no 404 seen, other": m.aborted_other,
        "downloads": sum("Download is starting" in e for _, e in w.failed_navigations),
        "failed navigations": [f for f in w.failed_navigations if "Download is starting" not in f[1]][:10],
        "their page errors": len(w.their_errors),
        "their page errors by message": dict(Counter(e.split(" | ")[0] for e in w.their_errors).most_common(6)),
        "their page error examples": w.their_errors[:3],
        "our page errors": w.our_errors[:10], "CSP reports": len(w.csp), "CSP examples": w.csp[:3],
        "live links (not rewritten)": dict(w.live_links.most_common(8)),
    }


@pytest.fixture(scope="module", params=["fixtures", pytest.param("fixtures-all", marks=pytest.mark.slow),
                                        pytest.param("corpus", marks=pytest.mark.corpus)])
def served(request, tmp_path_factory):
    """(name, origin, index) of a collection served framed on 127.0.0.1."""
    from warchive.collection import Collection
    from warchive.replay.app import create_app
    localsite.require_browser()
    name = request.param
    warcs = _corpus_warcs() if name == "corpus" else _fixture_warcs()
    root = tmp_path_factory.mktemp(f"walk-{name}")
    coll = Collection.init(str(root / COLL))
    t0 = time.monotonic()
    coll.add([str(p) for p in warcs], link=True, jobs=2)
    indexed = time.monotonic() - t0
    index = _read_index(root / COLL)
    assert index.roots, "no HTML capture to start from"
    print(f"\n[walk {name}] {len(warcs)} WARC files indexed in {indexed:.1f} s")
    with serve(create_app(str(root))) as origin:
        yield name, origin, index


def test_walk_the_replayed_site(served, record_property):
    from playwright.sync_api import sync_playwright
    name, origin, index = served
    leaks = LeakCatcher()
    try:
        with sync_playwright() as pw:
            browser = launch(pw, leaks.port)
            try:
                context = browser.new_context(viewport={"width": 1000, "height": 800}, accept_downloads=False)
                context.set_default_timeout(30000)
                guard = Guard(context, origin)
                w = _walk(context, origin, index.roots, PAGES[name])
                context.close()
            finally:
                browser.close()
        time.sleep(0.3)                              # connections still in flight reach the catcher
        m = _classify(w)
        summary = _summary(name, w, m, index)
        for k, v in summary.items():
            record_property(k, v)
        print(f"\n[walk {name}] " + json.dumps(summary, indent=1, default=str))
        assert leaks.hits == [], leaks.hits
        assert guard.escaped == [], guard.escaped[:20]
        assert [r for r in w.responses if r[0] >= 500] == []
        assert w.our_errors == []
        assert m.captured == [], m.captured[:20]
        assert m.failed_captured == [], m.failed_captured[:20]   # e.g. a 404 of it blocked by ORB or CORS
        assert [u for u in m.ours if "/static/" in u] == []
        assert len(w.pages) >= min(PAGES[name], 200), summary          # distinct pages, by construction
        if index.revisits:                                              # the re-crawl, from its revisits
            assert any(p in index.revisits for p in w.pages)
    finally:
        leaks.close()
