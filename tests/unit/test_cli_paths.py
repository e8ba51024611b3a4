"""Every command, given a path a user could pass by mistake (a directory, a missing path, an
empty file, a file of the wrong kind) where it reads a file: one line naming the path on stderr,
a non-zero exit, never a traceback (issue 13's walk over the CLI).

Each command is called in process through ``warchive.cli.main``, so an exception escaping the
command's error handling fails the test with its traceback."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Dict, List

import pytest

from warchive.cli import main
from warchive.cli.commands import COMMANDS

# argv of each command with P where the path under test goes (O: an output path that is fine)
CALLS: Dict[str, List[List[str]]] = {
    "index": [["P"], ["-o", "O", "P"]],
    "sort": [["-o", "O", "P"]],
    "merge": [["-o", "O", "P"]],
    "build": [["-o", "O.seg", "P"]],
    "zipnum": [["-o", "O", "P"]],
    "record-index": [["-o", "O.rix", "P"]],
    "add": [["C", "P"], ["P", "W"]],
    "compact": [["P"]],
    "cdx": [["--url", "http://example.com/", "P"]],
    "lookup": [["http://example.com/", "P"]],
    "load": [["http://example.com/", "2020", "P"]],
    "extract": [["P", "0"]],
    "check": [["P"]],
    "recompress": [["P", "O.warc.gz"]],
    "recover": [["P"]],
    "crawl": [["--resume", "P"]],
    "robots": [["-a", "warchive", "P", "http://example.com/"]],
    "session": [[a, "P"] for a in ("show", "failed", "skipped", "stats")],
    "dedup-index": [["lookup", "P", "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"], ["stats", "P"], ["add", "P", "W"]],
}
# commands whose path is not read (init makes it; serve serves a root, tested by its own tests)
NOT_READ = {"init", "serve"}


def _kinds(tmp: Path) -> Dict[str, Callable[[], Path]]:
    def directory() -> Path:
        p = tmp / "a_dir"
        p.mkdir(exist_ok=True)
        return p

    def missing() -> Path:
        return tmp / "not_there.warc.gz"

    def empty() -> Path:
        p = tmp / "empty.warc.gz"
        p.write_bytes(b"")
        return p

    def wrong() -> Path:
        p = tmp / "picture.warc.gz"
        p.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8)
        return p
    return {"directory": directory, "missing": missing, "empty": empty, "wrong kind": wrong}


def test_every_command_is_walked() -> None:
    assert {c.name for c in COMMANDS} == set(CALLS) | NOT_READ


# (a kind that is a valid input of a command: no error expected there)
VALID = {("index", "directory"), ("record-index", "directory"), ("add", "directory"), ("recover", "missing"),
         ("robots", "empty"), ("robots", "wrong kind"), ("robots", "directory")}


@pytest.mark.parametrize("command", sorted(CALLS))
def test_bad_paths(command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "C").mkdir()
    (tmp_path / "C" / "archive").mkdir()
    (tmp_path / "C" / "indexes").mkdir()
    (tmp_path / "W").write_bytes(b"")
    for kind, make in _kinds(tmp_path / "k").items() if (tmp_path / "k").mkdir() is None else ():
        if (command, kind) in VALID:
            continue
        for template in CALLS[command]:
            path = make()
            argv = [command] + [str(path) if a == "P" else a for a in template]
            rc = main(argv)
            out, err = capsys.readouterr()
            assert rc != 0, (argv, kind, out, err)
            assert "Traceback" not in err, (argv, err)
            assert path.name in err, (argv, kind, err)
            assert err.strip().count("\n") < 3, (argv, kind, err)   # a line or two, not a dump
