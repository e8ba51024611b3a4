"""Scrub and repair under fault injection: every fault is found by the scrub that should find it (light
or deep, asserted), every fault within m per stripe is repaired byte-identically (the sha256 of `get`
equals the original's), beyond m a clear error and the store tree unchanged; a file bad at ingest is
flagged and never changed; --auto repairs a few and alerts on a burst; the scrub state resumes."""

import hashlib
import io
import json
import os
import shutil
from pathlib import Path

import pytest

from warchive.errors import StoreError
from warchive.store import Store, get, put, put_object
from warchive.store.auto import plan
from warchive.store.jsonfile import canonical
from warchive.store.records import RecordEntry, list_records, listing_digest
from warchive.store.repair import repair
from warchive.store.scrub import (BEYOND, DAMAGE, RECORDS, STATE_FILE, Limiter, check_file, load_state, scrub)
from storekit import chunk_files, flip, make_store, sha256

WGET = Path(__file__).resolve().parents[1] / "data" / "wget"
SRC = WGET / "docs-python-3.11-recrawl.warc.gz"
SMALL = "small.warc.gz"


def _small_warc(dst: Path) -> Path:
    """The first 200 records (gzip members) of SRC: a valid, different, smaller WARC."""
    records, _ = list_records(str(SRC))
    end = records[200].offset
    dst.write_bytes(SRC.read_bytes()[:end])
    return dst


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    root = tmp_path_factory.mktemp("pristine")
    store = make_store(root, k=4, m=2, fragment_size=4096)
    put(store, str(SRC))
    put(store, str(_small_warc(root / SMALL)))
    return root


@pytest.fixture
def store(pristine, tmp_path):
    """A fresh copy of the pristine store (volumes keep their absolute paths: copied in place)."""
    root = tmp_path / "r"
    shutil.copytree(pristine, root, symlinks=True)
    cfg = json.loads((root / "S" / "store.json").read_bytes())
    cfg["volumes"] = [str(root / Path(v).name) for v in cfg["volumes"]]
    (root / "S" / "store.json").write_bytes(canonical(cfg))
    return Store(str(root / "S"))


def _tree(store) -> dict:
    root = Path(store.root).parent
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name not in ("store.lock", "scrub.lock", STATE_FILE)}


def _get_sha(store, name) -> str:
    out = io.BytesIO()
    get(Store(store.root), name, out)
    return sha256(out.getvalue())


def _kinds(rep):
    return {f.kind for f in rep.findings}


def _found(store, name=SRC.name):
    """(light findings' kinds, deep findings' kinds) of ``name``."""
    s = Store(store.root)
    return _kinds(check_file(s, name, False)), _kinds(check_file(s, name, True))


def _repaired(store, name=SRC.name, original=SRC):
    r = repair(Store(store.root), name)
    assert r.changed
    assert _get_sha(store, name) == sha256(original.read_bytes())
    s = Store(store.root)
    rep = check_file(s, name, True)
    assert rep.status == "ok", rep.findings
    assert not (_kinds(check_file(s, name, False)) - {"producer-defect"})
    return r


def _chunk(store, i, name=SRC.name):
    return chunk_files(store, name)[i]


# ---------------------------------------------------------------------------- faults, found and repaired

def test_a_deleted_chunk_is_found_by_light_and_rebuilt(store):
    os.unlink(_chunk(store, 2))
    light, deep = _found(store)
    assert "chunk-missing" in light and "chunk-missing" in deep
    assert _repaired(store).chunks == [2]


def test_flipped_bits_are_found_only_by_deep_and_rebuilt(store):
    for off in (0, 5000, 90000):
        flip(_chunk(store, 1), off)
    flip(_chunk(store, 5), 7)
    light, deep = _found(store)
    assert light == set() and "fragment-hash" in deep
    assert _repaired(store).chunks == [1, 5]


