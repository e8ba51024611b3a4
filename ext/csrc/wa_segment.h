/* wa_segment.h -- index segments: the immutable, mmap'd, compressed files a
 * collection's capture index is made of: the file format, the block codec
 * (wa_seg_codec: none, deflate through wa_codec.h, zstd), the reader
 * (wa_seg_*) and its block cache. The writer (wa_segw_*) is wa_segwrite.h;
 * the lines themselves are coded by wa_segblock.h.
 *
 * Specified in docs/format.md ("Index segments"); in short (all integers
 * little-endian; varint = LEB128, at most 10 bytes; zz = zigzag):
 *
 *   file    +--------+---------+-----+-------------+-------+--------+
 *           | header | block 0 | ... | block n-1   | index | footer |
 *           +--------+---------+-----+-------------+-------+--------+
 *   header  magic "\x89WASEG\r\n" (8) | u32 version = 1 | u32 0
 *   block   +-------------------+------+--------+-----+--------+---------+
 *           | 7 x (varint ulen, | meta | HEAD   | ... | TEXT   | digests |
 *           |      varint clen) |      |        |     |        | 20 B ea |
 *           +-------------------+------+--------+-----+--------+---------+
 *           seven sections (meta and six streams), each compressed on its
 *           own (clen 0: empty), then the raw SHA-1 digests of the block
 *   meta    varint nlines | varint R | varint base_ts | varint nstr |
 *           nstr x (varint len, bytes)                 -- the block's strings
 *           ceil(nlines/R) x (6 x varint bytes of the group in each stream,
 *                             varint digests of the group)   -- restarts
 *   streams HEAD: per entry varint shared, varint unshared, varint tag
 *                 (kind | absent fields << 2), [varint zz(ts - prev ts)]
 *           KEY:  the keys' unshared bytes       NUM: URL, string, digest codes
 *           LEN:  varint length                  OFF: varint zz(offset - expected)
 *           TEXT: URL and digest literals
 *   index   varint nblocks |
 *           nblocks x (varint shared, varint unshared, separator suffix,
 *                      varint disk_len, varint nlines,
 *                      u32 crc32 of the block's disk bytes) |
 *           varint n, first line | varint n, last line
 *   footer  u64 index_offset | u64 index_len | u64 nlines | u32 nblocks |
 *           u32 crc32(index) | u16 version | u8 compression | u8 0 |
 *           u32 crc32(footer bytes 0..35) | magic (8)       -- 48 bytes
 *
 * The separator of block b is the shortest prefix of its first line that is
 * at least the line's "KEY TS" head and not below the last line of block
 * b-1, so the block holding the first line >= q is the last one whose
 * separator is < q (or block 0).
 *
 * Compression is one of none, deflate (raw RFC 1951; ISA-L's isal_deflate
 * when linked, else zlib; see wa_codec.h) or zstd (one frame), for every
 * block of a file. CRC-32 is the gzip/zlib polynomial (wa_crc32: ISA-L's
 * crc32_gzip_refl when linked).
 *
 * Failure contract: every function returns a WA_ status; WA_E_FORMAT comes
 * with a static message in ->why and the block in ->err_block (-1: the
 * header, index or footer). Nothing here calls Python or reads outside the
 * mapped file, nor a mapped page the file no longer has: given the file's
 * descriptor (reader.fd), a block is read only while the file still holds
 * it (fstat; WA_E_SHRUNK otherwise), so a segment cut short while open is an
 * error, not SIGBUS.
 */
#ifndef WA_SEGMENT_H
#define WA_SEGMENT_H

#include <sys/stat.h>

#ifdef WA_HAVE_ZSTD
#include <zstd.h>
#endif

#include "wa_codec.h"
#include "wa_segblock.h"

#define WA_SEG_VERSION 1
#define WA_SEG_HEADER 16
#define WA_SEG_FOOTER 48
#define WA_SEG_MAX_BODY ((uint64_t)1 << 31)
static const uint8_t wa_seg_magic[8] = {0x89, 'W', 'A', 'S', 'E', 'G', '\r', '\n'};

enum { WA_SEG_NONE = 0, WA_SEG_DEFLATE = 1, WA_SEG_ZSTD = 2 };

static inline int wa_seg_have_zstd(void) {
#ifdef WA_HAVE_ZSTD
    return 1;
#else
    return 0;
#endif
}

static inline uint64_t wa_le64(const uint8_t *p) { return (uint64_t)wa_le32(p) | ((uint64_t)wa_le32(p + 4) << 32); }
static inline void wa_put_u64le(uint8_t *p, uint64_t v) {
    wa_put_u32le(p, (uint32_t)v);
    wa_put_u32le(p + 4, (uint32_t)(v >> 32));
}

