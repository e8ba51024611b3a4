"""warchive's SURT options against the `surt` package (0.3.1):
``surt(url, **options) == surt.surt(url, **options)``.

The options are the package's keyword arguments that some part of it reads
(warchive.surt.OPTIONS; the first test checks that list against the
package's own signatures). Fifteen of them change keys. Three change nothing,
in the package as in warchive (auth_strip_user, auth_strip_pass: its parser
keeps no userinfo; hash_strip: the Google step always drops the fragment),
and public_suffix=True is refused (docs/format.md, "SURT options").

Coverage of the fifteen:
  * every one of the 2^15 combinations on DENSE, URLs picked so that every
    option changes at least one of their keys (checked), str and bytes, in
    batches (surt_many) and, for every eighth combination, one by one;
  * on every fixture URL (tests/urlgen.py and the Wget target URIs): all
    false, all true, each option flipped from the default, the Google
    canonicalizer alone and the Heritrix set; on fixed samples of them, each
    option alone true (the rest false) and every pair of options (the four
    value pairs of each, the rest default);
  * hypothesis: drawn URLs with drawn option sets (the three without effect
    and non-bool values included, truth values count);
  * slow (-m slow): every combination on 300 fixture URLs.
The package runs without DNS and staged (tests/surt_oracle.py): the one
deliberate deviation that touches options is that of every key, DNS
(docs/format.md, deviation 1); URLs for which the package asks DNS are
compared with its DNS-free answer, as in test_surt_vs_surt.py.
"""

from __future__ import annotations

import inspect
import itertools
import random
from typing import Dict, List, Optional, Sequence

import pytest
import surt as surt_pkg
import surt.DefaultIAURLCanonicalizer as default_canon
import surt.GoogleURLCanonicalizer as google_canon
import surt.IAURLCanonicalizer as ia_canon
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from surt.handyurl import handyurl

import urlgen
from surt_oracle import Outcome, Staged, Url, no_dns, reference
from test_surt_vs_surt import URL_BYTES, URL_TEXT, warc_target_uris
from warchive import surt as ws
from warchive._ext import surt as kernel
from warchive.errors import UrlError

NO_EFFECT = ("auth_strip_user", "auth_strip_pass", "hash_strip")
NAMES = [n for n in ws.OPTIONS if n not in NO_EFFECT + ("public_suffix",)]
DEFAULTS = {n: ws.OPTIONS[n] for n in NAMES}
IA_NAMES = [n for n in NAMES if n not in ("surt", "with_scheme", "trailing_comma", "reverse_ipaddr")]
HERITRIX = {"with_scheme": True, "trailing_comma": True, "host_massage": False}

SID32 = urlgen.SID32
SID24 = urlgen.SID24
DENSE: List[Url] = [
    "http://www.Example.com:80/A/(S(" + SID24 + "))/Default.aspx/?B=%E9&a=1&JSESSIONID=" + SID32 + "#frag",
    "HTTPS://WWW2.Ex%41m%7Fple.ORG:443/",
    "http://www.1.2.3.4:8080/x//y/../Z/?",
    "http://192.168.0.1/a?cfid=1&cftoken=2",
    "dns://www.Example.com/",
    "mailto:Foo@Example.COM?Subject=Hi&A=b",
    "http://example.com?b=2&A=1",
    "http://www.example.com#x?",
    b"http://\xff\xfe.com/\xff/?\xfe=1&A=%41",
    "http://B\u00fccher.example/\u00c4/(" + SID24 + ")/P.aspx?sid=" + SID32,
    "http:///www.Example.com:8080/x/",
    "http://[2001:DB8::1]:80/Index.html?",
]


def combination(mask: int) -> Dict[str, bool]:
    return {n: bool(mask >> i & 1) for i, n in enumerate(NAMES)}


def ours(url: Optional[Url], options: Dict[str, object], canonicalizer: object = None) -> Outcome:
    try:
        return Outcome(ws.surt(url, canonicalizer, **options), None, False)
    except UrlError:
        return Outcome(None, "UrlError", False)


