"""The capture record (warchive.index.capture.Capture) and what Index.query answers with it:
lazy reading and its errors, the mapping of the output=json fields, CDX-11 lines, typed reads,
the merge order (R19) and the quick path's corners (docs/cdx-api.md)."""

from __future__ import annotations

import calendar
import json
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from budget import examples

from memlines import Lines
from warchive.index.capture import ALIASES, Capture, MergeKey, Origin, QueryError, line_fields
from warchive.index.query import Engine, Index, NamedSource, Query, Result, parse_line, timestamp_seconds
from warchive.index.segment import write_segment
from warchive.replay.load import capture_fields
from warchive.timestamps import timestamp_to_datetime

CDXJ = (b'com,example)/ 20200101000000 {"url": "http://example.com/", "mime": "text/html", "status": "200", '
        b'"digest": "sha1:AAAA", "length": "100", "offset": "306", "filename": "x.warc.gz"}')
CDX11 = b"com,example)/ 20190304050607 http://example.com/ text/html 200 ABCD - - 363 306 timeline.warc.gz"
BROKEN_JSON = b'com,example)/ 20200101000000 {"url": "http://example.com/", "mime":'
ORIGIN = Origin("coll/indexes/x.cdxj", "coll", True, "allow")


def pipeline(engine, params):
    ans = engine._answer(Query(dict(params, output="json"), now=engine.now))
    return [json.loads(x) for x in ans.read().splitlines()]


def pipeline_bytes(engine, params):
    try:
        ans = engine._answer(Query(dict(params), now=engine.now))
    except QueryError as e:
        return e.status, e.message
    return ans.status, ans.read()


def answer_bytes(engine, params):
    ans = engine.answer(params)
    if ans.status != 200:
        return ans.status, json.loads(ans.read())["message"]
    return ans.status, ans.read()


# --------------------------------------------------------------------------- reading, lazily

def test_a_line_is_read_when_a_field_is_asked_for():
    c = Capture(BROKEN_JSON + b"  \r", ORIGIN)     # made: nothing read, trailing space dropped
    assert c.line == BROKEN_JSON
    assert (c.urlkey, c.timestamp) == ("com,example)/", "20200101000000")
    with pytest.raises(QueryError) as e:
        c["mime"]
    assert e.value.status == 500
    # the error parse_line raises, which the pipeline answers with
    with pytest.raises(QueryError) as e2:
        parse_line(BROKEN_JSON)
    assert (e.value.status, e.value.message) == (e2.value.status, e2.value.message)
    assert e.value.message.startswith("unreadable index line b'com,example)/ 20200101000000 {")
    for read in (dict, len, list, lambda c: c == {}, lambda c: c.url):
        with pytest.raises(QueryError):
            read(c)


@settings(max_examples=examples(1000), deadline=None)
@given(st.one_of(st.dictionaries(st.text(max_size=5), st.one_of(st.text(max_size=8), st.integers(), st.none()), max_size=4)
                 .map(json.dumps),
                 st.text(alphabet='{}[]":, \t\n\rabc0129.-\\u', max_size=30).map(lambda t: "{" + t)))
def test_a_cdxj_lines_json_reads_as_json_loads_reads_it(text):
    """The fields (or the error message) of a CDXJ line's JSON are json.loads's."""
    line = b"com,example)/ 20200101000000 " + text.encode("utf-8")
    try:
        want = json.loads(text)
    except ValueError as e:
        with pytest.raises(QueryError) as got:
            line_fields(line)
        assert got.value.message.endswith(": " + str(e))
        return
    if not isinstance(want, dict):
        return
    try:
        fields, from_json = line_fields(line)
    except QueryError:   # (a field pywb's rules refuse: not json's business)
        return
    assert from_json and all(fields[k] == v for k, v in want.items() if k not in ALIASES and k not in ("status", "url"))


def test_a_cdx_line_of_no_known_format_is_400_when_read():
    line = b"com,example)/ 20200101000000 http://example.com/ text/html 200"
    c = Capture(line)
    assert c.timestamp == "20200101000000"
    with pytest.raises(QueryError) as e:
        c.get("mime")
    assert e.value.status == 400 and e.value.message == \
        "unknown 5-field cdx format: [b'com,example)/', b'20200101000000', b'http://example.com/', b'text/html', b'200']"
    with pytest.raises(QueryError) as e:
        Capture(b"com,example)/").urlkey          # no columns at all
    assert e.value.message.startswith("unknown 1-field")
    with pytest.raises(QueryError) as e:
        Capture(b"com,\xffexample)/ 2020 {}").urlkey
    assert e.value.status == 500