/* ================================================================ decoded blocks */

#define WA_SEG_NSEC (WA_SEG_NS + 1)   /* meta + streams */
#define WA_SEG_GT (WA_SEG_NS + 1)     /* per restart: stream starts + first digest */

typedef struct {
    uint8_t *buf;            /* the sections, decompressed back to back, then the digests */
    size_t ulen, rlen;
    size_t sec[WA_SEG_NSEC + 1];
    uint64_t nlines, nr;
    uint32_t R;
    uint32_t *sarr;          /* nstr string offsets, nstr lengths */
    uint64_t *gtab;          /* (nr + 1) x WA_SEG_GT: where each group starts */
    wa_seg_ctx cx;
    int refs;
    size_t cost;
} wa_seg_block;

static void wa_seg_block_free(wa_seg_block *b) {
    if (!b) return;
    free(b->buf);
    free(b->sarr);
    free(b->gtab);
    free(b);
}

static inline void wa_seg_block_unref(wa_seg_block *b) {
    if (b && --b->refs == 0) wa_seg_block_free(b);
}

/* Check the meta section (header, strings, restart table) of a decompressed
 * block; the entries are checked as they are decoded. buf, ulen, rlen, sec set. */
static int wa_seg_block_parse(wa_seg_block *b, const char **why) {
    const uint8_t *p = b->buf, *end = b->buf + b->sec[1];
    uint64_t R, nstr;
    if (b->rlen % 20) { *why = "digest area is not a multiple of 20 bytes"; return WA_E_FORMAT; }
    if (wa_get_varint(&p, end, &b->nlines) || wa_get_varint(&p, end, &R) ||
        wa_get_varint(&p, end, &b->cx.base_ts) || wa_get_varint(&p, end, &nstr)) {
        *why = "block header is cut short"; return WA_E_FORMAT;
    }
    if (b->nlines == 0 || R == 0 || R > 0xffffffffu || b->cx.base_ts > WA_SEG_MAX_TS ||
        nstr > (uint64_t)(end - p) || b->nlines > b->ulen) {
        *why = "block header out of range"; return WA_E_FORMAT;
    }
    b->R = (uint32_t)R;
    b->sarr = (uint32_t *)malloc(2 * (size_t)nstr * sizeof(uint32_t) + 1);
    if (!b->sarr) return WA_E_NOMEM;
    for (uint64_t i = 0; i < nstr; i++) {
        uint64_t n;
        if (wa_get_varint(&p, end, &n) || n > (uint64_t)(end - p)) { *why = "block strings are cut short"; return WA_E_FORMAT; }
        b->sarr[i] = (uint32_t)(p - b->buf);
        b->sarr[nstr + i] = (uint32_t)n;
        p += n;
    }
    b->cx.sbase = b->buf;
    b->cx.soff = b->sarr;
    b->cx.slen = b->sarr + nstr;
    b->cx.nstr = nstr;
    b->cx.raw = b->buf + b->ulen;
    b->cx.nraw = b->rlen / 20;
    b->nr = (b->nlines + R - 1) / R;
    if (b->nr > (uint64_t)(end - p) / WA_SEG_GT) { *why = "restart table does not fit the block"; return WA_E_FORMAT; }
    b->gtab = (uint64_t *)malloc(((size_t)b->nr + 1) * WA_SEG_GT * sizeof(uint64_t));
    if (!b->gtab) return WA_E_NOMEM;
    uint64_t *g = b->gtab;
    for (int s = 0; s < WA_SEG_NS; s++) g[s] = b->sec[1 + s];
    g[WA_SEG_NS] = 0;
    for (uint64_t i = 0; i < b->nr; i++, g += WA_SEG_GT) {
        for (int s = 0; s < WA_SEG_GT; s++) {
            uint64_t n;
            uint64_t room = s < WA_SEG_NS ? b->sec[2 + s] - g[s] : b->cx.nraw - g[s];
            if (wa_get_varint(&p, end, &n) || n > room) { *why = "restart table out of range"; return WA_E_FORMAT; }
            g[WA_SEG_GT + s] = g[s] + n;
        }
    }
    for (int s = 0; s < WA_SEG_NS; s++) {
        if (g[s] != b->sec[2 + s]) { *why = "restart table does not cover the streams"; return WA_E_FORMAT; }
    }
    if (g[WA_SEG_NS] != b->cx.nraw || p != end) { *why = "restart table does not cover the block"; return WA_E_FORMAT; }
    b->cost = sizeof *b + b->ulen + b->rlen + 8 * (size_t)nstr + 8 * WA_SEG_GT * (size_t)b->nr;
    return WA_OK;
}

/* ================================================================ cursor over one block */

