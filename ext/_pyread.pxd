# cdef inline helpers shared by the kernels that read through wa_source (ext/csrc/wa_source.h):
# a Python object's positional read as the source's `preadfn`, so that a random-access object that
# has no descriptor (warchive.store.StoreFile: a file kept as erasure-coded chunks) is read as a
# file is, going back and skipping, rather than forward as a stream.
#
# The callback's ctx is a list [source, exception]: source has ``preadinto(buffer, offset) -> int``
# or ``pread(n, offset) -> bytes`` (and ``size``, read by the kernel that sets it up); an exception
# the source raises is left in slot 1 for the kernel's def edge to raise; source None (the kernel
# object was closed) fails every read.
from libc.stdint cimport uint8_t, int64_t
from libc.string cimport memcpy
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE, PyBUF_WRITE
from cpython.memoryview cimport PyMemoryView_FromMemory


cdef inline int py_pread(void *ctx, uint8_t *dst, size_t n, int64_t off, size_t *got) noexcept with gil:
    # fails with -1 (the exception in ctx[1]); never writes more than n bytes at dst
    cdef list box = <list>ctx
    cdef Py_buffer buf
    try:
        src = box[0]
        if src is None:
            raise ValueError("read of a closed reader")
        into = getattr(src, "preadinto", None)
        if into is not None:
            view = PyMemoryView_FromMemory(<char *>dst, <Py_ssize_t>n, PyBUF_WRITE)
            try:
                k = into(view, off)
            finally:
                view.release()   # the kernel's buffer must not outlive this call in Python's hands
            if k is None or not 0 <= k <= n:
                raise ValueError(f"preadinto() returned {k!r} for {n} bytes")
            got[0] = <size_t>k
        else:
            data = src.pread(n, off)
            PyObject_GetBuffer(data, &buf, PyBUF_SIMPLE)
            try:
                if <size_t>buf.len > n:
                    raise ValueError("pread() returned more bytes than asked for")
                if buf.len:
                    memcpy(dst, buf.buf, buf.len)
                got[0] = <size_t>buf.len
            finally:
                PyBuffer_Release(&buf)
        return 0
    except BaseException as e:
        box[1] = e
        return -1
