"""The frontier: Heritrix politeness, Retry-After, token bucket, priorities, hops, revisits,
the politeness ledger, and checkpoint/restore (including after SIGKILL). No test sleeps: the clock is injected."""

from __future__ import annotations

import asyncio
import email.utils
import os
import signal
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given, settings, strategies as st

from warchive.capture.checkpoint import FrontierFormatError
from warchive.capture.frontier import Frontier
from warchive.capture.politeness import Politeness, host_key, parse_retry_after


class Clock:
    def __init__(self, t=1000.0):
        self.t = t

    def __call__(self):
        return self.t


def make(pol=None, **kw):
    clock = Clock()
    return Frontier(pol or Politeness(), clock=clock, wallclock=lambda: 1_700_000_000.0, **kw), clock


# ---- politeness


def test_one_queue_per_host_and_one_fetch_at_a_time():
    f, c = make()
    for i in range(3):
        f.add(f"http://a.test/{i}")
    f.add("http://www.b.test/x")
    f.add("https://a.test/other")   # same SURT authority as http://a.test
    got = [f.next(), f.next(), f.next()]
    assert [g.url if g else None for g in got] == ["http://a.test/0", "http://www.b.test/x", None]
    assert host_key("https://www.a.test:443/x") == host_key("http://a.test/y") == "test,a)"


def test_delay_is_delay_factor_times_duration_clamped():
    pol = Politeness(delay_factor=5.0, min_delay=3.0, max_delay=30.0)
    cases = [(0.1, 3.0, "min-delay"), (2.0, 10.0, "delay-factor"), (20.0, 30.0, "max-delay")]
    for duration, want, why in cases:
        f, c = make(pol)
        f.add("http://a.test/1")
        f.add("http://a.test/2")
        lease = f.next()
        c.t += duration
        f.done(lease)
        c.t += want - 0.001
        assert f.next() is None, duration
        assert f.next_time() == pytest.approx(c.t + 0.001)
        c.t += 0.001
        nxt = f.next()
        assert nxt is not None and nxt.ledger.reason == why and nxt.ledger.required == pytest.approx(want)
        assert nxt.ledger.waited == pytest.approx(want)


def test_explicit_duration_is_used():
    f, c = make(Politeness(delay_factor=2.0, min_delay=0.0, max_delay=100.0))
    f.add("http://a.test/1")
    f.add("http://a.test/2")
    lease = f.next()
    f.done(lease, duration=4.0)     # the fetcher measured it; the clock did not move
    c.t += 7.9
    assert f.next() is None
    c.t += 0.1
    assert f.next().ledger.required == pytest.approx(8.0)


def test_crawl_delay_raises_the_delay_up_to_the_cap():
    pol = Politeness(min_delay=1.0, max_delay=5.0, crawl_delay_cap=20.0)
    f, c = make(pol)
    f.set_crawl_delay("http://a.test/", 10.0)
    for i in range(3):
        f.add(f"http://a.test/{i}")
    lease = f.next()
    f.done(lease)
    c.t += 9.9
    assert f.next() is None
    c.t += 0.1
    lease = f.next()
    assert lease.ledger.reason == "crawl-delay" and lease.ledger.required == 10.0
    f.done(lease, crawl_delay=600.0)   # above the cap: the cap wins
    c.t += 19.9
    assert f.next() is None
    c.t += 0.1
    assert f.next().ledger.reason == "crawl-delay-cap"


def test_retry_after_seconds_and_http_date():
    assert parse_retry_after("120", 0) == 120.0
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 90, usegmt=True)
    assert parse_retry_after(date, now) == pytest.approx(90.0)
    assert parse_retry_after(email.utils.formatdate(now - 90, usegmt=True), now) == 0.0
    assert parse_retry_after("soon", now) is None
    assert parse_retry_after(None, now) is None


def test_429_with_retry_after_backs_off_and_retries_the_url():
    f, c = make(Politeness(min_delay=1.0, max_delay=5.0))
    f.add("http://a.test/x")
    f.add("http://a.test/y")
    lease = f.next()
    assert f.done(lease, status=429, retry_after="120") == "retry"
    c.t += 119
    assert f.next() is None
    c.t += 1
    again = f.next()
    assert again.url == "http://a.test/x" and again.attempts == 1     # retried first
    assert again.ledger.reason == "retry-after" and again.ledger.required == 120
    f.done(again)
    c.t += 1
    assert f.next().url == "http://a.test/y"


