/* wa_segblock.h -- the lines of one index-segment block: parse, encode, decode, format.
 *
 * A block holds its lines as *entries*, in groups of R lines that start at a
 * *restart point*. Within a group every entry is coded against the state
 * the entries before it left behind (the previous key, URL, timestamp,
 * digest, record ends); at a restart point that state is reset, so any
 * group can be decoded without the groups before it. The codes of an entry
 * are spread over six streams, each compressed on its own (like goes with
 * like: text with text, lengths with lengths), and a group is a slice of
 * each stream. The layout is specified in docs/format.md ("Index
 * segments") and at the top of wa_segment.h.
 *
 * A line is stored in one of three forms:
 *   RAW    the line's bytes, prefix-compressed against the previous key;
 *   CDXJ   `KEY TS {"url": .., "mime": .., "status": .., "digest": ..,
 *          "length": .., "offset": .., "filename": ..}` exactly as
 *          cdxj-indexer writes it (any field may be absent, none added);
 *   CDX11  `KEY TS url mime status digest redirect meta length offset file`.
 * A line that does not parse as CDXJ or CDX11, or whose structured entry
 * does not decode back to the very same bytes, is stored RAW: the encoder
 * decodes every entry it writes and compares (wa_segw_encode_line, in
 * wa_segwrite.h).
 *
 * Everything here is plain C with no Python and no global state. Decoders
 * read only inside their streams' bounds and return WA_E_FORMAT on anything
 * malformed; encoders return WA_E_NOMEM when malloc fails.
 */
#ifndef WA_SEGBLOCK_H
#define WA_SEGBLOCK_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wa_common.h"

#define WA_SEG_RAW 0
#define WA_SEG_CDXJ 1
#define WA_SEG_CDX11 2

/* Field slots, in the order their codes follow an entry's head (and the bit
 * order of its presence mask). CDXJ uses the first 7, CDX11 all 9. */
enum {
    WA_F_URL, WA_F_MIME, WA_F_STATUS, WA_F_DIGEST, WA_F_LENGTH, WA_F_OFFSET,
    WA_F_FILENAME, WA_F_REDIRECT, WA_F_META, WA_F_N
};

/* Digest codes */
enum {
    WA_D_SHA1 = 0,   /* "sha1:" + base32 of the next 20 bytes of the raw area */
    WA_D_SAME = 1,   /* the same text as the digest of the previous entry with one */
    WA_D_LIT = 2,    /* varint length + the text */
    WA_D_BARE = 3    /* base32 of the next 20 raw bytes, no label (CDX-11) */
};

/* The streams of a block */
enum {
    WA_S_HEAD,   /* varint shared, unshared, tag, zz(ts delta) */
    WA_S_KEY,    /* the keys' unshared bytes */
    WA_S_NUM,    /* URL codes, string indexes, digest codes */
    WA_S_LEN,    /* varint length */
    WA_S_OFF,    /* varint zz(offset - expected) */
    WA_S_TEXT,   /* URL and digest literals */
    WA_SEG_NS
};

/* Where the decoder reads: one position and limit per stream. */
typedef struct {
    const uint8_t *p[WA_SEG_NS];
    const uint8_t *end[WA_SEG_NS];
} wa_seg_rd;

#define WA_SEG_MAX_TS 99999999999999ULL        /* 14 digits */
#define WA_SEG_MAX_NUM 999999999999999999ULL   /* 18 digits: no overflow anywhere */
#define WA_SEG_OFF_SLOTS 8

static const char *const wa_seg_json_names[7] = {
    "url", "mime", "status", "digest", "length", "offset", "filename"
};
static const uint8_t wa_seg_json_name_len[7] = {3, 4, 6, 6, 6, 6, 8};

/* ---------------------------------------------------------------- buffers */

/* memcpy / memcmp that accept a NULL pointer with a zero length (an empty
 * wa_bytes has none), which the C library versions do not. */
