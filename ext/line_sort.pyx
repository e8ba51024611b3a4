# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Sort the lines of a buffer, and merge sorted streams of lines, bytewise (as ``LC_ALL=C sort -u``).

The work is done by the C core in csrc/wa_sort.h with the GIL released; this
module moves buffers in, passes file descriptors or Python callables for
input and output, and turns the core's status into exceptions. It must not
decide run sizes, file names or temporary files: src/warchive/index/sort.py
does.

Inputs and outputs are either an ``int`` file descriptor (read(2)/write(2) in
C, the GIL taken only to check for signals once per buffer) or a Python
object: ``readinto`` (or ``read``) for sources, read through ext/_pyread.pxd, a ``write(bytes)``
callable for the output.
"""

from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.exc cimport PyErr_CheckSignals
from cpython.ref cimport PyObject
from libc.errno cimport errno, EINTR
from libc.stdint cimport uint8_t, uint64_t
from libc.stdlib cimport malloc, free
from posix.unistd cimport read, write

from _lib.wa_common cimport WA_OK, WA_E_UNSORTED, WA_E_TOO_BIG
from _lib.wa_sort cimport (
    WA_SORT_MAX_LINE,
    wa_write_fn, wa_fill_fn, wa_out, wa_out_init, wa_out_free, wa_out_flush,
    wa_line, wa_count_lines, wa_index_lines, wa_sort_lines,
    wa_msrc, wa_merge, wa_merge_init, wa_merge_free, wa_merge_run,
)

from _pyread cimport py_read, py_keep, py_kept
from _status cimport raise_status

import os

MAX_CHUNK = (1 << 32) - 1   # records hold 32-bit offsets
MAX_LINE = WA_SORT_MAX_LINE


cdef struct io_ctx:
    int fd              # >= 0: read(2)/write(2) on it without the GIL
    PyObject *box       # [source or write callable (None for an fd), exception] (_pyread.pxd), borrowed


# The C core's callbacks (and their helpers) return 0, or -1 with the exception stored in the
# ctx's box (py_keep) for the def edge to raise (_raise) once the core has returned WA_E_CALLBACK.

cdef int _signals(io_ctx *c) noexcept with gil:
    try:
        PyErr_CheckSignals()
        return 0
    except BaseException as e:
        return py_keep(<list>c.box, e)


cdef int _os_error(io_ctx *c, int err) noexcept with gil:
    return py_keep(<list>c.box, OSError(err, os.strerror(err)))


cdef int _fill(void *vctx, uint8_t *dst, size_t n, size_t *got) noexcept nogil:
    cdef io_ctx *c = <io_ctx *>vctx
    cdef ssize_t k
    if c.fd >= 0:
        while True:
            k = read(c.fd, dst, n)
            if k < 0 and errno == EINTR:
                continue
            break
        if k < 0:
            return _os_error(c, errno)
        got[0] = <size_t>k
        return _signals(c)
    if _signals(c):
        return -1
    return py_read(<void *>c.box, dst, n, got)


cdef int _write(void *vctx, const uint8_t *p, size_t n) noexcept nogil:
    cdef io_ctx *c = <io_ctx *>vctx
    cdef ssize_t k
    if c.fd >= 0:
        while n:
            k = write(c.fd, p, n)
            if k < 0:
                if errno == EINTR:
                    continue
                return _os_error(c, errno)
            p += k
            n -= <size_t>k
        return _signals(c)
    with gil:
        try:
            PyErr_CheckSignals()
            (<list>c.box)[0](PyBytes_FromStringAndSize(<const char *>p, <Py_ssize_t>n))
            return 0
        except BaseException as e:
            return py_keep(<list>c.box, e)


cdef list _set_ctx(io_ctx *c, object target, list boxes):
    """Point c at an fd or at target (a source, or a write callable) through a new box, which
    is appended to boxes (which keeps it, and target, alive); the box."""
    box = [None if isinstance(target, int) else target, None]
    boxes.append(box)
    c.box = <PyObject *>box
    c.fd = <int>target if isinstance(target, int) else -1
    return box


cdef int _raise(int rc, list boxes) except -1:
    """Raise for a failed status: the exception a callback stored in one of boxes, or the
    status's own."""
    kept = None
    for box in boxes:
        e = py_kept(box)
        if kept is None:
            kept = e
    return raise_status(rc, None, None, None, "", kept)


def count_lines(const uint8_t[::1] buf, Py_ssize_t n):
    """The number of lines in buf[:n] (LFs, plus one for a last line without LF)."""
    if n < 0 or n > buf.shape[0]:
        raise ValueError("n out of range")
    if n == 0:
        return 0
    with nogil:
        k = wa_count_lines(&buf[0], <size_t>n)
    return k


