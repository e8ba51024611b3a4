"""A store's configuration, ``STORE/store.json``, and ``init``: making a new store over volumes.

store.json (canonical JSON, docs/format.md "Durable store")::

    {"codec": "isa_l_rs_cauchy", "format": "warchive-store", "fragment_hash": "blake3",
     "fragment_size": 1048576, "id": "<32 hex digits>", "k": 4, "m": 2, "version": 1,
     "volumes": ["/abs/path/of/volume0", ...]}

and every volume directory holds ``volume.json``::

    {"format": "warchive-store-volume", "index": 3, "store": "<the store's id>", "version": 1}

so that a disk mounted at the wrong place, or a volume of another store, is recognised and its
chunks are not read as this store's. The configuration never changes after ``init``: every
manifest repeats codec, k, m and fragment size, so files stay readable whatever is added later.
``init`` writes volume.json to each volume, then store.json last (temp file, fsync, rename).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Dict, Sequence, Tuple

from ..durable import AtomicOutput, fsync_dir
from ..errors import StoreError
from .codec import CODECS, DEFAULT_CODEC, FRAGMENT_HASH, MAX_FRAGMENTS, Codec
from .jsonfile import Fields, canonical, parse, read_capped
from .layout import CHUNKS, MANIFESTS, STORE_JSON, VOLUME_JSON

FORMAT = "warchive-store"
VOLUME_FORMAT = "warchive-store-volume"
VERSION = 1
DEFAULT_K, DEFAULT_M = 4, 2
DEFAULT_FRAGMENT_SIZE = 1 << 20
MAX_FRAGMENT_SIZE = 1 << 30
MAX_VOLUMES = 4096
CONFIG_CAP = 1 << 20
KEYS = {"codec", "format", "fragment_hash", "fragment_size", "id", "k", "m", "version", "volumes"}
VOLUME_KEYS = {"format", "index", "store", "version"}


@dataclass(frozen=True)
class StoreConfig:
    id: str
    codec: str
    k: int
    m: int
    fragment_size: int
    volumes: Tuple[str, ...]

    def to_json(self) -> bytes:
        return canonical({"codec": self.codec, "format": FORMAT, "fragment_hash": FRAGMENT_HASH,
                          "fragment_size": self.fragment_size, "id": self.id, "k": self.k, "m": self.m,
                          "version": VERSION, "volumes": list(self.volumes)})


def parse_config(data: bytes, path: str) -> StoreConfig:
    """store.json's bytes as a StoreConfig, or StoreError naming ``path`` and what is wrong."""
    f = Fields(parse(data, path, "store.json"), path, "store.json", KEYS)
    if f.obj["format"] != FORMAT:
        f.fail(f"store.json: format is {f.obj['format']!r}, not {FORMAT!r}")
    if f.integer("version", 0, 1 << 20) != VERSION:
        f.fail(f"store.json: version {f.obj['version']} (this warchive reads version {VERSION})")
    codec = f.string("codec", 64)
    if codec not in CODECS:
        f.fail(f"store.json: unknown codec {codec!r}")
    if f.string("fragment_hash", 64) != FRAGMENT_HASH:
        f.fail(f"store.json: unknown fragment hash {f.obj['fragment_hash']!r}")
    k = f.integer("k", 1, MAX_FRAGMENTS - 1)
    m = f.integer("m", 1, MAX_FRAGMENTS - k)
    sid = f.string("id", 32)
    if len(sid) != 32 or any(c not in "0123456789abcdef" for c in sid):
        f.fail("store.json: id must be 32 lowercase hex digits")
    vols = f.items("volumes", MAX_VOLUMES)
    if len(vols) < k + m:
        f.fail(f"store.json: {len(vols)} volumes for k + m = {k + m} fragments")
    for i, v in enumerate(vols):
        if not isinstance(v, str) or not os.path.isabs(v) or "\0" in v:
            f.fail(f"store.json: volumes[{i}] must be an absolute path")
    if len(set(vols)) != len(vols):
        f.fail("store.json: a volume is listed twice")
    return StoreConfig(sid, codec, k, m, f.integer("fragment_size", 1, MAX_FRAGMENT_SIZE), tuple(vols))


