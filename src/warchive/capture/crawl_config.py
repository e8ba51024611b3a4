"""The settings of a crawl (`CrawlConfig`), apart from the crawler so that reading them is cheap.

Each setting a user can choose is declared once, here, with its help: the
options of `warchive crawl` are built from these fields (warchive.cli.crawl),
and a session's ``config.json`` is their values, so that ``--resume`` needs
nothing else.

It imports only the rule modules whose objects it makes (``politeness``,
``scope``); it must not import the crawler or anything it drives.
"""

from __future__ import annotations

from dataclasses import MISSING, asdict, dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from .. import __version__
from ..errors import CrawlError
from ..surt import surt
from .politeness import Politeness
from .scope import Scope

__all__ = ["CrawlConfig", "CrawlError"]


def setting(default: Any, help: str, group: str, *, flag: Optional[str] = None, short: Optional[str] = None,
            metavar: Optional[str] = None, choices: Optional[Tuple[str, ...]] = None, negate: bool = False,
            factory: Optional[Callable[[], Any]] = None, cli_default: Any = MISSING) -> Any:
    """A CrawlConfig field that is also a `warchive crawl` option: its help and the option's
    spelling (``flag``, default --NAME-WITH-DASHES; ``negate``: a --no-... switch that sets
    False; dict fields take NAME=VALUE, list fields repeat). ``cli_default``: a default of the
    option other than the field's."""
    meta = {"help": help, "group": group, "flag": flag, "short": short, "metavar": metavar, "choices": choices,
            "negate": negate, "cli_default": cli_default}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass
