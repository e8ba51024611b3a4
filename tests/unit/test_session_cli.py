"""`warchive session show|failed|skipped|stats FILE` (warchive.capture.session.report)."""

from __future__ import annotations

import json
import os

import pytest

from warchive.capture.session import SessionDB
from warchive.capture.session.report import format_table
from warchive.cli import main

A, A2 = "https://a.example/", "https://a.example/en/"
B = "https://b.example/logo.png"
C = "https://c.example/down"


@pytest.fixture
def journal(tmp_path):
    p = str(tmp_path / "crawl.session")
    with SessionDB(p) as db:
        db.start(config={"depth": 1}, seeds=[A], t="2026-11-29T10:00:00.000000Z")
        db.fetched(A, 301, location=A2, t="2026-11-29T10:00:00.000000Z")
        db.record(A, "W-1.warc.gz", 0, 500, t="2026-11-29T10:00:00.100000Z")
        db.fetched(A, 200, hop=A2, content_type="text/html; charset=utf-8", size=2048, digest="sha1:AAA",
                   headers={"If-None-Match": '"e1"'}, t="2026-11-29T10:00:01.000000Z")
        db.record(A, "W-1.warc.gz", 500, 1500, hop=A2, record_id="<urn:uuid:a2>", t="2026-11-29T10:00:01.100000Z")
        db.outlinks(A, [B, C], hop=A2, t="2026-11-29T10:00:01.200000Z")
        db.skipped(B, "duplicate", digest="sha1:BBB", original_uri="https://mirror.example/logo.png",
                   original_date="2026-11-28T09:00:00Z", original_record_id="<urn:uuid:m1>",
                   t="2026-11-29T10:00:02.000000Z")
        db.failed(C, "connection refused", t="2026-11-29T10:00:03.000000Z")
        db.failed(C, "timeout after 30 s", attempt=2, t="2026-11-29T10:00:40.000000Z")
        db.append({"kind": "screenshot", "url": A, "png": "a.png"})
    return p


def run(capsys, *argv):
    rc = main(["session", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_show_all(journal, capsys):
    rc, out, _ = run(capsys, "show", journal)
    assert rc == 0
    assert "seeds     https://a.example/" in out and '"depth": 1' in out
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.startswith("https://")}
    assert rows[A][1:4] == ["fetched", "200", "2"] and "W-1.warc.gz:500" in rows[A]
    assert rows[B][1] == "skipped" and rows[C][1] == "failed"
    assert "3 URLs, 10 entries" in out


@pytest.mark.parametrize("url", [A, A2])
def test_show_one_by_any_url_of_its_chain(journal, capsys, url):
    rc, out, _ = run(capsys, "show", journal, url)
    assert rc == 0 and out.startswith(f"{A}  fetched 200")
    assert "301  https://a.example/en/" in out
    assert "<urn:uuid:a2>" in out and "If-None-Match" in out and "outlinks (2):" in out
    assert '"kind":"screenshot"' in out  # an entry kind this version does not know, shown as written
    assert os.path.exists(journal + ".idx")  # found through the sidecar


def test_show_unknown_url(journal, capsys):
    rc, _, err = run(capsys, "show", journal, "https://nowhere.example/")
    assert rc == 1 and "not in" in err


def test_failed(journal, capsys):
    rc, out, _ = run(capsys, "failed", journal)
    assert rc == 0
    (row,) = [line for line in out.splitlines() if line.startswith(C)]
    assert row.split()[1] == "2" and "timeout after 30 s" in row and "2026-11-29T10:00:40" in row
    assert "1 URLs whose last attempt failed" in out


def test_skipped(journal, capsys):
    rc, out, _ = run(capsys, "skipped", journal)
    (row,) = [line for line in out.splitlines() if line.startswith(B)]
    for v in ("duplicate", "sha1:BBB", "https://mirror.example/logo.png", "2026-11-28T09:00:00Z", "<urn:uuid:m1>"):
        assert v in row


def test_stats(journal, capsys):
    rc, out, _ = run(capsys, "stats", journal, "--json")
    st = json.loads(out)
    assert st["urls"] == 3 and st["entries"] == 10
    assert st["states"] == {"fetched": 1, "skipped": 1, "failed": 1}
    assert st["status"] == {"200": 1} and st["mime"] == {"text/html": 1} and st["payload_bytes"] == 2048
    assert st["warc_bytes"] == 2000 and st["warc_files"] == 1
    assert st["hosts"] == {"a.example": 1, "b.example": 1, "c.example": 1}
    assert st["duration"] == 40.0
    rc, out, _ = run(capsys, "stats", journal)
    assert rc == 0 and "duration       40.0 s" in out and "text/html" in out


def test_damaged_journal(journal, capsys):
    with open(journal, "r+b") as f:
        data = f.read()
        i = data.index(b'{"kind":"skipped"')
        f.seek(i)
        f.write(b"#")
    rc, _, err = run(capsys, "stats", journal)
    assert rc == 1 and f"at byte {i}" in err and "--skip-errors" in err
    rc, out, err = run(capsys, "skipped", journal, "--skip-errors")
    assert rc == 0 and "warning" in err and "0 skip decisions" in out


def test_format_table_aligns():
    t = format_table(["name", "n"], [("a", 1), ("bbb", 1000), ("c", None)])
    assert t.splitlines() == ["name      n", "----  -----", "a         1", "bbb   1,000", "c         -"]


@pytest.mark.parametrize("action", ["show", "failed", "skipped", "stats"])
def test_paths_a_user_has(journal, tmp_path, capsys, action):
    """The crawl's directory (the one the crawler prints), the collection (its latest crawl) and the
    journal itself are read alike; a missing path, an empty file, a directory with no crawl and a
    file of another kind are one line naming the path and exit 1, never a traceback."""
    coll = tmp_path / "coll"
    older, newer = coll / "crawls" / "20261129T090000Z", coll / "crawls" / "20261129T100000Z"
    for d in (older, newer):
        d.mkdir(parents=True)
        (d / "config.json").write_text("{}")
    os.replace(journal, newer / "session.journal")
    (older / "session.journal").write_bytes(b"")   # the latest crawl is read, not this one
    want = run(capsys, action, str(newer / "session.journal"))
    assert want[0] == 0 and want[1]
    assert run(capsys, action, str(newer)) == want
    assert run(capsys, action, str(coll)) == want
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "nocrawl").mkdir()
    (tmp_path / "page.html").write_bytes(b"<html>not a journal</html>\n")
    for bad in ("missing", "empty", "nocrawl", "page.html", str(older)):
        path = str(tmp_path / bad)
        rc, out, err = run(capsys, action, path)
        assert rc == 1 and out == "" and path in err and err.count("\n") == 1 and "Traceback" not in err, (bad, err)
