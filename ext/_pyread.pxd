# cdef inline helpers shared by the kernels that read a Python object from C: the one read callback
# of the C cores (ext/csrc/wa_source.h's `readfn` and `preadfn`, wa_sort.h's `fill`), and the one
# convention for an exception a callback meets.
#
# The callback's ctx is a "box", a list [source, exception]. The source is read forward
# (``readinto(buffer) -> int`` or ``read(n) -> bytes``: py_read) or by position
# (``preadinto(buffer, offset) -> int`` or ``pread(n, offset) -> bytes``: py_pread; a random-access
# object with no descriptor, such as warchive.store.StoreFile, is read as a file is, going back and
# skipping). An exception the source raises is stored in slot 1 (py_keep), the callback returns -1,
# the C core returns WA_E_CALLBACK, and the kernel's def edge raises it (py_kept, then
# ext/_status.pxd's raise_status). A source of None (the kernel object was closed) fails every read.
#
# (CPython's buffer calls rather than typed memoryviews: those make a module import collections at
# start-up, 1.5 ms of every `warchive index`.)
from libc.stdint cimport uint8_t, int64_t
from libc.string cimport memcpy
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE, PyBUF_WRITE
from cpython.memoryview cimport PyMemoryView_FromMemory


cdef inline int py_keep(list box, object e) noexcept:
    """Store e for the def edge (the first one stays: later ones follow from it); -1."""
    if box[1] is None:
        box[1] = e
    return -1


cdef inline object py_kept(list box):
    """The exception a callback stored in box (and forget it), or None."""
    if box is None:
        return None
    e = box[1]
    box[1] = None
    return e


cdef inline int _py_into(object into, str what, object off, uint8_t *dst, size_t n, size_t *got) except -1:
    # readinto(view) or preadinto(view, off) into the n bytes at dst
    view = PyMemoryView_FromMemory(<char *>dst, <Py_ssize_t>n, PyBUF_WRITE)
    try:
        k = into(view) if off is None else into(view, off)
    finally:
        view.release()   # the kernel's buffer must not outlive this call in Python's hands
    if k is None:
        raise BlockingIOError(f"{what}() returned None: no data yet (a non-blocking file?)")
    if not 0 <= k <= n:
        raise ValueError(f"{what}() returned {k!r} for {n} bytes")
    got[0] = <size_t>k
    return 0


cdef inline int _py_copy(object data, str what, uint8_t *dst, size_t n, size_t *got) except -1:
    # the bytes-like answer of read(n) or pread(n, off), copied to dst
    cdef Py_buffer buf
    PyObject_GetBuffer(data, &buf, PyBUF_SIMPLE)
    try:
        if <size_t>buf.len > n:
            raise ValueError(f"{what}() returned more bytes than asked for")
        if buf.len:
            memcpy(dst, buf.buf, buf.len)
        got[0] = <size_t>buf.len
    finally:
        PyBuffer_Release(&buf)
    return 0


cdef inline int py_fill(list box, uint8_t *dst, size_t n, int64_t off, size_t *got) except -1:
    """Up to n bytes of box's source into dst (*got: how many): forward when off < 0, else at off."""
    src = box[0]
    if src is None:
        raise ValueError("read of a closed reader")
    if off < 0:
        into = getattr(src, "readinto", None)
        if into is not None:
            return _py_into(into, "readinto", None, dst, n, got)
        return _py_copy(src.read(n), "read", dst, n, got)
    into = getattr(src, "preadinto", None)
    if into is not None:
        return _py_into(into, "preadinto", off, dst, n, got)
    return _py_copy(src.pread(n, off), "pread", dst, n, got)


cdef inline int py_read(void *ctx, uint8_t *dst, size_t n, size_t *got) noexcept with gil:
    # readfn: the next bytes of the box's stream; -1 with the exception in the box
    try:
        return py_fill(<list>ctx, dst, n, -1, got)
    except BaseException as e:
        return py_keep(<list>ctx, e)


cdef inline int py_pread(void *ctx, uint8_t *dst, size_t n, int64_t off, size_t *got) noexcept with gil:
    # preadfn: the bytes at off; -1 with the exception in the box; never writes more than n bytes
    try:
        return py_fill(<list>ctx, dst, n, off, got)
    except BaseException as e:
        return py_keep(<list>ctx, e)
