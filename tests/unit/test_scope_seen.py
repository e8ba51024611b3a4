"""Scope decisions (Heritrix's DecideRules as warchive.capture.scope documents them) and the seen sets."""

from __future__ import annotations

import os
import random

import pytest

from warchive.capture.scope import Scope, seed_prefix
from warchive.capture.seen import BloomSeen, ExactSeen, SeenFormatError, bloom_size, open_seen, seen_key


# ---- scope


def test_seed_prefix_is_the_key_up_to_the_last_slash():
    """SurtPrefixedDecideRule: a seed implies the prefix of its directory."""
    assert seed_prefix("http://www.example.com/a/b.html") == "com,example)/a/"
    assert seed_prefix("http://example.com") == "com,example)/"
    assert seed_prefix("https://example.com/x/") == "com,example)/x/"
    assert seed_prefix("http://ex.com:8080/a/b") == "com,ex:8080)/a/"


def test_prefix_rule():
    s = Scope(["http://example.com/docs/index.html"])
    assert s.decide("http://example.com/docs/a/b", "L").reason == "surt-prefix"
    assert s.decide("https://www.example.com/docs/x", "L").accepted          # one canonical form: scheme, www
    assert not s.decide("http://example.com/docsx", "L").accepted            # "/docs/" is not "/docsx"
    assert s.decide("http://example.com/other", "L").reason == "out-of-scope"
    assert not s.decide("http://sub.example.com/docs/a", "L").accepted        # other host
    assert s.decide("http://example.com/docs/index.html", "").reason in ("seed", "surt-prefix")


def test_explicit_prefix_as_surt_or_url_and_no_seed_prefixes():
    s = Scope(["http://a.test/x/y"], surt_prefixes=["test,b)/", "http://c.test/p/q"], seeds_as_prefixes=False)
    assert not s.accepts("http://a.test/x/z", "L")
    assert s.decide("http://a.test/x/y", "").reason == "seed"
    assert s.accepts("http://b.test/anything", "L")
    assert s.accepts("http://c.test/p/r", "L") and not s.accepts("http://c.test/q", "L")


def test_host_and_domain_rules():
    s = Scope(hosts=["www.a.test"], domains=["b.test"])
    assert s.decide("http://a.test/x", "L").reason == "host"                # www is dropped by the SURT form
    assert not s.accepts("http://other.a.test/x", "L")
    assert s.decide("http://b.test/", "L").reason == "domain"
    assert s.decide("http://deep.sub.b.test:81/", "L").reason == "domain"
    assert not s.accepts("http://notb.test/", "L")
    assert not s.accepts("http://b.test.evil.example/", "L")


def test_regex_include_and_exclude_and_reasons():
    s = Scope(["http://a.test/"], include=[r"^https?://cdn\.test/"], exclude=[r"[?&]sessionid=", r"calendar/\d{4}"])
    assert s.decide("http://cdn.test/lib.js", "L").reason == "include"
    d = s.decide("http://a.test/page?sessionid=1", "L")
    assert not d.accepted and d.reason == "exclude" and "sessionid" in d.detail
    assert not s.accepts("http://a.test/calendar/2031/01", "LLL")


def test_max_hops_stops_a_trap():
    s = Scope(["http://a.test/"], max_hops=3)
    assert s.accepts("http://a.test/cal/1", "LLL")
    d = s.decide("http://a.test/cal/2", "LLLL")
    assert not d.accepted and d.reason == "too-many-hops"


def test_transclusion_allows_embeds_one_hop_off_scope():
    s = Scope(["http://a.test/"])
    assert s.decide("http://cdn.test/i.png", "LE").reason == "transclusion"
    assert s.accepts("http://cdn.test/i.png", "E")                         # embed of the seed itself
    assert not s.accepts("http://cdn.test/page.html", "LL")                # a link is not an embed
    assert not s.accepts("http://cdn.test/i2.png", "LEE")                  # two hops off-scope
    assert Scope(["http://a.test/"], max_trans_hops=2).accepts("http://cdn.test/i2.png", "LEE")
    assert not Scope(["http://a.test/"], max_trans_hops=0).accepts("http://cdn.test/i.png", "LE")
    s2 = Scope(["http://a.test/"], exclude=[r"\.png$"])
    assert s2.decide("http://cdn.test/i.png", "LE").reason == "exclude"   # exclusions beat transclusion


def test_prerequisites_and_seeds_always_accepted_invalid_rejected():
    s = Scope(["http://a.test/x/"], max_hops=1)
    assert s.decide("http://other.test/robots.txt", "P").reason == "prerequisite"
    assert s.decide("http://a.test/x/", "").reason == "seed"
    d = s.decide("not a url at all", "L")
    assert not d.accepted and d.reason == "invalid-url"


# ---- seen sets


def urls(n, seed=0):
    rnd = random.Random(seed)
    return [f"http://h{rnd.randrange(300)}.test/{rnd.random():.12f}/{i}" for i in range(n)]


