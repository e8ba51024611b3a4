"""warchive's WARC writer beside warcio's WARCWriter, per-record gzip, in one run.

    python bench/writer_compare.py corpus [--gb 1] [--levels 3,1,2] [--json OUT] [--text OUT]

The responses of the corpus files (the exact HTTP messages as Wget stored
them: head and body) are loaded once, up to ``--unique-mb`` of them, and
written again and again until ``--gb`` of messages have been written, each
as a response record:

  warchive  WarcWriter(compression="gzip", level=L).write_response(uri, message, date=...)
            (ISA-L, one member per record with Wget's `sl` field, sha1 block and
            payload digests, payload de-chunked)
  warcio    WARCWriter(f, gzip=True).write_record(create_warc_record(uri, "response",
            payload=BytesIO(message), length=len(message), warc_headers_dict={"WARC-Date": ...}))
            (warcio parses the HTTP head itself; zlib level 9, sha1 digests)

Both write to files in the same temporary directory; the time includes
building records, digests, compression and writes. warcio never fsyncs;
warchive fsyncs each file (and its directory) when it closes it, by
default; the row "nosync" (WarcWriter(fsync=False)) does the same work as
warcio. By default (two or more CPUs) the writer deflates blocks in a C worker
thread while the caller computes their digests; the row "1 thread"
(WarcWriter(threads=0)) does everything in the caller's thread. The headline
ratio is the default writer (level 2, fsync, worker thread). The rows run
interleaved in the order warchive, warcio, warchive..., and each figure is the
best of ``--repeat`` rounds.

Checks (exit status 1 when one fails; timings are never judged): warchive's
output read back by warchive's reader holds every message as its block, in
order; warcio's output holds the same number of records; with ``--check``,
`warcio check` passes on warchive's first file.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

MB = 1_000_000

Message = Tuple[str, str, bytes]   # uri, WARC-Date, HTTP message


def load_messages(paths: Sequence[str], limit: int) -> List[Message]:
    import warchive.warc

    out: List[Message] = []
    total = 0
    for p in paths:
        with warchive.warc.open(p, types={"response"}) as records:
            for rec in records:
                uri = rec.target_uri
                if not uri or not uri.startswith("http"):
                    continue
                msg = rec.block().read()
                out.append((uri, rec.date or "2026-01-01T00:00:00Z", msg))
                total += len(msg)
                if total >= limit:
                    return out
    return out


def schedule(messages: List[Message], target: int) -> List[int]:
    order, total, i = [], 0, 0
    while total < target:
        order.append(i)
        total += len(messages[i][2])
        i = (i + 1) % len(messages)
    return order


def run_warchive(messages: List[Message], order: List[int], directory: str, level: int, fsync: bool = True,
                 threads: Optional[int] = None) -> Dict:
    from warchive.warc.writer import WarcWriter

    t = time.perf_counter()
    with WarcWriter(directory, "BENCH", compression="gzip", level=level, host="bench", fsync=fsync,
                    threads=threads) as w:
        for i in order:
            uri, date, msg = messages[i]
            w.write_response(uri, msg, date=date)
    seconds = time.perf_counter() - t
    files = w.closed_files
    return {"seconds": seconds, "files": files, "bytes": sum(os.path.getsize(f) for f in files)}


def run_warcio(messages: List[Message], order: List[int], directory: str) -> Dict:
    from warcio.warcwriter import WARCWriter

    path = os.path.join(directory, "warcio.warc.gz")
    t = time.perf_counter()
    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=True)
        for i in order:
            uri, date, msg = messages[i]
            rec = w.create_warc_record(uri, "response", payload=io.BytesIO(msg), length=len(msg),
                                       warc_headers_dict={"WARC-Date": date})
            w.write_record(rec)
    seconds = time.perf_counter() - t
    return {"seconds": seconds, "files": [path], "bytes": os.path.getsize(path)}


def check_warchive(files: List[str], messages: List[Message], order: List[int]) -> List[str]:
    import warchive.warc

    problems = []
    want = iter(order)
    n = 0
    for f in files:
        with warchive.warc.open(f, types={"response"}) as records:
            for rec in records:
                i = next(want, None)
                if i is None:
                    problems.append(f"{f}: more records than written")
                    break
                block = rec.block().read()
                if block != messages[i][2] or rec.target_uri != messages[i][0]:
                    problems.append(f"{f} at byte {rec.offset}: record {n} is not message {i}")
                    break
                n += 1
    if n != len(order):
        problems.append(f"warchive output holds {n} responses, {len(order)} were written")
    return problems


def count_warcio(path: str) -> int:
    from warcio.archiveiterator import ArchiveIterator

    n = 0
    with open(path, "rb") as f:
        for rec in ArchiveIterator(f):
            n += rec.rec_type == "response"
    return n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inputs", nargs="+", help="corpus directory or .warc.gz files")
    ap.add_argument("--gb", type=float, default=1.0, help="gigabytes (10^9) of messages to write (default 1)")
    ap.add_argument("--unique-mb", type=int, default=300, help="distinct messages loaded, in MB (default 300)")
    ap.add_argument("--levels", default="3", help="ISA-L levels to run, comma-separated; the first is compared")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--check", action="store_true", help="also run `warcio check` on warchive's first file")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--text", help="write the table here too")
    ap.add_argument("--tmpdir", help="where outputs go (default $TMPDIR)")
    args = ap.parse_args(argv)

    paths: List[str] = []
    for inp in args.inputs:
        p = Path(inp)
        paths += [str(x) for x in sorted(p.glob("*.warc.gz"))] if p.is_dir() else [str(p)]
    messages = load_messages(paths, args.unique_mb * MB)
    order = schedule(messages, int(args.gb * 1e9))
    raw = sum(len(messages[i][2]) for i in order)
    levels = [int(x) for x in args.levels.split(",")]
    print(f"{len(order)} responses, {raw / MB:.0f} MB of HTTP messages ({len(messages)} distinct, "
          f"from {len(paths)} files)", flush=True)

    best: Dict[str, Dict] = {}
    problems: List[str] = []
    for rnd in range(args.repeat):
        rows = [f"warchive L{lv}" for lv in levels] + [f"warchive L{levels[0]} nosync",
                                                        f"warchive L{levels[0]} 1 thread", "warcio"]
        for row in rows:
            d = tempfile.mkdtemp(prefix="wbench-", dir=args.tmpdir)
            try:
                if row == "warcio":
                    got = run_warcio(messages, order, d)
                    if rnd == 0:
                        n = count_warcio(got["files"][0])
                        if n != len(order):
                            problems.append(f"warcio output holds {n} responses, {len(order)} were written")
                else:
                    got = run_warchive(messages, order, d, int(row.split("L")[1].split()[0]), "nosync" not in row,
                                       0 if "1 thread" in row else None)
                    if rnd == 0:
                        problems += check_warchive(got["files"], messages, order)
                        if args.check:
                            r = subprocess.run([sys.executable, "-m", "warcio.cli", "check", got["files"][0]],
                                               capture_output=True, text=True)
                            if r.returncode != 0:
                                problems.append("warcio check failed: " + r.stdout[-500:])
                print(f"  round {rnd + 1} {row}: {got['seconds']:.2f} s, {got['bytes'] / MB:.1f} MB", flush=True)
                got.pop("files")
                if row not in best or got["seconds"] < best[row]["seconds"]:
                    best[row] = got
            finally:
                shutil.rmtree(d, ignore_errors=True)

    base = best["warcio"]
    lines = [f"writer_compare: {len(order)} responses, {raw / MB:.0f} MB of messages, per-record gzip, "
             f"best of {args.repeat}; {platform.node()} {platform.processor() or platform.machine()}, "
             f"{os.cpu_count()} cpus, python {platform.python_version()}",
             "",
             f"{'writer':<20} {'seconds':>8} {'MB/s':>8} {'output MB':>10} {'time / warcio':>14} {'size / warcio':>14}"]
    for row, got in best.items():
        lines.append(f"{row:<20} {got['seconds']:>8.2f} {raw / MB / got['seconds']:>8.1f} {got['bytes'] / MB:>10.1f} "
                     f"{got['seconds'] / base['seconds']:>14.3f} {got['bytes'] / base['bytes']:>14.3f}")
    first = best[f"warchive L{levels[0]}"]
    speed = base["seconds"] / first["seconds"]
    size = first["bytes"] / base["bytes"]
    lines += ["",
              f"target >= 10x faster than warcio: {speed:.1f}x  {'PASS' if speed >= 10 else 'SHORT'}",
              f"target <= 1.2x warcio's size:     {size:.3f}x {'PASS' if size <= 1.2 else 'SHORT'}",
              "checks: " + ("ok" if not problems else "; ".join(problems))]
    text = "\n".join(lines)
    print(text)
    if args.text:
        Path(args.text).write_text(text + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps({"responses": len(order), "message_bytes": raw, "rows": best,
                                               "speedup": speed, "size_ratio": size, "problems": problems},
                                              indent=2) + "\n")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
