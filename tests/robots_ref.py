"""The strict reference for robots.txt path matching: RFC 9309 section 2.2.3 read literally,
by brute force (every split of the path tried), to check warchive's matcher against
(tests/unit/test_robots.py, the diff_robots fuzz harness in tests/fuzz/differential.py)."""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=4096)
def reference_match(pattern: str, path: str) -> bool:
    """Does ``pattern`` match ``path``: '*' is any run of characters, a final '$' anchors the end."""
    anchored = pattern.endswith("$")
    body = pattern[:-1] if anchored else pattern

    @lru_cache(maxsize=None)
    def rec(i: int, j: int) -> bool:
        if i == len(body):
            return j == len(path) if anchored else True
        if body[i] == "*":
            return any(rec(i + 1, k) for k in range(j, len(path) + 1))
        return j < len(path) and path[j] == body[i] and rec(i + 1, j + 1)

    return rec(0, 0)
