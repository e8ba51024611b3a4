"""The store's throughput beside its limits: `put`, `get` (whole files, and small ranges) and light and
deep `scrub` in MB/s beside raw sha256 (of the files, and of the chunk bytes a deep scrub reads) and
raw pyeclib encode/decode of the same bytes and beside copying the files three times (replication),
and the bytes on disk against the originals; and reading from the store as indexing and replay do:
`warchive index store://...` beside indexing the files, and loading random id_ records
(CaptureLoader.load of an index line, the payload read: what replay's id_ does before HTTP) from the
store beside the plain files, in records/s.

    .venv/bin/python bench/store_compare.py [WARC...]   (default: $WARCHIVE_CORPUS/*.warc.gz, else corpus/*.warc.gz at the repository root)

Each figure is the best of ``--repeat`` runs (default 3), files in the page cache (the first run
reads them once). MB are 10^6 bytes of the original files. Every get is checked against the
original's sha256, so a figure is never of a wrong answer.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import io
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, List

from pyeclib.ec_iface import ECDriver

from warchive.index.build import index_paths
from warchive.index.cdx import IndexOptions
from warchive.replay.load import CaptureLoader
from warchive.store import Store, StoreFile, get, init_store, put, remove
from warchive.store.scrub import scrub

REPO = Path(__file__).resolve().parents[1]   # the corpus's default: corpus/ at the repository root


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def tree_bytes(root: str) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(root) for f in fs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--ranges", type=int, default=2000)
    ap.add_argument("--loads", type=int, default=2000)
    ap.add_argument("--fragment-size", type=int, default=1 << 20,
                    help="the store's (a record read from the store hashes the fragments holding it)")
    a = ap.parse_args()
    files: List[str] = a.files or sorted(glob.glob(os.path.join(os.environ.get("WARCHIVE_CORPUS", str(REPO / "corpus")), "*.warc.gz")))
    total = sum(os.path.getsize(f) for f in files)
    mb = total / 1e6
    blobs = [open(f, "rb").read() for f in files]
    print(f"{len(files)} files, {mb:.1f} MB")
    stripe = 4 << 20

    def sha() -> None:
        for b in blobs:
            hashlib.sha256(b).digest()
    drv = ECDriver(k=4, m=2, ec_type="isa_l_rs_cauchy")

    def encode() -> None:
        for b in blobs:
            for i in range(0, len(b), stripe):
                drv.encode(b[i:i + stripe])
    frags = [[drv.encode(b[i:i + stripe]) for i in range(0, len(b), stripe)] for b in blobs]

    def decode_data() -> None:
        for fs in frags:
            for f in fs:
                drv.decode(f[:4])

    def decode_parity() -> None:
        for fs in frags:
            for f in fs:
                drv.decode(f[2:])
    rows = [("raw sha256", best(sha, a.repeat)), ("raw pyeclib encode 4+2", best(encode, a.repeat)),
            ("raw pyeclib decode (4 data fragments)", best(decode_data, a.repeat)),
            ("raw pyeclib decode (2 data lost)", best(decode_parity, a.repeat))]
    del frags
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as tmp:
        def copy3() -> None:
            for i in range(3):
                d = os.path.join(tmp, f"copy{i}")
                os.makedirs(d, exist_ok=True)
                for f in files:
                    with open(f, "rb") as src, open(os.path.join(d, os.path.basename(f)), "wb") as dst:
                        shutil.copyfileobj(src, dst, 1 << 20)
                        dst.flush()
                        os.fsync(dst.fileno())
        rows.append(("copy 3 times (+fsync)", best(copy3, a.repeat)))
        for i in range(3):
            shutil.rmtree(os.path.join(tmp, f"copy{i}"))
        vols = [os.path.join(tmp, f"v{i}") for i in range(6)]
        init_store(os.path.join(tmp, "S"), vols, fragment_size=a.fragment_size)
        store = Store(os.path.join(tmp, "S"))

        def put_all() -> None:
            for f in files:
                if store.find_manifest(os.path.basename(f)) is not None:
                    remove(store, os.path.basename(f))
                put(store, f)
        rows.append(("store put (records, encode, hashes, fsync)", best(put_all, a.repeat)))
        on_disk = sum(tree_bytes(v) for v in vols)
        manifests = sum(tree_bytes(os.path.join(v, "manifests")) for v in vols)

        def get_all() -> None:
            for f, b in zip(files, blobs):
                out = io.BytesIO()
                get(store, os.path.basename(f), out)
                assert hashlib.sha256(out.getbuffer()).digest() == hashlib.sha256(b).digest()
        rows.append(("store get (whole files, verified)", best(get_all, a.repeat)))
        rng = random.Random(1)
        picks = []
        for _ in range(a.ranges):
            i = rng.randrange(len(files))
            man = store.manifest(os.path.basename(files[i]))
            r = man.records[rng.randrange(len(man.records))]
            picks.append((i, r.offset, r.length or 1))
        handles = [StoreFile(store, os.path.basename(f), cache_bytes=0) for f in files]

        def ranges() -> None:
            for i, off, n in picks:
                assert handles[i].pread(n, off) == blobs[i][off:off + n]
        t = best(ranges, a.repeat)
        nbytes = sum(n for _, _, n in picks)
        for h in handles:
            h.close()
        chunk_blobs = [open(os.path.join(d, f), "rb").read() for v in vols
                       for d, _, fs in os.walk(os.path.join(v, "chunks")) for f in fs]

        def sha_chunks() -> None:
            for b in chunk_blobs:
                hashlib.sha256(b).digest()
        rows.append(("raw sha256 of the chunk bytes (1.5x the files)", best(sha_chunks, a.repeat)))
        del chunk_blobs

        def light() -> None:
            assert scrub(Store(store.root)).clean
        rows.append(("store scrub --light", best(light, a.repeat)))

        def deep() -> None:
            assert scrub(Store(store.root), deep=True, restart=True).clean
        rows.append(("store scrub --deep (chunks, records, digests)", best(deep, a.repeat)))
        urls = [f"store://{store.root}/{os.path.basename(f)}" for f in files]

        def index_of(inputs: List[str]) -> bytes:
            out: List[bytes] = []
            index_paths(inputs, out.append, IndexOptions())
            return b"".join(out)
        plain_lines = index_of(files)
        assert index_of(urls) == plain_lines
        rows.append(("index the files (in process, heads only)", best(lambda: index_of(files), a.repeat)))
        rows.append(("index store:// (in process, heads only)", best(lambda: index_of(urls), a.repeat)))
        lines = [ln for ln in plain_lines.decode().splitlines() if '"mime": "warc/revisit"' not in ln]   # self-contained
        chosen = [lines[rng.randrange(len(lines))] for _ in range(a.loads)]
        dirs = sorted({os.path.dirname(os.path.abspath(f)) for f in files})
        loads = {}
        for label, where in (("plain files", dirs), ("store", [store.root])):
            with CaptureLoader(None, archive_paths=where) as loader:
                def load_all() -> None:
                    for line in chosen:
                        with loader.load(line) as cap:
                            cap.payload.read()
                loads[label] = best(load_all, a.repeat)
    for name, t0 in rows:
        print(f"{name:<48} {mb / t0:8.0f} MB/s")
    print(f"{'store get --range: one record (no cache)':<48} {a.ranges / t:8.0f} reads/s "
          f"({nbytes / len(picks):.0f} B mean, {nbytes / 1e6 / t:.1f} MB/s)")
    for label, t1 in loads.items():
        print(f"{'load id_ records from the ' + label:<48} {a.loads / t1:8.0f} records/s")
    print(f"bytes on disk {on_disk} = {on_disk / total:.4f} x the originals (goal (k+m)/k = 1.5 + < 1 %); "
          f"manifests {manifests} = {100 * manifests / total:.2f} % of the originals")


if __name__ == "__main__":
    sys.exit(main())
