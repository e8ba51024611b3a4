"""warchive: a web archive engine (WARC/ARC reading, CDXJ indexing) with Cython kernels."""

__version__ = "0.1.0"
