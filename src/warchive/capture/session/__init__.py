"""The session database: an append-only journal of what happened to every URL of a crawl session.

The crawler, the WARC writer's caller and dedup append one *entry* (one JSON object on
one line) as soon as they know a fact; a reader merges them into one ``UrlRecord`` per
original URL (the URL the crawler set out to fetch), whose redirect chain, WARC records,
failures and skip decisions are found by any URL of the chain. docs/format.md ("Session
journals") specifies the journal and its sidecar index.

    schema    what a line is: the version line, ``Entry``, ``Head``, ``KINDS``
    lock      the pid file that marks a journal as being written
    journal   ``SessionDB``, the writer
    parse     journal bytes split into entries (torn tail, damaged lines)
    record    ``UrlRecord`` and ``Hop``: one original URL's entries merged
    reader    ``Session``, ``read_session``: a whole journal in memory
    sidecar   ``SessionIndex``, ``build_index``, ``lookup``: the sorted sidecar index
    report    the tables `warchive session show|failed|skipped|stats` print
    dirs      where a collection's crawl sessions live (``COLL/crawls/ID/``)

This package writes and reads journals; it must not fetch, write WARCs or decide dedup:
those call it.
"""

from .dirs import latest_session, session_dirs
from .journal import DEFAULT_FSYNC, SessionDB
from .lock import live_writer, lock_is_live, read_lock
from .parse import Parsed, parse_journal
from .reader import Session, read_session
from .record import Hop, UrlRecord
from .schema import DUPLICATE, FORMAT_VERSION, KINDS, Entry, Head, SessionWarning, decode_entry
from .sidecar import SessionIndex, build_index, index_key, index_state, lookup, read_index_header

__all__ = ["DEFAULT_FSYNC", "DUPLICATE", "FORMAT_VERSION", "KINDS", "Entry", "Head", "Hop", "Parsed", "Session",
           "SessionDB", "SessionIndex", "SessionWarning", "UrlRecord", "build_index", "decode_entry", "index_key",
           "index_state", "live_writer", "lock_is_live", "lookup", "parse_journal", "read_index_header",
           "read_lock", "read_session", "latest_session", "session_dirs"]