static inline void wa_cpy(void *d, const void *s, size_t n) {
    if (n) memcpy(d, s, n);
}

static inline int wa_eq(const void *a, const void *b, size_t n) { return n == 0 || memcmp(a, b, n) == 0; }

/* ---------------------------------------------------------------- varints */

static inline int wa_put_varint(wa_bytes *b, uint64_t v) {
    if (wa_bytes_reserve(b, 10)) return WA_E_NOMEM;
    uint8_t *q = b->p + b->len;
    while (v >= 0x80) {
        *q++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *q++ = (uint8_t)v;
    b->len = (size_t)(q - b->p);
    return WA_OK;
}

/* At most 10 bytes, never past end. */
static inline int wa_get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v) {
    const uint8_t *p = *pp;
    if (WA_LIKELY(p < end && *p < 0x80)) {   /* most codes are one byte */
        *v = *p;
        *pp = p + 1;
        return WA_OK;
    }
    uint64_t r = 0;
    for (int shift = 0; shift < 70 && p < end; shift += 7) {
        uint8_t c = *p++;
        r |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *pp = p;
            *v = r;
            return WA_OK;
        }
    }
    return WA_E_FORMAT;
}

static inline uint64_t wa_zz(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t wa_unzz(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

static inline void wa_put_u32le(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}

/* ---------------------------------------------------------------- base32 (RFC 4648, no padding) */

static const char wa_b32_alpha[32] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

static inline void wa_b32_encode20(const uint8_t *in, uint8_t *out) {
    for (int g = 0; g < 4; g++) {
        const uint8_t *s = in + 5 * g;
        uint64_t v = ((uint64_t)s[0] << 32) | ((uint64_t)s[1] << 24) | ((uint64_t)s[2] << 16) |
                     ((uint64_t)s[3] << 8) | s[4];
        for (int k = 0; k < 8; k++) out[8 * g + k] = (uint8_t)wa_b32_alpha[(v >> (35 - 5 * k)) & 31];
    }
}

static inline int wa_b32_val(uint8_t c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= '2' && c <= '7') return c - '2' + 26;
    return -1;
}

/* 32 characters of the canonical alphabet -> 20 bytes; 0 if any is not one. */
static inline int wa_b32_decode32(const uint8_t *in, uint8_t *out) {
    for (int g = 0; g < 4; g++) {
        uint64_t v = 0;
        for (int k = 0; k < 8; k++) {
            int d = wa_b32_val(in[8 * g + k]);
            if (d < 0) return 0;
            v = (v << 5) | (uint64_t)d;
        }
        for (int k = 0; k < 5; k++) out[5 * g + k] = (uint8_t)(v >> (32 - 8 * k));
    }
    return 1;
}

/* ---------------------------------------------------------------- numbers */

/* Canonical decimal (no sign, no leading zero but "0", 1..18 digits). */
static inline int wa_parse_num(const uint8_t *p, size_t n, uint64_t *v) {
    if (n == 0 || n > 18 || (p[0] == '0' && n > 1)) return 0;
    uint64_t r = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return 0;
        r = r * 10 + (uint64_t)(p[i] - '0');
    }
    *v = r;
    return 1;
}

static inline size_t wa_fmt_num(uint64_t v, uint8_t *out) {
    uint8_t tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (uint8_t)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
    return n;
}

static inline void wa_fmt_ts14(uint64_t v, uint8_t *out) {
    for (int i = 13; i >= 0; i--) {
        out[i] = (uint8_t)('0' + v % 10);
        v /= 10;
    }
}

static inline int wa_parse_ts14(const uint8_t *p, uint64_t *v) {
    uint64_t r = 0;
    for (int i = 0; i < 14; i++) {
        if (p[i] < '0' || p[i] > '9') return 0;
        r = r * 10 + (uint64_t)(p[i] - '0');
    }
    *v = r;
    return 1;
}

/* ---------------------------------------------------------------- URL from key */

