"""WACZ against py-wacz (the `wacz` package, 0.6.0): its validator accepts what we write, we import what it
writes, and a WACZ round trip (create, then import into a fresh collection) keeps every capture and byte.

py-wacz runs as a subprocess (`python -m wacz`), as its users run it.
"""

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from warchive.collection import Collection
from warchive.index.query import Index
from warchive.replay.load import CaptureLoader
from warchive.wacz import WaczFile, add_wacz, create_wacz, validate
from warchive.wacz.create import collection_lines

pytest.importorskip("wacz", reason="py-wacz is a test extra (pip install -e .[test])")

WGET = Path(__file__).resolve().parents[1] / "data" / "wget"
WARCS = [WGET / "docs-python-3.11.warc.gz", WGET / "docs-python-3.11-recrawl.warc.gz"]


def pywacz(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "wacz", *map(str, args)], capture_output=True, text=True,
                          timeout=600, cwd=cwd)


def sha256(p):
    return hashlib.sha256(Path(p).read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def coll(tmp_path_factory):
    root = tmp_path_factory.mktemp("wacz")
    c = Collection.init(str(root / "web"))
    c.add([str(w) for w in WARCS])
    return c


@pytest.fixture(scope="module", params=["plain", "compressed"])
def ours(request, coll, tmp_path_factory):
    out = tmp_path_factory.mktemp("ours") / f"web-{request.param}.wacz"
    # compressed: 200-line blocks so that the small fixture spans several blocks
    made = create_wacz(coll.path, str(out), title="Wget fixtures",
                       compress_over=0 if request.param == "compressed" else 10**9, lines_per_block=200)
    assert made.compressed == (request.param == "compressed")
    return out


def test_pywacz_validates_what_we_write(ours):
    r = pywacz("validate", "-f", ours)
    assert "Validation succeeded" in r.stdout and "failed" not in r.stdout, r.stdout + r.stderr


def test_pywacz_refuses_a_tampered_package(ours, tmp_path):
    # the oracle's check is real: a WACZ whose datapackage.json no longer matches its digest fails
    import zipfile
    bad = tmp_path / "bad.wacz"
    with zipfile.ZipFile(ours) as src, zipfile.ZipFile(bad, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "datapackage.json":
                data = data.replace(b'"Wget fixtures"', b'"Tampered!!!!!"')
            dst.writestr(info, data)
    r = pywacz("validate", "-f", bad)
    # (py-wacz 0.6.0 exits 0 either way: its verdict is what it prints)
    assert "Validation failed" in r.stdout and "Validation succeeded" not in r.stdout
    assert not validate(str(bad)).ok


def test_our_validator_accepts_ours(ours):
    rep = validate(str(ours))
    assert rep.ok, rep.problem
    assert rep.warcs == 2 and rep.pages > 500


def test_round_trip_keeps_every_line_and_byte(coll, ours, tmp_path):
    fresh = tmp_path / "fresh"
    got = add_wacz(str(fresh), str(ours))
    assert not got.reindexed, got.reason
    assert collection_lines(Collection(str(fresh))) == collection_lines(coll)
    for w in WARCS:
        assert sha256(fresh / "archive" / w.name) == sha256(w)
    pages = json.loads((fresh / "pages" / (Path(ours).stem + ".jsonl")).read_text().splitlines()[1])
    assert pages["url"].startswith("http")


@pytest.fixture(scope="module")
def theirs(tmp_path_factory):
    d = tmp_path_factory.mktemp("theirs")
    out = d / "pywacz.wacz"
    r = pywacz("create", "--detect-pages", "-o", out, *WARCS)
    assert r.returncode == 0, r.stdout + r.stderr
    return out


def test_we_import_and_load_what_pywacz_writes(theirs, tmp_path):
    coll = tmp_path / "imported"
    got = add_wacz(str(coll), str(theirs))
    assert not got.reindexed, got.reason   # its compressed index is read and trusted
    with WaczFile(str(theirs)) as wz:
        their_lines = sorted(ln for _, s in wz.index_sources() for ln in s.range(b"", None))
    assert collection_lines(Collection(str(coll))) == sorted(set(their_lines))
    # every capture py-wacz indexed is looked up and loaded from the imported collection
    idx = Index(str(coll))
    loader = CaptureLoader(idx)
    try:
        caps = idx.query(url="docs.python.org/*", limit=40)
        assert len(caps) == 40
        for c in caps:
            lc = loader.load(c)
            try:
                assert lc.status == int(c["status"]), c
                lc.read()
            finally:
                lc.close()
    finally:
        loader.close()
        idx.close()


def test_our_validator_accepts_pywacz_files(theirs):
    rep = validate(str(theirs))
    assert rep.ok, rep.problem
    assert rep.lines > 1000


def test_reindex_when_the_index_lies(coll, tmp_path):
    # an index whose offsets point outside the WARC is not trusted: the WARCs are indexed again
    out = tmp_path / "lying.wacz"
    create_wacz(coll.path, str(out))
    import zipfile
    bad = tmp_path / "lying2.wacz"
    with zipfile.ZipFile(out) as src, zipfile.ZipFile(bad, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "indexes/index.cdxj":
                data = data.replace(b'"offset": "', b'"offset": "99999999')
            dst.writestr(info, data)
    # reseal the package so only the index lies
    from warchive.wacz.datapackage import digest_json
    import io
    pkg = json.loads(zipfile.ZipFile(bad).read("datapackage.json"))
    z = zipfile.ZipFile(bad)
    for r in pkg["resources"]:
        data = z.read(r["path"])
        r["hash"], r["bytes"] = "sha256:" + hashlib.sha256(data).hexdigest(), len(data)
    pkg_b = json.dumps(pkg).encode()
    final = tmp_path / "lying3.wacz"
    with zipfile.ZipFile(final, "w") as dst:
        for info in z.infolist():
            if info.filename == "datapackage.json":
                dst.writestr(info, pkg_b)
            elif info.filename == "datapackage-digest.json":
                dst.writestr(info, digest_json(pkg_b))
            else:
                dst.writestr(info, z.read(info))
    got = add_wacz(str(tmp_path / "c"), str(final))
    assert got.reindexed and "outside" in got.reason
    assert collection_lines(Collection(str(tmp_path / "c"))) == collection_lines(coll)
