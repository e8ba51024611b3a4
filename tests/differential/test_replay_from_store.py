"""Replay and loading straight from the durable store equal replay and loading from the plain
files, and damage to the chunks is served around or reported as an
unreadable plain record is.

The same collections are built twice from the same WARCs (the replay site, warcgen's revisits,
cdx_queries' timeline, the load cases of test_load_vs_pywb and the Wget pair): once with the
files in archive/, once with archive/ made into a store holding them and nothing else
(tests/storekit.py). For every capture of every index line, the id_ and mp_ replies of the two
apps (status, headers, body) and the loader's status, headers and payload are compared. The
plain collection is the oracle: nothing here is an expected value of our own making.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
from starlette.testclient import TestClient

import cdx_queries
import warcgen
from conftest import WGET_DIR
from replaysite import write_site
from storekit import chunk_files, flip, store_in_place
from test_load_vs_pywb import write_load_cases
from warchive.collection import Collection
from warchive.index.build import index_paths
from warchive.index.cdx import IndexOptions
from warchive.replay.app import create_app
from warchive.replay.load import CaptureLoader
from warchive.store import Store

COLLS = ("site", "gen", "wget")


def _warcs(d: Path) -> Dict[str, List[Path]]:
    d.mkdir(parents=True, exist_ok=True)
    gen = [warcgen.write_revisits(d).path, cdx_queries.write_timeline(d), *write_load_cases(d)]
    return {"site": [write_site(d)], "gen": gen,
            "wget": [WGET_DIR / "docs-python-3.11.warc.gz", WGET_DIR / "docs-python-3.11-recrawl.warc.gz"]}


def _build(root: Path, warcs: Dict[str, List[Path]], stored: bool) -> Path:
    for name, files in warcs.items():
        coll = Collection.init(str(root / "colls" / name))
        coll.add([str(p) for p in files])
        if stored:
            store_in_place(root / "colls" / name / "archive", root / "volumes" / name,
                           fragment_size=64 << 10 if name == "wget" else 1024)
    return root / "colls"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    d = tmp_path_factory.mktemp("storereplay")
    warcs = _warcs(d / "warcs")
    return {"warcs": warcs, "plain": _build(d / "plain", warcs, False), "store": _build(d / "store", warcs, True),
            "tmp": d}


def _captures(files: List[Path]) -> List[Tuple[str, str]]:
    """(timestamp, url) of every index line of the files (cdxj-indexer's default selection)."""
    out: List[bytes] = []
    index_paths([str(p) for p in files], out.append, IndexOptions())
    caps = []
    for line in b"".join(out).decode().splitlines():
        _key, ts, js = line.split(" ", 2)
        caps.append((ts, json.loads(js)["url"]))
    return sorted(set(caps))


def _reply(client: TestClient, path: str):
    r = client.get(path, follow_redirects=False)
    return r.status_code, sorted((k, v) for k, v in r.headers.items() if k != "date"), r.content


@pytest.mark.parametrize("coll", COLLS)
def test_every_capture_replays_from_the_store_as_from_the_files(world, coll, request):
    full = request.config.getoption("-m") == "slow" or os.environ.get("WARCHIVE_EXAMPLES") == "full"
    plain = TestClient(create_app(str(world["plain"])))
    stored = TestClient(create_app(str(world["store"])))
    caps = _captures(world["warcs"][coll])
    assert len(caps) > 5
    if coll == "wget" and not full:   # 557 pages of docs.python.org: one in 8 by default (rewriting mp_ is ~35 ms)
        caps = caps[::8]
    assert not any((world["store"] / coll / "archive").glob("*.warc*"))   # only the store has them
    differ = []
    for ts, url in caps:
        for mod in ("id_", "mp_"):
            path = f"/{coll}/{ts}{mod}/{url}"
            a, b = _reply(plain, path), _reply(stored, path)
            if a != b:
                differ.append((path, a[0], b[0]))
    assert differ == []


@pytest.mark.parametrize("coll", COLLS)
def test_every_index_line_loads_from_the_store_as_from_the_files(world, coll):
    lines = []
    index_paths([str(p) for p in world["warcs"][coll]], lines.append, IndexOptions())
    with CaptureLoader(str(world["plain"] / coll)) as a, CaptureLoader(str(world["store"] / coll)) as b:
        n = 0
        for line in b"".join(lines).decode().splitlines():
            got = []
            for loader in (a, b):
                try:
                    with loader.load(line) as cap:
                        got.append((cap.status, list(cap.headers.items()) if cap.headers else None, cap.payload.read()))
                except Exception as e:   # the same failure in both (a capture that cannot load)
                    got.append((type(e).__name__,))
            assert got[0] == got[1], line
            n += 1
        assert n > 5


def _copy_coll(world, coll: str, dst: Path) -> Path:
    """A copy of the store-backed collection ``coll`` (its store and volumes), to damage."""
    shutil.copytree(world["tmp"] / "store" / "colls" / coll, dst / "colls" / coll, symlinks=True)
    shutil.copytree(world["tmp"] / "store" / "volumes" / coll, dst / "volumes" / coll)
    # the store names its volumes by absolute path: point the copy's store.json at the copies
    sj = dst / "colls" / coll / "archive" / "store.json"
    sj.write_text(sj.read_text().replace(str(world["tmp"] / "store" / "volumes"), str(dst / "volumes")))
    return dst / "colls"


def test_two_lost_chunks_are_served_around(world, tmp_path):
    colls = _copy_coll(world, "site", tmp_path)
    store = Store(str(colls / "site" / "archive"))
    for name in store.names():   # m = 2 bad chunks of the 6 of every stripe: both data chunks
        man = store.manifest(name)
        Path(chunk_files(store, name)[0]).unlink()
        for st in range(len(man.stripes)):   # a flipped bit in every fragment of chunk 2
            flip(chunk_files(store, name)[2], man.fragment_offset(st) + man.header_size + 1)
    plain = TestClient(create_app(str(world["plain"])))
    damaged = TestClient(create_app(str(colls)))
    for ts, url in _captures(world["warcs"]["site"]):
        for mod in ("id_", "mp_"):
            path = f"/site/{ts}{mod}/{url}"
            assert _reply(damaged, path) == _reply(plain, path), path


def test_a_record_beyond_repair_is_answered_as_an_unreadable_plain_record(world, tmp_path):
    """Three bad chunks (m = 2) in the stripes of one record: replay answers as it does for the
    plain file with the bytes of those stripes destroyed (the next-closest capture that loads, or
    404 naming the capture when none does), and never with a 5xx."""
    lines: List[bytes] = []
    (warc,) = world["warcs"]["site"]
    index_paths([str(warc)], lines.append, IndexOptions())
    first = json.loads(b"".join(lines).decode().splitlines()[0].split(" ", 2)[2])
    off, length, url = int(first["offset"]), int(first["length"]), first["url"]
    ts = b"".join(lines).decode().splitlines()[0].split(" ", 2)[1]
    # the store: three fragments of every stripe the record touches fail their hashes
    colls = _copy_coll(world, "site", tmp_path / "s")
    store = Store(str(colls / "site" / "archive"))
    man = store.manifest(warc.name)
    stripes = list(man.stripes_for(off, off + length))
    for s in stripes:
        for i in (0, 1, 4):
            flip(chunk_files(store, warc.name)[i], man.fragment_offset(s) + man.header_size + 1)
    # the oracle: the plain collection with the same bytes (those stripes) zeroed: every record in
    # them unreadable
    lo, hi = man.stripe_start(stripes[0]), man.stripe_start(stripes[-1]) + man.stripe_size(stripes[-1])
    pdir = tmp_path / "p" / "colls"
    shutil.copytree(world["plain"] / "site", pdir / "site")
    target = pdir / "site" / "archive" / warc.name
    data = bytearray(target.read_bytes())
    data[lo:hi] = bytes(hi - lo)
    target.unlink()
    target.write_bytes(bytes(data))
    plain = TestClient(create_app(str(pdir)))
    damaged = TestClient(create_app(str(colls)))
    for mod in ("id_", "mp_"):
        path = f"/site/{ts}{mod}/{url}"
        a, b = _reply(plain, path), _reply(damaged, path)
        assert a[0] < 500 and b == a, (path, a[0], b[0])
        assert url.encode() in b[2]   # the answer names the capture