/* What the URL of a SURT key probably looks like after its scheme:
 * "org,example,www)/a/b?q" -> "www.example.org/a/b?q" (labels back in
 * reading order, ')' dropped). Writes n-1 bytes (0 when there is no ')'). */
static inline size_t wa_seg_cand(const uint8_t *key, size_t n, uint8_t *out) {
    const uint8_t *close = n ? (const uint8_t *)memchr(key, ')', n) : NULL;
    if (!close) return 0;
    size_t hl = (size_t)(close - key), o = 0, end = hl;
    for (;;) {
        size_t c = end;
        while (c > 0 && key[c - 1] != ',') c--;
        wa_cpy(out + o, key + c, end - c);
        o += end - c;
        if (c == 0) break;
        out[o++] = '.';
        end = c - 1;
    }
    wa_cpy(out + o, key + hl + 1, n - hl - 1);
    return o + n - hl - 1;
}

/* ---------------------------------------------------------------- parsed line */

typedef struct {
    int kind;
    unsigned mask;                  /* bit f: field f present */
    const uint8_t *key;
    size_t key_len;
    uint64_t ts;
    const uint8_t *v[WA_F_N];       /* raw value bytes (JSON escapes kept) */
    size_t vl[WA_F_N];
    uint64_t length, offset;
    int dig;                        /* WA_D_SHA1, WA_D_BARE or WA_D_LIT */
    uint8_t dig_raw[20];
} wa_seg_line;

/* Head shared by both forms: KEY SP 14-digit TS SP. Returns bytes consumed or 0. */
static inline size_t wa_seg_parse_head(const uint8_t *p, size_t n, wa_seg_line *L) {
    const uint8_t *sp = n ? (const uint8_t *)memchr(p, ' ', n) : NULL;
    if (!sp || sp == p) return 0;
    size_t kl = (size_t)(sp - p);
    if (n < kl + 16 || p[kl + 15] != ' ' || !wa_parse_ts14(p + kl + 1, &L->ts)) return 0;
    L->key = p;
    L->key_len = kl;
    return kl + 16;
}

static inline int wa_seg_set_digest(wa_seg_line *L, const uint8_t *v, size_t n, int labelled) {
    L->v[WA_F_DIGEST] = v;
    L->vl[WA_F_DIGEST] = n;
    L->dig = WA_D_LIT;
    if (labelled && n == 37 && memcmp(v, "sha1:", 5) == 0 && wa_b32_decode32(v + 5, L->dig_raw))
        L->dig = WA_D_SHA1;
    else if (!labelled && n == 32 && wa_b32_decode32(v, L->dig_raw))
        L->dig = WA_D_BARE;
    return 1;
}

/* Field f of L is v[0..vl) (a digest labelled "sha1:" in CDXJ, bare in CDX-11):
 * 1, or 0 when a length or offset is not a number. Always inlined: it runs for
 * every field of every line written, and GCC would otherwise call it. */
static inline __attribute__((always_inline)) int wa_seg_set_field(wa_seg_line *L, int f, const uint8_t *v, size_t vl, int labelled) {
    if (f == WA_F_LENGTH) {
        if (!wa_parse_num(v, vl, &L->length)) return 0;
    } else if (f == WA_F_OFFSET) {
        if (!wa_parse_num(v, vl, &L->offset)) return 0;
    } else if (f == WA_F_DIGEST) {
        wa_seg_set_digest(L, v, vl, labelled);
    } else {
        L->v[f] = v;
        L->vl[f] = vl;
    }
    L->mask |= 1u << f;
    return 1;
}

