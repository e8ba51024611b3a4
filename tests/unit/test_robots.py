"""robots.txt against the text of RFC 9309; each test names the section whose sentence it checks.

Expected answers are read off the RFC's sentences and examples (and, where the RFC leaves a
choice, off the choice documented in warchive.capture.robots and warchive.capture.robots_cache),
never off our own output. Where Google's parser (the default reading) and the RFC differ, the
tests here read with ``mode="rfc"``; test_robots_google.py has Google's side of each.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from robots_ref import reference_match
from warchive.capture.robots import RobotsTxt, normalize_path, product_token, robots_url, url_path
from warchive.capture.robots_cache import FOUND, UNAVAILABLE, UNREACHABLE, RobotsCache
from warchive.capture.robots_meta import meta_robots, page_directives, x_robots_tag

RFC_5_1 = b"""User-Agent: *
Disallow: *.gif$
Disallow: /example/
Allow: /publications/

User-Agent: foobot
Disallow:/
Allow:/example/page.html
Allow:/example/allowed.gif

User-Agent: barbot
User-Agent: bazbot
Disallow: /example/page.html

User-Agent: quxbot

EOF
"""


def allowed(txt: bytes, agent: str, url: str, mode: str = "google") -> bool:
    return RobotsTxt.parse(txt, mode=mode).allowed(url, agent)


# ---- 2.1 / 2.2.1: groups and user-agent lines


def test_simple_example_foobot():
    """RFC 9309 5.1: foobot is disallowed everything except the two allowed files."""
    assert allowed(RFC_5_1, "foobot", "/example/page.html")
    assert allowed(RFC_5_1, "foobot", "/example/allowed.gif")
    assert not allowed(RFC_5_1, "foobot", "/example/other.html")
    assert not allowed(RFC_5_1, "foobot", "/publications/x")


def test_group_with_several_user_agent_lines():
    """RFC 9309 2.1 / 5.1: a group starts with one or more user-agent lines; barbot and bazbot share one."""
    for bot in ("barbot", "bazbot"):
        assert not allowed(RFC_5_1, bot, "/example/page.html")
        assert allowed(RFC_5_1, bot, "/example/other.html")   # their group does not inherit '*'
        assert allowed(RFC_5_1, bot, "/x.gif")


def test_last_group_without_rules_allows_everything():
    """RFC 9309 2.1: "The last group may have no rules, which means it implicitly allows everything." """
    assert allowed(RFC_5_1, "quxbot", "/example/page.html")
    assert allowed(RFC_5_1, "quxbot", "/a.gif")


def test_star_group_is_the_fallback():
    """RFC 9309 2.2.1: with no matching group, obey the group whose user-agent line is "*"."""
    assert not allowed(RFC_5_1, "otherbot", "/example/x")
    assert not allowed(RFC_5_1, "otherbot", "/img/a.gif")
    assert allowed(RFC_5_1, "otherbot", "/publications/a")
    assert allowed(RFC_5_1, "otherbot", "/index.html")


def test_no_matching_group_and_no_star_means_no_rules():
    """RFC 9309 2.2.1: no matching group and no "*" group (or no groups at all): no rules apply."""
    txt = b"User-agent: foobot\nDisallow: /\n"
    assert allowed(txt, "otherbot", "/anything")
    assert allowed(b"", "otherbot", "/anything")
    assert allowed(b"# only a comment\n", "otherbot", "/anything")


def test_user_agent_match_is_case_insensitive():
    """RFC 9309 2.2.1: "Crawlers MUST use case-insensitive matching to find the group"."""
    txt = b"User-agent: FooBot\nDisallow: /private\n\nUser-agent: *\nDisallow: /\n"
    assert not allowed(txt, "foobot", "/private/x")
    assert allowed(txt, "FOOBOT", "/public")
    assert allowed(txt, "fOoBoT", "/public")


def test_agent_given_as_full_user_agent_string():
    """RFC 9309 2.2.1: the product token (letters, "_", "-") is a substring of the identification string."""
    txt = b"User-agent: foo-bot\nDisallow: /x\n\nUser-agent: *\nDisallow: /\n"
    assert not allowed(txt, "Foo-Bot/2.1 (+https://example.org/bot)", "/x")
    assert allowed(txt, "Foo-Bot/2.1 (+https://example.org/bot)", "/y")
    assert product_token("Foo-Bot/2.1 (+https://example.org/bot)") == "foo-bot"
    assert product_token("my_bot") == "my_bot"


def test_user_agent_line_with_version_matches_the_token():
    """Google's reading (robots.cc, RobotsMatcher::ExtractUserAgent keeps the leading [a-zA-Z_-] run):
    "foobot/1.2" names foobot. RFC 9309 2.2.1's grammar has no such line (test_robots_google.py)."""
    txt = b"User-agent: foobot/1.2\nDisallow: /x\n\nUser-agent: *\nDisallow: /\n"
    assert not allowed(txt, "foobot", "/x")
    assert allowed(txt, "foobot", "/y")