def problem(url: Optional[Url], options: Dict[str, object], want: Outcome, got: Outcome) -> Optional[str]:
    if (want.error is None) != (got.error is None):
        return f"{url!r} {options}: package {want}, warchive {got}"
    if want.error is None and (type(got.key) is not type(want.key) or got.key != want.key):
        return f"{url!r} {options}: package {want.key!r}, warchive {got.key!r}"
    return None


def batch_problems(urls: Sequence[Optional[Url]], options: Dict[str, bool], wants: Sequence[Outcome]) -> List[str]:
    """surt_many(urls, or_url=True, **options) against the package's outcomes."""
    got = ws.surt_many(urls, or_url=True, **options)
    out = []
    for u, g, w in zip(urls, got, wants):
        expected = u if w.error is not None else w.key
        if type(g) is not type(expected) or g != expected:
            out.append(f"{u!r} {options}: package {w}, surt_many {g!r}")
    return out


def assert_none(problems: List[str], total: int) -> None:
    assert not problems, f"{len(problems)} of {total} differ:\n" + "\n".join(problems[:15])


# --------------------------------------------------------------------------- the options themselves

def test_options_are_the_packages():
    # surt.surt passes **options to the canonicalizer and to geturl_bytes, and sets two defaults
    ia = inspect.signature(ia_canon.canonicalize).parameters
    get = inspect.signature(handyurl.geturl_bytes).parameters
    want = {n: p.default for n, p in ia.items() if p.default is not inspect.Parameter.empty}
    want.update({n: p.default for n, p in get.items() if p.default is not inspect.Parameter.empty})
    want.update(surt=True, with_scheme=False)           # _surt_bytes: options.setdefault(...)
    assert dict(ws.OPTIONS) == want
    google = inspect.signature(google_canon.canonicalize).parameters
    assert [p.kind for p in google.values()] == [inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                  inspect.Parameter.VAR_KEYWORD]   # reads no option
    assert kernel.surt_flags() == kernel.DEFAULT_FLAGS
    assert kernel.surt_flags(**DEFAULTS) == kernel.DEFAULT_FLAGS
    with pytest.raises(TypeError):
        ws.OPTIONS["surt"] = False  # type: ignore[index]


def test_the_staged_oracle_is_the_package():
    rng = random.Random(7)
    urls = urlgen.tricky_urls(3000, seed=3) + DENSE
    with no_dns() as stand_in:
        for url in urls:
            opts: Dict[str, object] = {n: rng.random() < 0.5 for n in NAMES if rng.random() < 0.6}
            assert Staged(url, stand_in).key(opts) == reference(url, stand_in, **opts), (url, opts)


@pytest.mark.parametrize("name", ["fragment", "query_strip_sessionid", "strip_session_id", "canonicalise", "Surt"])
def test_an_unknown_option_is_a_type_error(name):
    url = "http://www.example.com/a?b=1"
    assert surt_pkg.surt(url, **{name: True}) == surt_pkg.surt(url)    # the package ignores it silently
    for call in (lambda: ws.surt(url, **{name: True}), lambda: ws.surt_or_url(url, **{name: True}),
                 lambda: ws.surt_many([url], **{name: True}), lambda: ws.canonicalize(url, **{name: True}),
                 lambda: kernel.surt_flags(**{name: True})):
        with pytest.raises(TypeError, match=repr(name)):
            call()


def test_options_without_effect():
    urls = ["http://user:pass@www.Example.com:8080/A/?b=1&a=2#frag", "http://x/#f", b"http://u@x.example/"]
    for url, name, value in itertools.product(urls, NO_EFFECT, (True, False)):
        for base in ({}, {"surt": False}, {"with_scheme": True, "query_alpha_reorder": False}):
            want = surt_pkg.surt(url, **base)
            assert surt_pkg.surt(url, **base, **{name: value}) == want
            assert ws.surt(url, **base, **{name: value}) == want


