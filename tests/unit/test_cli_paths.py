"""Every command, given a path a user could pass by mistake (a directory, a missing path, an
empty file, a file of another kind; an output whose directory is missing or which is a
directory): one line or two naming the path on stderr, exit status 1 (2 where the command calls
it a usage error), never a traceback, nothing on standard output and nothing left behind
(a walk over the whole CLI; the rules are docs/cli.md's "Paths").

Each command is called in process through ``warchive.cli.main``, so an exception escaping the
command's error handling fails the test with its traceback. ``SLOTS`` names every path a
command line takes, with what the command expects there (its role) and which of the role's
mistakes the command takes as valid input (a directory `warchive index` walks, say);
``test_every_path_is_walked`` fails when a command, a sub-command or a path-taking option is
added without a slot.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, FrozenSet, Iterator, List, Tuple

import pytest
import uvicorn

import warcgen
from warchive.cli import main
from warchive.cli.commands import COMMANDS, parser

W = "ok.warc.gz"          # a sound WARC file (warcgen's get_pairs records)
L = "ok.cdxj"             # a sorted CDXJ file of it
C = "coll"                # a collection holding W
D = "digests"             # a digest index of W
J = "crawl.log"           # a crawl.log with one duplicate line of W's capture
S = "store"               # a store (k=2, m=1 over three volumes) holding W
V = "vols/v"              # its volumes: vols/v0, vols/v1, vols/v2
O = "ok.warc.gz.open"     # W, as a writer killed after its last record would leave it
URL = "http://example.com/"
DIGEST = "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"

# The mistakes tried at each role (what the command expects at the path).
ROLES: Dict[str, Tuple[str, ...]] = {
    "warc": ("directory", "missing", "empty", "png", "text", "cdx"),   # a WARC/ARC file
    "cdx": ("directory", "missing", "png", "warc", "text"),   # sorted CDX(J) lines (empty: an empty index)
    "source": ("directory", "missing", "png", "warc", "text"),   # a collection or an index file
    "coll": ("not a collection", "missing", "empty", "png"),     # an existing collection
    "new": ("file",),                                            # a directory made or added to
    "fresh": ("file", "directory"),                              # a directory made (none there yet)
    "digests": ("directory", "missing", "empty"),                # an existing digest index
    "journal": ("directory", "collection", "missing", "empty", "png", "text", "warc"),   # journal, crawl dir or
                                                                                         # collection
    "dir": ("missing", "empty"),                                 # a directory read
    "file": ("directory", "missing"),                            # a file read, whatever it holds
    "log": ("directory", "missing", "empty", "png", "warc"),     # a crawl.log
    "out": ("out directory", "missing parent"),                  # a file written
}


@dataclass(frozen=True)
class Slot:
    """One path of a command line: ``argv`` with P where the path goes, the role of P, how its
    name ends (``ext``), and the role's mistakes the command takes as valid input there."""
    argv: Tuple[str, ...]
    role: str
    ext: str = ""
    valid: FrozenSet[str] = frozenset()
    why: str = ""     # why a mistake is valid there
    also: Tuple[str, ...] = ()   # mistakes there beyond the role's

    def kinds(self) -> List[str]:
        return [k for k in ROLES[self.role] if k not in self.valid] + list(self.also)


def slot(argv: str, role: str, ext: str = "", valid: str = "", why: str = "", also: str = "") -> Slot:
    return Slot(tuple(argv.split()), role, ext, frozenset(v for v in valid.split(",") if v), why,
                tuple(a for a in also.split(",") if a))


