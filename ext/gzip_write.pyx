# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Kernel gzip_write: raw deflate of a record's block, in the caller's thread or in a C worker.

`Deflater(level).part(data, final, tail=b"")` compresses data then tail as one
raw deflate stream (a part ending in a sync flush when not final).
`DeflateWorker(level, spin_us)` is one C thread with its own compressor:
`post(data, tail)` hands it a block, `result()` waits (without the GIL) for
the final raw deflate stream of data + tail. The WARC writer posts a record's
block, computes its digests meanwhile, and frames the gzip member itself
(ext/csrc/wa_deflate.h says why the worker spins between jobs). A worker
serves one caller at a time; this module knows nothing of gzip or WARC.
"""

from libc.stdint cimport uint8_t
from cpython.bytes cimport PyBytes_FromStringAndSize

from _lib.wa_common cimport WA_OK
from _lib.wa_deflate cimport *
from _status cimport raise_status

import os

from warchive.errors import ArchiveError

cdef const uint8_t[1] _EMPTY


cdef int _check(int rc, size_t n) except -1:
    """0 for WA_OK; else raises MemoryError, or WriteError for a deflate that failed."""
    return raise_status(rc, None, None, f"deflate failed (status {rc}) on {n} bytes")


cdef class Deflater:
    cdef wa_defl d
    cdef readonly int level
    cdef bint ready

    def __cinit__(self, int level=2):
        self.ready = False
        rc = wa_defl_init(&self.d, level)
        raise_status(rc, None, None, f"deflate levels are 0 to 3, not {level}")
        self.level = level
        self.ready = True

    def __dealloc__(self):
        if self.ready:
            wa_defl_free(&self.d)

    def part(self, const uint8_t[::1] data, bint final, const uint8_t[::1] tail=None) -> bytes:
        """Raw deflate of data + tail: the stream's end when final, else a sync-flushed part."""
        cdef const uint8_t *a = &data[0] if data.shape[0] else _EMPTY
        cdef size_t na = data.shape[0]
        cdef const uint8_t *b = _EMPTY
        cdef size_t nb = 0
        cdef int rc
        if tail is not None and tail.shape[0]:
            b = &tail[0]
            nb = tail.shape[0]
        with nogil:
            rc = wa_defl_part(&self.d, a, na, b, nb, final)
        _check(rc, na + nb)
        return PyBytes_FromStringAndSize(<const char *>self.d.out, <Py_ssize_t>self.d.len)


cdef class DeflateWorker:
    cdef wa_dworker w
    cdef bint running, busy
    cdef object _data, _tail      # kept alive while the worker reads them
    cdef size_t _n
    cdef readonly int level
    cdef readonly long pid

    def __cinit__(self, int level=2, long spin_us=300):
        self.running = False
        self.busy = False
        if level < 0 or level > 3:
            raise ValueError(f"deflate levels are 0 to 3, not {level}")
        rc = wa_dw_start(&self.w, level, spin_us)
        raise_status(rc, None, None, f"deflate levels are 0 to 3, not {level}")
        self.running = True
        self.level = level
        self.pid = os.getpid()

    @property
    def busy(self) -> bool:
        return self.busy

    def post(self, data, tail=b"") -> None:
        """Start deflating data + tail (final) in the worker; result() gives the bytes."""
        cdef const uint8_t[::1] dv = data
        cdef const uint8_t[::1] tv = tail
        if self.busy:
            raise ArchiveError("DeflateWorker.post while a job is in flight")
        self._data, self._tail = dv, tv
        self._n = dv.shape[0] + tv.shape[0]
        self.busy = True
        wa_dw_post(&self.w, &dv[0] if dv.shape[0] else _EMPTY, dv.shape[0],
                   &tv[0] if tv.shape[0] else _EMPTY, tv.shape[0], 1)

    def result(self) -> bytes:
        cdef int rc
        if not self.busy:
            raise ArchiveError("DeflateWorker.result without a job")
        with nogil:
            rc = wa_dw_wait(&self.w)
        self.busy = False
        self._data = self._tail = None
        _check(rc, self._n)
        return PyBytes_FromStringAndSize(<const char *>self.w.d.out, <Py_ssize_t>self.w.d.len)

    def close(self) -> None:
        if self.running:
            with nogil:
                wa_dw_stop(&self.w)
            self.running = False
            self.busy = False
            self._data = self._tail = None

    def __dealloc__(self):
        if self.running and self.pid == os.getpid():
            with nogil:
                wa_dw_stop(&self.w)
