"""Archive files kept open between the records read from them: replay reads one record a request,
and the records of a page (its images, scripts, styles) come from the same few files, so opening
the file each time (a path lookup, an open and a close: three system calls of the six a record
costs) is mostly waste.

``OpenFiles.get(path)`` gives an open, read-only file of ``path`` (read with pread by position,
so that one is shared by every reader). At most ``limit`` stay open, the least recently used
closed first. A file is looked at again by name (stat) at most once every ``recheck`` seconds:
when the name now leads to another file (a WARC replaced, ``NAME.open`` renamed to ``NAME``)
or to none, the old one is closed and the name opened afresh; within that second a record of a
file just replaced can still be read from the old one, as a request begun before the change
would have. This module never writes and opens nothing but the paths it is given.
"""

from __future__ import annotations

import io
import os
import threading
import time
from collections import OrderedDict
from typing import Tuple

__all__ = ["OpenFiles"]


class OpenFiles:
    def __init__(self, limit: int = 64, recheck: float = 1.0) -> None:
        self.limit = limit
        self.recheck = recheck
        # path -> (file, (st_dev, st_ino) of what it opened, monotonic time of the last look)
        self._open: "OrderedDict[str, Tuple[io.FileIO, Tuple[int, int], float]]" = OrderedDict()
        self._lock = threading.Lock()

    def get(self, path: str) -> io.FileIO:
        """An open file of ``path`` (raises as open() raises when there is none). Callers read
        it by position (pread) and never close it."""
        now = time.monotonic()
        with self._lock:
            got = self._open.get(path)
            if got is not None:
                f, ident, seen = got
                if now - seen < self.recheck:
                    self._open.move_to_end(path)
                    return f
        if got is not None:   # looked at long ago: is the name still that file?
            try:
                st = os.stat(path)
                same = (st.st_dev, st.st_ino) == ident
            except OSError:
                same = False
            if same:
                with self._lock:
                    if self._open.get(path) is got:
                        self._open[path] = (f, ident, now)
                        self._open.move_to_end(path)
                return f
            self._drop(path, got)
        f = io.FileIO(path, "rb")
        try:
            st = os.fstat(f.fileno())
        except BaseException:
            f.close()
            raise
        with self._lock:
            old = self._open.pop(path, None)
            self._open[path] = (f, (st.st_dev, st.st_ino), now)
            extra = [self._open.popitem(last=False)[1][0] for _ in range(len(self._open) - self.limit)]
        # (a file dropped here may still be read by a request under way: its reader took the
        # descriptor; closing it under a pread would fail that read, so dropped files are left
        # to the garbage collector when the last reference goes)
        del old, extra
        return f

    def _drop(self, path: str, got: Tuple[io.FileIO, Tuple[int, int], float]) -> None:
        with self._lock:
            if self._open.get(path) is got:
                del self._open[path]

    def close(self) -> None:
        with self._lock:
            files = [f for f, _, _ in self._open.values()]
            self._open.clear()
        for f in files:
            f.close()