def test_token_is_not_a_prefix_match():
    """RFC 9309 2.2.1: the group must match the product token, not merely start like it."""
    txt = b"User-agent: foo\nDisallow: /\n"
    assert allowed(txt, "foobot", "/x")
    txt2 = b"User-agent: foobot\nDisallow: /\n"
    assert allowed(txt2, "foo", "/x")


def test_groups_for_the_same_agent_are_merged():
    """RFC 9309 2.2.1: "the matching groups' rules MUST be combined into one group"."""
    txt = (b"User-agent: foobot\nDisallow: /a\n\n"
           b"User-agent: *\nDisallow: /c\n\n"
           b"User-agent: FOOBOT\nDisallow: /b\nAllow: /a/open\n")
    assert not allowed(txt, "foobot", "/a/x")
    assert not allowed(txt, "foobot", "/b/x")
    assert allowed(txt, "foobot", "/a/open/1")   # longest match across the merged groups
    assert allowed(txt, "foobot", "/c")           # the '*' group is not merged in


def test_star_groups_are_merged_too():
    """RFC 9309 2.2.1: several "*" groups are all "the group" a non-matching crawler obeys."""
    txt = b"User-agent: *\nDisallow: /a\n\nUser-agent: foobot\nDisallow: /\n\nUser-agent: *\nDisallow: /b\n"
    assert not allowed(txt, "otherbot", "/a")
    assert not allowed(txt, "otherbot", "/b")
    assert allowed(txt, "otherbot", "/c")


def test_user_agent_after_rules_starts_a_new_group():
    """RFC 9309 2.1: "The group is terminated by a user-agent line or end of file"."""
    txt = b"User-agent: a\nDisallow: /x\nUser-agent: b\nDisallow: /y\n"
    assert allowed(txt, "a", "/y") and not allowed(txt, "a", "/x")
    assert allowed(txt, "b", "/x") and not allowed(txt, "b", "/y")


def test_blank_lines_do_not_end_a_group():
    """RFC 9309 2.2 (the grammar allows empty lines between a group's lines): a blank line keeps the group."""
    txt = b"User-agent: a\n\nUser-agent: b\n\nDisallow: /x\n\n\nDisallow: /y\n"
    for bot in ("a", "b"):
        assert not allowed(txt, bot, "/x") and not allowed(txt, bot, "/y")


def test_rules_before_any_group_are_ignored():
    """RFC 9309 2.2.2: "ignore disallow and allow rules that are not in any group"."""
    txt = b"Disallow: /x\nUser-agent: *\nDisallow: /y\n"
    assert allowed(txt, "bot", "/x")
    assert not allowed(txt, "bot", "/y")


def test_other_records_do_not_end_a_group():
    """RFC 9309 2.2.4: a "Sitemaps" (or other) record MUST NOT terminate a group."""
    txt = b"User-agent: a\nSitemap: https://e.com/s.xml\nUser-agent: b\nFoo: bar\nDisallow: /x\n"
    assert not allowed(txt, "a", "/x")
    assert not allowed(txt, "b", "/x")
    assert RobotsTxt.parse(txt).sitemaps == ["https://e.com/s.xml"]


def test_unparseable_lines_are_skipped_the_rest_apply():
    """RFC 9309 2.3.1.5: "Crawlers MUST try to parse each line ... MUST use the parseable rules"."""
    txt = b"User-agent: *\n\xff\xfe garbage line\nthis has no colon at all\nDisallow: /x\n:::\nDisallow: /y\n"
    assert not allowed(txt, "bot", "/x")
    assert not allowed(txt, "bot", "/y")
    assert allowed(txt, "bot", "/z")


def test_keys_are_case_insensitive_and_spacing_is_free():
    """RFC 9309 2.2 (grammar: "user-agent", "allow", "disallow" are case-insensitive strings, *WS around ':')."""
    txt = b"  USER-AGENT :  bot  \n\tdisALLOW\t:\t/x  # comment\n"
    assert not allowed(txt, "bot", "/x")
    assert allowed(txt, "bot", "/y")


def test_line_endings_cr_lf_crlf_and_bom():
    """RFC 9309 2.2 (grammar: NL is CR, LF or CRLF); a UTF-8 byte order mark does not hide the first line."""
    for nl in (b"\r", b"\n", b"\r\n"):
        txt = b"\xef\xbb\xbfUser-agent: bot" + nl + b"Disallow: /x" + nl
        assert not allowed(txt, "bot", "/x"), nl
        assert allowed(txt, "bot", "/y")