def test_a_truncated_chunk_is_found_by_light_and_rebuilt(store):
    p = _chunk(store, 0)
    os.truncate(p, os.path.getsize(p) // 3)
    light, deep = _found(store)
    assert "chunk-size" in light and "fragment-hash" in deep
    assert _repaired(store).chunks == [0]


def test_a_chunk_of_the_same_size_from_elsewhere_is_found_only_by_deep(store):
    Path(_chunk(store, 3)).write_bytes(Path(_chunk(store, 4)).read_bytes())   # same size, other bytes
    light, deep = _found(store)
    assert light == set() and "fragment-hash" in deep
    assert _repaired(store).chunks == [3]


def test_another_files_chunk_is_found_by_light_and_rebuilt(store):
    Path(_chunk(store, 4)).write_bytes(Path(_chunk(store, 4, SMALL)).read_bytes())
    light, deep = _found(store)
    assert "chunk-size" in light and "fragment-hash" in deep
    assert _repaired(store).chunks == [4]


def test_a_lost_volume_is_found_by_light_made_again_and_refilled(store):
    man = store.manifest(SRC.name)
    vol = man.chunks[1].volume
    shutil.rmtree(store.volumes[vol])
    light, _ = _found(store)
    assert {"volume-unavailable", "chunk-unavailable"} <= light
    r = _repaired(store)
    assert r.volumes == [vol] and r.chunks == [1] and vol in r.manifests
    assert _repaired(store, SMALL, Path(store.root).parent / SMALL).chunks   # the other file's chunk there too


def test_a_torn_manifest_copy_is_found_by_light_and_rewritten(store):
    copies = store.manifest_copies(SRC.name)
    p = Path(copies[3][1])
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])
    light, _ = _found(store)
    assert "manifest-damaged" in light
    r = _repaired(store)
    assert r.manifests == [copies[3][0]] and r.chunks == [] and p.read_bytes() == data


def test_a_manifest_copy_that_disagrees_is_found_by_light_and_rewritten(store):
    copies = store.manifest_copies(SRC.name)
    p = Path(copies[0][1])
    good = p.read_bytes()
    body = json.loads(good)
    body["chunks"][2]["sha256"] = "0" * 64      # intact (resealed) but not what the others say
    del body["checksum"]
    body["checksum"] = hashlib.sha256(canonical(body)).hexdigest()
    p.write_bytes(canonical(body))
    light, _ = _found(store)
    assert "manifest-disagrees" in light
    r = _repaired(store)
    assert r.manifests == [copies[0][0]] and p.read_bytes() == good


def test_a_lost_volume_and_a_flipped_bit_elsewhere(store):
    man = store.manifest(SRC.name)
    shutil.rmtree(store.volumes[man.chunks[0].volume])
    flip(_chunk(store, 3), man.fragment_offset(5) + 100)     # stripe 5 has two bad fragments: m = 2
    light, deep = _found(store)
    assert "volume-unavailable" in light and "fragment-hash" not in light and "fragment-hash" in deep
    assert sorted(_repaired(store).chunks) == [0, 3]


def test_beyond_m_is_a_clear_error_and_nothing_changes(store):
    man = store.manifest(SRC.name)
    os.unlink(_chunk(store, 0))
    flip(_chunk(store, 2), man.fragment_offset(7) + 3)
    flip(_chunk(store, 5), man.fragment_offset(7) + 9)
    Path(store.manifest_copies(SRC.name)[1][1]).write_bytes(b"{")   # a torn copy too: not rewritten either
    rep = check_file(Store(store.root), SRC.name, True)
    assert rep.status == BEYOND and "stripe-lost" in _kinds(rep)
    before = _tree(store)
    with pytest.raises(StoreError, match=r"stripe 7: chunks 0 \(missing\), 2 \(hash mismatch\), 5 \(hash mismatch\)"
                       r".*nothing changed"):
        repair(Store(store.root), SRC.name)
    assert _tree(store) == before


