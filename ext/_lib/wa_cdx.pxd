# Extern-only declarations of ext/csrc/wa_cdx.h (the indexer loop).
from libc.stdint cimport uint8_t, int64_t, uint64_t
from _lib.wa_gzip cimport wa_source, wa_gz

cdef extern from "wa_cdx.h" nogil:
    enum:
        WA_MAX_TYPES
        WA_FILTER_ALL
        WA_FILTER_DEFAULT
        WA_FILTER_LIST
    ctypedef struct wa_indexer:
        int cdx11
        int verify
        int filter
        int ntypes
        const uint8_t *types[16]
        size_t type_len[16]
        const uint8_t *fname
        size_t fname_len
        int64_t stop
        unsigned surt_opts
        wa_source src
        wa_gz g
        int gz
        int64_t pos
        uint8_t *out
        size_t out_len
        size_t out_cap
        uint8_t *scratch
        size_t scratch_cap
        int64_t slow_off
        const char *why
        int64_t err_off
        uint64_t n_records
        uint64_t n_lines
        uint64_t n_slow
        uint64_t n_inflated
    int wa_ix_run(wa_indexer *x, size_t flush_at)