# ---- 2.2.2: matching


def test_longest_match_wins():
    """RFC 9309 5.2: /example/page/disallowed.gif is the rule used for that URI, not /example/page/."""
    txt = b"User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n"
    assert not allowed(txt, "foobot", "https://example.com/example/page/disallowed.gif")
    assert allowed(txt, "foobot", "https://example.com/example/page/other.gif")


def test_longest_match_regardless_of_order():
    """RFC 9309 2.2.2: "The most specific match found MUST be used" (not the first)."""
    a = b"User-agent: *\nDisallow: /a\nAllow: /a/b\n"
    b = b"User-agent: *\nAllow: /a/b\nDisallow: /a\n"
    for txt in (a, b):
        assert allowed(txt, "bot", "/a/b/c")
        assert not allowed(txt, "bot", "/a/c")


def test_allow_wins_ties():
    """RFC 9309 2.2.2: "If an allow rule and a disallow rule are equivalent, then the allow rule SHOULD be used"."""
    for txt in (b"User-agent: *\nDisallow: /page\nAllow: /page\n", b"User-agent: *\nAllow: /page\nDisallow: /page\n"):
        assert allowed(txt, "bot", "/page")
    # equal length, different patterns, both matching
    assert allowed(b"User-agent: *\nDisallow: /pa*\nAllow: /pag\n", "bot", "/page")


def test_matching_is_case_sensitive():
    """RFC 9309 2.2.2: "The matching SHOULD be case sensitive"."""
    txt = b"User-agent: *\nDisallow: /Private\n"
    assert not allowed(txt, "bot", "/Private/x")
    assert allowed(txt, "bot", "/private/x")


def test_matching_starts_at_the_first_octet_of_the_path():
    """RFC 9309 2.2.2: "The matching MUST start with the first octet of the path"."""
    txt = b"User-agent: *\nDisallow: /x\n"
    assert allowed(txt, "bot", "/a/x")
    assert not allowed(txt, "bot", "/x/a")
    assert not allowed(txt, "bot", "http://e.com/x?q=1")


def test_query_is_part_of_the_path_fragment_is_not():
    """RFC 9309 2.2.2 (its table matches "/foo/bar?baz=quz"): the query is matched; a fragment is not sent."""
    txt = b"User-agent: *\nDisallow: /foo/bar?baz=quz\n"
    assert not allowed(txt, "bot", "http://e.com/foo/bar?baz=quz")
    assert allowed(txt, "bot", "http://e.com/foo/bar?baz=other")
    assert url_path("http://e.com/a?b=1#frag") == "/a?b=1"
    assert url_path("http://e.com") == "/"
    assert url_path("http://e.com?x") == "/?x"


def test_no_match_means_allowed_and_empty_disallow_allows():
    """RFC 9309 2.2.2: "If no match is found ... or there are no rules in the group, the URI is allowed"."""
    txt = b"User-agent: *\nDisallow:\n"
    assert allowed(txt, "bot", "/anything")
    assert allowed(b"User-agent: *\nDisallow: /x\n", "bot", "/y")


def test_robots_txt_itself_is_allowed():
    """RFC 9309 2.2.2: "The /robots.txt URI is implicitly allowed"."""
    assert allowed(b"User-agent: *\nDisallow: /\n", "bot", "https://e.com/robots.txt")


def test_the_match_length_counts_octets_of_the_rule():
    """RFC 9309 2.2.2: "the match that has the most octets": a wildcard rule can beat a shorter literal."""
    txt = b"User-agent: *\nAllow: /folder\nDisallow: /folder/*.php\n"
    assert not allowed(txt, "bot", "/folder/a.php")
    assert allowed(txt, "bot", "/folder/a.html")


# ---- 2.2.3: special characters


def test_star_matches_any_sequence():
    """RFC 9309 2.2.3: "*" designates 0 or more instances of any character."""
    txt = b"User-agent: *\nDisallow: /this/*/exactly\n"
    assert not allowed(txt, "bot", "/this/a/b/exactly")
    assert not allowed(txt, "bot", "/this//exactly")
    assert not allowed(txt, "bot", "/this/x/exactly/more")   # no $: a prefix match
    assert allowed(txt, "bot", "/this/exactly")


def test_dollar_ends_the_pattern():
    """RFC 9309 2.2.3: "$" designates the end of the match pattern."""
    txt = b"User-agent: *\nDisallow: /this/path/exactly$\nDisallow: /*.gif$\n"
    assert not allowed(txt, "bot", "/this/path/exactly")
    assert allowed(txt, "bot", "/this/path/exactly/more")
    assert not allowed(txt, "bot", "/img/a.gif")
    assert allowed(txt, "bot", "/img/a.gif?x=1")
    assert allowed(txt, "bot", "/img/a.gifx")