def test_503_with_http_date_and_retry_after_cap():
    f, c = make(Politeness(min_delay=1.0, max_retry_after=600.0))
    f.add("http://a.test/x")
    lease = f.next()
    f.done(lease, status=503, retry_after=email.utils.formatdate(1_700_000_000.0 + 30, usegmt=True))
    c.t += 29.9
    assert f.next() is None
    c.t += 0.1
    lease = f.next()
    f.done(lease, status=503, retry_after="999999")
    assert f.next_time() == pytest.approx(c.t + 600.0)


def test_backoff_without_retry_after_doubles_and_gives_up():
    f, c = make(Politeness(min_delay=1.0, backoff=10.0, max_backoff=25.0, max_retries=3))
    f.add("http://a.test/x")
    waits = []
    outcomes = []
    for _ in range(4):
        c.t = f.next_time()
        lease = f.next()
        outcomes.append(f.done(lease, status=429))
        waits.append(f.next_time() - c.t if f.next_time() else None)
    assert outcomes == ["retry", "retry", "retry", "done"]
    assert waits[:3] == [10.0, 20.0, 25.0]
    assert len(f) == 0


def test_network_failure_does_not_back_off_but_can_be_retried():
    f, c = make(Politeness(min_delay=2.0))
    f.add("http://a.test/x")
    lease = f.next()
    assert f.done(lease, status=0, retry=True) == "retry"
    c.t += 2
    assert f.next().attempts == 1


def test_token_bucket_limits_the_rate():
    pol = Politeness(delay_factor=0, min_delay=0, max_delay=0, rate=0.5, burst=2)
    f, c = make(pol)
    for i in range(6):
        f.add(f"http://a.test/{i}")
    times = []
    while len(times) < 6:
        lease = f.next()
        if lease is None:
            c.t = f.next_time()
            continue
        times.append(c.t)
        f.done(lease, duration=0)
    # a burst of 2 at once, then one every 2 seconds
    assert [t - 1000.0 for t in times] == pytest.approx([0, 0, 2, 4, 6, 8])


def test_max_per_host_allows_parallel_fetches():
    f, c = make(Politeness(max_per_host=2))
    for i in range(3):
        f.add(f"http://a.test/{i}")
    assert f.next() is not None and f.next() is not None and f.next() is None
    assert f.inflight == 2


# ---- priorities, hops, revisits


def test_priorities_within_and_across_hosts():
    f, c = make(Politeness.off())
    f.add("http://a.test/low", priority=5)
    f.add("http://a.test/high", priority=1)
    f.add("http://b.test/mid", priority=3)
    order = []
    while True:
        lease = f.next()
        if lease is None:
            break
        order.append(lease.url)
        f.done(lease, duration=0)
    assert order == ["http://a.test/high", "http://b.test/mid", "http://a.test/low"]


def test_hop_limit():
    f, c = make(max_hops=2)
    assert f.add("http://a.test/1", hops="LL")
    assert not f.add("http://a.test/2", hops="LLL")
    assert f.add_many(["http://a.test/3", "http://a.test/4"], hops="LLE", via="http://a.test/1") == 0
    assert len(f) == 1


def test_outlinks_keep_hops_and_via():
    f, c = make()
    f.add_many(["http://a.test/x", "http://b.test/y"], hops="LE", via="http://seed.test/")
    lease = f.next()
    assert lease.hops == "LE" and lease.via == "http://seed.test/"


def test_revisit_schedule():
    f, c = make(Politeness(min_delay=1.0))
    f.add("http://a.test/page")
    lease = f.next()
    assert f.done(lease, revisit_after=3600) == "revisit"
    assert len(f) == 1
    c.t += 3599
    assert f.next() is None
    assert f.next_time() == pytest.approx(c.t + 1)
    c.t += 1
    assert f.next().url == "http://a.test/page"
    f2, c2 = make()
    f2.add("http://a.test/later", due=c2.t + 50)
    assert f2.next() is None and f2.next_time() == c2.t + 50


