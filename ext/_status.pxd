# The one table from the C cores' status codes (ext/csrc/wa_common.h) to exceptions, and the one
# way the kernels raise them: every kernel turns a failed status into its exception at the `def`
# edge with raise_status, so a code means the same exception in every kernel.
#
# A kernel passes what only it knows: the file (or stream name) and the place of the failure (a
# byte offset; for index errors a block), the problem in words and a remedy. A Python callback that
# raised (WA_E_CALLBACK) kept its exception: the kernel passes it as `kept` and it is raised as it
# was. Errors are rare, so the exception classes are imported when one is raised (a .pxd cannot
# import at module level).
from libc.errno cimport ESPIPE

from _lib.wa_common cimport (
    WA_E_IO, WA_E_NOMEM, WA_E_GZIP_HEADER, WA_E_DEFLATE, WA_E_CRC, WA_E_ISIZE, WA_E_TRUNCATED,
    WA_E_FORMAT, WA_E_CALLBACK, WA_E_TOO_BIG, WA_E_GZIP_STATE, WA_E_PARAM, WA_E_COMPRESS,
    WA_E_UNSUPPORTED, WA_E_UNSORTED, WA_E_SHRUNK, WA_SURT_SMALL,
)


cdef inline object status_exception(int rc):
    """The exception class of failed status rc (BaseException for WA_E_CALLBACK: whatever the
    callback raised); None for a status that is not a failure (rc >= 0) or not a code at all."""
    from warchive import errors
    if rc == WA_E_IO:
        return errors.ReadError
    if rc == WA_E_NOMEM:
        return MemoryError
    if rc == WA_E_GZIP_HEADER or rc == WA_E_DEFLATE or rc == WA_E_CRC or rc == WA_E_ISIZE or rc == WA_E_GZIP_STATE:
        return errors.GzipError
    if rc == WA_E_TRUNCATED:
        return errors.TruncatedError
    if rc == WA_E_FORMAT or rc == WA_E_TOO_BIG or rc == WA_E_SHRUNK:
        return errors.IndexFormatError
    if rc == WA_E_CALLBACK:
        return BaseException
    if rc == WA_E_PARAM:
        return ValueError
    if rc == WA_E_COMPRESS:
        return errors.WriteError
    if rc == WA_E_UNSUPPORTED:
        return errors.UnsupportedFormatError
    if rc == WA_E_UNSORTED:
        return errors.UnsortedInputError
    if rc == WA_SURT_SMALL:
        return errors.UrlError
    return None


cdef inline dict status_table():
    """{code: exception class} of every failure code (status_exception of each)."""
    cdef int rc
    table = {}
    for rc in (WA_E_IO, WA_E_NOMEM, WA_E_GZIP_HEADER, WA_E_DEFLATE, WA_E_CRC, WA_E_ISIZE,
               WA_E_TRUNCATED, WA_E_FORMAT, WA_E_CALLBACK, WA_E_TOO_BIG, WA_E_GZIP_STATE,
               WA_E_PARAM, WA_E_COMPRESS, WA_E_UNSUPPORTED, WA_E_UNSORTED, WA_E_SHRUNK, WA_SURT_SMALL):
        table[rc] = status_exception(rc)
    return table


cdef inline int raise_status(int rc, object path=None, object at=None, object problem=None,
                             str remedy="", object kept=None, int err_no=0, tuple args=()) except -1:
    """Raise the exception of failed status rc; 0 when rc is not a failure (rc >= 0).
    (Cython fills a cdef function's optional arguments in order: pass those before the last one
    you need, positionally.)

    path, at     the file (None: a stream) and the byte offset of the failure (IndexFormatError:
                 the block; None when unknown)
    problem      what is wrong, in words (the exception's message for a class without a path)
    remedy       what to do about it (FileError children)
    kept         WA_E_CALLBACK: the exception the callback raised, raised as it is
    err_no       WA_E_IO: the errno of the failed read (ESPIPE, a stream read by position, is the
                 caller's mistake: an OSError, not a ReadError about the file)
    args         UnsortedInputError: (lineno, line, previous)
    """
    if rc >= 0:
        return 0
    if rc == WA_E_CALLBACK:
        raise kept if kept is not None else OSError("a read callback failed without an exception")
    cls = status_exception(rc)
    from warchive import errors
    if cls is None:
        raise SystemError(f"unknown status {rc} from a kernel (a bug: please report it)")
    if cls is MemoryError:
        raise MemoryError()
    if rc == WA_E_IO:
        import os
        e = OSError(err_no, os.strerror(err_no) if err_no else "read error", path)
        if err_no == ESPIPE:
            raise e
        raise errors.ReadError.of(e, path, at)
    why = problem if problem is not None else f"status {rc}"
    if cls is errors.UnsortedInputError:
        raise cls(path, *args)
    if issubclass(cls, errors.FileError):
        raise cls(path, at, why, remedy)
    if issubclass(cls, errors.IndexFormatError):
        raise cls(path, at, why)
    raise cls(why)