def test_star_dollar_backtracking_cases():
    """RFC 9309 2.2.3: "*" may match the text a later literal part also occurs in; the last part must end the path."""
    txt = b"User-agent: *\nDisallow: /*a*b$\n"
    assert not allowed(txt, "bot", "/xaxbxab")
    assert not allowed(txt, "bot", "/ab")
    assert allowed(txt, "bot", "/ba")
    assert allowed(txt, "bot", "/abx")


def test_dollar_in_the_middle_is_a_literal():
    """RFC 9309 2.2.3: "$" is the end of the pattern only at its end; elsewhere it is a character."""
    txt = b"User-agent: *\nDisallow: /a$b\n"
    assert not allowed(txt, "bot", "/a$b")
    assert allowed(txt, "bot", "/a")


def test_special_characters_matched_verbatim_use_percent_encoding():
    """RFC 9309 2.2.3: "If crawlers match special characters verbatim in the URI, crawlers SHOULD use % encoding"."""
    txt = b"User-agent: *\nDisallow: /path/file-with-a-%2A.html\nDisallow: /path/foo-%24\n"
    assert not allowed(txt, "bot", "https://www.example.com/path/file-with-a-*.html", mode="rfc")
    assert allowed(txt, "bot", "https://www.example.com/path/file-with-a-x.html", mode="rfc")
    assert not allowed(txt, "bot", "https://www.example.com/path/foo-$", mode="rfc")


def test_comment_designator():
    """RFC 9309 2.2.3: "#" designates a line comment."""
    txt = b"User-agent: * # everyone\n# Disallow: /a\nDisallow: /b # not /c\n"
    assert allowed(txt, "bot", "/a")
    assert not allowed(txt, "bot", "/b")
    assert allowed(txt, "bot", "/c")


# ---- 2.2.2: percent-encoding


def test_non_ascii_paths_are_percent_encoded_before_comparison():
    """RFC 9309 2.2.2: octets outside ASCII MUST be percent-encoded (table: /foo/bar/U+E38384 = /foo/bar/%E3%83%84)."""
    raw = "User-agent: *\nDisallow: /foo/bar/\u30c4\n".encode()
    assert not allowed(raw, "bot", "/foo/bar/%E3%83%84", mode="rfc")
    assert not allowed(raw, "bot", "/foo/bar/\u30c4", mode="rfc")
    enc = b"User-agent: *\nDisallow: /foo/bar/%E3%83%84\n"
    assert not allowed(enc, "bot", "/foo/bar/\u30c4", mode="rfc")
    assert not allowed(enc, "bot", "http://e.com/foo/bar/%e3%83%84", mode="rfc")   # hex case does not matter


def test_percent_encoded_unreserved_octets_are_decoded():
    """RFC 9309 2.2.2 (table: /foo/bar/%62%61%7A matches /foo/bar/baz): unreserved octets are unencoded."""
    txt = b"User-agent: *\nDisallow: /foo/bar/%62%61%7A\n"
    assert not allowed(txt, "bot", "/foo/bar/baz", mode="rfc")
    txt2 = b"User-agent: *\nDisallow: /foo/bar/baz\n"
    assert not allowed(txt2, "bot", "/foo/bar/%62%61%7a", mode="rfc")


def test_percent_encoded_reserved_octets_stay_encoded():
    """RFC 9309 2.2.2: a %-encoded ASCII octet is unencoded "unless it is a reserved character": %2F is not /."""
    txt = b"User-agent: *\nDisallow: /a%2Fb\n"
    assert not allowed(txt, "bot", "/a%2Fb", mode="rfc")
    assert not allowed(txt, "bot", "/a%2fb", mode="rfc")
    assert allowed(txt, "bot", "/a/b", mode="rfc")
    txt2 = b"User-agent: *\nDisallow: /a/b\n"
    assert allowed(txt2, "bot", "/a%2Fb", mode="rfc")


def test_normalize_path_forms():
    """RFC 9309 2.2.2: the encoded forms of the RFC's table, and upper-case hex for every kept escape."""
    assert normalize_path("/foo/bar/\u30c4") == "/foo/bar/%E3%83%84"
    assert normalize_path("/foo/bar/%e3%83%84") == "/foo/bar/%E3%83%84"
    assert normalize_path("/foo/bar/%62%61%7A") == "/foo/bar/baz"
    assert normalize_path("/a%2fb") == "/a%2Fb"
    assert normalize_path("/a b") == "/a%20b"
    assert normalize_path("/100%") == "/100%25"
    assert normalize_path("/x*y$") == "/x%2Ay%24"
    assert normalize_path("/x*y$", pattern=True) == "/x*y$"