def test_cdxj_fields_in_output_json_order_with_what_pywb_adds():
    c = Capture(CDXJ, ORIGIN)
    assert list(c) == ["urlkey", "timestamp", "url", "mime", "status", "digest", "length", "offset", "filename",
                       "source", "source-coll", "access"]
    assert c["source"] == "coll/indexes/x.cdxj" and c["access"] == "allow" and c.changed
    assert dict(c) == {**json.loads(CDXJ.split(b" ", 2)[2]), "urlkey": "com,example)/",
                       "timestamp": "20200101000000", "source": "coll/indexes/x.cdxj", "source-coll": "coll",
                       "access": "allow"}
    nosource = Capture(CDXJ, Origin("x", "coll", named=False, access="allow"))
    assert "source" not in nosource and nosource["access"] == "allow"
    plain = Capture(CDXJ)
    assert not plain.changed and plain.from_json and "access" not in plain


def test_the_mapping_behaves_as_the_dict_it_replaces():
    c = Capture(CDXJ, ORIGIN)
    d = dict(c)
    assert c == d and d == c and not (c != d) and c != {**d, "mime": "x"} and c != [1]
    assert c.get("mime") == "text/html" and c.get("nope") is None and c.get("nope", 7) == 7
    assert "mime" in c and "nope" not in c and 3 not in c
    assert len(c) == len(d) and list(c.items()) == list(d.items()) and list(c.keys()) == list(d)
    assert list(c.values()) == list(d.values()) and c.as_dict() == d
    with pytest.raises(KeyError):
        c["nope"]
    assert repr(c).startswith("Capture({'urlkey': 'com,example)/'")
    assert json.dumps(c.as_dict()) == json.dumps(d)
    assert pickle.loads(pickle.dumps(c)) == c
    assert capture_fields(c) == d            # what load_capture and CaptureLoader take


def test_the_engines_own_fields_are_hidden_and_fl_projects():
    c = Capture(CDXJ)
    c.set("_pos", 3)
    assert "_pos" in c.fields and "_pos" not in c and "_pos" not in list(c)
    with pytest.raises(KeyError):
        c["_pos"]
    c.project(["status", "nope", "url", "status", "_pos"])
    assert list(c) == ["status", "url", "_pos"] and dict(c) == {"status": "200", "url": "http://example.com/",
                                                                "_pos": 3}
    assert "mime" not in c and c.mime == "text/html"       # typed reads are the capture's


def test_cdx11_lines():
    c = parse_line(CDX11)
    assert not c.from_json and c["digest"] == "ABCD" and c["redirect"] == "-" and c["robotflags"] == "-"
    assert list(c)[:3] == ["urlkey", "timestamp", "url"] and c.offset == 306 and c.length == 363
    c = Capture(CDX11, ORIGIN)
    assert list(c)[-3:] == ["source", "source-coll", "access"]


def test_typed_reads_of_the_hot_fields():
    c = Capture(b'com,example)/ 2020 {"url": "http://b\xc3\xbccher.example/?q=1", "s": "5", "status": 200, '
                b'"offset": "-", "mime": null}')
    assert c.url == "http://b%C3%BCcher.example/%3Fq%3D1" and c["url"] == c.url       # R14
    assert c.status == "200" and c["status"] == "200" and c.length == 5 and c["length"] == "5"
    assert c.offset is None and c.mime is None and c.digest is None and c.filename is None


def test_a_line_without_url_gets_nothing_added_and_its_own_source_is_prefixed():
    c = Capture(b'com,example)/ 2020 {"mime": "text/html"}', ORIGIN)
    assert list(c) == ["urlkey", "timestamp", "mime"] and not c.changed
    c = Capture(b'com,example)/ 2020 {"url": "http://example.com/", "source": "sub.cdxj"}', ORIGIN)
    assert c["source"] == "coll/indexes/x.cdxj:sub.cdxj"


def test_from_fields_is_a_record_of_no_line():
    c = Capture.from_fields({"pages": 8, "pageSize": 10})
    assert c == {"pages": 8, "pageSize": 10} and c.line == b"" and c.changed


# --------------------------------------------------------------------------- what Index.query answers

