# Extern-only declarations of ext/csrc/wa_deflate.h (raw deflate for the WARC writer).
from libc.stdint cimport uint8_t

cdef extern from "wa_deflate.h" nogil:
    ctypedef struct wa_defl:
        uint8_t *out
        size_t len
    int wa_defl_init(wa_defl *d, int level)
    void wa_defl_free(wa_defl *d)
    int wa_defl_part(wa_defl *d, const uint8_t *a, size_t na, const uint8_t *b, size_t nb, int final)
    ctypedef struct wa_dworker:
        wa_defl d
    int wa_dw_start(wa_dworker *w, int level, long spin_us)
    void wa_dw_post(wa_dworker *w, const uint8_t *a, size_t na, const uint8_t *b, size_t nb, int final)
    int wa_dw_wait(wa_dworker *w)
    void wa_dw_stop(wa_dworker *w)