def test_copies_that_disagree_with_no_majority_are_not_repaired(tmp_path):
    store = make_store(tmp_path, k=1, m=1)
    put(store, str(SRC))
    a, b = store.manifest_copies(SRC.name)
    body = json.loads(Path(b[1]).read_bytes())
    body["sha256"] = "1" * 64
    del body["checksum"]
    body["checksum"] = hashlib.sha256(canonical(body)).hexdigest()
    Path(b[1]).write_bytes(canonical(body))
    assert "manifest-conflict" in _kinds(check_file(Store(store.root), SRC.name, False))
    before = _tree(store)
    with pytest.raises(StoreError, match="no good copy"):
        repair(Store(store.root), SRC.name)
    assert _tree(store) == before


# ---------------------------------------------------------------------------- records

def _bad_digest_warc(path: Path) -> Path:
    block = b"hello, world\n"
    good = "sha1:" + __import__("base64").b32encode(hashlib.sha1(block).digest()).decode()
    rec = (b"WARC/1.0\r\nWARC-Type: resource\r\nWARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-000000000001>\r\n"
           b"WARC-Date: 2020-01-01T00:00:00Z\r\nWARC-Target-URI: http://example.com/\r\nContent-Type: text/plain\r\n"
           b"WARC-Block-Digest: %s\r\nContent-Length: %d\r\n\r\n%s\r\n\r\n")
    path.write_bytes(rec % (good.encode(), len(block), block) +
                     rec.replace(b"0001>", b"0002>") % (b"sha1:" + b"A" * 32, len(block), block))
    return path


def test_a_file_bad_at_ingest_is_flagged_and_never_changed(store, tmp_path):
    p = _bad_digest_warc(tmp_path / "bad.warc")
    put(store, str(p))
    assert check_file(Store(store.root), p.name, False).status == "ok"
    rep = check_file(Store(store.root), p.name, True)
    assert rep.status == RECORDS and "block-digest" in _kinds(rep)
    assert "0002" in next(f.detail for f in rep.findings if f.kind == "block-digest")
    before = _tree(store)
    assert not repair(Store(store.root), p.name).changed
    assert _tree(store) == before
    os.unlink(chunk_files(store, p.name)[1])      # chunk damage on top: the chunk is rebuilt, the records not
    r = repair(Store(store.root), p.name)
    assert r.chunks == [1] and _get_sha(store, p.name) == sha256(p.read_bytes())
    assert check_file(Store(store.root), p.name, True).status == RECORDS


def test_a_listing_changed_since_ingest_is_caught(store, tmp_path):
    """A manifest that vouches for other ids or digests than the bytes hold: deep scrub says so."""
    records, _ = list_records(str(SRC))
    forged = [RecordEntry(r.offset, r.length, r.record_id, r.block_digest, r.payload_digest) for r in records]
    forged[10] = RecordEntry(forged[10].offset, forged[10].length, "<urn:uuid:forged>", forged[10].block_digest,
                             forged[10].payload_digest)
    want = listing_digest(forged)
    for _, path in store.manifest_copies(SRC.name):
        body = json.loads(Path(path).read_bytes())
        body["listing_sha256"] = want
        del body["checksum"]
        body["checksum"] = hashlib.sha256(canonical(body)).hexdigest()
        Path(path).write_bytes(canonical(body))
    s = Store(store.root)
    assert check_file(s, SRC.name, False).status == "ok"
    rep = check_file(s, SRC.name, True)
    assert rep.status == RECORDS and "listing" in _kinds(rep)


def test_objects_that_are_no_archive_are_flagged_by_deep(store, tmp_path):
    p = tmp_path / "blob.warc"
    p.write_bytes(os.urandom(5000))
    put_object(store, str(p), p.name, ())
    assert "records-unreadable" in _kinds(check_file(Store(store.root), p.name, True))


# ---------------------------------------------------------------------------- the scrub run

def test_orphans_and_temp_files_are_listed(store):
    d = Path(store.volumes[2]) / "chunks"
    (d / "gone.warc.gz.3").write_bytes(b"x")
    (d / f"{SRC.name}.1.0123456789ab.tmp").write_bytes(b"x")
    rep = scrub(Store(store.root))
    assert rep.clean
    kinds = {(f.kind, os.path.basename(f.path)) for f in rep.store}
    assert ("orphan-chunk", "gone.warc.gz.3") in kinds and ("temp-file", f"{SRC.name}.1.0123456789ab.tmp") in kinds


