# Extern-only declarations of ext/csrc/wa_common.h: the status codes every C core
# returns and the pooled big buffers. The one place they are declared: the other
# _lib/*.pxd files and the kernels cimport them from here.
cdef extern from "wa_common.h" nogil:
    enum:
        WA_OK
        WA_EOF
        WA_SLOW
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
    void *wa_buf_get(size_t want, size_t *cap)
    void wa_buf_put(void *p, size_t cap)
