# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Kernel index_build: sorted index lines in, index-segment bytes out.

`SegmentWriter(write, ...)` takes lines one by one (`add`) or from an
iterable (`extend`), checks their order, and hands the file's bytes to
`write` as blocks fill; `finish()` writes the index and footer. The format
and the checks that keep a line from ever being lost are in
csrc/wa_segwrite.h and csrc/wa_segment.h. Encoding, compressing and
verifying a block run without the GIL. This module does no file handling:
warchive.index.segment writes through a temporary file and renames.
"""

from libc.stdint cimport uint8_t, uint32_t, uint64_t
from libc.string cimport memchr
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE, PyBytes_FromStringAndSize, PyBytes_Check

from _lib.wa_common cimport WA_E_TOO_BIG, WA_E_UNSORTED, WA_E_COMPRESS
from _lib.wa_segment cimport *
from _status cimport raise_status

COMPRESSIONS = {"none": WA_SEG_NONE, "deflate": WA_SEG_DEFLATE, "zstd": WA_SEG_ZSTD}
HAVE_ZSTD = bool(wa_seg_have_zstd())
DEFAULT_COMPRESSION = "zstd" if HAVE_ZSTD else "deflate"
DEFAULT_LEVELS = {"none": 0, "deflate": 3, "zstd": 9}
DEFAULT_BLOCK_BYTES = 128 << 10
DEFAULT_RESTART_INTERVAL = 16

cdef enum:
    _WRITE_AT = 1 << 20     # hand bytes to write() in pieces of about this size


cdef class SegmentWriter:
    """SegmentWriter(write, *, block_lines=0, block_bytes=131072, restart_interval=16,
    compression=DEFAULT_COMPRESSION, level=None, source=None)

    write      a callable taking bytes (e.g. a binary file's write)
    block_lines / block_bytes
               a block is closed after this many lines / once its lines reach this
               many bytes (0: no limit on that count; at least one must be set)
    source     the input's name, for error messages
    """
    cdef wa_segw w
    cdef bint ready, finished
    cdef object write
    cdef object source

    def __cinit__(self, write, *, uint64_t block_lines=0, size_t block_bytes=DEFAULT_BLOCK_BYTES,
                  uint32_t restart_interval=DEFAULT_RESTART_INTERVAL, compression=None, level=None,
                  source=None):
        if compression is None:
            compression = DEFAULT_COMPRESSION
        if compression not in COMPRESSIONS:
            raise ValueError(f"compression must be one of {sorted(COMPRESSIONS)}, not {compression!r}")
        if compression == "zstd" and not HAVE_ZSTD:
            raise ValueError("this build has no libzstd: use compression='deflate'")
        if restart_interval < 1:
            raise ValueError("restart_interval must be at least 1")
        if block_lines == 0 and block_bytes == 0:
            raise ValueError("set block_lines or block_bytes")
        if block_bytes > (64 << 20):
            raise ValueError("block_bytes must be at most 64 MiB")
        cdef int lvl = DEFAULT_LEVELS[compression] if level is None else level
        cdef int rc
        if compression == "zstd" and not 1 <= lvl <= 22:
            raise ValueError("zstd level must be 1..22")
        if compression == "deflate" and not 0 <= lvl <= 9:
            raise ValueError("deflate level must be 0..9 (ISA-L uses 0..3)")
        self.write = write
        self.source = source
        rc = wa_segw_init(&self.w, restart_interval, block_lines, block_bytes, COMPRESSIONS[compression], lvl)
        if rc:
            wa_segw_free(&self.w)
            raise_status(rc)
        self.ready = True

    def __dealloc__(self):
        if self.ready:
            wa_segw_free(&self.w)

    cdef int _raise(self, int rc) except -1:
        """Raise the exception of failed status rc: IndexFormatError naming the input and block,
        WriteError naming the byte of the segment being written, MemoryError."""
        if rc == WA_E_TOO_BIG:
            why = "block too large (a line of gigabytes?)"
        else:
            why = (<bytes>self.w.why).decode() if self.w.why != NULL else f"status {rc}"
        return raise_status(rc, self.source, self.w.file_off if rc == WA_E_COMPRESS else self.w.nblocks, why)

    cdef int _emit(self, bint force) except -1:
        if self.w.out.len and (force or self.w.out.len >= _WRITE_AT):
            self.write(PyBytes_FromStringAndSize(<char *>self.w.out.p, <Py_ssize_t>self.w.out.len))
            self.w.out.len = 0
        return 0

    cdef int _add(self, const uint8_t *p, size_t n, object line) except -1:
        cdef int rc
        if n and p[n - 1] == 10:
            n -= 1
        if memchr(p, 10, n) != NULL:
            raise ValueError(f"line {self.w.total_lines + 1} holds a line feed; lines end at LF")
        rc = wa_segw_add(&self.w, p, n)
        if rc == 1:
            with nogil:
                rc = wa_segw_flush(&self.w)
            if rc:
                self._raise(rc)
            self._emit(False)
        elif rc == WA_E_UNSORTED:
            prev = PyBytes_FromStringAndSize(<char *>self.w.last.p, <Py_ssize_t>self.w.last.len)
            raise_status(rc, self.source, None, None, "", None, 0,
                         (self.w.total_lines + 1, PyBytes_FromStringAndSize(<char *>p, <Py_ssize_t>n), prev))
        elif rc:
            self._raise(rc)
        return 0

    def add(self, line):
        """Add one line (bytes-like; one trailing LF is dropped)."""
        if not self.ready or self.finished:
            raise ValueError("writer is finished")
        cdef const uint8_t[:] view
        if PyBytes_Check(line):
            self._add(<const uint8_t *>PyBytes_AS_STRING(line), <size_t>PyBytes_GET_SIZE(line), line)
        else:
            view = memoryview(line).cast("B")
            if view.shape[0]:
                self._add(&view[0], <size_t>view.shape[0], line)
            else:
                self._add(<const uint8_t *>b"", 0, line)

    def extend(self, lines):
        """Add every line of an iterable (a binary file works: its lines end at LF)."""
        if not self.ready or self.finished:
            raise ValueError("writer is finished")
        cdef const uint8_t[:] view
        for line in lines:
            if PyBytes_Check(line):
                self._add(<const uint8_t *>PyBytes_AS_STRING(line), <size_t>PyBytes_GET_SIZE(line), line)
            else:
                self.add(line)

    def finish(self):
        """Write the last block, the index and the footer; returns counts (dict)."""
        if not self.ready or self.finished:
            raise ValueError("writer is finished")
        cdef int rc
        with nogil:
            rc = wa_segw_finish(&self.w)
        if rc:
            self._raise(rc)
        self._emit(True)
        self.finished = True
        return self.stats

    @property
    def stats(self):
        """lines, blocks, bytes written so far, lines stored structured / raw,
        blocks stored all-raw because their structured form failed to verify."""
        return {
            "lines": self.w.total_lines,
            "blocks": self.w.nblocks,
            "bytes": self.w.file_off,
            "structured": self.w.n_struct,
            "raw": self.w.n_raw,
            "raw_blocks": self.w.raw_blocks,
        }
