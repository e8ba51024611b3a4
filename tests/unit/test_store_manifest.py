"""Manifests, store.json and names that are hostile or damaged raise StoreError naming the file and
what is wrong; never a crash, never a read outside the store."""

import base64
import hashlib
import json
import os
import zlib
from pathlib import Path

import pytest

from warchive.errors import ArchiveError, StoreError
from warchive.store import Store, init_store, parse_manifest, put
from warchive.store.config import parse_config
from warchive.store.jsonfile import canonical
from warchive.store.layout import name_problem
from warchive.store.records import RecordSpan, decode_table, encode_table
from storekit import make_store

WGET = Path(__file__).resolve().parents[1] / "data" / "wget"
SRC = WGET / "docs-python-3.11-recrawl.warc.gz"


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    store = make_store(tmp_path_factory.mktemp("m"), fragment_size=4096)
    put(store, str(SRC))
    path = store.manifest_copies(SRC.name)[0][1]
    return Path(path).read_bytes()


def _resealed(body: dict) -> bytes:
    body = dict(body)
    body.pop("checksum", None)
    body["checksum"] = hashlib.sha256(canonical(body)).hexdigest()
    return canonical(body)


def _raw(body: dict) -> bytes:
    return zlib.decompress(base64.b64decode(body["record_table"]))


def _table(raw: bytes) -> str:
    return base64.b64encode(zlib.compress(raw)).decode()


def _spans(body: dict, fn) -> None:
    spans = list(decode_table(body["record_table"], body["record_count"], body["size"], "m.json"))
    fn(spans)
    body["record_table"] = encode_table(spans)


def _mutate(good: bytes, fn) -> bytes:
    body = json.loads(good)
    fn(body)
    return _resealed(body)


def test_the_manifest_round_trips(good):
    man = parse_manifest(good, "m.json", SRC.name)
    assert man.to_json() == good and man.size == SRC.stat().st_size
    assert issubclass(StoreError, ArchiveError)


def _set(key, value):
    def fn(b):
        b[key] = value
    return fn


HOSTILE = {
    "negative size": _set("size", -1),
    "size as string": _set("size", "581729"),
    "size as float": _set("size", 1.5),
    "size as bool": _set("size", True),
    "huge size": _set("size", 10 ** 40),
    "size disagreeing with stripes": _set("size", 10 ** 12),
    "k zero": _set("k", 0),
    "k huge": _set("k", 1000),
    "unknown codec": _set("codec", "rot13"),
    "name traversal": _set("name", "../x"),
    "name absolute": _set("name", "/etc/passwd"),
    "name dot": _set("name", ".."),
    "name nul": _set("name", "a\u0000b"),
    "other name": _set("name", "other.warc.gz"),
    "chunks missing": _set("chunks", []),
    "chunks not a list": _set("chunks", {"0": 1}),
    "chunk size wrong": lambda b: b["chunks"][0].__setitem__("size", 5),
    "chunk index wrong": lambda b: b["chunks"][1].__setitem__("index", 0),
    "chunk volume negative": lambda b: b["chunks"][1].__setitem__("volume", -1),
    "two chunks one volume": lambda b: b["chunks"][1].__setitem__("volume", b["chunks"][0]["volume"]),
    "chunk extra field": lambda b: b["chunks"][1].__setitem__("path", "../../etc"),
    "stripe hash short": lambda b: b["stripes"][0].__setitem__(0, "ab"),
    "stripe too few hashes": lambda b: b["stripes"][0].pop(),
    "stripes too many": lambda b: b["stripes"].append(b["stripes"][0]),
    "record count past the table": lambda b: b.__setitem__("record_count", b["record_count"] + 1),
    "record count short of the table": lambda b: b.__setitem__("record_count", b["record_count"] - 1),
    "record count negative": _set("record_count", -1),
    "record table not base64": _set("record_table", "!!!!"),
    "record table not zlib": _set("record_table", "AAAA"),
    "record table trailing bytes": lambda b: b.__setitem__("record_table", _table(_raw(b) + b"\x00")),
    "record offset past end": lambda b: _spans(b, lambda s: s.__setitem__(0, RecordSpan(10 ** 9, 5))),
    "records out of order": lambda b: _spans(b, lambda s: s.reverse()),
    "record length past end": lambda b: _spans(b, lambda s: s.__setitem__(-1, RecordSpan(s[-1].offset, 10 ** 6))),
    "record table truncated": lambda b: b.__setitem__("record_table", _table(_raw(b)[:-1])),
    "listing hash short": _set("listing_sha256", "ab"),
    "records as JSON (version 1)": lambda b: b.__setitem__("records", [[0, 5, None, None]]),
    "unknown field": _set("extra", 1),
    "missing field": lambda b: b.pop("sha256"),
    "bad sha256": _set("sha256", "g" * 64),
    "version 1": _set("version", 1),
    "version 3": _set("version", 3),
    "wrong format": _set("format", "warchive-store"),
}