class CrawlConfig:
    """Everything a crawl is run with; written to ``config.json`` so ``--resume`` needs nothing else.

    The fields made with ``setting`` are the options of `warchive crawl` (warchive.cli.crawl
    builds them from these fields), grouped as the help shows them."""

    seeds: List[str]
    # politeness (Heritrix's names and defaults)
    delay_factor: float = setting(5.0, "delay = factor x last fetch time", "politeness", metavar="X")
    min_delay: float = setting(3.0, "seconds at least between two fetches from one host", "politeness",
                              metavar="SECONDS")
    max_delay: float = setting(30.0, "seconds at most between two fetches from one host", "politeness",
                              metavar="SECONDS")
    crawl_delay_cap: float = setting(300.0, "robots Crawl-delay honoured up to this many seconds", "politeness",
                                    metavar="SECONDS")
    politeness_off: bool = setting(False, "no delays at all (your own servers only)", "politeness",
                                   flag="--no-politeness")
    # scope
    scope: str = setting("prefix", "what the seeds admit: their SURT prefixes, their hosts, their domains",
                         "scope", choices=("prefix", "host", "domain"))
    include: List[str] = setting(None, "also accept URLs matching REGEX (repeatable)", "scope", metavar="REGEX",
                                 factory=list)
    exclude: List[str] = setting(None, "reject URLs matching REGEX (repeatable)", "scope", metavar="REGEX",
                                 factory=list)
    max_hops: int = setting(20, "hops from a seed", "scope")
    max_trans_hops: int = setting(1, "embeds (images, scripts, styles) this many hops off scope", "scope")
    # robots, dedup, writing
    robots: str = setting("obey", "robots.txt: obey it and page meta robots, robots.txt only, or ignore it",
                          "robots, dedup, WARC", choices=("obey", "robotsTxtOnly", "ignore"))
    dedup: str = setting("revisit", "identical payloads: revisit records, write in full, or write nothing",
                         "robots, dedup, WARC", choices=("revisit", "write", "skip"))
    dedup_min_size: int = setting(256, "payloads smaller than this are written in full", "robots, dedup, WARC",
                                  metavar="BYTES")
    digest: str = setting("sha1", "digest algorithm of the WARC records", "robots, dedup, WARC",
                          choices=("sha1", "sha256", "blake3"))
    warc_max_size: int = setting(1_000_000_000, "start a new WARC file past this size", "robots, dedup, WARC",
                                 metavar="BYTES")
    compression: str = setting("gzip", "one gzip member per record, zstd frames, or none", "robots, dedup, WARC",
                               choices=("gzip", "zstd", "none"))
    prefix: str = setting("WARCHIVE", "WARC file name prefix", "robots, dedup, WARC")
    fsync: bool = setting(True, "do not fsync closed WARC files (tests)", "robots, dedup, WARC", flag="--no-fsync",
                          negate=True)
    # fetching
    user_agent: str = setting(f"warchive/{__version__} (+https://github.com/warchive)",
                              "the User-Agent header", "fetching", metavar="STRING")
    from_: Optional[str] = setting(None, "the From header: who to write to", "fetching", flag="--from",
                                   metavar="EMAIL")
    concurrency: int = setting(8, "fetches at once", "fetching", short="-c")
    resolve: Dict[str, str] = setting(None, "send HOST (or *.DOMAIN) to IP instead of asking DNS "
                                            "(tests, local crawls; repeatable)", "fetching", metavar="HOST=IP",
                                      factory=dict)
    port_map: Dict[str, int] = setting(None, "connect to the second port for URLs of the first "
                                             "(a test server on 80=8123; repeatable)", "fetching",
                                       metavar="PORT=PORT", factory=dict)
    allow_addresses: List[str] = setting(None, "also connect to addresses in CIDR (10.0.0.0/8, 127.0.0.1): "
                                               "without it loopback, private, link-local and other "
                                               "non-public addresses are refused, a seed's too "
                                               "(repeatable)", "fetching", flag="--allow-address",
                                         metavar="CIDR", factory=list)
    connect_timeout: float = 20.0
    read_timeout: float = setting(30.0, "read timeout in seconds", "fetching", flag="--timeout",
                                  metavar="SECONDS")
    total_timeout: float = 300.0
    max_size: Optional[int] = setting(100 << 20, "body bytes kept per URL; more is cut, and the record says WARC-Truncated",
                                      "fetching", metavar="BYTES")
    max_retries: int = setting(3, "attempts after a network failure, 429 or 503", "fetching")
    keep_alive: bool = setting(True, "a new connection for every fetch (default: a host's connection is "
                               "reused between its fetches)", "fetching", flag="--no-keep-alive", negate=True)
    # bookkeeping
    seen: str = setting("exact", "the seen set: exact, or a Bloom filter for huge crawls", "bookkeeping",
                        choices=("exact", "bloom"))
    max_urls: Optional[int] = setting(None, "queue at most this many URLs", "bookkeeping")
    revisit_after: Optional[float] = setting(None, "fetch each URL again after this long (conditional: a 304 "
                                                   "becomes a revisit)", "bookkeeping", metavar="SECONDS")
    revisits: int = setting(0, "how many times to fetch again, with --revisit-after", "bookkeeping", cli_default=1)
    index_every: float = setting(60.0, "write an index segment this often while crawling", "bookkeeping",
                                 metavar="SECONDS")
    screenshots: bool = setting(False, "render each HTML page in chromium and store a PNG", "bookkeeping")

    def to_json(self) -> Dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "CrawlConfig":
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)

    def politeness(self) -> Politeness:
        if self.politeness_off:
            p = Politeness.off()
            p.crawl_delay_cap = 0.0     # "no delays at all" includes robots.txt's Crawl-delay
        else:
            p = Politeness(delay_factor=self.delay_factor, min_delay=self.min_delay, max_delay=self.max_delay,
                           crawl_delay_cap=self.crawl_delay_cap)
        p.max_retries = self.max_retries
        return p

    def make_scope(self) -> Scope:
        hosts: List[str] = []
        domains: List[str] = []
        if self.scope == "host":
            hosts = [s for s in self.seeds]
        elif self.scope == "domain":
            domains = [surt(s).split(")", 1)[0] + ")" for s in self.seeds]
        elif self.scope != "prefix":
            raise CrawlError(f"scope {self.scope!r}: one of prefix, host, domain")
        return Scope(self.seeds, hosts=hosts, domains=domains, include=self.include, exclude=self.exclude,
                     max_hops=self.max_hops, max_trans_hops=self.max_trans_hops,
                     seeds_as_prefixes=self.scope == "prefix")
