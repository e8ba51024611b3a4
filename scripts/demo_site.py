"""Serve the pages of the bundled sample WARC on 127.0.0.1 (a port picked at run time) for the demo crawl.

    python scripts/demo_site.py SAMPLE.warc.gz PORT_FILE

The 200 responses of SAMPLE are written under a temporary directory by URL
path (payloads as they were archived, Content-Encoding removed) and served by
the standard library's http.server until the process is stopped. The chosen
port is written to PORT_FILE. Loopback only; nothing is fetched from the web.
"""

import functools
import http.server
import os
import sys
import tempfile
import urllib.parse

import warchive.warc


def extract(warc: str, root: str) -> int:
    n = 0
    with warchive.warc.open(warc, types={"response"}) as records:
        for rec in records:
            if rec.http is None or str(rec.http.status) != "200" or not rec.target_uri:
                continue
            path = urllib.parse.urlsplit(rec.target_uri).path or "/"
            if path.endswith("/"):
                path += "index.html"
            dest = os.path.join(root, *[p for p in path.split("/") if p not in ("", ".", "..")])
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "wb") as f:
                f.write(rec.payload.read())
            n += 1
    return n


def main() -> int:
    warc, port_file = sys.argv[1], sys.argv[2]
    root = tempfile.mkdtemp(prefix="warchive-demo-site-")
    n = extract(warc, root)
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    handler = functools.partial(Quiet, directory=root)
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as srv:
        with open(port_file + ".tmp", "w") as f:
            f.write(f"{srv.server_address[1]}\n")
        os.replace(port_file + ".tmp", port_file)
        print(f"[demo-site] {n} pages on http://127.0.0.1:{srv.server_address[1]}/", file=sys.stderr)
        srv.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
