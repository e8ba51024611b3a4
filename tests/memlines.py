"""A query source over sorted lines in memory, for tests of the query engine (sources answer
``range(start, stop)``: warchive.index.sources)."""

import bisect


class Lines:
    """A source over sorted lines in memory."""

    def __init__(self, lines):
        self.lines = sorted(lines)

    def range(self, start, stop):
        lo = bisect.bisect_left(self.lines, start)
        hi = len(self.lines) if stop is None else bisect.bisect_left(self.lines, stop)
        return iter(self.lines[lo:hi])

    def close(self):
        pass
