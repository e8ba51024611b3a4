"""datapackage.json and datapackage-digest.json: what a WACZ holds, and the hash that seals the list.

``datapackage.json`` is a Frictionless Data Package (WACZ 1.1.1, section
"datapackage.json")::

    {"profile": "data-package", "wacz_version": "1.1.1",
     "resources": [{"name": "data.warc.gz", "path": "archive/data.warc.gz",
                    "hash": "sha256:<hex>", "bytes": 12345}, ...],
     "created": "2026-12-01T12:00:00Z", "software": "warchive 0.1.0",
     "title": ..., "description": ..., "mainPageURL": ..., "mainPageDate": ...}

and ``datapackage-digest.json`` is ``{"path": "datapackage.json", "hash":
"sha256:<hex of its bytes>"}`` (plus ``signedData`` when a signing server
signed it). ``read_package`` parses both and refuses (``PackageError``) one
whose resources name unsafe paths or whose digest does not match.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from .. import __version__
from ..errors import PackageError
from .zipread import check_name

WACZ_VERSION = "1.1.1"
PACKAGE, DIGEST = "datapackage.json", "datapackage-digest.json"


@dataclass
class Resource:
    path: str
    hash: str          # "sha256:<hex>" (or another hashlib algorithm's name)
    bytes: int

    def json(self) -> Dict[str, Any]:
        return {"name": self.path.rsplit("/", 1)[-1].lower(), "path": self.path, "hash": self.hash,
                "bytes": self.bytes}


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def package_json(resources: List[Resource], *, created: Optional[str] = None, title: Optional[str] = None,
                 description: Optional[str] = None, main_page: Optional[str] = None,
                 main_page_date: Optional[str] = None) -> bytes:
    d: Dict[str, Any] = {"profile": "data-package", "resources": [r.json() for r in resources]}
    if title:
        d["title"] = title
    if description:
        d["description"] = description
    if main_page:
        d["mainPageURL"] = main_page
        if main_page_date:
            d["mainPageDate"] = main_page_date
    d["created"] = created or now_iso()
    d["wacz_version"] = WACZ_VERSION
    d["software"] = f"warchive {__version__}"
    return json.dumps(d, indent=2).encode()


def digest_json(package: bytes, signed: Optional[Dict[str, Any]] = None) -> bytes:
    d: Dict[str, Any] = {"path": PACKAGE, "hash": "sha256:" + hashlib.sha256(package).hexdigest()}
    if signed:
        d["signedData"] = signed
    return json.dumps(d, indent=2).encode()


@dataclass
class Package:
    raw: Dict[str, Any]
    resources: Dict[str, Resource]

    @property
    def version(self) -> Optional[str]:
        v = self.raw.get("wacz_version")
        return v if isinstance(v, str) else None


def read_package(path: str, package: bytes, digest: Optional[bytes]) -> Package:
    """The parsed datapackage.json of the WACZ at ``path``, checked against ``digest``
    (datapackage-digest.json's bytes, when the WACZ has one)."""
    try:
        raw = json.loads(package)
    except ValueError as e:
        raise PackageError(path, None, f"{PACKAGE} is not JSON: {e}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("resources"), list):
        raise PackageError(path, None, f"{PACKAGE} has no list of resources")
    out: Dict[str, Resource] = {}
    for r in raw["resources"]:
        if not isinstance(r, dict) or not isinstance(r.get("path"), str) or not isinstance(r.get("hash"), str):
            raise PackageError(path, None, f"{PACKAGE}: a resource without path and hash: {str(r)[:200]}")
        check_name(path, r["path"])
        size = r.get("bytes")
        out[r["path"]] = Resource(r["path"], r["hash"], size if isinstance(size, int) else -1)
    if digest is not None:
        try:
            d = json.loads(digest)
            want = d["hash"]
        except (ValueError, KeyError, TypeError):
            raise PackageError(path, None, f"{DIGEST} is not a JSON object with a hash") from None
        algo, _, hexd = str(want).partition(":")
        try:
            got = hashlib.new(algo, package).hexdigest()
        except ValueError:
            raise PackageError(path, None, f"{DIGEST}: unknown hash {algo!r}") from None
        if got != hexd:
            raise PackageError(path, None, f"{PACKAGE} does not match the hash in {DIGEST}",
                               "the package list was changed after it was sealed")
    return Package(raw, out)


__all__ = ["DIGEST", "PACKAGE", "Package", "PackageError", "Resource", "WACZ_VERSION", "digest_json",
           "now_iso", "package_json", "read_package"]
