"""warchive.distributed on a real LocalCluster of 2 worker processes: the output is byte for byte
what one machine writes (index --sort, build of it, zipnum of it) for any number of key ranges;
a worker killed mid-task and a client killed mid-run change nothing in the output; a corpus
dominated by one host still splits into ranges near the target size."""

import hashlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")
dask = pytest.importorskip("dask")

import warcgen  # noqa: E402
from warchive.distributed import index as dindex, local_cluster  # noqa: E402
from warchive.distributed import manifest  # noqa: E402
from warchive.distributed.plan import (SAMPLE_WIDTH, SAMPLE_WINDOWS, map_order, sample_groups,  # noqa: E402
                                       sample_windows)
from warchive.distributed.scratch import FileSlice, ScratchFile  # noqa: E402
from warchive.errors import IndexFormatError  # noqa: E402
from warchive.index.sort import merge_files  # noqa: E402
from warchive.index.build import index_paths  # noqa: E402
from warchive.index.cdx import IndexOptions  # noqa: E402
from warchive.index.segment import build_segment  # noqa: E402
from warchive.index.zipnum import write_zipnum  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
WGET = ROOT / "tests" / "data" / "wget"
# the project's shared fixtures (a folder beside the checkout; another with WARCHIVE_SHARED_FIXTURES)
SHARED = Path(os.environ.get("WARCHIVE_SHARED_FIXTURES", ROOT.parent / "shared" / "fixtures"))


@pytest.fixture(scope="module")
def client():
    cluster = local_cluster(2)   # (the cluster `warchive index --scheduler local:2` starts)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    """name -> (inputs, IndexOptions): the Wget fixtures (gzip with `sl`: cut into byte ranges),
    warcgen's record sets (gzip and plain, ARC, POST bodies), as CDXJ and as CDX-11."""
    d = tmp_path_factory.mktemp("gen")
    gen = [warcgen.write_kitchen_sink(d).path, warcgen.write_kitchen_sink(d, gz=False).path,
           warcgen.write_post_put(d).path, warcgen.write_revisits(d).path, warcgen.write_arc(d).path,
           warcgen.write_unicode_urls(d, gz=False).path, warcgen.write_skip_length(d).path]
    out = {
        "wget": ([str(WGET)], IndexOptions()),
        "generated": ([str(p) for p in gen], IndexOptions()),
        "generated-cdx11-all": ([str(p) for p in gen], IndexOptions(cdx11=True, records="all")),
    }
    if SHARED.is_dir():
        out["shared"] = ([str(SHARED / "docs-python-3.11-recrawl.warc.gz"), str(SHARED / "docs-python-3.11.warc.gz")],
                         IndexOptions(post_append=True))
    return out


def _reference(inputs, opts, d: Path):
    """What one machine writes: warchive index --sort, warchive build and warchive zipnum of it."""
    d.mkdir(parents=True, exist_ok=True)
    cdxj = d / "ref.cdxj"
    with open(cdxj, "wb") as f:
        index_paths(inputs, f.write, opts, sort=True)
    build_segment([cdxj], d / "ref.seg")
    build_segment([cdxj], d / "ref-small.seg", block_bytes=2000, restart_interval=4)
    write_zipnum(cdxj, str(d / "zip") + "/")
    write_zipnum(cdxj, str(d / "zip-small") + "/", lines_per_block=7, parts=3)
    return cdxj


def _same_dir(a: Path, b: Path):
    names = sorted(os.listdir(a))
    assert sorted(os.listdir(b)) == names
    for n in names:
        assert (a / n).read_bytes() == (b / n).read_bytes(), n


def _check_all(client, inputs, opts, tmp: Path, ranges):
    """The five outputs, from one scratch directory: the later calls reuse the map (and merge)
    tasks of the first, as a rerun would."""
    cdxj = _reference(inputs, opts, tmp / "ref")
    lines = cdxj.read_bytes().count(b"\n")
    assert lines >= 5
    out = tmp / "out"
    out.mkdir()
    kw = dict(options=opts, ranges=ranges, scratch=str(tmp / "scratch"), keep_scratch=True, map_piece=1 << 20)
    s = dindex(inputs, str(out / "x.cdxj"), client, **kw)
    assert (out / "x.cdxj").read_bytes() == cdxj.read_bytes()
    assert s["ranges"] == ranges and sum(s["range_lines"]) == lines
    dindex(inputs, str(out / "x.seg"), client, kind="segment", **kw)
    assert (out / "x.seg").read_bytes() == (tmp / "ref" / "ref.seg").read_bytes()
    again = dindex(inputs, str(out / "small.seg"), client, kind="segment",
                   segment_options={"block_bytes": 2000, "restart_interval": 4}, **kw)
    assert (out / "small.seg").read_bytes() == (tmp / "ref" / "ref-small.seg").read_bytes()
    assert again["tasks_run"].get("map", 0) == 0 and again["tasks_run"].get("merge", 0) == 0
    dindex(inputs, str(out / "zip") + "/", client, kind="zipnum", **kw)
    _same_dir(tmp / "ref" / "zip", out / "zip")
    kw["keep_scratch"] = False
    last = dindex(inputs, str(out / "zip-small") + "/", client, kind="zipnum", zipnum_lines=7, zipnum_parts=3, **kw)
    _same_dir(tmp / "ref" / "zip-small", out / "zip-small")
    assert not os.path.exists(last["scratch"])
    return s


