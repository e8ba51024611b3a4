"""Many `warchive` command lines in one subprocess, and warcio's CLI in this one.

``run_batch(argvs)`` runs each argv through ``warchive.cli.main`` (argparse,
the command, the exit status, exactly as the console script runs them) in one
child process, so that thousands of `warchive extract` calls take seconds and
a crash in a kernel still fails the test rather than the session. It returns
(exit status, stdout bytes, stderr text) per argv, in order.

``warcio_cli(argv)`` runs ``warcio.cli.main(argv)`` in process and returns
what it wrote to stdout (bytes) and to stderr; ``warcio_extract`` runs what
`warcio extract` runs.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import subprocess
import sys
from typing import List, Sequence, Tuple

_CHILD = r"""
import base64, contextlib, io, json, sys
from warchive.cli import run_command
from warchive.cli.commands import main, parser
request = json.load(sys.stdin)
parsers = {}
out = []
for argv in request["argvs"]:
    buf = io.BytesIO()
    err = io.StringIO()
    old = sys.stdout
    sys.stdout = wrapper = io.TextIOWrapper(buf, write_through=True)
    try:
        with contextlib.redirect_stderr(err):
            if request["reuse"]:
                p = parsers.get(argv[0]) or parsers.setdefault(argv[0], parser(argv[0]))
                args = p.parse_args(argv)
                rc = run_command(args.run, args)
            else:
                rc = main(argv)
    except SystemExit as e:
        rc = e.code
    finally:
        wrapper.flush()
        sys.stdout = old
    out.append([rc, base64.b64encode(buf.getvalue()).decode(), err.getvalue()])
    wrapper.detach()
json.dump(out, sys.stdout)
"""


def run_batch(argvs: Sequence[Sequence[str]], reuse: bool = False, timeout: int = 600) -> List[Tuple[int, bytes, str]]:
    """(exit status, stdout, stderr) of each `warchive` argv, run in one child process by
    warchive.cli.commands.main; with ``reuse``, each command's parser is built once and its
    function run as main runs it (building the parser is most of a short command's time)."""
    env = dict(os.environ)
    env.setdefault("PYTHONFAULTHANDLER", "1")
    request = {"argvs": [list(map(str, a)) for a in argvs], "reuse": reuse}
    r = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps(request),
                       capture_output=True, text=True, timeout=timeout, env=env)
    assert r.returncode == 0, r.stderr
    return [(rc, base64.b64decode(b), e) for rc, b, e in json.loads(r.stdout)]


class _Stdout:
    def __init__(self) -> None:
        self.buffer = io.BytesIO()

    def write(self, s: str) -> int:
        return self.buffer.write(s.encode("utf-8"))

    def flush(self) -> None:
        pass


def warcio_cli(argv: Sequence[str]) -> Tuple[bytes, str]:
    """``warcio ARGV`` (warcio.cli.main) in process: (stdout bytes, stderr text)."""
    from warcio.cli import main

    out = _Stdout()
    err = io.StringIO()
    old = sys.stdout
    sys.stdout = out   # type: ignore[assignment]
    try:
        with contextlib.redirect_stderr(err):
            main(list(map(str, argv)))
    finally:
        sys.stdout = old
    return out.buffer.getvalue(), err.getvalue()


def warcio_extract(path, offset: int, flags: Sequence[str] = ()) -> bytes:
    """What ``warcio extract PATH OFFSET FLAGS`` prints: the Extractor its CLI runs, in process
    (its main() also looks its own version up, 3 ms a call)."""
    from warcio.extractor import Extractor

    out = _Stdout()
    old = sys.stdout
    sys.stdout = out   # type: ignore[assignment]
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            Extractor(str(path), str(offset)).extract("--payload" in flags, "--headers" in flags)
    finally:
        sys.stdout = old
    return out.buffer.getvalue()
