"""What the client of a distributed index shows while it runs, and the line it ends with.

``Display`` draws one line on a terminal (files and bytes indexed, records a
second, the time left at the present rate), refreshed at most twice a second
and erased at the end; on anything that is not a terminal it writes nothing.
``summary_line`` is the one line said at the end either way. This module
formats; it must not schedule anything.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Dict, Optional, TextIO

__all__ = ["Display", "human", "summary_line"]


def human(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} PB"   # pragma: no cover


class Display:
    """A live line on a terminal (nothing elsewhere): call update(...) as tasks finish."""

    def __init__(self, stream: Optional[TextIO] = None, interval: float = 0.5) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.live = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = interval
        self.t0 = time.monotonic()
        self._last = 0.0
        self._width = 0

    def update(self, stage: str, files: int, files_total: int, done: int, total: int, records: int,
               force: bool = False) -> None:
        if not self.live:
            return
        now = time.monotonic()
        if not force and now - self._last < self.interval:
            return
        self._last = now
        dt = max(1e-6, now - self.t0)
        rate = done / dt
        eta = f"{(total - done) / rate:.0f} s" if rate > 0 and done < total else "-"
        text = (f"warchive index [{stage}]: files {files}/{files_total}, {human(done)}/{human(total)}, "
                f"{records / dt:,.0f} records/s, ETA {eta}")
        self.stream.write("\r" + text.ljust(self._width))
        self.stream.flush()
        self._width = len(text)

    def stage(self, stage: str) -> None:
        if self.live:
            text = f"warchive index [{stage}]"
            self.stream.write("\r" + text.ljust(self._width))
            self.stream.flush()
            self._width = len(text)

    def close(self) -> None:
        if self.live and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0


def summary_line(s: Dict[str, Any]) -> str:
    """One line: what was indexed, on how many workers, how long each stage took, the shuffle."""
    stages = ", ".join(f"{k} {v:.2f} s" for k, v in s["stages"].items())
    ran = sum(s["tasks_run"].values())
    total = sum(s["tasks"].values())
    return (f"warchive: indexed {s['inputs']} file(s), {human(s['bytes_in'])}, {s['records']} records into "
            f"{s['ranges']} key range(s) on {s['workers']} worker(s) in {s['seconds']:.2f} s ({stages}); "
            f"shuffled {human(s['bytes_shuffled'])}, wrote {human(s['bytes_written'])}, "
            f"range skew {s['skew']:.2f}x; {ran} of {total} tasks run")
