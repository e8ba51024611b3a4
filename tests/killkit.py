"""SIGKILL a `warchive` command at random moments and check what it leaves: the harness of tests/faults.

``kill_runs(case, kills, seed)`` runs one command line (``python -m warchive ARGV``, a real
subprocess, as tests/unit/test_cli.py runs the CLI, so a kill meets the command exactly as a
user's would) to its end to measure how long it takes (the median of three runs), then again
and again, each run killed with SIGKILL after a delay drawn from a seeded ``random.Random``: the
delays are spread over the whole run (stratified: the k-th of n kills lands at a uniform point
of the k-th n-th of the run time, so every phase, start-up to publication, is hit), and their
order shuffled. A run that ends before its kill point is checked too, and its stratum drawn
again over the time that run took, until ``kills`` runs were killed (at most 3 x ``kills`` runs).

After every kill the case checks what is under the final names (``case.check_killed``), then a
rerun of the same command line must exit 0 and leave the uninterrupted result
(``case.check_done``); then the case puts its inputs back (``case.reset``). A case is an object
with ``argv``, ``reset()``, ``check_killed()`` and ``check_done()``; the reference it compares
against comes from an uninterrupted run of the command (``reference()``), made before the kills.
Failure messages carry the seed and the delay, so a failing kill can be replayed.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Protocol, Sequence

#: what a kill leaves besides the final names: AtomicOutput's NAME.<random>.tmp, a copy's NAME.part,
#: a WARC writer's NAME.open
TEMP_SUFFIXES = (".tmp", ".part", ".open")


class Case(Protocol):
    argv: Sequence[str]

    def reset(self) -> None: ...

    def check_killed(self) -> None: ...

    def check_done(self) -> None: ...


@dataclass
class Tally:
    name: str
    kills: int = 0          # runs killed before they ended
    finished: int = 0       # runs that ended before their kill point (checked, then drawn again)
    seconds: float = 0.0    # one uninterrupted run
    leftovers: int = 0      # temporary files a kill left (never under a final name)
    notes: Dict[str, int] = field(default_factory=dict)

    def line(self) -> str:
        extra = "".join(f", {k} {v}" for k, v in sorted(self.notes.items()))
        return (f"{self.name}: {self.kills} killed, {self.finished} ended first, run {self.seconds * 1000:.0f} ms, "
                f"{self.leftovers} temp files left{extra}")


def command(argv: Sequence[str]) -> List[str]:
    return [sys.executable, "-m", "warchive", *map(str, argv)]


def run(argv: Sequence[str], timeout: float = 300) -> subprocess.CompletedProcess:
    """``warchive ARGV`` to its end: the completed process (stdout and stderr as text)."""
    return subprocess.run(command(argv), capture_output=True, text=True, timeout=timeout)


def run_ok(argv: Sequence[str]) -> subprocess.CompletedProcess:
    r = run(argv)
    assert r.returncode == 0, f"warchive {' '.join(map(str, argv))}: exit {r.returncode}\n{r.stderr}"
    return r


def killed_after(argv: Sequence[str], delay: float) -> Optional[float]:
    """Start ``warchive ARGV``, SIGKILL it ``delay`` s later; None if it was killed, else the
    seconds it took to end first (and then with exit status 0)."""
    t = time.perf_counter()
    p = subprocess.Popen(command(argv), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _, err = p.communicate(timeout=delay)
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGKILL)
        p.communicate()
        return None
    assert p.returncode == 0, f"ended first with exit {p.returncode}: {err.decode(errors='replace')}"
    return time.perf_counter() - t


def duration(argv: Sequence[str], reset: Callable[[], None]) -> float:
    """The median time of three uninterrupted runs, each from ``reset()``."""
    times = []
    for _ in range(3):
        reset()
        t = time.perf_counter()
        run_ok(argv)
        times.append(time.perf_counter() - t)
    return sorted(times)[1]


def temp_files(*dirs: Path) -> List[Path]:
    return [p for d in dirs if d.exists() for p in d.rglob("*") if p.name.endswith(TEMP_SUFFIXES)]


def kill_runs(name: str, case: Case, kills: int, seed: int, run_time: float) -> Tally:
    """``kills`` SIGKILLs of ``case.argv``, each followed by the checks and a rerun (module docstring)."""
    rng = random.Random(seed)
    tally = Tally(name, seconds=run_time)
    strata = list(range(kills))
    rng.shuffle(strata)
    span = run_time
    while strata and tally.kills + tally.finished < 3 * kills:
        k = strata[-1]
        delay = span * (k + rng.random()) / kills
        case.reset()
        where = f"{name}, seed {seed}, kill at {delay * 1000:.1f} ms of a {span * 1000:.0f} ms run"
        took = killed_after(case.argv, delay)
        if took is None:
            tally.kills += 1
            strata.pop()
        else:       # the run was quicker than the span: draw this stratum again over what it took
            tally.finished += 1
            span = min(span, took)
        try:
            case.check_killed()
            run_ok(case.argv)
            case.check_done()
        except AssertionError as e:
            raise AssertionError(f"{where}: {e}") from None
    return tally
