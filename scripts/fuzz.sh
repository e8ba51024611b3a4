#!/usr/bin/env bash
# Run one fuzz harness of tests/fuzz for RUNS inputs under atheris (libFuzzer), from the repo root:
#
#   bash scripts/fuzz.sh [--sanitize] NAME RUNS [libFuzzer flags...]
#   bash scripts/fuzz.sh --list
#
# Plain: warchive as installed in .venv (scripts/setup.sh; VENV= another), or src/ when it holds
# built kernels (the development layout); only the Python is coverage-instrumented. --sanitize: the kernels built by clang with AddressSanitizer,
# UBSan and libFuzzer's edge instrumentation (CMake WARCHIVE_SANITIZE=ON WARCHIVE_FUZZ=ON) into
# .venv-asan (made on first use: `CC=clang ... VENV=.venv-asan bash scripts/setup.sh test`;
# clang is apt-installed when missing), refreshed from the worktree on every run; Python loads the
# ASan runtime atheris ships (asan_with_fuzzer.so, which has UBSan's handlers) by LD_PRELOAD, with
# ASAN_OPTIONS=detect_leaks=0 (CPython's allocations look like leaks), and every over-read,
# overflow or undefined behaviour in a kernel aborts with a report (crash-* in build/fuzz-artifacts/).
# libFuzzer prints cov:/ft: as it goes and, with -print_final_stats=1 (always given), the count
# of inputs run and the time at the end. Extra flags go to libFuzzer (e.g. -max_total_time=600).
# REFRESH=0 skips the refresh of .venv-asan (for several runs at once over one build).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

if [ "${1:-}" = --list ]; then
  PYTHONPATH="$ROOT" "${VENV:-.venv}/bin/python" -c \
    "from tests.fuzz.harnesses import HARNESSES; print(' '.join(HARNESSES))"
  exit 0
fi
SANITIZE=0
if [ "${1:-}" = --sanitize ]; then SANITIZE=1; shift; fi
if [ $# -lt 2 ]; then
  echo "usage: bash scripts/fuzz.sh [--sanitize] NAME RUNS [libFuzzer flags]; bash scripts/fuzz.sh --list" >&2
  exit 2
fi
NAME=$1 RUNS=$2
shift 2
ART="$ROOT/build/fuzz-artifacts/$NAME"
mkdir -p "$ART"

if [ "$SANITIZE" = 0 ]; then
  PY="${VENV:-.venv}/bin/python"
  [ -x "$PY" ] || { echo "warchive: no $PY: run scripts/setup.sh test first (or set VENV)" >&2; exit 2; }
  path="$ROOT"
  if compgen -G "src/warchive/_ext/*.so" >/dev/null; then path="$ROOT/src:$ROOT"; fi
  exec env PYTHONPATH="$path" "$PY" -m tests.fuzz.run "$NAME" "-runs=$RUNS" \
    -print_final_stats=1 "-artifact_prefix=$ART/" "$@"
fi

ASAN_VENV=${ASAN_VENV:-.venv-asan}
DEFINES="WARCHIVE_SANITIZE=ON WARCHIVE_FUZZ=ON"
# clang and its sanitizer runtimes (libclang-rt-*-dev: without it -fsanitize=address cannot link,
# and --no-install-recommends leaves it out)
if ! command -v clang >/dev/null || ! compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.asan_static-*.a" >/dev/null; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  echo "[fuzz] apt-get install clang libclang-rt-dev"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends clang >/dev/null
  v=$(clang --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "libclang-rt-$v-dev" >/dev/null
fi
if [ ! -x "$ASAN_VENV/bin/python" ]; then
  CC=clang CXX=clang++ CMAKE_DEFINES="$DEFINES" VENV="$ASAN_VENV" BROWSER=0 bash scripts/setup.sh test
  "$ASAN_VENV/bin/python" -m pip install -q scikit-build-core "cython>=3.0.10" "cython-cmake>=0.2"
elif [ "${REFRESH:-1}" != 0 ]; then   # the worktree's code into the sanitized venv (in its build directory: CMake rebuilds what changed)
  CC=clang CXX=clang++ "$ASAN_VENV/bin/python" -m pip install -q --no-deps --no-build-isolation --force-reinstall \
    -Cbuild-dir="build/$(basename "$ASAN_VENV")" $(for d in $DEFINES; do echo "-Ccmake.define.$d"; done) .
fi
PY="$ASAN_VENV/bin/python"
RUNTIME="$("$PY" -c 'import atheris, os; print(os.path.join(atheris.path(), "asan_with_fuzzer.so"))')"
# not src/ on the path: warchive (with its sanitized kernels) is the one installed in $ASAN_VENV
exec env PYTHONPATH="$ROOT" LD_PRELOAD="$RUNTIME" \
  ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1:${ASAN_OPTIONS:-}" \
  UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}" \
  "$PY" -m tests.fuzz.run "$NAME" "-runs=$RUNS" -print_final_stats=1 "-artifact_prefix=$ART/" "$@"