# ---- 2.3: the robots.txt URI


def test_robots_url():
    """RFC 9309 2.3: the URI is "scheme:[//authority]/robots.txt" (lower-case name, top-level path)."""
    assert robots_url("https://www.Example.com:8443/a/b?c") == "https://www.example.com:8443/robots.txt"
    assert robots_url("http://user:pw@e.com/x") == "http://e.com/robots.txt"
    assert robots_url("HTTP://E.COM") == "http://e.com/robots.txt"


# ---- 2.5: the parsing limit


def test_parse_limit_is_500_kib():
    """RFC 9309 2.5: the parsing limit "MUST be at least 500 kibibytes": a rule within 500 KiB counts."""
    pad = b"# " + b"x" * 1000 + b"\n"
    head = b"User-agent: *\n"
    body = head + pad * ((500 * 1024 - 200) // len(pad))
    inside = body + b"Disallow: /inside\n"
    assert len(inside) <= 500 * 1024
    rt = RobotsTxt.parse(inside + pad * 200 + b"Disallow: /outside\n")
    assert rt.truncated
    assert not rt.allowed("/inside", "bot")
    assert rt.allowed("/outside", "bot")


def test_line_cut_by_the_limit_is_dropped():
    """RFC 9309 2.5 with 2.3.1.5: a rule cut in two by the limit is not a parseable rule (dropped, not shortened)."""
    head = b"User-agent: *\n"
    line = b"Allow: /abcdefgh\n"
    limit = len(head) + 10   # cuts "Allow: /ab" out of the line
    rt = RobotsTxt.parse(head + line + b"Disallow: /\n", max_bytes=limit)
    assert not rt.rules_for("bot").rules
    assert rt.allowed("/ab", "bot") and rt.allowed("/x", "bot")


# ---- Crawl-delay (not RFC 9309: 2.2.4 "other records")


def test_crawl_delay_per_group():
    """RFC 9309 2.2.4: other records may be interpreted; Crawl-delay belongs to the group it is in."""
    txt = b"User-agent: *\nCrawl-delay: 2.5\nDisallow: /x\n\nUser-agent: slowbot\nCrawl-delay: 10\n"
    rt = RobotsTxt.parse(txt)
    assert rt.crawl_delay("otherbot") == 2.5
    assert rt.crawl_delay("slowbot") == 10
    assert RobotsTxt.parse(b"User-agent: *\nDisallow: /\n").crawl_delay("bot") is None
    assert RobotsTxt.parse(b"User-agent: *\nCrawl-delay: soon\n").crawl_delay("bot") is None
    # Crawl-delay between user-agent lines does not split the group (2.2.4: must not terminate a group)
    rt2 = RobotsTxt.parse(b"User-agent: a\nCrawl-delay: 3\nUser-agent: b\nDisallow: /x\n")
    assert rt2.crawl_delay("b") == 3 and not rt2.allowed("/x", "a")


# ---- 2.3.1 access results, 2.4 caching: RobotsCache


class FakeSite:
    """A fetch callable answering from a dict url -> (status, headers, body), recording every request."""

    def __init__(self, pages):
        self.pages = pages
        self.log = []

    def __call__(self, url):
        self.log.append(url)
        p = self.pages.get(url)
        if p is None:
            raise ConnectionRefusedError(url)
        if isinstance(p, BaseException):
            raise p
        status, headers, body = p
        return status, headers, body, url


class Clock:
    def __init__(self, t=1000.0):
        self.t = t

    def __call__(self):
        return self.t


def cache(**kw):
    clock = Clock()
    return RobotsCache("TestBot/1.0", clock=clock, **kw), clock


def test_success_rules_are_followed():
    """RFC 9309 2.3.1.1: "If the crawler successfully downloads the robots.txt file, the crawler MUST follow" it."""
    site = FakeSite({"http://a.test/robots.txt": (200, {}, b"User-agent: testbot\nDisallow: /no\n")})
    c, _ = cache()
    assert not c.allowed("http://a.test/no/1", site)
    assert c.allowed("http://a.test/yes", site)
    assert c.entry("http://a.test/").status == FOUND
    assert site.log == ["http://a.test/robots.txt"]   # one fetch for both decisions


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 451])
def test_4xx_unavailable_allows_everything(status):
    """RFC 9309 2.3.1.3: with a 4xx ("unavailable") status "the crawler MAY access any resources on the server"."""
    site = FakeSite({"http://a.test/robots.txt": (status, {}, b"User-agent: *\nDisallow: /\n")})
    c, _ = cache()
    assert c.allowed("http://a.test/x", site)
    assert c.entry("http://a.test/").status == UNAVAILABLE


