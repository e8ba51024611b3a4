"""SIGKILL at random moments of `store put` and `store repair`: never a manifest for an incomplete file,
never a damaged file that was intact before (or a chunk more damaged than before a repair); a rerun
completes. The writer runs in a forked child of this process (imports already done, so a run takes
milliseconds) killed after a random delay up to a little more than a whole run takes.

The default run kills 60 puts and 60 repairs; WARCHIVE_KILLS=N (or -m slow: 400) for more."""

import io
import os
import random
import signal
import time
from pathlib import Path

import pytest

from warchive.store import Store, get, put, remove
from warchive.store.records import list_records
from warchive.store.repair import repair
from warchive.store.scrub import check_file, scan_fragments
from storekit import chunk_files, flip, make_store, sha256

WGET = Path(__file__).resolve().parents[1] / "data" / "wget"
SRC = WGET / "docs-python-3.11-recrawl.warc.gz"
KILLS = int(os.environ.get("WARCHIVE_KILLS", "60"))


def _killed(fn, delay: float) -> bool:
    """Run fn() in a forked child, SIGKILL it after ``delay`` s; True if it was killed before it ended."""
    pid = os.fork()
    if pid == 0:   # the child: no pytest teardown, no atexit
        code = 0
        try:
            fn()
        except BaseException:
            code = 1
        os._exit(code)
    time.sleep(delay)
    os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    return os.WIFSIGNALED(status)


def _duration(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def _get_sha(root, name) -> str:
    out = io.BytesIO()
    get(Store(root), name, out)
    return sha256(out.getvalue())


def _cut(tmp_path, name: str, records: int) -> Path:
    """The first ``records`` records (gzip members) of SRC, as file ``name``."""
    p = tmp_path / name
    p.write_bytes(SRC.read_bytes()[: list_records(str(SRC))[0][records].offset])
    return p


def _kill_puts(tmp_path, kills, seed):
    store = make_store(tmp_path, fragment_size=1024)
    keep = _cut(tmp_path, "keep.warc.gz", 40)
    src = _cut(tmp_path, "target.warc.gz", 250)
    put(store, str(keep))                                  # intact before: must stay so
    keep_sha = sha256(keep.read_bytes())
    want = sha256(src.read_bytes())
    run = _duration(lambda: put(Store(store.root), str(src)))
    remove(store, src.name)
    rng = random.Random(seed)
    killed = 0
    for n in range(kills):
        if _killed(lambda: put(Store(store.root), str(src)), rng.uniform(0, run * 1.3)):
            killed += 1
        s = Store(store.root)
        if s.find_manifest(src.name) is not None:          # a manifest: the file is complete
            assert _get_sha(store.root, src.name) == want
            assert check_file(s, src.name, False).status in ("ok", "damage")   # a missing manifest copy at most
            assert {f.kind for f in check_file(s, src.name, False).findings} <= {"manifest-missing"}
        assert _get_sha(store.root, keep.name) == keep_sha
        if n % 3 == 2:                                     # a rerun completes (else the next kill lands on leftovers)
            r = put(Store(store.root), str(src))
            assert _get_sha(store.root, src.name) == want
            assert len(Store(store.root).manifest_copies(src.name)) == 6
            assert r.manifest.sha256 == want
            remove(Store(store.root), src.name)
    put(Store(store.root), str(src))
    s = Store(store.root)
    assert _get_sha(store.root, src.name) == want and check_file(s, src.name, True).status == "ok"
    return killed


def _damage(store, man, rng):
    """Up to m bad fragments per stripe: chunk a deleted, bits flipped in chunk b."""
    a, b = rng.sample(range(man.n), 2)
    os.unlink(chunk_files(store, man.name)[a])
    for s in rng.sample(range(man.stripe_count), 5):
        flip(chunk_files(store, man.name)[b], man.fragment_offset(s) + rng.randrange(man.fragment_length(s)))


def _bad_set(store, man):
    return {(s, i) for s, bad in scan_fragments(store, man, hash_chunks=False).bad.items() for i in bad}


def _kill_repairs(tmp_path, kills, seed):
    store = make_store(tmp_path, fragment_size=1024)
    src = _cut(tmp_path, "target.warc.gz", 250)
    keep = _cut(tmp_path, "keep.warc.gz", 40)
    put(store, str(src))
    put(store, str(keep))
    want, keep_sha = sha256(src.read_bytes()), sha256(keep.read_bytes())
    man = store.manifest(src.name)
    rng = random.Random(seed)
    _damage(store, man, rng)
    run = _duration(lambda: repair(Store(store.root), src.name))
    killed = 0
    for n in range(kills):
        if n % 4 == 0:
            _damage(Store(store.root), man, rng)
        before = _bad_set(Store(store.root), man)
        if _killed(lambda: repair(Store(store.root), src.name), rng.uniform(0, run * 1.3)):
            killed += 1
        after = _bad_set(Store(store.root), man)
        assert after <= before                             # never more damaged than before
        assert _get_sha(store.root, src.name) == want
        assert _get_sha(store.root, keep.name) == keep_sha
        if n % 4 == 3:
            repair(Store(store.root), src.name)            # a rerun completes
            assert _bad_set(Store(store.root), man) == set()
    repair(Store(store.root), src.name)
    assert check_file(Store(store.root), src.name, True).status == "ok"
    assert not [p for p in Path(tmp_path).rglob("*.tmp")]
    return killed


def test_put_killed_at_random_moments(tmp_path):
    killed = _kill_puts(tmp_path, KILLS, 1)
    assert killed >= KILLS // 3    # most kills land inside the put (the rest after it ended)


def test_repair_killed_at_random_moments(tmp_path):
    killed = _kill_repairs(tmp_path, KILLS, 2)
    assert killed >= KILLS // 3


@pytest.mark.slow
def test_put_and_repair_killed_many_more_times(tmp_path):
    assert _kill_puts(tmp_path / "p", 400, 11) >= 100
    assert _kill_repairs(tmp_path / "r", 400, 12) >= 100
