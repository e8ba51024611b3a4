# Extern-only declarations of ext/csrc/wa_html.h (and the headers it includes): the streaming
# HTML/CSS tokenizer of the rewriting kernel, its URL fast paths and test entry points.
# Every function here is safe without the GIL; see the headers for the contracts.
from libc.stdint cimport uint8_t, uint32_t

from _lib.wa_common cimport wa_bytes

cdef extern from "wa_html.h" nogil:
    enum:
        WA_REQ_URL
        WA_REQ_BASE
        WA_REQ_LINKBASE
        WA_REQ_SCRIPT
        WA_REQ_HANDLER
        WA_NSLOTS
        WA_A_COUNT
        WA_T_COUNT
    const char *wa_attr_names[]
    const char *wa_tag_names[]


    ctypedef struct wa_map:
        uint32_t *v
        size_t n
        size_t cap

    ctypedef struct wa_urlbase:
        int ok
        int rw_ok
    int wa_urlbase_set(wa_urlbase *b, const uint8_t *s, size_t n)
    void wa_urlbase_free(wa_urlbase *b)
    int wa_join(const wa_urlbase *b, const uint8_t *r, size_t n, wa_bytes *out, int *same)

    ctypedef struct wa_rwhead:
        int ok
        wa_bytes abs
        wa_bytes rel
        wa_bytes sr
        wa_bytes tail
    ctypedef struct wa_rw:
        wa_urlbase base
        wa_bytes prefix
        wa_bytes full
        int check_prefix
        int check_full
        wa_rwhead heads[9]
    int wa_rw_url(const wa_rw *rw, int slot, int fa, const uint8_t *u, size_t n, wa_bytes *out, int *verbatim)

    ctypedef struct wa_link:
        uint8_t hop
        uint8_t what
        uint8_t attr
        uint8_t raw
        uint8_t ctx
        uint8_t css
        size_t off
        size_t len
        size_t toff
        size_t tlen

    ctypedef struct wa_html:
        int css_doc
        int links
        int all_slow
        int scripts
        wa_rw rw
        const uint8_t *w
        wa_bytes hold
        wa_bytes out
        wa_link *lk
        size_t nlk
        wa_bytes lkarena
        int req
        size_t req_s
        size_t req_e
        uint8_t req_ctx
        uint8_t req_slot
        uint8_t req_force

    wa_html *wa_html_new(int css_doc, int links)
    void wa_html_free(wa_html *h)
    int wa_html_feed(wa_html *h, const uint8_t *p, size_t n, int final)
    int wa_html_continue(wa_html *h)
    int wa_html_answer(wa_html *h, const uint8_t *p, size_t n, int keep)
    int wa_html_set_base(wa_html *h, const uint8_t *p, size_t n)

    int wa_attr_decode(const uint8_t *s, size_t n, wa_bytes *out, wa_map *map)