@pytest.mark.parametrize("what", sorted(HOSTILE))
def test_hostile_manifests_are_refused(good, what):
    data = _mutate(good, HOSTILE[what])
    with pytest.raises(StoreError) as e:
        parse_manifest(data, "/v/manifests/x.json", SRC.name)
    assert str(e.value).startswith("/v/manifests/x.json")


@pytest.mark.parametrize("data", [
    b"", b"{", b"[]", b"null", b"{\"a\":1,\"a\":2}\n", b"\xff\xfe", b"{\"size\": NaN}",
    b"[" * 100000, b"{\"k\":" + b"9" * 5000 + b"}\n",
])
def test_malformed_json_is_refused(data):
    with pytest.raises(StoreError) as e:
        parse_manifest(data, "m.json")
    assert str(e.value).startswith("m.json")


def test_truncated_and_flipped_manifests_are_refused(good):
    for n in (0, 1, len(good) // 2, len(good) - 1):
        with pytest.raises(StoreError):
            parse_manifest(good[:n], "m.json")
    i = good.index(b'"sha256":"') + 12
    flipped = good[:i] + (b"0" if good[i:i + 1] != b"0" else b"1") + good[i + 1:]
    with pytest.raises(StoreError, match="checksum"):
        parse_manifest(flipped, "m.json")
    with pytest.raises(StoreError, match="canonical"):
        parse_manifest(json.dumps(json.loads(good), indent=1).encode(), "m.json")


@pytest.mark.parametrize("name", ["../x", "a/b", "", ".hidden", "..", "x\n", "a\\b", "x" * 201, "x.tmp"])
def test_bad_names_are_refused(tmp_path, name):
    assert name_problem(name)
    store = make_store(tmp_path)
    with pytest.raises(StoreError):
        store.manifest(name)


def test_a_damaged_manifest_copy_falls_back_to_another(tmp_path):
    store = make_store(tmp_path)
    put(store, str(SRC))
    first = store.manifest_copies(SRC.name)[0][1]
    Path(first).write_bytes(b"{")
    assert Store(store.root).manifest(SRC.name).size == SRC.stat().st_size
    for _, p in store.manifest_copies(SRC.name):
        Path(p).write_bytes(b"{}")
    with pytest.raises(StoreError, match="every manifest"):
        Store(store.root).manifest(SRC.name)


def test_a_manifest_naming_a_volume_the_store_lacks_is_refused(tmp_path):
    store = make_store(tmp_path)
    put(store, str(SRC))
    p = store.manifest_copies(SRC.name)[0][1]
    Path(p).write_bytes(_mutate(Path(p).read_bytes(), lambda b: b["chunks"][5].__setitem__("volume", 99)))
    with pytest.raises(StoreError, match="volume 99"):
        Store(store.root).read_manifest(p, SRC.name)


def test_store_json_is_checked(tmp_path):
    init_store(str(tmp_path / "S"), [str(tmp_path / f"v{i}") for i in range(6)])
    good = (tmp_path / "S" / "store.json").read_bytes()
    assert parse_config(good, "s.json").k == 4
    for fn in (_set("k", "4"), _set("volumes", ["relative"] * 6), _set("volumes", ["/a"]), _set("m", 0),
               _set("codec", "x"), _set("fragment_size", 0), lambda b: b.pop("id")):
        body = json.loads(good)
        fn(body)
        with pytest.raises(StoreError):
            parse_config(canonical(body), "s.json")


def test_init_refuses_what_it_cannot_make(tmp_path):
    vols = [str(tmp_path / f"v{i}") for i in range(6)]
    with pytest.raises(StoreError, match="at least 6"):
        init_store(str(tmp_path / "S"), vols[:5])
    with pytest.raises(StoreError, match="same directory"):
        init_store(str(tmp_path / "S"), vols[:5] + vols[:1])
    init_store(str(tmp_path / "S"), vols)
    with pytest.raises(StoreError, match="already a store"):
        init_store(str(tmp_path / "S"), vols)
    with pytest.raises(StoreError, match="already a volume"):
        init_store(str(tmp_path / "T"), vols)
    with pytest.raises(StoreError, match="not a store"):
        Store(str(tmp_path))
    os.unlink(tmp_path / "S" / "store.json")
    with pytest.raises(StoreError, match="not a store"):
        Store(str(tmp_path / "S"))