def _lines(n=3, key=b"com,example)/", url="http://example.com/"):
    return [key + b" 2020010%d000000 " % i + json.dumps(
        {"url": url, "mime": "text/html", "status": "200", "digest": "sha1:A%d" % i, "length": "10",
         "offset": str(i), "filename": "x.warc.gz"}).encode() for i in range(1, n + 1)]


def test_index_query_leaves_a_malformed_line_to_its_reader(tmp_path):
    """Index.query reads no line it need not: a malformed one raises when its fields are read;
    the HTTP door reads every line the pipeline reads and answers the pipeline's error."""
    good = _lines(3)
    bad = b"com,example)/ 20200102000000 {broken"
    seg = tmp_path / "x.seg"
    write_segment(sorted(good + [bad]), seg)
    with Index(str(seg)) as ix:
        caps = ix.query("http://example.com/")
        assert len(caps) == 4 and caps[0]["offset"] == "1"
        with pytest.raises(QueryError) as e:
            [dict(c) for c in caps]
        assert e.value.status == 500
        assert len(ix.query("http://example.com/", limit=1)) == 1
        eng = ix.engine
        for params in ({"url": "http://example.com/"}, {"url": "http://example.com/", "closest": "2020"},
                       {"url": "http://example.com/", "limit": "1"}, {"url": "http://example.com/", "limit": "-1"},
                       {"url": "http://example.com/", "sort": "reverse", "limit": "1"},
                       {"url": "http://example.com/", "from": "202001020"}):
            assert answer_bytes(eng, params) == pipeline_bytes(eng, params), params
        assert answer_bytes(eng, {"url": "http://example.com/", "limit": "1"})[0] == 200
        assert answer_bytes(eng, {"url": "http://example.com/", "closest": "2020"})[0] == 500


@pytest.mark.parametrize("renamed", [b'"t": "20180101000000"', b'"timestamp": "2018"',
                                     b'"tim\\u0065stamp": "2018"'])
def test_a_line_whose_json_names_its_timestamp_is_the_pipelines(renamed):
    """pywb lets a CDXJ line's JSON rename its timestamp (R14); where the timestamp orders or
    selects, the quick path leaves such lines to the pipeline."""
    lines = _lines(3) + [b'com,example)/ 20200105000000 {"url": "http://example.com/", ' + renamed + b"}"]
    eng = Engine([NamedSource(Lines(lines), "coll", "coll")])
    for params in ({"closest": "2018"}, {"closest": "20200105000000", "limit": "2"}, {"from": "2019"},
                   {"to": "2018"}, {}, {"sort": "reverse"}):
        p = {"url": "http://example.com/", **params}
        assert eng.query(p) == pipeline(eng, p), params
        assert answer_bytes(eng, p) == pipeline_bytes(eng, p), params
    assert eng.query({"url": "http://example.com/", "closest": "2018"})[0]["timestamp"].startswith("2018")


def test_several_sources_merge_as_pywb_merges_them():
    """R19 in the quick path: by the JSON text, `access` added after the merge."""
    a = _lines(2) + [b'com,example)/ 20200101000000 {"url": "http://example.com/", "mime": "a"}']
    b = _lines(3)[1:] + [b'com,example)/ 20200101000000 {"url": "https://example.com/"}']
    eng = Engine([NamedSource(Lines(a), "coll/indexes/a.cdxj", "coll"),
                  NamedSource(Lines(b), "coll/indexes/b.cdxj", "coll")], access="allow")
    for params in ({}, {"limit": "2"}, {"nosource": "true"}, {"closest": "20200102", "limit": "3"}):
        p = {"url": "http://example.com/", **params}
        got = eng.query(p)
        assert got == pipeline(eng, p), params
        assert eng.quick(p) is not None
        assert all(list(c)[-1] == "access" for c in got)


def test_paging_information_comes_back_as_records(tmp_path):
    from warchive.index.zipnum import write_zipnum

    cl = write_zipnum(sorted(_lines(40)), tmp_path / "zn", lines_per_block=4)
    with Index(cl.idx) as ix:
        got = ix.query("http://example.com/", showNumPages="true")
        assert got == [{"pages": 1, "pageSize": 10, "blocks": 10}] and isinstance(got[0], Capture)


