"""Coverage-guided fuzz harnesses (atheris) for warchive's parsers and kernels.

- harnesses.py: one harness per entry point and the property it checks (only
  ArchiveError children escape; no crash, no hang).
- seeds.py: the seed corpus of each harness, cut from tests/data at run time
  (described in tests/data/README.md, "Fuzz seed corpora").
- run.py: one harness for a long run, from the worktree root:
  ``PYTHONPATH=src python -m tests.fuzz.run NAME -runs=1000000 -print_final_stats=1``.
- test_harnesses.py: the seeds in the default run; ``pytest -m fuzz tests/fuzz``
  runs every harness for WARCHIVE_FUZZ_RUNS inputs (default 20000).

Coverage: run.py imports the harnesses under atheris.instrument_imports
(warchive, the `surt` package, harnesses.py; not the default test run, which
would then instrument warchive for every later test); the Cython/C kernels are not instrumented, so
libFuzzer sees their outcome only through the Python around them (the gzip
harness branches on it in ``_outcome``). Instrumenting the kernels too, with
AddressSanitizer, needs (not done yet):

1. clang (the machine has only gcc; ``-fsanitize=fuzzer-no-link`` is clang's).
2. CMakeLists.txt: WARCHIVE_SANITIZE adds ``-fsanitize=address,undefined`` to
   WA_CFLAGS and the link; add ``fuzzer-no-link`` there (or a WARCHIVE_FUZZ
   option appending ``-fsanitize=fuzzer-no-link``), and build with
   ``CC=clang CMAKE_ARGS="-DWARCHIVE_SANITIZE=ON" VENV=.venv-asan BROWSER=0 bash scripts/setup.sh test``.
3. Run under the sanitizer runtime atheris ships against:
   ``LD_PRELOAD=$(python -c "import atheris; print(atheris.path())")/asan_with_fuzzer.so``
   with ``ASAN_OPTIONS=detect_leaks=0`` (CPython's allocations look like leaks)
   and ``UBSAN_OPTIONS=halt_on_error=1``; the kernels then report coverage to
   libFuzzer and every over-read aborts with a report.
"""

import sys
from pathlib import Path

_TESTS = str(Path(__file__).resolve().parents[1])
if _TESTS not in sys.path:   # the harnesses use warcgen, urlgen and surt_oracle, top-level modules of tests/
    sys.path.append(_TESTS)
