"""Copy a few HTML pages out of the corpus WARCs into tests/data/html/ (gzip, mtime 0).

    python tests/data/html/make_samples.py CORPUS_DIR      # the corpus of bench/README.md

Each sample is the de-chunked, decoded payload of the first response record whose target URI is
the listed URL; SAMPLES.tsv (name, URL, source WARC, payload SHA-1) records where each came from.
"""

import gzip
import hashlib
import sys
from pathlib import Path

import warchive.warc
from warchive.warc.content import content_stream

PAGES = [
    ("python-about", "docs-python-3.11", "http://docs.python.org/3.11/about.html"),
    ("python-genindex-n", "docs-python-3.11", "http://docs.python.org/3.11/genindex-N.html"),
    ("rust-book-index", "docs-rust-1.63", "http://doc.rust-lang.org/1.63.0/book/index.html"),
    ("scipy-pchip-call", "docs-scipy-pandas-gimp",
     "http://docs.scipy.org/doc/scipy-1.10.1/reference/generated/scipy.interpolate.PchipInterpolator.__call__.html"),
    ("libstdcxx-manual-index", "docs-mixed", "http://gcc.gnu.org/onlinedocs/libstdc++/manual/index.html"),
]


def main(corpus: str) -> None:
    out = Path(__file__).resolve().parent
    rows = []
    for name, warc, url in PAGES:
        with warchive.warc.open(f"{corpus}/{warc}.warc.gz", types={"response"}) as recs:
            for rec in recs:
                if rec.target_uri == url:
                    data = content_stream(rec).read()
                    break
            else:
                raise SystemExit(f"{url} not in {warc}")
        (out / f"{name}.html.gz").write_bytes(gzip.compress(data, mtime=0))
        rows.append(f"{name}\t{url}\t{warc}.warc.gz\t{hashlib.sha1(data).hexdigest()}\n")
    (out / "SAMPLES.tsv").write_text("".join(rows))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tests/data/html/make_samples.py CORPUS_DIR")
    main(sys.argv[1])