WALKS = "a directory is walked for the files in it"
SLOTS: Dict[str, List[Slot]] = {
    "index": [slot("P", "warc", ".warc.gz", "directory", WALKS), slot("-j 2 P", "warc", ".warc.gz", "directory", WALKS),
              slot("-f offset P", "warc", ".warc.gz", "directory", WALKS), slot(f"{W} -o P", "out", ".cdxj")],
    "sort": [slot("P -o out.cdxj", "cdx", ".cdxj"), slot(f"{L} -o P", "out", ".cdxj"),
             slot(f"{L} -o out.cdxj --tmpdir P", "dir")],
    "merge": [slot("P -o out.cdxj", "cdx", ".cdxj"), slot(f"{L} -o P", "out", ".cdxj")],
    "build": [slot("P -o out.seg", "cdx", ".cdxj"), slot(f"{L} -o P", "out", ".seg")],
    "zipnum": [slot("P -o out/", "cdx", ".cdxj"),
               slot(f"{L} -o P", "out", "", "out directory", "-o DIR writes DIR/cluster.idx")],
    "record-index": [slot("P -o out.rix", "warc", ".warc.gz", "directory", WALKS), slot(f"{W} -o P", "out", ".rix")],
    "init": [slot("P", "fresh")],
    "add": [slot(f"P {W}", "coll"), slot(f"{C} P", "warc", ".warc.gz")],
    "compact": [slot("P", "coll")],
    "cdx": [slot(f"--url {URL} P", "source", ".cdxj"), slot(f"--url {URL} P", "source", ".seg", also="empty"),
            slot(f"--url {URL} P", "source", ".idx")],
    "lookup": [slot(f"{URL} P", "source", ".cdxj")],
    "load": [slot(f"{URL} 2020 P", "source", ".cdxj"), slot(f"{URL} 2020 {L} --archive P", "dir"),
             slot(f"{URL} 2020 {C} -o P", "out", ".html")],
    "serve": [slot("--port 0 --root P", "dir"),
              slot("--port 0 --config P", "file", ".yaml", also="png,warc,text")],   # (empty: no options)
    "extract": [slot("P 0", "warc", ".warc.gz")],
    "check": [slot("P", "warc", ".warc.gz")],
    "recompress": [slot("P out.warc.gz", "warc", ".warc.gz"), slot(f"{W} P", "out", ".warc.gz")],
    "recover": [slot("P", "warc", ".warc.gz.open", "empty", "a writer killed before its first record leaves "
                     "an empty .open file"),
                slot("--dry-run P", "warc", ".warc.gz.open", "empty", "as without --dry-run"),
                slot("P -o out.warc.gz", "warc", ".warc.gz.open", "empty", "as without -o"),
                slot(f"{O} -o P", "out", ".warc.gz")],
    "crawl": [slot("--resume P", "journal"),
              slot("-q --no-politeness --max-retries 0 -o P http://127.0.0.1:9/", "new")],
    "robots": [slot(f"-a warchive P {URL}", "file", ".txt")],   # (any bytes are a robots.txt, read leniently)
    "session": [slot(f"{a} P", "journal") for a in ("show", "failed", "skipped", "stats")],
    "dedup-index": [slot(f"build P {L}", "new"), slot(f"add P {L}", "new"),
                    slot(f"build {D}2 P", "warc", ".warc.gz", "directory", WALKS),
                    slot(f"add {D} P", "warc", ".warc.gz", "directory", WALKS),
                    slot(f"build {D}2 P", "cdx", ".cdxj", "directory", WALKS),
                    slot(f"lookup P {DIGEST}", "digests"), slot("stats P", "digests")],
    "store": [slot(f"init P --volumes {V}n0 {V}n1 {V}n2 -k 2 -m 1", "fresh", "", "directory",
                   "an empty directory is made a store, as a missing one is"),
              slot(f"init sx --volumes P {V}n1 {V}n2 -k 2 -m 1", "fresh", "", "directory",
                   "an empty directory is made a volume, as a missing one is"),
              slot(f"put P {W}", "coll"), slot(f"put {S} P", "warc", ".warc.gz"),
              slot(f"get P {W} -o out.warc.gz", "coll"), slot(f"get {S} {W} -o P", "out", ".warc.gz"),
              slot("ls P", "coll"), slot(f"stat P {W}", "coll"), slot(f"rm P {W} --force", "coll"),
              slot("scrub P --light", "coll"), slot("scrub P --deep", "coll"), slot("repair P", "coll")],
    "wacz": [slot("create P -o out.wacz", "coll"), slot(f"create {C} -o P", "out", ".wacz"),
             slot("validate P", "warc", ".wacz")],
    "crawllog-revisits": [slot(f"P --index {C} -o out", "log", ".log"),
                          # an empty index is an error there: every duplicate line would be unresolved
                          slot(f"{J} --index P -o out", "source", ".cdxj", also="empty"),
                          slot(f"{J} --index {C} -o P", "new"),
                          slot(f"{J} --index {C} -o out --archive P", "dir")],
}
# the arguments that take a string that is no path (or, --dir-root, a path only named: the
# filenames of the index are made relative to it, nothing is read there)
NOT_PATHS = {(("index",), d) for d in ("records", "dir_root", "fields", "surt_options")} | {
    (("record-index",), "dir_root"), (("cdx",), "coll"), (("lookup",), "url"), (("load",), "cdx"),
    (("serve",), "replay_host"), (("serve",), "host"), (("serve",), "trust_proxy"), (("robots",), "urls"), (("robots",), "agent"),
    (("session", "show"), "url"), (("store", "get"), "name"), (("wacz", "create"), "pages"), (("wacz", "create"), "title"),
    (("wacz", "create"), "description"), (("wacz", "create"), "signing_url"), (("store", "scrub"), "names"), (("store", "repair"), "names"),
    (("store", "scrub"), "since"), (("store", "get"), "range"),
    (("store", "stat"), "name"), (("store", "rm"), "name"), (("store", "init"), "fragment_size"),
    (("index",), "scheduler"), (("index",), "target_size"),
    # (a directory the scheduled job makes on the workers' shared storage: tests/unit/test_distributed.py)
    (("index",), "scratch"), (("dedup-index", "lookup"), "digests"), (("crawllog-revisits",), "prefix")} | {
    (("crawl",), d) for d in ("seeds", "include", "exclude", "prefix", "user_agent", "from_", "resolve", "port_map",
                              "allow_addresses")}