def test_exact_add_reports_new_once_and_canonicalizes(tmp_path):
    s = ExactSeen(tmp_path / "seen", buffer=50, max_runs=3)
    assert s.add("http://www.Example.com/a?b=1&a=2") is True
    assert s.add("https://example.com/a?a=2&b=1") is False                 # same SURT key
    assert "http://example.com/a?a=2&b=1" in s
    assert "http://example.com/b" not in s
    assert s.add("urn:x-test:1") is True and s.add("urn:x-test:1") is False
    s.close()


def test_exact_matches_a_python_set_across_runs_merges_and_reopen(tmp_path):
    path = tmp_path / "seen"
    u = urls(3000)
    batch = u + urls(500, seed=1) + u[:700]
    truth = set()
    s = ExactSeen(path, buffer=128, max_runs=3)
    got = []
    for i, url in enumerate(batch):
        if i % 2:
            got.append(s.add(url))
        else:
            got.extend(s.add_many([url]))
    want = []
    for url in batch:
        k = seen_key(url)
        want.append(k not in truth)
        truth.add(k)
    assert got == want
    assert len(s) == len(truth)
    assert len(s._runs) <= 4
    s.close()
    s2 = ExactSeen(path, buffer=128)
    assert len(s2) == len(truth)
    assert s2.add_many(batch[:50]) == [False] * 50
    assert s2.add("http://brand-new.test/") is True
    s2.close()


def test_exact_survives_kill_without_close_and_cuts_torn_line(tmp_path):
    path = tmp_path / "seen"
    s = ExactSeen(path, buffer=10)
    for url in urls(25):
        s.add(url)
    s.add("http://last.test/")    # held in memory until the next call or sync
    s.sync()
    with open(path / "keys", "ab") as f:
        f.write(b"com,torn)/half-written")   # a key cut by the kill (no line feed)
    # no close(): the process "died"
    s2 = ExactSeen(path, buffer=10)
    assert len(s2) == 26
    assert "http://last.test/" in s2
    assert s2.add("http://torn.com/half-written") is True
    assert not (path / "keys").read_bytes().count(b"half-written\n") > 1


def test_exact_hash_collisions_are_verified(tmp_path, monkeypatch):
    """A 64-bit hash only proposes candidates: two keys with one hash are both new."""
    import warchive.capture.seen as seen_mod

    monkeypatch.setattr(seen_mod, "_h64", lambda key: 42)
    s = ExactSeen(tmp_path / "seen", buffer=2)
    got = [s.add(f"http://a.test/{i}") for i in range(10)]
    assert got == [True] * 10
    assert [s.add(f"http://a.test/{i}") for i in range(10)] == [False] * 10
    assert s.add_many(["http://a.test/3", "http://a.test/99"]) == [False, True]
    s.close()


def test_exact_damaged_run_is_reported(tmp_path):
    path = tmp_path / "seen"
    s = ExactSeen(path, buffer=5)
    for url in urls(20):
        s.add(url)
    s.checkpoint()
    s.close()
    run = sorted(p for p in os.listdir(path) if p.startswith("run-"))[0]
    data = bytearray((path / run).read_bytes())
    data[-3] ^= 0xFF
    (path / run).write_bytes(bytes(data))
    with pytest.raises(SeenFormatError) as e:
        ExactSeen(path)
    assert run in str(e.value) and "CRC" in str(e.value)


def test_bloom_size_formula():
    m, k = bloom_size(1000, 0.01)
    assert 9585 <= m <= 9600 and k == 7          # m = -n ln p / (ln 2)^2 = 9585.06; k = m/n ln 2 = 6.6


def test_bloom_false_positive_rate_is_near_the_stated_one(tmp_path):
    b = BloomSeen(capacity=20000, fp_rate=0.01)
    assert sum(b.add_many(urls(20000))) > 20000 * 0.99   # a false positive while filling reads "seen"
    fresh = urls(20000, seed=7)
    fp = sum(1 for u in fresh if u in b) / len(fresh)
    assert fp < 0.02                              # stated 1 %; binomial noise is far below 1 %
    assert abs(b.current_fp_rate() - 0.01) < 0.003
    assert all(not b.add(u) for u in urls(100))    # never calls a seen URL new


def test_bloom_persists_and_checks_its_file(tmp_path):
    p = tmp_path / "seen.bloom"
    b = open_seen(p, "bloom", capacity=1000, fp_rate=0.001)
    b.add("http://a.test/")
    b.close()
    b2 = BloomSeen(p)
    assert "http://a.test/" in b2 and len(b2) == 1 and b2.k == b.k and b2.m == b.m
    data = bytearray(p.read_bytes())
    data[-1] ^= 1
    p.write_bytes(bytes(data))
    with pytest.raises(SeenFormatError):
        BloomSeen(p)
    p.write_bytes(b"junk")
    with pytest.raises(SeenFormatError):
        BloomSeen(p)


def test_bloom_add_many_sets_the_same_bits_as_add():
    """The batch path (numpy, uint64 arithmetic) and the one-by-one path (Python ints, masked) agree."""
    a = BloomSeen(capacity=5000, fp_rate=1e-3)
    b = BloomSeen(capacity=5000, fp_rate=1e-3)
    u = urls(3000)
    assert [a.add(x) for x in u] == b.add_many(u)
    assert (a.bits == b.bits).all() and len(a) == len(b)
    assert b.add_many(["http://z.test/1", "http://z.test/1", u[0]]) == [True, False, False]