static int wa_seg_parse_cdxj(const uint8_t *line, size_t n, wa_seg_line *L) {
    size_t h = wa_seg_parse_head(line, n, L);
    if (!h) return 0;
    const uint8_t *p = line + h, *end = line + n;
    if (p >= end || *p++ != '{') return 0;
    L->kind = WA_SEG_CDXJ;
    L->mask = 0;
    if (p < end && *p == '}') return p + 1 == end;
    int next = 0;
    for (;;) {
        if (end - p < 2 || *p++ != '"') return 0;
        int f = next;
        while (f < 7 && !((size_t)(end - p) > wa_seg_json_name_len[f] &&
                          memcmp(p, wa_seg_json_names[f], wa_seg_json_name_len[f]) == 0 &&
                          p[wa_seg_json_name_len[f]] == '"'))
            f++;
        if (f == 7) return 0;
        p += wa_seg_json_name_len[f] + 1;
        if (end - p < 3 || p[0] != ':' || p[1] != ' ' || p[2] != '"') return 0;
        p += 3;
        const uint8_t *v = p;
        while (p < end && *p != '"') {
            if (*p == '\\') {
                if (end - p < 2) return 0;
                p++;
            }
            p++;
        }
        if (p >= end) return 0;
        size_t vl = (size_t)(p - v);
        p++;
        if (!wa_seg_set_field(L, f, v, vl, 1)) return 0;
        next = f + 1;
        if (p < end && *p == '}') return p + 1 == end;
        if (end - p < 2 || p[0] != ',' || p[1] != ' ') return 0;
        p += 2;
    }
}

/* CDX-11 columns 2..10 -> field slots; '-' is an absent field. */
static const int8_t wa_seg_cdx11_slot[9] = {
    WA_F_URL, WA_F_MIME, WA_F_STATUS, WA_F_DIGEST, WA_F_REDIRECT, WA_F_META,
    WA_F_LENGTH, WA_F_OFFSET, WA_F_FILENAME
};

static int wa_seg_parse_cdx11(const uint8_t *line, size_t n, wa_seg_line *L) {
    size_t h = wa_seg_parse_head(line, n, L);
    if (!h) return 0;
    const uint8_t *p = line + h, *end = line + n;
    L->kind = WA_SEG_CDX11;
    L->mask = 0;
    for (int col = 0; col < 9; col++) {
        const uint8_t *sp = (const uint8_t *)memchr(p, ' ', (size_t)(end - p));
        const uint8_t *e = sp ? sp : end;
        if ((col < 8) != (sp != NULL) || e == p) return 0;
        size_t vl = (size_t)(e - p);
        if (!(vl == 1 && *p == '-') && !wa_seg_set_field(L, wa_seg_cdx11_slot[col], p, vl, 0)) return 0;
        p = e + (sp ? 1 : 0);
    }
    return 1;
}

/* ---------------------------------------------------------------- decoding */

/* Where a block's strings and raw digests are (a decoded block, or a block being built). */
typedef struct {
    const uint8_t *sbase;
    const uint32_t *soff, *slen;
    uint64_t nstr;
    const uint8_t *raw;        /* 20 bytes per digest */
    uint64_t nraw;
    uint64_t base_ts;
} wa_seg_ctx;

/* The decoder's state: what the entries of the group so far left behind, and the
 * current entry. */
typedef struct {
    wa_bytes key;
    wa_bytes url[2];
    int cur;                   /* url[cur]: the latest URL of the group made so far */
    wa_bytes tmp;
    /* The latest URL, when it is not made yet (made only when a line is
     * formatted or a later URL is based on it): its codes, and the key it
     * was coded with is st->key as long as pending is set. */
    int pending;
    uint64_t u_m, u_cut, u_s, u_ll;
    const uint8_t *u_lit;
    uint64_t ts;
    int dprev;                 /* digest of the latest entry with one: code, bytes */
    const uint8_t *dprev_p;
    size_t dprev_n;
    uint64_t off_tag[WA_SEG_OFF_SLOTS], off_end[WA_SEG_OFF_SLOTS];
    uint64_t raw_next;
    /* the current entry */
    int kind;
    unsigned mask;
    uint64_t s[WA_F_N];        /* string indexes of mime, status, filename, redirect, meta */
    int dig;
    const uint8_t *dp;
    size_t dn;
    uint64_t length, offset;
} wa_seg_state;

