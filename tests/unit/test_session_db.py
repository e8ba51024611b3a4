"""The session database (warchive.capture.session): every rule of the journal format.

Version line, interleaved entries, torn last line (ignored, then cut before the next
append), unknown fields and kinds kept, damaged lines in the middle, the pid lock
(live, stale, reused pid), lookup by every URL of a redirect chain (in memory and
through the sidecar), sidecar staleness (missing, rewritten, truncated, grown a
little, grown a lot), fsync policies, a hypothesis round trip, and a writer killed
with SIGKILL at random points 50 times (500 under ``-m slow``).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warchive.capture import session as sdb
from warchive.capture.session import lock
from warchive.capture.session import SessionDB, SessionIndex, SessionWarning, read_session
from warchive.errors import ArchiveError, SessionFormatError, SessionLockedError, UnsupportedFormatError


@pytest.fixture
def journal(tmp_path):
    return str(tmp_path / "crawl.session")


def lines_of(path):
    with open(path, "rb") as f:
        return f.read().split(b"\n")


# --- version line --------------------------------------------------------------

def test_version_line_opens_the_file_once(journal):
    with SessionDB(journal) as db:
        db.fetched("https://a.example/", 200)
    with SessionDB(journal) as db:
        db.fetched("https://b.example/", 200)
    ls = lines_of(journal)
    first = json.loads(ls[0])
    assert first["warchive-session"] == sdb.FORMAT_VERSION == 1
    assert first["software"].startswith("warchive ")
    assert sum(b"warchive-session" in line for line in ls) == 1
    s = read_session(journal)
    assert s.version == 1 and len(s) == 2 and ls[-1] == b""


def test_not_a_journal_and_newer_version(journal, tmp_path):
    other = tmp_path / "notes.txt"
    other.write_text("hello\nworld\n")
    with pytest.raises(SessionFormatError) as e:
        read_session(other)
    assert e.value.offset == 0 and "version line" in str(e.value)
    with pytest.raises(SessionFormatError):
        SessionDB(other)
    assert other.read_text() == "hello\nworld\n"  # never appended to
    newer = tmp_path / "newer.session"
    newer.write_bytes(b'{"warchive-session": 2}\n{"kind":"fetch","url":"u"}\n')
    with pytest.raises(UnsupportedFormatError, match="version 2"):
        read_session(newer)
    with pytest.raises(UnsupportedFormatError):
        SessionDB(newer)
    assert issubclass(SessionFormatError, ArchiveError) and issubclass(UnsupportedFormatError, ArchiveError)


def test_empty_and_torn_version_line(journal):
    open(journal, "wb").close()
    assert len(read_session(journal)) == 0
    with open(journal, "wb") as f:
        f.write(b'{"warchive-sess')  # killed while creating the journal
    assert len(read_session(journal)) == 0
    with SessionDB(journal) as db:
        db.fetched("https://a.example/", 200)
    s = read_session(journal)
    assert len(s) == 1 and s.version == 1


# --- entries -------------------------------------------------------------------

def test_each_entry_is_one_line_written_at_once(journal, monkeypatch):
    calls = []
    real = os.write

    def spy(fd, b):
        calls.append(bytes(b))
        return real(fd, b)

    with SessionDB(journal) as db:
        monkeypatch.setattr(os, "write", spy)
        off = db.fetched("https://a.example/", 200, content_type="text/html; charset=utf-8", size=5,
                         etag='"x"', last_modified="Sat, 28 Nov 2026 10:00:00 GMT", duration=0.25,
                         digest="sha1:AAAA", headers={"If-None-Match": '"x"'})
        monkeypatch.undo()
    assert len(calls) == 1 and calls[0].endswith(b"\n") and calls[0].count(b"\n") == 1
    with open(journal, "rb") as f:
        f.seek(off)
        assert f.readline() == calls[0]
    e = read_session(journal).record("https://a.example/").fetches[0]
    assert (e.status, e.content_type, e.size, e.etag, e.duration, e.digest, e.headers) == (
        200, "text/html; charset=utf-8", 5, '"x"', 0.25, "sha1:AAAA", {"If-None-Match": '"x"'})


def test_interleaved_entries_merge_per_url(journal):
    a, b, c = "https://a.example/", "https://b.example/p?q=1", "https://c.example/x"
    with SessionDB(journal) as db:
        db.start(config={"depth": 2, "dedup": "revisit"}, seeds=[a, b])
        db.fetched(a, 200, content_type="text/html", size=10)
        db.fetched(b, 404)
        db.record(a, "A-1.warc.gz", 0, 300, type="request", record_id="<urn:uuid:1>")
        db.failed(c, "connection refused")
        db.record(b, "A-1.warc.gz", 900, 250)
        db.record(a, "A-1.warc.gz", 300, 600)
        db.outlinks(a, [b, c])
        db.saved(a, "mirror/a.example/index.html")
        db.converted(a, "links", path="mirror/a.example/index.html")
        db.failed(c, "timeout", attempt=2)
    s = read_session(journal)
    assert s.seeds == [a, b] and s.config == {"depth": 2, "dedup": "revisit"}
    assert s.software and s.software.startswith("warchive ")
    assert s.urls() == [a, b, c]
    ra = s.record(a)
    assert ra.state == "fetched" and ra.status == 200
    assert [(r.type, r.warc, r.offset, r.length) for r in ra.records] == [
        ("request", "A-1.warc.gz", 0, 300), ("response", "A-1.warc.gz", 300, 600)]
    assert ra.records[0].id == "<urn:uuid:1>"
    assert ra.outlinks == [b, c]
    assert [e.path for e in ra.saved] == ["mirror/a.example/index.html"]
    assert [e.conversion for e in ra.conversions] == ["links"]
    rb = s.record(b)
    assert rb.state == "fetched" and rb.status == 404 and rb.records[0].offset == 900
    rc = s.record(c)
    assert rc.state == "failed" and [f.reason for f in rc.failures] == ["connection refused", "timeout"]
    assert [r.url for r in s.failed()] == [c]
    # the byte offsets returned by the writer are the entries' offsets
    assert all(s.raw(p) for r in s.records() for p in r.positions)


def test_retry_success_clears_failed(journal):
    u = "https://a.example/"
    with SessionDB(journal) as db:
        db.failed(u, "timeout")
        db.fetched(u, 200)
    r = read_session(journal).record(u)
    assert r.state == "fetched" and len(r.failures) == 1


def test_skipped_records_what_it_duplicates(journal):
    with SessionDB(journal) as db:
        db.skipped("https://b.example/logo.png", "duplicate", digest="sha1:ABC",
                   original_uri="https://a.example/logo.png", original_date="2026-11-29T22:00:00Z",
                   original_record_id="<urn:uuid:9>")
        db.skipped("https://c.example/private", "robots")
    s = read_session(journal)
    sk = s.record("https://b.example/logo.png")
    assert sk.state == "skipped"
    e = sk.skips[0]
    assert (e.reason, e.digest, e.original_uri, e.original_date, e.original_record_id) == (
        "duplicate", "sha1:ABC", "https://a.example/logo.png", "2026-11-29T22:00:00Z", "<urn:uuid:9>")
    assert [r.url for r in s.skipped()] == ["https://b.example/logo.png", "https://c.example/private"]


def test_unknown_fields_and_kinds_are_kept(journal):
    u = "https://a.example/"
    with SessionDB(journal) as db:
        db.fetched(u, 200, http2_stream=7, tls={"version": "1.3"})
        db.append({"kind": "screenshot", "url": u, "png": "shots/a.png", "t": "2026-11-29T00:00:00Z"})
        db.append({"kind": "heartbeat", "load": [0.1, 0.2]})
        db.append({"kind": "fetch", "url": u, "status": "two hundred", "size": 5})  # a field of another type
    s = read_session(journal)
    r = s.record(u)
    assert [e.kind for e in r.other] == ["screenshot"]
    fs = r.fields()
    assert fs[0]["http2_stream"] == 7 and fs[0]["tls"] == {"version": "1.3"}
    assert fs[1] == {"kind": "screenshot", "url": u, "png": "shots/a.png", "t": "2026-11-29T00:00:00Z"}
    assert fs[2]["status"] == "two hundred"
    assert r.fetches[1].status is None and r.fetches[1].size == 5  # the known, well-typed part
    assert [f for f in s.all_fields() if f["kind"] == "heartbeat"] == [{"kind": "heartbeat", "load": [0.1, 0.2]}]
    # the lines are kept as written: a copy through append() is the same journal after its version line
    copy = journal + ".copy"
    with SessionDB(copy) as db:
        for f in s.all_fields():
            db.append(f)
    assert lines_of(copy)[1:] == lines_of(journal)[1:]


def test_fetching_is_no_outcome(journal):
    """A ``fetching`` entry (the request is about to go out) leaves the URL pending until an outcome
    follows: a journal cut after it names the fetch in flight."""
    u, v = "https://a.example/", "https://a.example/b"
    with SessionDB(journal) as db:
        db.fetching(u)
        db.fetched(u, 200)
        db.fetching(v)
    s = read_session(journal)
    assert [e.kind for e in s.record(u).entries] == ["fetching", "fetch"]
    assert s.record(u).state == "fetched" and s.record(v).state == "pending"
    assert s.record(v).other == [] and "fetching" in sdb.KINDS
    assert json.loads(lines_of(journal)[3])["kind"] == "fetching"


def test_damaged_line_in_the_middle(journal):
    with SessionDB(journal) as db:
        db.fetched("https://a.example/", 200)
    with open(journal, "ab") as f:
        bad_at = f.tell()
        f.write(b'{"kind":"fetch","url":"https://b.exa\n')  # damage, not a torn write: a line follows
        f.write(b"\n")                                       # a blank line is no entry, and no damage
    with SessionDB(journal) as db:
        db.fetched("https://c.example/", 200)
    with pytest.raises(SessionFormatError) as e:
        read_session(journal)
    assert e.value.offset == bad_at and e.value.path == journal and "skip-errors" in str(e.value)
    with pytest.warns(SessionWarning, match=f"at byte {bad_at}"):
        s = read_session(journal, skip_errors=True)
    assert s.urls() == ["https://a.example/", "https://c.example/"]


@pytest.mark.parametrize("where", ["field", "unknown"])
def test_a_line_that_is_not_utf8_is_damage(journal, where):
    # a byte that is no UTF-8 in a field the head decoder skips (the journal fuzz harness's crasher)
    # is damage at its line, not msgspec's DecodeError from Session.fields() (no ArchiveError)
    with SessionDB(journal) as db:
        db.fetched("https://a.example/", 200)
    with open(journal, "ab") as f:
        bad_at = f.tell()
        extra = b'"t":"2026-12-01T23:36:52.340\xb962Z"' if where == "field" else b'"x-new":"\xff"'
        f.write(b'{"kind":"record","url":"https://a.example/",' + extra + b',"warc":"a.warc.gz",'
                b'"offset":0,"length":100}\n')
    with SessionDB(journal) as db:
        db.fetched("https://c.example/", 200)
    with pytest.raises(SessionFormatError) as e:
        read_session(journal)
    assert e.value.offset == bad_at and e.value.path == journal
    with pytest.warns(SessionWarning, match=f"at byte {bad_at}"):
        s = read_session(journal, skip_errors=True)
    assert s.urls() == ["https://a.example/", "https://c.example/"]
    assert [f["url"] for f in s.all_fields()] == ["https://a.example/", "https://c.example/"]


def test_bytes_that_are_not_utf8_in_a_torn_last_line_are_no_damage(journal):
    with SessionDB(journal) as db:
        db.fetched("https://a.example/", 200)
    with open(journal, "ab") as f:
        f.write(b'{"kind":"fetched","url":"https://b.\xff')
    assert read_session(journal).urls() == ["https://a.example/"]


# --- torn last line ------------------------------------------------------------

def test_torn_last_line_ignored_then_cut_before_appending(journal):
    with SessionDB(journal) as db:
        db.fetched("https://a.example/", 200)
        db.fetched("https://b.example/", 200)
    whole = os.path.getsize(journal)
    with open(journal, "ab") as f:
        f.write(b'{"kind":"fetch","url":"https://c.example/","status":2')
    s = read_session(journal)
    assert s.urls() == ["https://a.example/", "https://b.example/"] and s.torn > 0 and s.end == whole
    # even a complete JSON object is no entry without its line feed
    with open(journal, "r+b") as f:
        f.truncate(whole)
        f.seek(whole)
        f.write(b'{"kind":"fetch","url":"https://c.example/","status":200}')
    assert read_session(journal).urls() == ["https://a.example/", "https://b.example/"]
    with pytest.warns(SessionWarning, match="torn"):
        db = SessionDB(journal)
    assert os.path.getsize(journal) == whole
    db.fetched("https://d.example/", 200)
    db.close()
    assert read_session(journal).urls() == ["https://a.example/", "https://b.example/", "https://d.example/"]


def test_failed_write_leaves_no_torn_line(journal, monkeypatch):
    db = SessionDB(journal)
    db.fetched("https://a.example/", 200)
    real = os.write

    def short_then_fail(fd, b):
        if len(b) > 20:
            real(fd, bytes(b)[:10])
            return 10
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", short_then_fail)
    with pytest.raises(OSError):
        db.fetched("https://b.example/", 200)
    monkeypatch.undo()
    db.fetched("https://c.example/", 200)
    db.close()
    assert read_session(journal).urls() == ["https://a.example/", "https://c.example/"]


# --- the pid lock --------------------------------------------------------------

HOLDER = """
import sys, time
from warchive.capture.session import SessionDB
db = SessionDB(sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()
db.close()
"""


def test_lock_live_process(journal):
    p = subprocess.Popen([sys.executable, "-c", HOLDER, journal], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert p.stdout.readline().strip() == b"ready"
        assert sdb.live_writer(journal) == p.pid
        with pytest.raises(SessionLockedError) as e:
            SessionDB(journal)
        assert e.value.pid == p.pid and "force" in str(e.value)
        with pytest.warns(SessionWarning, match=str(p.pid)):
            db = SessionDB(journal, force=True)
        db.fetched("https://a.example/", 200)
        db.close()
        assert sdb.read_lock(journal)["pid"] == p.pid  # the forced writer leaves the owner's lock
        assert read_session(journal).writer_pid == p.pid
    finally:
        p.communicate(b"\n", timeout=30)
    assert not os.path.exists(journal + ".pid")  # removed by its owner at close
    assert read_session(journal).urls() == ["https://a.example/"]


def test_lock_stale_pid_taken_over(journal):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    with open(journal + ".pid", "w") as f:
        json.dump({"pid": dead.pid, "start": None, "host": None}, f)
    assert sdb.live_writer(journal) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        db = SessionDB(journal)
    assert sdb.read_lock(journal)["pid"] == os.getpid()
    db.close()
    assert not os.path.exists(journal + ".pid")


def test_lock_reused_pid_is_stale(journal):
    # a live pid whose start time differs from the one recorded: the pid was reused
    with open(journal + ".pid", "w") as f:
        json.dump({"pid": os.getppid(), "start": "1", "host": None}, f)
    if lock._proc_start(os.getppid()) is None:
        pytest.skip("no /proc here")
    with SessionDB(journal):
        assert sdb.read_lock(journal)["pid"] == os.getpid()


def test_lock_same_process_twice(journal):
    with SessionDB(journal):
        with pytest.raises(SessionLockedError):
            SessionDB(journal)


# --- redirect chains and lookups -------------------------------------------------

A, A2, A3 = "https://a.example/", "https://a.example/en/", "https://www.a.example/en/"
B, B2 = "http://b.example/old", "https://b.example/new"


def write_chains(path):
    with SessionDB(path) as db:
        db.fetched(A, 301, location=A2)
        db.fetched(B, 308, location=B2)       # B is redirected to B2, which is a record of its own
        db.record(A, "W-1.warc.gz", 0, 400)
        db.fetched(A, 302, hop=A2, location=A3)
        db.fetched(B2, 200, size=3)
        db.fetched(A, 200, hop=A3, content_type="text/html; charset=iso-8859-1", size=1234)
        db.record(A, "W-1.warc.gz", 400, 900, hop=A3)


def check_chain(find):
    for u in (A, A2, A3):
        r = find(u)
        assert r is not None and r.url == A, u
        assert [(h.url, h.status) for h in r.chain] == [(A, 301), (A2, 302), (A3, 200)]
        assert r.chain[0].location == A2 and r.final.url == A3
        assert r.final.records[0].offset == 400 and r.chain[0].records[0].length == 400
        assert r.final.fetch.content_type == "text/html; charset=iso-8859-1"
    assert find(B).url == B
    assert find(B2).url == B2  # its own record first
    assert find("https://nowhere.example/") is None


def test_lookup_by_every_url_of_a_chain_in_memory(journal):
    write_chains(journal)
    s = read_session(journal)
    check_chain(s.lookup)
    assert [r.url for r in s.lookup_all(B2)] == [B2, B]


def test_lookup_by_every_url_of_a_chain_through_the_sidecar(journal):
    write_chains(journal)
    with SessionIndex(journal) as ix:
        assert ix.rebuilt and ix.state == "fresh"
        check_chain(ix.lookup)
        assert [r.url for r in ix.lookup_all(B2)] == [B2, B]
    assert sdb.lookup(journal, A3).url == A
    # the sidecar: a header line that sorts first, then sorted KEY<TAB>offsets lines
    with open(journal + ".idx", "rb") as f:
        head, *body = f.read().splitlines()
    assert head.startswith(b" warchive-session-index 1 ")
    assert body == sorted(body) and all(line.count(b"\t") == 1 for line in body)
    assert {line.split(b"\t")[0] for line in body} == {k.encode() for k in (A, A2, A3, B, B2)}


def test_sidecar_keys_escape_tabs_and_newlines(journal):
    odd = "https://a.example/a\tb\nc d%20e"
    with SessionDB(journal) as db:
        db.fetched(odd, 200)
        db.fetched("https://a.example/a", 200)
    with SessionIndex(journal) as ix:
        assert ix.lookup(odd).url == odd
        assert ix.lookup("https://a.example/a").url == "https://a.example/a"
    assert sdb.index_key(odd) == b"https://a.example/a%09b%0Ac%20d%2520e"
    assert sdb.index_key("") == b"%"


# --- sidecar staleness -----------------------------------------------------------

def test_sidecar_rebuilt_when_missing_stale_or_grown(journal):
    write_chains(journal)
    with SessionIndex(journal) as ix:
        assert ix.rebuilt
    with SessionIndex(journal) as ix:
        assert not ix.rebuilt and ix.state == "fresh" and ix.tail_entries == 0
    # grown a little: the sidecar is kept and the tail scanned, new hops included
    C = "https://c.example/"
    with SessionDB(journal) as db:
        db.fetched(C, 200)
        db.fetched(A, 200, hop="https://a.example/late")   # a new hop of an indexed record
    with SessionIndex(journal) as ix:
        assert not ix.rebuilt and ix.state == "grown" and ix.tail_entries == 2
        assert ix.lookup(C).url == C
        r = ix.lookup("https://a.example/late")
        assert r.url == A and len(r.entries) == 6
        assert len(ix.lookup(A).entries) == 6
    # grown past tail_limit: rebuilt
    with SessionIndex(journal, tail_limit=10) as ix:
        assert ix.rebuilt and ix.state == "fresh" and ix.tail_entries == 0
        assert ix.lookup("https://a.example/late").url == A
    # rewritten (another file under the name): rebuilt
    tmp = journal + ".new"
    with SessionDB(tmp) as db:
        db.fetched("https://z.example/", 200)
    os.replace(tmp, journal)
    assert sdb.index_state(journal)[0] == "stale"
    with SessionIndex(journal) as ix:
        assert ix.rebuilt and ix.lookup(A) is None and ix.lookup("https://z.example/").url == "https://z.example/"
    # truncated: rebuilt
    with open(journal, "r+b") as f:
        f.truncate(os.path.getsize(journal) - 5)
    assert sdb.index_state(journal)[0] == "stale"
    # damaged sidecar: rebuilt
    with open(journal + ".idx", "wb") as f:
        f.write(b"garbage\n")
    with SessionIndex(journal) as ix:
        assert ix.rebuilt and ix.lookup("https://z.example/") is None  # its line is torn now


def test_sidecar_rewritten_in_place_same_size(journal):
    with SessionDB(journal) as db:
        db.fetched("https://a.example/1", 200)
    sdb.build_index(journal)
    data = open(journal, "rb").read().replace(b"/1", b"/2")
    time.sleep(0.01)
    with open(journal, "r+b") as f:
        f.write(data)
    assert sdb.index_state(journal)[0] == "stale"
    with SessionIndex(journal) as ix:
        assert ix.lookup("https://a.example/2") is not None and ix.lookup("https://a.example/1") is None


def test_sidecar_never_rebuild_scans(journal):
    write_chains(journal)
    with SessionIndex(journal, rebuild="never") as ix:
        assert not ix.rebuilt and ix.state == "stale" and not os.path.exists(journal + ".idx")
        check_chain(ix.lookup)


# --- fsync policy ----------------------------------------------------------------

@pytest.mark.parametrize("policy,n,syncs", [("none", 10, 1), ("always", 10, 11), (4, 10, 3), (None, 10, 1)])
def test_fsync_policy(journal, monkeypatch, policy, n, syncs):
    calls = []
    monkeypatch.setattr(os, "fdatasync", lambda fd: calls.append(fd))
    with SessionDB(journal, fsync=policy) as db:
        for i in range(n):
            db.fetched(f"https://a.example/{i}", 200)
    assert len(calls) == syncs  # the policy's, then one at close


def test_fsync_policy_checked(journal):
    for bad in ("sometimes", -1, 1.5, True):
        with pytest.raises(ValueError):
            SessionDB(journal, fsync=bad)
    assert not os.path.exists(journal + ".pid")
    assert sdb.DEFAULT_FSYNC == 1000


# --- round trip ------------------------------------------------------------------

text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)
scalars = st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | text | \
    st.floats(allow_nan=False, allow_infinity=False)
values = st.recursive(scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(text, c, max_size=3),
                      max_leaves=8)
urls = st.sampled_from(["https://a.example/", "https://b.example/x", "http://c.example/é?q=1", "u"]) | text
known = st.fixed_dictionaries({"kind": st.sampled_from(sdb.KINDS + ("future",)), "url": urls},
                              optional={"hop": urls, "status": st.integers(100, 599), "size": st.integers(0, 2**40),
                                        "t": text, "duration": st.floats(0, 1e6), "links": st.lists(urls, max_size=3)})
entries = st.builds(lambda k, extra: {**k, **{("x_" + a): b for a, b in extra.items()}},
                    known, st.dictionaries(text, values, max_size=3))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(entries, max_size=12))
def test_round_trip(tmp_path, monkeypatch, es):
    monkeypatch.setattr(os, "fsync", lambda fd: None)      # durability is not what this tests
    monkeypatch.setattr(os, "fdatasync", lambda fd: None)
    path = os.path.join(tempfile.mkdtemp(dir=tmp_path), "rt.session")  # one per example
    with SessionDB(path, fsync="none") as db:
        offs = [db.append(e) for e in es]
    s = read_session(path)
    assert list(s.all_fields()) == es
    assert list(s.positions) == offs
    assert [h.url for h in s.heads] == [e["url"] for e in es]
    for e, ent in zip(es, s.entries):
        assert ent.kind == e["kind"] and ent.status == e.get("status") and ent.links == e.get("links")
    merged = {r.url: r.fields() for r in s.records()}
    assert merged == {u: [e for e in es if e["url"] == u] for u in {e["url"] for e in es}}
    with SessionIndex(path) as ix:
        for e in es:
            assert any(r.url == e["url"] for r in ix.lookup_all(e["url"]))


# --- SIGKILL -----------------------------------------------------------------------

def _child_writes(path: str, start: int, seed: int) -> None:
    """In a forked child: append numbered entries until killed (some big, to be torn mid-write)."""
    rnd = random.Random(seed)
    try:
        db = SessionDB(path, fsync="none")
        i = start
        while True:
            r = rnd.random()
            pad = "x" * (2_000_000 if r < 0.02 else 200_000 if r < 0.07 else rnd.choice((0, 10, 100, 1000)))
            db.append({"kind": "fetch", "url": f"https://k.example/{i}", "n": i, "pad": pad})
            i += 1
    finally:
        os._exit(0)


def kill_loop(directory, rounds: int, seed: int) -> int:
    """Kill a writing child `rounds` times; a new journal every 10 rounds keeps each read short."""
    rnd = random.Random(seed)
    torn_seen = 0
    for r in range(rounds):
        if r % 10 == 0:
            path = str(directory / f"killed-{r}.session")
            expected = 0
        pid = os.fork()
        if pid == 0:
            _child_writes(path, expected, seed * 1000 + r)
        time.sleep(rnd.random() * 0.02)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        if not os.path.exists(path):  # killed before it created the journal
            assert expected == 0
            n = 0
        else:
            s = read_session(path)
            torn_seen += s.torn > 0
            n = len(s)
        assert n >= expected
        for i in range(expected, n):  # every complete entry reads back, in order, whole
            f = s.fields(i)
            assert f["n"] == i and s.heads[i].url == f"https://k.example/{i}"
            assert set(f["pad"]) <= {"x"} and len(f["pad"]) in (0, 10, 100, 1000, 200_000, 2_000_000)
        # appendable: the next writer cuts a torn tail (pid file of the dead child: stale) and appends
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SessionWarning)
            with SessionDB(path, fsync="none") as db:
                db.append({"kind": "fetch", "url": f"https://k.example/{n}", "n": n, "pad": ""})
        s = read_session(path)
        assert len(s) == n + 1 and s.torn == 0 and s.fields(n)["n"] == n
        expected = n + 1
    return torn_seen


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_sigkill_50_times(tmp_path):
    kill_loop(tmp_path, 50, seed=1)


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_sigkill_500_times(tmp_path):
    torn = kill_loop(tmp_path, 500, seed=2)
    assert torn > 0  # some kills did cut an entry in the middle of its write


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_two_writers_never_interleave_within_a_line(journal):
    """With force, two processes append at once: each entry is one write() on O_APPEND, so lines
    interleave but never mix."""
    with SessionDB(journal):
        pass
    pids = []
    for w in range(2):
        pid = os.fork()
        if pid == 0:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    db = SessionDB(journal, force=True, fsync="none")
                    for i in range(1500):
                        db.fetched(f"https://w{w}.example/{i}", 200, pad="y" * (i % 700))
                    db.close()
            finally:
                os._exit(0)
        pids.append(pid)
    for pid in pids:
        assert os.waitpid(pid, 0)[1] == 0
    s = read_session(journal)
    assert len(s) == 3000 and s.torn == 0
    for w in range(2):
        mine = [h.url for h in s.heads if h.url.startswith(f"https://w{w}.")]
        assert mine == [f"https://w{w}.example/{i}" for i in range(1500)]
