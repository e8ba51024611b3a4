/* wa_codec.h -- the deflate libraries the kernels link, and their handles.
 *
 * zlib is always linked; ISA-L (WA_HAVE_ISAL) and libdeflate
 * (WA_HAVE_LIBDEFLATE) when CMake found them. This is the one place that
 * says which is there: the #ifdefs, the handles' lifetime and the one-shot
 * calls on inputs of known size live here; the callers keep their own loops.
 *
 *   wa_codec           the handles one user owns: ISA-L's streaming inflate
 *                      state and its deflate level buffer, libdeflate's
 *                      decompressor. Zeroed = none yet; the inflate state is
 *                      made by wa_codec_init_inflate (which makes the
 *                      decompressor too), the others on first use; all are
 *                      freed by wa_codec_free.
 *   wa_ld_inflate      raw inflate of a whole input with libdeflate, saying
 *                      how much input it used (gzip members, wa_gzip.h)
 *   wa_inflate_exact   raw inflate of exactly n bytes, every input byte used:
 *                      libdeflate, else zlib (segment blocks, wa_segment.h)
 *   wa_deflate_raw     raw deflate in one call: ISA-L, else zlib (segment blocks)
 *   wa_isal_level_buf  ISA-L's deflate level buffer (also the WARC writer's, wa_deflate.h)
 *   wa_crc32           CRC-32, the gzip polynomial: ISA-L, else zlib
 *   wa_inflate_libs    the libraries of this build, for `warchive --version`
 *
 * Streaming inflate of gzip members stays in wa_gzip.h (it tracks member
 * offsets), streaming deflate of WARC records in wa_deflate.h, zstd in
 * wa_segment.h (its only user).
 *
 * Failure contract: the int functions return a WA_ status (wa_common.h):
 * WA_E_NOMEM when a handle cannot be allocated, WA_E_DEFLATE / WA_E_FORMAT
 * for data that does not decompress as asked, WA_E_COMPRESS for a compression
 * that fails. Everything is static inline,
 * so the hot paths pay no call; nothing calls Python.
 */
#ifndef WA_CODEC_H
#define WA_CODEC_H

#include <zlib.h>
#ifdef WA_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#include <isa-l/crc.h>
#endif
#ifdef WA_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif
#include "wa_common.h"

typedef struct {
#ifdef WA_HAVE_ISAL
    struct inflate_state *isal;   /* streaming inflate */
    uint8_t *isal_lvl;            /* deflate's level buffer */
    uint32_t isal_lvl_size;
#endif
#ifdef WA_HAVE_LIBDEFLATE
    struct libdeflate_decompressor *ld;
#endif
#if !defined(WA_HAVE_ISAL) && !defined(WA_HAVE_LIBDEFLATE)
    int unused_;                  /* zlib alone: a struct may not be empty */
#endif
} wa_codec;

static inline void wa_codec_free(wa_codec *c) {
#ifdef WA_HAVE_ISAL
    free(c->isal);
    c->isal = NULL;
    free(c->isal_lvl);
    c->isal_lvl = NULL;
    c->isal_lvl_size = 0;
#endif
#ifdef WA_HAVE_LIBDEFLATE
    if (c->ld) libdeflate_free_decompressor(c->ld);
    c->ld = NULL;
#endif
    (void)c;
}

/* Every inflate handle now (a reader fails when it is made, not in its first member). */
static inline int wa_codec_init_inflate(wa_codec *c) {
#ifdef WA_HAVE_ISAL
    if (!c->isal) {
        c->isal = (struct inflate_state *)malloc(sizeof(struct inflate_state));
        if (!c->isal) return WA_E_NOMEM;
        isal_inflate_init(c->isal);
    }
#endif
#ifdef WA_HAVE_LIBDEFLATE
    if (!c->ld && !(c->ld = libdeflate_alloc_decompressor())) return WA_E_NOMEM;
#endif
    (void)c;
    return WA_OK;
}

#ifdef WA_HAVE_LIBDEFLATE
/* Raw inflate src[0..n) into dst[0..cap) in one call: WA_OK with the input used
 * (*used) and the output made (*made); WA_E_TOO_BIG when the output does not fit
 * dst; WA_E_DEFLATE when src is not a whole deflate stream; WA_E_NOMEM. */
static inline int wa_ld_inflate(wa_codec *c, const uint8_t *src, size_t n, uint8_t *dst, size_t cap,
                                size_t *used, size_t *made) {
    if (WA_UNLIKELY(!c->ld) && !(c->ld = libdeflate_alloc_decompressor())) return WA_E_NOMEM;
    enum libdeflate_result r = libdeflate_deflate_decompress_ex(c->ld, src, n, dst, cap, used, made);
    if (WA_LIKELY(r == LIBDEFLATE_SUCCESS)) return WA_OK;
    return r == LIBDEFLATE_INSUFFICIENT_SPACE ? WA_E_TOO_BIG : WA_E_DEFLATE;
}
#endif

/* Raw inflate of src[0..clen) to exactly n bytes at dst, all of src used: WA_OK,
 * WA_E_FORMAT (anything else), WA_E_NOMEM. */
