# Extern-only declarations of ext/csrc/wa_common.h: the status codes every C core
# returns (one enum, each code its own value), the one growable buffer type (wa_bytes)
# and the pooled big buffers. The one
# place they are declared: the kernels cimport them from here, and ext/_status.pxd
# turns a failed one into its exception.
from libc.stdint cimport uint8_t

cdef extern from "wa_common.h" nogil:
    enum:
        WA_OK
        WA_EOF
        WA_SLOW
        WA_SAME
        WA_DONE
        WA_NEED
        WA_SURT_NEED_IDNA
        WA_SURT_FAIL
        WA_E_IO
        WA_E_NOMEM
        WA_E_GZIP_HEADER
        WA_E_DEFLATE
        WA_E_CRC
        WA_E_ISIZE
        WA_E_TRUNCATED
        WA_E_FORMAT
        WA_E_CALLBACK
        WA_E_TOO_BIG
        WA_E_GZIP_STATE
        WA_E_PARAM
        WA_E_COMPRESS
        WA_E_UNSUPPORTED
        WA_E_UNSORTED
        WA_E_SHRUNK
        WA_SURT_SMALL
    ctypedef struct wa_bytes:
        uint8_t *p
        size_t len
        size_t cap
    int wa_bytes_reserve(wa_bytes *b, size_t extra)
    int wa_bytes_put(wa_bytes *b, const void *s, size_t n)
    void wa_bytes_borrow(wa_bytes *b, const void *p, size_t n)
    void wa_bytes_free(wa_bytes *b)

    void *wa_buf_get(size_t want, size_t *cap)
    void wa_buf_put(void *p, size_t cap)