SLOW = pytest.mark.slow


@pytest.mark.parametrize("name,ranges", [
    ("wget", 1), ("wget", 7), ("generated", 2), ("generated", 7), ("generated-cdx11-all", 7), ("shared", 2),
    pytest.param("wget", 2, marks=SLOW), pytest.param("generated", 1, marks=SLOW),
    pytest.param("generated-cdx11-all", 1, marks=SLOW), pytest.param("generated-cdx11-all", 2, marks=SLOW),
    pytest.param("shared", 1, marks=SLOW), pytest.param("shared", 7, marks=SLOW),
    pytest.param("wget", 40, marks=SLOW),
])
def test_identical_to_one_machine(client, corpora, tmp_path, name, ranges):
    if name not in corpora:
        pytest.skip(f"no shared fixtures in {SHARED} (WARCHIVE_SHARED_FIXTURES)")
    inputs, opts = corpora[name]
    s = _check_all(client, inputs, opts, tmp_path, ranges)
    if name == "wget":   # the large file was cut into byte ranges: several map tasks per file
        assert s["tasks"]["map"] > 2


def test_more_ranges_than_lines(client, tmp_path):
    fx = warcgen.write_get_pairs(tmp_path)
    inputs, opts = [str(fx.path)], IndexOptions()
    ref = _reference(inputs, opts, tmp_path / "r")
    n = ref.read_bytes().count(b"\n")
    s = _check_all(client, inputs, opts, tmp_path, 3 * n)
    assert s["range_lines"].count(0) >= 2 * n   # most ranges are empty, and the output is the same


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _pids(client):
    return client.run(os.getpid)


def _big_inputs(d: Path):
    """Six names (symbolic links) of the larger Wget crawl, and the recrawl: as many map tasks."""
    d.mkdir()
    out = []
    for i in range(6):
        (d / f"crawl{i}.warc.gz").symlink_to(WGET / "docs-python-3.11.warc.gz")
        out.append(str(d / f"crawl{i}.warc.gz"))
    return out + [str(WGET / "docs-python-3.11-recrawl.warc.gz")]


def test_a_worker_killed_mid_task_is_recovered_from(client, tmp_path):
    inputs = _big_inputs(tmp_path / "in")[:2]
    ref = _reference(inputs, IndexOptions(), tmp_path / "r")
    before = _pids(client)
    result = {}

    def run():
        result["s"] = dindex(inputs, str(tmp_path / "x.seg"), client, kind="segment", ranges=4,
                             segment_options={"block_bytes": 2000}, map_piece=1 << 20)
    t = threading.Thread(target=run)
    t.start()
    victim = None
    deadline = time.monotonic() + 120
    while victim is None and t.is_alive() and time.monotonic() < deadline:
        for addr, keys in client.processing().items():
            if any("warchive-map" in str(k) for k in keys):
                victim = addr
                break
        time.sleep(0.005)
    assert victim is not None, "no map task was seen running"
    os.kill(before[victim], signal.SIGKILL)
    t.join(300)
    assert not t.is_alive()
    build_segment([ref], tmp_path / "ref.seg", block_bytes=2000)
    assert (tmp_path / "x.seg").read_bytes() == (tmp_path / "ref.seg").read_bytes()
    client.wait_for_workers(2, timeout=60)
    assert before[victim] not in _pids(client).values()   # the worker did die during the job