static inline void wa_seg_state_free(wa_seg_state *st) {
    wa_bytes_free(&st->key);
    wa_bytes_free(&st->url[0]);
    wa_bytes_free(&st->url[1]);
    wa_bytes_free(&st->tmp);
}

static inline void wa_seg_state_reset(wa_seg_state *st, const wa_seg_ctx *cx, uint64_t raw_start) {
    st->key.len = 0;
    st->url[st->cur].len = 0;
    st->pending = 0;
    st->ts = cx->base_ts;
    st->dprev = -1;
    st->dprev_p = NULL;
    st->dprev_n = 0;
    memset(st->off_tag, 0, sizeof st->off_tag);
    memset(st->off_end, 0, sizeof st->off_end);
    st->raw_next = raw_start;
}

/* dst = src (the group state; the current entry too). */
static inline int wa_seg_state_copy(wa_seg_state *dst, const wa_seg_state *src) {
    wa_bytes k = dst->key, u0 = dst->url[0], u1 = dst->url[1], t = dst->tmp;
    wa_cpy(dst, src, sizeof *dst);
    dst->key = k;
    dst->url[0] = u0;
    dst->url[1] = u1;
    dst->tmp = t;
    dst->key.len = 0;
    dst->url[src->cur].len = 0;
    if (wa_bytes_put(&dst->key, src->key.p, src->key.len)) return WA_E_NOMEM;
    if (wa_bytes_put(&dst->url[src->cur], src->url[src->cur].p, src->url[src->cur].len)) return WA_E_NOMEM;
    return WA_OK;
}

/* Offsets are coded against the end of the latest record of the same file in the group. */
static inline uint64_t wa_seg_off_expect(const wa_seg_state *st, uint64_t ftag) {
    unsigned slot = (unsigned)(ftag % WA_SEG_OFF_SLOTS);
    return st->off_tag[slot] == ftag ? st->off_end[slot] : 0;
}

static inline void wa_seg_off_note(wa_seg_state *st, uint64_t ftag, uint64_t end) {
    unsigned slot = (unsigned)(ftag % WA_SEG_OFF_SLOTS);
    st->off_tag[slot] = ftag;
    st->off_end[slot] = end;
}

static inline uint64_t wa_seg_ftag(const wa_seg_state *st) {
    return (st->mask & (1u << WA_F_FILENAME)) ? st->s[WA_F_FILENAME] + 1 : 0;
}

static inline int wa_seg_nfields(int kind) { return kind == WA_SEG_CDXJ ? 7 : kind == WA_SEG_CDX11 ? 9 : 0; }

/* The URL: in NUM varint m (0: based on the previous URL; m >= 1: on string
 * m-1 + the key's candidate), varint cut, varint s, varint litlen; in TEXT
 * the literal: url = base[:len(base)-cut-s] + lit + base[len(base)-s:].
 * Decoding only takes the codes; wa_seg_url_make builds the URL. */
static int wa_seg_decode_url(wa_seg_state *st, const wa_seg_ctx *cx, wa_seg_rd *r) {
    const uint8_t **np = &r->p[WA_S_NUM], *ne = r->end[WA_S_NUM];
    if (wa_get_varint(np, ne, &st->u_m) || wa_get_varint(np, ne, &st->u_cut) ||
        wa_get_varint(np, ne, &st->u_s) || wa_get_varint(np, ne, &st->u_ll))
        return WA_E_FORMAT;
    if (st->u_ll > (uint64_t)(r->end[WA_S_TEXT] - r->p[WA_S_TEXT]) || (st->u_m && st->u_m - 1 >= cx->nstr))
        return WA_E_FORMAT;
    st->u_lit = r->p[WA_S_TEXT];
    r->p[WA_S_TEXT] += st->u_ll;
    st->pending = 1;
    return WA_OK;
}

