"""`warchive store init|put|get|ls|stat|rm|scrub|repair`: the durable, erasure-coded store (warchive.store).

The command is ``store(args)`` and its options ``store_arguments(p)`` (warchive.cli.commands
explains the registry). Errors are one line naming the path (exit 1); `put` of several files goes
on after one fails and exits 1 at the end.
"""

from __future__ import annotations

import json
import os
import re
import sys
from argparse import ArgumentParser, Namespace
from typing import Any, Dict

from ..errors import StoreError
from ..store import Store, get, get_to_path, init_store, parse_range, put, remove
from ..store.auto import DEFAULT_MAX_REPAIRS, plan
from ..store.codec import CODECS, DEFAULT_CODEC
from ..store.config import DEFAULT_FRAGMENT_SIZE, DEFAULT_K, DEFAULT_M
from ..store.fragments import Damage
from ..store.layout import placement
from ..store.manifest import Manifest
from ..store.repair import RepairResult, repair
from ..store.scrub import ADVISORY, ORPHAN, FileReport, ScrubReport, scrub
from . import UsageError, paths

_SIZE = re.compile(r"(\d+)\s*([kmg]i?b?)?\Z", re.I)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw]?)\Z", re.I)
_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def _duration(text: str) -> float:
    m = _DURATION.match(text.strip())
    if not m:
        raise UsageError(f"--since {text!r}: a duration, e.g. 3600, 90m, 12h, 7d, 2w")
    return float(m.group(1)) * _SECONDS[m.group(2).lower()]


def _size(text: str) -> int:
    m = _SIZE.match(text.strip())
    if not m or len(m.group(1).lstrip("0")) > 18:   # (int() refuses over 4300 digits; no size has 19)
        raise UsageError(f"--fragment-size {text[:40]!r}: a number of bytes (suffix K, M or G for KiB, MiB, GiB)")
    return int(m.group(1)) * _UNITS[(m.group(2) or "")[:1].lower()]


def store_arguments(p: ArgumentParser) -> None:
    actions = p.add_subparsers(dest="store_command", metavar="ACTION", required=True)
    a = actions.add_parser("init", help="make a new store over volume directories (one per disk)",
                           description="make a new store: STORE/store.json, and volume.json in each volume")
    a.add_argument("store", metavar="STORE", help="the store's directory (made if missing)")
    a.add_argument("--volumes", nargs="+", required=True, metavar="DIR",
                   help="volume directories, at least k + m (one per disk or mount; made if missing)")
    a.add_argument("-k", type=int, default=DEFAULT_K, help=f"data fragments per stripe (default {DEFAULT_K})")
    a.add_argument("-m", type=int, default=DEFAULT_M, help=f"parity fragments per stripe (default {DEFAULT_M})")
    a.add_argument("--fragment-size", default=str(DEFAULT_FRAGMENT_SIZE), metavar="BYTES",
                   help="bytes of a file per fragment: a stripe is k of them (default 1M)")
    a.add_argument("--codec", default=DEFAULT_CODEC, choices=CODECS, help=f"pyeclib backend (default {DEFAULT_CODEC})")
    a = actions.add_parser("put", help="store closed WARC/ARC files (chunks, then the manifest on every volume)")
    a.add_argument("store", metavar="STORE", help="the store's directory (holds store.json)")
    a.add_argument("files", nargs="+", metavar="FILE", help="WARC/ARC files, stored under their base names")
    a = actions.add_parser("get", help="a stored file or a byte range of it, checked, rebuilt from parity if need be")
    a.add_argument("store", metavar="STORE", help="the store's directory (holds store.json)")
    a.add_argument("name", metavar="NAME", help="a stored name (the file's base name)")
    a.add_argument("-o", "--output", metavar="OUT", help="write to OUT (published when complete; default stdout)")
    a.add_argument("--range", metavar="RANGE", help="START-END (inclusive), START- or START+LENGTH, in bytes")
    a = actions.add_parser("ls", help="the stored names")
    a.add_argument("store", metavar="STORE", help="the store's directory (holds store.json)")
    a.add_argument("-l", "--long", action="store_true", help="with size and record count")
    a = actions.add_parser("stat", help="what the manifest of a stored file says")
    a.add_argument("store", metavar="STORE", help="the store's directory (holds store.json)")
    a.add_argument("name", metavar="NAME", help="a stored name (the file's base name)")
    a.add_argument("--json", action="store_true", help="as one JSON object")
    a = actions.add_parser("rm", help="remove a stored file (manifests first, then chunks); needs --force")
    a.add_argument("store", metavar="STORE", help="the store's directory (holds store.json)")
    a.add_argument("name", metavar="NAME", help="a stored name (the file's base name)")
    a.add_argument("--force", action="store_true", help="really remove it")
    a = actions.add_parser("scrub", help="check the store: --light (manifests, chunks there) or --deep (every byte, "
                           "every record digest)")
    a.add_argument("store", metavar="STORE", help="the store's directory (holds store.json)")
    a.add_argument("names", nargs="*", metavar="NAME", help="only these stored names (default: all, and orphans)")
    kind = a.add_mutually_exclusive_group()
    kind.add_argument("--light", action="store_true", help="manifests parse and agree, chunks there with their sizes "
                      "(the default)")
    kind.add_argument("--deep", action="store_true", help="also every chunk and fragment hash, the file's sha256, "
                      "every record's digests and the records' listing")
    a.add_argument("--rate", type=float, metavar="MB/S", help="(deep) read at most MB/s (10^6 bytes) of chunks")
    a.add_argument("--since", metavar="DURATION", help="(deep) only files not deep-checked within DURATION "
                   "(e.g. 30d), oldest first")
    a.add_argument("--restart", action="store_true", help="(deep) do not resume an interrupted deep scrub")
    a.add_argument("--json", action="store_true", help="the report as one JSON object")
    a.add_argument("--auto", action="store_true", help="repair what is found, unless it is a burst (an alert)")
    a.add_argument("--max-repairs", type=int, default=DEFAULT_MAX_REPAIRS, metavar="N",
                   help=f"(--auto) repair at most N files; more damaged is a burst (default {DEFAULT_MAX_REPAIRS})")
    a = actions.add_parser("repair", help="rebuild bad or missing chunks and manifest copies (up to m per stripe)")
    a.add_argument("store", metavar="STORE", help="the store's directory (holds store.json)")
    a.add_argument("names", nargs="*", metavar="NAME", help="stored names to repair (default: all)")
    a.add_argument("--json", action="store_true", help="the results as one JSON object")


