"""The settings of a crawl (`CrawlConfig`), apart from the crawler so that reading them is cheap.

`warchive crawl`'s option defaults come from here: the CLI builds the crawl
options from it without paying for the crawler (asyncio, numpy, the fetcher).
It imports only the rule modules whose objects it makes (``politeness``,
``scope``); it must not import the crawler or anything it drives.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional

from .. import __version__
from ..errors import ArchiveError
from ..surt import surt
from .politeness import Politeness
from .scope import Scope

__all__ = ["CrawlConfig", "CrawlError"]


class CrawlError(ArchiveError):
    """A crawl that cannot start or resume (the message says which file and what to do)."""


@dataclass
class CrawlConfig:
    """Everything a crawl is run with; written to ``config.json`` so ``--resume`` needs nothing else."""

    seeds: List[str]
    # politeness (Heritrix's names and defaults)
    delay_factor: float = 5.0
    min_delay: float = 3.0
    max_delay: float = 30.0
    crawl_delay_cap: float = 300.0
    politeness_off: bool = False
    # scope
    scope: str = "prefix"                  # prefix (SURT prefixes of the seeds) | host | domain
    include: List[str] = field(default_factory=list)
    exclude: List[str] = field(default_factory=list)
    max_hops: int = 20
    max_trans_hops: int = 1
    # robots, dedup, writing
    robots: str = "obey"
    dedup: str = "revisit"
    dedup_min_size: int = 256
    digest: str = "sha1"
    warc_max_size: int = 1_000_000_000
    compression: str = "gzip"
    prefix: str = "WARCHIVE"
    fsync: bool = True
    # fetching
    user_agent: str = f"warchive/{__version__} (+https://github.com/warchive)"
    from_: Optional[str] = None
    concurrency: int = 8
    resolve: Dict[str, str] = field(default_factory=dict)      # HOST (or *.DOMAIN) -> IP
    port_map: Dict[str, int] = field(default_factory=dict)     # "80" -> port (test servers)
    connect_timeout: float = 20.0
    read_timeout: float = 30.0
    total_timeout: float = 300.0
    max_size: Optional[int] = 100 << 20
    max_retries: int = 3
    # bookkeeping
    seen: str = "exact"
    max_urls: Optional[int] = None         # stop queueing new URLs after this many were queued
    revisit_after: Optional[float] = None  # fetch each URL again after this many seconds ...
    revisits: int = 0                      # ... this many times (conditional requests: 304 -> revisit)
    index_every: float = 60.0              # seconds between index segments of a running crawl
    screenshots: bool = False

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