def test_a_rerun_after_the_client_is_killed_reuses_finished_tasks(client, tmp_path):
    inputs = _big_inputs(tmp_path / "in")
    ref = _reference(inputs, IndexOptions(), tmp_path / "r")
    scratch = tmp_path / "scratch"
    out = tmp_path / "x.cdxj"
    p = subprocess.Popen([sys.executable, "-m", "warchive", "index", *inputs, "--scheduler", client.scheduler.address,
                          "--ranges", "5", "--scratch", str(scratch), "-o", str(out)],
                         stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and p.poll() is None:
        if len(list(scratch.glob("*/m*.json"))) >= 2:
            break
        time.sleep(0.005)
    p.kill()
    _, err = p.communicate()   # (the installed warchive: src has no kernels where CI builds them)
    assert not out.exists(), "the client finished before it could be killed"
    assert p.returncode == -9, err.decode(errors="replace")
    done_before = len(list(scratch.glob("*/m*.json")))
    assert done_before >= 2
    client.wait_for_workers(2, timeout=60)
    s = dindex(inputs, str(out), client, ranges=5, scratch=str(scratch))
    assert _digest(out) == _digest(ref)
    assert s["tasks_run"]["map"] <= s["tasks"]["map"] - 2 < s["tasks"]["map"]
    assert "sample" not in s["tasks"]   # the saved plan was used: no sampling again


def test_a_manifest_is_reused_only_while_its_files_are_whole(tmp_path):
    """Scratch files are not fsynced: a power loss can leave one short or zeroed under its name."""
    with ScratchFile(str(tmp_path / "a.run")) as a:
        a.write(b"alpha\n")
        a.write(b"beta\n")
    assert (tmp_path / "a.run").read_bytes() == b"alpha\nbeta\n" and a.size == 11
    assert not list(tmp_path.glob("*.tmp"))
    m = manifest.publish(str(tmp_path / "t.json"), "k1", {"files": [a.entry(str(tmp_path))], "lines": 2})
    assert manifest.reusable(str(tmp_path / "t.json"), "k1") == m
    assert manifest.reusable(str(tmp_path / "t.json"), "k2") is None   # another task's key
    for damaged in (b"alpha\nbeta", b"\0" * 11, b"alphA\nbeta\n", b"alpha\nbeta\n\0"):
        (tmp_path / "a.run").write_bytes(damaged)
        assert manifest.reusable(str(tmp_path / "t.json"), "k1") is None, damaged
    (tmp_path / "a.run").write_bytes(b"alpha\nbeta\n")
    assert manifest.reusable(str(tmp_path / "t.json"), "k1") == m
    (tmp_path / "a.run").unlink()
    assert manifest.reusable(str(tmp_path / "t.json"), "k1") is None
    (tmp_path / "t.json").write_bytes(b"\0" * 40)   # the manifest itself zeroed
    assert manifest.load(str(tmp_path / "t.json")) is None


def test_the_sample_follows_the_ranges_not_the_corpus():
    big = 1 << 30
    w = sample_windows([big, big // 4, 100_000], 8, 1)
    assert w[2] == 0 and w[0] > 3 * w[1] > 0   # a small file whole; windows by size
    assert sum(sample_windows([big] * 4, 8, 1)) == SAMPLE_WINDOWS
    assert abs(sum(sample_windows([big] * 40, 8, 1)) - SAMPLE_WINDOWS) <= 20   # ten times the corpus: as many
    assert sum(sample_windows([big] * 4, 64, 1)) == 64 * 32   # more ranges, more windows
    assert sum(w) * SAMPLE_WIDTH < big // 16


def test_sample_groups_cover_every_file_once_and_balance():
    files = [[f"/f{i}", f"f{i}", i % 7 + 1, 1 << 30] for i in range(50)]
    groups = sample_groups(files, 4)
    assert len(groups) == 4
    assert sorted(f[0] for g in groups for f in g) == sorted(f[0] for f in files)
    loads = [sum(f[2] for f in g) for g in groups]
    assert max(loads) - min(loads) <= 7
    assert len(sample_groups(files[:2], 4)) == 2


def test_map_tasks_run_longest_first_by_the_sample():
    specs = [{"path": "/a", "start": 0, "stop": 100, "cost": 100},
             {"path": "/a", "start": 100, "stop": None, "cost": 100},
             {"path": "/b", "start": 0, "stop": None, "cost": 150}]
    samples = [{"path": "/a", "size": 200, "lines": b"x\n" * 10, "sampled": 20, "windows": [[0, 10, 0], [150, 10, 20]]},
               {"path": "/b", "size": 150, "lines": b"y\n", "sampled": 150, "windows": [[0, 150, 2]]}]
    # /a's second range made index lines in its window, its first none: it goes first
    assert map_order(specs, samples) == [1, 2, 0]


def test_a_merge_reads_byte_ranges_of_runs(tmp_path):
    """Each map task writes one run; a merge reads its key range's bytes of each."""
    a, b = tmp_path / "a.run", tmp_path / "b.run"
    a.write_bytes(b"a1\nb1\nc1\n")
    b.write_bytes(b"a2\nb0\nb1\nc0\n")
    got = []
    stats = merge_files([FileSlice(str(a), 3, 3), FileSlice(str(b), 3, 6)], lambda x: got.append(x))
    assert b"".join(got) == b"b0\nb1\n" and stats.lines_out == 2   # b1 once
    with pytest.raises(IndexFormatError):
        merge_files([FileSlice(str(a), 6, 10)], lambda x: None)   # a run shorter than its manifest says


def test_damaged_scratch_files_are_computed_again_and_intact_ones_reused(client, tmp_path):
    inputs = _big_inputs(tmp_path / "in")[:3]
    ref = _reference(inputs, IndexOptions(), tmp_path / "r")
    out = tmp_path / "x.cdxj"
    kw = dict(ranges=3, scratch=str(tmp_path / "scratch"), keep_scratch=True, map_piece=1 << 20)
    first = dindex(inputs, str(out), client, **kw)
    assert first["tasks_run"]["map"] == first["tasks"]["map"] >= 3
    runs = [r for r in sorted((tmp_path / "scratch").glob("*/m*.run")) if r.stat().st_size > 100]
    assert len(runs) >= 2
    short, zeroed = runs[0], runs[-1]
    short.write_bytes(short.read_bytes()[:-100])
    zeroed.write_bytes(bytes(zeroed.stat().st_size))
    part = next(p for p in sorted((tmp_path / "scratch").glob("*/p*.cdxj")) if p.stat().st_size)
    data = bytearray(part.read_bytes())
    data[len(data) // 2] ^= 1
    part.write_bytes(bytes(data))
    out.unlink()
    again = dindex(inputs, str(out), client, **kw)
    assert out.read_bytes() == ref.read_bytes()
    assert again["tasks_run"]["map"] == 2 and again["tasks_run"]["merge"] == 1
    third = dindex(inputs, str(out), client, **kw)   # now all whole again: nothing runs
    assert third["tasks_run"]["map"] == 0 and third["tasks_run"]["merge"] == 0


def _skewed_corpus(d: Path, files=3, records=900):
    """A crawl of which about 90% is one host (one site crawled deep, a few others shallow),
    each record with an incompressible body, rewritten with Wget's `sl` fields."""
    out = []
    for f in range(files):
        recs = []
        for i in range(records):
            host = "big.example.org" if i % 10 else f"site{(i // 10) % 40}.example.net"
            body = hashlib.sha256(f"{f}/{i}".encode()).hexdigest().encode() * 40
            recs += warcgen.get_pair(f"skew/{f}/{i}", f"http://{host}/p/{f}/{i:05d}?q={i % 7}", f"/p/{f}/{i}",
                                     body=body)
        base = warcgen.write_warc(d, f"_skew{f}", recs)
        out.append(str(warcgen.add_wget_skip_length(base.path, d / f"skew{f}.warc.gz").path))
        base.path.unlink()
    return out


def test_a_corpus_dominated_by_one_host_splits_near_the_target(client, tmp_path):
    inputs = _skewed_corpus(tmp_path)
    ref = _reference(inputs, IndexOptions(), tmp_path / "r")
    lines = ref.read_bytes().splitlines()
    big = sum(1 for x in lines if x.startswith(b"org,example,big)"))
    assert big > 0.85 * len(lines)   # the corpus is what it says
    target = len(ref.read_bytes()) // 6 + 1
    s = dindex(inputs, str(tmp_path / "x.cdxj"), client, target_bytes=target)
    assert (tmp_path / "x.cdxj").read_bytes() == ref.read_bytes()
    assert s["ranges"] >= 5
    for size in s["range_bytes"]:
        assert target / 2 <= size <= 2 * target, (s["range_bytes"], target)


def test_the_local_clusters_workers_run_without_the_profiler(client):
    """Dask's 10 ms sampling profiler is off in the workers warchive starts (it takes a worker's
    time on a machine whose cores all run workers), and only there."""
    assert set(client.run(lambda: dask.config.get("distributed.worker.profile.enabled")).values()) == {False}
    assert len(client.run(lambda: 0)) == 2
    assert dask.config.get("distributed.worker.profile.enabled") is True   # the user's own setting stays
