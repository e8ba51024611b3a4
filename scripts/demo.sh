#!/usr/bin/env bash
# Set up warchive and index the bundled sample collection (samples/) into samples.cdxj.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/warchive index samples/ -o samples.cdxj
echo "[demo] samples.cdxj: $(wc -l < samples.cdxj) capture lines from $(find samples -name '*.warc.gz' | wc -l) WARC files; the first three:"
head -n 3 samples.cdxj
