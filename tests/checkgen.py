"""Hand-built WARC files for ``warchive check``: one digest case per file, with what warcio 1.8.1's
``warcio check`` and warchive's check say about it.

Every file is assembled byte by byte (as warcgen.py's raw records are): the
digests are computed here, in the algorithm and spelling each case needs,
and then left right or made wrong on purpose. Record ids and dates are
fixed, so the same call always writes the same bytes; provenance and the
list of cases are in tests/data/README.md, "Check cases".

Like warcgen.py this is test data: it must not import warchive, and the
verdicts it records come from how the bytes were built and from warcio's
source, never from running either checker.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List, Optional, Union

import blake3

from warcgen import DATE, HTML, gzip_member, http_bytes, rid

Spelling = Callable[[bytes], str]


def b32(raw: bytes) -> str:
    return base64.b32encode(raw).decode("ascii")


SPELLINGS = {
    "base32": b32,
    "base32-lower": lambda raw: b32(raw).lower(),
    "hex": lambda raw: raw.hex(),
    "base64": lambda raw: base64.b64encode(raw).decode("ascii"),
}


def digest(alg: str, data: bytes, spelling: str = "base32") -> str:
    """``alg:value`` of ``data`` (blake3 from the blake3 package, the others from hashlib)."""
    raw = blake3.blake3(data).digest() if alg == "blake3" else hashlib.new(alg, data).digest()
    return f"{alg}:{SPELLINGS[spelling](raw)}"


def dechunk(body: bytes) -> bytes:
    """The entity body of a well-chunked body (no extensions, no trailers: the cases' own)."""
    out, pos = b"", 0
    while True:
        eol = body.index(b"\r\n", pos)
        size = int(body[pos:eol], 16)
        if size == 0:
            return out
        out += body[eol + 2 : eol + 2 + size]
        pos = eol + 2 + size + 2


Digested = Union[str, None]


def record(rtype: str, name: str, uri: Optional[str], content_type: str, block: bytes, *,
           block_digest: Digested = "", payload_digest: Digested = "", extra: tuple = ()) -> bytes:
    """A WARC/1.0 record. A digest given as "" is the right sha1 (base32) — for the payload:
    the block after its HTTP head, de-chunked when it says so —, None leaves it out, any
    other text is written as it is."""
    payload = block
    if rtype in ("request", "response", "revisit") and uri and uri.startswith("http"):
        head, _, payload = block.partition(b"\r\n\r\n")
        if b"transfer-encoding: chunked" in head.lower():
            payload = dechunk(payload)
    hs = [("WARC-Type", rtype), ("WARC-Record-ID", rid("check/" + name)), ("WARC-Date", DATE)]
    if uri is not None:
        hs.append(("WARC-Target-URI", uri))
    hs += list(extra)
    hs.append(("Content-Type", content_type))
    if block_digest is not None:
        hs.append(("WARC-Block-Digest", block_digest or digest("sha1", block)))
    if payload_digest is not None:
        hs.append(("WARC-Payload-Digest", payload_digest or digest("sha1", payload)))
    hs.append(("Content-Length", str(len(block))))
    head = "WARC/1.0\r\n" + "".join(f"{k}: {v}\r\n" for k, v in hs) + "\r\n"
    return head.encode("utf-8") + block + b"\r\n\r\n"


URI = "http://check.example.com/"
RESP_CT = "application/http; msgtype=response"
REQ_CT = "application/http; msgtype=request"
RESPONSE = http_bytes(b"HTTP/1.1 200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(HTML)))], HTML)
GET = http_bytes(b"GET / HTTP/1.1", [("Host", "check.example.com")])
POST_BODY = b"q=archive&lang=en"
POST = http_bytes(b"POST /search HTTP/1.1", [("Host", "check.example.com"), ("Content-Length", str(len(POST_BODY))),
                                              ("Content-Type", "application/x-www-form-urlencoded")], POST_BODY)
CHUNKED_BODY = b"7\r\nchunks \r\n9\r\nof a body\r\n0\r\n\r\n"
CHUNKED = http_bytes(b"HTTP/1.1 200 OK", [("Content-Type", "text/plain"), ("Transfer-Encoding", "chunked")],
                     CHUNKED_BODY)
REVISIT_HEAD = http_bytes(b"HTTP/1.1 200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(HTML)))])
PROFILE = "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest"


def revisit(name: str, block_digest: Digested = "", payload_digest: Digested = None) -> bytes:
    return record("revisit", name, URI, RESP_CT, REVISIT_HEAD, block_digest=block_digest,
                  payload_digest=payload_digest or digest("sha1", HTML),
                  extra=(("WARC-Profile", PROFILE), ("WARC-Refers-To", rid("check/original"))))


def emptied(rec: bytes, name: str) -> bytes:
    """rec with the value of its field ``name`` taken out (the name and colon left)."""
    head, sep, rest = rec.partition(b"\r\n\r\n")
    lines = [line.split(b":", 1)[0] + b":" if line.split(b":", 1)[0] == name.encode() else line
             for line in head.split(b"\r\n")]
    assert lines != head.split(b"\r\n"), name
    return b"\r\n".join(lines) + sep + rest


def warcinfo(name: str) -> bytes:
    return record("warcinfo", name, None, "application/warc-fields",
                  b"software: warchive-tests checkgen\r\nformat: WARC File Format 1.0\r\n")


@dataclass
class CheckCase:
    """A file and the verdicts on it: ``warcio`` is "pass" or "fail" (exit status of
    ``warcio check``); ``ours`` is "pass", "fail", or "defect" (passes naming a producer
    defect, fails with --strict). ``record`` is the record index (0-based) the verdict is
    about; ``why`` explains where the two differ."""

    name: str
    what: str
    records: List[bytes]
    warcio: str
    ours: str
    record: int = 1
    why: str = ""
    gz: bool = False
    path: Path = Path()

    @property
    def file_name(self) -> str:
        return self.name + (".warc.gz" if self.gz else ".warc")


def cases() -> List[CheckCase]:
    wrong = digest("sha1", b"other bytes")
    return [
        CheckCase("check_correct", "every record type with right digests in every spelling: sha1 base32, "
                  "hex and base64, sha256; a GET and a POST request, a revisit, a dns: response",
                  [warcinfo("ok/info"),
                   record("request", "ok/get", URI, REQ_CT, GET),
                   record("response", "ok/resp", URI, RESP_CT, RESPONSE),
                   record("request", "ok/post", URI + "search", REQ_CT, POST,
                          block_digest=digest("sha1", POST, "hex"),
                          payload_digest=digest("sha1", POST_BODY, "base64")),
                   record("response", "ok/sha256", URI + "search", RESP_CT, RESPONSE,
                          block_digest=digest("sha256", RESPONSE), payload_digest=digest("sha256", HTML)),
                   revisit("ok/revisit"),
                   record("response", "ok/dns", "dns:check.example.com", "text/dns",
                          b"20240102030405\ncheck.example.com.\t60\tIN\tA\t192.0.2.9\n"),
                   record("resource", "ok/res", URI + "notes.txt", "text/plain", b"notes\n"),
                   record("metadata", "ok/meta", URI, "application/warc-fields", b"via: " + URI.encode() + b"\r\n")],
                  "pass", "pass", gz=True),
        CheckCase("check_request_payload", "a POST request whose WARC-Payload-Digest is of other bytes",
                  [warcinfo("rq/info"), record("request", "rq/post", URI + "search", REQ_CT, POST, payload_digest=wrong),
                   record("response", "rq/resp", URI + "search", RESP_CT, RESPONSE)], "fail", "fail"),
        CheckCase("check_get_payload", "a GET request (empty payload) whose WARC-Payload-Digest is of other bytes",
                  [record("request", "rg/get", URI, REQ_CT, GET, payload_digest=wrong)], "fail", "fail", record=0),
        CheckCase("check_response_damaged", "a response whose body has one byte changed after digesting",
                  [warcinfo("rd/info"),
                   record("response", "rd/resp", URI, RESP_CT, RESPONSE).replace(b"Hello, archive", b"Hellp, archive")],
                  "fail", "fail"),
        CheckCase("check_bad_base32", "WARC-Payload-Digest of 32 characters that are not base32 (0, 1, 8, 9)",
                  [warcinfo("bb/info"),
                   record("response", "bb/resp", URI, RESP_CT, RESPONSE, payload_digest="sha1:" + "01890189" * 4)],
                  "fail", "fail"),
        CheckCase("check_wrong_size", "WARC-Block-Digest labelled sha1 whose base32 value is 25 bytes long "
                  "(warcio's checker dies on it with a traceback)",
                  [warcinfo("ws/info"),
                   record("response", "ws/resp", URI, RESP_CT, RESPONSE, block_digest="sha1:" + b32(b"x" * 25))],
                  "fail", "fail"),
        CheckCase("check_unknown_algorithm", "WARC-Block-Digest labelled crc32, an algorithm nobody knows by that name",
                  [warcinfo("ua/info"),
                   record("response", "ua/resp", URI, RESP_CT, RESPONSE, block_digest="crc32:0badc0de")],
                  "fail", "fail"),
        CheckCase("check_no_label", "WARC-Block-Digest without an algorithm label (a bare base32 SHA-1, right)",
                  [warcinfo("nl/info"),
                   record("response", "nl/resp", URI, RESP_CT, RESPONSE, block_digest=b32(hashlib.sha1(RESPONSE).digest()))],
                  "fail", "fail"),
        CheckCase("check_chunked_raw", "a chunked response whose WARC-Payload-Digest is over the chunked body "
                  "(as warcio's own writer computes it)",
                  [warcinfo("cr/info"),
                   record("response", "cr/resp", URI, RESP_CT, CHUNKED, payload_digest=digest("sha1", CHUNKED_BODY))],
                  "pass", "defect", why="chunked-payload-digest: the digest of the still-chunked body, a producer "
                  "defect (WARC 1.1 6.3.2; webrecorder/warcio#74) that warcio's checker computes the same way"),
        CheckCase("check_chunked_dechunked", "a chunked response whose WARC-Payload-Digest is over the "
                  "de-chunked entity body, as WARC 1.1 6.3.2 defines the payload",
                  [warcinfo("cd/info"), record("response", "cd/resp", URI, RESP_CT, CHUNKED)], "fail", "pass",
                  why="warcio 1.8.1 digests the still-chunked body (webrecorder/warcio#74, #75): it fails a right digest"),
        CheckCase("check_wget_revisit", "a revisit whose WARC-Block-Digest is the digest of the empty string "
                  "though its block holds the HTTP head, as GNU Wget writes them",
                  [warcinfo("wr/info"), revisit("wr/revisit", block_digest=digest("sha1", b""))], "pass", "defect",
                  gz=True, why="warcio checks no digest of a revisit; revisit-block-digest is a producer defect"),
        CheckCase("check_revisit_damaged", "a revisit whose WARC-Block-Digest is of other bytes (not the empty string)",
                  [warcinfo("rv/info"), revisit("rv/revisit", block_digest=wrong)], "pass", "fail",
                  why="warcio checks no digest of a revisit; a block digest that matches neither the block nor "
                  "Wget's empty block is damage"),
        CheckCase("check_revisit_malformed", "a revisit whose WARC-Payload-Digest (the original's) is not base32",
                  [warcinfo("rm/info"), revisit("rm/revisit", payload_digest="sha1:not-a-digest")], "pass", "fail",
                  why="warcio reads no digest of a revisit; a malformed digest is a problem on any record"),
        CheckCase("check_md5_sha512", "right md5 and sha512 digests (base32)",
                  [warcinfo("md/info"),
                   record("response", "md/resp", URI, RESP_CT, RESPONSE, block_digest=digest("md5", RESPONSE),
                          payload_digest=digest("sha512", HTML))], "pass", "pass"),
        CheckCase("check_md5_hex", "a right md5 digest in hex",
                  [warcinfo("mh/info"),
                   record("response", "mh/resp", URI, RESP_CT, RESPONSE, block_digest=digest("md5", RESPONSE, "hex"))],
                  "fail", "pass", why="warcio tells spellings apart by length, and 32 hex digits are as long as "
                  "an md5 in padded base32: it compares hex text with base32 text"),
        CheckCase("check_blake3", "right blake3 digests (warchive writes them on request)",
                  [warcinfo("b3/info"),
                   record("response", "b3/resp", URI, RESP_CT, RESPONSE, block_digest=digest("blake3", RESPONSE),
                          payload_digest=digest("blake3", HTML))], "fail", "pass",
                  why="warcio's checker knows the algorithms of hashlib only, which has no blake3"),
        CheckCase("check_lowercase_base32", "right sha1 digests spelled in lower-case base32",
                  [warcinfo("lc/info"),
                   record("response", "lc/resp", URI, RESP_CT, RESPONSE,
                          block_digest=digest("sha1", RESPONSE, "base32-lower"),
                          payload_digest=digest("sha1", HTML, "base32-lower"))], "fail", "pass",
                  why="warcio compares base32 text case-sensitively; the value is the right digest "
                  "(warchive warns about the spelling)"),
        CheckCase("check_empty_block", "a resource with an empty block whose WARC-Block-Digest is of other bytes",
                  [warcinfo("eb/info"),
                   record("resource", "eb/res", URI + "empty.txt", "text/plain", b"", block_digest=wrong)],
                  "pass", "fail", why="warcio compares a block digest when the last block byte is read, so never "
                  "for an empty block"),
        CheckCase("check_segment", "the first segment of a segmented response: its WARC-Payload-Digest is of "
                  "the whole payload, not of this segment's part",
                  [warcinfo("sg/info"),
                   record("response", "sg/resp", URI, RESP_CT, RESPONSE, payload_digest=digest("sha1", HTML + HTML),
                          extra=(("WARC-Segment-Number", "1"),))], "pass", "pass"),
        CheckCase("check_empty_type", "a resource whose WARC-Type field is there but empty",
                  [warcinfo("et/info"), emptied(record("resource", "et/res", URI + "notes.txt", "text/plain",
                                                       b"notes\n"), "WARC-Type")],
                  "pass", "fail", why="warcio checks no mandatory field"),
        CheckCase("check_empty_record_id", "a resource whose WARC-Record-ID field is there but empty",
                  [warcinfo("ei/info"), emptied(record("resource", "ei/res", URI + "notes.txt", "text/plain",
                                                       b"notes\n"), "WARC-Record-ID")],
                  "pass", "fail", why="warcio checks no mandatory field"),
    ]


def write_case(directory, case: CheckCase) -> CheckCase:
    path = Path(directory) / case.file_name
    path.write_bytes(b"".join(gzip_member(r) if case.gz else r for r in case.records))
    case.path = path
    return case


def generate(directory) -> dict:
    """Write every case into ``directory``; {file name: CheckCase}."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    return {c.file_name: write_case(d, c) for c in cases()}


def offsets(case: CheckCase) -> List[int]:
    """Where each record of a case starts in its file."""
    out, pos = [], 0
    for r in case.records:
        out.append(pos)
        pos += len(gzip_member(r) if case.gz else r)
    return out


if __name__ == "__main__":  # pragma: no cover - `python tests/checkgen.py DIR` to look at the files
    import sys
    for n, c in generate(Path(sys.argv[1] if len(sys.argv) > 1 else "checkgen-out")).items():
        print(f"{n}: warcio {c.warcio}, warchive {c.ours}")