typedef struct {
    wa_seg_block *b;          /* a reference is held while attached */
    wa_seg_state st;
    wa_seg_rd rd;
    uint64_t line;            /* index of the next entry */
    wa_bytes out;              /* the current line, formatted */
    wa_bytes scratch;
    const char *why;
} wa_seg_cur;

static inline void wa_seg_cur_attach(wa_seg_cur *c, wa_seg_block *b) {
    if (b) b->refs++;
    wa_seg_block_unref(c->b);
    c->b = b;
}

static inline void wa_seg_cur_free(wa_seg_cur *c) {
    wa_seg_cur_attach(c, NULL);
    wa_seg_state_free(&c->st);
    wa_bytes_free(&c->out);
    wa_bytes_free(&c->scratch);
}

/* The streams of group g, each ending where the group ends. */
static inline void wa_seg_group_rd(const wa_seg_block *b, uint64_t g, wa_seg_rd *rd) {
    const uint64_t *t = b->gtab + g * WA_SEG_GT;
    for (int s = 0; s < WA_SEG_NS; s++) {
        rd->p[s] = b->buf + t[s];
        rd->end[s] = b->buf + t[WA_SEG_GT + s];
    }
}

static inline void wa_seg_cur_seek(wa_seg_cur *c, uint64_t g) {
    c->line = g * c->b->R;
}

/* Decode the next entry of the block: WA_OK, WA_EOF after the last. */
static int wa_seg_cur_next(wa_seg_cur *c) {
    wa_seg_block *b = c->b;
    if (c->line >= b->nlines) return WA_EOF;
    uint64_t g = c->line / b->R;
    if (c->line % b->R == 0) {
        wa_seg_group_rd(b, g, &c->rd);
        wa_seg_state_reset(&c->st, &b->cx, b->gtab[g * WA_SEG_GT + WA_SEG_NS]);
    }
    int rc = wa_seg_decode(&c->st, &b->cx, &c->rd);
    if (rc) {
        c->why = "entry does not decode";
        return rc;
    }
    c->line++;
    if (c->line % b->R == 0 || c->line == b->nlines) {
        for (int s = 0; s < WA_SEG_NS; s++) {
            if (c->rd.p[s] != c->rd.end[s]) {
                c->why = "a group's entries do not use up its streams";
                return WA_E_FORMAT;
            }
        }
        if (c->st.raw_next != b->gtab[(g + 1) * WA_SEG_GT + WA_SEG_NS]) {
            c->why = "a group's entries do not use up its digests";
            return WA_E_FORMAT;
        }
    }
    return WA_OK;
}

static inline int wa_seg_cur_format(wa_seg_cur *c) { return wa_seg_format(&c->st, &c->b->cx, &c->out); }

/* Compare the first line of group g with q without decoding more than its head. */
static int wa_seg_cmp_restart(wa_seg_cur *c, uint64_t g, const uint8_t *q, size_t qn, int *res) {
    wa_seg_block *b = c->b;
    wa_seg_rd rd;
    wa_seg_group_rd(b, g, &rd);
    uint64_t shared, unshared, tag;
    const uint8_t **hp = &rd.p[WA_S_HEAD];
    if (wa_get_varint(hp, rd.end[WA_S_HEAD], &shared) || wa_get_varint(hp, rd.end[WA_S_HEAD], &unshared) ||
        wa_get_varint(hp, rd.end[WA_S_HEAD], &tag) || shared != 0 ||
        unshared > (uint64_t)(rd.end[WA_S_KEY] - rd.p[WA_S_KEY])) {
        c->why = "restart entry does not decode";
        return WA_E_FORMAT;
    }
    size_t kl = (size_t)unshared, m = kl < qn ? kl : qn;
    int r = m ? memcmp(rd.p[WA_S_KEY], q, m) : 0;
    if (r || qn <= kl || (tag & 3) == WA_SEG_RAW) {
        *res = r ? r : (kl > qn) - (kl < qn);
        return WA_OK;
    }
    /* the key is a prefix of q: the timestamp, or the whole line, decides */
    wa_seg_cur_seek(c, g);
    int rc = wa_seg_cur_next(c);
    if (rc) return rc == WA_EOF ? WA_E_FORMAT : rc;
    return wa_seg_cmp(&c->st, &b->cx, q, qn, &c->scratch, res);
}

/* Decode entries up to the first line >= q: WA_OK (it is the current entry)
 * or WA_EOF (every line of the block is < q). */
