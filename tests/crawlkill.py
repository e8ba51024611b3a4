"""Kill a crawl at random moments and resume it: the site, the child process and the bookkeeping of
tests/unit/test_resume_once.py.

The crawl runs in a child process forked from a ``forkserver`` that has imported warchive
already (a fresh ``python -m warchive`` costs about a second of imports; fifty kills and their
resumes would spend most of a minute importing). The child runs ``Crawler(...).run()``,
exactly what ``warchive crawl`` runs, and is killed with SIGKILL by the parent, which serves
the site from a thread and keeps the server's own log of every request (``testsite.Site``).

The site (``kill_site``) is small and densely linked, so that most pages are found through
many referrers (the way a URL gets queued twice), two hosts so that fetches overlap, a
robots.txt that forbids ``/private/`` (never to be requested), and ``/same/J`` pages whose
bodies are one payload (dedup: written in full once, every other one a revisit).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import random
from typing import Dict, List, Optional, Set, Tuple

from testsite import DOMAIN, Site, html, response_bytes

HOSTS = [f"k1.{DOMAIN}", f"k2.{DOMAIN}"]
PAGES = 14            # /p/0 .. /p/13 on each host
SAME = 4              # /same/0 .. /same/3 on each host: one payload
LINKS = 5             # random links per page (besides the chain link to the next page)
SAME_BODY = html("same", "<p>" + "the same payload on every /same/ page " * 20 + "</p>")
ROBOTS = b"User-agent: *\nDisallow: /private/\n"


def kill_site(seed: int = 13) -> Tuple[Site, Set[Tuple[str, str]]]:
    """The site, and every (host, path) a complete crawl from the hosts' ``/`` must fetch (read off
    the site's definition: ``/`` links to ``/p/0``, each ``/p/i`` to ``/p/i+1``, so every page is
    reachable; ``/private/`` is forbidden by robots.txt)."""
    rng = random.Random(seed)
    site = Site()
    ct = [("Content-Type", "text/html")]
    expected: Set[Tuple[str, str]] = set()
    for hi, host in enumerate(HOSTS):
        other = HOSTS[(hi + 1) % len(HOSTS)]
        site.add(host, "/robots.txt", response_bytes(200, ROBOTS, [("Content-Type", "text/plain")]))
        site.add(host, "/", response_bytes(200, html(host, '<a href="/p/0">start</a>'), ct))
        expected |= {(host, "/robots.txt"), (host, "/")}
        targets = [f"/p/{i}" for i in range(PAGES)] + [f"/same/{j}" for j in range(SAME)]
        for i in range(PAGES):
            links = [f"/p/{i + 1}"] if i + 1 < PAGES else []
            links += rng.sample(targets, LINKS)
            hrefs = "".join(f'<a href="{u}">{u}</a>' for u in links)
            hrefs += f'<a href="/private/{i}">no</a><a href="http://{other}/p/{rng.randrange(PAGES)}">x</a>'
            site.add(host, f"/p/{i}", response_bytes(200, html(f"{host} {i}", hrefs), ct))
            expected.add((host, f"/p/{i}"))
        for j in range(SAME):
            site.add(host, f"/same/{j}", response_bytes(200, SAME_BODY, ct))
            expected.add((host, f"/same/{j}"))
            site.add(host, f"/private/{j}", response_bytes(200, html("private", "<p>no</p>"), ct))
    return site, expected


def seeds() -> List[str]:
    return [f"http://{h}/" for h in HOSTS]


# ------------------------------------------------------------------------------------------ the child

def run_crawl(config: object, collection: str, session_dir: Optional[str], resume: bool) -> None:
    """The child's work: one run of the crawl (new, or resumed), to its end or its SIGKILL."""
    from warchive.capture.crawler import Crawler

    c = Crawler(None if resume else config, collection, session_dir=session_dir, resume=resume)  # type: ignore[arg-type]
    asyncio.run(c.run())


_CTX: Optional[multiprocessing.context.BaseContext] = None


def context() -> multiprocessing.context.BaseContext:
    """A forkserver context whose server has imported the crawler (started once per test session)."""
    global _CTX
    if _CTX is None:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["warchive.capture.crawler", "crawlkill"])
        _CTX = ctx
    return _CTX


def start(config: object, collection: str, session_dir: Optional[str], resume: bool) -> multiprocessing.Process:
    p = context().Process(target=run_crawl, args=(config, collection, session_dir, resume), daemon=True)
    p.start()
    return p


def counts(site: Site) -> Dict[Tuple[str, str], int]:
    """Requests per (host, path), from the server's log."""
    out: Dict[Tuple[str, str], int] = {}
    for h in site.hits():
        out[(h.host, h.target)] = out.get((h.host, h.target), 0) + 1
    return out
