#!/usr/bin/env bash
# Set up warchive, index the bundled sample collection (samples/) into samples.cdxj,
# put it in a collection (collections/samples: archive/ + an index segment) and look a URL up;
# then crawl the sample's pages, served on 127.0.0.1, into collections/crawl and look the crawl up;
# end by serving the collections (replay) and printing the replay URL of the sample page.
#   DEMO_PORT=0 (any free port; default 8080), DEMO_SETUP=0 (skip the set-up: tests)
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${DEMO_SETUP:-1}" = 0 ] || bash scripts/setup.sh
W=.venv/bin/warchive
$W index samples/ -o samples.cdxj
echo "[demo] samples.cdxj: $(wc -l < samples.cdxj) capture lines from $(find samples -name '*.warc.gz' | wc -l) WARC files; the first three:"
head -n 3 samples.cdxj
rm -rf collections/samples
$W init collections/samples
$W add collections/samples samples/docs-python/*.warc.gz
URL=http://docs.python.org/3.11/index.html
echo "[demo] warchive lookup $URL collections/samples   (a capture and a later revisit of it):"
$W lookup "$URL" collections/samples
echo "[demo] warchive cdx collections/samples --url 'docs.python.org/3.11/*' --output json --limit 3 --fl url,timestamp,status,mime:"
$W cdx collections/samples --url 'docs.python.org/3.11/*' --output json --limit 3 --fl url,timestamp,status,mime
echo "[demo] warchive load $URL 20261129183047 collections/samples   (the revisit, resolved to the original's payload; first lines):"
$W load "$URL" 20261129183047 collections/samples > collections/samples.load.txt
head -n 8 collections/samples.load.txt
echo "[demo] crawl: the sample's pages served on 127.0.0.1 (scripts/demo_site.py), crawled into collections/crawl"
PORTF=$(mktemp -u)
.venv/bin/python scripts/demo_site.py samples/docs-python/docs-python-3.11-part.warc.gz "$PORTF" &
SITE=$!
trap 'kill $SITE 2>/dev/null || true; rm -f "$PORTF"' EXIT
for _ in $(seq 100); do [ -s "$PORTF" ] && break; sleep 0.1; done
SEED="http://127.0.0.1:$(cat "$PORTF")/3.11/index.html"
rm -rf collections/crawl
# --no-politeness and --allow-address 127.0.0.1: our own loopback server only (loopback is refused otherwise)
$W crawl "$SEED" -o collections/crawl --no-politeness --allow-address 127.0.0.1 -q
echo "[demo] warchive lookup $SEED collections/crawl:"
$W lookup "$SEED" collections/crawl
echo "[demo] warchive session stats (the crawl's journal):"
$W session stats collections/crawl/crawls/*/session.journal --top 3
kill $SITE 2>/dev/null || true
echo "[demo] replay: $W serve --root collections"
SERVELOG=$(mktemp)
$W serve --root collections --port "${DEMO_PORT:-8080}" 2> >(tee "$SERVELOG" >&2) &
SERVE=$!
trap 'kill $SITE $SERVE 2>/dev/null || true; rm -f "$PORTF" "$SERVELOG"' EXIT
BASE=""
for _ in $(seq 300); do
  BASE=$(grep -o 'http://[^ ]*/' "$SERVELOG" | head -n 1 || true)
  [ -n "$BASE" ] && break
  kill -0 $SERVE 2>/dev/null || { echo "[demo] the server did not start" >&2; exit 1; }
  sleep 0.1
done
echo "[demo] open ${BASE}samples/20261129183042/$URL   (the sample page as archived, in the banner's frame)"
echo "[demo]      ${BASE}samples/*/$URL   (its captures); ${BASE}samples/cdx?url=$URL   (the CDX API); Ctrl-C stops"
wait $SERVE
