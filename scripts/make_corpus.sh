#!/usr/bin/env bash
# Build the reference corpus of the benchmarks (bench/README.md, "The corpus"):
# five gzipped WARC files that GNU Wget writes while crawling documentation web
# sites which Debian 12 (bookworm) ships as packages, served on 127.0.0.1 only.
#
#   bash scripts/make_corpus.sh [DIR]   # DIR defaults to corpus/ at the repository root
#   SKIP_APT=1 bash scripts/make_corpus.sh      # the doc packages are installed: no apt-get
#   FORCE=1 bash scripts/make_corpus.sh         # delete this script's outputs in DIR and rebuild
#   PYTHON=python3.11 ...                       # interpreter for the web server and the statistics
#                                               # (its version is in every response's Server header)
#   PORT=8123 ...                               # a fixed port for the server instead of a free one
#
# A file that already exists in DIR is not built again, so an interrupted run can
# simply be started again. About 300 MB gzipped (1.3 GB raw), a few minutes.
#
# How the crawl is made
#   The HTML trees of the packages (python3.11-doc, rust-doc, ...) are published by
#   Python's http.server, bound to 127.0.0.1 on a port the kernel picks, and Wget
#   uses that server as its HTTP proxy. A request to a proxy names the absolute URL
#   ("GET http://docs.python.org/3.11/library/os.html HTTP/1.1"), and http.server
#   turns it into a file path like any other request path: "http:/docs.python.org/
#   3.11/library/os.html" under its directory. That directory is a scratch tree of
#   symlinks, one per site URL prefix, pointing at the package's HTML root. So every
#   record carries the site's real host name and path (which SURT keys and CDXJ
#   indexes want), while Wget only ever connects to 127.0.0.1: all its proxy
#   settings name our server, the proxy variables of the environment are dropped,
#   it reads no wgetrc, and --accept-regex keeps the recursion on the site prefixes.
#   Nothing but apt-get (Debian's package archive) goes to the network.
#
#   Wget runs with --warc-file (one gzip member per record, each with Wget's "sl"
#   extra field), --warc-cdx, --recursive --level=inf --no-parent, --delete-after
#   (only the WARC is kept) and robots.txt honoured (each host's robots.txt is a
#   404 capture). Links to files a package does not ship are 404 captures too.
#   The crawl runs in a staging folder under relative names, so no path of this
#   machine ends up in a record (warcinfo's wget-arguments, WARC-Filename, the log
#   resource record); its three files are moved into DIR only when Wget succeeded.
#
# What DIR holds
#   docs-python-3.11.warc.gz          Python 3.11 docs (Sphinx), ~560 captures: the small file for quick runs
#   docs-python-3.11-recrawl.warc.gz  the same site crawled again with --warc-dedup=docs-python-3.11.cdx:
#                                     every unchanged response becomes a revisit record
#   docs-mixed.warc.gz                libstdc++ 12 (Doxygen), PostgreSQL 15 and Qt 5 (qtbase) in one crawl
#   docs-rust-1.63.warc.gz            Rust 1.63 (std, core, alloc, the books), the largest record count
#   docs-scipy-pandas-gimp.warc.gz    SciPy 1.10 and pandas 1.5 (Sphinx, many plot PNGs) and the GIMP 2.10
#                                     help (screenshots): the most image bytes
#   NAME.cdx                          Wget's own CDX of each crawl (the recrawl's lists only what it stored
#                                     as responses)
#   NAME.wget.log                     Wget's log of each crawl (also inside the WARC, as a resource record)
#   corpus_stats.json                 per WARC file: gzip members, records by WARC-Type, gzip / raw / block /
#                                     response payload bytes, distinct captured URLs, HTTP status codes, the
#                                     most common Content-Types; and the totals
#   corpus_stats.txt                  the same as a short table
#   Every WARC file has one warcinfo record, then request/response pairs (revisit in the
#   recrawl), then one metadata record (Wget's manifest) and two resource records (the
#   arguments and the log). Now and then a loopback connection closes before the server
#   reads the request ("No data received." in the log): Wget retries, and the retried URL
#   has two request records. So two builds differ by a few request records; the captured
#   URLs and their payloads do not differ.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$repo/corpus}
mkdir -p "$out"
out=$(cd "$out" && pwd)
PY=${PYTHON:-python3}
say() { echo "[make_corpus] $*"; }
die() { echo "make_corpus: $*" >&2; exit 1; }

