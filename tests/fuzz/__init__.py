"""Coverage-guided fuzz harnesses (atheris) for warchive's parsers and kernels.

- harnesses.py: the registry (HARNESSES, and ALLOWED: what may escape each) and the first
  harnesses (gzip, warc, warc_head, http_head, surt, cdxj, archival_url, robots);
  texts.py: chunked, arc, cdx_query, html, css; formats.py: segment, zipnum, journal, wacz,
  manifest; differential.py: diff_reader, diff_whole, diff_warcgen, diff_surt, diff_robots (warchive
  against warcio, cdxj-indexer, its own iterator, surt and RFC 9309, where both accept an input).
- seeds.py: the seed corpus of each harness, cut from the fixtures (tests/data) and written by
  warchive's own writers at run time (described in tests/data/README.md, "Fuzz seed corpora").
- run.py: one harness under atheris: ``python -m tests.fuzz.run NAME -runs=N`` (PYTHONPATH
  with the repo root; warchive from src/ or installed).
- test_harnesses.py: the seeds and tests/fuzz/crashers/ in the default run;
  ``pytest -m fuzz tests/fuzz`` runs every harness for WARCHIVE_FUZZ_RUNS inputs (default
  20000; CI gives 2000).

Long runs: ``bash scripts/fuzz.sh [--sanitize] NAME RUNS [libFuzzer flags]``, one harness at a
time. Plain, only Python is coverage-instrumented (warchive, the `surt` package and these
modules, under atheris.instrument_imports in run.py, not in the default test run, which would
then instrument warchive for every later test), so libFuzzer sees the Cython/C kernels only
through the Python around them (the gzip harness branches on their outcome in ``_outcome``).
``--sanitize`` builds the kernels with clang into .venv-asan with
``-fsanitize=address,undefined,fuzzer-no-link`` (CMake WARCHIVE_SANITIZE=ON WARCHIVE_FUZZ=ON):
libFuzzer then sees the kernels' edges too, and runs Python with LD_PRELOAD of atheris's
``asan_with_fuzzer.so`` (the ASan runtime it links libFuzzer with; it holds UBSan's handlers
too), ASAN_OPTIONS=detect_leaks=0 (CPython's allocations look like leaks) and
UBSAN_OPTIONS=halt_on_error=1, so that every over-read or undefined behaviour aborts with a
report. Found inputs are written to build/fuzz-artifacts/NAME/ (crash-*, timeout-*); replay one
with ``python -m tests.fuzz.run NAME FILE``, minimise with ``-minimize_crash=1 -runs=N FILE``.
The recorded long runs: bench/results/fuzz-*.txt.
"""

import sys
from pathlib import Path

_TESTS = str(Path(__file__).resolve().parents[1])
if _TESTS not in sys.path:   # the harnesses use warcgen, urlgen and surt_oracle, top-level modules of tests/
    sys.path.append(_TESTS)
