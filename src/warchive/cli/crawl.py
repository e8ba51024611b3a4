"""`warchive crawl`: a polite, resumable crawl into a collection.

The command is ``crawl(args)`` and its options ``crawl_arguments(p)``
(warchive.cli.commands explains the registry). The options are the fields of
``CrawlConfig`` declared with ``setting`` (their help lives there), so a new
crawl setting is an option without touching this module. Each notes that it
was given (``args.given``): with --resume, the settings given replace the
session's, the others are the session's.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import signal
import sys
from argparse import ArgumentParser, Namespace
from typing import Any, Dict, List

from ..capture import crawler as crawler_module
from ..capture.addresses import networks
from ..capture.crawl_config import CrawlConfig, CrawlError
from ..capture.crawler import Crawler, read_config
from .progress import Progress
from ..capture.session import latest_session
from .commands import UsageError
from .extras import needs


def _option_names(f: "dataclasses.Field[Any]") -> List[str]:
    names = [f.metadata.get("flag") or "--" + f.name.rstrip("_").replace("_", "-")]
    if f.metadata.get("short"):
        names.insert(0, f.metadata["short"])
    return names


def _default(f: "dataclasses.Field[Any]") -> Any:
    if f.metadata.get("cli_default") is not dataclasses.MISSING:
        return f.metadata["cli_default"]
    if callable(f.default_factory):
        return f.default_factory()
    return f.default


class _Setting(argparse.Action):
    """A crawl setting's option, stored as argparse's store, store_true, store_false or append
    action stores it (``kind``), and named in ``args.given`` when it is on the command line."""

    def __init__(self, option_strings: List[str], dest: str, kind: str = "store", **kw: Any) -> None:
        self.kind = kind
        if kind in ("store_true", "store_false"):
            kw.update(nargs=0, const=kind == "store_true")
        super().__init__(option_strings, dest, **kw)

    def __call__(self, parser: ArgumentParser, ns: Namespace, values: Any, option_string: Any = None) -> None:
        if self.kind == "append":
            values = list(getattr(ns, self.dest) or []) + [values]
        elif self.kind != "store":
            values = self.const
        setattr(ns, self.dest, values)
        ns.given = getattr(ns, "given", frozenset()) | {self.dest}


def crawl_arguments(p: ArgumentParser) -> None:
    p.add_argument("seeds", nargs="*", metavar="SEED", help="URLs to start from")
    p.add_argument("-o", "--output", metavar="COLL", help="collection directory (created if absent)")
    p.add_argument("--resume", metavar="SESSION", help="continue a session (its directory, or a collection: "
                                                       "its latest crawl) with the settings it was started with, "
                                                       "but those given with it")
    p.add_argument("--retry-failed", action="store_true", help="with --resume: fetch the failed URLs again")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress display and no summary")
    p.set_defaults(given=frozenset())
    groups: Dict[str, Any] = {}
    for f in dataclasses.fields(CrawlConfig):
        if "help" not in f.metadata:
            continue
        m = f.metadata
        g = groups.get(m["group"])
        if g is None:
            g = groups[m["group"]] = p.add_argument_group(m["group"])
        default = _default(f)
        kw: Dict[str, Any] = {"dest": f.name, "help": m["help"], "action": _Setting}
        if f.type in ("bool", bool):
            kw["kind"] = "store_false" if m["negate"] else "store_true"
            kw["default"] = bool(m["negate"])
        else:
            if isinstance(default, (list, dict)):
                kw["kind"] = "append"
                kw["default"] = []
            else:
                kw["default"] = default
                kw["type"] = _scalar_type(f.type)
                if default is not None and m["choices"] is None:
                    kw["help"] += f" (default {default:g})" if isinstance(default, float) else f" (default {default})"
            if m["metavar"]:
                kw["metavar"] = m["metavar"]
            elif kw.get("type") is int:
                kw["metavar"] = "N"
            if m["choices"]:
                kw["choices"] = m["choices"]
                kw["help"] += f" (default {default})"
        g.add_argument(*_option_names(f), **kw)


def _scalar_type(annotation: Any) -> Any:
    text = str(annotation)
    if "float" in text:
        return float
    if "int" in text:
        return int
    return str


def _pairs(values: List[str], option: str) -> Dict[str, str]:
    out = {}
    for v in values:
        k, sep, val = v.partition("=")
        if not sep or not k or not val:
            raise UsageError(f"{option} {v!r}: expected NAME=VALUE")
        out[k.strip()] = val.strip()
    return out


def _ports(pairs: Dict[str, str], option: str) -> Dict[str, int]:
    """--port-map's pairs, each connecting to a port number (1-65535)."""
    out = {}
    for k, v in pairs.items():
        if not (v.isascii() and v.isdigit() and len(v) <= 5 and 0 < int(v) <= 65535):
            raise UsageError(f"{option} {k}={v[:20]!r}: the second port must be a number from 1 to 65535")
        out[k] = int(v)
    return out