CRAWLS="docs-python-3.11 docs-python-3.11-recrawl docs-mixed docs-rust-1.63 docs-scipy-pandas-gimp"

# ------------------------------------------------------------------ sites
# URL prefix (host/path, as the WARCs name it) | Debian package | its HTML root | a file that must be there
SITES=(
  "docs.python.org/3.11|python3.11-doc|/usr/share/doc/python3.11/html|index.html"
  "gcc.gnu.org/onlinedocs/libstdc++|libstdc++-12-doc|/usr/share/doc/gcc-12-base/libstdc++|index.html"
  "www.postgresql.org/docs/15|postgresql-doc-15|/usr/share/doc/postgresql-doc-15/html|index.html"
  "doc.qt.io/qt-5|qtbase5-doc-html|/usr/share/qt5/doc|qtcore/qtcore-index.html"
  "doc.rust-lang.org/1.63.0|rust-doc|/usr/share/doc/rust-doc/html|index.html"
  "docs.scipy.org/doc/scipy-1.10.1|python-scipy-doc|/usr/share/doc/python-scipy-doc/html|index.html"
  "pandas.pydata.org/pandas-docs/version/1.5.3|python-pandas-doc|/usr/share/doc/python-pandas-doc/html|index.html"
  "docs.gimp.org/2.10/en|gimp-help-en|/usr/share/gimp/2.0/help/en|index.html"
)

if [ "${FORCE:-0}" = 1 ]; then
  say "FORCE=1: removing the previous outputs in $out"
  for name in $CRAWLS; do
    rm -f "$out/$name.warc.gz" "$out/$name.cdx" "$out/$name.wget.log"
  done
  rm -f "$out/corpus_stats.json" "$out/corpus_stats.txt"
fi

