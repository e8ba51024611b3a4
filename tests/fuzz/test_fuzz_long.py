"""scripts/fuzz_long.py: how it counts a chunk's inputs from libFuzzer's output and which harness a
``--balance`` lane runs next (the rules of its docstring)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("fuzz_long", ROOT / "scripts" / "fuzz_long.py")
assert _spec is not None and _spec.loader is not None
fuzz_long = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fuzz_long)

GOAL = 1_000_000

# the lines libFuzzer prints: "#N INITED cov: .. ft: .. corp: n/size", "Done N runs in S second(s)",
# and with -print_final_stats=1 "stat::number_of_executed_units: N"
OUTPUT = """INFO: Seed: 42
#2         INITED cov: 10 ft: 12 corp: 1/4b exec/s: 0 rss: 40Mb
#4096      pulse  cov: 50 ft: 70 corp: 9/300b lim: 4 exec/s: 2048 rss: 41Mb
#4212      DONE   cov: 51 ft: 72 corp: 10/310b lim: 4 exec/s: 2106 rss: 41Mb
Done 4212 runs in 2 second(s)
stat::number_of_executed_units: 4212
"""


def test_parse_takes_the_last_cov_line_and_the_runs() -> None:
    st = fuzz_long.parse(OUTPUT)
    assert (st["inited"], st["runs"], st["seconds"]) == (2, 4212, 2)
    assert (st["cov"], st["ft"], st["corpus"], st["corpus_size"]) == (51, 72, 10, "310b")


def _row(name: str, inputs: int, seconds: int, rc: int = 0) -> dict:
    return {"name": name, "inputs": inputs, "seconds": seconds, "rc": rc}


ROWS = [_row("fast", 600_000, 200), _row("slow", 600_000, 6_000), _row("near", 990_000, 100),
        _row("crashed", 5, 1, rc=1), _row("other", 10, 1)]


def test_pick_the_most_time_left_among_those_no_lane_runs() -> None:
    names = ["fast", "slow", "near", "crashed"]
    # slow: 400,000 left at 100/s = 4,000 s; fast: 400,000 at 3,000/s; crashed is stopped
    assert fuzz_long.pick(names, GOAL, ROWS, {}, None) == "slow"
    assert fuzz_long.pick(names, GOAL, ROWS, {"slow": 1}, None) == "fast"
    # a harness with no chunk yet is guessed at 200/s: 1,000,000 left beats slow's 4,000 s
    assert fuzz_long.pick(names + ["new"], GOAL, ROWS, {}, None) == "new"


def test_pick_keeps_its_harness_unless_a_less_run_one_is_free() -> None:
    names = ["fast", "slow", "near"]
    assert fuzz_long.pick(names, GOAL, ROWS, {}, "near") == "near"            # no lane anywhere else
    assert fuzz_long.pick(names, GOAL, ROWS, {"near": 1}, "near") == "slow"   # shared, slow is free
    # the last harness left: every lane runs it
    assert fuzz_long.pick(["near", "crashed"], GOAL, ROWS, {"near": 1}, None) == "near"


def test_pick_none_when_every_harness_is_done_or_stopped() -> None:
    assert fuzz_long.pick(["near", "crashed"], 990_000, ROWS, {}, "near") is None
    rows = ROWS + [_row("near", 10_000, 10)]
    assert fuzz_long.pick(["near", "crashed"], GOAL, rows, {}, None) is None


def test_share_splits_what_is_left_between_the_lanes_on_it() -> None:
    assert fuzz_long.share(100_001, 0) == 110_001
    assert fuzz_long.share(100_001, 1) == 50_001 + 10_000
    assert fuzz_long.share(0, 1) == 10_000