def test_urls_lists_leased_queued_and_scheduled():
    """``urls()`` names every URL the frontier holds, whatever state it is in (what a resumed crawl
    puts into its seen set): leased, queued on any host, and scheduled for a revisit."""
    f, c = make(Politeness(min_delay=1.0))
    for u in ("http://a.test/1", "http://a.test/2", "http://b.test/1"):
        f.add(u)
    f.add("http://c.test/later", due=c.t + 50)
    leased = f.next()
    done = f.next()
    f.done(done)
    held = sorted(f.urls())
    assert leased.url in held and done.url not in held
    assert held == sorted({"http://a.test/1", "http://a.test/2", "http://b.test/1", "http://c.test/later"} - {done.url})
    assert len(held) == len(f) + f.inflight


def test_ledger_records_every_lease():
    seen = []
    f, c = make(Politeness(min_delay=2.0), ledger=seen.append)
    f.add("http://a.test/1")
    f.add("http://a.test/2")
    l1 = f.next()
    assert l1.ledger.reason == "first" and l1.ledger.waited is None
    c.t += 1
    f.done(l1, duration=0.1)     # 5 x 0.1 s is below min_delay
    c.t += 5        # other work kept the crawler busy: waited more than required
    l2 = f.next()
    assert (l2.ledger.required, l2.ledger.waited, l2.ledger.reason) == (2.0, 5.0, "min-delay")
    assert seen == [l1.ledger, l2.ledger]
    assert l2.ledger.annotation() == "politeness:min-delay:2.000s:5.000s"


def test_async_get_waits_with_the_injected_sleep():
    async def main():
        f, c = make(Politeness(min_delay=4.0))
        slept = []

        async def sleep(s):
            slept.append(s)
            c.t += s

        f.add("http://a.test/1")
        f.add("http://a.test/2")
        a = await f.get(sleep)
        f.done(a)
        b = await f.get(sleep)
        f.done(b)
        return a.url, b.url, slept, await f.get(sleep)

    a, b, slept, end = asyncio.run(main())
    assert (a, b, slept, end) == ("http://a.test/1", "http://a.test/2", [4.0], None)


# ---- checkpoint and restore


def drain(f, c):
    out = []
    while True:
        lease = f.next()
        if lease is None:
            t = f.next_time()
            if t is None:
                return out
            c.t = t
            continue
        out.append(lease.url)
        f.done(lease, duration=0)


def test_checkpoint_and_reopen(tmp_path):
    f, c = make(Politeness(min_delay=1.0), directory=tmp_path)
    urls = [f"http://h{i % 3}.test/p{i}\tx" if i == 4 else f"http://h{i % 3}.test/p{i}" for i in range(10)]
    for u in urls:
        f.add(u, hops="L", via="http://seed/")
    f.set_crawl_delay("http://h0.test/", 7.0)
    first = f.next()
    f.done(first)
    f.checkpoint()
    leased = f.next()          # leased after the checkpoint, never finished
    f.add("http://h9.test/new", priority=2)
    f.close()
    f2 = Frontier.open(tmp_path, Politeness(min_delay=1.0), clock=Clock())
    assert len(f2) == 10
    rest = drain(f2, f2.clock)
    assert sorted(rest) == sorted([u for u in urls if u != first.url] + ["http://h9.test/new"])
    assert leased.url in rest
    assert f2.host_state("http://h0.test/")["crawl_delay"] == 7.0


