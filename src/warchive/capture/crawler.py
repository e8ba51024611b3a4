"""The crawler: seeds to WARC files, politely, through the capture parts, and resumable after a kill.

One ``Crawler`` runs one crawl session of a collection (pywb layout)::

    COLL/archive/PREFIX-TIMESTAMP-SERIAL-HOST.warc.gz    what was captured (``.open`` while written)
    COLL/indexes/crawl-TIME-RANDOM.seg                  index segments written as the crawl goes
    COLL/dedup/                                         the digest index of writer-side dedup
    COLL/crawls/ID/config.json                          the crawl's settings (``--resume`` reads them)
    COLL/crawls/ID/session.journal                      the session database: the truth about each URL
    COLL/crawls/ID/crawl.log                            Heritrix's crawl.log
    COLL/crawls/ID/frontier/, COLL/crawls/ID/seen       the frontier checkpoint and the seen set

The loop of each of N workers: lease a URL from the frontier (which waits out the host's
politeness delay) -> fetch robots.txt first if the cache has none (archived as an ordinary
record; the URL then goes back to the head of its queue, so robots.txt costs one polite
delay like any fetch) -> robots decision -> fetch with the exact bytes -> ``dns:`` record on
the fetch that looked the host up -> dedup decision -> request and response (or revisit)
records -> outlinks (HTML, CSS; a 3xx ``Location`` as hop ``R``) through scope and the seen
set into the frontier -> session entries (``fetch`` last: it marks the URL finished) ->
crawl log line -> ``frontier.done``.

Order is what makes a SIGKILL harmless: outlinks reach the frontier's log before the
session says the URL is finished, so a finished URL never loses its outlinks; a URL whose
``F`` line the frontier lost comes back from it and is skipped because the session says it
is finished; ``.open`` WARC files are cut after their last whole record and indexed on
resume (lines already in a segment are not written twice), and the digests of what they
hold go back into the dedup index. The seen set is synced every 2 s, the frontier's log
at every call: on resume, every URL the frontier holds and every URL the session finished
is added to the seen set, so a URL found again through another page is not queued twice.
A ``fetching`` entry precedes each request: a URL with one and no outcome after it was in
flight at the kill, and it is the only kind of URL a resume requests a second time
(``resume-refetch`` in the crawl log; docs/cli.md, "What a kill costs").

The index segments are ``crawl_index``'s, what a resumed run takes over from the killed
one is ``resume``'s, and ``--screenshots`` is ``crawl_screenshots``'s. What is left (about
700 lines) is long because it is one piece: the loop's steps share one crawler's state (frontier, session,
writer, dedup, stats), and their order is the crash-safety argument above. This module
must not parse HTTP, robots.txt or HTML, decide scope, or format index lines itself: the
modules it drives do.
"""

from __future__ import annotations

import asyncio
import importlib.util
import itertools
import json
import os
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Awaitable, Callable, Dict, List, Optional, Set, Tuple

from .. import __version__
from ..durable import AtomicOutput
from ..errors import ArchiveError
from ..warc.writer import WarcWriter, Written, new_record_id
from .addresses import networks
from .crawl_config import CrawlConfig, CrawlError
from .crawl_index import CrawlIndex
from .crawl_log import CrawlLog, CrawlLogEntry
from .crawl_screenshots import CrawlScreenshots
from .dedup import Decision, Deduplicator, DigestIndex, PreviousCapture, conditional_headers
from .fetch import ADDRESS_REFUSED, FetchResult, Fetcher
from .frontier import Frontier, Lease
from .links import extract_links
from .resolve import Resolver, StaticResolver, SystemResolver
from .resume import last_closed, read_previous, recover_digests, recover_warcs, restore_robots
from .robots_cache import UNREACHABLE, AsyncFetch, RobotsCache
from .robots_meta import page_directives
from .seen import open_seen
from .session import Session, SessionDB, read_session
from .session.dirs import CONFIG, JOURNAL, latest_session
from .session.schema import now as _now_iso

__all__ = ["CrawlConfig", "Crawler", "CrawlStats", "CrawlError", "read_config", "screenshots_available", "ROBOTS_SKIP",
           "SCOPE_SKIP", "PREREQ_FAILED"]

ROBOTS_SKIP = -9998      # Heritrix: blocked by robots.txt
PREREQ_FAILED = -61     # Heritrix: the robots.txt prerequisite could not be fetched
SCOPE_SKIP = -5000       # Heritrix: out of scope (logged for seeds only; outlinks are just not queued)
RETRY_STATUSES = (-2, -3, -4, -404)   # network failures worth another attempt


