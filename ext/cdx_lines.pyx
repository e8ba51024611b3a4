# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Kernel cdx_lines: the indexer's loop over a WARC file, producing CDXJ / CDX-11 lines.

`LineIndexer(path, ...)` runs ext/csrc/wa_cdx.h with the GIL released and hands
back chunks of finished lines. It stops with SLOW at a record it leaves to the
Python reference (warchive.index.cdx), which indexes that record and sets
`pos` to the next one. It never raises for damaged data (the reference does);
only I/O and memory errors escape from here.
"""

from libc.stdint cimport uint8_t, int64_t, uint64_t
from libc.stdlib cimport free
from libc.string cimport memset
from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING, PyBytes_GET_SIZE

from _lib.wa_common cimport WA_OK, WA_EOF, WA_SLOW, wa_buf_put
from _lib.wa_gzip cimport *
from _lib.wa_cdx cimport *
from _lib.wa_surt cimport WA_SURT_OPT_DEFAULT, WA_SURT_OPT_ALL
from _pyread cimport py_pread, py_kept
from _status cimport raise_status

import os

OK = WA_OK
EOF = WA_EOF
SLOW = WA_SLOW
DEFAULT_SURT_FLAGS = WA_SURT_OPT_DEFAULT


cdef class LineIndexer:
    """LineIndexer(path, filename, cdx11=False, records=None, verify=False, start=0, stop=-1,
                   surt_flags=DEFAULT_SURT_FLAGS)

    path        a file's path, or a random-access object with `pread(n, offset)` (or
                `preadinto(buffer, offset)`) and `size` (a stored file), read by position
    filename    bytes written in the filename field (JSON-escaped already for CDXJ)
    records     None for cdxj-indexer's default selection, "all", or a list of types
    surt_flags  the SURT options of the keys as warchive._ext.surt.surt_flags() gives them
    """
    cdef wa_indexer x
    cdef bint src_ok, gz_ok
    cdef int fd
    cdef object _keep   # bytes objects the C struct points into
    cdef list _pread_box   # [source, exception] of a random-access object (py_pread)
    cdef object path       # what errors name: the path, or the random-access object's name

    def __cinit__(self, path, bytes filename, bint cdx11=False, records=None, bint verify=False,
                  int64_t start=0, int64_t stop=-1, size_t window=1 << 20,
                  unsigned surt_flags=WA_SURT_OPT_DEFAULT):
        cdef int rc
        cdef const uint8_t *p
        cdef size_t avail
        memset(&self.x, 0, sizeof(self.x))
        self.fd = -1
        self.path = os.fspath(path) if isinstance(path, (str, bytes, os.PathLike)) else getattr(path, "name", None)
        self._keep = [filename]
        self.x.cdx11 = cdx11
        self.x.verify = verify
        self.x.fname = <const uint8_t *>PyBytes_AS_STRING(filename)
        self.x.fname_len = PyBytes_GET_SIZE(filename)
        self.x.stop = stop
        self.x.pos = start
        if surt_flags & ~WA_SURT_OPT_ALL:
            raise ValueError(f"surt_flags {surt_flags:#x}: bits outside the SURT options")
        self.x.surt_opts = surt_flags
        if records is None:
            self.x.filter = WA_FILTER_DEFAULT
        elif records == "all":
            self.x.filter = WA_FILTER_ALL
        else:
            types = [t.encode("utf-8") if isinstance(t, str) else bytes(t) for t in records]
            if len(types) > WA_MAX_TYPES:
                raise ValueError(f"at most {WA_MAX_TYPES} record types")
            self._keep.append(types)
            self.x.filter = WA_FILTER_LIST
            self.x.ntypes = len(types)
            for k, t in enumerate(types):
                self.x.types[k] = <const uint8_t *>PyBytes_AS_STRING(t)
                self.x.type_len[k] = PyBytes_GET_SIZE(t)
        if isinstance(path, (str, bytes, os.PathLike)):
            self.fd = os.open(os.fspath(path), os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            size = os.fstat(self.fd).st_size
        else:
            self._pread_box = [path, None]
            size = path.size
        raise_status(wa_src_init(&self.x.src, self.fd, size, NULL, NULL, start, window, 64 << 20))
        if self._pread_box is not None:
            self.x.src.preadfn = py_pread
            self.x.src.ctx = <void *>self._pread_box
        self.src_ok = True
        rc = wa_gz_init(&self.x.g, &self.x.src)
        self.gz_ok = True
        raise_status(rc)
        with nogil:
            rc = wa_src_get(&self.x.src, start, 2, &p, &avail)
        self._check(rc)
        self.x.gz = avail >= 2 and p[0] == 0x1f and p[1] == 0x8b

    def __dealloc__(self):
        if self.gz_ok:
            wa_gz_free(&self.x.g)
        if self.src_ok:
            wa_src_free(&self.x.src)
        wa_buf_put(self.x.out, self.x.out_cap)
        wa_buf_put(self.x.scratch, self.x.scratch_cap)
        if self.fd >= 0:
            os.close(self.fd)

    def run(self, size_t flush_at=1 << 20):
        """Index on; return (status, lines): status OK (more to come), EOF or SLOW."""
        cdef int rc
        with nogil:
            rc = wa_ix_run(&self.x, flush_at)
        chunk = PyBytes_FromStringAndSize(<const char *>self.x.out, self.x.out_len)
        self.x.out_len = 0
        self._check(rc)
        return rc, chunk

    cdef int _check(self, int rc) except -1:
        """0 for a status that is not a failure; else raises its exception: for a failed read a
        ReadError naming the file and byte, for a read callback's failure its own exception."""
        if rc >= 0:
            return 0
        return raise_status(rc, self.path, self.x.src.err_off, None, "", py_kept(self._pread_box), self.x.src.err_no)

    @property
    def gzip(self):
        return bool(self.x.gz)

    @property
    def pos(self):
        """Offset of the next record to index (after SLOW: the record left to Python)."""
        return self.x.pos

    @pos.setter
    def pos(self, int64_t value):
        self.x.pos = value

    @property
    def stats(self):
        """(records read, lines written, records left to Python, bytes inflated)."""
        return (self.x.n_records, self.x.n_lines, self.x.n_slow, self.x.n_inflated)
