"""`warchive store init|put|get|ls|stat|rm`: the durable, erasure-coded store (warchive.store).

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
from ..store.codec import CODECS, DEFAULT_CODEC
from ..store.config import DEFAULT_FRAGMENT_SIZE, DEFAULT_K, DEFAULT_M
from ..store.fragments import Damage
from ..store.layout import placement
from ..store.manifest import Manifest
from . import UsageError, paths

_SIZE = re.compile(r"(\d+)\s*([kmg]i?b?)?\Z", re.I)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def _size(text: str) -> int:
    m = _SIZE.match(text.strip())
    if not m:
        raise UsageError(f"--fragment-size {text!r}: a number of bytes (suffix K, M or G for KiB, MiB, GiB)")
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
