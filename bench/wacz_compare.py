"""`warchive wacz create` and WACZ import on the benchmark corpus, beside zipping the same files with Python's
zipfile (stored entries, the floor of any WACZ writer in Python).

    .venv/bin/python bench/wacz_compare.py [--corpus DIR (default $WARCHIVE_CORPUS or corpus/)] [--out bench/results/wacz-DATE.txt]

The corpus's WARCs are first added to a collection (not timed). Each row is timed three times (best kept):
create (index merge, pages, every WARC copied with CRC-32 and SHA-256, datapackage); zipfile.ZipFile
writing the WARCs stored (CRC-32 only, no hash, no index); import into a fresh collection (every entry's
SHA-256 checked, WARCs copied, index checked and written as a segment). Checked: our own
validator accepts the WACZ, and the imported collection has every line of the original.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from warchive.collection import Collection
from warchive.wacz import add_wacz, create_wacz, validate
from warchive.wacz.create import collection_lines

REPO = Path(__file__).resolve().parents[1]   # the corpus's default: corpus/ at the repository root


def best(fn, n=3):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.environ.get("WARCHIVE_CORPUS", str(REPO / "corpus")))
    ap.add_argument("--out")
    a = ap.parse_args()
    warcs = sorted(glob.glob(os.path.join(a.corpus, "*.warc.gz")))
    total = sum(os.path.getsize(w) for w in warcs)
    tmp = tempfile.mkdtemp(prefix="wacz-bench-", dir=os.environ.get("TMPDIR", "/tmp"))
    try:
        coll = Collection.init(os.path.join(tmp, "web"))
        coll.add(warcs, link=True)
        lines = collection_lines(coll)
        out = os.path.join(tmp, "web.wacz")
        made = []
        t_create = best(lambda: made.append(create_wacz(coll.path, out)))
        rep = validate(out)
        assert rep.ok, rep.problem

        def plain_zip():
            with zipfile.ZipFile(os.path.join(tmp, "plain.zip"), "w", zipfile.ZIP_STORED) as z:
                for w in warcs:
                    z.write(w, "archive/" + os.path.basename(w))
        t_zip = best(plain_zip)

        n = [0]

        def imp():
            n[0] += 1
            add_wacz(os.path.join(tmp, f"imp{n[0]}"), out)
        t_imp = best(imp)
        assert collection_lines(Collection(os.path.join(tmp, f"imp{n[0]}"))) == lines
        size = os.path.getsize(out)
        rows = [
            f"corpus: {len(warcs)} WARC files, {total / 1e6:.1f} MB, {len(lines):,} index lines; "
            f"WACZ {size / 1e6:.1f} MB ({'compressed' if made[-1].compressed else 'plain'} index, "
            f"{made[-1].pages:,} pages); cpus {os.cpu_count()}, load {os.getloadavg()[0]:.1f}",
            "",
            "| | seconds | MB/s (of WARC bytes) |",
            "| --- | --- | --- |",
            f"| warchive wacz create (CRC-32 + SHA-256, index, pages, datapackage) | {t_create:.3f} | {total / 1e6 / t_create:.0f} |",
            f"| Python zipfile, the same WARCs stored (CRC-32 only) | {t_zip:.3f} | {total / 1e6 / t_zip:.0f} |",
            f"| warchive add COLL FILE.wacz (SHA-256 check, copy, index segment) | {t_imp:.3f} | {total / 1e6 / t_imp:.0f} |",
            "",
            f"validate (ours, a record opened at each of {rep.lines:,} lines): ok",
        ]
        text = "\n".join(rows) + "\n"
        print(text)
        if a.out:
            with open(a.out, "w") as f:
                f.write(text)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
