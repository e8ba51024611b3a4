"""A d-ary min-heap: ``heapq``'s job with ``d`` children per node, as a class.

Shallower than a binary heap, so a push moves fewer items; the frontier keeps
waiting hosts, ready hosts and scheduled revisits in three of them. Generic: it knows
nothing of what it holds, and imports nothing from the package.
"""

from __future__ import annotations

from typing import Generic, Iterable, Iterator, List, TypeVar

__all__ = ["DaryHeap"]

T = TypeVar("T")


class DaryHeap(Generic[T]):
    """A min-heap with ``d`` children per node (shallower than binary: fewer moves per push).

    Items are compared as they are (use tuples with a unique sequence number before any
    item that does not compare).
    """

    __slots__ = ("d", "_a")

    def __init__(self, d: int = 4, items: Iterable[T] = ()) -> None:
        if d < 2:
            raise ValueError("a d-ary heap needs d >= 2")
        self.d = d
        self._a: List[T] = list(items)
        for i in range((len(self._a) - 2) // d, -1, -1):
            self._down(i)

    def __len__(self) -> int:
        return len(self._a)

    def __bool__(self) -> bool:
        return bool(self._a)

    def peek(self) -> T:
        return self._a[0]

    def push(self, item: T) -> None:
        a = self._a
        a.append(item)
        i = len(a) - 1
        d = self.d
        while i:
            p = (i - 1) // d
            if not item < a[p]:  # type: ignore[operator]
                break
            a[i] = a[p]
            i = p
        a[i] = item

    def pop(self) -> T:
        a = self._a
        last = a.pop()
        if not a:
            return last
        top = a[0]
        a[0] = last
        self._down(0)
        return top

    def _down(self, i: int) -> None:
        a = self._a
        n = len(a)
        d = self.d
        item = a[i]
        while True:
            c = d * i + 1
            if c >= n:
                break
            best = c
            end = min(c + d, n)
            for j in range(c + 1, end):
                if a[j] < a[best]:  # type: ignore[operator]
                    best = j
            if not a[best] < item:  # type: ignore[operator]
                break
            a[i] = a[best]
            i = best
        a[i] = item

    def __iter__(self) -> Iterator[T]:
        return iter(self._a)