def test_public_suffix_is_refused():
    url = "http://www.example.co.uk/"
    assert ws.surt(url, public_suffix=False) == surt_pkg.surt(url, public_suffix=False)
    with pytest.raises(ValueError, match="public_suffix"):
        ws.surt(url, public_suffix=True)
    with pytest.raises(ValueError, match="public_suffix"):
        ws.surt_many([url], public_suffix=1)
    # and the package itself fails with it, under the tldextract it installs
    with pytest.raises(Exception):
        surt_pkg.surt(url, public_suffix=True)


def test_truth_values_count():
    url = "http://www.Example.com/A/?b=1&a=2"
    for value in (0, 1, "", "no", None, [], [0], 0.0):
        opts = {"with_scheme": value, "host_massage": value, "query_alpha_reorder": value}
        assert ws.surt(url, **opts) == surt_pkg.surt(url, **opts), value


def test_canonicalizers():
    url = "http://www.Example.com:80/A/./b/?B=%7e&a=1#x?"
    for canon in (None, default_canon, default_canon.canonicalize):
        assert ws.surt(url, canon) == ws.surt(url, canonicalizer=canon) == surt_pkg.surt(url, canon)
    for canon in (google_canon, google_canon.canonicalize):
        for opts in ({}, {"with_scheme": True}, {"host_massage": True, "query_lowercase": True}):
            assert ws.surt(url, canon, **opts) == surt_pkg.surt(url, canon, **opts)
    # Google alone is IAURLCanonicalizer with every option false
    assert surt_pkg.surt(url, google_canon) == surt_pkg.surt(url, **{n: False for n in IA_NAMES})
    for bad in (ia_canon, ia_canon.canonicalize, lambda h, **o: h, [google_canon, ia_canon], "default"):
        with pytest.raises(ValueError, match="canonicalizer"):
            ws.surt(url, bad)
        with pytest.raises(ValueError, match="canonicalizer"):
            ws.surt_many([url], canonicalizer=bad)


def test_heritrix_form():
    # docs/format.md: with_scheme, trailing_comma and host_massage=False give Heritrix's form
    assert ws.surt("http://www.example.com/", **HERITRIX) == "http://(com,example,www,)/"
    assert ws.surt("http://example.com/", with_scheme=True, trailing_comma=True) == "http://(com,example,)/"
    for url in ("http://www.example.com/", "https://Example.org/A/b.html?x=1", "http://a.b.example.net:8080/"):
        assert ws.surt(url, **HERITRIX) == surt_pkg.surt(url, **HERITRIX)


# --------------------------------------------------------------------------- every combination

@pytest.fixture(scope="module")
def dense_keys():
    """The package's outcome for every DENSE URL and every combination (index: the mask)."""
    with no_dns() as stand_in:
        staged = [Staged(u, stand_in) for u in DENSE]
    assert not any(s.needs_dns for s in staged)
    return [[s.key(combination(m)) for m in range(1 << len(NAMES))] for s in staged]


def test_every_combination_on_dense_urls(dense_keys):
    problems: List[str] = []
    for m in range(1 << len(NAMES)):
        opts = combination(m)
        wants = [keys[m] for keys in dense_keys]
        problems += batch_problems(DENSE, opts, wants)
        if m % 8 == 0:
            problems += [p for p in (problem(u, opts, w, ours(u, opts)) for u, w in zip(DENSE, wants)) if p]
    assert_none(problems, len(DENSE) << len(NAMES))


def test_every_option_changes_a_dense_key(dense_keys):
    for i, name in enumerate(NAMES):
        assert any(keys[m] != keys[m ^ (1 << i)] for keys in dense_keys for m in range(1 << len(NAMES))), name


# --------------------------------------------------------------------------- the fixture URLs

def named_sets() -> Dict[str, Dict[str, bool]]:
    sets = {"all false": {n: False for n in NAMES}, "all true": {n: True for n in NAMES}, "Heritrix": HERITRIX}
    for n in NAMES:
        sets[f"{n} flipped"] = {n: not DEFAULTS[n]}
    return sets


