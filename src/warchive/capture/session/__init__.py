"""The session database: an append-only journal of what happened to every URL of a crawl session.

docs/format.md ("Session journals") specifies the journal and its sidecar index.
This package writes and reads journals; it must not fetch, write WARCs or decide
dedup: those call it.
"""

from .reader import (DEFAULT_FSYNC, DUPLICATE, FORMAT_VERSION, KINDS, Entry, Head, Hop, Parsed, Session,
                     SessionDB, SessionIndex, SessionWarning, UrlRecord, build_index, decode_entry, index_key,
                     index_state, live_writer, lock_is_live, lookup, parse_journal, read_index_header, read_lock,
                     read_session)

__all__ = ["DEFAULT_FSYNC", "DUPLICATE", "FORMAT_VERSION", "KINDS", "Entry", "Head", "Hop", "Parsed", "Session",
           "SessionDB", "SessionIndex", "SessionWarning", "UrlRecord", "build_index", "decode_entry", "index_key",
           "index_state", "live_writer", "lock_is_live", "lookup", "parse_journal", "read_index_header",
           "read_lock", "read_session"]