def sort_chunk(const uint8_t[::1] buf, Py_ssize_t n, out, int threads=1,
               Py_ssize_t max_lines=0, Py_ssize_t outbuf=1 << 20):
    """Sort the lines of buf[:n] and write them, repeats once, to ``out`` (fd or write callable).

    buf[:n] should end at an LF or at the end of input (a last line without LF
    counts as a line). With max_lines > 0 at most that many lines are sorted
    (to bound the 16 bytes a line of the index). Returns (used, lines_in,
    lines_out): buf[:used] were the lines taken; the caller keeps the rest.
    """
    cdef size_t count, k = 0, used = 0
    cdef wa_line *a = NULL
    cdef wa_out o
    cdef io_ctx c
    cdef int rc = WA_OK
    cdef list boxes = []
    cdef const uint8_t *p
    if n < 0 or n > buf.shape[0]:
        raise ValueError("n out of range")
    if <size_t>n > <size_t>MAX_CHUNK:
        raise ValueError("a chunk must be smaller than 4 GiB")
    if n == 0:
        return (0, 0, 0)
    p = &buf[0]
    _set_ctx(&c, out, boxes)
    with nogil:
        count = wa_count_lines(p, <size_t>n)
    if max_lines > 0 and count > <size_t>max_lines:
        count = <size_t>max_lines
    a = <wa_line *>malloc((count if count else 1) * sizeof(wa_line))
    if a == NULL:
        raise MemoryError()
    if wa_out_init(&o, <wa_write_fn>_write, &c, <size_t>outbuf) != WA_OK:
        free(a)
        raise MemoryError()
    try:
        with nogil:
            k = wa_index_lines(p, <size_t>n, a, count, &used)
            rc = wa_sort_lines(p, a, k, threads, &o)
            if rc == WA_OK:
                rc = wa_out_flush(&o)
        if rc != WA_OK:
            _raise(rc, boxes)
        return (used, k, o.lines)
    finally:
        free(a)
        wa_out_free(&o)


def merge(sources, out, list names=None, bint check=False,
          Py_ssize_t bufsize=1 << 20, Py_ssize_t outbuf=1 << 20):
    """Merge sorted sources into ``out``, identical lines once; returns (lines_out, repeats_dropped).

    Each source is an fd or an object with ``readinto`` (or ``read``); ``out`` an fd or a
    write callable. With ``check`` a source line that sorts before the line
    above it raises UnsortedInputError naming ``names[i]`` and the line number.
    """
    cdef Py_ssize_t n = len(sources), i
    cdef wa_merge m
    cdef wa_out o
    cdef io_ctx oc
    cdef io_ctx *ctxs = NULL
    cdef int rc = WA_OK
    cdef list boxes = []
    cdef wa_msrc *s
    if names is not None and len(names) != n:
        raise ValueError("names must match sources")
    ctxs = <io_ctx *>malloc((n if n else 1) * sizeof(io_ctx))
    if ctxs == NULL:
        raise MemoryError()
    rc = wa_merge_init(&m, <size_t>n, <size_t>bufsize, check)
    if rc == WA_OK:
        rc = wa_out_init(&o, <wa_write_fn>_write, &oc, <size_t>outbuf)
    if rc != WA_OK:
        wa_merge_free(&m)
        free(ctxs)
        raise MemoryError()
    try:
        for i in range(n):
            _set_ctx(&ctxs[i], sources[i], boxes)
            m.src[i].fill = <wa_fill_fn>_fill
            m.src[i].ctx = &ctxs[i]
        _set_ctx(&oc, out, boxes)
        with nogil:
            rc = wa_merge_run(&m, &o)
        if rc == WA_E_UNSORTED or rc == WA_E_TOO_BIG:
            s = &m.src[m.bad_src]
            name = names[m.bad_src] if names is not None else f"<source {m.bad_src}>"
            if rc == WA_E_TOO_BIG:
                raise_status(rc, name, None, f"line {m.bad_lineno} is longer than {MAX_LINE} bytes")
            raise_status(rc, name, None, None, "", None, 0, (
                m.bad_lineno,
                PyBytes_FromStringAndSize(<const char *>s.buf + s.cur, min(s.cur_len, 4096)),
                PyBytes_FromStringAndSize(<const char *>s.buf + s.prev, min(s.prev_len, 4096))))
        if rc != WA_OK:
            _raise(rc, boxes)
        return (o.lines, o.dropped)
    finally:
        wa_out_free(&o)
        wa_merge_free(&m)
        free(ctxs)