static inline int wa_inflate_exact(wa_codec *c, const uint8_t *src, size_t clen, uint8_t *dst, size_t n) {
#ifdef WA_HAVE_LIBDEFLATE
    size_t in_used = 0, out_got = 0;
    int rc = wa_ld_inflate(c, src, clen, dst, n, &in_used, &out_got);
    if (rc == WA_E_NOMEM) return rc;
    return (rc == WA_OK && in_used == clen && out_got == n) ? WA_OK : WA_E_FORMAT;
#else
    (void)c;
    z_stream s;
    memset(&s, 0, sizeof s);
    if (inflateInit2(&s, -15) != Z_OK) return WA_E_NOMEM;
    s.next_in = (Bytef *)src;
    s.avail_in = (uInt)clen;
    s.next_out = dst;
    s.avail_out = (uInt)n;
    int rc = inflate(&s, Z_FINISH);
    int ok = rc == Z_STREAM_END && s.avail_in == 0 && s.total_out == n;
    inflateEnd(&s);
    return ok ? WA_OK : WA_E_FORMAT;
#endif
}

#ifdef WA_HAVE_ISAL
/* ISA-L's level buffer for deflate level 0-3 (clamped) in *buf, *size (NULL, 0 for
 * level 0, which needs none): WA_OK or WA_E_NOMEM. */
static inline int wa_isal_level_buf(wa_codec *c, int level, uint8_t **buf, uint32_t *size) {
    static const uint32_t sizes[4] = {ISAL_DEF_LVL0_DEFAULT, ISAL_DEF_LVL1_DEFAULT, ISAL_DEF_LVL2_DEFAULT,
                                      ISAL_DEF_LVL3_DEFAULT};
    int lvl = level < 0 ? 0 : level > 3 ? 3 : level;
    if (sizes[lvl] > c->isal_lvl_size) {
        free(c->isal_lvl);
        c->isal_lvl_size = 0;
        if (!(c->isal_lvl = (uint8_t *)malloc(sizes[lvl]))) return WA_E_NOMEM;
        c->isal_lvl_size = sizes[lvl];
    }
    *buf = sizes[lvl] ? c->isal_lvl : NULL;
    *size = sizes[lvl] ? c->isal_lvl_size : 0;
    return WA_OK;
}
#endif

/* Raw deflate of src[0..n) in one call into dst[0..cap) (cap: n + n/8 + 1024 is
 * enough), *out_len set: ISA-L at level 0-3 when linked, else zlib at level 1-9
 * (below 1: 6). WA_OK, WA_E_COMPRESS (dst too small), WA_E_NOMEM. */
static inline int wa_deflate_raw(wa_codec *c, int level, const uint8_t *src, size_t n, uint8_t *dst, size_t cap,
                                 size_t *out_len) {
#ifdef WA_HAVE_ISAL
    struct isal_zstream s;
    isal_deflate_init(&s);
    s.level = (uint32_t)(level < 0 ? 0 : level > 3 ? 3 : level);
    if (wa_isal_level_buf(c, level, &s.level_buf, &s.level_buf_size) != WA_OK) return WA_E_NOMEM;
    s.gzip_flag = IGZIP_DEFLATE;
    s.end_of_stream = 1;
    s.flush = NO_FLUSH;
    s.next_in = (uint8_t *)src;
    s.avail_in = (uint32_t)n;
    s.next_out = dst;
    s.avail_out = (uint32_t)cap;
    int rc = isal_deflate(&s);
    if (rc != COMP_OK || s.internal_state.state != ZSTATE_END) return WA_E_COMPRESS;
    *out_len = s.total_out;
    return WA_OK;
#else
    (void)c;
    z_stream s;
    memset(&s, 0, sizeof s);
    if (deflateInit2(&s, level < 1 ? 6 : level > 9 ? 9 : level, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY) != Z_OK)
        return WA_E_NOMEM;
    s.next_in = (Bytef *)src;
    s.avail_in = (uInt)n;
    s.next_out = dst;
    s.avail_out = (uInt)cap;
    int rc = deflate(&s, Z_FINISH);
    *out_len = s.total_out;
    deflateEnd(&s);
    return rc == Z_STREAM_END ? WA_OK : WA_E_COMPRESS;
#endif
}

static inline uint32_t wa_crc32(uint32_t crc, const uint8_t *p, size_t n) {
#ifdef WA_HAVE_ISAL
    return crc32_gzip_refl(crc, p, (uint64_t)n);
#else
    while (n) {
        uInt k = n > (1u << 30) ? (1u << 30) : (uInt)n;
        crc = (uint32_t)crc32(crc, p, k);
        p += k;
        n -= k;
    }
    return crc;
#endif
}

static inline const char *wa_inflate_libs(void) {
    return "zlib " ZLIB_VERSION
#ifdef WA_HAVE_ISAL
        ", isa-l"
#endif
#ifdef WA_HAVE_LIBDEFLATE
        ", libdeflate " LIBDEFLATE_VERSION_STRING
#endif
        ;
}

#endif
