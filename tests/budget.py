"""How many examples a property test draws.

The default run draws a quarter of each test's full count (at least 250), so that the suite stays
well inside CI's time; ``WARCHIVE_EXAMPLES=full`` draws them all (run it beside ``-m slow`` before a
release, or after changing what a test covers). Only the tests with thousands of examples use
this: their quarter still explores far more than their minimal failing cases need."""

from __future__ import annotations

import os

FULL = os.environ.get("WARCHIVE_EXAMPLES") == "full"


def examples(n: int) -> int:
    """``n`` in the full run; a quarter of it (at least 250, at most ``n``) by default."""
    return n if FULL else min(n, max(250, n // 4))