def test_run_and_captures_give_one_result_type():
    eng = Engine([NamedSource(Lines(_lines(3)), "coll", "coll")])
    q = Query({"url": "http://example.com/", "limit": "2", "showResumeKey": "true"})
    res = eng._run(q)
    assert isinstance(res, Result) and len(res.captures) == 2 and res.resume_key is not None
    res = eng.captures(Query({"url": "http://example.com/"}))
    assert isinstance(res, Result) and len(res.captures) == 3 and res.resume_key is None


# --------------------------------------------------------------------------- properties

@settings(max_examples=examples(2000), deadline=None)
@given(st.one_of(st.text(alphabet="0123456789", min_size=14, max_size=14),
                 st.text(alphabet="0123456789 +-_x\u0661", max_size=16),
                 st.builds(lambda y, mo, d, h, mi, s: "%04d%02d%02d%02d%02d%02d" % (y, mo, d, h, mi, s),
                           st.integers(1880, 3020), st.integers(0, 13), st.integers(0, 32), st.integers(0, 25),
                           st.integers(0, 61), st.integers(0, 61))))
def test_timestamp_seconds_is_timestamp_to_datetimes(ts):
    try:
        want = calendar.timegm(timestamp_to_datetime(ts).utctimetuple())
    except (ValueError, OverflowError) as e:
        with pytest.raises(type(e)):
            timestamp_seconds(ts)
        return
    assert timestamp_seconds(ts) == want


KEY_CHARS = st.sampled_from(list("az09,)/?=&.:-_!\"\\ ~\x7f\u00e9\t#[]{}"))
KEYS = st.text(KEY_CHARS, min_size=0, max_size=6).filter(lambda s: " " not in s)
TSS = st.one_of(st.sampled_from(["20200101000000", "20200101000001", "2020", ""]), KEYS)
EXTRA = st.sampled_from(["", ', "t": "2019"', ', "timestamp": "1"', ', "k": "a"', ', "urlkey": "zz"',
                         ', "x": "\\u0074"', ', "\\u0074": "0"', ', "mime": "b"'])


@st.composite
def lines(draw):
    key, ts = draw(KEYS), draw(TSS)
    body = '{"url": "http://e/"%s}' % draw(EXTRA)
    return f"{key or 'k'} {ts or '0'} {body}".encode("utf-8")


@st.composite
def line_pairs(draw):
    """Two lines, the second often the first with its key or timestamp a little changed."""
    a = draw(lines())
    if draw(st.booleans()):
        return a, draw(lines())
    key, ts, body = a.split(b" ", 2)
    extra = draw(KEY_CHARS).encode("utf-8")
    if extra == b" ":
        extra = b"!"
    if draw(st.booleans()):
        return a, b" ".join([key + extra, ts, body])
    return a, b" ".join([key, ts + extra, body])


@settings(max_examples=examples(3000), deadline=None)
@given(line_pairs(), st.booleans())
def test_merge_compares_as_the_json_text(pair, parsed):
    """MergeKey's shortcut on (urlkey, timestamp) agrees with R19's JSON comparison."""
    a, b = pair
    ca, cb = Capture(a, ORIGIN), Capture(b, Origin("other", "coll"))
    want = ca.json_key() < cb.json_key()
    ca, cb = Capture(a, ORIGIN), Capture(b, Origin("other", "coll"))
    if parsed:
        ca.fields
    assert (MergeKey(ca) < MergeKey(cb)) == want
    assert (MergeKey(cb) < MergeKey(ca)) == (cb.json_key() < ca.json_key())


def test_keys_are_the_fields_shown():
    """keys() (what dict() reads) names what the mapping shows, projected or not, and stays a
    set-like view."""
    c = Capture(b'com,example)/ 20200101000000 {"url": "http://example.com/", "_own": "x", "mime": "text/html"}',
                ORIGIN)
    assert list(c.keys()) == list(c) == ["urlkey", "timestamp", "url", "mime", "source", "source-coll", "access"]
    assert dict(c) == c.as_dict() and "_own" not in dict(c) and c.keys() & {"url", "_own"} == {"url"}
    plain = Capture(b'com,example)/ 20200101000000 {"url": "http://example.com/", "mime": "text/html"}', ORIGIN)
    assert list(plain.keys()) == list(plain) and dict(plain) == plain.as_dict()
    assert plain.keys() == {"urlkey", "timestamp", "url", "mime", "source", "source-coll", "access"}
    plain.project(["mime", "url", "nope"])
    assert list(plain.keys()) == ["mime", "url"] and dict(plain) == {"mime": "text/html", "url": "http://example.com/"}
