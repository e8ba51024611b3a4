"""robots, scope, seen set and frontier together, as the crawler will drive them (fake site, fake clock).

The loop below is the shape the crawler takes: scope -> seen -> frontier.add; lease -> robots -> fetch ->
done(crawl_delay=...) -> outlinks. What is asserted comes from the site's definition (what robots.txt
forbids, the Crawl-delay it asks for, where the trap is), not from a previous run.
"""

from __future__ import annotations

from warchive.capture.frontier import Frontier
from warchive.capture.politeness import Politeness
from warchive.capture.robots_cache import RobotsCache
from warchive.capture.scope import Scope
from warchive.capture.seen import ExactSeen

ROBOTS = {
    "http://a.test/robots.txt": (200, {}, b"User-agent: *\nDisallow: /private\nCrawl-delay: 5\n"),
    "http://b.test/robots.txt": (404, {}, b""),
    "http://c.test/robots.txt": (503, {}, b""),
}


def page(url):
    """Links of each page: a calendar trap on a.test, private pages, embeds, another host."""
    path = url.split("/", 3)[3] if url.count("/") >= 3 else ""
    if path.startswith("cal/"):
        n = int(path[4:])
        return [f"http://a.test/cal/{n + 1}"], []
    if url == "http://a.test/":
        return ["http://a.test/cal/0", "http://a.test/private/x", "http://b.test/", "http://c.test/",
                "http://a.test/about"], ["http://cdn.test/logo.png"]
    if url == "http://b.test/":
        return ["http://b.test/1", "http://a.test/about", "http://elsewhere.test/"], []
    return [], []


def test_a_small_polite_crawl(tmp_path):
    class Clock:
        t = 0.0

        def __call__(self):
            return self.t

    clock = Clock()
    robots_fetches = []

    def fetch(url):
        robots_fetches.append(url)
        status, headers, body = ROBOTS.get(url, (404, {}, b""))
        return status, headers, body, url

    robots = RobotsCache("TestBot/1.0", clock=clock)
    scope = Scope(["http://a.test/", "http://b.test/", "http://c.test/"], max_hops=4)
    seen = ExactSeen(tmp_path / "seen")
    frontier = Frontier.open(tmp_path / "frontier", Politeness(min_delay=1.0, max_delay=2.0), clock=clock)
    skipped = {}

    def offer(urls, hops, via):
        for u in urls:
            d = scope.decide(u, hops)
            if not d.accepted:
                skipped[u] = d.reason
            elif seen.add(u):
                frontier.add(u, hops=hops, via=via)

    offer(["http://a.test/", "http://b.test/", "http://c.test/"], "", None)
    fetched = []
    while True:
        lease = frontier.next()
        if lease is None:
            t = frontier.next_time()
            if t is None:
                break
            clock.t = t
            continue
        d = robots.decide(lease.url, fetch)
        if not d.allowed:
            skipped[lease.url] = "robots"
            frontier.skip(lease)      # nothing was sent to the host: its delay is unchanged
            continue
        fetched.append((lease.url, clock.t))
        clock.t += 0.1
        frontier.done(lease, duration=0.1, crawl_delay=robots.crawl_delay(lease.url))
        links, embeds = page(lease.url)
        offer(links, lease.hops + "L", lease.url)
        offer(embeds, lease.hops + "E", lease.url)
        frontier.sync()
        seen.sync()

    urls = [u for u, _ in fetched]
    assert len(urls) == len(set(urls))                               # nothing fetched twice
    assert "http://a.test/private/x" not in urls and skipped["http://a.test/private/x"] == "robots"
    assert not any(u.startswith("http://c.test/") for u in urls)     # 503 robots.txt: complete disallow
    assert "http://b.test/1" in urls                                 # 404 robots.txt: allowed
    assert "http://cdn.test/logo.png" in urls                        # an embed one hop off scope
    assert skipped["http://elsewhere.test/"] == "out-of-scope"
    cal = sorted(int(u.rsplit("/", 1)[1]) for u in urls if "/cal/" in u)
    assert cal == [0, 1, 2, 3]                                       # cal/N is N+1 hops from the seed: 4 at most
    assert skipped["http://a.test/cal/4"] == "too-many-hops"
    times = [t for u, t in fetched if u.startswith("http://a.test/")]
    assert all(b - a >= 5.0 for a, b in zip(times, times[1:]))      # Crawl-delay: 5 honoured
    times_b = [t for u, t in fetched if u.startswith("http://b.test/")]
    assert all(b - a >= 1.0 for a, b in zip(times_b, times_b[1:]))
    assert robots_fetches.count("http://a.test/robots.txt") == 1      # cached
    frontier.close()
    seen.close()
