"""Make the seed corpus of every harness from the fixtures: ``python -m tests.fuzz.seeds [DIR]``.

Nothing here is committed as binary: the seeds are cut at run time from the Wget
fixtures in tests/data/wget (gzip members, their WARC and HTTP heads, their CDX
lines and URLs) and from the small texts in SEED_TEXTS below (robots.txt files,
CDXJ lines, archival URLs with every modifier form). The default directory is
build/fuzz-seeds/NAME/ (gitignored build output). Seeds are capped at
SEED_BYTES so libFuzzer's -max_len stays small and the smoke run quick.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import sys
import tempfile
import zlib
from pathlib import Path
from typing import Dict, List

import warcgen   # tests/ is on sys.path (tests/fuzz/__init__.py)

from tests.fuzz.formats import SEP
from warchive.capture.session.journal import SessionDB
from warchive.collection import Collection
from warchive.index.segment import write_segment
from warchive.index.zipnum import write_zipnum
from warchive.store.manifest import ChunkInfo, Manifest, chunk_size, stripe_count
from warchive.store.records import RecordSpan
from warchive.wacz import create_wacz
from warchive.warc import reader

ROOT = Path(__file__).resolve().parents[2]
WGET = ROOT / "tests" / "data" / "wget"
DEFAULT_DIR = ROOT / "build" / "fuzz-seeds"
SEED_BYTES = 4096
FILE_BYTES = 1 << 16  # the harnesses of whole files (WACZ, ZipNum, segments) get longer seeds and inputs
MAX_LEN = {"wacz": FILE_BYTES, "zipnum": FILE_BYTES, "segment": FILE_BYTES, "manifest": 16384}
MEMBERS = 6           # gzip members cut from the start of each Wget file

SEED_TEXTS: Dict[str, List[bytes]] = {
    "robots": [
        b"User-agent: *\nDisallow: /private/\nAllow: /private/ok$\nCrawl-delay: 2\nSitemap: http://e.com/s.xml\n",
        b"User-agent: warchive\nUser-agent: Googlebot\nDisallow: /*.php$\n\nUser-agent: *\nDisallow:\n",
        b"\xef\xbb\xbfuser-agent:*\r\ndisallow:/a%2Fb\r\nallow:/a/*?q=\r\n\n\n/a%2Fb/c?q=1",
        b"# comment only\nUser-agent: * # trailing\nDisallow: / # all\n",
    ],
    "cdxj": [
        b'com,example)/ 20200101000000 {"url": "http://example.com/", "mime": "text/html", "status": "200", '
        b'"digest": "sha1:AAAA", "length": "100", "offset": "0", "filename": "a.warc.gz"}',
        b'com,example)/a?b=1 20200102030405 {"url": "http://example.com/a?b=1", "mime": "warc/revisit", '
        b'"status": "-", "length": "5", "offset": "9", "filename": "b.warc"}',
        b"com,example)/ 20200101000000 http://example.com/ text/html 200 AAAA - - 100 0 a.warc.gz",
    ],
    "archival_url": [
        b"20200101000000/http://example.com/", b"20200101000000id_/http://example.com/a?b=c#d",
        b"*/http://example.com/*", b"2020-2021*/example.com/", b"20200101mp_/https://[::1]:8080/x",
        b"/example.com/", b"timemap/link/http://example.com/", b"2020js_/http://xn--bcher-kva.example/%41",
    ],
    "chunked": [
        b"\x00" + b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n",
        b"\x01" + b"a\r\n" + gzip.compress(b"hello", mtime=0)[:10] + b"\r\n"
        + hex(len(gzip.compress(b"hello", mtime=0)) - 10)[2:].encode() + b"\r\n"
        + gzip.compress(b"hello", mtime=0)[10:] + b"\r\n0\r\n\r\n",
        b"\x02" + b"7\r\n" + zlib.compress(b"abc") + b"\r\n0\r\n\r\n",
        b"\x00" + b"5\r\nhel", b"\x00" + b"zz\r\nnot chunked", b"\x00" + b"3\r\nabcXY0\r\n\r\n",
    ],
    "cdx_query": [
        b"url=example.com/", b"url=example.com/*&output=json&fl=urlkey,timestamp,status",
        b"url=example.com&matchType=domain&filter=!mime:warc/revisit&collapse=urlkey&limit=2",
        b"url=http://example.com/a?b=1&closest=20200101&sort=closest&limit=1",
        b"url=example.com/&from=2020&to=2021&sort=reverse&output=link",
        b"url=*.example.org&showNumPages=true", b"url=example.com/&page=0&pageSize=1&showPagedIndex=true",
        b"url=example.com/&filter=~status:2..&filter=url:.*a.*&collapse=timestamp:4&fl=url",
        b"url=example.com/&resumeKey=com%2Cexample%29%2F+20200101000000&showResumeKey=true&limit=1",
        b"url=example.com/&allowFuzzy=true&matchType=prefix&output=text&memento_format=id_",
        b"url=", b"output=json", b"url=example.com/&limit=-1&sort=bogus&matchType=x",
    ],
    "css": [
        b"body{background:url(/a.png)} @import 'x.css'; .b{src:url(\"../c.woff\") format('woff')}",
        b"@charset \"utf-8\";\n@import url(http://h.test/x.css) screen;\n"
        b"a{background-image:image-set(\"a.png\" 1x, 'b.png' 2x)} /* url(no) */ \\75rl(esc)",
        b"\xef\xbb\xbf@namespace url(http://www.w3.org/1999/xhtml); p{x:url( 'sp ace' )}",
    ],
    "html": [
        b"\x00\x00\x00" + warcgen.HTML,
        b"\x01\x00\x10<base href=/b/><a href=x>x</a><img srcset='a.png 1x, b.png 2x'>"
        b"<script>location.href='/y'; top.location = \"z\"</script><style>p{background:url(/p.png)}</style>"
        b"<meta http-equiv=refresh content='0;url=/r'><div style=\"background:url(q.png)\" onclick=\"f('/o')\">",
        b"\x00\x02\x05<!doctype html><meta charset=windows-1252><a href=\"/caf\xe9\">caf\xe9</a>"
        b"<!-- <a href=/no> --><textarea><a href=/no></textarea><iframe src=//h.test/f></iframe>",
    ],
    "surt": [
        b"http://www.Example.com:80/a/../b?z=1&a=2#frag", b"https://user:pw@[2001:db8::1]:443/",
        b"dns:example.com", b"http://b\xc3\xbccher.example/\xe2\x82\xac", b"filedesc:x.arc",
    ],
}


def _members(path: Path) -> List[bytes]:
    data = path.read_bytes()
    out, off = [], 0
    for _ in range(MEMBERS):
        d = zlib.decompressobj(31)
        d.decompress(data[off:])
        end = len(data) - len(d.unused_data)
        out.append(data[off:end])
        off = end
    return out


def build() -> Dict[str, List[bytes]]:
    """The seeds of every harness, by harness name."""
    seeds: Dict[str, List[bytes]] = {k: list(v) for k, v in SEED_TEXTS.items()}
    for k in ("gzip", "warc", "warc_head", "http_head", "arc", "segment", "zipnum", "journal", "wacz",
              "manifest"):
        seeds.setdefault(k, [])
    for warc in sorted(WGET.glob("*.warc.gz")):
        members = _members(warc)
        seeds["gzip"].append(b"".join(members[:3]))
        for m in members:
            plain = zlib.decompress(m, 31)
            seeds["gzip"].append(m)
            seeds["warc"].append(m)
            seeds["warc"].append(plain)
            warc_end = plain.find(b"\r\n\r\n") + 4
            seeds["warc_head"].append(plain[:warc_end])
            if plain[warc_end:warc_end + 5] in (b"HTTP/", b"GET /"):
                http_end = plain.find(b"\r\n\r\n", warc_end) + 4
                seeds["http_head"].append(plain[warc_end:http_end])
    for cdx in sorted(WGET.glob("*.cdx")):
        lines = cdx.read_bytes().splitlines()[:12]
        seeds["cdxj"].extend(lines[1:])
        for line in lines[1:]:
            url = line.split(b" ")[2]
            seeds["surt"].append(b"\x00" + url)
            seeds["archival_url"].append(line.split(b" ")[1] + b"/" + url)
    _arc_seeds(seeds)
    seeds["diff_reader"] = list(seeds["warc"])
    seeds["diff_whole"] = _whole_seeds()
    seeds["diff_surt"] = list(seeds["surt"])
    seeds["diff_warcgen"] = [bytes(range(i, i + 200)) for i in (0, 7, 50)] + [b"\x01" * 64, b"\xff" * 300]
    seeds["diff_robots"] = [b"\x03\x01\x00\x05abcd*\x01\x01\x03/b$" + b"abab/ab", bytes(range(64)), b"\x00" * 40]
    _html_seeds(seeds)
    with tempfile.TemporaryDirectory(prefix="warchive-seeds-") as tmp:
        _file_seeds(seeds, Path(tmp))
    return {k: [s[:MAX_LEN.get(k, SEED_BYTES)] for s in v if s] for k, v in seeds.items()}


def _whole_seeds() -> List[bytes]:
    """Whole records (one member's data) that parse_whole takes, short enough for SEED_BYTES:
    warcgen's sets (every record type, GET pairs, revisits, resources, odd statuses) written
    uncompressed, record by record."""
    out: List[bytes] = []
    for recs in (warcgen.recs_get_pairs(), warcgen.recs_revisits(), warcgen.recs_resource_metadata(),
                 warcgen.recs_odd_status(), warcgen.recs_versions()):
        for r in recs:
            data = r.plain()
            if len(data) <= SEED_BYTES:
                out.append(data)
    return out


def _arc_seeds(seeds: Dict[str, List[bytes]]) -> None:
    """ARC records (warcgen's, the filedesc record too) alone and together, plain and gzip."""
    recs = [b for b, _, _ in warcgen.arc_records("fuzz.arc")]
    seeds["arc"].extend(recs)
    seeds["arc"].append(b"".join(recs[1:]))
    seeds["arc"].append(b"http://a.example/ 192.0.2.1 2024 text/plain 12345678901234567890123\nx\n")
    seeds["warc"].append(b"".join(recs))
    seeds["warc"].append(b"".join(warcgen.gzip_member(r) for r in recs))


def _html_seeds(seeds: Dict[str, List[bytes]]) -> None:
    """The starts of the HTML samples (tests/data/html) and the style sheets of the Wget file."""
    for sample in sorted((ROOT / "tests" / "data" / "html").glob("*.html.gz")):
        seeds["html"].append(b"\x00\x00\x00" + gzip.decompress(sample.read_bytes())[:SEED_BYTES])
    for rec in reader.open(str(WGET / "docs-python-3.11.warc.gz")):
        if rec.type == "response" and rec.http is not None and "css" in (rec.http.get("Content-Type") or ""):
            seeds["css"].append(rec.payload.read(SEED_BYTES))
            if len(seeds["css"]) > 8:
                break


def _cdx_lines() -> List[bytes]:
    lines = (WGET / "docs-python-3.11.cdx").read_bytes().splitlines()[1:]
    return sorted(set(lines))


def _file_seeds(seeds: Dict[str, List[bytes]], tmp: Path) -> None:
    """Index segments, ZipNum clusters, a journal, a WACZ and a store manifest written by
    warchive's own writers from the fixtures (so the fuzzer starts from valid files). The
    manifest is made by Manifest.to_json, not by a store: the erasure codec cannot load
    under AddressSanitizer (scripts/fuzz.sh --sanitize)."""
    lines = _cdx_lines()[:40]
    for comp, block_lines in (("none", 8), ("deflate", 16), ("zstd", 0)):
        seg = tmp / f"{comp}.seg"
        write_segment(lines, seg, block_lines=block_lines, compression=comp)
        data = seg.read_bytes()
        seeds["segment"] += [b"\x01" + data, b"\x00" + data]
    for n in (4, 40):
        out = tmp / f"z{n}"
        out.mkdir()
        write_zipnum(lines, out, lines_per_block=n)
        part = next(p for p in sorted(os.listdir(out)) if p.endswith(".gz"))
        idx = (out / "cluster.idx").read_bytes().replace(part.encode(), b"cluster-00000.gz")
        seeds["zipnum"].append(idx + SEP + (out / part).read_bytes())
    journal = tmp / "journal"
    with SessionDB(journal, fsync="none") as db:
        db.start(config={"depth": 1}, seeds=["http://example.com/"])
        db.fetching("http://example.com/")
        db.fetched("http://example.com/", 301, location="http://example.com/a")
        db.fetched("http://example.com/a", 200, hop="R")
        db.record("http://example.com/a", "a.warc.gz", 0, 100)
        db.outlinks("http://example.com/a", ["http://example.com/b", "http://example.com/c"])
        db.failed("http://example.com/b", "dns", attempt=2)
        db.skipped("http://example.com/c", "robots")
    data = journal.read_bytes()
    seeds["journal"] += [data, data + b'{"torn": ', data.replace(b"\n", b"\n\n", 3)]
    warcs = tmp / "w"
    warcs.mkdir()
    small = warcgen.write_warc(warcs, "small", warcgen.recs_get_pairs()[:4]).path
    coll = Collection.init(str(tmp / "coll"))
    coll.add([str(small)])
    create_wacz(coll.path, str(tmp / "a.wacz"))
    create_wacz(coll.path, str(tmp / "b.wacz"), compress_over=0, lines_per_block=2)
    seeds["wacz"] += [(tmp / "a.wacz").read_bytes(), (tmp / "b.wacz").read_bytes()]
    data = small.read_bytes()
    spans = tuple(RecordSpan(r.offset, r.length) for r in reader.open(str(small)))
    k, m, fs, hs = 2, 1, 1024, 32

    def h(x: str) -> str:
        return hashlib.sha256(x.encode()).hexdigest()
    chunks = tuple(ChunkInfo(i, i, chunk_size(len(data), k, fs, hs), h(f"chunk {i}")) for i in range(k + m))
    stripes = tuple(tuple(h(f"{s}/{i}") for i in range(k + m)) for s in range(stripe_count(len(data), k, fs)))
    man = Manifest(small.name, "isa_l_rs_cauchy", k, m, fs, hs, len(data), hashlib.sha256(data).hexdigest(),
                   chunks, stripes, spans, h("listing")).to_json()
    seeds["manifest"] += [b"\x01" + man, b"\x00" + man]


def write(out: Path = DEFAULT_DIR) -> Dict[str, Path]:
    """Write the seeds as out/NAME/seed-NNN and return the directory of each harness."""
    dirs = {}
    for name, items in build().items():
        d = out / name
        d.mkdir(parents=True, exist_ok=True)
        for i, s in enumerate(items):
            (d / f"seed-{i:03d}").write_bytes(s)
        dirs[name] = d
    return dirs


if __name__ == "__main__":
    for name, d in write(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DIR).items():
        print(f"{name}: {len(list(d.iterdir()))} seeds in {d}")
