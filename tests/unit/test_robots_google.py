"""robots.txt as Google's parser reads it (the default), and the strict RFC 9309 reading beside it.

Each test names its source: a function of google/robotstxt's robots.cc, a test of its
robots_test.cc (the behaviour it checks, described here in our own words with our own files
and URLs), a section of Google's "How Google interprets the robots.txt specification"
(developers.google.com/search/docs/crawling-indexing/robots/robots_txt), or a section of RFC
9309. Where the two readings differ, both are asserted. Expected answers come from those
sources, never from our own output.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from warchive.capture.fetch import Fetcher
from warchive.capture.robots import (GOOGLE_LINE_BYTES, MODES, RobotsTxt, google_pattern, request_path,
                                     url_path)
from warchive.capture.robots_cache import RobotsCache

BOTH = pytest.mark.parametrize("mode", MODES)


def allowed(txt: bytes, agent: str, url: str, mode: str = "google") -> bool:
    return RobotsTxt.parse(txt, mode=mode).allowed(url, agent)


def rfc(txt: bytes, agent: str, url: str) -> bool:
    return allowed(txt, agent, url, "rfc")


def test_google_is_the_default_reading():
    """warchive reads robots.txt as Google does unless told otherwise."""
    assert RobotsTxt.parse(b"").mode == "google"
    assert RobotsCache("bot").mode == "google"
    with pytest.raises(ValueError):
        RobotsTxt.parse(b"", mode="bing")
    with pytest.raises(ValueError):
        RobotsCache("bot", mode="strict")


# ---- 1. the user-agent line is read up to its first non-token character


AGENT_WITH_SPACE = (b"User-Agent: *\nDisallow: /\n"
                    b"User-Agent: Zed Crawler\nAllow: /open/\nDisallow: /\n")


def test_user_agent_line_read_up_to_the_first_space():
    """robots_test.cc GoogleOnly_AcceptUserAgentUpToFirstSpace; robots.cc RobotsMatcher::HandleUserAgent and
    ExtractUserAgent: a line "Zed Crawler" names the crawler "zed" (case-insensitively), so zed gets that
    group and not the '*' one."""
    assert allowed(AGENT_WITH_SPACE, "zed", "http://h.test/open/page")
    assert allowed(AGENT_WITH_SPACE, "ZED", "http://h.test/open/page")
    assert not allowed(AGENT_WITH_SPACE, "zed", "http://h.test/closed")
    assert not allowed(AGENT_WITH_SPACE, "crawler", "http://h.test/open/page")   # the second word names nobody


def test_user_agent_line_with_space_names_nobody_in_rfc_mode():
    """RFC 9309 2.2.1 / 2.2 grammar: the value is a product-token (letters, "_", "-") or "*"; "Zed Crawler" is
    neither, so its group matches no crawler and zed obeys the '*' group."""
    assert not rfc(AGENT_WITH_SPACE, "zed", "http://h.test/open/page")
    # the line still starts a group: its Allow does not leak into the '*' group before it
    assert not rfc(AGENT_WITH_SPACE, "otherbot", "http://h.test/open/page")


def test_user_agent_line_with_version_or_other_characters():
    """robots.cc ExtractUserAgent (the leading run of [a-zA-Z_-]); RFC 9309 2.2.1 for the strict side."""
    for line in (b"zedbot/2.0", b"zedbot(beta)", b"zedbot.example", b"ZedBot 1"):
        txt = b"User-agent: " + line + b"\nDisallow: /x\n\nUser-agent: *\nDisallow: /\n"
        assert not allowed(txt, "zedbot", "/x") and allowed(txt, "zedbot", "/y"), line
        assert not rfc(txt, "zedbot", "/y"), line          # not a product token: the '*' group applies


def test_user_agent_line_values_are_case_insensitive():
    """robots_test.cc ID_UserAgentValueCaseInsensitive; RFC 9309 2.2.1 ("case-insensitive matching")."""
    for value in (b"QUUX", b"quux", b"qUuX"):
        txt = b"User-agent: " + value + b"\nAllow: /in/\nDisallow: /\n"
        for mode in MODES:
            assert allowed(txt, "Quux", "/in/a", mode) and not allowed(txt, "quux", "/out", mode)


def test_star_followed_by_a_space_is_the_global_group():
    """robots.cc RobotsMatcher::HandleUserAgent: '*' followed by whitespace and more text is still the global
    group in Google's reading; RFC 9309's grammar allows only "*" (then a comment)."""
    txt = b"User-agent: * all robots\nDisallow: /private\n"
    assert not allowed(txt, "anybot", "/private/a")
    assert rfc(txt, "anybot", "/private/a")
    txt2 = b"User-agent: *   # all robots\nDisallow: /private\n"
    for mode in MODES:
        assert not allowed(txt2, "anybot", "/private/a", mode)


def test_crawler_name_is_the_first_product_of_its_user_agent_string():
    """A deliberate difference from robots_test.cc GoogleOnly_AcceptUserAgentUpToFirstSpace's second check:
    Google's matcher compares the name its caller passes whole (robots.h asks for a bare product token, so a
    caller passing "Zed Crawler" gets only the '*' group). Our API takes the crawler's User-Agent string and
    extracts the product token itself (RFC 9309 2.2.1's example: "ExampleBot/1.1 (+https://...)" is
    ExampleBot; an HTTP User-Agent is products and comments), so "Zed Crawler" is the crawler "zed"."""
    assert allowed(AGENT_WITH_SPACE, "Zed Crawler", "http://h.test/open/page")
    assert allowed(AGENT_WITH_SPACE, "Zed/3.1 (+https://zed.test/bot)", "http://h.test/open/page")
    assert RobotsTxt.parse(AGENT_WITH_SPACE).rules_for("Zed Crawler").matched == "agent"


# ---- 2. allowing .../index.html allows the directory


INDEX = b"User-Agent: *\nAllow: /docs/index.html\nDisallow: /\n"


def test_allowed_index_html_allows_its_directory():
    """robots_test.cc GoogleOnly_IndexHTMLisDirectory; robots.cc RobotsMatcher::HandleAllow: an Allow whose last
    path segment starts with "index.htm" also allows the directory itself, exactly."""
    assert allowed(INDEX, "anybot", "http://h.test/docs/")
    assert allowed(INDEX, "anybot", "http://h.test/docs/index.html")
    assert allowed(INDEX, "anybot", "http://h.test/docs/index.html?lang=de")   # the rule itself, a prefix
    assert not allowed(INDEX, "anybot", "http://h.test/docs/index.htm")        # shorter than the rule
    assert not allowed(INDEX, "anybot", "http://h.test/docs/other.html")       # the directory, exactly
    assert not allowed(INDEX, "anybot", "http://h.test/docs/?q=1")
    assert not allowed(INDEX, "anybot", "http://h.test/elsewhere")


def test_index_html_rule_is_google_only():
    """RFC 9309 2.2.2 has no such rule: /docs/ matches only "Disallow: /"."""
    assert not rfc(INDEX, "anybot", "http://h.test/docs/")
    assert rfc(INDEX, "anybot", "http://h.test/docs/index.html")


def test_index_rule_variants():
    """robots.cc RobotsMatcher::HandleAllow: the segment need only start with "/index.htm" (.htm, .html, more);
    it applies to Allow only; the decision names the rule it came from."""
    txt = b"User-agent: *\nDisallow: /\nAllow: /a/index.htm\nAllow: /b/index.html5\nAllow: /c/*/index.html\n"
    assert allowed(txt, "bot", "/a/") and allowed(txt, "bot", "/b/") and allowed(txt, "bot", "/c/x/")
    assert not allowed(txt, "bot", "/c/")
    d = RobotsTxt.parse(txt).decide("/a/", "bot")
    assert d.rule is not None and d.rule.pattern == "/a/$" and "from /a/index.htm" in d.reason
    dis = b"User-agent: *\nDisallow: /d/index.html\n"
    assert allowed(dis, "bot", "/d/")                      # a Disallow of index.html says nothing of /d/
    no_slash = b"User-agent: *\nDisallow: /\nAllow: index.html\n"
    assert not allowed(no_slash, "bot", "/")               # no "/" in the pattern: no directory to allow


# ---- 3. percent-encoding compared as Google compares it


def test_raw_non_ascii_rule_is_encoded_the_url_is_not():
    """robots_test.cc ID_Encoding; robots.cc MaybeEscapePattern (a rule's octets above 0x7F become %XX) and
    RobotsMatcher::AllowedByRobots (the URL is not normalised: its caller gives it escaped)."""
    txt = "User-agent: *\nDisallow: /\nAllow: /caf\u00e9/\n".encode()
    assert allowed(txt, "bot", "http://h.test/caf%C3%A9/menu")
    assert not allowed(txt, "bot", "http://h.test/caf\u00e9/menu")
    for url in ("http://h.test/caf%C3%A9/menu", "http://h.test/caf\u00e9/menu"):
        assert rfc(txt, "bot", url)   # RFC 9309 2.2.2: both sides encoded before comparison


def test_raw_non_ascii_url_does_not_match_an_encoded_rule():
    """robots_test.cc ID_Encoding (the %E3%83%84 case); RFC 9309 2.2.2's table for the strict side."""
    txt = b"User-agent: *\nDisallow: /\nAllow: /menu/%E3%83%84\n"
    assert allowed(txt, "bot", "/menu/%E3%83%84")
    assert not allowed(txt, "bot", "/menu/\u30c4")
    assert rfc(txt, "bot", "/menu/\u30c4")


def test_escaped_unreserved_characters_are_not_decoded():
    """robots_test.cc ID_Encoding (%62%61%7A is not "baz" for Google: plain string comparison); RFC 9309 2.2.2's
    table says /foo/bar/%62%61%7A matches /foo/bar/baz."""
    txt = b"User-agent: *\nDisallow: /\nAllow: /shop/%61%62%63\n"
    assert not allowed(txt, "bot", "http://h.test/shop/abc")
    assert allowed(txt, "bot", "http://h.test/shop/%61%62%63")
    assert rfc(txt, "bot", "http://h.test/shop/abc")
    plain = b"User-agent: *\nDisallow: /\nAllow: /shop/abc\n"
    assert not allowed(plain, "bot", "/shop/%61%62%63")
    assert rfc(plain, "bot", "/shop/%61%62%63")


def test_escape_hex_case_is_normalised_in_rules_only():
    """robots_test.cc TestMaybeEscapePattern ("%aa" becomes "%AA" in a rule); the URL is compared as given
    (RobotsMatcher::AllowedByRobots), so a lower-case escape in the URL does not match; RFC 9309 2.2.2 side:
    an escape is an octet whatever the case of its hex."""
    txt = b"User-agent: *\nDisallow: /x%2fy\n"
    assert not allowed(txt, "bot", "/x%2Fy")
    assert allowed(txt, "bot", "/x%2fy")
    assert not rfc(txt, "bot", "/x%2fy") and not rfc(txt, "bot", "/x%2Fy")


def test_google_pattern_forms():
    """robots_test.cc TestMaybeEscapePattern: what a rule becomes; nothing but high octets and hex case change."""
    assert google_pattern("/a/b/c") == "/a/b/c"
    assert google_pattern("http://www.example.com") == "http://www.example.com"
    assert google_pattern("\u00e1") == "%C3%A1"
    assert google_pattern("%aa") == "%AA"
    assert google_pattern("/%62%61%7a") == "/%62%61%7A"
    assert google_pattern(b"/\xff") == "/%FF"                 # bytes that are not UTF-8 too
    assert google_pattern("/a b*$%") == "/a b*$%"             # spaces, wildcards, a stray % stay


def test_special_characters_written_as_escapes():
    """RFC 9309 2.2.3 ("SHOULD use % encoding" to match "*" or "$" verbatim) for the strict side; Google's
    matcher compares a rule's %2A with the URL's octets as they are (robots.cc Matches), so a URL holding a
    literal "*" is matched only by a "*" (the wildcard)."""
    txt = b"User-agent: *\nDisallow: /f-%2A.html\nDisallow: /g-%24\n"
    assert allowed(txt, "bot", "/f-*.html") and allowed(txt, "bot", "/g-$")
    assert not allowed(txt, "bot", "/f-%2A.html")
    assert not rfc(txt, "bot", "/f-*.html") and not rfc(txt, "bot", "/g-$")
    mid = b"User-agent: *\nDisallow: /a$b\n"     # a "$" not at the end is a character in both readings
    for mode in MODES:
        assert not allowed(mid, "bot", "/a$b", mode) and allowed(mid, "bot", "/a", mode)


def test_request_path_is_what_the_fetcher_sends():
    """robots.cc RobotsMatcher::AllowedByRobots leaves escaping to the caller; the crawler's caller is
    RobotsCache, which matches the request target warchive.capture.fetch writes (compared here with it)."""
    f = Fetcher()
    for url in ("http://h.test/caf\u00e9/?q=\u30c4&x=a b", "http://h.test", "http://h.test/a%2Fb?c#frag",
                "http://h.test/\u00e9#\u00e9", "https://h.test:8443/x y/z"):
        line = f.build_request(url)[0].split(b"\r\n", 1)[0]
        assert line.split(b" ")[1].decode() == request_path(url), url


def test_cache_matches_the_url_as_requested():
    """RobotsCache in Google's reading: a raw non-ASCII URL is sent %-encoded, so the encoded rule (or the raw
    rule Google encodes, MaybeEscapePattern) applies to it; robots_test.cc ID_Encoding for the comparison."""
    body = "User-agent: *\nDisallow: /caf\u00e9\nDisallow: /menu/%E3%83%84\n".encode()
    site = {"http://h.test/robots.txt": (200, {}, body, "http://h.test/robots.txt")}
    for mode in MODES:
        c = RobotsCache("bot/1", mode=mode)
        assert not c.allowed("http://h.test/caf\u00e9", site.__getitem__)
        assert not c.allowed("http://h.test/menu/\u30c4", site.__getitem__)
        assert not c.allowed("http://h.test/menu/%E3%83%84", site.__getitem__)
        assert c.allowed("http://h.test/menu/", site.__getitem__)
    g = RobotsCache("bot/1")
    assert g.allowed("http://h.test/menu/%e3%83%84", site.__getitem__)    # compared as given (hex case)


# ---- Google's other documented matching rules (both readings agree unless said)


@BOTH
def test_longest_match_wins(mode):
    """robots_test.cc ID_LongestMatch; Google's doc, "Order of precedence for rules"; RFC 9309 2.2.2."""
    page = "http://h.test/dir/page.html"
    assert not allowed(b"user-agent: bot\ndisallow: /dir/page.html\nallow: /dir/\n", "bot", page, mode)
    a = b"user-agent: bot\nallow: /dir/page.html\ndisallow: /dir/\n"
    assert allowed(a, "bot", page, mode) and not allowed(a, "bot", "http://h.test/dir/", mode)
    b = b"user-agent: bot\ndisallow: /dir\nallow: /dir/\n"
    assert not allowed(b, "bot", "http://h.test/dir", mode) and allowed(b, "bot", "http://h.test/dir/", mode)
    c = b"user-agent: bot\nallow: /art\ndisallow: /*.pdf\n"     # the wildcard rule is longer
    assert not allowed(c, "bot", "/art.pdf", mode) and allowed(c, "bot", "/art", mode)
    d = b"user-agent: bot\nallow: /dir/page.\ndisallow: /*.html\n"
    assert allowed(d, "bot", page, mode) and not allowed(d, "bot", "/dir/other.html", mode)


@BOTH
def test_allow_wins_a_tie(mode):
    """robots_test.cc ID_LongestMatch ("the least strict rule"); Google's doc, "Order of precedence for rules";
    RFC 9309 2.2.2."""
    for txt in (b"user-agent: bot\ndisallow: /\nallow: /\n", b"user-agent: bot\nallow: /same\ndisallow: /same\n",
                b"user-agent: bot\ndisallow:\nallow:\n"):
        assert allowed(txt, "bot", "/same/thing", mode)


@BOTH
def test_documented_path_examples(mode):
    """robots_test.cc GoogleOnly_DocumentationChecks; Google's doc, "URL matching based on path values" (the
    /fish, /fish*, /fish/, /*.php, /*.php$ and /fish*.php tables), with our own URLs."""
    def ok(rule: bytes, path: str) -> bool:
        return allowed(b"user-agent: bot\ndisallow: /\nallow: " + rule + b"\n", "bot", "http://h.test" + path, mode)

    for rule in (b"/tea", b"/tea*"):
        for p in ("/tea", "/tea.html", "/tea/green.html", "/teapot", "/teapot/lid.html", "/tea.html?x=1"):
            assert ok(rule, p), (rule, p)
        for p in ("/Tea.asp", "/greentea", "/?q=tea", "/other"):
            assert not ok(rule, p), (rule, p)
    for p in ("/tea/", "/tea/green", "/tea/?green", "/tea/green.html"):
        assert ok(b"/tea/", p), p
    for p in ("/tea", "/tea.html", "/Tea/Green.html"):
        assert not ok(b"/tea/", p), p
    for p in ("/x.php", "/dir/x.php", "/dir/x.php?a=1", "//dir/y.php.old.html", "/x.php/", "/q?f=x.php/"):
        assert ok(b"/*.php", p), p
    for p in ("/php/", "/q?php", "/x.PHP"):
        assert not ok(b"/*.php", p), p
    for p in ("/x.php", "/dir/x.php"):
        assert ok(b"/*.php$", p), p
    for p in ("/x.php?a=1", "/x.php/", "/x.php5", "/php/", "/x?php", "/aphpa", "//x.PHP"):
        assert not ok(b"/*.php$", p), p
    assert ok(b"/tea*.php", "/tea.php") and ok(b"/tea*.php", "/teapot/green.php?a=1")
    assert not ok(b"/tea*.php", "/Tea.PHP")


@BOTH
def test_documented_precedence_examples(mode):
    """robots_test.cc GoogleOnly_DocumentationChecks; Google's doc, "Order of precedence for rules"."""
    assert allowed(b"user-agent: bot\nallow: /q\ndisallow: /\n", "bot", "/quiz", mode)
    assert allowed(b"user-agent: bot\nallow: /shelf\ndisallow: /shelf\n", "bot", "/shelf/book", mode)
    assert not allowed(b"user-agent: bot\nallow: /quiz\ndisallow: /*.htm\n", "bot", "/quiz.htm", mode)
    root = b"user-agent: bot\nallow: /$\ndisallow: /\n"
    assert allowed(root, "bot", "http://h.test/", mode) and not allowed(root, "bot", "/quiz.html", mode)


@BOTH
def test_wildcards_and_comments(mode):
    """robots_test.cc ID_SpecialCharacters; RFC 9309 2.2.3: "*" any run, "$" the end, "#" a comment."""
    a = b"User-agent: bot\nDisallow: /a/\nAllow: /a/*/d\n"
    for p in ("/a/x/d", "/a//d", "/a/x/y/d", "/a/x/dz"):
        assert allowed(a, "bot", p, mode), p
    for p in ("/a/d", "/a/x/e", "/a/"):                     # "*" needs "/a/" and "/d" around it
        assert not allowed(a, "bot", p, mode), p
    b = b"User-agent: bot\nDisallow: /a/b$\nAllow: /a/b/c\n"
    assert not allowed(b, "bot", "/a/b", mode)
    for p in ("/a/b/c", "/a/b/", "/a/b/d"):
        assert allowed(b, "bot", p, mode)
    c = b"User-agent: bot\n# Disallow: /\nDisallow: /a/b#c\nAllow: /\n"
    assert allowed(c, "bot", "/a/c", mode) and not allowed(c, "bot", "/a/b", mode)


@BOTH
def test_rule_values_are_case_sensitive(mode):
    """robots_test.cc ID_AllowDisallow_Value_CaseSensitive; RFC 9309 2.2.2 ("SHOULD be case sensitive")."""
    assert not allowed(b"user-agent: bot\ndisallow: /k/\n", "bot", "/k/1", mode)
    assert allowed(b"user-agent: bot\ndisallow: /K/\n", "bot", "/k/1", mode)


@BOTH
def test_rule_without_leading_slash(mode):
    """robots.cc Matches (a pattern is anchored at the path's first octet) and GetPathParamsQuery (a path always
    starts with "/"): "Disallow: tmp" matches no URL; a pattern starting with "*" still does. RFC 9309 2.2.2:
    "The matching MUST start with the first octet of the path"."""
    assert allowed(b"User-agent: *\nDisallow: tmp\n", "bot", "/tmp", mode)
    assert allowed(b"User-agent: *\nDisallow: tmp/\n", "bot", "/tmp/x", mode)
    assert not allowed(b"User-agent: *\nDisallow: *tmp\n", "bot", "/tmp", mode)


@BOTH
def test_groups_and_rules_outside_groups(mode):
    """robots_test.cc ID_LineSyntax_Groups: rules before any user-agent line are ignored, a user-agent line after
    rules starts a group, groups naming one crawler are merged, blank lines end nothing; RFC 9309 2.1, 2.2.1."""
    txt = (b"allow: /early/\n\n"
           b"user-agent: AlphaBot\ndisallow: /\nallow: /a/\n"
           b"user-agent: BetaBot\ndisallow: /\nallow: /b/\n\n\nallow: /b2/\n"
           b"user-agent: GammaBot\n\nuser-agent: AlphaBot\nallow: /c/\ndisallow: /\n")
    assert allowed(txt, "alphabot", "/a/1", mode) and allowed(txt, "alphabot", "/c/1", mode)
    assert not allowed(txt, "alphabot", "/b/1", mode)
    assert allowed(txt, "betabot", "/b/1", mode) and allowed(txt, "betabot", "/b2/1", mode)
    assert not allowed(txt, "betabot", "/c/1", mode)
    assert allowed(txt, "gammabot", "/c/1", mode) and not allowed(txt, "gammabot", "/a/1", mode)
    for bot in ("alphabot", "betabot", "gammabot"):
        assert not allowed(txt, bot, "/early/x", mode)


@BOTH
def test_other_records_do_not_close_a_group(mode):
    """robots_test.cc ID_LineSyntax_Groups_OtherRules; RFC 9309 2.2.4: Sitemap or an unknown record between
    user-agent lines leaves them one group."""
    for middle in (b"Sitemap: https://h.test/map.xml\n", b"Unknown-Record: whatever\n", b"Crawl-delay: 2\n"):
        txt = b"User-agent: AlphaBot\n" + middle + b"User-agent: *\nDisallow: /\n"
        assert not allowed(txt, "alphabot", "/", mode) and not allowed(txt, "otherbot", "/", mode), middle


@BOTH
def test_global_group_is_the_fallback(mode):
    """robots_test.cc ID_GlobalGroups_Secondary and GoogleOnly_SystemTest; Google's doc, "Order of precedence for
    user agents"; RFC 9309 2.2.1."""
    assert allowed(b"", "alphabot", "/x", mode)
    g = b"user-agent: *\nallow: /\nuser-agent: AlphaBot\ndisallow: /\n"
    assert not allowed(g, "alphabot", "/x", mode) and allowed(g, "betabot", "/x", mode)
    only = b"user-agent: AlphaBot\nallow: /\nuser-agent: BetaBot\ndisallow: /\n"
    assert allowed(only, "gammabot", "/x", mode)
    # a group naming the crawler, even one whose only rule is empty, hides the '*' groups
    # (robots.cc RobotsMatcher::disallow, ever_seen_specific_agent_)
    empty = b"user-agent: AlphaBot\ndisallow:\n\nuser-agent: *\ndisallow: /\n"
    assert allowed(empty, "alphabot", "/x", mode) and not allowed(empty, "betabot", "/x", mode)
    # the most specific group is used alone (robots_test.cc ID_LongestMatch, last case)
    both = b"User-agent: *\nDisallow: /g/\nUser-agent: AlphaBot\nDisallow: /s/\n"
    assert allowed(both, "alphabot", "/g/1", mode) and not allowed(both, "alphabot", "/s/1", mode)


@BOTH
def test_directive_names_are_case_insensitive(mode):
    """robots_test.cc ID_REPLineNamesCaseInsensitive; RFC 9309 2.2 (the grammar's strings are case-insensitive)."""
    for ua, al, di in ((b"USER-AGENT", b"ALLOW", b"DISALLOW"), (b"user-agent", b"allow", b"disallow"),
                       (b"uSeR-aGeNt", b"AlLoW", b"dIsAlLoW")):
        txt = ua + b": AlphaBot\n" + al + b": /in/\n" + di + b": /\n"
        assert allowed(txt, "alphabot", "/in/a", mode) and not allowed(txt, "alphabot", "/out", mode)


TYPOS = [(b"useragent", b"disallow"), (b"user agent", b"disallow"), (b"user-agent", b"dissallow"),
         (b"user-agent", b"dissalow"), (b"user-agent", b"disalow"), (b"user-agent", b"diasllow"),
         (b"user-agent", b"disallaw")]


@pytest.mark.parametrize("ua,dis", TYPOS)
def test_google_accepts_its_common_typos(ua, dis):
    """robots.cc ParsedRobotsKey::KeyIsUserAgent / KeyIsDisallow (kAllowFrequentTypos); RFC 9309 2.2's grammar
    knows only the right spellings, and 2.3.1.5 skips what it cannot parse."""
    txt = ua + b": AlphaBot\n" + dis + b": /x\n\nuser-agent: *\ndisallow: /\n"
    assert not allowed(txt, "alphabot", "/x") and allowed(txt, "alphabot", "/y")
    # strictly, the misspelt line is skipped: either no group names AlphaBot, or (a misspelt Disallow)
    # nothing ends its user-agent lines and it shares the '*' group's "disallow: /"
    assert not rfc(txt, "alphabot", "/y")
    alone = ua + b": AlphaBot\nallow: /z\n" + dis + b": /x\n"
    assert not allowed(alone, "alphabot", "/x")
    assert rfc(alone, "alphabot", "/x")


def test_google_matches_keys_by_prefix():
    """robots.cc ParsedRobotsKey (absl::StartsWithIgnoreCase: "Disallowed", "User-agents", "Sitemaps" count);
    RFC 9309 2.2: only the exact names."""
    txt = b"User-agents: AlphaBot\nDisallowed: /x\nAllowing: /x/y\nSitemaps: https://h.test/s.xml\nsite-map: /m\n"
    rt = RobotsTxt.parse(txt)
    assert not rt.allowed("/x", "alphabot") and rt.allowed("/x/y", "alphabot")
    assert rt.sitemaps == ["https://h.test/s.xml", "/m"]
    strict = RobotsTxt.parse(txt, mode="rfc")
    assert strict.allowed("/x", "alphabot") and strict.sitemaps == [] and strict.groups == []


def test_missing_colon():
    """robots_test.cc ID_LineSyntax_Line; robots.cc RobotsTxtParser::GetKeyAndValueFrom: without a colon, whitespace
    separates key and value if the line is exactly two words; RFC 9309 2.2: every record has its ":"."""
    txt = b"user-agent AlphaBot\ndisallow /\n"
    assert not allowed(txt, "alphabot", "/x/y")
    assert rfc(txt, "alphabot", "/x/y")
    three = b"user-agent: AlphaBot\ndisallow /a /b\n"       # three words: not a line Google reads
    assert allowed(three, "alphabot", "/a") and allowed(three, "alphabot", "/a /b")
    wrong = b"foo: AlphaBot\nbar: /\n"                      # unknown keys: nothing applies
    for mode in MODES:
        assert allowed(wrong, "alphabot", "/x/y", mode)
    assert not allowed(b"user-agent: AlphaBot\ndisallow: /\n", "alphabot", "/x/y", "rfc")


LINE_ENDINGS = {
    "lf": b"User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /\n",
    "crlf": b"User-Agent: foo\r\nAllow: /some/path\r\nUser-Agent: bar\r\n\r\n\r\nDisallow: /\r\n",
    "cr": b"User-Agent: foo\rAllow: /some/path\rUser-Agent: bar\r\r\rDisallow: /\r",
    "no-final-newline": b"User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /",
    "mixed": b"User-Agent: foo\nAllow: /some/path\r\nUser-Agent: bar\n\r\n\nDisallow: /",
}


@BOTH
@pytest.mark.parametrize("kind", sorted(LINE_ENDINGS))
def test_line_endings_and_line_numbers(kind, mode):
    """robots_test.cc ID_LinesNumbersAreCountedCorrectly (LF, CRLF, CR, none at the end, mixed: the last rule is
    on line 6 every time); RFC 9309 2.2 (NL = CR / LF / CRLF)."""
    rt = RobotsTxt.parse(LINE_ENDINGS[kind], mode=mode)
    d = rt.decide("/else", "bar")
    assert not d.allowed and d.rule is not None and d.rule.line == 6
    assert rt.allowed("/some/path", "foo") and rt.allowed("/else", "foo")


BODY_AFTER_BOM = b"User-Agent: foo\nDisallow: /AnyValue\n"


@BOTH
def test_byte_order_mark(mode):
    """robots_test.cc ID_UTF8ByteOrderMarkIsSkipped: a whole BOM is skipped; a damaged one ("\\xef\\x11\\xbf")
    spoils the first line only; a BOM in the middle spoils its line. (RFC 9309 says nothing of BOMs.)"""
    assert not allowed(b"\xef\xbb\xbf" + BODY_AFTER_BOM, "foo", "/AnyValue", mode)
    broken = b"\xef\x11\xbf" + BODY_AFTER_BOM       # the user-agent line is garbage: the rule has no group
    assert allowed(broken, "foo", "/AnyValue", mode)
    middle = b"User-Agent: foo\n\xef\xbb\xbfDisallow: /AnyValue\n"
    assert allowed(middle, "foo", "/AnyValue", mode)


def test_partial_byte_order_mark():
    """robots_test.cc ID_UTF8ByteOrderMarkIsSkipped: Google also skips the first one or two octets of a BOM;
    in the strict reading they stay and spoil the first line."""
    for head in (b"\xef", b"\xef\xbb"):
        assert not allowed(head + BODY_AFTER_BOM, "foo", "/AnyValue")
        assert rfc(head + BODY_AFTER_BOM, "foo", "/AnyValue")


def test_long_lines_are_cut():
    """robots_test.cc GoogleOnly_LineTooLong; robots.cc RobotsTxtParser::Parse (a line keeps its first
    8 x 2083 - 1 octets, the rest is ignored). RFC 9309 has no line limit: the whole rule counts."""
    head = "/x/"
    fill = "a" * (GOOGLE_LINE_BYTES - len("disallow: ") - len(head))
    cut_rule = head + fill                                  # what Google keeps of the line
    txt = ("user-agent: AlphaBot\ndisallow: " + cut_rule + "/qux\n").encode()
    assert len(("disallow: " + cut_rule).encode()) == GOOGLE_LINE_BYTES
    assert allowed(txt, "alphabot", "/fux")
    assert not allowed(txt, "alphabot", cut_rule + "/fux")   # the cut rule matches
    assert rfc(txt, "alphabot", cut_rule + "/fux")          # the whole rule does not
    assert not rfc(txt, "alphabot", cut_rule + "/qux")
    cut_allow = head + "b" * (GOOGLE_LINE_BYTES - len("allow: ") - len(head))
    allow = ("user-agent: AlphaBot\ndisallow: /\nallow: " + cut_allow + "/qux\n").encode()
    assert not allowed(allow, "alphabot", "/")
    assert allowed(allow, "alphabot", cut_allow + "/qux")   # the whole rule's URL: the cut rule is its prefix
    assert allowed(allow, "alphabot", cut_allow + "/fux")   # the cut rule matches
    assert not rfc(allow, "alphabot", cut_allow + "/fux")


def test_sitemap_anywhere():
    """robots_test.cc ID_NonStandardLineExample_Sitemap; RFC 9309 2.2.4: a Sitemap line before, inside or after
    the groups is read."""
    for txt in (b"Sitemap: http://h.test/s.xml\nUser-Agent: foo\nAllow: /p\n",
                b"User-Agent: foo\nAllow: /p\nUser-Agent: bar\n\n\nSitemap: http://h.test/s.xml\n"):
        for mode in MODES:
            assert RobotsTxt.parse(txt, mode=mode).sitemaps == ["http://h.test/s.xml"]


@BOTH
def test_size_limit(mode):
    """Google's doc, "File format" (a 500 KiB limit; content after it is ignored); RFC 9309 2.5."""
    pad = b"# " + b"p" * 998 + b"\n"
    inside = b"User-agent: *\n" + pad * 500 + b"Disallow: /in\n"
    assert len(inside) < 500 * 1024
    rt = RobotsTxt.parse(inside + pad * 20 + b"Disallow: /out\n", mode=mode)
    assert rt.truncated and not rt.allowed("/in", "bot") and rt.allowed("/out", "bot")


def test_path_extraction():
    """robots_test.cc TestGetPathParamsQuery, for absolute URLs and paths (the inputs our API takes): no scheme,
    authority or fragment; an empty path is "/"; a query keeps its "://"."""
    cases = {"http://www.example.com": "/", "http://www.example.com/": "/", "http://www.example.com/a": "/a",
             "http://www.example.com/a/": "/a/", "http://www.example.com/a/b?c=http://d.e/": "/a/b?c=http://d.e/",
             "http://www.example.com/a/b?c=d&e=f#fragment": "/a/b?c=d&e=f", "/a": "/a", "": "/",
             "http://www.example.com?a": "/?a", "http://www.example.com/a;b#c": "/a;b"}
    for url, path in cases.items():
        assert url_path(url) == path, url


def test_query_with_a_url_inside_stays_unencoded():
    """robots_test.cc ID_Encoding (first case): a rule holding "?", "&", "=", "://" matches the same characters."""
    txt = b"User-agent: AlphaBot\nDisallow: /\nAllow: /go?to=http://h.test/?a&b\n"
    for mode in MODES:
        assert allowed(txt, "alphabot", "http://h.test/go?to=http://h.test/?a&b", mode)


# ---- the CLI


def test_cli_reads_as_google_unless_rfc(tmp_path):
    """`warchive robots` reads as Google (the default) and strictly with --rfc: robots_test.cc ID_Encoding's
    %-escaped unreserved characters and GoogleOnly_IndexHTMLisDirectory decide differently."""
    f = tmp_path / "robots.txt"
    f.write_bytes(b"User-agent: *\nDisallow: /\nAllow: /shop/%61%62%63\nAllow: /docs/index.html\n")
    urls = ["http://h.test/shop/abc", "http://h.test/docs/"]

    def run(*extra: str) -> list:
        r = subprocess.run([sys.executable, "-m", "warchive", "robots", str(f), "-a", "bot", *extra, *urls],
                           capture_output=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return r.stdout.decode().split()

    assert run() == ["disallowed", "allowed"]
    assert run("--rfc") == ["allowed", "disallowed"]
