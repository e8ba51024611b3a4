#!/usr/bin/env bash
# Set up warchive with its test extras (the peers warcio, cdxj-indexer, surt, fastwarc) and run the tests.
# Extra arguments go to pytest (e.g. -m slow for the long fuzz runs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
.venv/bin/python -m mypy
.venv/bin/python -m pytest -q "$@"