def test_deep_scrub_is_incremental_and_resumable(store):
    s = Store(store.root)
    names = s.names()
    seen = []

    def stop_after_one(rep):
        seen.append(rep.name)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        scrub(s, deep=True, now=1000, progress=stop_after_one)
    state, problem = load_state(s)
    assert problem is None and state.run == {"started": 1000} and list(state.files) == seen
    again = scrub(s, deep=True, now=1010)
    assert again.resumed
    deep = [f.name for f in again.files if f.deep]
    assert deep == [n for n in names if n not in seen] and again.clean
    state, _ = load_state(s)
    assert state.run is None and set(state.files) == set(names)
    skipped = scrub(s, deep=True, since=3600, now=2000)
    assert not any(f.deep for f in skipped.files) and all(f.skipped for f in skipped.files)
    later = scrub(s, deep=True, since=3600, now=1000 + 3600 + 5)
    assert [f.name for f in later.files if f.deep] == seen      # only the one checked longest ago


def test_a_damaged_state_file_is_started_afresh(store):
    s = Store(store.root)
    (Path(s.root) / STATE_FILE).write_bytes(b"{torn")
    rep = scrub(s, deep=True)
    assert rep.clean and any(f.kind == "scrub-state" for f in rep.store)
    assert load_state(s)[1] is None


def test_the_rate_limit_sleeps_what_the_rate_asks():
    slept = []
    lim = Limiter(1000.0, sleep=slept.append)
    lim.take(5000)
    assert 4.5 < sum(slept) <= 5.0
    Limiter(None, sleep=slept.append).take(10 ** 9)
    assert len(slept) == 1


def test_auto_repairs_a_few_and_alerts_on_a_burst(store):
    s = Store(store.root)
    os.unlink(_chunk(store, 2))
    p = plan(scrub(s), max_repairs=5)
    assert p.repair == [SRC.name] and not p.alert
    os.unlink(_chunk(store, 2, SMALL))
    man, small = s.manifest(SRC.name), s.manifest(SMALL)
    rep = scrub(Store(store.root))
    p = plan(rep, max_repairs=1)
    assert p.alert and not p.repair and "more than --max-repairs 1" in p.alert
    if man.chunks[2].volume == small.chunks[2].volume:
        p = plan(rep, max_repairs=5)
        assert p.alert and p.volume == man.chunks[2].volume
    shutil.rmtree(store.volumes[3])
    p = plan(scrub(Store(store.root)), max_repairs=5)
    assert p.volume == 3 and "unavailable" in p.alert and not p.repair


def test_scrub_and_repair_from_the_command_line(store, warchive_cli):
    os.unlink(_chunk(store, 5))
    r = warchive_cli(["store", "scrub", store.root, "--json"])
    assert r.returncode == 1
    rep = json.loads(r.stdout)
    bad = [f for f in rep["files"] if f["status"] == DAMAGE]
    assert [f["name"] for f in bad] == [SRC.name] and bad[0]["findings"][0]["kind"] == "chunk-missing"
    r = warchive_cli(["store", "scrub", store.root, "--deep", "--auto", "--max-repairs", "3"])
    assert r.returncode == 0, r.stderr
    assert f"repaired {SRC.name}: chunks 5 rebuilt" in r.stdout.decode()
    r = warchive_cli(["store", "scrub", store.root, "--deep", "--rate", "50"])
    assert r.returncode == 0 and b"deep scrub" in r.stderr
    for i in (0, 1, 2):
        os.unlink(_chunk(store, i))
    r = warchive_cli(["store", "repair", store.root, SRC.name])
    assert r.returncode == 1 and b"cannot be rebuilt" in r.stderr and b"Traceback" not in r.stderr
    r = warchive_cli(["store", "scrub", store.root, "--rate", "5"])
    assert r.returncode == 2