# --------------------------------------------------------------------------- the mistakes

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8
TEXT = b"hello world\nthese are words, not records\n"


def make(kind: str, where: Path, ext: str, tmp: Path) -> Path:
    """The path of a mistake of this kind, made under ``where``."""
    where.mkdir(exist_ok=True)
    if kind in ("directory", "out directory"):
        p = where / "a_dir"
        p.mkdir()
    elif kind == "not a collection":
        p = where / "a_dir"
        p.mkdir()
        (p / "notes.txt").write_bytes(TEXT)
    elif kind == "collection":   # without a crawl
        p = where / "a_coll"
        (p / "archive").mkdir(parents=True)
        (p / "indexes").mkdir()
    elif kind == "missing":
        p = where / ("not_there" + ext)
    elif kind == "missing parent":
        p = where / "no_dir" / ("out" + ext if ext else "out")
    elif kind in ("empty", "file"):
        p = where / ("empty" + ext)
        p.write_bytes(b"")
    else:
        p = where / {"png": "picture", "text": "words", "warc": "records", "cdx": "lines"}[kind]
        p = p.with_name(p.name + ext)
        p.write_bytes({"png": PNG, "text": TEXT, "warc": (tmp / W).read_bytes(),
                       "cdx": (tmp / L).read_bytes()}[kind])
    return p


