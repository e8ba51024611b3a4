"""Bulk indexing on Dask distributed: ``index(inputs, out, client=...)`` writes the sorted CDXJ,
the index segment or the ZipNum cluster that one machine writes, byte for byte, from map,
merge and encode tasks that exchange files (warchive.distributed.job explains the stages)."""

from .cluster import local_cluster
from .job import DEFAULT_TARGET_BYTES, KINDS, index, write_summary
from .progress import Display, summary_line

__all__ = ["index", "local_cluster", "write_summary", "Display", "summary_line", "KINDS", "DEFAULT_TARGET_BYTES"]