/* Build the pending URL (with the key it was coded with) into url[cur]. */
static int wa_seg_url_make(wa_seg_state *st, const wa_seg_ctx *cx) {
    if (!st->pending) return WA_OK;
    const uint8_t *base;
    size_t bl;
    if (st->u_m == 0) {
        base = st->url[st->cur].p;
        bl = st->url[st->cur].len;
    } else {
        size_t pl = cx->slen[st->u_m - 1];
        st->tmp.len = 0;
        if (wa_bytes_reserve(&st->tmp, pl + st->key.len)) return WA_E_NOMEM;
        wa_cpy(st->tmp.p, cx->sbase + cx->soff[st->u_m - 1], pl);
        bl = pl + wa_seg_cand(st->key.p, st->key.len, st->tmp.p + pl);
        base = st->tmp.p;
    }
    uint64_t cut = st->u_cut, s = st->u_s, ll = st->u_ll;
    if (cut > bl || s > bl - cut) return WA_E_FORMAT;
    size_t pre = bl - (size_t)cut - (size_t)s;
    wa_bytes *out = &st->url[st->cur ^ 1];
    out->len = 0;
    if (wa_bytes_reserve(out, pre + (size_t)ll + (size_t)s)) return WA_E_NOMEM;
    wa_cpy(out->p, base, pre);
    wa_cpy(out->p + pre, st->u_lit, (size_t)ll);
    wa_cpy(out->p + pre + ll, base + bl - s, (size_t)s);
    out->len = pre + (size_t)ll + (size_t)s;
    st->cur ^= 1;
    st->pending = 0;
    return WA_OK;
}

/* One entry: in HEAD varint shared, varint unshared, varint tag (kind |
 * absent-mask << 2); in KEY the key's unshared bytes; then for CDXJ/CDX11 in
 * HEAD varint zigzag(ts - previous ts), and the present fields in slot order,
 * each in its stream (the offset last: it is coded against the end of the
 * latest record of the same file). */
