# Extern-only declarations of ext/csrc/wa_segment.h (index segments: reader,
# block cache, codecs) and ext/csrc/wa_segwrite.h (the writer). Every function
# returns a WA_ status (wa_common.h; the kernels cimport them from
# _lib/wa_common.pxd) and never calls Python, so all of them are declared
# nogil; the kernels decide where the GIL is released.
from libc.stdint cimport uint8_t, uint32_t, int64_t, uint64_t

from _lib.wa_common cimport wa_bytes

cdef extern from "wa_segment.h" nogil:
    enum:
        WA_SEG_NONE
        WA_SEG_DEFLATE
        WA_SEG_ZSTD
        WA_SEG_VERSION

    int wa_seg_have_zstd()

    ctypedef struct wa_seg_block:
        uint64_t nlines

    ctypedef struct wa_seg_cur:
        wa_bytes out

    ctypedef struct wa_seg_reader:
        size_t size
        int fd
        uint64_t *boff
        uint32_t *bdisk
        int comp
        uint32_t version
        uint64_t nlines
        uint64_t nblocks
        uint64_t *bline
        uint64_t *bnl
        uint8_t *seps
        size_t *sep_off
        const uint8_t *first
        const uint8_t *last
        size_t first_len
        size_t last_len
        size_t cache_used
        size_t cache_limit
        uint64_t hits
        uint64_t misses
        const char *why
        int64_t err_block
        int unsupported

    ctypedef struct wa_seg_it:
        wa_seg_cur c
        uint64_t block
        int have
        const uint8_t *stop
        size_t stop_len

    int wa_seg_open(wa_seg_reader *r, const uint8_t *map, size_t size, size_t cache_limit)
    void wa_seg_close(wa_seg_reader *r)
    int wa_seg_get(wa_seg_reader *r, uint64_t b, wa_seg_block **out)
    int wa_seg_check_block(wa_seg_reader *r, uint64_t b, wa_seg_cur *c)
    void wa_seg_it_free(wa_seg_it *it)
    int wa_seg_it_start(wa_seg_reader *r, wa_seg_it *it, const uint8_t *q, size_t qn)
    int wa_seg_it_start_block(wa_seg_reader *r, wa_seg_it *it, uint64_t b)
    int wa_seg_it_next(wa_seg_reader *r, wa_seg_it *it, int one_block)

cdef extern from "wa_segwrite.h" nogil:
    ctypedef struct wa_segw:
        wa_bytes out
        wa_bytes last
        uint64_t total_lines
        uint64_t nblocks
        uint64_t file_off
        uint64_t n_struct
        uint64_t n_raw
        uint64_t raw_blocks
        const char *why

    int wa_segw_init(wa_segw *w, uint32_t R, uint64_t block_lines, size_t block_bytes, int comp, int level)
    void wa_segw_free(wa_segw *w)
    int wa_segw_add(wa_segw *w, const uint8_t *p, size_t n)
    int wa_segw_flush(wa_segw *w)
    int wa_segw_finish(wa_segw *w)
