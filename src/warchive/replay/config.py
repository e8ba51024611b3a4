"""What a replay server serves and how: pywb's ``config.yaml``, or the options of ``create_app``.

    collections_root: collections        # pywb's automatic collections under this directory
    collections:                         # and/or named ones, each as pywb writes them:
      web: ./indexes/web.cdxj            #   an index path (file, directory, ZipNum .idx)
      other:
        index_paths: [./a.cdxj, ./b/]    #   (pywb's `index` is read the same)
        archive_paths: [./warcs/]        #   (pywb's `resource` / `archive_paths`); a durable store
                                         #   too: its directory, store://STORE or store://STORE/NAME
    framed_replay: true                  # the banner outside the page's iframe (pywb's default)
    redirect_to_exact: false             # a memento asked at an inexact time: 307 to the exact one
    enable_memento: true                 # Memento headers (RFC 7089)
    replay_host: null                    # an origin of its own for archived pages (see below)
    banner: true                         # false: framed replay without the banner (a bare frame)
    fuzzy_match: true                    # pywb's fuzzy rules when no capture matches exactly

Paths in a config file are relative to the file's directory (pywb reads them relative to the
directory it runs in, which is where its config.yaml is). Unknown keys are an error naming
them, where pywb ignores them: a misspelt option would otherwise be silently without effect.

``replay_host`` (``http://replay.example:8080``): the origin archived pages are served from,
another than the banner's, so that no page can script the banner or read its cookies. Without
one the page's frame is sandboxed (an opaque origin); docs/replay.md says what that costs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import yaml

from ..errors import ConfigError
from ..store.urls import SCHEME, is_store_url

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class CollectionConfig:
    """One named collection: its index files and the directories of its WARC files (empty:
    the ``archive/`` directory beside each ``indexes/`` directory, as pywb's layout)."""
    name: str
    index_paths: List[str]
    archive_paths: List[str] = field(default_factory=list)


@dataclass(frozen=True)
class ReplayConfig:
    collections_root: Optional[str] = None
    collections: Dict[str, CollectionConfig] = field(default_factory=dict)
    framed_replay: bool = True
    redirect_to_exact: bool = False
    enable_memento: bool = True
    replay_host: Optional[str] = None
    banner: bool = True
    fuzzy_match: bool = True

    @property
    def sandboxed_frame(self) -> bool:
        """Pages run in the banner's sandboxed iframe (framed replay without a replay host): their
        origin is opaque, so what they ask of the server is cross-origin and its answers must
        allow any origin."""
        return self.framed_replay and not self.replay_host

    @classmethod
    def load(cls, path: PathLike) -> "ReplayConfig":
        """The configuration in a YAML file (pywb's config.yaml)."""
        import_path = os.fspath(path)
        try:
            with open(import_path, encoding="utf-8") as f:
                data = yaml.safe_load(f)
        except OSError as e:
            raise ConfigError(f"{import_path}: cannot read: {e.strerror or e}") from None
        except yaml.YAMLError as e:
            raise ConfigError(f"{import_path}: not YAML: {e}") from None
        except UnicodeDecodeError as e:
            raise ConfigError(f"{import_path} at byte {e.start}: not YAML: not UTF-8 text") from None
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise ConfigError(f"{import_path}: a config file is a mapping of options, not {type(data).__name__}")
        return cls.from_mapping(data, base=os.path.dirname(os.path.abspath(import_path)), source=import_path)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, base: str = ".", source: str = "config") -> "ReplayConfig":
        known = {"collections_root", "collections", "framed_replay", "redirect_to_exact", "enable_memento",
                 "replay_host", "banner", "fuzzy_match",
                 # pywb's keys that mean nothing here but are common in its files: accepted, unused
                 "debug", "proxy", "recorder", "autoindex", "enable_auto_fetch", "ui", "locales",
                 "archive_paths", "index_paths"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"{source}: unknown option(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")

        def path(p: Any, key: str) -> str:
            if not isinstance(p, str) or not p:
                raise ConfigError(f"{source}: {key}: a path is a string, not {p!r}")
            if is_store_url(p):   # store://STORE[/NAME] (warchive.store.urls): STORE relative to the file too
                rest = p[len(SCHEME):]
                return SCHEME + (rest if os.path.isabs(rest) else os.path.normpath(os.path.join(base, rest)))
            return p if os.path.isabs(p) else os.path.normpath(os.path.join(base, p))

        def paths(v: Any, key: str) -> List[str]:
            if isinstance(v, str):
                return [path(v, key)]
            if isinstance(v, Sequence) and v:
                return [path(p, key) for p in v]
            raise ConfigError(f"{source}: {key}: a path or a list of paths, not {v!r}")

        colls: Dict[str, CollectionConfig] = {}
        raw = data.get("collections") or {}
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{source}: collections: a mapping of names to indexes, not {raw!r}")
        for name, v in raw.items():
            check_collection_name(str(name), source)
            key = f"collections.{name}"
            if isinstance(v, (str, list)):
                colls[name] = CollectionConfig(name, paths(v, key))
                continue
            if not isinstance(v, Mapping):
                raise ConfigError(f"{source}: {key}: an index path or a mapping, not {v!r}")
            extra = sorted(set(v) - {"index", "index_paths", "resource", "archive_paths"})
            if extra:
                raise ConfigError(f"{source}: {key}: unknown option(s) {', '.join(extra)}")
            idx = v.get("index_paths", v.get("index"))
            if idx is None:
                raise ConfigError(f"{source}: {key}: no index_paths")
            arc = v.get("archive_paths", v.get("resource"))
            colls[name] = CollectionConfig(name, paths(idx, key + ".index_paths"),
                                           paths(arc, key + ".archive_paths") if arc is not None else [])
        root = data.get("collections_root")
        flags: Dict[str, bool] = {}
        for k in ("framed_replay", "redirect_to_exact", "enable_memento", "banner", "fuzzy_match"):
            if k in data:
                if not isinstance(data[k], bool):
                    raise ConfigError(f"{source}: {k}: true or false, not {data[k]!r}")
                flags[k] = data[k]
        host = data.get("replay_host")
        if host is not None and (not isinstance(host, str) or not host.startswith(("http://", "https://"))):
            raise ConfigError(f"{source}: replay_host: an origin such as http://replay.example:8080, not {host!r}")
        return cls(collections_root=path(root, "collections_root") if root else None,
                   collections=colls, replay_host=host.rstrip("/") if host else None, **flags)


def check_collection_name(name: str, source: str = "config") -> str:
    """A collection name is one path segment that is not hidden and holds no odd characters
    (it is a directory name and a URL segment)."""
    if (not name or name.startswith(".") or any(c in name for c in "/\\?#%\0") or name != name.strip()
            or name in ("static", "_")):
        raise ConfigError(f"{source}: {name!r} cannot name a collection")
    return name


__all__ = ["CollectionConfig", "ConfigError", "ReplayConfig", "check_collection_name"]