@pytest.mark.parametrize("status", [500, 502, 503, 504, 599])
def test_5xx_unreachable_disallows_everything(status):
    """RFC 9309 2.3.1.4: server errors (500-599) mean the robots.txt is undefined: "MUST assume complete disallow"."""
    site = FakeSite({"http://a.test/robots.txt": (status, {}, b"")})
    c, _ = cache()
    assert not c.allowed("http://a.test/", site)
    assert not c.allowed("http://a.test/x", site)
    assert c.entry("http://a.test/").status == UNREACHABLE


def test_429_is_treated_as_unreachable():
    """RFC 9309 2.3.1.3 says "unavailable" codes are those saying the resource is unavailable; 429 says the
    server is overloaded, so (as Google does) it is a server error under 2.3.1.4: complete disallow."""
    site = FakeSite({"http://a.test/robots.txt": (429, {"Retry-After": "60"}, b"")})
    c, _ = cache()
    assert not c.allowed("http://a.test/x", site)
    assert c.entry("http://a.test/").status == UNREACHABLE


def test_network_error_is_unreachable():
    """RFC 9309 2.3.1.4: unreachable "due to server or network errors" -> complete disallow."""
    for err in (ConnectionRefusedError("refused"), TimeoutError("timed out"), OSError("reset")):
        site = FakeSite({"http://a.test/robots.txt": err})
        c, _ = cache()
        assert not c.allowed("http://a.test/x", site)
        assert c.entry("http://a.test/").status == UNREACHABLE
    c, _ = cache()
    assert not c.allowed("http://a.test/x", lambda url: (0, {}, b"", url))


def test_unreachable_is_retried_sooner_than_24h():
    """RFC 9309 2.3.1.4: once the robots.txt becomes reachable again, its rules replace the complete disallow."""
    site = FakeSite({"http://a.test/robots.txt": (503, {}, b"")})
    c, clock = cache(retry_unreachable=600)
    assert not c.allowed("http://a.test/x", site)
    site.pages["http://a.test/robots.txt"] = (200, {}, b"User-agent: *\nDisallow: /private\n")
    clock.t += 599
    assert not c.allowed("http://a.test/x", site)   # still the cached disallow
    clock.t += 2
    assert c.allowed("http://a.test/x", site)
    assert not c.allowed("http://a.test/private", site)
    assert len(site.log) == 2


def test_unreachable_keeps_a_previous_copy_in_force():
    """RFC 9309 2.4: the cached copy SHOULD NOT be used for more than 24 hours "unless the robots.txt file is
    unreachable"; 2.3.1.4: crawlers MAY "continue to use a cached copy"."""
    site = FakeSite({"http://a.test/robots.txt": (200, {}, b"User-agent: *\nDisallow: /private\n")})
    c, clock = cache()
    assert c.allowed("http://a.test/x", site)
    site.pages["http://a.test/robots.txt"] = (500, {}, b"")
    clock.t += 24 * 3600 + 1
    assert c.allowed("http://a.test/x", site)          # old rules still apply
    assert not c.allowed("http://a.test/private", site)
    e = c.entry("http://a.test/")
    assert e.status == UNREACHABLE and e.stale
    clock.t += 31 * 86400                               # past the 30-day limit: complete disallow
    assert not c.allowed("http://a.test/x", site)


def test_redirects_are_followed_in_the_context_of_the_initial_authority():
    """RFC 9309 2.3.1.2: follow redirects "even across authorities"; the rules are "followed in the context of the
    initial authority"."""
    site = FakeSite({
        "http://a.test/robots.txt": (301, {"Location": "https://www.a.test/robots.txt"}, b""),
        "https://www.a.test/robots.txt": (302, [("location", "/real-robots.txt")], b""),
        "https://www.a.test/real-robots.txt": (200, {}, b"User-agent: *\nDisallow: /secret\n"),
    })
    c, _ = cache()
    assert not c.allowed("http://a.test/secret/1", site)
    assert c.allowed("http://a.test/open", site)
    e = c.entry("http://a.test/x")
    assert e.status == FOUND
    assert e.chain == ["http://a.test/robots.txt", "https://www.a.test/robots.txt",
                       "https://www.a.test/real-robots.txt"]
    assert c.entry("https://www.a.test/") is None        # the target authority got nothing cached


