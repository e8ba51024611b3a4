"""The `warchive` command: ``main(argv)`` and the console script ``run()``.

The commands, their options and what they run are declared in
warchive.cli.commands (the registry: every command, its help and its module)
and the modules it names, one per command or group of commands: index,
indexes (sort, merge, build, zipnum, record-index), collection (add,
compact), access (cdx, lookup, load), serve, extract, warcs (check,
recompress, recover), crawl, robots, session, dedup (dedup-index), store. docs/cli.md documents
every command.

This module is the one place where start-up is tuned, for `warchive index`
alone: its usual command lines are parsed here without argparse (which
imports re, gettext and locale with it: measured 7 ms of a 250 ms `-j 2` run
on the benchmark corpus), and once the index is on disk the process ends
with os._exit instead of tearing the interpreter down (5-10 ms). Hence the
imports below inside functions; a hypothesis test holds this parser to
argparse's answers (tests/unit/test_cli_startup.py). Every other command line
goes to argparse.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Dict, List, Optional, Union

from ..errors import ArchiveError

__all__ = ["MissingExtra", "UsageError", "main", "run"]

_FLAGS = {"-11": "cdx11", "--cdx11": "cdx11", "-p": "post_append", "--post-append": "post_append",
          "-s": "sort", "--sort": "sort", "--verify": "verify", "--skip-errors": "skip_errors", "--strict": "strict"}
_VALUES = {"-o": "output", "--output": "output", "--records": "records", "--dir-root": "dir_root",
           "-j": "jobs", "--jobs": "jobs", "--surt-options": "surt_options"}


class UsageError(Exception):
    """A command line that does not make sense (exit status 2, with the command's usage; the
    commands raise it, warchive.cli.commands prints it). Here, not there, so that warchive.cli.index
    can raise it without importing argparse."""


class MissingExtra(UsageError):
    """An option needs an optional extra that is not installed (exit status 2, like a usage
    error, but one line: ``warchive: error:`` and the ``pip install`` that brings it;
    warchive.cli.extras raises it)."""


class IndexArgs:
    """The attributes argparse gives `warchive index` (see index_args)."""

    def __init__(self, **kw: object) -> None:
        self.__dict__.update(kw)


def index_args(argv: List[str]) -> Optional[IndexArgs]:
    """The arguments of `warchive index` written the plain way (each option spelled out whole and
    its value the next argument, the inputs together) as argparse parses them. Anything else
    (abbreviations, --opt=value, -j2, help, mistakes) gives None and argparse decides."""
    if not argv or argv[0] != "index":
        return None
    a: Dict[str, Union[str, int, bool, None, List[str]]] = dict(
        command="index", inputs=[], output=None, cdx11=False, records=None, dir_root=None, post_append=False,
        sort=False, jobs=1, verify=False, skip_errors=False, strict=False, scheduler=None, build=False, zipnum=False,
        lines=3000, parts=1, ranges=None, target_size=None, scratch=None, keep_scratch=False, fields=None,
        surt_options=None)
    inputs: List[str] = []
    closed = False   # an option came after the inputs: argparse takes one run of them only
    k = 1
    while k < len(argv):
        arg = argv[k]
        k += 1
        if arg == "-" or not arg.startswith("-"):   # "-": standard input, an input as argparse takes it
            if closed:
                return None
            inputs.append(arg)
            continue
        closed = bool(inputs)
        if arg in _FLAGS:
            a[_FLAGS[arg]] = True
        elif arg in _VALUES:
            if k >= len(argv) or argv[k].startswith("-"):
                return None
            value = argv[k]
            k += 1
            if _VALUES[arg] == "jobs":
                try:
                    a["jobs"] = int(value)
                except ValueError:
                    return None
            else:
                a[_VALUES[arg]] = value
        else:
            return None
    if not inputs:
        return None
    a["inputs"] = inputs
    return IndexArgs(**a)


def main(argv: Optional[List[str]] = None) -> int:
    """Run one `warchive` command line; its exit status (0 done, 1 failed, 2 usage error)."""
    if argv is None:
        argv = sys.argv[1:]
    fast = index_args(argv)
    if fast is not None:
        from . import index   # the index command's module: argparse is not needed for it

        return run_command(index.index, fast)
    from . import commands

    return commands.main(argv)


def run_command(run: Callable[[Any], int], args: Any) -> int:
    """run(args), with the errors a user can meet (ArchiveError, OSError) as one line on stderr and
    exit status 1; a missing extra as one line and exit status 2."""
    try:
        return int(run(args))
    except MissingExtra as e:
        print(f"warchive: error: {e}", file=sys.stderr)
        return 2
    except ArchiveError as e:
        print(f"warchive: error: {e}", file=sys.stderr)
        return 1
    except FileNotFoundError as e:
        print(f"warchive: error: {e.filename}: no such file or directory", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
    except OSError as e:   # a full disk, a permission refused: one line, not a traceback
        where = f"{e.filename}: " if e.filename else ""
        print(f"warchive: error: {where}{e.strerror or e}", file=sys.stderr)
        return 1


def run() -> None:
    """The `warchive` console script: main(), then exit. After `warchive index` (its output
    already fsynced and renamed, nothing left for atexit handlers, finalizers or threads) the
    process ends with os._exit once standard output and error are flushed."""
    argv = sys.argv[1:]
    rc = main(argv)
    if argv[:1] == ["index"]:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BrokenPipeError:
            pass
        else:
            os._exit(rc)
    sys.exit(rc)
