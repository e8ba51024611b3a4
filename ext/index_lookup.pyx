# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Kernel index_lookup: lines of an mmap'd index segment, by range.

`Segment(path)` maps the file, checks header, footer and index on open
(csrc/wa_segment.h), and answers `range(start, stop)` with the lines
start <= line < stop (bytewise). Blocks are checked (CRC-32) and decoded on
first use and kept in a bounded LRU cache of decoded blocks; lines are
always copied out as bytes, never handed out as views of the map, and every
call after `close()` raises ValueError. The file's descriptor is kept: a block
is read from the map only while the file still holds it (one fstat per block
decoded), so a segment cut short while open raises IndexFormatError naming the
block and its offset instead of killing the process with SIGBUS.

Lookups hold the GIL: an exact lookup takes a few microseconds, less than
releasing and taking the GIL back would cost, and the block cache is shared
by every caller of a Segment without a lock.
"""

from libc.stdint cimport uint8_t, uint64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset
from posix.stat cimport struct_stat, fstat
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE, PyBytes_FromStringAndSize, PyBytes_Check
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE
from cpython.list cimport PyList_Append

from _lib.wa_common cimport WA_EOF, WA_E_SHRUNK, WA_E_UNSUPPORTED
from _lib.wa_segment cimport *
from _status cimport raise_status

import mmap as _mmap
import os

from warchive.errors import IndexFormatError

COMPRESSION_NAMES = {WA_SEG_NONE: "none", WA_SEG_DEFLATE: "deflate", WA_SEG_ZSTD: "zstd"}
DEFAULT_CACHE_BYTES = 32 << 20

cdef enum:
    _KEY_STACK = 1024


cdef inline bytes _as_bytes(object b, str what):
    """b as bytes (str: UTF-8; any buffer: copied); raises TypeError for anything else."""
    if PyBytes_Check(b):
        return <bytes>b
    if isinstance(b, str):
        return (<str>b).encode("utf-8")
    try:
        return bytes(memoryview(b))
    except TypeError:
        raise TypeError(f"{what} must be bytes, not {type(b).__name__}") from None


cdef class Segment:
    """Segment(path, *, cache_bytes=32 MiB): an index segment opened by mmap.

    Raises IndexFormatError (naming the file, and the block when one is at
    fault) when the file is not a whole, undamaged segment; a damaged block
    is found when it is first read.
    """
    cdef wa_seg_reader r
    cdef wa_seg_it it            # scratch iterator of lookup() and range_list()
    cdef Py_buffer view
    cdef bint have_view, is_open
    cdef int fd                  # the file (the map's own descriptor is not reachable): fstat'ed
    cdef object mm
    cdef readonly object path

    def __cinit__(self, path, *, size_t cache_bytes=DEFAULT_CACHE_BYTES):
        memset(&self.r, 0, sizeof(self.r))
        memset(&self.it, 0, sizeof(self.it))
        self.fd = -1
        self.path = os.fspath(path)
        with open(self.path, "rb") as f:
            try:
                self.mm = _mmap.mmap(f.fileno(), 0, access=_mmap.ACCESS_READ)
            except ValueError:
                if os.fstat(f.fileno()).st_size == 0:
                    raise IndexFormatError(self.path, None, "empty file: not an index segment") from None
                raise
            self.fd = os.dup(f.fileno())
        PyObject_GetBuffer(self.mm, &self.view, PyBUF_SIMPLE)
        self.have_view = True
        cdef int rc = wa_seg_open(&self.r, <const uint8_t *>self.view.buf, <size_t>self.view.len, cache_bytes)
        if rc:
            try:
                self._raise(rc)
            finally:
                self._release()
        self.r.fd = self.fd
        self.is_open = True

    def __dealloc__(self):
        self._release()

    cdef int _release(self) except -1:
        """Unmap and free everything; returns 0 (an error closing the map is ignored)."""
        wa_seg_it_free(&self.it)
        memset(&self.it, 0, sizeof(self.it))
        wa_seg_close(&self.r)
        if self.have_view:
            PyBuffer_Release(&self.view)
            self.have_view = False
        if self.mm is not None:
            try:
                self.mm.close()
            except Exception:
                pass
            self.mm = None
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        self.is_open = False
        return 0

    def close(self):
        """Unmap the file. Every later call, and every open iterator, raises ValueError."""
        self._release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def closed(self):
        return not self.is_open

    cdef int _check(self) except -1:
        if not self.is_open:
            raise ValueError("I/O operation on a closed segment")
        return 0

    cdef int _whole(self) except -1:
        """IndexFormatError if the file is shorter now than when it was mapped (for reads of the
        index region at its end, which no block check covers)."""
        cdef struct_stat st
        if self.fd >= 0 and fstat(self.fd, &st) == 0 and <size_t>st.st_size < self.r.size:
            raise IndexFormatError(self.path, None, f"the file was cut short while open: {st.st_size} bytes "
                                   f"now, {self.r.size} when opened (rebuild it from its CDXJ or WARCs)")
        return 0

    cdef int _raise(self, int rc) except -1:
        """Raise the exception of failed status rc: IndexFormatError naming the file and the block
        at fault, UnsupportedFormatError, MemoryError."""
        if rc >= 0:
            return 0
        if rc == WA_E_SHRUNK:
            b = self.r.err_block
            self.r.why = NULL
            self.r.err_block = -1
            return raise_status(rc, self.path, b, f"the file was cut short while open: block {b} at byte "
                                f"{self.r.boff[b]} (+{self.r.bdisk[b]}) is past its end now, "
                                f"{os.fstat(self.fd).st_size} of {self.r.size} bytes left "
                                "(rebuild it from its CDXJ or WARCs)")
        why = (<bytes>self.r.why).decode() if self.r.why != NULL else f"status {rc}"
        block = self.r.err_block if self.r.err_block >= 0 else None
        self.r.why = NULL
        self.r.err_block = -1
        if rc == WA_E_UNSUPPORTED:
            return raise_status(rc, None, None, f"{self.path}: {why} (install libzstd-dev and reinstall warchive)")
        return raise_status(rc, self.path, block, why + " (rebuild it from its CDXJ or WARCs)")

    def __len__(self):
        self._check()
        return self.r.nlines

    @property
    def first_key(self):
        """The first line of the segment (bytes; None when it is empty)."""
        self._check()
        self._whole()
        if self.r.nlines == 0:
            return None
        return PyBytes_FromStringAndSize(<const char *>self.r.first, <Py_ssize_t>self.r.first_len)

    @property
    def last_key(self):
        """The last line of the segment (bytes; None when it is empty)."""
        self._check()
        self._whole()
        if self.r.nlines == 0:
            return None
        return PyBytes_FromStringAndSize(<const char *>self.r.last, <Py_ssize_t>self.r.last_len)

    @property
    def compression(self):
        self._check()
        return COMPRESSION_NAMES[self.r.comp]

    @property
    def block_count(self):
        self._check()
        return self.r.nblocks

    @property
    def cache_info(self):
        """(hits, misses, bytes held, limit) of the decoded-block cache."""
        self._check()
        return (self.r.hits, self.r.misses, self.r.cache_used, self.r.cache_limit)

    def blocks(self):
        """[(first_key, line_count)] per block, for paged queries. first_key is a prefix
        of the block's first line: its "KEY TS" head, longer only when the block before
        ends with a line of the same head."""
        self._check()
        cdef list out = []
        cdef uint64_t b
        for b in range(self.r.nblocks):
            out.append((PyBytes_FromStringAndSize(<const char *>self.r.seps + self.r.sep_off[b],
                                                  <Py_ssize_t>(self.r.sep_off[b + 1] - self.r.sep_off[b])),
                        self.r.bnl[b]))
        return out

    cdef list _collect(self, wa_seg_it *it, Py_ssize_t limit, bint one_block):
        """Up to limit lines (-1: all) from it; raises IndexFormatError (or MemoryError) at a bad block."""
        cdef list out = []
        cdef int rc
        while limit != 0:
            rc = wa_seg_it_next(&self.r, it, one_block)
            if rc == WA_EOF:
                break
            if rc:
                it.have = 0
                self._raise(rc)
            PyList_Append(out, PyBytes_FromStringAndSize(<const char *>it.c.out.p, <Py_ssize_t>it.c.out.len))
            limit -= 1
        it.have = 0
        return out

    cdef list _range_list(self, const uint8_t *q, size_t qn, const uint8_t *s, size_t sn, bint has_stop,
                          Py_ssize_t limit):
        """The lines q <= line < s (no bound without has_stop), as _collect; raises as _collect."""
        self.it.stop = s if has_stop else NULL
        self.it.stop_len = sn
        cdef int rc = wa_seg_it_start(&self.r, &self.it, q, qn)
        if rc:
            self.it.have = 0
            self._raise(rc)
        return self._collect(&self.it, limit, False)

    def lookup(self, key):
        """The lines whose key (the text before the first space) is exactly ``key``:
        ``list(self.range(key + b" ", key + b"!"))`` in one call."""
        self._check()
        cdef bytes k = _as_bytes(key, "key")
        cdef size_t n = <size_t>PyBytes_GET_SIZE(k)
        cdef uint8_t stack[2 * _KEY_STACK]
        cdef uint8_t *buf = stack
        if n >= _KEY_STACK:
            buf = <uint8_t *>malloc(2 * (n + 1))
            if buf == NULL:
                raise MemoryError()
        try:
            memcpy(buf, PyBytes_AS_STRING(k), n)
            buf[n] = 32   # " "
            memcpy(buf + n + 1, PyBytes_AS_STRING(k), n)
            buf[2 * n + 1] = 33   # "!"
            return self._range_list(buf, n + 1, buf + n + 1, n + 1, True, -1)
        finally:
            if buf != stack:
                free(buf)

    def range_list(self, start, stop=None, Py_ssize_t limit=-1):
        """``list(self.range(start, stop))``, at most ``limit`` lines (-1: all)."""
        self._check()
        cdef bytes a = _as_bytes(start if start is not None else b"", "start")
        cdef bytes z = _as_bytes(stop, "stop") if stop is not None else None
        return self._range_list(<const uint8_t *>PyBytes_AS_STRING(a), <size_t>PyBytes_GET_SIZE(a),
                                <const uint8_t *>PyBytes_AS_STRING(z) if z is not None else NULL,
                                <size_t>PyBytes_GET_SIZE(z) if z is not None else 0, z is not None, limit)

    def range(self, start=b"", stop=None):
        """Iterator over the lines with start <= line < stop (bytewise; stop None: to the end)."""
        self._check()
        return RangeIter(self, _as_bytes(start if start is not None else b"", "start"),
                         _as_bytes(stop, "stop") if stop is not None else None)

    def __iter__(self):
        return self.range(b"", None)

    def block_lines(self, uint64_t block):
        """Every line of block ``block`` (a page of a paged query)."""
        self._check()
        if block >= self.r.nblocks:
            raise IndexError(f"block {block} of {self.r.nblocks}")
        self.it.stop = NULL
        cdef int rc = wa_seg_it_start_block(&self.r, &self.it, block)
        if rc:
            self.it.have = 0
            self._raise(rc)
        return self._collect(&self.it, -1, True)

    def verify(self):
        """Read, check and decode every block, past the cache; returns the number of lines.
        Raises IndexFormatError at the first damaged block."""
        self._check()
        cdef uint64_t b
        cdef int rc
        for b in range(self.r.nblocks):
            rc = wa_seg_check_block(&self.r, b, &self.it.c)
            if rc:
                self._raise(rc)
        return self.r.nlines


cdef class RangeIter:
    """Lines start <= line < stop of a Segment, block by block."""
    cdef Segment seg
    cdef wa_seg_it it
    cdef bytes stop
    cdef bint started

    def __cinit__(self, Segment seg, bytes start, bytes stop):
        memset(&self.it, 0, sizeof(self.it))
        self.seg = seg
        self.stop = stop
        if stop is not None:
            self.it.stop = <const uint8_t *>PyBytes_AS_STRING(stop)
            self.it.stop_len = <size_t>PyBytes_GET_SIZE(stop)
        cdef int rc = wa_seg_it_start(&seg.r, &self.it, <const uint8_t *>PyBytes_AS_STRING(start),
                                      <size_t>PyBytes_GET_SIZE(start))
        if rc:
            self.it.have = 0
            seg._raise(rc)

    def __dealloc__(self):
        wa_seg_it_free(&self.it)

    def __iter__(self):
        return self

    def __next__(self):
        self.seg._check()
        cdef int rc = wa_seg_it_next(&self.seg.r, &self.it, 0)
        if rc == WA_EOF:
            raise StopIteration
        if rc:
            self.it.have = 0
            self.seg._raise(rc)
        return PyBytes_FromStringAndSize(<const char *>self.it.c.out.p, <Py_ssize_t>self.it.c.out.len)
