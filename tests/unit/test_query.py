"""The query engine where pywb is no oracle: the Wayback CDX server's extras (docs/cdx-api.md
W1-W20) and warchive's deliberate differences (D1, D2), on small hand-made indexes whose
expected answers are written out here."""

from __future__ import annotations

import json

import pytest

from memlines import Lines
from warchive.index.query import Engine, NamedSource, parse_line


def cdxj(key, ts, status="200", digest="sha1:AAAA", mime="text/html", url=None, length="100", offset="0"):
    f = {"url": url or "http://example.com/", "mime": mime, "status": status, "digest": digest,
         "length": length, "offset": offset, "filename": "x.warc.gz"}
    return f"{key} {ts} {json.dumps(f)}".encode()


TIMES = ["20200101000000", "20200101000010", "20200102000000", "20200201000000", "20210101000000",
         "20210101120000", "20220101000000"]
DIGESTS = ["sha1:A", "sha1:A", "sha1:B", "sha1:B", "sha1:B", "sha1:C", "sha1:A"]
STATUS = ["200", "200", "200", "404", "200", "200", "302"]
ROOT = [cdxj("com,example)/", t, status=s, digest=d, offset=str(i)) for i, (t, d, s) in
        enumerate(zip(TIMES, DIGESTS, STATUS))]
OTHER = [cdxj("com,example)/a", "20200101000000", url="http://example.com/a"),
         cdxj("com,example)/b", "20200101000000", url="http://example.com/b")]


def engine(lines=ROOT + OTHER):
    return Engine([NamedSource(Lines(lines), "coll", "coll")], access=None)


def ask(params, lines=ROOT + OTHER):
    a = engine(lines).answer({"nosource": "true", "output": "text", "fl": "timestamp", **params})
    return a.status, a.read().decode()


def stamps(params, lines=ROOT + OTHER):
    status, body = ask(params, lines)
    assert status == 200, body
    return body.split("\n")[:-1] if body else []


# --------------------------------------------------------------------------- collapse (W3-W9)

def test_collapse_adjacent_duplicates_of_a_field():
    assert stamps({"url": "example.com", "collapse": "digest"}) == [TIMES[0], TIMES[2], TIMES[5], TIMES[6]]


def test_collapse_on_a_prefix_of_the_field():
    assert stamps({"url": "example.com", "collapse": "timestamp:4"}) == [TIMES[0], TIMES[4], TIMES[6]]
    assert stamps({"url": "example.com", "collapse": "timestamp:6"}) == [TIMES[0], TIMES[3], TIMES[4], TIMES[6]]


def test_collapse_aliases_and_several_in_order():
    # statuscode is status (W4); then digest among what is left
    got = stamps({"url": "example.com", "collapse": ["statuscode", "digest"]})
    # by status: 200 200 200 404 200 200 302 -> keep 0, 3, 4, 6; then digests A B B A -> keep 0, 3, 6
    assert got == [TIMES[0], TIMES[3], TIMES[6]]


def test_collapse_urlkey_keeps_the_first_capture_of_each_url():
    got = stamps({"url": "example.com/*", "collapse": "urlkey", "fl": "urlkey"})
    assert got == ["com,example)/", "com,example)/a", "com,example)/b"]


def test_collapse_unknown_field_keeps_only_the_first():
    assert stamps({"url": "example.com", "collapse": "nosuchfield"}) == [TIMES[0]]


@pytest.mark.parametrize("value", [":4", "digest:0", "digest:x", "digest:-1"])
def test_collapse_bad_values_are_400(value):
    status, body = ask({"url": "example.com", "collapse": value})
    assert status == 400 and "collapse" in json.loads(body)["message"]


def test_collapse_before_reverse():
    # one capture per year (the first of each year), newest year first (W6)
    assert stamps({"url": "example.com", "collapse": "timestamp:4", "sort": "reverse"}) == \
        [TIMES[6], TIMES[4], TIMES[0]]


# --------------------------------------------------------------------------- negative limit, fastLatest (W10-W12, D2)

def test_negative_limit_keeps_the_last_n_in_index_order():
    assert stamps({"url": "example.com", "limit": "-2"}) == TIMES[-2:]
    assert stamps({"url": "example.com", "limit": "-100"}) == TIMES


def test_negative_limit_with_reverse_keeps_the_oldest_newest_first():
    assert stamps({"url": "example.com", "limit": "-2", "sort": "reverse"}) == [TIMES[1], TIMES[0]]