def screenshots_available() -> bool:
    """Whether this build has the browser part (``warchive.capture.browser``)."""
    try:
        return importlib.util.find_spec("warchive.capture.browser") is not None
    except (ImportError, ValueError):
        return False


@dataclass
class CrawlStats:
    queued: int = 0          # URLs put into the frontier (this run)
    fetched: int = 0         # HTTP exchanges archived (robots.txt included)
    failed: int = 0          # attempts that failed (network, 5xx retried out)
    skipped: int = 0         # robots, already finished, dedup skip, refused address
    refused: int = 0         # of those, fetches refused by address (robots.txt included)
    revisits: int = 0        # revisit records written
    records: int = 0         # WARC records written
    bytes: int = 0           # WARC bytes written (compressed)
    segments: int = 0        # index segments written
    screenshots: int = 0     # screenshot resource records written
    started: float = field(default_factory=time.time)
    statuses: Dict[int, int] = field(default_factory=dict)

    def count_status(self, status: int) -> None:
        self.statuses[status] = self.statuses.get(status, 0) + 1


def _date(t: float) -> datetime:
    return datetime.fromtimestamp(t, timezone.utc)


def read_config(session_dir: str) -> CrawlConfig:
    """The settings a session was started with (or last resumed with): its ``config.json``."""
    path = os.path.join(session_dir, CONFIG)
    try:
        with open(path, encoding="utf-8") as f:
            return CrawlConfig.from_json(json.load(f))
    except (ValueError, TypeError, AttributeError) as e:
        raise CrawlError(f"{path}: not the settings of a crawl ({e})") from None