def test_restore_after_sigkill(tmp_path):
    """A child queues, leases and finishes URLs, then SIGKILLs itself mid-way: nothing queued is lost."""
    script = textwrap.dedent(f"""
        import os, signal
        from warchive.capture.frontier import Frontier
        from warchive.capture.politeness import Politeness
        f = Frontier.open({str(tmp_path)!r}, Politeness.off(), checkpoint_every=25)
        for i in range(100):
            f.add(f"http://h{{i % 4}}.test/{{i}}")
        done = []
        for _ in range(30):
            lease = f.next()
            if lease is None:
                continue
            f.done(lease, duration=0)
            done.append(lease.url)
        leased = f.next()
        with open({str(tmp_path / "done.txt")!r}, "w") as out:
            out.write("\\n".join(done))
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    r = subprocess.run([sys.executable, "-c", script], timeout=120)
    assert r.returncode == -signal.SIGKILL
    done = set((tmp_path / "done.txt").read_text().split("\n"))
    logs = [p for p in os.listdir(tmp_path) if p.endswith(".log")]
    assert len(logs) == 1 and int(logs[0].split(".")[1]) >= 2        # snapshots were taken while it ran
    assert (tmp_path / logs[0]).stat().st_size > 0                    # and the kill left a log to replay
    f = Frontier.open(tmp_path, Politeness.off(), clock=Clock())
    rest = set(drain(f, f.clock))
    everything = {f"http://h{i % 4}.test/{i}" for i in range(100)}
    assert rest | done == everything
    assert not rest & done
    f.close()


def test_torn_log_line_is_ignored_and_damaged_snapshot_reported(tmp_path):
    f, c = make(directory=tmp_path)
    f.add("http://a.test/1")
    f.close()
    log = [p for p in os.listdir(tmp_path) if p.endswith(".log")][0]
    with open(tmp_path / log, "ab") as fh:
        fh.write(b"A\t0\t0\t-\t-\thttp://a.test/torn")
    f2 = Frontier.open(tmp_path, clock=Clock())
    assert len(f2) == 1
    f2.close()
    snap = tmp_path / "frontier.snap"
    data = bytearray(snap.read_bytes())
    i = data.index(b"http://a.test/1")
    data[i + 7] ^= 0x20
    snap.write_bytes(bytes(data))
    with pytest.raises(FrontierFormatError) as e:
        Frontier.open(tmp_path, clock=Clock())
    assert "CRC" in str(e.value)
    snap.write_bytes(b'{"warchive-frontier": 1, "gen": 1}\nA\t0\t0\t-\t-\thttp://x.test/\t-\n')
    with pytest.raises(FrontierFormatError):
        Frontier.open(tmp_path, clock=Clock())


def test_a_checkpoint_directory_is_only_resumed_with_open(tmp_path):
    from warchive.errors import ArchiveError

    f, c = make(directory=tmp_path)
    f.add("http://a.test/1")
    f.checkpoint()
    f.close()
    with pytest.raises(ArchiveError):
        Frontier(directory=tmp_path)
    assert len(Frontier.open(tmp_path, clock=Clock())) == 1


def test_done_twice_is_an_error():
    f, c = make()
    f.add("http://a.test/1")
    lease = f.next()
    f.done(lease)
    with pytest.raises(ValueError):
        f.done(lease)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from([200, 200, 404, 429, 503, 0]),
                          st.floats(0, 10), st.integers(0, 200)), min_size=1, max_size=60),
       st.integers(0, 2**32 - 1))
def test_politeness_invariants_under_random_crawls(ops, seed):
    """Whatever happens, a host is fetched one at a time, never before last end + the Heritrix delay
    (recomputed here from the rule, not from the frontier), and every URL is leased until it is done."""
    import random

    rnd = random.Random(seed)
    pol = Politeness(delay_factor=5.0, min_delay=3.0, max_delay=30.0, max_retries=2)
    f, c = make(pol)
    hosts = [f"http://h{i}.test" for i in range(4)]
    pending = {}
    for i, (h, *_rest) in enumerate(ops):
        url = f"{hosts[h]}/{i}"
        f.add(url)
        pending[url] = 0
    earliest = {}          # host key -> earliest allowed time, computed by the test
    busy = set()
    finished = set()
    k = 0
    while True:
        lease = f.next()
        if lease is None:
            t = f.next_time()
            if t is None:
                break
            c.t = t
            continue
        assert lease.host not in busy
        assert c.t >= earliest.get(lease.host, 0.0) - 1e-9
        busy.add(lease.host)
        _, status, dur, ra = ops[k % len(ops)]
        k += 1
        c.t += rnd.random()
        real = dur
        out = f.done(lease, status=status, duration=real, retry_after=str(ra) if ra % 3 else None)
        busy.discard(lease.host)
        delay = min(max(5.0 * real, 3.0), 30.0)
        if status in (429, 503):
            delay = max(delay, float(ra) if ra % 3 else 0.0)   # without Retry-After: backoff >= 60 s
        earliest[lease.host] = c.t + delay
        if out == "done":
            finished.add(lease.url)
        else:
            assert status in (429, 503) and lease.attempts < 2
    assert finished == set(pending)


def test_skip_gives_a_lease_back_without_a_delay():
    f, c = make(Politeness(min_delay=10.0))
    for i in range(3):
        f.add(f"http://a.test/{i}")
    first = f.next()
    f.skip(first)                      # e.g. robots.txt forbids it: no request was made
    second = f.next()
    assert second is not None and second.url == "http://a.test/1"
    f.done(second)
    assert f.next() is None            # a real fetch does set the delay
    c.t += 10
    assert f.next().url == "http://a.test/2"
    with pytest.raises(ValueError):
        f.skip(first)
