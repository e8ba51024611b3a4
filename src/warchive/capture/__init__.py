"""Capture: fetching the web politely and writing what happened (frontier, dedup, session database)."""