class Crawler:
    """One crawl session of a collection. ``await crawler.run()`` crawls until the frontier is
    empty (or ``stop()``) and returns the ``CrawlStats``.

    ``session_dir`` is where the session lives (default ``COLL/crawls/<UTC time>``); with
    ``resume`` it must hold a session, whose ``config.json`` is the configuration unless
    ``config`` is given (then ``config.json`` becomes it: a later resume takes it up). The
    limits count what the session did before: ``max_urls`` what all its runs queued. ``resolver``
    overrides the one ``config.resolve`` makes. ``progress`` is called about once a second
    with the crawler (the CLI's display).
    """

    def __init__(self, config: Optional[CrawlConfig], collection: str, *, session_dir: Optional[str] = None,
                 resume: bool = False, retry_failed: bool = False, resolver: Optional[Resolver] = None,
                 progress: Optional[Callable[["Crawler"], None]] = None) -> None:
        self.collection = os.path.abspath(collection)
        self.archive_dir = os.path.join(self.collection, "archive")
        self.index_dir = os.path.join(self.collection, "indexes")
        self._new_config = False   # a resume with other settings: config.json is rewritten
        if resume:
            if session_dir is None:
                session_dir = latest_session(self.collection)
            stored = read_config(session_dir)
            self._new_config = config is not None and config != stored
            config = config if config is not None else stored
        elif config is None:
            raise CrawlError("a new crawl needs a configuration (seeds)")
        elif session_dir is None:
            stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime())
            session_dir = os.path.join(self.collection, "crawls", f"{stamp}-{os.urandom(2).hex()}")
        assert config is not None
        self.config = config
        self.session_dir = os.path.abspath(session_dir)
        self.resume = resume
        self.retry_failed = retry_failed
        self._resolver = resolver
        self.progress = progress
        self.stats = CrawlStats()
        self._stopping = False
        self._finished_before: Set[str] = set()
        self._not_queued: Set[str] = set()     # finished, but never queued (not in the seen set)
        self._interrupted: Set[str] = set()    # in flight at the kill: requested again (resume-refetch)
        self._previous: Dict[str, PreviousCapture] = {}
        self._revisit_count: Dict[str, int] = {}
        self._queued_total = 0
        self.recovered: List[str] = []
        # async (crawler, url, FetchResult, Written) -> None, after each HTML page (200) is archived:
        # where --screenshots plugs in warchive.capture.browser (see screenshots_available)
        self.page_hooks: List[Callable[["Crawler", str, FetchResult, Written], Awaitable[None]]] = []
        self.shots: Optional[CrawlScreenshots] = None
        self._session_snapshot: Optional[Session] = None   # what the killed run's journal said (--resume)
        self._waiting: Set[int] = set()
        self._prereq: Set[str] = set()    # URLs queued again after their host's robots.txt was fetched
        self._tasks: List["asyncio.Future[None]"] = []
        self.index = CrawlIndex(self.collection, self.index_dir, f"crawl {os.path.basename(self.session_dir)}",
                                on_segment=self._count_segment)
        self._resume_hosts: Dict[str, Tuple[float, float]] = {}   # host -> (last fetch end, its duration)

    # ---------------------------------------------------------------------------- set-up

    def _open(self) -> None:
        cfg = self.config
        if cfg.screenshots and not screenshots_available():
            raise CrawlError("--screenshots: not available in this build (warchive.capture.browser is missing)")
        try:
            networks(cfg.allow_addresses)
        except ValueError as e:
            raise CrawlError(f"--allow-address {e}") from None
        for d in (self.archive_dir, self.index_dir, self.session_dir):
            os.makedirs(d, exist_ok=True)
        cfg_path = os.path.join(self.session_dir, CONFIG)
        journal = os.path.join(self.session_dir, JOURNAL)
        if not self.resume:
            if os.path.exists(journal):
                raise CrawlError(f"{self.session_dir}: holds a crawl session already; resume it with --resume")
            with AtomicOutput(cfg_path) as out:
                out.write(json.dumps(cfg.to_json(), indent=1, sort_keys=True).encode("utf-8"))
        else:
            if not os.path.exists(journal):
                raise CrawlError(f"{journal}: no session journal to resume")
            if self._new_config:
                with AtomicOutput(cfg_path) as out:
                    out.write(json.dumps(cfg.to_json(), indent=1, sort_keys=True).encode("utf-8"))
            prev = read_previous(journal)
            self._session_snapshot = prev.session
            self._finished_before = prev.finished
            self._not_queued = prev.not_queued
            self._interrupted = prev.interrupted
            self._resume_hosts = prev.last_fetch
            self.recovered = recover_warcs(self.archive_dir, prev.session, self._description())
            # index what no segment holds yet: the files recovered, and the file closed last (a kill
            # between its rename and the next record loses its lines)
            newest = last_closed(self.archive_dir, prev.session)
            unindexed = self.recovered + ([newest] if newest and newest not in self.recovered else [])
            if unindexed:
                self.index.add_files(unindexed, self.archive_dir)
        self.scope = cfg.make_scope()
        self.frontier = Frontier.open(os.path.join(self.session_dir, "frontier"), cfg.politeness())
        self.seen = open_seen(os.path.join(self.session_dir, "seen"), cfg.seen)
        if self.resume:
            # the seen set is synced every 2 s, the frontier's log at every call: what the killed run
            # queued or finished since its last sync would be queued again when found again
            known = itertools.chain(self.frontier.urls(), self._finished_before - self._not_queued)
            while True:
                batch = list(itertools.islice(known, 65536))
                if not batch:
                    break
                self.seen.add_many(batch)
            self.seen.sync()
            self._queued_total = len(self.seen)   # what the runs before queued counts towards max_urls
        self.session = SessionDB(journal, software=f"warchive {__version__}")
        self.session.start(config=cfg.to_json(), seeds=cfg.seeds, resumed=self.resume or None,
                           retry_failed=self.retry_failed or None)
        self.log = CrawlLog(os.path.join(self.session_dir, "crawl.log"))
        self.robots = RobotsCache(cfg.user_agent, policy=cfg.robots)
        if self.resume and self._session_snapshot is not None:
            # robots.txt answers archived by the killed run: resuming fetches none of them again
            restore_robots(self.robots, self._session_snapshot, self.archive_dir)
        self.digests: Optional[DigestIndex] = None
        if cfg.dedup != "write":
            self.digests = DigestIndex(os.path.join(self.collection, "dedup"))
            if self.resume and self._session_snapshot is not None:
                # the originals the killed run wrote since its digest index was last flushed
                recover_digests(self.digests, self._session_snapshot, self.archive_dir, self.recovered)
                self.digests.flush()
        self.dedup = Deduplicator(self.digests, policy=cfg.dedup, min_size=cfg.dedup_min_size)
        info = {"operator": cfg.from_ or "", "robots": cfg.robots, "http-header-user-agent": cfg.user_agent,
                "http-header-from": cfg.from_ or "", "isPartOf": os.path.basename(self.collection),
                "dedup": cfg.dedup, "scope": json.dumps(self.scope.describe(), sort_keys=True, default=str),
                "description": self._description()}
        self.writer = WarcWriter(self.archive_dir, cfg.prefix, compression=cfg.compression, digest=cfg.digest,
                                 max_size=cfg.warc_max_size, on_record=self._on_record, fsync=cfg.fsync,
                                 warcinfo={k: v for k, v in info.items() if v})
        resolver = self._resolver
        if resolver is None:
            resolver = StaticResolver(cfg.resolve, fallback=SystemResolver()) if cfg.resolve else SystemResolver()
        self.fetcher = Fetcher(resolver=resolver, user_agent=cfg.user_agent, from_=cfg.from_,
                               connect_timeout=cfg.connect_timeout, read_timeout=cfg.read_timeout,
                               total_timeout=cfg.total_timeout, max_size=cfg.max_size, keep_alive=cfg.keep_alive,
                               port_map={int(k): int(v) for k, v in cfg.port_map.items()},
                               allow_addresses=cfg.allow_addresses)
        if not self.resume:
            for s in cfg.seeds:
                self._offer(s, "", None, seed=True)
        if self.retry_failed:
            self._requeue_failed(journal)

    def _description(self) -> str:
        """The warcinfo ``description`` of the session's WARC files (``recover_warcs`` knows them by it)."""
        return f"warchive crawl session {os.path.basename(self.session_dir)}"

    async def _resume_wait(self, lease: Lease) -> Optional[str]:
        """Wait out what is left of the host's delay after its last fetch before the kill; the
        crawl-log annotation when there was something to wait."""
        last = self._resume_hosts.pop(lease.host, None)
        if last is None:
            return None
        end, duration = last
        p = self.config.politeness()
        need = min(max(p.delay_factor * duration, p.min_delay), p.max_delay)
        cd = self.robots.crawl_delay(lease.url)
        if cd is not None:
            need = max(need, min(cd, p.crawl_delay_cap))
        wait = end + need - time.time()
        if wait <= 0:
            return None
        await asyncio.sleep(wait)
        return f"resume-wait:{need:.3f}s:{wait:.3f}s"

    def _requeue_failed(self, journal: str) -> None:
        s = self._session_snapshot or read_session(journal, skip_errors=True)
        for r in s.failed():
            fields = [f for f in r.fields() if f.get("kind") == "failed"]
            last = fields[-1] if fields else {}
            self._finished_before.discard(r.url)
            self.seen.add(r.url)
            if self.frontier.add(r.url, hops=str(last.get("hops") or ""), via=last.get("via")):
                self.stats.queued += 1

    # ---------------------------------------------------------------------------- index as it goes

    def _on_record(self, w: Written) -> None:
        self.stats.records += 1
        self.stats.bytes += w.length
        if self.index.add(w) is not None and self.digests is not None:
            self.digests.flush()   # a WARC file was closed: its digests go to disk with its index

    def _count_segment(self, path: str) -> None:
        self.stats.segments += 1

    def flush_index(self, why: str = "periodic") -> Optional[str]:
        """Write the buffered index lines as a new segment of the collection (None when there are none)."""
        return self.index.flush(why)

    # ---------------------------------------------------------------------------- adding URLs

    def _offer(self, url: str, hops: str, via: Optional[str], seed: bool = False) -> bool:
        d = self.scope.decide(url, hops)
        if not d.accepted:
            if seed:
                self.log.write(CrawlLogEntry(status=SCOPE_SKIP, uri=url, annotations=[str(d)]))
                self.session.skipped(url, "scope", detail=str(d))
            return False
        if self.config.max_urls is not None and self._queued_total >= self.config.max_urls:
            return False
        try:
            new = self.seen.add(url)
        except ArchiveError:
            return False
        if not new:
            return False
        if self.frontier.add(url, hops=hops, via=via):
            self._queued_total += 1
            self.stats.queued += 1
            return True
        return False

    # ---------------------------------------------------------------------------- one URL

    async def _worker(self, n: int) -> None:
        while not self._stopping:
            self._waiting.add(n)
            try:
                lease = await self.frontier.get()
            finally:
                self._waiting.discard(n)
            if lease is None:
                return
            if self._stopping:
                self.frontier.skip(lease)
                return
            try:
                await self._process(lease, n)
            except asyncio.CancelledError:
                raise
            except Exception as e:   # a bug must not stall the crawl: log it and give the lease back
                self.stats.failed += 1
                self.log.write(CrawlLogEntry(status=-5, uri=lease.url, hop_path=lease.hops, via=lease.via,
                                             thread=n, annotations=[f"err=crawler:{type(e).__name__}"]))
                self.session.failed(lease.url, f"crawler error: {type(e).__name__}: {e}",
                                    hops=lease.hops, via=lease.via)
                try:
                    self.frontier.done(lease, status=-5, retry=False)
                except ValueError:
                    pass

    async def _process(self, lease: Lease, n: int) -> None:
        url = lease.url
        if url in self._finished_before:
            # finished before a kill, its "F" line lost: the session says so
            self.stats.skipped += 1
            self.frontier.skip(lease)
            return
        waited = await self._resume_wait(lease) if self._resume_hosts else None
        if self.robots.needs_fetch(url):
            t0 = time.monotonic()
            await self.robots.afetch_entry(url, self._robots_fetcher(lease, n))
            # the URL waits for its host's next turn, like any second fetch
            self.frontier.done(lease, status=200, duration=time.monotonic() - t0,
                               crawl_delay=self.robots.crawl_delay(url), retry=True)
            self._prereq.add(url)      # that "retry" is no failed attempt
            return
        if url in self._prereq:
            self._prereq.discard(url)
            lease.attempts = max(0, lease.attempts - 1)
        decision = self.robots.cached_decision(url)
        entry = self.robots.entry(url)
        if (decision is not None and not decision.allowed and entry is not None
                and entry.status == UNREACHABLE and not entry.stale):
            # robots.txt could not be had (5xx, network): nothing may be fetched now; Heritrix's -61,
            # a failure that --retry-failed takes up again
            self.stats.failed += 1
            self.log.write(CrawlLogEntry(status=PREREQ_FAILED, uri=url, hop_path=lease.hops, via=lease.via,
                                         thread=n))
            self.session.failed(url, f"robots.txt unreachable: {entry.error or entry.http_status}",
                                status=PREREQ_FAILED, hops=lease.hops, via=lease.via)
            self.frontier.skip(lease)
            return
        if decision is not None and not decision.allowed:
            self.stats.skipped += 1
            self.log.write(CrawlLogEntry(status=ROBOTS_SKIP, uri=url, hop_path=lease.hops, via=lease.via,
                                         thread=n))
            self.session.skipped(url, "robots", detail=decision.reason, hops=lease.hops, via=lease.via)
            self.frontier.skip(lease)
            return
        prev = self._previous.get(url)
        cond = conditional_headers(prev)
        self.session.fetching(url)   # before the request: a kill from here on leaves it "in flight"
        r = await self.fetcher.fetch(url, headers=cond)
        if r.status == ADDRESS_REFUSED:
            self._refused(r, lease, n)
            self.frontier.skip(lease)
            return
        self._dns(r, url, n)
        crawl_delay = self.robots.crawl_delay(url)
        if r.status <= 0:
            await self._failed(lease, r, n, crawl_delay)
            return
        resp_w, dd = self._archive(r, url, prev)
        if self.shots is not None:
            self.shots.keep(url, r)
        ann = [lease.ledger.annotation()] + ([waited] if waited else [])
        if url in self._interrupted:
            self._interrupted.discard(url)
            ann.append("resume-refetch")
        if lease.attempts:
            ann.insert(0, f"{lease.attempts + 1}t")
        if dd is not None and dd.annotation:
            ann.append(dd.annotation)
        if r.status in (429, 503):
            outcome = self.frontier.done(lease, status=r.status, duration=r.duration,
                                         retry_after=r.header("retry-after"), crawl_delay=crawl_delay)
            retry = outcome == "retry"
            self.stats.failed += 1
            self.session.fetched(url, r.status, content_type=r.content_type, size=len(r.body),
                                 duration=round(r.duration, 6), digest=resp_w.payload_digest if resp_w else None,
                                 hops=lease.hops, via=lease.via)
            self.session.failed(url, f"HTTP {r.status}" + (" (retrying)" if retry else ""), status=r.status,
                                attempt=lease.attempts + 1, hops=lease.hops, via=lease.via, retry=retry or None)
            ra = r.header("retry-after")
            if ra is not None and ra.strip().isdigit():
                ann.append(f"retry-after:{int(ra.strip())}s")
            self._log_fetch(r, lease, n, ann, resp_w)
            return
        links = self._outlinks(r, lease)
        self.stats.fetched += 1
        self.stats.count_status(r.status)
        self.session.fetched(url, r.status, location=r.location, content_type=r.content_type,
                             size=len(r.body), etag=r.header("etag"), last_modified=r.header("last-modified"),
                             duration=round(r.duration, 6), digest=resp_w.payload_digest if resp_w else None,
                             headers=dict(cond) if cond else None, hops=lease.hops, via=lease.via,
                             links=len(links) or None)
        self._log_fetch(r, lease, n, ann, resp_w)
        revisit_after = None
        cfg = self.config
        if cfg.revisit_after is not None and self._revisit_count.get(url, 0) < cfg.revisits:
            self._revisit_count[url] = self._revisit_count.get(url, 0) + 1
            revisit_after = cfg.revisit_after
            if resp_w is not None and 200 <= r.status < 300:
                self._previous[url] = PreviousCapture(url, date=resp_w.date, record_id=resp_w.record_id,
                                                      digest=resp_w.payload_digest, etag=r.header("etag"),
                                                      last_modified=r.header("last-modified"))
        self.frontier.done(lease, status=r.status, duration=r.duration, crawl_delay=crawl_delay,
                           revisit_after=revisit_after)
        if self.page_hooks and resp_w is not None and r.status == 200 and "html" in r.mime:
            await self._run_page_hooks(url, r, resp_w)

    # ---------------------------------------------------------------------------- screenshots

    async def _start_screenshots(self) -> None:
        """--screenshots: one browser for the crawl, and a page hook rendering each HTML page from the
        bytes just fetched (``crawl_screenshots``)."""
        self.shots = await CrawlScreenshots.start(self.config)
        self.page_hooks.append(self._screenshot)

    async def _screenshot(self, crawler: "Crawler", url: str, r: FetchResult, page: Written) -> None:
        assert self.shots is not None
        w = await self.shots.shoot(self.writer, url, r, page)
        self.stats.screenshots += 1
        self.session.record(url, w.filename, w.offset, w.length, type=w.type, record_id=w.record_id,
                            target=w.target_uri)

    async def _run_page_hooks(self, url: str, r: FetchResult, resp_w: Written) -> None:
        """Each hook gets (crawler, url, fetch result, the page's response or revisit Written) after
        the page is archived and its host released; what a hook writes goes through ``self.writer``."""
        for hook in self.page_hooks:
            try:
                await hook(self, url, r, resp_w)
            except asyncio.CancelledError:
                raise
            except Exception as e:   # a hook (screenshots) never stops the crawl
                self.session.append({"kind": "page-hook-failed", "url": url, "t": _now_iso(),
                                     "hook": getattr(hook, "__name__", repr(hook)),
                                     "reason": f"{type(e).__name__}: {e}"})

    async def _failed(self, lease: Lease, r: FetchResult, n: int, crawl_delay: Optional[float]) -> None:
        retry = r.status in RETRY_STATUSES and lease.attempts < self.config.max_retries
        self.frontier.done(lease, status=r.status, duration=r.duration, crawl_delay=crawl_delay, retry=retry)
        self.stats.failed += 1
        self.stats.count_status(r.status)
        self.session.failed(lease.url, r.error or f"status {r.status}", status=r.status,
                            attempt=lease.attempts + 1, hops=lease.hops, via=lease.via, retry=retry or None)
        self._log_fetch(r, lease, n, [lease.ledger.annotation()], None)

    def _refused(self, r: FetchResult, lease: Lease, n: int) -> None:
        """A fetch the fetcher would not connect for (the address is not public): recorded as a
        robots.txt refusal is, skipped, with the address and its kind; nothing was sent. Its lookup
        gets no ``dns:`` record: the archive would tell whoever reads it an address inside."""
        self.stats.skipped += 1
        self.stats.refused += 1
        kind = r.refused.kind if r.refused is not None else "non-global"
        self.log.write(CrawlLogEntry(status=ADDRESS_REFUSED, uri=r.url, hop_path=lease.hops, via=lease.via,
                                     thread=n, annotations=[f"address:{kind}"]))
        self.session.skipped(r.url, "address", detail=r.error, status=ADDRESS_REFUSED, hops=lease.hops,
                             via=lease.via)

    def _log_fetch(self, r: FetchResult, lease: Lease, n: int, ann: List[str], resp_w: Optional[Written]) -> None:
        digest: Optional[str] = "auto"
        if resp_w is not None and self.config.digest == "sha1":
            digest = resp_w.payload_digest
        self.log.write(CrawlLogEntry.from_fetch(r, hop_path=lease.hops, via=lease.via, thread=n,
                                                digest=digest, annotations=ann))

    def _dns(self, r: FetchResult, url: str, n: int) -> None:
        """The ``dns:`` record and crawl-log line, on the fetch that looked the host up."""
        if r.dns is None:
            return
        block = r.dns.record_block()
        w = self.writer.write_response(r.dns.uri, block, content_type="text/dns", date=_date(r.dns.started))
        self.session.record(r.dns.uri, w.filename, w.offset, w.length, type=w.type, record_id=w.record_id)
        self.session.fetched(r.dns.uri, 1, content_type="text/dns", size=len(block),
                             duration=round(r.dns.duration, 6), digest=w.payload_digest, via=url)
        self.log.write(CrawlLogEntry.from_dns(r.dns, via=url, thread=n))

    def _archive(self, r: FetchResult, url: str,
                 prev: Optional[PreviousCapture]) -> Tuple[Optional[Written], Decision]:
        """Write the exchange (or a revisit, or nothing) and its session entries; (the response or
        revisit ``Written`` or None, the dedup ``Decision``)."""
        out = self.writer
        when = _date(r.started)
        resp_id, req_id = new_record_id(), new_record_id()
        extra = [("WARC-Truncated", r.truncated)] if r.truncated else None
        rec = out.builder.response(url, r.response, date=when, ip=r.ip, record_id=resp_id,
                                   concurrent_to=req_id, extra=extra)
        digest = rec.get("WARC-Payload-Digest")
        d = self.dedup.not_modified(url, r.status, prev) if prev is not None else None
        if d is None:
            try:
                size = len(r.transfer_decoded())
            except Exception:   # broken chunking: the body as received
                size = len(r.body)
            d = self.dedup.decide(url, digest, size, mime=r.mime, status=r.status)
        resp_w = None
        if d.action == "write":
            resp_w = out.write(rec)
            self.dedup.written(url, digest, resp_w.date or "", resp_w.record_id, d.size, status=r.status)
        elif d.action == "revisit":
            resp_w = out.write_revisit(url, r.response, date=when, ip=r.ip, record_id=resp_id,
                                       concurrent_to=req_id, **d.revisit_kwargs())
            self.stats.revisits += 1
        if resp_w is None:
            self.stats.skipped += 1
            fields = d.skipped_fields()
            self.session.skipped(fields.pop("url"), fields.pop("reason"), **fields)
            return None, d
        req_w = out.write_request(url, r.request, date=when, ip=r.ip, record_id=req_id, concurrent_to=resp_id)
        for w in (resp_w, req_w):
            self.session.record(url, w.filename, w.offset, w.length, type=w.type, record_id=w.record_id)
        return resp_w, d

    def _outlinks(self, r: FetchResult, lease: Lease) -> List[Tuple[str, str]]:
        """Queue what the response points to; returns (url, hop) of every link found."""
        found: List[Tuple[str, str]] = []
        loc = r.location
        if loc:
            found.append((loc, "R"))
        elif 200 <= r.status < 300 and ("html" in r.mime or r.mime == "text/css"):
            try:
                payload = r.payload()
            except Exception:
                payload = r.body
            directives = page_directives(self.config.robots, r.headers, payload, self.config.user_agent,
                                         r.content_type or "")
            if not directives.nofollow:
                for link in extract_links(r.url, r.content_type, payload):
                    found.append((link.url, link.hop))
        if found:
            self.session.outlinks(lease.url, [u for u, _ in found], hops="".join(h for _, h in found))
            for u, h in found:
                self._offer(u, lease.hops + h, lease.url)
        return found

    def _robots_fetcher(self, lease: Lease, n: int) -> AsyncFetch:
        async def fetch(target: str) -> Tuple[int, List[Tuple[str, str]], bytes, str]:
            self.session.fetching(target)
            r = await self.fetcher.fetch(target)
            hops = lease.hops + "P"
            entry = Lease(target, lease.host, hops, lease.url, 0, 0, lease.ledger, lease.issued)
            if r.status == ADDRESS_REFUSED:
                self._refused(r, entry, n)
                # Nothing at that address is fetched, so its robots.txt counts as absent ("unavailable",
                # RFC 9309 2.3.1.3): each URL of the host is then refused and recorded as itself, not
                # failed as robots.txt's prerequisite (-61). A robots.txt that redirects to a refused
                # address is absent the same way.
                return 404, [], b"", target
            self._dns(r, target, n)
            if r.status <= 0:
                self.stats.failed += 1
                self.session.failed(target, r.error or f"status {r.status}", status=r.status, hops=hops,
                                    via=lease.url)
                self._log_fetch(r, entry, n, [], None)
                return 0, [], b"", target
            resp_w, dd = self._archive(r, target, None)
            self.stats.fetched += 1
            self.stats.count_status(r.status)
            self.session.fetched(target, r.status, location=r.location, content_type=r.content_type,
                                 size=len(r.body), duration=round(r.duration, 6),
                                 digest=resp_w.payload_digest if resp_w else None, hops=hops, via=lease.url)
            ann = [lease.ledger.annotation()] + ([dd.annotation] if dd is not None and dd.annotation else [])
            self._log_fetch(r, entry, n, ann, resp_w)
            try:
                return r.robots_view()
            except Exception:   # a body that will not decode: RobotsTxt.parse never raises on content
                return r.status, r.headers, r.body, target
        return fetch

    # ---------------------------------------------------------------------------- running

    def stop(self) -> None:
        """Stop leasing new URLs; the fetches in flight finish and everything is closed cleanly
        (the frontier keeps what is queued: ``--resume`` continues)."""
        self._stopping = True
        for n in list(self._waiting):   # workers waiting for a host's turn hold no lease
            self._tasks[n].cancel()

    async def _ticker(self) -> None:
        last_index = time.monotonic()
        last_sync = time.monotonic()
        while True:
            await asyncio.sleep(0.25)
            now = time.monotonic()
            if now - last_sync >= 2.0:
                self.frontier.sync()        # before the seen set: it must never remember more
                self.seen.sync()
                self.log.flush()
                last_sync = now
            if now - last_index >= self.config.index_every:
                self.flush_index()
                if self.digests is not None:
                    self.digests.flush()
                last_index = now
            if self.progress is not None:
                self.progress(self)

    async def run(self) -> CrawlStats:
        self._open()
        if self.config.screenshots:
            try:
                await self._start_screenshots()
            except BaseException:
                await self._close()
                raise
        ticker = asyncio.ensure_future(self._ticker())
        try:
            self._tasks = [asyncio.ensure_future(self._worker(i)) for i in range(max(1, self.config.concurrency))]
            for res in await asyncio.gather(*self._tasks, return_exceptions=True):
                if isinstance(res, BaseException) and not isinstance(res, asyncio.CancelledError):
                    raise res
        finally:
            ticker.cancel()
            try:
                await ticker
            except asyncio.CancelledError:
                pass
            await self._close()
        return self.stats

    async def _close(self) -> None:
        if self.shots is not None:
            await self.shots.close()
            self.shots = None
        await self.fetcher.close()
        self.writer.close()
        self.flush_index("end of crawl")
        self.index.merge()
        if self.digests is not None:
            self.digests.flush()
            self.digests.close()
        self.frontier.checkpoint()
        self.frontier.close()
        self.seen.sync()
        self.seen.close()
        self.session.close()
        self.log.close()
        if self.progress is not None:
            self.progress(self)

    # ---------------------------------------------------------------------------- reporting

    @property
    def done(self) -> bool:
        return len(self.frontier) == 0 and self.frontier.inflight == 0

    def summary(self) -> str:
        s = self.stats
        took = max(1e-9, time.time() - s.started)
        codes = " ".join(f"{k}:{v}" for k, v in sorted(s.statuses.items()))
        state = "complete" if self.done else f"stopped with {len(self.frontier)} URLs queued (--resume continues)"
        refused = f" ({s.refused} refused by address)" if s.refused else ""
        return (f"crawl {state}: {s.fetched} fetched, {s.failed} failed, {s.skipped} skipped{refused}, "
                f"{s.revisits} revisits{f', {s.screenshots} screenshots' if s.screenshots else ''}; {s.records} records, {s.bytes:,} bytes in {self.archive_dir}; "
                f"{s.segments} index segments; {took:.1f} s ({s.fetched / took:.1f} fetches/s)\n"
                f"statuses: {codes or '-'}\nsession: {self.session_dir}")