def test_negative_limit_with_closest_keeps_the_farthest():
    got = stamps({"url": "example.com", "limit": "-2", "closest": "20200101000000"})
    assert got == [TIMES[5], TIMES[6]]


def test_fast_latest_is_the_last_capture():
    assert stamps({"url": "example.com", "fastLatest": "true"}) == [TIMES[-1]]
    assert stamps({"url": "example.com", "fastLatest": "true", "limit": "3"}) == TIMES[-3:]
    assert ask({"url": "example.com", "fastLatest": "true", "closest": "2020"})[0] == 400


# --------------------------------------------------------------------------- resume keys (W13-W19)

def _key_of(body, output="text"):
    if output == "json":
        last = body.strip().split("\n")[-1]
        return json.loads(last)["resumeKey"]
    parts = body.split("\n\n")
    assert len(parts) == 2, body
    return parts[1].strip()


def test_show_resume_key_only_when_the_answer_is_cut():
    status, body = ask({"url": "example.com", "limit": "3", "showResumeKey": "true"})
    assert status == 200
    key = _key_of(body)
    assert key.startswith("com%2Cexample%29%2F+20200102000000%21")
    status, body = ask({"url": "example.com", "limit": "30", "showResumeKey": "true"})
    assert "\n\n" not in body and body.count("\n") == len(TIMES)


def test_resume_keys_walk_the_whole_answer():
    # duplicates of one timestamp must not be lost between pages: make several lines share one
    dup = [cdxj("com,example)/", "20200101000000", digest=f"sha1:D{i}", offset=str(100 + i)) for i in range(5)]
    lines = ROOT + OTHER + dup
    full = engine(lines).answer({"url": "example.com", "nosource": "true", "output": "json"}).read().splitlines()
    got, key = [], None
    for _ in range(20):
        params = {"url": "example.com", "nosource": "true", "output": "json", "limit": "2", "showResumeKey": "true"}
        if key:
            params["resumeKey"] = key
        body = engine(lines).answer(params).read().decode()
        rows = body.strip().split("\n") if body.strip() else []
        if rows and '"resumeKey"' in rows[-1]:
            key = json.loads(rows[-1])["resumeKey"]
            rows = rows[:-1]
        else:
            key = None
        got += [r.encode() for r in rows]
        if key is None:
            break
    assert got == full


@pytest.mark.parametrize("params", [{"resumeKey": "garbage"}, {"showResumeKey": "true", "sort": "reverse"},
                                    {"resumeKey": "com%2Cexample%29%2F+2020", "closest": "2020"},
                                    {"showResumeKey": "true", "output": "link"},
                                    {"resumeKey": "com%2Cexample%29%2F+20200101000000", "page": "1"},
                                    # a lone surrogate (the Python door takes any str), as in the
                                    # cdx_query fuzz harness's crasher: a 400, no UnicodeEncodeError
                                    {"resumeKey": "com%2Cexample\udce7%29%2F+20200101000000"}])
def test_resume_key_misuse_is_400(params):
    assert ask({"url": "example.com", **params})[0] == 400


def test_resume_key_of_the_wayback_form_skips_every_line_of_that_capture_time():
    got = stamps({"url": "example.com", "resumeKey": "com%2Cexample%29%2F+20200101000010"})
    assert got == TIMES[2:]


# --------------------------------------------------------------------------- D1: 400 where pywb says 500

@pytest.mark.parametrize("params,word", [({"limit": "abc"}, "limit"), ({"collapseTime": "x"}, "collapseTime"),
                                         ({"filter": "~status:("}, "filter"),
                                         ({"output": "link", "memento_format": "{nope}"}, "memento_format"),
                                         ({"output": "nope"}, "output")])
def test_bad_parameters_are_400_with_a_message(params, word):
    status, body = ask({"url": "example.com", **params})
    assert status == 400
    assert word in json.loads(body)["message"]


def test_parse_line_cdx11_and_cdxj():
    c = parse_line(b"com,example)/ 20200101000000 http://example.com/ text/html 200 ABC - - 10 20 f.warc.gz")
    assert c["url"] == "http://example.com/" and c["offset"] == "20" and not c.from_json
    c = parse_line(b'com,example)/ 20200101000000 {"url": "http://b\xc3\xbccher.example/?q=1", "s": "5", "status": 200}')
    assert c["url"] == "http://b%C3%BCcher.example/%3Fq%3D1"
    assert c["length"] == "5" and c["status"] == "200"
