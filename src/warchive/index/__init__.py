"""Capture indexes: CDXJ/CDX-11 lines from WARC/ARC files (cdx), many files at once (build), sorting (sort)."""
