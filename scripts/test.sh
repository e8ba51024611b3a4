#!/usr/bin/env bash
# Set up warchive with its test extras (the peers warcio, cdxj-indexer, surt, fastwarc) and run the tests.
# Extra arguments go to pytest (e.g. -m slow for the long fuzz runs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test  # "test" also apt-installs chromium and pip-installs playwright (tests/e2e)
export WARCHIVE_REQUIRE_BROWSER=1   # so the browser tests fail here instead of skipping
bash scripts/setup_pywb.sh   # pywb 2.10 in .venv-pywb: the CDX API oracle (tests/pywb_oracle.py)
.venv/bin/python -m mypy
if [ $# -eq 0 ]; then
  # Two workers (CI's machines have two cores, and most tests wait on subprocesses, servers or
  # kernels), each file's tests on one worker so its module fixtures are built once; then the
  # browser tests alone, since chromium wants both cores.
  .venv/bin/python -m pytest -q -n 2 --dist loadfile --ignore=tests/e2e
  .venv/bin/python -m pytest -q tests/e2e
  # Every fuzz harness under atheris, briefly (2,000 inputs each, plain kernels: building the
  # sanitized ones costs more than CI's budget; the long sanitized runs are
  # `bash scripts/fuzz.sh --sanitize NAME RUNS`, recorded in bench/results/fuzz-*.txt).
  WARCHIVE_FUZZ_RUNS=2000 .venv/bin/python -m pytest -q -m fuzz tests/fuzz
else
  .venv/bin/python -m pytest -q "$@"
fi

# The kernels must also work where neither ISA-L nor libdeflate exists (zlib alone):
# build that variant and run the reader and indexer tests against it.
BROWSER=0 VENV=.venv-zlib CMAKE_DEFINES="WARCHIVE_USE_ISAL=OFF WARCHIVE_USE_LIBDEFLATE=OFF" bash scripts/setup.sh test
.venv-zlib/bin/python -m pytest -q -x tests/differential/test_offsets_vs_warcio.py tests/unit/test_bad_input.py \
    tests/unit/test_zst.py tests/differential/test_cdxj_vs_cdxj_indexer.py