static int wa_seg_decode(wa_seg_state *st, const wa_seg_ctx *cx, wa_seg_rd *r) {
    const uint8_t **hp = &r->p[WA_S_HEAD], *he = r->end[WA_S_HEAD];
    const uint8_t **np = &r->p[WA_S_NUM], *ne = r->end[WA_S_NUM];
    uint64_t shared, unshared, tag, v;
    if (wa_get_varint(hp, he, &shared) || wa_get_varint(hp, he, &unshared) || wa_get_varint(hp, he, &tag))
        return WA_E_FORMAT;
    if (shared > st->key.len || unshared > (uint64_t)(r->end[WA_S_KEY] - r->p[WA_S_KEY])) return WA_E_FORMAT;
    int kind = (int)(tag & 3);
    int nf = wa_seg_nfields(kind);
    if (kind == 3 || (tag >> 2) >> nf) return WA_E_FORMAT;
    st->kind = kind;
    st->mask = (unsigned)(~(tag >> 2)) & ((1u << nf) - 1);
    if (st->pending) {
        /* The key is about to change: make the pending URL now if anything may
         * still need it, i.e. unless this entry's URL is not based on it. */
        uint64_t m = 0;
        const uint8_t *q = r->p[WA_S_NUM];
        int mine = (st->mask & 1u) && wa_get_varint(&q, r->end[WA_S_NUM], &m) == WA_OK && m != 0;
        if (mine) {
            st->pending = 0;
        } else {
            int rc = wa_seg_url_make(st, cx);
            if (rc) return rc;
        }
    }
    st->key.len = (size_t)shared;
    if (wa_bytes_put(&st->key, r->p[WA_S_KEY], (size_t)unshared)) return WA_E_NOMEM;
    r->p[WA_S_KEY] += unshared;
    if (kind == WA_SEG_RAW) return WA_OK;
    if (wa_get_varint(hp, he, &v)) return WA_E_FORMAT;
    st->ts += (uint64_t)wa_unzz(v);
    if (st->ts > WA_SEG_MAX_TS) return WA_E_FORMAT;
    for (int f = 0; f < nf; f++) {
        if (!(st->mask & (1u << f))) continue;
        switch (f) {
        case WA_F_URL: {
            int rc = wa_seg_decode_url(st, cx, r);
            if (rc) return rc;
            break;
        }
        case WA_F_DIGEST:
            if (wa_get_varint(np, ne, &v) || v > 3) return WA_E_FORMAT;
            if (v == WA_D_SAME) {
                if (st->dprev < 0) return WA_E_FORMAT;
                st->dig = st->dprev;
                st->dp = st->dprev_p;
                st->dn = st->dprev_n;
            } else if (v == WA_D_LIT) {
                uint64_t n;
                if (wa_get_varint(np, ne, &n) || n > (uint64_t)(r->end[WA_S_TEXT] - r->p[WA_S_TEXT]))
                    return WA_E_FORMAT;
                st->dig = WA_D_LIT;
                st->dp = r->p[WA_S_TEXT];
                st->dn = (size_t)n;
                r->p[WA_S_TEXT] += n;
            } else {
                if (st->raw_next >= cx->nraw) return WA_E_FORMAT;
                st->dig = (int)v;
                st->dp = cx->raw + 20 * st->raw_next++;
                st->dn = 20;
            }
            st->dprev = st->dig;
            st->dprev_p = st->dp;
            st->dprev_n = st->dn;
            break;
        case WA_F_LENGTH:
            if (wa_get_varint(&r->p[WA_S_LEN], r->end[WA_S_LEN], &st->length) || st->length > WA_SEG_MAX_NUM)
                return WA_E_FORMAT;
            break;
        case WA_F_OFFSET:
            break;   /* after the filename, which it depends on */
        default:
            if (wa_get_varint(np, ne, &st->s[f]) || st->s[f] >= cx->nstr) return WA_E_FORMAT;
        }
    }
    if (st->mask & (1u << WA_F_OFFSET)) {
        uint64_t ftag = wa_seg_ftag(st);
        if (wa_get_varint(&r->p[WA_S_OFF], r->end[WA_S_OFF], &v)) return WA_E_FORMAT;
        st->offset = wa_seg_off_expect(st, ftag) + (uint64_t)wa_unzz(v);
        if (st->offset > WA_SEG_MAX_NUM) return WA_E_FORMAT;
        uint64_t e = st->offset + ((st->mask & (1u << WA_F_LENGTH)) ? st->length : 0);
        wa_seg_off_note(st, ftag, e);
    }
    return WA_OK;
}

/* ---------------------------------------------------------------- formatting */

static inline size_t wa_seg_str(const wa_seg_ctx *cx, uint64_t i, const uint8_t **p) {
    *p = cx->sbase + cx->soff[i];
    return cx->slen[i];
}

/* Text of one field of the current entry into out (reserved by the caller). */
static size_t wa_seg_fmt_field(const wa_seg_state *st, const wa_seg_ctx *cx, int f, uint8_t *out) {
    const uint8_t *s;
    size_t n;
    switch (f) {
    case WA_F_URL:
        wa_cpy(out, st->url[st->cur].p, st->url[st->cur].len);
        return st->url[st->cur].len;
    case WA_F_DIGEST:
        if (st->dig == WA_D_LIT) {
            wa_cpy(out, st->dp, st->dn);
            return st->dn;
        }
        if (st->dig == WA_D_SHA1) {
            wa_cpy(out, "sha1:", 5);
            wa_b32_encode20(st->dp, out + 5);
            return 37;
        }
        wa_b32_encode20(st->dp, out);
        return 32;
    case WA_F_LENGTH:
        return wa_fmt_num(st->length, out);
    case WA_F_OFFSET:
        return wa_fmt_num(st->offset, out);
    default:
        n = wa_seg_str(cx, st->s[f], &s);
        wa_cpy(out, s, n);
        return n;
    }
}

