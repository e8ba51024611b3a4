# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Kernel gzip_members: find gzip member boundaries exactly and inflate members.

`Reader` wraps the C core (ext/csrc/wa_gzip.h) over a file path, a seekable
file object (read with pread on its descriptor, from its current position), a
random-access object with no descriptor (`pread(n, offset)` or
`preadinto(buffer, offset)`, and `size`: a stored file, read as a file is) or
any object with `readinto`/`read` (read forward only). It hands out member heads,
streams member bytes, and finishes members either by trusting Wget's `sl` extra
field or by inflating and checking CRC-32 and ISIZE. The GIL is released while
C works; errors become ArchiveError children naming file and byte offset.

It does not parse WARC records: that is warchive.warc's job.
"""

from libc.stdint cimport uint8_t, int64_t, uint64_t
from cpython.bytes cimport PyBytes_FromStringAndSize

from _lib.wa_common cimport WA_OK, WA_EOF, WA_E_IO, WA_E_TRUNCATED
from _lib.wa_gzip cimport *
from _lib.wa_codec cimport wa_inflate_libs
from _pyread cimport py_read, py_pread, py_kept
from _status cimport raise_status, status_table

import io
import os
import stat


cdef size_t HEAD_WINDOW = 64 * 1024

FORMAT_PLAIN = 0
FORMAT_GZIP = 1
FORMAT_ZSTD = 2


def inflate_libraries():
    """The inflate libraries the kernels were built with, e.g. 'zlib 1.2.13, isa-l, libdeflate 1.14'."""
    return wa_inflate_libs().decode()


def status_exceptions():
    """{status code: exception class} of every failure code of the C cores: the one table every
    kernel raises by (ext/_status.pxd). WA_E_CALLBACK's class is BaseException: a callback's own
    exception is raised as it is."""
    return status_table()


def _random_access(source):
    """Is source read by position (pread or preadinto, and a size) though it has no descriptor?"""
    return (hasattr(source, "pread") or hasattr(source, "preadinto")) and isinstance(getattr(source, "size", None), int)


cdef class Reader:
    """Bytes of an archive file, raw or member by member.

    Reader(source, offset=None, verify=False, window=1 MiB, length=0)
      source: a path, a binary file object, or a random-access object with
      `pread(n, offset)` (or `preadinto(buffer, offset)`) and `size` but no descriptor.
      Offsets are absolute in the file; for a file object reading starts at its
      current position.
      length: how long the record (or gzip member) at offset is, when an index says
      (0: unknown): it is read in one piece, a member inflated whole by libdeflate
      at its first read. A wrong length costs time, never bytes: the member is then
      read as any other.
    """
    cdef wa_source src
    cdef wa_gz g
    cdef bint src_ok, gz_ok
    cdef object _fobj
    cdef list _box         # [source, exception] of a Python object read through py_read or py_pread
    cdef bint _positional  # _box's source is a random-access object (py_pread)
    cdef readonly object path
    cdef int fd
    cdef bint own_fd, own_fobj
    cdef readonly int format
    cdef readonly int64_t start
    cdef readonly bint verify

    def __cinit__(self, source, offset=None, bint verify=False, size_t window=1 << 20, uint64_t length=0):
        cdef int64_t size = -1
        cdef int rc
        cdef wa_read_fn fn = NULL
        self.fd = -1
        self.verify = verify
        if isinstance(source, (str, bytes, os.PathLike)):
            self.path = os.fspath(source)
            self.start = 0 if offset is None else offset
            if stat.S_ISREG(os.stat(self.path).st_mode):
                self.fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
                self.own_fd = True
            else:   # a FIFO, /dev/stdin, a device: read forward (pread fails there with ESPIPE)
                self._fobj = io.FileIO(self.path, "rb")
                self.own_fobj = True
                self._box = [self._fobj, None]
                fn = py_read
        else:
            self._fobj = source
            self.path = getattr(source, "name", None)
            if not isinstance(self.path, (str, bytes)):
                self.path = None
            fd = -1
            try:
                if source.seekable():
                    fd = source.fileno()
            except Exception:
                fd = -1
            if fd >= 0:
                self.fd = fd
                self.start = source.tell() if offset is None else offset
            elif _random_access(source):
                self._box = [source, None]
                self._positional = True
                size = source.size
                self.start = (source.tell() if hasattr(source, "tell") else 0) if offset is None else offset
            else:
                self.start = 0 if offset is None else offset
                self._box = [source, None]
                fn = py_read
        if self.fd >= 0:
            size = os.fstat(self.fd).st_size
        rc = wa_src_init(&self.src, self.fd, size, fn, <void *>self._box, self.start, window, 64 << 20)
        raise_status(rc)
        if self._positional:
            self.src.preadfn = py_pread
        self.src_ok = True
        rc = wa_gz_init(&self.g, &self.src)
        self.gz_ok = True
        raise_status(rc)
        if length and wa_src_random(&self.src):
            self.src.ahead = length
            self.g.hint_off = self.start
            self.g.hint_len = length
        self.format = self._detect()

    def __dealloc__(self):
        if self.gz_ok:
            wa_gz_free(&self.g)
        if self.src_ok:
            wa_src_free(&self.src)
        if self.own_fd and self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def close(self):
        if self.own_fd and self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
            self.src.fd = -2  # any later read fails instead of reading another file
        if self.own_fobj and self._fobj is not None:
            self._fobj.close()
        if self._positional:
            self._box[0] = None   # any later read fails (the object is the caller's to close)

    cdef int _detect(self) except -1:
        cdef const uint8_t *p
        cdef size_t avail
        cdef int rc
        with nogil:
            rc = wa_src_get(&self.src, self.start, 4, &p, &avail)
        self._check(rc, self.start)
        if avail >= 2 and p[0] == 0x1f and p[1] == 0x8b:
            return FORMAT_GZIP
        if avail >= 4 and ((p[0] == 0x28 and p[1] == 0xb5 and p[2] == 0x2f and p[3] == 0xfd) or
                           (p[0] & 0xf0 == 0x50 and p[1] == 0x2a and p[2] == 0x4d and p[3] == 0x18)):
            return FORMAT_ZSTD
        return FORMAT_PLAIN

    cdef int _check(self, int rc, int64_t off) except -1:
        if rc >= 0:
            return 0
        if rc == WA_E_IO:   # the disk failed (EIO): a ReadError naming the byte, as damage is named
            return raise_status(rc, self.path, self.src.err_off, None, "", None, self.src.err_no)
        why = (self.g.why or b"gzip error").decode()
        at = self.g.err_off if self.g.why != NULL else off
        remedy = ("the file was cut short; --skip-errors indexes what comes before" if rc == WA_E_TRUNCATED
                  else "the member is corrupt; --skip-errors skips it")
        return raise_status(rc, self.path, at, why, remedy, py_kept(self._box))

    # ------------------------------------------------------------------ raw bytes
    def read_at(self, int64_t off, size_t n):
        """Up to n bytes of the file at absolute offset off (fewer at its end)."""
        cdef const uint8_t *p
        cdef size_t avail
        cdef int rc
        with nogil:
            rc = wa_src_get(&self.src, off, n, &p, &avail)
        self._check(rc, off)
        if avail > n:
            avail = n
        return PyBytes_FromStringAndSize(<const char *>p, avail)

    def at_end(self, int64_t off):
        """True when the input has nothing at off."""
        cdef const uint8_t *p
        cdef size_t avail
        cdef int rc
        with nogil:
            rc = wa_src_get(&self.src, off, 1, &p, &avail)
        self._check(rc, off)
        return avail == 0

    @property
    def seekable(self):
        """True when reads go through pread (a path, a file object with a descriptor, a random-access
        object) and may go back; False for a stream read forward, which cannot come back to a
        member's start."""
        return bool(wa_src_random(&self.src))

    @property
    def floor(self):
        """The first offset that can still be read: 0 for a file; for a stream, what it still
        holds of the bytes before the last offset asked for (about 68 KiB)."""
        return 0 if wa_src_random(&self.src) else self.src.base

    @property
    def size(self):
        """File size, or None for a stream whose end is not reached yet."""
        return self.src.size if self.src.size >= 0 else None

    # ------------------------------------------------------------------ gzip members
    def member_begin(self, int64_t off):
        """Start the gzip member at off; False when the input ends exactly there."""
        cdef int rc
        with nogil:
            rc = wa_gz_begin(&self.g, off)
        if rc == WA_EOF:
            return False
        self._check(rc, off)
        return True

    def member_head(self, size_t n):
        """The first n bytes of the current member (fewer if it is shorter)."""
        cdef int rc
        with nogil:
            rc = wa_gz_head(&self.g, n)
        self._check(rc, self.g.m_off)
        cdef size_t k = self.g.out_len if self.g.out_len < n else n
        return PyBytes_FromStringAndSize(<const char *>self.g.out, k)

    def member_read(self, uint64_t pos, size_t n):
        """Up to n bytes of the current member's data from position pos (b'' at its end).

        Reads within the first 64 KiB of a member that is not streaming yet are
        served in head mode (zlib, everything kept from the start, so they may
        go back); beyond that the member streams forward (ISA-L)."""
        cdef const uint8_t *p
        cdef size_t avail
        cdef int rc
        if self.g.out_start == 0 and self.g.engine <= 1 and pos + n <= HEAD_WINDOW:
            with nogil:
                rc = wa_gz_head(&self.g, pos + n)
            self._check(rc, self.g.m_off)
            if pos >= self.g.out_len:
                return b""
            avail = self.g.out_len - pos
            if avail > n:
                avail = n
            return PyBytes_FromStringAndSize(<const char *>(self.g.out + pos), avail)
        with nogil:
            rc = wa_gz_stream(&self.g, pos, n, &p, &avail)
        self._check(rc, self.g.m_off)
        if avail > n:
            avail = n
        return PyBytes_FromStringAndSize(<const char *>p, avail)

    def member_finish(self):
        """Go to the end of the current member; return its end offset.

        Without verify, a consistent Wget `sl` field is trusted and nothing is
        inflated; otherwise the member is inflated and CRC-32/ISIZE checked."""
        cdef int rc
        cdef int verify = self.verify
        with nogil:
            rc = wa_gz_finish(&self.g, verify)
        self._check(rc, self.g.m_off)
        return self.g.m_end

    def member_whole(self, size_t keep=0):
        """Inflate the whole member (checking CRC-32 and ISIZE); return its end offset."""
        cdef int rc
        with nogil:
            rc = wa_gz_whole(&self.g, keep)
        self._check(rc, self.g.m_off)
        return self.g.m_end

    @property
    def member_offset(self):
        return self.g.m_off

    @property
    def member_end(self):
        """End offset of the current member, or None while unknown."""
        return self.g.m_end if self.g.m_end >= 0 else None

    @property
    def member_done(self):
        return bool(self.g.done)

    @property
    def member_trusted(self):
        """True when the member end came from `sl` without inflating."""
        return bool(self.g.trusted_end)

    @property
    def member_produced(self):
        """Bytes of the current member inflated so far."""
        return self.g.produced

    @property
    def cut_ok(self):
        """Whether the end of the input inside a member's data (or its trailer) ends the member
        (``member_cut``: its data is what inflated) instead of raising TruncatedError."""
        return bool(self.g.cut_ok)

    @cut_ok.setter
    def cut_ok(self, bint value):
        self.g.cut_ok = value

    @property
    def member_cut(self):
        """True when the input ended inside the current member (``cut_ok``): its CRC-32 and size
        went unchecked, and its end is the end of the input."""
        return bool(self.g.cut)

    @property
    def member_sl(self):
        """(compressed, uncompressed) lengths from the member's `sl` field, or None."""
        if self.g.h.has_sl:
            return (self.g.h.sl_clen, self.g.h.sl_ulen)
        return None
