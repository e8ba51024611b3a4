"""The `warchive` command: ``main(argv)`` and the console script ``run()``.

The commands, their options and what they run are declared in
warchive.cli.commands (the registry: every command, its help and its module)
and the modules it names, one per command or group of commands: index,
indexes (sort, merge, build, zipnum, record-index), collection (add,
compact), access (cdx, lookup, load), serve, extract, warcs (check,
recompress, recover), crawl, robots, session, dedup (dedup-index), store. docs/cli.md documents
every command.

This module is the one place where start-up is tuned, for `warchive index`
alone: once the index is on disk the process ends with os._exit instead of
tearing the interpreter down (5-10 ms; see run()). Every command line, `warchive
index`'s too, is parsed by argparse (warchive.cli.commands): argparse costs
`warchive index` 7 ms of a 111 ms run on a 0.6 MB WARC (medians of 20 runs),
too little for a second parser to keep in step with its options.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, List, Optional

from ..errors import ArchiveError

__all__ = ["MissingExtra", "UsageError", "main", "run"]


class UsageError(Exception):
    """A command line that does not make sense (exit status 2, with the command's usage; the
    commands raise it, warchive.cli.commands prints it)."""


class MissingExtra(UsageError):
    """An option needs an optional extra that is not installed (exit status 2, like a usage
    error, but one line: ``warchive: error:`` and the ``pip install`` that brings it;
    warchive.cli.extras raises it)."""


def main(argv: Optional[List[str]] = None) -> int:
    """Run one `warchive` command line; its exit status (0 done, 1 failed, 2 usage error)."""
    if argv is None:
        argv = sys.argv[1:]
    from . import commands   # (here: it imports UsageError and run_command from this module)

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
