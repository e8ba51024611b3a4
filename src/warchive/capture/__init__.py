"""Capture: fetching politely and writing what was fetched (frontier, dedup, session database)."""