static int wa_seg_cur_lower_bound(wa_seg_cur *c, const uint8_t *q, size_t qn) {
    wa_seg_block *b = c->b;
    uint64_t lo = 0, hi = b->nr, g = 0;  /* g: the last group whose first line is < q */
    int rc, res;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if ((rc = wa_seg_cmp_restart(c, mid, q, qn, &res))) return rc;
        if (res < 0) {
            g = mid;
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    wa_seg_cur_seek(c, g);
    for (;;) {
        if ((rc = wa_seg_cur_next(c))) return rc;
        if ((rc = wa_seg_cmp(&c->st, &b->cx, q, qn, &c->scratch, &res))) return rc;
        if (res >= 0) return WA_OK;
    }
}

/* ================================================================ compression */

typedef struct {
    int kind, level;
#ifdef WA_HAVE_ZSTD
    ZSTD_CCtx *zc;
    ZSTD_DCtx *zd;
#endif
    wa_codec lib;            /* deflate: ISA-L's level buffer, libdeflate's decompressor */
} wa_seg_codec;

static void wa_seg_codec_free(wa_seg_codec *z) {
#ifdef WA_HAVE_ZSTD
    ZSTD_freeCCtx(z->zc);
    ZSTD_freeDCtx(z->zd);
    z->zc = NULL;
    z->zd = NULL;
#endif
    wa_codec_free(&z->lib);
}

static size_t wa_seg_bound(const wa_seg_codec *z, size_t n) {
#ifdef WA_HAVE_ZSTD
    if (z->kind == WA_SEG_ZSTD) return ZSTD_compressBound(n);
#endif
    return n + n / 8 + 1024;   /* deflate's worst case is n + 5 bytes per 16 KiB stored */
}

/* src -> dst (capacity wa_seg_bound); *out_len set. */
static int wa_seg_compress(wa_seg_codec *z, const uint8_t *src, size_t n, uint8_t *dst, size_t cap, size_t *out_len) {
    if (z->kind == WA_SEG_NONE) {
        if (cap < n) return WA_E_COMPRESS;
        wa_cpy(dst, src, n);
        *out_len = n;
        return WA_OK;
    }
#ifdef WA_HAVE_ZSTD
    if (z->kind == WA_SEG_ZSTD) {
        if (!z->zc && !(z->zc = ZSTD_createCCtx())) return WA_E_NOMEM;
        size_t r = ZSTD_compressCCtx(z->zc, dst, cap, src, n, z->level);
        if (ZSTD_isError(r)) return WA_E_NOMEM;
        *out_len = r;
        return WA_OK;
    }
#endif
    if (z->kind != WA_SEG_DEFLATE) return WA_E_COMPRESS;
    return wa_deflate_raw(&z->lib, z->level, src, n, dst, cap, out_len);
}

/* Exactly n bytes from src (clen bytes, all of them used), or WA_E_FORMAT. */
static int wa_seg_decompress(wa_seg_codec *z, const uint8_t *src, size_t clen, uint8_t *dst, size_t n) {
    if (z->kind == WA_SEG_NONE) {
        if (clen != n) return WA_E_FORMAT;
        wa_cpy(dst, src, n);
        return WA_OK;
    }
#ifdef WA_HAVE_ZSTD
    if (z->kind == WA_SEG_ZSTD) {
        if (!z->zd && !(z->zd = ZSTD_createDCtx())) return WA_E_NOMEM;
        size_t r = ZSTD_decompressDCtx(z->zd, dst, n, src, clen);
        return (!ZSTD_isError(r) && r == n) ? WA_OK : WA_E_FORMAT;
    }
#endif
    if (z->kind != WA_SEG_DEFLATE) return WA_E_FORMAT;
    return wa_inflate_exact(&z->lib, src, clen, dst, n);
}

/* ================================================================ reader */

/* WA_E_SHRUNK (wa_common.h): a block lies past the end of the file now, cut short after it was
 * mapped (reading the map there would raise SIGBUS). */

typedef struct {
    const uint8_t *map;
    size_t size;
    int fd;                       /* the mapped file, fstat'ed before a block is read; -1: none */
    int comp;
    uint32_t version;
    uint64_t nlines, nblocks;
    uint64_t index_off, index_len;
    /* per block */
    uint64_t *boff, *bline;      /* file offset, index of the block's first line */
    uint32_t *bdisk, *bcrc;
    uint64_t *bnl;
    uint8_t *seps;                /* separators, back to back */
    size_t *sep_off;              /* nblocks + 1 offsets into seps */
    const uint8_t *first, *last;  /* first and last line (inside the index) */
    size_t first_len, last_len;
    /* decoded blocks, most recently used first */
    wa_seg_block **slot;
    int64_t *lru_prev, *lru_next;
    int64_t lru_head, lru_tail;
    size_t cache_used, cache_limit;
    uint64_t hits, misses;
    wa_seg_codec z;
    const char *why;
    int64_t err_block;
    int unsupported;              /* the failure is a missing library, not damage */
} wa_seg_reader;

static void wa_seg_cache_drop(wa_seg_reader *r, int64_t b) {
    if (r->lru_prev[b] >= 0) r->lru_next[r->lru_prev[b]] = r->lru_next[b];
    else r->lru_head = r->lru_next[b];
    if (r->lru_next[b] >= 0) r->lru_prev[r->lru_next[b]] = r->lru_prev[b];
    else r->lru_tail = r->lru_prev[b];
    r->cache_used -= r->slot[b]->cost;
    wa_seg_block_unref(r->slot[b]);
    r->slot[b] = NULL;
}

static void wa_seg_close(wa_seg_reader *r) {
    if (r->slot) {
        while (r->lru_head >= 0) wa_seg_cache_drop(r, r->lru_head);
    }
    free(r->boff); free(r->bline); free(r->bdisk); free(r->bcrc);
    free(r->bnl); free(r->seps); free(r->sep_off); free(r->slot); free(r->lru_prev); free(r->lru_next);
    wa_seg_codec_free(&r->z);
    memset(r, 0, sizeof *r);
    r->lru_head = r->lru_tail = -1;
    r->map = NULL;
    r->fd = -1;
}

static int wa_seg_fail(wa_seg_reader *r, int64_t block, const char *why) {
    r->why = why;
    r->err_block = block;
    return WA_E_FORMAT;
}

/* Check header, footer and index of a mapped file and load the index. */
static int wa_seg_open(wa_seg_reader *r, const uint8_t *map, size_t size, size_t cache_limit) {
    memset(r, 0, sizeof *r);
    r->lru_head = r->lru_tail = -1;
    r->err_block = -1;
    r->fd = -1;
    r->map = map;
    r->size = size;
    r->cache_limit = cache_limit;
    if (size < WA_SEG_HEADER + WA_SEG_FOOTER)
        return wa_seg_fail(r, -1, "too short to be an index segment (truncated?)");
    if (memcmp(map, wa_seg_magic, 8) != 0)
        return wa_seg_fail(r, -1, "wrong magic at byte 0: not an index segment");
    const uint8_t *f = map + size - WA_SEG_FOOTER;
    if (memcmp(f + 40, wa_seg_magic, 8) != 0)
        return wa_seg_fail(r, -1, "no footer magic at the end: the file is truncated or not a segment");
    if (wa_crc32(0, f, 36) != wa_le32(f + 36))
        return wa_seg_fail(r, -1, "footer checksum mismatch");
    r->version = wa_le16(f + 32);
    if (r->version != WA_SEG_VERSION || wa_le32(map + 8) != WA_SEG_VERSION)
        return wa_seg_fail(r, -1, "unknown segment version (written by a newer warchive?)");
    r->comp = f[34];
    if (r->comp > WA_SEG_ZSTD || f[35] != 0 || wa_le32(map + 12) != 0)
        return wa_seg_fail(r, -1, "unknown compression or flags in the footer");
    if (r->comp == WA_SEG_ZSTD && !wa_seg_have_zstd()) {
        r->unsupported = 1;
        wa_seg_fail(r, -1, "zstd-compressed segment, but this warchive was built without libzstd");
        return WA_E_UNSUPPORTED;
    }
    r->index_off = wa_le64(f);
    r->index_len = wa_le64(f + 8);
    r->nlines = wa_le64(f + 16);
    r->nblocks = wa_le32(f + 24);
    if (r->index_off < WA_SEG_HEADER || r->index_off > size - WA_SEG_FOOTER ||
        r->index_len != size - WA_SEG_FOOTER - r->index_off)
        return wa_seg_fail(r, -1, "index position in the footer is out of range");
    const uint8_t *p = map + r->index_off, *end = p + r->index_len;
    if (wa_crc32(0, p, (size_t)r->index_len) != wa_le32(f + 28))
        return wa_seg_fail(r, -1, "index checksum mismatch");
    uint64_t nb;
    if (wa_get_varint(&p, end, &nb) || nb != r->nblocks || nb > r->index_len)
        return wa_seg_fail(r, -1, "block count of the index disagrees with the footer");
    size_t n = (size_t)nb;
    r->z.kind = r->comp;
    r->boff = (uint64_t *)malloc((n + 1) * sizeof(uint64_t));
    r->bline = (uint64_t *)malloc((n + 1) * sizeof(uint64_t));
    r->bnl = (uint64_t *)malloc((n + 1) * sizeof(uint64_t));
    r->bdisk = (uint32_t *)malloc((n + 1) * sizeof(uint32_t));
    r->bcrc = (uint32_t *)malloc((n + 1) * sizeof(uint32_t));
    r->sep_off = (size_t *)malloc((n + 1) * sizeof(size_t));
    r->slot = (wa_seg_block **)calloc(n + 1, sizeof(wa_seg_block *));
    r->lru_prev = (int64_t *)malloc((n + 1) * sizeof(int64_t));
    r->lru_next = (int64_t *)malloc((n + 1) * sizeof(int64_t));
    if (!r->boff || !r->bline || !r->bnl || !r->bdisk || !r->bcrc ||
        !r->sep_off || !r->slot || !r->lru_prev || !r->lru_next)
        return WA_E_NOMEM;
    wa_bytes seps = {0}, prev = {0};
    uint64_t off = WA_SEG_HEADER, line = 0;
    int rc = WA_OK;
    for (size_t b = 0; b < n; b++) {
        uint64_t shared, unshared, disk, nl;
        if (wa_get_varint(&p, end, &shared) || wa_get_varint(&p, end, &unshared) ||
            shared > prev.len || unshared > (uint64_t)(end - p)) {
            rc = wa_seg_fail(r, (int64_t)b, "index entry is cut short");
            break;
        }
        prev.len = (size_t)shared;
        r->sep_off[b] = seps.len;
        if (wa_bytes_put(&prev, p, (size_t)unshared) || wa_bytes_put(&seps, prev.p, prev.len)) {
            rc = WA_E_NOMEM;
            break;
        }
        p += unshared;
        if (wa_get_varint(&p, end, &disk) || wa_get_varint(&p, end, &nl) || end - p < 4) {
            rc = wa_seg_fail(r, (int64_t)b, "index entry is cut short");
            break;
        }
        if (disk > r->index_off - off || disk > 0xffffffffu || nl == 0) {
            rc = wa_seg_fail(r, (int64_t)b, "index entry out of range");
            break;
        }
        r->boff[b] = off;
        r->bline[b] = line;
        r->bnl[b] = nl;
        r->bdisk[b] = (uint32_t)disk;
        r->bcrc[b] = wa_le32(p);
        p += 4;
        off += disk;
        line += nl;
    }
    if (rc == WA_OK) {
        r->sep_off[n] = seps.len;
        r->seps = seps.p;
        seps.p = NULL;
        r->bline[n] = line;
        r->boff[n] = off;
        uint64_t fl, ll;
        if (off != r->index_off || line != r->nlines)
            rc = wa_seg_fail(r, -1, "blocks of the index do not add up to the footer's counts");
        else if (wa_get_varint(&p, end, &fl) || fl > (uint64_t)(end - p))
            rc = wa_seg_fail(r, -1, "index: first line is cut short");
        else {
            r->first = p;
            r->first_len = (size_t)fl;
            p += fl;
            if (wa_get_varint(&p, end, &ll) || ll != (uint64_t)(end - p))
                rc = wa_seg_fail(r, -1, "index: last line is cut short");
            else {
                r->last = p;
                r->last_len = (size_t)ll;
            }
        }
    }
    /* separators must not go down */
    for (size_t b = 1; rc == WA_OK && b < n; b++) {
        size_t la = r->sep_off[b] - r->sep_off[b - 1], lb = r->sep_off[b + 1] - r->sep_off[b];
        size_t m = la < lb ? la : lb;
        int c = m ? memcmp(r->seps + r->sep_off[b - 1], r->seps + r->sep_off[b], m) : 0;
        if (c > 0 || (c == 0 && la > lb)) rc = wa_seg_fail(r, (int64_t)b, "index separators out of order");
    }
    wa_bytes_free(&seps);
    wa_bytes_free(&prev);
    return rc;
}

/* The last block whose separator is < q (0 when none is). */
static uint64_t wa_seg_find_block(const wa_seg_reader *r, const uint8_t *q, size_t qn) {
    uint64_t lo = 1, hi = r->nblocks, ans = 0;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        const uint8_t *s = r->seps + r->sep_off[mid];
        size_t sn = r->sep_off[mid + 1] - r->sep_off[mid], m = sn < qn ? sn : qn;
        int c = m ? memcmp(s, q, m) : 0;
        if (c < 0 || (c == 0 && sn < qn)) {
            ans = mid;
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return ans;
}

/* The sizes of a block's sections from its first bytes: WA_OK and *hdr, or WA_E_FORMAT. */
static int wa_seg_block_sizes(const uint8_t *d, size_t disk, uint64_t ulen[], uint64_t clen[], size_t *hdr,
                              uint64_t *utotal, uint64_t *ctotal) {
    const uint8_t *p = d, *end = d + disk;
    *utotal = *ctotal = 0;
    for (int s = 0; s < WA_SEG_NSEC; s++) {
        if (wa_get_varint(&p, end, &ulen[s]) || wa_get_varint(&p, end, &clen[s]) ||
            ulen[s] > WA_SEG_MAX_BODY || clen[s] > disk || (ulen[s] == 0) != (clen[s] == 0))
            return WA_E_FORMAT;
        *utotal += ulen[s];
        *ctotal += clen[s];
    }
    *hdr = (size_t)(p - d);
    if (*utotal > WA_SEG_MAX_BODY || *ctotal > disk - *hdr || (disk - *hdr - *ctotal) % 20) return WA_E_FORMAT;
    return WA_OK;
}

/* Decompress the disk bytes of a block (d, disk) into a new wa_seg_block, and parse it. */
static int wa_seg_block_decode(wa_seg_codec *z, const uint8_t *d, size_t disk, wa_seg_block **out, const char **why) {
    uint64_t ulen[WA_SEG_NSEC], clen[WA_SEG_NSEC], ut, ct;
    size_t hdr;
    if (wa_seg_block_sizes(d, disk, ulen, clen, &hdr, &ut, &ct)) {
        *why = "block section sizes out of range";
        return WA_E_FORMAT;
    }
    wa_seg_block *k = (wa_seg_block *)calloc(1, sizeof *k);
    if (!k) return WA_E_NOMEM;
    k->refs = 1;
    k->ulen = (size_t)ut;
    k->rlen = disk - hdr - (size_t)ct;
    k->buf = (uint8_t *)malloc(k->ulen + k->rlen + 1);
    if (!k->buf) {
        wa_seg_block_unref(k);
        return WA_E_NOMEM;
    }
    const uint8_t *src = d + hdr;
    size_t at = 0;
    for (int s = 0; s < WA_SEG_NSEC; s++) {
        k->sec[s] = at;
        int rc = ulen[s] ? wa_seg_decompress(z, src, (size_t)clen[s], k->buf + at, (size_t)ulen[s]) : WA_OK;
        if (rc) {
            wa_seg_block_unref(k);
            *why = "block does not decompress";
            return rc;
        }
        src += clen[s];
        at += (size_t)ulen[s];
    }
    k->sec[WA_SEG_NSEC] = at;
    wa_cpy(k->buf + at, src, k->rlen);
    int rc = wa_seg_block_parse(k, why);
    if (rc) {
        wa_seg_block_unref(k);
        return rc;
    }
    *out = k;
    return WA_OK;
}

/* Read, check and decode block b. */
static int wa_seg_load(wa_seg_reader *r, uint64_t b, wa_seg_block **out) {
    const uint8_t *d = r->map + r->boff[b];
    size_t disk = r->bdisk[b];
    if (r->fd >= 0) {   /* the bytes are still in the file: a page past its end would be SIGBUS */
        struct stat st;
        if (fstat(r->fd, &st) == 0 && (uint64_t)st.st_size < r->boff[b] + disk) {
            r->why = "the file was cut short while open";
            r->err_block = (int64_t)b;
            return WA_E_SHRUNK;
        }
    }
    if (wa_crc32(0, d, disk) != r->bcrc[b])
        return wa_seg_fail(r, (int64_t)b, "block checksum mismatch (the file is damaged)");
    const char *why = NULL;
    wa_seg_block *k = NULL;
    int rc = wa_seg_block_decode(&r->z, d, disk, &k, &why);
    if (rc == WA_OK && k->nlines != r->bnl[b]) {
        wa_seg_block_unref(k);
        why = "block line count disagrees with the index";
        rc = WA_E_FORMAT;
    }
    if (rc) return rc == WA_E_FORMAT ? wa_seg_fail(r, (int64_t)b, why) : rc;
    *out = k;
    return WA_OK;
}

/* Block b through the cache: a borrowed reference, valid until the next call. */
static int wa_seg_get(wa_seg_reader *r, uint64_t b, wa_seg_block **out) {
    int64_t i = (int64_t)b;
    wa_seg_block *k = r->slot[b];
    if (k) {
        r->hits++;
        if (r->lru_head != i) {  /* to the front */
            r->lru_next[r->lru_prev[i]] = r->lru_next[i];
            if (r->lru_next[i] >= 0) r->lru_prev[r->lru_next[i]] = r->lru_prev[i];
            else r->lru_tail = r->lru_prev[i];
            r->lru_prev[i] = -1;
            r->lru_next[i] = r->lru_head;
            r->lru_prev[r->lru_head] = i;
            r->lru_head = i;
        }
        *out = k;
        return WA_OK;
    }
    r->misses++;
    int rc = wa_seg_load(r, b, &k);
    if (rc) return rc;
    r->slot[b] = k;
    r->lru_prev[i] = -1;
    r->lru_next[i] = r->lru_head;
    if (r->lru_head >= 0) r->lru_prev[r->lru_head] = i;
    r->lru_head = i;
    if (r->lru_tail < 0) r->lru_tail = i;
    r->cache_used += k->cost;
    while (r->cache_used > r->cache_limit && r->lru_tail != i) wa_seg_cache_drop(r, r->lru_tail);
    *out = k;
    return WA_OK;
}

/* Read, check and decode every line of block b, past the cache (for verify). */
static int wa_seg_check_block(wa_seg_reader *r, uint64_t b, wa_seg_cur *c) {
    wa_seg_block *k;
    int rc = wa_seg_load(r, b, &k);
    if (rc) return rc;
    wa_seg_cur_attach(c, k);
    wa_seg_block_unref(k);
    wa_seg_cur_seek(c, 0);
    while ((rc = wa_seg_cur_next(c)) == WA_OK && (rc = wa_seg_cur_format(c)) == WA_OK) {}
    wa_seg_cur_attach(c, NULL);
    if (rc == WA_EOF) return WA_OK;
    return rc == WA_E_FORMAT ? wa_seg_fail(r, (int64_t)b, c->why ? c->why : "entry does not decode") : rc;
}

/* ---------------------------------------------------------------- range iteration */

typedef struct {
    wa_seg_cur c;
    uint64_t block;
    int have;                 /* the cursor holds a line not yet returned */
    const uint8_t *stop;      /* NULL: no upper bound */
    size_t stop_len;
} wa_seg_it;

static inline void wa_seg_it_free(wa_seg_it *it) { wa_seg_cur_free(&it->c); }

static int wa_seg_it_block(wa_seg_reader *r, wa_seg_it *it, uint64_t b) {
    wa_seg_block *k;
    int rc = wa_seg_get(r, b, &k);
    if (rc) return rc;
    wa_seg_cur_attach(&it->c, k);
    it->block = b;
    return WA_OK;
}

static int wa_seg_cur_fail(wa_seg_reader *r, wa_seg_it *it, int rc) {
    if (rc == WA_E_FORMAT) return wa_seg_fail(r, (int64_t)it->block, it->c.why ? it->c.why : "entry does not decode");
    return rc;
}

/* Position it on the first line >= q (q = NULL: the first line). */
static int wa_seg_it_start(wa_seg_reader *r, wa_seg_it *it, const uint8_t *q, size_t qn) {
    it->have = 0;
    if (r->nblocks == 0) return WA_OK;
    uint64_t b = q ? wa_seg_find_block(r, q, qn) : 0;
    for (; b < r->nblocks; b++) {
        int rc = wa_seg_it_block(r, it, b);
        if (rc) return rc;
        if (q) {
            rc = wa_seg_cur_lower_bound(&it->c, q, qn);
        } else {
            wa_seg_cur_seek(&it->c, 0);
            rc = wa_seg_cur_next(&it->c);
        }
        if (rc == WA_OK) {
            it->have = 1;
            return WA_OK;
        }
        if (rc != WA_EOF) return wa_seg_cur_fail(r, it, rc);
    }
    return WA_OK;
}

/* Position it on line `line` of block b (paged reads). */
static int wa_seg_it_start_block(wa_seg_reader *r, wa_seg_it *it, uint64_t b) {
    it->have = 0;
    if (b >= r->nblocks) return WA_OK;
    int rc = wa_seg_it_block(r, it, b);
    if (rc) return rc;
    wa_seg_cur_seek(&it->c, 0);
    rc = wa_seg_cur_next(&it->c);
    if (rc) return wa_seg_cur_fail(r, it, rc == WA_EOF ? WA_E_FORMAT : rc);
    it->have = 1;
    return WA_OK;
}

/* The current line in it->c.out, then advance; WA_EOF at the stop or the end.
 * With one_block, stops at the end of the current block too. */
static int wa_seg_it_next(wa_seg_reader *r, wa_seg_it *it, int one_block) {
    if (!it->have) return WA_EOF;
    int rc, c;
    if (it->stop) {   /* the key alone decides, most of the time */
        if ((rc = wa_seg_cmp(&it->c.st, &it->c.b->cx, it->stop, it->stop_len, &it->c.scratch, &c))) return rc;
        if (c >= 0) {
            it->have = 0;
            return WA_EOF;
        }
    }
    if ((rc = wa_seg_cur_format(&it->c))) return rc;
    rc = wa_seg_cur_next(&it->c);
    while (rc == WA_EOF) {
        if (one_block || it->block + 1 >= r->nblocks) {
            it->have = 0;
            return WA_OK;
        }
        if ((rc = wa_seg_it_block(r, it, it->block + 1))) return rc;
        wa_seg_cur_seek(&it->c, 0);
        rc = wa_seg_cur_next(&it->c);
    }
    if (rc) return wa_seg_cur_fail(r, it, rc);
    return WA_OK;
}

#endif
