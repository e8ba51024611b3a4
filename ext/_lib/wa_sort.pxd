# Extern-only declarations of ext/csrc/wa_sort.h (in-memory line sort, k-way merge).
# Every function is safe without the GIL; callbacks decide for themselves.
from libc.stdint cimport uint8_t, uint32_t, uint64_t

cdef extern from "wa_sort.h" nogil:
    size_t WA_SORT_MAX_LINE

    ctypedef int (*wa_write_fn)(void *ctx, const uint8_t *p, size_t n) noexcept
    ctypedef int (*wa_fill_fn)(void *ctx, uint8_t *dst, size_t n, size_t *got) noexcept

    ctypedef struct wa_out:
        uint64_t lines
        uint64_t dropped
    int wa_out_init(wa_out *o, wa_write_fn fn, void *ctx, size_t cap)
    void wa_out_free(wa_out *o)
    int wa_out_flush(wa_out *o)

    ctypedef struct wa_line:
        uint64_t key
        uint32_t off
        uint32_t len
    size_t wa_count_lines(const uint8_t *buf, size_t n)
    size_t wa_index_lines(const uint8_t *buf, size_t n, wa_line *a, size_t cap, size_t *used)
    int wa_sort_lines(const uint8_t *base, wa_line *a, size_t n, int threads, wa_out *o)

    ctypedef struct wa_msrc:
        wa_fill_fn fill
        void *ctx
        uint8_t *buf
        size_t cur, cur_len
        size_t prev, prev_len
        int has_prev
        uint64_t lineno
    ctypedef struct wa_merge:
        wa_msrc *src
        size_t n
        size_t bad_src
        uint64_t bad_lineno
    int wa_merge_init(wa_merge *m, size_t n, size_t bufcap, int check)
    void wa_merge_free(wa_merge *m)
    int wa_merge_run(wa_merge *m, wa_out *o)
