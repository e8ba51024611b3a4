#!/usr/bin/env bash
# pywb 2.10.0, the test oracle of the CDX query API, in its own virtual environment (.venv-pywb):
# pywb pins old dependencies (werkzeug, redis, gevent, ...) that must not meet warchive's.
# The tests only ever run it as a subprocess (tests/pywb_oracle.py). Idempotent and quiet:
# a second run that finds pywb 2.10.0 importable does nothing.
#
#   bash scripts/setup_pywb.sh            # PYWB_VENV=DIR to put it elsewhere, PYTHON=python3.X to choose the interpreter
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${PYWB_VENV:-.venv-pywb}
VERSION=2.10.0
# Everything the oracle touches: the FrontEndApp/warcserver CDX path, plain and ZipNum indexes.
CHECK="import pywb.apps.frontendapp, pywb.warcserver.index.zipnum, pywb, gevent, surt, warcio, yaml, requests; assert pywb.__version__ == '$VERSION'"

if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -I -c "$CHECK" >/dev/null 2>&1; then
  exit 0
fi
PY=${PYTHON:-python3}
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV" || { echo "setup_pywb: '$PY -m venv' failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
fi
echo "[setup_pywb] pip install pywb==$VERSION into $VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check "pywb==$VERSION"
"$VENV/bin/python" -I -c "$CHECK" || { echo "setup_pywb: pywb $VERSION does not import in $VENV" >&2; exit 1; }
