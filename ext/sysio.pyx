# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Kernel sysio: the few system calls the Python layer needs and the os module lacks.

`start_writeback` (Linux sync_file_range) lets warchive.durable start a file's
writeback without waiting; `one_malloc_arena` (glibc mallopt) is for the CLI's
`warchive index -j N`. Each answers where the call does not exist instead of
raising. Nothing here reads or writes archive data.
"""

from libc.stdint cimport int64_t

cdef extern from *:
    """
    #if defined(__GLIBC__)
    #include <malloc.h>
    static int wa_one_malloc_arena(void) { return mallopt(M_ARENA_MAX, 1) == 1; }
    #else
    static int wa_one_malloc_arena(void) { return 0; }
    #endif
    """
    int wa_one_malloc_arena()


cdef extern from *:
    """
    #include <fcntl.h>
    #if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
    static int wa_start_writeback(int fd, int64_t off, int64_t n) {
        return sync_file_range(fd, off, n, SYNC_FILE_RANGE_WRITE) == 0 ? 1 : 0;
    }
    #else
    static int wa_start_writeback(int fd, int64_t off, int64_t n) { (void)fd; (void)off; (void)n; return -1; }
    #endif
    """
    int wa_start_writeback(int fd, int64_t off, int64_t n) nogil


def start_writeback(int fd, int64_t offset, int64_t length):
    """Start writing the file's dirty pages in [offset, offset+length) to disk without waiting
    (Linux sync_file_range, SYNC_FILE_RANGE_WRITE): a later fsync then has little left to wait
    for. True when started, False when it failed, None where the call does not exist."""
    cdef int rc
    with nogil:
        rc = wa_start_writeback(fd, offset, length)
    return None if rc < 0 else bool(rc)


def one_malloc_arena():
    """Have every thread allocate from glibc's main arena (mallopt M_ARENA_MAX = 1); False where
    that cannot be done (another C library). For `warchive index -j N` only: its workers allocate
    little, and an arena of their own is fresh memory, page-faulted in 4 KiB at a time."""
    return bool(wa_one_malloc_arena())