def redirect_chain(n, final=(200, {}, b"User-agent: *\nDisallow: /\n")):
    pages = {}
    for i in range(n):
        pages[f"http://a.test/r{i}" if i else "http://a.test/robots.txt"] = (307, {"Location": f"/r{i + 1}"}, b"")
    pages[f"http://a.test/r{n}"] = final
    return FakeSite(pages)


def test_five_redirects_are_followed():
    """RFC 9309 2.3.1.2: "crawlers SHOULD follow at least five consecutive redirects"."""
    site = redirect_chain(5)
    c, _ = cache()
    assert not c.allowed("http://a.test/x", site)
    assert c.entry("http://a.test/").status == FOUND
    assert len(site.log) == 6


def test_more_than_five_redirects_is_unavailable():
    """RFC 9309 2.3.1.2: "If there are more than five consecutive redirects, crawlers MAY assume that the
    robots.txt file is unavailable" (2.3.1.3: access allowed)."""
    site = redirect_chain(6)
    c, _ = cache()
    assert c.allowed("http://a.test/x", site)
    assert c.entry("http://a.test/").status == UNAVAILABLE
    assert len(site.log) == 6    # the sixth redirect is not followed


def test_redirect_to_a_404_is_unavailable():
    """RFC 9309 2.3.1.2 then 2.3.1.3: the result at the end of the redirects decides."""
    site = FakeSite({"http://a.test/robots.txt": (302, {"Location": "http://b.test/robots.txt"}, b""),
                     "http://b.test/robots.txt": (404, {}, b"")})
    c, _ = cache()
    assert c.allowed("http://a.test/x", site)


def test_cache_is_used_and_expires_after_24_hours():
    """RFC 9309 2.4: crawlers MAY cache and "SHOULD NOT use the cached version for more than 24 hours"."""
    site = FakeSite({"http://a.test/robots.txt": (200, {}, b"User-agent: *\nDisallow: /x\n")})
    c, clock = cache()
    assert not c.allowed("http://a.test/x", site)
    clock.t += 24 * 3600 - 1
    site.pages["http://a.test/robots.txt"] = (200, {}, b"")
    assert not c.allowed("http://a.test/x", site)
    assert len(site.log) == 1
    assert c.needs_fetch("http://a.test/y") is None
    clock.t += 1
    assert c.needs_fetch("http://a.test/y") == "http://a.test/robots.txt"
    assert c.allowed("http://a.test/x", site)
    assert len(site.log) == 2


def test_cache_lifetime_cannot_exceed_24_hours():
    """RFC 9309 2.4: a lifetime above 24 hours is refused."""
    with pytest.raises(ValueError):
        RobotsCache("bot", max_age=24 * 3600 + 1)


def test_cache_is_per_authority():
    """RFC 9309 2.3: robots.txt is per "scheme:[//authority]": other scheme, host or port, other file."""
    site = FakeSite({"http://a.test/robots.txt": (200, {}, b"User-agent: *\nDisallow: /\n"),
                     "https://a.test/robots.txt": (404, {}, b""),
                     "http://a.test:8080/robots.txt": (200, {}, b"")})
    c, _ = cache()
    assert not c.allowed("http://a.test/x", site)
    assert c.allowed("https://a.test/x", site)
    assert c.allowed("http://a.test:8080/x", site)
    assert len(site.log) == 3


def test_crawl_delay_from_cache_and_ignore_policy():
    """RFC 9309 2.2.4 (Crawl-delay is an "other record"); policy "ignore" fetches nothing and allows everything."""
    site = FakeSite({"http://a.test/robots.txt": (200, {}, b"User-agent: *\nCrawl-delay: 4\nDisallow: /\n")})
    c, _ = cache()
    assert c.crawl_delay("http://a.test/") is None
    c.allowed("http://a.test/", site)
    assert c.crawl_delay("http://a.test/") == 4
    ig, _ = cache(policy="ignore")
    assert ig.allowed("http://a.test/x", site)
    assert ig.needs_fetch("http://a.test/x") is None
    assert len(site.log) == 1


def test_async_fetch_shares_one_request():
    """RFC 9309 2.4 (caching) with an async fetch: concurrent decisions for one authority cost one request."""
    calls = []

    async def afetch(url):
        calls.append(url)
        await asyncio.sleep(0)
        return 200, {}, b"User-agent: *\nDisallow: /no\n", url

    async def main():
        c = RobotsCache("bot", clock=Clock())
        ds = await asyncio.gather(*(c.adecide(f"http://a.test/{p}", afetch) for p in ("no", "yes", "no/2")))
        return [d.allowed for d in ds]

    assert asyncio.run(main()) == [False, True, False]
    assert calls == ["http://a.test/robots.txt"]