def tree(root: Path) -> Dict[str, str]:
    """Every file and directory under root, with a digest of each file's bytes."""
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for d in dirs:
            out[os.path.relpath(os.path.join(dirpath, d), root)] = "dir"
        for f in files:
            p = os.path.join(dirpath, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = hashlib.sha1(fh.read()).hexdigest()
    return out


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    """A working directory with W, L, C, D, J and S, and serve that returns instead of serving."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: None)
    fx = warcgen.write_warc(tmp_path, "ok", warcgen.recs_get_pairs())
    assert fx.path.name == W
    (tmp_path / O).write_bytes(fx.path.read_bytes())
    assert main(["index", W, "-o", L, "--sort"]) == 0
    assert main(["init", C]) == 0 and main(["add", C, W]) == 0
    assert main(["dedup-index", "build", D, W]) == 0
    assert main(["store", "init", S, "--volumes", V + "0", V + "1", V + "2", "-k", "2", "-m", "1"]) == 0
    assert main(["store", "put", S, W]) == 0
    first = (tmp_path / L).read_bytes().split(b"\n")[0].decode()
    digest = first.split('"digest": "')[1].split('"')[0]
    url = first.split('"url": "')[1].split('"')[0]
    (tmp_path / J).write_text(f"2024-01-01T00:00:00.000Z   200       1234 {url} - - text/html #001 "
                              f"20240101000000000+10 {digest} - duplicate:digest\n")
    capsys.readouterr()
    return tmp_path


@pytest.mark.parametrize("command", sorted(SLOTS))
def test_bad_paths(command: str, site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    failures = []
    calls = [(s, kind) for s in SLOTS[command] for kind in s.kinds()]
    for n, (s, kind) in enumerate(calls):
        path = make(kind, site / f"k{n}", s.ext, site)
        argv = [command] + [str(path) if a == "P" else a for a in s.argv]
        before = tree(site)
        rc = main(argv)
        out, err = capsys.readouterr()
        problem = _problem(rc, out, err, path, before, tree(site))
        if problem:
            failures.append(f"{kind} at {' '.join(argv)}: {problem}\n  stdout: {out[:300]!r}\n  stderr: {err[:300]!r}")
    assert not failures, "\n".join(failures)


def _problem(rc: int, out: str, err: str, path: Path, before: Dict[str, str], after: Dict[str, str]) -> str:
    if "Traceback" in out + err:
        return "a traceback"
    if rc not in (1, 2):
        return f"exit status {rc}"
    if not re.search(re.escape(str(path)) + r"(:| at byte | line | exists| \(block)", err):
        return "stderr does not name the path"   # (as what is wrong, not inside another path)
    if err.strip().count("\n") > 1:
        return "more than two lines on stderr"
    if out:
        return "output on stdout"
    if before != after:
        changed = sorted(set(before.items()) ^ set(after.items()))
        return f"files left behind or changed: {changed[:4]}"
    return ""


# --------------------------------------------------------------------------- every path has a slot

def _value_arguments(p: argparse.ArgumentParser, names: Tuple[str, ...] = ()) -> Iterator[Tuple[Tuple[str, ...], str]]:
    """(command and sub-command, dest) of every argument that takes a string (not a number, not
    one of a few choices: those are no paths)."""
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sp in a.choices.items():
                yield from _value_arguments(sp, names + (name,))
        elif a.nargs != 0 and a.type in (None, str) and not a.choices and not a.dest.startswith("p_") \
                and a.dest != "help":
            yield names, a.dest   # (p_*: the CDX API parameters of `warchive cdx`)


def _slot_dest(command: str, s: Slot) -> Tuple[Tuple[str, ...], str]:
    """(command and sub-command, dest) of the argument a slot's P is."""
    sentinel = "/P/"
    ns = parser(command).parse_args([command] + [sentinel if a == "P" else a for a in s.argv])
    names = (command,) + tuple(v for k, v in sorted(vars(ns).items()) if k.endswith("_command"))
    dests = [k for k, v in vars(ns).items() if v == sentinel or isinstance(v, list) and sentinel in v]
    assert len(dests) == 1, (command, s, dests)
    return names, dests[0]


def test_every_path_is_walked() -> None:
    """A slot for every command, sub-command and argument that takes a path: a new one fails
    here until it is walked (or, not being a path, listed in NOT_PATHS)."""
    assert {c.name for c in COMMANDS} == set(SLOTS)
    walked = {_slot_dest(command, s) for command, slots in SLOTS.items() for s in slots}
    arguments = set(_value_arguments(parser("*")))
    assert walked <= arguments
    assert NOT_PATHS <= arguments
    assert sorted(arguments - walked - NOT_PATHS) == []


def test_the_walk_fails_where_it_should(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each check of _problem can fail: a valid call, and calls that break each rule."""
    good = site / W
    before = tree(site)
    rc = main(["check", str(good)])
    out, err = capsys.readouterr()
    assert _problem(rc, out, err, good, before, tree(site)) == "exit status 0"
    assert _problem(1, "", "warchive: error: x\n", good, before, before) == "stderr does not name the path"
    assert _problem(1, "", f"warchive: error: {good}/x: Not a directory\n", good, before, before) == \
        "stderr does not name the path"
    assert _problem(1, "", f"{good}: x\nTraceback\n", good, before, before) == "a traceback"
    assert _problem(1, "", f"{good}: x\n1\n2\n", good, before, before) == "more than two lines on stderr"
    assert _problem(1, "x", f"{good}: x\n", good, before, before) == "output on stdout"
    assert _problem(1, "", f"{good}: x\n", good, before, {**before, "x.tmp": "0"}).startswith("files left behind")
    assert _problem(1, "", f"warchive: error: {good}: bad\n", good, before, before) == ""