# ------------------------------------------------------------------ packages
installed() { [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]; }
if [ "${SKIP_APT:-0}" != 1 ]; then
  command -v dpkg-query >/dev/null || die "no dpkg-query: this needs Debian 12 (or SKIP_APT=1 with the doc trees in place)"
  want=()
  for s in "${SITES[@]}"; do
    IFS='|' read -r _ pkg _ _ <<<"$s"
    installed "$pkg" || want+=("$pkg")
  done
  command -v wget >/dev/null || want+=(wget)
  command -v "$PY" >/dev/null || want+=(python3)
  if [ ${#want[@]} -gt 0 ]; then
    sudo=()
    if [ "$(id -u)" != 0 ]; then
      command -v sudo >/dev/null || die "need root to apt-get install ${want[*]}"
      sudo=(sudo)
    fi
    say "apt-get install ${want[*]}"
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
  fi
fi
command -v wget >/dev/null || die "wget is not installed"
command -v "$PY" >/dev/null || die "no Python interpreter '$PY' (set PYTHON)"

# ------------------------------------------------------------------ scratch space and server
# Inside DIR, so that finished files are moved (renamed) into place.
work=$(mktemp -d "$out/.make_corpus.XXXXXX")
server_pid="" wget_pid=""
stop() {
  local pid
  for pid in $wget_pid $server_pid; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

tree="$work/serve"
for s in "${SITES[@]}"; do
  IFS='|' read -r prefix pkg root probe <<<"$s"
  [ -f "$root/$probe" ] || die "$root/$probe is missing: install $pkg (apt-get, or drop SKIP_APT=1);" \
    "if the package is installed, a dpkg path-exclude (/etc/dpkg/dpkg.cfg.d/) may have left out its files"
  link="$tree/http:/$prefix"
  mkdir -p "$(dirname "$link")"
  ln -s "$root" "$link"
done

# Started by the first crawl that has work to do. Port 0 unless PORT is set: the
# kernel picks a free port and the server prints it.
server_log="$work/http-server.log"
proxy=""
start_server() {
  [ -z "$proxy" ] || return 0
  "$PY" -u -m http.server --bind 127.0.0.1 --directory "$tree" "${PORT:-0}" >"$server_log" 2>&1 &
  server_pid=$!
  local port="" _
  for _ in $(seq 1 100); do
    port=$(sed -n 's/^Serving HTTP on 127\.0\.0\.1 port \([0-9][0-9]*\) .*/\1/p' "$server_log")
    [ -n "$port" ] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$port" ] || { cat "$server_log" >&2; die "http.server did not start on 127.0.0.1${PORT:+ port $PORT}"; }
  proxy="http://127.0.0.1:$port"
  say "serving ${#SITES[@]} doc trees on $proxy"
}

# ------------------------------------------------------------------ crawls
# crawl NAME [--dedup CDX] SEED_URL...
# The accept regex is built from the site prefixes of the seeds.
built=0
crawl() {
  local name=$1; shift
  local dedup=""
  if [ "$1" = --dedup ]; then dedup=$2; shift 2; fi
  if [ -s "$out/$name.warc.gz" ]; then say "$name.warc.gz exists, skipped"; return; fi
  start_server

  local prefixes=() url p s
  for url in "$@"; do
    for s in "${SITES[@]}"; do
      p=${s%%|*}
      case "$url" in "http://$p/"*) prefixes+=("$(printf '%s' "$p" | sed 's/[.+]/\\&/g')");; esac
    done
  done
  local accept
  accept="^http://($(IFS='|'; echo "${prefixes[*]}"))/"

  local stage="$work/$name" args=()
  mkdir -p "$stage"
  if [ -n "$dedup" ]; then
    [ -s "$out/$dedup" ] || die "$name needs $dedup from an earlier crawl: run with FORCE=1"
    ln -s "$out/$dedup" "$stage/$dedup"
    args+=("--warc-dedup=$dedup")
  fi
  say "crawling $name from $*"
  local t0=$SECONDS rc=0
  # In the background, so that a signal to this script stops the crawl at once (stop() kills it).
  (cd "$stage" && exec env -u no_proxy -u NO_PROXY -u all_proxy -u ALL_PROXY -u http_proxy -u https_proxy \
      -u HTTP_PROXY -u HTTPS_PROXY -u ftp_proxy -u FTP_PROXY \
    wget --no-config \
      --recursive --level=inf --no-parent --accept-regex "$accept" \
      -e use_proxy=on -e "http_proxy=$proxy" -e "https_proxy=$proxy" -e "ftp_proxy=$proxy" \
      --warc-file="$name" --warc-cdx --warc-tempdir=. "${args[@]}" \
      --delete-after --directory-prefix=download --no-verbose -o "$name.wget.log" \
      "$@") &
  wget_pid=$!
  wait "$wget_pid" || rc=$?
  wget_pid=""
  # 8: some requests had an error answer (robots.txt, links to files a package does not ship): expected
  if [ "$rc" != 0 ] && [ "$rc" != 8 ]; then
    tail -5 "$stage/$name.wget.log" >&2 || true
    die "wget exited with $rc on $name"
  fi
  local fetched
  fetched=$(grep -c ' URL:http://' "$stage/$name.wget.log" || true)
  [ "$fetched" -ge 100 ] || { tail -5 "$server_log" >&2; die "$name fetched only $fetched URLs (see the log above)"; }
  mv "$stage/$name.cdx" "$stage/$name.wget.log" "$out/"
  mv "$stage/$name.warc.gz" "$out/"   # last: its presence means the crawl is complete
  rm -rf "$stage"
  built=1
  say "  $name: $fetched URLs, $(du -h "$out/$name.warc.gz" | cut -f1), $((SECONDS - t0)) s"
}

crawl docs-python-3.11 \
  http://docs.python.org/3.11/index.html
crawl docs-python-3.11-recrawl --dedup docs-python-3.11.cdx \
  http://docs.python.org/3.11/index.html
crawl docs-mixed \
  http://gcc.gnu.org/onlinedocs/libstdc++/index.html \
  http://www.postgresql.org/docs/15/index.html \
  http://doc.qt.io/qt-5/
crawl docs-rust-1.63 \
  http://doc.rust-lang.org/1.63.0/index.html
crawl docs-scipy-pandas-gimp \
  http://docs.scipy.org/doc/scipy-1.10.1/index.html \
  http://pandas.pydata.org/pandas-docs/version/1.5.3/index.html \
  http://docs.gimp.org/2.10/en/index.html

if [ -n "$server_pid" ]; then
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
fi

# ------------------------------------------------------------------ statistics (stdlib only)
if [ "$built" = 0 ] && [ -s "$out/corpus_stats.json" ]; then
  say "corpus_stats.json exists, skipped"
  exit 0
fi
say "writing corpus_stats.json"
"$PY" - "$out" $CRAWLS <<'PYTHON'
import collections, json, os, sys, zlib

folder, names = sys.argv[1], sys.argv[2:]


def gzip_members(path, chunk=1 << 20):
    """Yield the inflated bytes of each gzip member of the file, streaming."""
    with open(path, "rb") as f:
        pending = b""
        while True:
            if not pending:
                pending = f.read(chunk)
                if not pending:
                    return
            z = zlib.decompressobj(zlib.MAX_WBITS | 16)
            parts = []
            while not z.eof:
                if not pending:
                    pending = f.read(chunk)
                    if not pending:
                        raise ValueError(f"{path}: the last gzip member is truncated")
                parts.append(z.decompress(pending))
                pending = b""
            pending = z.unused_data
            yield b"".join(parts)


def add_records(data, s):
    """Count the WARC records of one member; return how many it held."""
    pos, n = 0, 0
    while pos < len(data):
        if data.startswith(b"\r\n", pos):
            pos += 2
            continue
        head_end = data.index(b"\r\n\r\n", pos)
        fields = {}
        for line in data[pos:head_end].split(b"\r\n")[1:]:
            key, _, value = line.partition(b":")
            fields[key.strip().lower()] = value.strip()
        length = int(fields[b"content-length"])
        block = data[head_end + 4:head_end + 4 + length]
        kind = fields.get(b"warc-type", b"?").decode()
        s["types"][kind] += 1
        s["block_bytes"] += length
        if kind in ("response", "revisit", "resource") and b"warc-target-uri" in fields:
            s["uris"].add(fields[b"warc-target-uri"])
        if kind == "response" and block.startswith(b"HTTP/"):
            http_end = block.find(b"\r\n\r\n")
            lines = block[:http_end].split(b"\r\n")
            s["status"][lines[0].split(b" ")[1].decode()] += 1
            ctype = "-"
            for line in lines[1:]:
                key, _, value = line.partition(b":")
                if key.strip().lower() == b"content-type":
                    ctype = value.split(b";")[0].strip().decode().lower()
            s["ctypes"][ctype] += 1
            s["payload_bytes"] += length - (http_end + 4)
        pos = head_end + 4 + length + 4
        n += 1
    return n


def describe(name):
    path = os.path.join(folder, name)
    s = {"types": collections.Counter(), "status": collections.Counter(),
         "ctypes": collections.Counter(), "uris": set(), "block_bytes": 0, "payload_bytes": 0}
    members = raw = odd = 0
    for data in gzip_members(path):
        members += 1
        raw += len(data)
        odd += add_records(data, s) != 1
    return {
        "file": name,
        "gz_bytes": os.path.getsize(path),
        "raw_bytes": raw,
        "gzip_members": members,
        "members_not_one_record": odd,
        "records": sum(s["types"].values()),
        "by_type": dict(sorted(s["types"].items())),
        "block_bytes": s["block_bytes"],
        "response_payload_bytes": s["payload_bytes"],
        "unique_capture_urls": len(s["uris"]),
        "http_status": dict(s["status"].most_common()),
        "top_content_types": dict(s["ctypes"].most_common(12)),
    }


files = [describe(f) for f in sorted(n + ".warc.gz" for n in names)]
types = collections.Counter()
for f in files:
    types.update(f["by_type"])
total = {"file": "TOTAL"}
for key in ("gz_bytes", "raw_bytes", "gzip_members", "records"):
    total[key] = sum(f[key] for f in files)
total["by_type"] = dict(sorted(types.items()))
with open(os.path.join(folder, "corpus_stats.json"), "w") as fh:
    json.dump({"files": files, "total": total}, fh, indent=1)
    fh.write("\n")

kinds = sorted(types)
rows = [f"{'file':34} {'gz MB':>7} {'raw MB':>8} {'records':>8} " + " ".join(f"{k:>9}" for k in kinds)]
for f in files + [total]:
    rows.append(f"{f['file']:34} {f['gz_bytes'] / 1e6:7.1f} {f['raw_bytes'] / 1e6:8.1f} {f['records']:8d} "
                + " ".join(f"{f['by_type'].get(k, 0):9d}" for k in kinds))
rows.append("")
for f in files:
    rows.append(f"{f['file']}: {f['unique_capture_urls']} captured URLs; HTTP status {f['http_status']}; "
                f"Content-Types {f['top_content_types']}; members not holding one record: "
                f"{f['members_not_one_record']}")
text = "\n".join(rows) + "\n"
with open(os.path.join(folder, "corpus_stats.txt"), "w") as fh:
    fh.write(text)
sys.stdout.write(text)
PYTHON