def _settings(args: Namespace, given_only: bool = False) -> Dict[str, Any]:
    """The CrawlConfig settings of a command line (``given_only``: those on it)."""
    values: Dict[str, Any] = {}
    for f in dataclasses.fields(CrawlConfig):
        if "help" not in f.metadata or given_only and f.name not in args.given:
            continue
        v = getattr(args, f.name)
        if isinstance(_default(f), dict):
            pairs = _pairs(v, _option_names(f)[-1])
            v = _ports(pairs, _option_names(f)[-1]) if f.name == "port_map" else pairs
        elif f.name == "allow_addresses":
            try:
                networks(v)
            except ValueError as e:
                raise UsageError(f"--allow-address {e}") from None
        values[f.name] = v
    return values


def crawl_config(args: Namespace) -> CrawlConfig:
    """The CrawlConfig of a `warchive crawl` command line."""
    values = _settings(args)
    if values.get("revisit_after") is None:
        values["revisits"] = 0
    return CrawlConfig(seeds=args.seeds, **values)


def resumed_config(session: str, args: Namespace) -> CrawlConfig:
    """The settings of the session being resumed, those given on the command line replacing
    theirs (--revisit-after without --revisits, on a session that made no revisits: one, as for
    a new crawl)."""
    stored = read_config(session)
    given = _settings(args, given_only=True)
    cfg = dataclasses.replace(stored, **given)
    if cfg.revisit_after is not None and not cfg.revisits and "revisits" not in given:
        cfg.revisits = args.revisits
    return cfg


def _check_extras(cfg: CrawlConfig) -> None:
    """The optional packages the crawl's settings need, before anything is written."""
    if cfg.screenshots:
        with needs("browser", "--screenshots"):
            import playwright.async_api  # noqa: F401  (what warchive.capture.browser drives)


def crawl(args: Namespace) -> int:
    """Crawl politely from SEEDS into the collection COLL: WARC files in COLL/archive, index
    segments in COLL/indexes as it goes, the session (journal, crawl.log, frontier, seen set) in
    COLL/crawls/ID. Ctrl-C stops cleanly; --resume continues (also after a kill), with the
    settings the session was started with but those given with --resume (which the session
    keeps from then on)."""
    if args.screenshots and not crawler_module.screenshots_available():
        print("warchive crawl: error: --screenshots is not available in this build "
              "(warchive.capture.browser is missing)", file=sys.stderr)
        return 2
    if args.resume:
        session = latest_session(args.resume)
        coll = args.output or os.path.dirname(os.path.dirname(os.path.abspath(session)))   # COLL/crawls/ID
        cfg = resumed_config(session, args)
        _check_extras(cfg)
        c = Crawler(cfg, coll, session_dir=session, resume=True, retry_failed=args.retry_failed)
    else:
        if not args.seeds or not args.output:
            raise UsageError("give SEEDS and -o COLLECTION (or --resume SESSION)")
        if args.retry_failed:
            raise UsageError("--retry-failed goes with --resume")
        if os.path.exists(args.output) and not os.path.isdir(args.output):
            raise CrawlError(f"{args.output}: a file, not a collection directory")
        cfg = crawl_config(args)
        _check_extras(cfg)
        c = Crawler(cfg, args.output)
    progress = Progress(sys.stderr) if not args.quiet and sys.stderr.isatty() else None
    c.progress = progress
    if not args.quiet:
        print(f"warchive crawl: session {c.session_dir}", file=sys.stderr)

    async def run() -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, c.stop)
            except (NotImplementedError, RuntimeError):
                pass
        await c.run()

    asyncio.run(run())
    if progress is not None:
        progress.clear()
    if not args.quiet:
        print(c.summary(), file=sys.stderr)
    if c.stats.fetched == 0 and c.stats.refused:
        # seeds on loopback or a private network are refused like any other URL: say how to admit them
        print(f"warchive crawl: error: nothing was fetched: {c.stats.refused} URLs refused by address "
              f"(not public: loopback, private, link-local...); --allow-address CIDR admits a network "
              f"(warchive session skipped {c.session_dir} lists them)", file=sys.stderr)
        return 1
    if c.stats.fetched == 0 and c.stats.failed:
        # a crawl that archived nothing is a failed one, whatever stopped it (a wrong seed, no network)
        print(f"warchive crawl: error: nothing was fetched: {c.stats.failed} attempts failed "
              f"(warchive session failed {c.session_dir} lists them)", file=sys.stderr)
        return 1
    return 0