def test_async_network_error_is_unreachable():
    """RFC 9309 2.3.1.4 through the async path."""
    async def afetch(url):
        raise asyncio.TimeoutError()

    async def main():
        c = RobotsCache("bot", clock=Clock())
        return await c.adecide("http://a.test/x", afetch)

    assert not asyncio.run(main()).allowed


def test_update_with_a_result_the_crawler_fetched():
    """RFC 9309 2.3.1.1/2.3.1.3: a crawler that fetches robots.txt itself hands the result to the cache."""
    c, _ = cache()
    assert c.needs_fetch("http://a.test/x") == "http://a.test/robots.txt"
    c.update("http://a.test/x", (200, {}, b"User-agent: *\nDisallow: /x\n", "http://a.test/robots.txt"))
    assert c.cached_decision("http://a.test/x").allowed is False
    c.update("http://b.test/x", (404, {}, b"", "http://b.test/robots.txt"))
    assert c.cached_decision("http://b.test/x").allowed is True
    c.update("http://d.test/x", None)
    assert c.cached_decision("http://d.test/x").allowed is False


# ---- page-level directives (policy obey)


def test_meta_robots_and_x_robots_tag():
    """Heritrix "obey" honours meta robots; "robotsTxtOnly" ignores it (not RFC 9309, which covers robots.txt)."""
    html = b'<html><head><META NAME="Robots" CONTENT="NoFollow, noarchive"></head></html>'
    d = meta_robots(html)
    assert d.nofollow and d.noarchive and not d.noindex
    assert meta_robots(b"<meta name='testbot' content='none'>", "TestBot/1").noindex
    assert not meta_robots(b"<meta name='otherbot' content='none'>", "TestBot/1").nofollow
    assert x_robots_tag({"X-Robots-Tag": "noindex"}).noindex
    assert x_robots_tag([("x-robots-tag", "testbot: nofollow")], "testbot").nofollow
    assert not x_robots_tag([("x-robots-tag", "otherbot: nofollow")], "testbot").nofollow
    assert x_robots_tag([("X-Robots-Tag", "unavailable_after: 25 Jun 2010 15:00:00 PST, nofollow")]).nofollow
    hdrs = {"Content-Type": "text/html", "X-Robots-Tag": "noindex"}
    assert page_directives("obey", hdrs, html).nofollow
    assert not page_directives("robotsTxtOnly", hdrs, html).nofollow
    assert not page_directives("ignore", hdrs, html).noindex


# ---- the CLI


def run_cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "warchive", "robots", *args], input=stdin,
                          capture_output=True, timeout=60)


def test_cli_prints_allowed_or_disallowed(tmp_path):
    """RFC 9309 5.1 through `warchive robots FILE --agent NAME URL...`: one word per URL, in order."""
    f = tmp_path / "robots.txt"
    f.write_bytes(RFC_5_1)
    r = run_cli(str(f), "--agent", "foobot", "https://e.com/example/page.html", "https://e.com/x",
                "/example/allowed.gif")
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().split() == ["allowed", "disallowed", "allowed"]
    r = run_cli("-", "-a", "Other/1.0", "/example/y", "/publications/", stdin=RFC_5_1)
    assert r.stdout.decode().split() == ["disallowed", "allowed"]
    r = run_cli(str(tmp_path / "missing.txt"), "--agent", "x", "/")
    assert r.returncode == 1 and b"no such file" in r.stderr


# ---- the matcher against a brute-force reference


from hypothesis import example, given, settings, strategies as st  # noqa: E402

_alpha = st.text(alphabet="ab*", max_size=6)


@settings(max_examples=500, deadline=None)
@given(_alpha, st.booleans(), st.text(alphabet="ab", max_size=8))
@example("a*a", True, "a")
def test_rule_matching_equals_the_brute_force_reading(body, anchored, path):
    """RFC 9309 2.2.2/2.2.3: the match starts at the path's first octet; "*" is 0 or more characters; "$" ends."""
    from warchive.capture.robots import Rule

    pattern = "/" + body + ("$" if anchored else "")
    assert Rule(pattern, False).matches("/" + path) == reference_match(pattern, "/" + path)


def test_star_user_agent_needs_to_stand_alone():
    """RFC 9309 2.2.1: the "*" value; "*bot" is neither "*" nor a product token."""
    txt = b"User-agent: *bot\nDisallow: /\n"
    assert allowed(txt, "somebot", "/x")
    assert not allowed(b"User-agent: * # all\nDisallow: /\n", "somebot", "/x")


def test_robots_url_needs_an_absolute_url():
    """RFC 9309 2.3: the robots.txt URI is built from "scheme:[//authority]"; a bare path has none."""
    from warchive.errors import UrlError

    with pytest.raises(UrlError):
        robots_url("/just/a/path")