def store(args: Namespace) -> int:
    """The durable store: WARC/ARC files kept as k data + m parity chunks on separate volumes,
    read back checked against their manifests. init, put, get, ls, stat, rm."""
    act = args.store_command
    if act == "init":
        cfg = init_store(args.store, args.volumes, args.k, args.m, _size(args.fragment_size), args.codec)
        print(f"{args.store}: a store of {len(cfg.volumes)} volumes, {cfg.codec} k={cfg.k} m={cfg.m}, "
              f"fragments of {cfg.fragment_size} bytes", file=sys.stderr)
        return 0
    st = Store(args.store)
    if act == "put":
        return _put(st, args.files)
    if act == "get":
        return _get(st, args)
    if act == "ls":
        for name in st.names():
            if args.long:
                man = st.manifest(name)
                print(f"{man.size:>14} {len(man.records):>8} {name}")
            else:
                print(name)
        return 0
    if act == "scrub":
        return _scrub(st, args)
    if act == "repair":
        return _repair(st, args.names or st.names(), args.json)
    if act == "stat":
        info = _stat(st, st.manifest(args.name))
        if args.json:
            print(json.dumps(info, indent=1))
        else:
            _print_stat(info)
        return 0
    if not args.force:
        raise UsageError("rm removes a stored file for good: give --force")
    removed = remove(st, args.name)
    print(f"{args.name}: removed ({len(removed)} files)", file=sys.stderr)
    return 0


def _put(st: Store, files: list) -> int:
    failed = 0
    for path in files:
        try:
            r = put(st, path)
        except StoreError as e:
            print(f"warchive: error: {e}", file=sys.stderr)
            failed += 1
            continue
        man = r.manifest
        if r.stored:
            what = f"stored: {man.size} bytes, {man.stripe_count} stripes, {len(man.records)} records"
        else:
            what = "already stored (the same sha256): nothing to do"
            if r.manifests_written:
                what += f" but {r.manifests_written} missing manifest copies written"
        if r.defects:
            what += f"; {len(r.defects)} defects read past (see `warchive check`)"
        print(f"{r.name}: {what}", file=sys.stderr)
    return 1 if failed else 0


def _get(st: Store, args: Namespace) -> int:
    start, end = 0, None
    if args.range is not None:
        try:
            start, end = parse_range(args.range)
        except ValueError as e:
            raise UsageError(str(e)) from None
    if args.output:
        paths.output_file(args.output)
        r = get_to_path(st, args.name, args.output, start, end)
    else:
        r = get(st, args.name, sys.stdout.buffer, start, end)
        sys.stdout.buffer.flush()
    _warn_damage(args.name, r.damage)
    return 0


def _warn_damage(name: str, damage: list) -> None:
    bad: Dict[int, Damage] = {}
    for d in damage:
        bad.setdefault(d.index, d)
    for d in bad.values():
        n = sum(1 for x in damage if x.index == d.index)
        print(f"warchive: warning: {name}: {d} (in {n} stripes read; rebuilt from the other chunks, the store "
              "needs repair)", file=sys.stderr)


def _stat(st: Store, man: Manifest) -> Dict[str, Any]:
    copies = [v for v, _ in st.manifest_copies(man.name)]
    return {"name": man.name, "size": man.size, "sha256": man.sha256, "codec": man.codec, "k": man.k, "m": man.m,
            "fragment_size": man.fragment_size, "stripes": man.stripe_count, "records": len(man.records),
            "manifest_volumes": copies,
            "chunks": [{"index": c.index, "volume": c.volume, "size": c.size, "sha256": c.sha256,
                        "path": st.chunk_path(man, c.index),
                        "present": os.path.exists(st.chunk_path(man, c.index))} for c in man.chunks],
            "placement_default": placement(man.name, man.n, len(st.volumes)) == [c.volume for c in man.chunks]}