@pytest.fixture(scope="module")
def fixtures():
    urls: List[Url] = urlgen.tricky_urls() + warc_target_uris()
    with no_dns() as stand_in:
        staged = [Staged(u, stand_in) for u in urls]
    return urls, staged


def test_named_option_sets_on_fixture_urls(fixtures):
    urls, staged = fixtures
    problems: List[str] = []
    for opts in named_sets().values():
        problems += batch_problems(urls, opts, [s.key(opts) for s in staged])
    assert_none(problems, len(urls) * len(named_sets()))


def test_google_canonicalizer_on_fixture_urls(fixtures):
    urls, staged = fixtures
    ia_off = {n: False for n in IA_NAMES}
    wants = [s.key(ia_off) for s in staged]     # Google alone (test_canonicalizers shows the equality)
    got = ws.surt_many(urls, or_url=True, canonicalizer=google_canon)
    bad = [f"{u!r}: package {w}, warchive {g!r}" for u, w, g in zip(urls, wants, got)
           if g != (u if w.error else w.key)]
    assert_none(bad, len(urls))


def test_each_option_alone_on_sampled_fixture_urls(fixtures):
    urls, staged = fixtures
    picks = random.Random(13).sample(range(len(urls)), 3000)
    problems: List[str] = []
    for n in NAMES:
        opts = {**{m: False for m in NAMES}, n: True}
        problems += batch_problems([urls[i] for i in picks], opts, [staged[i].key(opts) for i in picks])
    assert_none(problems, len(picks) * len(NAMES))


def test_every_pair_on_sampled_fixture_urls(fixtures):
    urls, staged = fixtures
    picks = random.Random(11).sample(range(len(urls)), 400)
    sample = [urls[i] for i in picks]
    problems: List[str] = []
    for a, b in itertools.combinations(NAMES, 2):
        for va, vb in itertools.product((False, True), repeat=2):
            opts = {a: va, b: vb}
            problems += batch_problems(sample, opts, [staged[i].key(opts) for i in picks])
    assert_none(problems, len(sample) * 4 * len(NAMES) * (len(NAMES) - 1) // 2)


def test_options_reach_the_idna_and_error_paths():
    # one-by-one calls that leave the batch: IDN hosts (the core asks for IDNA) and URLs without a key
    urls = ["http://B\u00fccher.Example/A/?b&a", "http://www.\u00e9.com:80/", "http://x:99999/", "   "]
    for url, m in itertools.product(urls, range(0, 1 << len(NAMES), 97)):
        opts = combination(m)
        with no_dns() as stand_in:
            want = reference(url, stand_in, **opts)
        p = problem(url, opts, want, ours(url, opts))
        assert p is None, p
        assert ws.surt_or_url(url, **opts) == (url if want.error else want.key)


# --------------------------------------------------------------------------- hypothesis

OPTION_SETS = st.dictionaries(
    st.sampled_from(NAMES + list(NO_EFFECT) + ["public_suffix"]),
    st.one_of(st.booleans(), st.sampled_from([0, 1, "", "x", None, [], [0]])),
).map(lambda d: {k: (False if k == "public_suffix" else v) for k, v in d.items()})


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(URL_TEXT, URL_BYTES), OPTION_SETS)
def test_hypothesis_urls_and_options(url, opts):
    with no_dns() as stand_in:
        want = reference(url, stand_in, **opts)
    p = problem(url, opts, want, ours(url, opts))
    assert p is None, p


@pytest.mark.slow
def test_every_combination_on_fixture_urls(fixtures):
    urls, staged = fixtures
    picks = random.Random(5).sample(range(len(urls)), 300)
    problems: List[str] = []
    for m in range(1 << len(NAMES)):
        opts = combination(m)
        problems += batch_problems([urls[i] for i in picks], opts, [staged[i].key(opts) for i in picks])
    assert_none(problems, len(picks) << len(NAMES))