def load_config(store: str) -> StoreConfig:
    """The configuration of the store at directory ``store``."""
    path = os.path.join(store, STORE_JSON)
    if not os.path.isdir(store):
        raise StoreError(store, None, "no such store directory")
    try:
        data = read_capped(path, CONFIG_CAP, "store.json")
    except FileNotFoundError:
        raise StoreError(store, None, "not a store (no store.json)", "make one with `warchive store init`") from None
    return parse_config(data, path)


def volume_json(config: StoreConfig, index: int) -> bytes:
    return canonical({"format": VOLUME_FORMAT, "index": index, "store": config.id, "version": VERSION})


def volume_problem(config: StoreConfig, index: int) -> str:
    """What is wrong with volume ``index`` of ``config`` as it is on disk ("" if nothing): absent,
    no volume.json, or the volume.json of another store or index."""
    vol = config.volumes[index]
    path = os.path.join(vol, VOLUME_JSON)
    try:
        data = read_capped(path, CONFIG_CAP, "volume.json")
    except FileNotFoundError:
        return f"{vol}: not there" if not os.path.isdir(vol) else f"{path}: missing"
    except OSError as e:
        return f"{path}: {e.strerror or e}"
    try:
        f = Fields(parse(data, path, "volume.json"), path, "volume.json", VOLUME_KEYS)
        if f.obj["format"] != VOLUME_FORMAT or f.obj["version"] != VERSION:
            return f"{path}: not a volume.json of version {VERSION}"
        if f.obj["store"] != config.id or f.obj["index"] != index:
            return (f"{path}: volume {f.obj['index']!r} of store {f.obj['store']!r}, not volume {index} of "
                    f"store {config.id} (a disk mounted at the wrong place?)")
    except StoreError as e:
        return str(e)
    return ""


def init_store(store: str, volumes: Sequence[str], k: int = DEFAULT_K, m: int = DEFAULT_M,
               fragment_size: int = DEFAULT_FRAGMENT_SIZE, codec: str = DEFAULT_CODEC) -> StoreConfig:
    """Make a new store at directory ``store`` (made if missing) over ``volumes`` (made if missing;
    each must not be a volume already). At least k + m volumes: one per fragment of a stripe."""
    Codec(codec, k, m)   # refuses a codec, k or m it cannot use
    if not 1 <= fragment_size <= MAX_FRAGMENT_SIZE:
        raise StoreError(store, None, f"fragment size {fragment_size}: must be 1 .. {MAX_FRAGMENT_SIZE}")
    if os.path.exists(os.path.join(store, STORE_JSON)):
        raise StoreError(store, None, "already a store (it has a store.json)")
    vols = tuple(os.path.abspath(v) for v in volumes)
    if len(vols) < k + m:
        raise StoreError(store, None, f"{len(vols)} volumes given; k={k} + m={m} needs at least {k + m} "
                         "(one per fragment of a stripe)")
    real: Dict[str, str] = {}
    for v in vols:
        r = os.path.realpath(v)
        if r in real:
            raise StoreError(v, None, f"the same directory as volume {real[r]}")
        real[r] = v
        if os.path.exists(v) and not os.path.isdir(v):
            raise StoreError(v, None, "a file, not a directory (a volume is a directory, one per disk)")
        if os.path.exists(os.path.join(v, VOLUME_JSON)):
            raise StoreError(v, None, "already a volume of a store (it has a volume.json)")
    config = StoreConfig(os.urandom(16).hex(), codec, k, m, fragment_size, vols)
    os.makedirs(store, exist_ok=True)
    for i, v in enumerate(vols):
        for sub in (MANIFESTS, CHUNKS):
            os.makedirs(os.path.join(v, sub), exist_ok=True)
            fsync_dir(os.path.join(v, sub), strict=False)
        _publish(os.path.join(v, VOLUME_JSON), volume_json(config, i))
    _publish(os.path.join(store, STORE_JSON), config.to_json())
    return config


def _publish(path: str, data: bytes) -> None:
    with AtomicOutput(path) as out:
        out.write(data)


def config_summary(config: StoreConfig) -> Dict[str, Any]:
    return {"codec": config.codec, "k": config.k, "m": config.m, "fragment_size": config.fragment_size,
            "volumes": list(config.volumes)}
