# Extern-only declarations of ext/csrc/wa_source.h and ext/csrc/wa_gzip.h (our C core).
from libc.stdint cimport uint8_t, uint32_t, int64_t, uint64_t

cdef extern from "wa_source.h" nogil:
    ctypedef int (*wa_read_fn)(void *ctx, uint8_t *dst, size_t n, size_t *got) noexcept
    ctypedef int (*wa_pread_fn)(void *ctx, uint8_t *dst, size_t n, int64_t off, size_t *got) noexcept
    ctypedef struct wa_source:
        int fd
        wa_pread_fn preadfn
        void *ctx
        int64_t size
        int64_t base
        size_t len
        size_t cap
        int eof
        int err_no
        int64_t err_off
        size_t ahead
    int wa_src_init(wa_source *s, int fd, int64_t size, wa_read_fn fn, void *ctx,
                    int64_t start, size_t cap, size_t maxcap)
    void wa_src_free(wa_source *s)
    int wa_src_random(const wa_source *s)
    int wa_src_get(wa_source *s, int64_t off, size_t want, const uint8_t **p, size_t *avail)

cdef extern from "wa_gzip.h" nogil:
    ctypedef struct wa_gzhdr:
        uint32_t hlen
        int has_sl
        uint32_t sl_clen
        uint32_t sl_ulen
    ctypedef struct wa_gz:
        wa_source *src
        int64_t m_off
        wa_gzhdr h
        int engine
        int64_t in_off
        uint8_t *out
        size_t out_len
        uint64_t out_start
        uint64_t produced
        int done
        int trusted_end
        int64_t m_end
        const char *why
        int64_t err_off
        int64_t hint_off
        uint64_t hint_len
        int cut_ok
        int cut
    int wa_gz_init(wa_gz *g, wa_source *src)
    void wa_gz_free(wa_gz *g)
    int wa_gz_begin(wa_gz *g, int64_t off)
    int wa_gz_head(wa_gz *g, size_t want)
    int wa_gz_whole(wa_gz *g, size_t keep)
    int wa_gz_skip(wa_gz *g, int verify)
    int wa_gz_finish(wa_gz *g, int verify)
    int wa_gz_stream(wa_gz *g, uint64_t pos, size_t want, const uint8_t **p, size_t *avail)
