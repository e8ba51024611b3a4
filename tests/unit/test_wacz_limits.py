"""A WACZ's index is read within limits across all of its index entries (warchive.wacz.indexlines:
4 GiB inflated, 16 Mi lines, 1 MiB a line), as streams, after its hashes are checked
(docs/security.md, "Resource exhaustion").

The hostile files are made here (tests/waczbombs.py): 40 deflated index entries of 250 MiB each,
a stored index.cdx.gz of 40 gzip members of 250 MiB, 255 MiB of two-byte lines, and a valid
WACZ whose index has a million lines. `warchive serve --root` over each of them beside a
directory collection: the hostile one answers 503 saying why, the other one 200, and the
server's peak resident memory (VmHWM of its process) stays within ``RSS_BOUND`` of a server
of the directory collection alone, however large the WACZ's index inflates. `wacz validate`
and `add` refuse each in one line and exit 1.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
from starlette.testclient import TestClient

import waczbombs
from loadkit import serve, status
from warchive.collection import Collection
from warchive.errors import IndexFormatError
from warchive.replay import create_app
from warchive.wacz import WaczFile
from warchive.wacz.indexlines import MAX_INDEX_ENTRIES, IndexBudget, IndexTooLarge, gunzip

RSS_BOUND = 64 << 20   # bytes of peak RSS a WACZ collection may add to a server, whatever its index
LARGE_LINES = 1_000_000   # about 180 MB of CDXJ: held as lines, several times RSS_BOUND
BOMBS = {"entries": waczbombs.entries_bomb, "members": waczbombs.members_bomb, "short": waczbombs.short_lines}
WHY = {"entries": ("indexes/index-16.cdxj", "more than 4294967296 bytes together"),
       "members": ("indexes/index.cdx.gz", "more than 4294967296 bytes together"),
       "short": ("indexes/index.cdxj", "more than 16777216 lines together")}
CDX = "cdx?url=http://example.com/&output=json"


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Dict[str, Path]:
    d = tmp_path_factory.mktemp("wacz-bombs")
    out = {name: make(d) for name, make in BOMBS.items()}
    out["large"] = waczbombs.large_index(d, LARGE_LINES)
    warc = d / "site.warc.gz"
    warc.write_bytes(waczbombs.warc()[0])
    out["warc"] = warc
    return out


def _root(tmp: Path, made: Dict[str, Path], *waczs: str) -> Path:
    """A root of collections: "web" (a directory collection of the WARC inside the WACZ files)
    and each of ``waczs`` as NAME.wacz."""
    root = tmp / "root"
    Collection.init(str(root / "web")).add([str(made["warc"])])
    for name in waczs:
        os.link(made[name], root / f"{name}.wacz")
    return root


def hwm(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) << 10
    raise AssertionError("no VmHWM")


def _answer(url: str) -> Tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=120) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def _web_answers(base: str) -> None:
    got, body = _answer(f"{base}/web/{CDX}")
    assert got == 200 and json.loads(body.splitlines()[0])["timestamp"] == waczbombs.TS
    assert _answer(f"{base}/web/{waczbombs.TS}id_/{waczbombs.URL}") == (200, waczbombs.BODY)


@pytest.fixture(scope="module")
def baseline(made, tmp_path_factory) -> int:
    """The peak RSS of a server of the directory collection alone, after the same requests."""
    root = _root(tmp_path_factory.mktemp("alone"), made)
    with serve(root) as (base, pid):
        _web_answers(base)
        _web_answers(base)
        return hwm(pid)


# --------------------------------------------------------------------------- serve

@pytest.mark.parametrize("bomb", list(BOMBS))
def test_a_bomb_is_unavailable_and_the_other_collections_are_served(made, baseline, tmp_path, bomb):
    said: List[str] = []
    with serve(_root(tmp_path, made, bomb), log=said) as (base, pid):
        _web_answers(base)
        got, body = _answer(f"{base}/{bomb}/{CDX}")
        assert got == 503, body
        message = json.loads(body)["message"]
        entry, why = WHY[bomb]
        assert f"collection '{bomb}' is unavailable" in message and repr(entry) in message and why in message
        assert status(f"{base}/{bomb}/") == 503
        _web_answers(base)
        peak = hwm(pid)
    assert not any("Traceback" in line or "MemoryError" in line for line in said), said
    assert peak - baseline < RSS_BOUND, f"peak RSS {peak >> 20} MiB, {baseline >> 20} MiB without the WACZ"


def test_a_large_index_is_served_in_bounded_memory(made, baseline, tmp_path):
    root = _root(tmp_path, made, "large")
    with serve(root) as (base, pid):
        got, body = _answer(f"{base}/large/{CDX}")
        assert got == 200 and json.loads(body.splitlines()[0])["url"] == waczbombs.URL
        got, body = _answer(f"{base}/large/cdx?url=http://example.com/page/{LARGE_LINES - 2:08d}&output=json")
        assert got == 200 and json.loads(body)["url"].endswith(f"/page/{LARGE_LINES - 2:08d}")
        assert _answer(f"{base}/large/{waczbombs.TS}id_/{waczbombs.URL}") == (200, waczbombs.BODY)
        _web_answers(base)
        peak = hwm(pid)
    assert peak - baseline < RSS_BOUND, f"peak RSS {peak >> 20} MiB, {baseline >> 20} MiB without the WACZ"


def _tampered(src: Path, dst: Path, change: str) -> Path:
    """``src`` rewritten entry by entry (CRCs right) with one entry changed after the package
    was sealed: an index line ("index"), or datapackage.json against its digest ("package")."""
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(dst, "w") as out:
        for info in z.infolist():
            data = z.read(info)
            if change == "index" and info.filename.startswith("indexes/"):
                data = data.replace(waczbombs.TS.encode(), b"19990102030405", 1)
            if change == "package" and info.filename == "datapackage.json":
                data = data.replace(b'"wacz_version"', b'"title": "changed", "wacz_version"')
            out.writestr(info, data)
    return dst


@pytest.mark.parametrize("change,named", [("index", "'indexes/index.cdxj' does not match its sha256"),
                                          ("package", "datapackage.json does not match the hash in "
                                                      "datapackage-digest.json")])
def test_a_wacz_changed_after_it_was_sealed_is_unavailable(made, tmp_path, change, named):
    small = waczbombs.write_wacz(tmp_path / "small.wacz", [waczbombs.named(
        "indexes/index.cdxj", waczbombs.repeated(waczbombs.capture_line() + b"\n", 1, 0))])
    root = _root(tmp_path, made)
    shutil.copy(small, root / "good.wacz")
    _tampered(small, root / "changed.wacz", change)
    client = TestClient(create_app(str(root)))
    assert client.get(f"/good/{CDX}").status_code == 200
    r = client.get(f"/changed/{CDX}")
    assert r.status_code == 503 and named in r.json()["message"], r.text
    assert client.get(f"/web/{CDX}").status_code == 200


# --------------------------------------------------------------------------- validate, add

def _cli(*argv: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "warchive", *map(str, argv)], capture_output=True, text=True,
                          timeout=600)


@pytest.mark.parametrize("bomb", list(BOMBS))
def test_validate_and_add_refuse_a_bomb_in_one_line(made, tmp_path, bomb):
    entry, why = WHY[bomb]
    r = _cli("wacz", "validate", made[bomb])
    assert r.returncode == 1 and len(r.stderr.splitlines()) == 1, r.stderr[-3000:]
    assert str(made[bomb]) in r.stderr and repr(entry) in r.stderr and why in r.stderr
    coll = tmp_path / "coll"
    assert _cli("init", coll).returncode == 0
    r = _cli("add", coll, made[bomb])
    assert r.returncode == 1 and len(r.stderr.splitlines()) == 1, r.stderr[-3000:]
    assert str(made[bomb]) in r.stderr and repr(entry) in r.stderr and why in r.stderr
    assert not os.listdir(coll / "archive") and not list((coll / "indexes").glob("*.seg"))


# The peak RSS of a command: its parent reads it from getrusage once it has waited for it.
PEAK = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
        "sys.stderr.write(r.stderr); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
        "sys.exit(r.returncode)")


def _add_peak(coll: Path, wacz: Path) -> Tuple[subprocess.CompletedProcess, int]:
    assert _cli("init", coll).returncode == 0
    r = subprocess.run([sys.executable, "-c", PEAK, sys.executable, "-m", "warchive", "add", coll, wacz],
                       capture_output=True, text=True, timeout=600)
    return r, int(r.stdout.split()[-1]) << 10


def test_add_streams_a_large_index_into_one_segment_in_bounded_memory(made, tmp_path):
    small = waczbombs.write_wacz(tmp_path / "small.wacz", [waczbombs.named(
        "indexes/index.cdxj", waczbombs.repeated(waczbombs.capture_line() + b"\n", 1, 0))])
    r, alone = _add_peak(tmp_path / "small", small)
    assert r.returncode == 0 and "1 index lines kept" in r.stderr, r.stderr
    coll = tmp_path / "coll"
    r, peak = _add_peak(coll, made["large"])
    assert r.returncode == 0 and f"{LARGE_LINES} index lines kept" in r.stderr, r.stderr
    assert peak - alone < RSS_BOUND, f"peak RSS {peak >> 20} MiB, {alone >> 20} MiB adding a one-line WACZ"
    r = _cli("lookup", f"http://example.com/page/{LARGE_LINES - 2:08d}", coll)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 1, r.stderr


# --------------------------------------------------------------------------- the pieces

def test_the_limits_count_across_entries():
    budget = IndexBudget("x.wacz", max_bytes=100, max_lines=10, max_line=8)
    assert b"".join(budget.watch("a", [b"1\n2\n3\n", b"4\n"])) == b"1\n2\n3\n4\n"
    with pytest.raises(IndexTooLarge, match="entry 'b': the index entries hold more than 10 lines"):
        list(budget.watch("b", [b"5\n6\n7\n", b"8\n9\n10\n", b"11"]))
    budget = IndexBudget("x.wacz", max_bytes=100, max_lines=10, max_line=8)
    with pytest.raises(IndexTooLarge, match="entry 'c': a line is longer than 8 bytes"):
        list(budget.watch("c", [b"1\n1234", b"56789\n"]))
    budget = IndexBudget("x.wacz", max_bytes=10, max_lines=10, max_line=8)
    list(budget.watch("d", [b"1234\n"]))
    with pytest.raises(IndexTooLarge, match="entry 'e': the index entries inflate to more than 10 bytes"):
        list(budget.watch("e", [b"1234\n", b"5"]))


def test_more_index_entries_than_a_wacz_may_have_are_refused(tmp_path):
    line = waczbombs.repeated(waczbombs.capture_line() + b"\n", 1, 0)
    p = waczbombs.write_wacz(tmp_path / "many.wacz", [waczbombs.named(f"indexes/index-{i:02d}.cdxj", line)
                                                      for i in range(MAX_INDEX_ENTRIES + 1)])
    with WaczFile(str(p)) as wz:
        with pytest.raises(IndexTooLarge, match=f"'indexes/index-{MAX_INDEX_ENTRIES}.cdxj': more than "
                                                f"{MAX_INDEX_ENTRIES} entries under indexes/"):
            wz.verify_hashes(only="indexes/")
        with pytest.raises(IndexTooLarge):
            wz.index_sources()


def test_gzip_members_are_inflated_a_piece_at_a_time():
    member = gzip.compress(b"x" * 5000 + b"\n")
    raw = member * 3 + gzip.compress(b"last\n")
    cut = [raw[i:i + 7] for i in range(0, len(raw), 7)]
    pieces = list(gunzip("x.wacz", "indexes/index.cdx.gz", cut, piece=1000))
    assert b"".join(pieces) == (b"x" * 5000 + b"\n") * 3 + b"last\n" and max(map(len, pieces)) <= 1000
    with pytest.raises(IndexFormatError, match="ends inside a gzip member"):
        list(gunzip("x.wacz", "indexes/index.cdx.gz", [raw[:-3]]))


def test_index_lines_are_streams_within_the_limits(made):
    with WaczFile(str(made["large"])) as wz:
        (part, lines), = list(wz.index_lines())
        assert part.name == "indexes/index.cdxj" and sum(1 for _ in lines) == LARGE_LINES
    with WaczFile(str(made["short"])) as wz:
        (part, lines), = list(wz.index_lines())
        with pytest.raises(IndexTooLarge, match="more than 16777216 lines"):
            for _ in lines:
                pass