def _print_stat(info: Dict[str, Any]) -> None:
    for key in ("name", "size", "sha256", "codec", "k", "m", "fragment_size", "stripes", "records"):
        print(f"{key:<16} {info[key]}")
    print(f"{'manifests on':<16} volumes {', '.join(map(str, info['manifest_volumes']))}")
    print(f"{'index':>5} {'volume':>6} {'size':>14} {'present':<7} sha256 / path")
    for c in info["chunks"]:
        print(f"{c['index']:>5} {c['volume']:>6} {c['size']:>14} {'yes' if c['present'] else 'NO':<7} {c['sha256']}")
        print(f"{'':>36}{c['path']}")


# ---------------------------------------------------------------------------- scrub and repair

def _scrub(st: Store, args: Namespace) -> int:
    if args.max_repairs < 0:
        raise UsageError("--max-repairs must be >= 0")
    if not args.deep and (args.rate is not None or args.since is not None or args.restart):
        raise UsageError("--rate, --since and --restart are options of --deep")
    if args.rate is not None and args.rate <= 0:
        raise UsageError("--rate must be > 0 MB/s")
    since = _duration(args.since) if args.since is not None else None
    report = scrub(st, deep=args.deep, names=args.names, rate=args.rate * 1e6 if args.rate else None,
                   since=since, restart=args.restart)
    out: Dict[str, Any] = report.to_json()
    status = 0 if report.clean else 1
    if args.auto:
        p = plan(report, args.max_repairs)
        out["auto"] = {"alert": p.alert, "volume": p.volume, "repaired": {}}
        if p.alert:
            print(f"warchive: alert: {p.alert}", file=sys.stderr)
        for name in p.repair:
            try:
                r = repair(st, name)
                out["auto"]["repaired"][name] = _repair_json(r)
            except StoreError as e:
                out["auto"]["repaired"][name] = {"error": str(e)}
        if p.repair and not p.alert:
            after = scrub(st, deep=args.deep, names=p.repair, restart=True) if not args.deep else \
                scrub(st, deep=False, names=p.repair)
            still = {f.name for f in after.damaged()}
            bad_left = [f for f in report.damaged() if f.name not in p.repair or f.name in still]
            status = 1 if bad_left else 0
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        _print_scrub(report)
        if args.auto and out["auto"]["repaired"]:
            for name, r in out["auto"]["repaired"].items():
                print(f"repaired {name}: {r.get('error') or _repair_words(r)}")
    return status


def _print_scrub(report: ScrubReport) -> None:
    print(f"{'status':<9} {'findings':>8}  name")
    for f in report.files:
        shown = [x for x in f.findings]
        note = f"  ({f.skipped})" if f.skipped else ""
        print(f"{f.status:<9} {len(shown):>8}  {f.name}{note}")
        for x in shown:
            where = f" [{x.path}]" if x.path else ""
            print(f"{'':<9} {x.level:>8}  {x.kind}: {x.detail}{where}")
    for x in report.store:
        print(f"{x.level:<9} {'':>8}  {x.kind}: {x.detail}" + (f" [{x.path}]" if x.path else ""))
    bad = report.damaged()
    kind = "deep" if report.deep else "light"
    adv = sum(1 for f in report.files for x in f.findings if x.level == ADVISORY)
    orphans = sum(1 for x in report.store if x.level == ORPHAN)
    print(f"warchive: {kind} scrub{' (resumed)' if report.resumed else ''}: {len(report.files)} files, "
          f"{len(bad)} with problems, {adv} advisories, {orphans} orphans; {report.bytes_read / 1e6:.1f} MB read in "
          f"{report.seconds:.1f} s", file=sys.stderr)


def _repair_json(r: RepairResult) -> Dict[str, Any]:
    return {"chunks": r.chunks, "fragments": r.fragments, "manifests": r.manifests, "volumes": r.volumes,
            "changed": r.changed}


def _repair_words(r: Dict[str, Any]) -> str:
    if not r["changed"]:
        return "nothing to repair"
    parts = []
    if r["volumes"]:
        parts.append(f"volumes {', '.join(map(str, r['volumes']))} made again")
    if r["chunks"]:
        parts.append(f"chunks {', '.join(map(str, r['chunks']))} rebuilt ({r['fragments']} fragments decoded)")
    if r["manifests"]:
        parts.append(f"manifest copies written on volumes {', '.join(map(str, r['manifests']))}")
    return "; ".join(parts)


def _repair(st: Store, names: list, as_json: bool) -> int:
    failed = 0
    out: Dict[str, Any] = {}
    for name in names:
        try:
            r = _repair_json(repair(st, name))
        except StoreError as e:
            failed += 1
            out[name] = {"error": str(e)}
            if not as_json:
                print(f"warchive: error: {e}", file=sys.stderr)
            continue
        out[name] = r
        if not as_json:
            print(f"{name}: {_repair_words(r)}", file=sys.stderr)
    if as_json:
        print(json.dumps(out, indent=1))
    return 1 if failed else 0