static size_t wa_seg_field_cap(const wa_seg_state *st, const wa_seg_ctx *cx, int f) {
    switch (f) {
    case WA_F_URL: return st->url[st->cur].len;
    case WA_F_DIGEST: return st->dig == WA_D_LIT ? st->dn : 37;
    case WA_F_LENGTH: case WA_F_OFFSET: return 20;
    default: return cx->slen[st->s[f]];
    }
}

/* The whole line of the current entry into out (replacing its contents). */
static int wa_seg_format(wa_seg_state *st, const wa_seg_ctx *cx, wa_bytes *out) {
    out->len = 0;
    if (st->kind == WA_SEG_RAW) return wa_bytes_put(out, st->key.p, st->key.len);
    if ((st->mask & 1u) && st->pending) {
        int rc = wa_seg_url_make(st, cx);
        if (rc) return rc;
    }
    int nf = wa_seg_nfields(st->kind);
    size_t cap = st->key.len + 20;
    for (int f = 0; f < nf; f++)
        cap += 16 + ((st->mask & (1u << f)) ? wa_seg_field_cap(st, cx, f) : 1);
    if (wa_bytes_reserve(out, cap)) return WA_E_NOMEM;
    uint8_t *q = out->p;
    wa_cpy(q, st->key.p, st->key.len);
    q += st->key.len;
    *q++ = ' ';
    wa_fmt_ts14(st->ts, q);
    q += 14;
    *q++ = ' ';
    if (st->kind == WA_SEG_CDXJ) {
        *q++ = '{';
        int first = 1;
        for (int f = 0; f < 7; f++) {
            if (!(st->mask & (1u << f))) continue;
            if (!first) { *q++ = ','; *q++ = ' '; }
            first = 0;
            *q++ = '"';
            wa_cpy(q, wa_seg_json_names[f], wa_seg_json_name_len[f]);
            q += wa_seg_json_name_len[f];
            wa_cpy(q, "\": \"", 4);
            q += 4;
            q += wa_seg_fmt_field(st, cx, f, q);
            *q++ = '"';
        }
        *q++ = '}';
    } else {
        for (int col = 0; col < 9; col++) {
            int f = wa_seg_cdx11_slot[col];
            if (col) *q++ = ' ';
            if (st->mask & (1u << f)) q += wa_seg_fmt_field(st, cx, f, q);
            else *q++ = '-';
        }
    }
    out->len = (size_t)(q - out->p);
    return WA_OK;
}

/* Compare the current entry's line with q (bytewise: memcmp, then length) into
 * *res, formatting only as much of the line as the comparison needs. */
static int wa_seg_cmp(wa_seg_state *st, const wa_seg_ctx *cx, const uint8_t *q, size_t qn,
                      wa_bytes *scratch, int *res) {
    size_t kl = st->key.len, m = kl < qn ? kl : qn;
    int c = m ? memcmp(st->key.p, q, m) : 0;
    if (c || st->kind == WA_SEG_RAW || qn <= kl) {
        *res = c ? c : (kl > qn) - (kl < qn);
        return WA_OK;
    }
    uint8_t head[16];
    head[0] = ' ';
    wa_fmt_ts14(st->ts, head + 1);
    head[15] = ' ';
    size_t hn = qn - kl < 16 ? qn - kl : 16;
    c = memcmp(head, q + kl, hn);
    if (c || qn <= kl + 16) {
        *res = c ? c : 1;   /* equal so far: the line goes on past q */
        return WA_OK;
    }
    int rc = wa_seg_format(st, cx, scratch);
    if (rc) return rc;
    size_t ln = scratch->len;
    m = ln < qn ? ln : qn;
    c = memcmp(scratch->p, q, m);
    *res = c ? c : (ln > qn) - (ln < qn);
    return WA_OK;
}

#endif
