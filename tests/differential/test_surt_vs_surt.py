"""warchive's SURT keys against the `surt` package (0.3.1), the reference.

Inputs: every URL of tests/urlgen.py and every WARC-Target-URI of the Wget
files in tests/data/wget (as warcio reads them: <...> stripped, spaces
escaped), plus hypothesis-drawn text and bytes.

The one deliberate deviation is DNS: for a host shaped like a dotted number
(surt's DECIMAL_IP / OCTAL_IP patterns) that glibc's inet_aton rejects, such
as "256.1.1.1", surt asks DNS through socket.gethostbyname_ex and uses the
answer; warchive never does DNS and answers as surt does when the lookup
fails.  So the reference runs here with a stand-in for the socket module
inside surt.GoogleURLCanonicalizer (tests/surt_oracle.py) that answers
numeric names as glibc does (without DNS, checked below against the real
resolver) and fails every other lookup, recording it.  Predicate
``needs_dns(url)``: surt looked up a name that is not an inet_aton number.
Those URLs are compared with that DNS-free reference and left out of the
comparison with the unpatched package; docs/format.md lists the deviation
with its inputs.  The options of surt() are tested in
test_surt_options_vs_surt.py.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import List, Optional, Union

import pytest
import surt as surt_pkg
from cdxj_indexer.main import CDXJIndexer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from warcio.archiveiterator import ArchiveIterator

import urlgen
from surt_oracle import Outcome, no_dns, reference
from warchive import surt as ws
from warchive.errors import ArchiveError, UrlError

Url = Union[str, bytes]
WGET_DIR = Path(__file__).resolve().parents[1] / "data" / "wget"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "format.md"


# --------------------------------------------------------------------------- the DNS-free reference

# no_dns(), the stand-in resolver and reference() live in tests/surt_oracle.py,
# shared with the tests of the options (test_surt_options_vs_surt.py).


def check(url: Optional[Url], want: Outcome) -> Optional[str]:
    """A description of how warchive differs from ``want`` for ``url``, or None."""
    if want.error is not None:
        try:
            got = ws.surt(url)
        except UrlError:
            pass
        else:
            return f"{url!r}: package raised {want.error}, warchive gave {got!r}"
        if ws.surt_or_url(url) is not url:
            return f"{url!r}: surt_or_url did not return the URL itself"
        return None
    got = ws.surt(url)
    if type(got) is not type(want.key) or got != want.key:
        return f"{url!r}: package {want.key!r}, warchive {got!r}"
    if ws.surt_or_url(url) != want.key:
        return f"{url!r}: surt_or_url differs from surt"
    return None


def assert_all_equal(urls, outcomes) -> None:
    problems = [p for p in (check(u, outcomes[i]) for i, u in enumerate(urls)) if p]
    assert not problems, f"{len(problems)} of {len(urls)} differ:\n" + "\n".join(problems[:15])


# --------------------------------------------------------------------------- the inputs

def warc_target_uris() -> List[str]:
    uris = []
    for path in sorted(WGET_DIR.glob("*.warc.gz")):
        with open(path, "rb") as fh:
            for rec in ArchiveIterator(fh):
                uri = rec.rec_headers.get_header("WARC-Target-URI")
                if uri is not None:
                    uris.append(uri)
    return uris


@pytest.fixture(scope="module")
def urls() -> List[Url]:
    return urlgen.tricky_urls() + warc_target_uris()


@pytest.fixture(scope="module")
def outcomes(urls):
    with no_dns() as stand_in:
        results = [reference(u, stand_in) for u in urls]
    return results, stand_in


def test_inputs_are_many_and_varied(urls):
    generated = urlgen.tricky_urls()
    assert len(set(generated)) >= 10_000
    assert generated == urlgen.tricky_urls(), "the generator must be deterministic"
    assert sum(isinstance(u, bytes) for u in generated) >= 500
    uris = warc_target_uris()
    assert len(uris) > 2000 and sum(u.startswith("http://") for u in uris) > 2000
    assert not any(u.startswith("<") for u in uris), "warcio strips Wget's <...>"


def test_keys_equal_dns_free_reference(urls, outcomes):
    results, _ = outcomes
    assert_all_equal(urls, results)


def test_keys_equal_real_package_where_no_dns_is_asked(urls, outcomes):
    results, _ = outcomes
    kept = [i for i, o in enumerate(results) if not o.needs_dns]
    assert len(kept) > 0.98 * len(urls)
    real = []
    for i in kept:
        try:
            real.append(Outcome(surt_pkg.surt(urls[i]), None, False))
        except Exception as e:
            real.append(Outcome(None, type(e).__name__, False))
    assert_all_equal([urls[i] for i in kept], real)


def test_numeric_hosts_need_no_dns(outcomes):
    # The stand-in must answer exactly as the real resolver does for the names
    # it takes as numbers, or the DNS-free reference would not be surt's.
    _, stand_in = outcomes
    names = sorted(set(stand_in.numeric_names))
    assert len(names) > 20
    for name in names:
        assert socket.gethostbyname_ex(name)[2] == [socket.inet_ntoa(socket.inet_aton(name.decode()))]


def test_dns_dependent_inputs_are_the_documented_deviation(urls, outcomes):
    results, stand_in = outcomes
    dns_urls = [u for u, o in zip(urls, results) if o.needs_dns]
    assert dns_urls, "the corpus must exercise the deviation"
    for name in stand_in.dns_names:
        # dotted-number shaped, maybe with the trailing newline that '$' allows
        assert name.rstrip(b"\n") and all(c in b"0123456789." for c in name.rstrip(b"\n")), name
    text = DOCS.read_text(encoding="utf-8")
    for example in ("http://256.1.1.1/", "http://1.2.3.4%0A/", "http://10.08.0.1/"):
        assert example in text
        with no_dns() as s:
            want = reference(example, s)
        assert want.needs_dns
        assert ws.surt(example) == want.key


def test_surt_many_equals_one_by_one(urls, outcomes):
    results, _ = outcomes
    got = ws.surt_many(urls, or_url=True)
    want = [u if o.error else o.key for u, o in zip(urls, results)]
    assert got == want
    assert [type(g) for g in got] == [type(w) for w in want]
    good = [u for u, o in zip(urls, results) if o.error is None]
    assert ws.surt_many(good) == [o.key for o in results if o.error is None]
    bad = [u for u, o in zip(urls, results) if o.error is not None]
    assert bad
    with pytest.raises(UrlError):
        ws.surt_many(good[:10] + bad[:1])


def test_cdxj_indexer_get_url_key(urls):
    # cdxj-indexer keys a record by surt.surt(url), or by the URL when that raises.
    with no_dns():
        want = [CDXJIndexer.get_url_key(None, u) for u in urls if isinstance(u, str)]
    assert [ws.surt_or_url(u) for u in urls if isinstance(u, str)] == want


def test_url_error_is_an_archive_value_error():
    with pytest.raises(ValueError):
        ws.surt("http://example.com:99999/")
    with pytest.raises(ArchiveError):
        ws.surt("   ")


# --------------------------------------------------------------------------- hypothesis

URL_ALPHABET = st.sampled_from(
    list("abcxyzABCXYZ0189.-_~%/?#&=:;@[]()+!$,' \t\n\r\x00\x0b\x7f")
    + ["%2", "%25", "%2e", "%2F", "%41", "%c3%a9", "%FF", "www.", "http://", "https://", "..",
       ".aspx", "jsessionid=", "sid=", "cfid=", "&cftoken=", "ASPSESSIONID", "\u00e9", "\u3002",
       "\uff21", "0x", "00", "[::1]", ":80", ":443", "A1" * 16, "ab" * 12, "(S(", "))/"]
)
URL_TEXT = st.one_of(
    st.text(),
    st.lists(URL_ALPHABET, max_size=30).map("".join),
    st.tuples(st.sampled_from(["http://", "https://", "HTTP://", "dns:", "", "http:", "ftp://"]),
              st.lists(URL_ALPHABET, max_size=30).map("".join)).map("".join),
)
URL_BYTES = st.one_of(st.binary(), URL_TEXT.map(lambda s: s.encode("utf-8", "surrogatepass")))


def _same_as_package(url: Url) -> None:
    with no_dns() as stand_in:
        want = reference(url, stand_in)
    problem = check(url, want)
    assert problem is None, problem


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(URL_TEXT, URL_BYTES))
def test_hypothesis_text_and_bytes(url):
    _same_as_package(url)


@pytest.mark.slow
@settings(max_examples=50_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(URL_TEXT, URL_BYTES))
def test_hypothesis_text_and_bytes_long(url):
    _same_as_package(url)
