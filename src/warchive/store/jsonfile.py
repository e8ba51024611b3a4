"""The JSON of the store's own files (store.json, volume.json, manifests): one canonical form, and a
strict parser that names the file and what is wrong.

Canonical form: ``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)``
and a newline, so equal content is equal bytes on every volume and a copy can be compared by
bytes. Parsing refuses what the writer never writes: duplicate keys, floats, NaN and Infinity,
integers of more than 4300 digits (Python's limit), anything not in canonical form. The ``require_*`` helpers check
one field each and raise StoreError(path, None, "FIELD must be ...").
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict, List, NoReturn, Optional

from ..errors import StoreError

HEX64 = re.compile(r"[0-9a-f]{64}\Z")


def canonical(value: Any) -> bytes:
    """``value`` as canonical JSON bytes (with the final newline)."""
    return (json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
            + "\n").encode("ascii")


def _no_duplicates(pairs: List[Any]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r}")
        out[k] = v
    return out


def _no_float(s: str) -> NoReturn:
    raise ValueError(f"a number with a fraction or exponent ({s[:20]}) where integers are expected")


def _no_constant(s: str) -> NoReturn:
    raise ValueError(f"{s} is not JSON a store writes")


def parse(data: bytes, path: str, what: str) -> Dict[str, Any]:
    """The JSON object in ``data`` (the bytes of ``path``, a ``what``), strictly."""
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError as e:
        raise StoreError(path, e.start, f"{what}: a byte that is not ASCII") from None
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicates, parse_float=_no_float,
                           parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        raise StoreError(path, e.pos, f"{what}: not JSON ({e.msg})") from None
    except (ValueError, RecursionError) as e:
        raise StoreError(path, None, f"{what}: {e}") from None
    if not isinstance(value, dict):
        raise StoreError(path, 0, f"{what}: not a JSON object")
    if canonical(value) != data:
        raise StoreError(path, None, f"{what}: not in canonical form (was it edited by hand?)")
    return value


class Fields:
    """Checked access to the fields of one parsed object (``where``: its place, for messages)."""

    def __init__(self, obj: Any, path: str, where: str, keys: Optional[set] = None) -> None:
        self.path, self.where = path, where
        if not isinstance(obj, dict):
            self.fail(f"{where} must be an object, not {_kind(obj)}")
        self.obj: Dict[str, Any] = obj
        if keys is not None:
            missing = sorted(keys - set(obj))
            extra = sorted(set(obj) - keys)
            if missing:
                self.fail(f"{where} lacks {', '.join(missing)}")
            if extra:
                self.fail(f"{where} has unknown fields {', '.join(extra)}")

    def fail(self, problem: str) -> NoReturn:
        raise StoreError(self.path, None, problem)

    def integer(self, key: str, lo: int, hi: int) -> int:
        v = self.obj.get(key)
        return require_int(v, lo, hi, self.path, f"{self.where}.{key}")

    def string(self, key: str, max_len: int = 4096) -> str:
        v = self.obj.get(key)
        if not isinstance(v, str):
            self.fail(f"{self.where}.{key} must be a string, not {_kind(v)}")
        if len(v) > max_len:
            self.fail(f"{self.where}.{key} is {len(v)} characters long (at most {max_len})")
        return v

    def hex64(self, key: str) -> str:
        v = self.string(key, 64)
        if not HEX64.match(v):
            self.fail(f"{self.where}.{key} must be 64 lowercase hex digits")
        return v

    def items(self, key: str, max_len: int) -> List[Any]:
        v = self.obj.get(key)
        return require_list(v, max_len, self.path, f"{self.where}.{key}")


def _kind(v: Any) -> str:
    return "null" if v is None else {bool: "a boolean", int: "an integer", str: "a string", list: "a list",
                                     dict: "an object"}.get(type(v), type(v).__name__)


def require_int(v: Any, lo: int, hi: int, path: str, where: str) -> int:
    if type(v) is not int:
        raise StoreError(path, None, f"{where} must be an integer, not {_kind(v)}")
    if not lo <= v <= hi:
        raise StoreError(path, None, f"{where} is {v}, out of range [{lo}, {hi}]")
    return v


def require_list(v: Any, max_len: int, path: str, where: str) -> List[Any]:
    if not isinstance(v, list):
        raise StoreError(path, None, f"{where} must be a list, not {_kind(v)}")
    if len(v) > max_len:
        raise StoreError(path, None, f"{where} has {len(v)} entries (at most {max_len})")
    return v


def read_capped(path: str, cap: int, what: str) -> bytes:
    """The bytes of ``path`` (at most ``cap``: a bigger file is no ``what`` a store wrote)."""
    with open(path, "rb") as f:
        data = f.read(cap + 1)
    if len(data) > cap:
        raise StoreError(path, None, f"{what}: more than {cap} bytes")
    return data
