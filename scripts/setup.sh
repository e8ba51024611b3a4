#!/usr/bin/env bash
# Set up warchive on a fresh Debian/Ubuntu machine:
#   system libraries the kernels link (ISA-L, libdeflate, zlib, zstd headers),
#   a virtual environment in .venv with warchive installed (and EXTRAS, e.g. "test"),
#   wrk for the load tests when EXTRAS has "test",
#   and Debian's chromium when EXTRAS has "test" or "browser" or BROWSER=1 (screenshots;
#   Playwright drives it through executable_path, so `playwright install` is never run).
#
#   bash scripts/setup.sh [EXTRAS]
#   VENV=.venv-zlib CMAKE_DEFINES="WARCHIVE_USE_ISAL=OFF WARCHIVE_USE_LIBDEFLATE=OFF" bash scripts/setup.sh test
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS="libisal-dev libdeflate-dev zlib1g-dev libzstd-dev"
case ",${1:-}," in *,test,*|*,browser,*) BROWSER=${BROWSER:-1} ;; esac
case ",${1:-}," in *,test,*) PKGS="$PKGS wrk" ;; esac   # the load tests (tests/unit/test_load.py)
if [ "${BROWSER:-0}" = 1 ]; then PKGS="$PKGS chromium fonts-liberation"; fi
missing=""
for p in $PKGS; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; else SUDO="none"; fi
  if [ "$SUDO" = none ] || ! command -v apt-get >/dev/null; then
    echo "warchive: please install$missing (the kernels then use ISA-L/libdeflate; zlib alone works but is slower;" \
         "chromium makes screenshots)" >&2
  else
    echo "[setup] apt-get install$missing"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
  fi
fi

PY=${PYTHON:-python3}
VENV=${VENV:-.venv}
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
spec="."
[ -n "${1:-}" ] && spec=".[$1]"
defs=()
for d in ${CMAKE_DEFINES:-}; do defs+=("-Ccmake.define.$d"); done
echo "[setup] pip install $spec into $VENV (builds the kernels) ${CMAKE_DEFINES:-}"
"$VENV/bin/python" -m pip install -q -Cbuild-dir="build/$(basename "$VENV")" "${defs[@]}" "$spec"
case " ${CMAKE_DEFINES:-} " in
  *WARCHIVE_SANITIZE=ON*|*WARCHIVE_FUZZ=ON*)   # the kernels load only under LD_PRELOAD of a sanitizer runtime
    echo "[setup] sanitized kernels: run them as scripts/fuzz.sh --sanitize does" ;;
  *) "$VENV/bin/warchive" --version ;;
esac
