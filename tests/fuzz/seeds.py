"""Make the seed corpus of every harness from the fixtures: ``python -m tests.fuzz.seeds [DIR]``.

Nothing here is committed as binary: the seeds are cut at run time from the Wget
fixtures in tests/data/wget (gzip members, their WARC and HTTP heads, their CDX
lines and URLs) and from the small texts in SEED_TEXTS below (robots.txt files,
CDXJ lines, archival URLs with every modifier form). The default directory is
build/fuzz-seeds/NAME/ (gitignored build output). Seeds are capped at
SEED_BYTES so libFuzzer's -max_len stays small and the smoke run quick.
"""

from __future__ import annotations

import sys
import zlib
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parents[2]
WGET = ROOT / "tests" / "data" / "wget"
DEFAULT_DIR = ROOT / "build" / "fuzz-seeds"
SEED_BYTES = 4096
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
    for k in ("gzip", "warc", "warc_head", "http_head"):
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
    return {k: [s[:SEED_BYTES] for s in v if s] for k, v in seeds.items()}


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
