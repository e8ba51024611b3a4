"""Run one harness under atheris: ``python -m tests.fuzz.run NAME [libFuzzer flags...]``.

From the worktree root with PYTHONPATH=src. The seed corpus is written first
(tests/fuzz/seeds.py) and given to libFuzzer as a read-only seed directory
unless a corpus directory is among the flags; new inputs go to
build/fuzz-corpus/NAME/. Example: ``python -m tests.fuzz.run surt -runs=1000000``
(libFuzzer prints ``cov:`` and ``exec/s`` as it goes and ``Done N runs in S
second(s)`` at the end; this script adds a one-line summary of inputs and time
on stderr). A failing input is written by libFuzzer as crash-*/timeout-* in the
current directory; rerun it with ``python -m tests.fuzz.run NAME crash-...``.
"""

from __future__ import annotations

import sys
import warnings

import atheris

with atheris.instrument_imports(include=["warchive", "surt", "tests.fuzz.harnesses", "tests.fuzz.texts",
                                         "tests.fuzz.formats", "tests.fuzz.differential"]):
    from tests.fuzz.harnesses import HARNESSES, checked
    from tests.fuzz import seeds        # after the harnesses: what it imports of warchive is instrumented


def main(argv: list) -> None:
    if len(argv) < 2 or argv[1] not in HARNESSES:
        sys.exit(f"usage: python -m tests.fuzz.run NAME [libFuzzer flags]; NAME one of {', '.join(HARNESSES)}")
    name, flags = argv[1], argv[2:]
    # a defect (DefectWarning, SessionWarning) is a finding only when it escapes as an exception;
    # printed, one per input, they would cost more than the harness (warc: 198 inputs/s)
    warnings.simplefilter("ignore")
    target = checked(name)
    paths = [f for f in flags if not f.startswith("-")]
    if not paths:
        seed_dir = seeds.write()[name]
        corpus = seeds.ROOT / "build" / "fuzz-corpus" / name
        corpus.mkdir(parents=True, exist_ok=True)
        flags = flags + [str(corpus), str(seed_dir)]
    if not any(f.startswith("-max_len=") for f in flags):
        flags.append(f"-max_len={seeds.MAX_LEN.get(name, seeds.SEED_BYTES)}")
    if not any(f.startswith("-timeout=") for f in flags):
        flags.append("-timeout=10")     # a hang: one input over 10 s is reported as timeout-*
    atheris.Setup([argv[0]] + flags, target)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
