"""`warchive wacz create`: a collection packaged as one WACZ 1.1.1 file.

The WACZ holds, in this order, every zip entry stored (never deflated)::

    archive/<file>            each WARC/ARC of COLL/archive/, its bytes as they are
    indexes/index.cdxj        the collection's index lines (all its index files merged), or
    indexes/index.cdx.gz      over COMPRESS_OVER lines, a compressed index
    + indexes/index.idx       (warchive.wacz.indexes)
    pages/pages.jsonl         given (--pages FILE), or the collection's HTML 200 captures
    datapackage.json          path, size and SHA-256 of each entry above
    datapackage-digest.json   SHA-256 of datapackage.json (signed when --signing-url is given)

Index lines name WARCs relative to ``archive/`` as they do in the collection.
The file appears under its name only once complete.
"""

from __future__ import annotations

import json
import os
import urllib.request
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

from ..collection import Collection
from ..errors import ArchiveError
from ..index.sources import open_sources
from .datapackage import DIGEST, PACKAGE, Resource, digest_json, now_iso, package_json
from .indexes import COMPRESS_OVER, LINES_PER_BLOCK, spool_dir, write_compressed
from .pages import check_pages, pages_from_index
from .reader import ARCHIVE, PAGES, WARC_EXTS
from .zipwrite import ZipWriter

SKIP_SUFFIXES = (".open", ".part", ".tmp")


@dataclass
class Created:
    path: str
    warcs: int
    lines: int
    pages: int
    compressed: bool
    bytes: int


def collection_lines(coll: Collection) -> List[bytes]:
    """Every index line of the collection, merged in order, repeated lines once."""
    files = coll.index_files()
    if not files:
        return []
    src = open_sources(files)
    try:
        out: List[bytes] = []
        last = None
        for line in src.range(b"", None):
            if line != last and not line.startswith(b" CDX") and line:
                out.append(line)
                last = line
        return out
    finally:
        src.close()


def warc_files(coll: Collection) -> List[str]:
    """The WARC/ARC files of COLL/archive/ (recursively), relative to it, in name order."""
    out = []
    for d, _, names in os.walk(coll.archive_dir):
        for n in names:
            if n.endswith(WARC_EXTS) and not n.endswith(SKIP_SUFFIXES) and not n.startswith("."):
                out.append(os.path.relpath(os.path.join(d, n), coll.archive_dir).replace(os.sep, "/"))
    return sorted(out)


def create_wacz(coll_path: str, out: str, *, pages: Optional[str] = None, title: Optional[str] = None,
                description: Optional[str] = None, signing_url: Optional[str] = None,
                compress_over: int = COMPRESS_OVER, lines_per_block: int = LINES_PER_BLOCK,
                progress: Optional[Callable[[int], None]] = None, force_zip64: bool = False) -> Created:
    """Package the collection at ``coll_path`` as the WACZ ``out`` (see the module docstring)."""
    coll = Collection(coll_path)
    warcs = warc_files(coll)
    if not warcs:
        raise ArchiveError(f"{coll.archive_dir}: no WARC files to package")
    lines = collection_lines(coll)
    if pages is not None:
        with open(pages, "rb") as f:
            pages_data = f.read()
        n_pages = check_pages(pages, pages_data)
    else:
        pages_data = pages_from_index(lines)
        n_pages = pages_data.count(b"\n") - 1
    compressed = len(lines) > compress_over
    resources: List[Resource] = []
    with spool_dir() as tmp, ZipWriter(out, force_zip64=force_zip64, progress=progress) as z:
        for w in warcs:
            resources.append(_res(z.add_file(ARCHIVE + w, os.path.join(coll.archive_dir, w))))
        if compressed:
            blocks, idx = write_compressed(lines, tmp, "index.cdx.gz", lines_per_block)
            resources.append(_res(z.add_file("indexes/index.cdx.gz", blocks)))
            resources.append(_res(z.add_bytes("indexes/index.idx", idx)))
        else:
            resources.append(_res(z.add_bytes("indexes/index.cdxj", b"".join(ln + b"\n" for ln in lines))))
        resources.append(_res(z.add_bytes(PAGES, pages_data)))
        created = now_iso()
        package = package_json(resources, created=created, title=title, description=description)
        z.add_bytes(PACKAGE, package)
        signed = _sign(signing_url, package, created) if signing_url else None
        z.add_bytes(DIGEST, digest_json(package, signed))
    return Created(out, len(warcs), len(lines), n_pages, compressed, os.path.getsize(out))


def _res(w: Any) -> Resource:
    return Resource(w.name, "sha256:" + w.sha256, w.size)


def _sign(url: str, package: bytes, created: str) -> Dict[str, Any]:
    """Ask a signing server (authsign's API, as py-wacz does) to sign the package's hash."""
    digest = json.loads(digest_json(package))["hash"]
    req = urllib.request.Request(url, data=json.dumps({"hash": digest, "created": created}).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            signed = json.loads(r.read())
    except (OSError, ValueError) as e:
        raise ArchiveError(f"signing server {url}: {e}") from None
    if not isinstance(signed, dict) or signed.get("hash") != digest or signed.get("created") != created:
        raise ArchiveError(f"signing server {url} signed something else than this package's hash and time")
    return signed


__all__ = ["Created", "collection_lines", "create_wacz", "warc_files"]
