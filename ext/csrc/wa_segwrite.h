/* wa_segwrite.h -- the index-segment writer: lines in, file bytes out.
 *
 * The caller feeds sorted lines with wa_segw_add; when it reports a full
 * block, wa_segw_flush encodes, compresses and verifies it (no Python, so
 * the caller can release the GIL) and leaves the block's bytes in w->out
 * for the caller to write. wa_segw_finish does the same for the last block
 * and then the index and footer. The format is at the top of wa_segment.h.
 *
 * Nothing that does not decode back to the exact bytes it came from is
 * ever written: each structured entry is decoded as soon as it is encoded
 * (falling back to the raw form), and each compressed block is decompressed
 * and decoded whole before it is handed out (falling back to an all-raw
 * block, then to an error).
 */
#ifndef WA_SEGWRITE_H
#define WA_SEGWRITE_H

#include "wa_segment.h"

typedef struct {
    /* settings */
    uint32_t R;
    uint64_t block_lines;
    size_t block_bytes;
    wa_seg_codec z;
    /* the pending block's lines */
    wa_bytes lines;
    wa_bytes loff;              /* size_t offsets, nl + 1 */
    uint64_t nl;
    /* across blocks */
    wa_bytes last;              /* the last line added */
    int have_last;
    wa_bytes first;             /* the first line of the file */
    wa_bytes prev_sep;
    wa_bytes prev_last;         /* the last line of the block before */
    uint64_t total_lines, nblocks, file_off;
    wa_bytes index;
    /* block encoder */
    wa_bytes sarena, soff, slen;
    uint64_t nstr;
    uint32_t *htab;
    size_t hcap;
    wa_bytes sm[WA_SEG_NS];     /* the streams */
    wa_bytes raw, meta, gsz, cand, fmt;   /* digests; meta section; group sizes */
    size_t gstart[WA_SEG_NS + 1];        /* stream lengths and digests where the group began */
    uint64_t ulen_total;
    wa_seg_state A, B;         /* decoder state after the committed entries; trial copy */
    wa_seg_ctx cx;
    wa_seg_cur vc;
    int force_raw;
    /* results */
    wa_bytes out;
    uint64_t n_struct, n_raw, raw_blocks;
    const char *why;
} wa_segw;

static void wa_segw_free(wa_segw *w) {
    wa_bytes *bufs[] = {&w->lines, &w->loff, &w->last, &w->first, &w->prev_sep, &w->prev_last, &w->index, &w->sarena,
                       &w->soff, &w->slen, &w->raw, &w->meta, &w->gsz, &w->cand, &w->fmt, &w->out};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) wa_bytes_free(bufs[i]);
    for (int s = 0; s < WA_SEG_NS; s++) wa_bytes_free(&w->sm[s]);
    free(w->htab);
    w->htab = NULL;
    wa_seg_state_free(&w->A);
    wa_seg_state_free(&w->B);
    wa_seg_cur_free(&w->vc);
    wa_seg_codec_free(&w->z);
}

/* Settings are checked by the caller. w->out receives the file header. */
static int wa_segw_init(wa_segw *w, uint32_t R, uint64_t block_lines, size_t block_bytes, int comp, int level) {
    memset(w, 0, sizeof *w);
    w->R = R;
    w->block_lines = block_lines;
    w->block_bytes = block_bytes;
    w->z.kind = comp;
    w->z.level = level;
    size_t zero = 0;
    if (wa_bytes_put(&w->loff, &zero, sizeof zero) || wa_bytes_reserve(&w->out, WA_SEG_HEADER)) return WA_E_NOMEM;
    wa_cpy(w->out.p, wa_seg_magic, 8);
    wa_put_u32le(w->out.p + 8, WA_SEG_VERSION);
    wa_put_u32le(w->out.p + 12, 0);
    w->out.len = WA_SEG_HEADER;
    w->file_off = WA_SEG_HEADER;
    return WA_OK;
}

/* 0: added; 1: added, and the block is full (flush it); WA_E_UNSORTED: the line
 * sorts before the previous one (nothing added). */
static int wa_segw_add(wa_segw *w, const uint8_t *p, size_t n) {
    if (w->have_last) {
        size_t m = n < w->last.len ? n : w->last.len;
        int c = m ? memcmp(p, w->last.p, m) : 0;
        if (c < 0 || (c == 0 && n < w->last.len)) {
            w->why = "line out of order";
            return WA_E_UNSORTED;
        }
    }
    w->last.len = 0;
    if (wa_bytes_put(&w->last, p, n) || wa_bytes_put(&w->lines, p, n)) return WA_E_NOMEM;
    if (!w->have_last && wa_bytes_put(&w->first, p, n)) return WA_E_NOMEM;
    w->have_last = 1;
    size_t end = w->lines.len;
    if (wa_bytes_put(&w->loff, &end, sizeof end)) return WA_E_NOMEM;
    w->nl++;
    w->total_lines++;
    return (w->block_lines && w->nl >= w->block_lines) || (w->block_bytes && w->lines.len >= w->block_bytes);
}

static inline size_t wa_segw_loff(const wa_segw *w, uint64_t i) { return ((const size_t *)w->loff.p)[i]; }

/* ---------------------------------------------------------------- strings */

static inline uint64_t wa_segw_hash(const uint8_t *p, size_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h ^ (h >> 29);
}

static int wa_segw_intern(wa_segw *w, const uint8_t *p, size_t n, uint64_t *idx) {
    if (2 * (w->nstr + 1) > w->hcap) {
        size_t cap = w->hcap ? 2 * w->hcap : 64;
        uint32_t *t = (uint32_t *)calloc(cap, sizeof *t);
        if (!t) return WA_E_NOMEM;
        for (uint64_t i = 0; i < w->nstr; i++) {
            uint32_t o = ((uint32_t *)w->soff.p)[i], l = ((uint32_t *)w->slen.p)[i];
            size_t h = (size_t)wa_segw_hash(w->sarena.p + o, l) & (cap - 1);
            while (t[h]) h = (h + 1) & (cap - 1);
            t[h] = (uint32_t)i + 1;
        }
        free(w->htab);
        w->htab = t;
        w->hcap = cap;
    }
    size_t h = (size_t)wa_segw_hash(p, n) & (w->hcap - 1);
    while (w->htab[h]) {
        uint32_t i = w->htab[h] - 1;
        uint32_t o = ((uint32_t *)w->soff.p)[i], l = ((uint32_t *)w->slen.p)[i];
        if (l == n && wa_eq(w->sarena.p + o, p, n)) {
            *idx = i;
            return WA_OK;
        }
        h = (h + 1) & (w->hcap - 1);
    }
    if (w->sarena.len + n > 0xffffffffu || n > 0xffffffffu) return WA_E_TOO_BIG;
    uint32_t o = (uint32_t)w->sarena.len, l = (uint32_t)n;
    if (wa_bytes_put(&w->sarena, p, n) || wa_bytes_put(&w->soff, &o, 4) || wa_bytes_put(&w->slen, &l, 4))
        return WA_E_NOMEM;
    w->htab[h] = (uint32_t)w->nstr + 1;
    *idx = w->nstr++;
    return WA_OK;
}

/* ---------------------------------------------------------------- entries */

static inline size_t wa_lcp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
    size_t n = an < bn ? an : bn, i = 0;
    while (i < n && a[i] == b[i]) i++;
    return i;
}

static inline size_t wa_lcs(const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
    size_t n = an < bn ? an : bn, i = 0;
    while (i < n && a[an - 1 - i] == b[bn - 1 - i]) i++;
    return i;
}

static inline void wa_segw_ctx(wa_segw *w) {
    w->cx.sbase = w->sarena.p;
    w->cx.soff = (const uint32_t *)w->soff.p;
    w->cx.slen = (const uint32_t *)w->slen.p;
    w->cx.nstr = w->nstr;
    w->cx.raw = w->raw.p;
    w->cx.nraw = w->raw.len / 20;
}

/* The URL against the cheaper of two bases: the previous URL of the group, or
 * the scheme part of this URL (a block string) + the key's candidate. */
static int wa_segw_put_url(wa_segw *w, const uint8_t *u, size_t un, const uint8_t *key, size_t kn) {
    wa_segw_ctx(w);
    int rc = wa_seg_url_make(&w->A, &w->cx);   /* the previous URL, with the previous key */
    if (rc) return rc;
    size_t k = 0;
    for (size_t i = 0; i + 3 <= un && i < 32; i++) {
        if (u[i] == ':' && u[i + 1] == '/' && u[i + 2] == '/') {
            k = i + 3;
            break;
        }
    }
    w->cand.len = 0;
    if (wa_bytes_reserve(&w->cand, un + kn)) return WA_E_NOMEM;
    size_t cl = wa_seg_cand(key, kn, w->cand.p + un);  /* leave room for the prefix */
    const uint8_t *c = w->cand.p + un;
    if (!(cl >= 3 && memcmp(c, "www", 3) == 0) && un - k > 3 && memcmp(u + k, "www", 3) == 0) {
        size_t j = k + 3;
        while (j < un && u[j] >= '0' && u[j] <= '9') j++;
        if (j < un && u[j] == '.') k = j + 1;
    }
    uint8_t *base1 = w->cand.p + un - k;
    wa_cpy(base1, u, k);
    size_t bl1 = k + cl;
    size_t p1 = wa_lcp(u, un, base1, bl1);
    size_t s1 = wa_lcs(u + p1, un - p1, base1 + p1, bl1 - p1);
    const wa_bytes *prev = &w->A.url[w->A.cur];
    size_t p2 = wa_lcp(u, un, prev->p, prev->len);
    size_t s2 = wa_lcs(u + p2, un - p2, WA_AT(prev->p, p2), prev->len - p2);
    size_t lit1 = un - p1 - s1, lit2 = un - p2 - s2;
    uint64_t m = 0;
    size_t p, s, bl;
    if (prev->len && lit2 < lit1) {
        p = p2; s = s2; bl = prev->len;
    } else {
        if ((rc = wa_segw_intern(w, u, k, &m))) return rc;
        m++;
        p = p1; s = s1; bl = bl1;
    }
    wa_bytes *num = &w->sm[WA_S_NUM];
    if (wa_put_varint(num, m) || wa_put_varint(num, bl - p - s) || wa_put_varint(num, s) ||
        wa_put_varint(num, un - p - s) || wa_bytes_put(&w->sm[WA_S_TEXT], u + p, un - p - s))
        return WA_E_NOMEM;
    return WA_OK;
}

static int wa_segw_put_head(wa_segw *w, const uint8_t *key, size_t kn, uint64_t tag) {
    size_t shared = wa_lcp(w->A.key.p, w->A.key.len, key, kn);
    wa_bytes *h = &w->sm[WA_S_HEAD];
    if (wa_put_varint(h, shared) || wa_put_varint(h, kn - shared) || wa_put_varint(h, tag) ||
        wa_bytes_put(&w->sm[WA_S_KEY], key + shared, kn - shared))
        return WA_E_NOMEM;
    return WA_OK;
}

static int wa_segw_put_struct(wa_segw *w, const wa_seg_line *L) {
    const wa_seg_state *A = &w->A;
    wa_bytes *num = &w->sm[WA_S_NUM];
    int nf = wa_seg_nfields(L->kind);
    unsigned absent = ~L->mask & ((1u << nf) - 1);
    int rc;
    if ((rc = wa_segw_put_head(w, L->key, L->key_len, (uint64_t)L->kind | ((uint64_t)absent << 2))) ||
        wa_put_varint(&w->sm[WA_S_HEAD], wa_zz((int64_t)(L->ts - A->ts))))
        return WA_E_NOMEM;
    uint64_t ftag = 0, idx;
    for (int f = 0; f < nf; f++) {
        if (!(L->mask & (1u << f))) continue;
        switch (f) {
        case WA_F_URL:
            if ((rc = wa_segw_put_url(w, L->v[f], L->vl[f], L->key, L->key_len))) return rc;
            break;
        case WA_F_DIGEST: {
            int same = 0;
            if (A->dprev == L->dig) {
                if (L->dig == WA_D_LIT)
                    same = A->dprev_n == L->vl[f] && wa_eq(A->dprev_p, L->v[f], L->vl[f]);
                else
                    same = memcmp(A->dprev_p, L->dig_raw, 20) == 0;
            }
            if (same) {
                rc = wa_put_varint(num, WA_D_SAME);
            } else if (L->dig == WA_D_LIT) {
                rc = wa_put_varint(num, WA_D_LIT) || wa_put_varint(num, L->vl[f]) ||
                     wa_bytes_put(&w->sm[WA_S_TEXT], L->v[f], L->vl[f]);
            } else {
                rc = wa_put_varint(num, (uint64_t)L->dig) || wa_bytes_put(&w->raw, L->dig_raw, 20);
            }
            if (rc) return WA_E_NOMEM;
            break;
        }
        case WA_F_LENGTH:
            if (wa_put_varint(&w->sm[WA_S_LEN], L->length)) return WA_E_NOMEM;
            break;
        case WA_F_OFFSET:
            break;
        default:
            if ((rc = wa_segw_intern(w, L->v[f], L->vl[f], &idx))) return rc;
            if (wa_put_varint(num, idx)) return WA_E_NOMEM;
            if (f == WA_F_FILENAME) ftag = idx + 1;
        }
    }
    if (L->mask & (1u << WA_F_OFFSET)) {
        uint64_t expect = wa_seg_off_expect(A, ftag);
        if (wa_put_varint(&w->sm[WA_S_OFF], wa_zz((int64_t)(L->offset - expect)))) return WA_E_NOMEM;
    }
    return WA_OK;
}

/* Decode the entry written at stream positions at[] from a copy of A; commit it
 * (B becomes A) if it uses exactly what was written and gives back the line. */
static int wa_segw_try(wa_segw *w, const size_t at[], const uint8_t *line, size_t n, int *ok) {
    int rc = wa_seg_state_copy(&w->B, &w->A);
    if (rc) return rc;
    wa_segw_ctx(w);
    wa_seg_rd rd;
    for (int s = 0; s < WA_SEG_NS; s++) {
        rd.p[s] = WA_AT(w->sm[s].p, at[s]);   /* NULL while the stream is empty */
        rd.end[s] = WA_AT(w->sm[s].p, w->sm[s].len);
    }
    rc = wa_seg_decode(&w->B, &w->cx, &rd);
    if (rc == WA_E_NOMEM) return rc;
    *ok = 0;
    if (rc == WA_OK) {
        int used = w->B.raw_next == w->raw.len / 20;
        for (int s = 0; s < WA_SEG_NS; s++) used &= rd.p[s] == rd.end[s];
        if (used) {
            if ((rc = wa_seg_format(&w->B, &w->cx, &w->fmt))) return rc;
            *ok = w->fmt.len == n && wa_eq(w->fmt.p, line, n);
        }
    }
    if (*ok) {
        wa_seg_state t = w->A;
        w->A = w->B;
        w->B = t;
    }
    return WA_OK;
}

static int wa_segw_encode_line(wa_segw *w, const uint8_t *line, size_t n) {
    size_t at[WA_SEG_NS], raw0 = w->raw.len;
    for (int s = 0; s < WA_SEG_NS; s++) at[s] = w->sm[s].len;
    int rc, ok = 0;
    wa_seg_line L;
    if (!w->force_raw && (wa_seg_parse_cdxj(line, n, &L) || wa_seg_parse_cdx11(line, n, &L))) {
        if ((rc = wa_segw_put_struct(w, &L)) || (rc = wa_segw_try(w, at, line, n, &ok))) return rc;
        if (ok) {
            w->n_struct++;
            return WA_OK;
        }
        for (int s = 0; s < WA_SEG_NS; s++) w->sm[s].len = at[s];
        w->raw.len = raw0;
    }
    if ((rc = wa_segw_put_head(w, line, n, WA_SEG_RAW)) || (rc = wa_segw_try(w, at, line, n, &ok))) return rc;
    if (!ok) {
        w->why = "a line does not decode back to itself even stored raw (bug)";
        return WA_E_FORMAT;
    }
    w->n_raw++;
    return WA_OK;
}

/* Close the group that began at w->gstart: its size in each stream, its digests. */
static int wa_segw_end_group(wa_segw *w) {
    for (int s = 0; s < WA_SEG_NS; s++)
        if (wa_put_varint(&w->gsz, w->sm[s].len - w->gstart[s])) return WA_E_NOMEM;
    return wa_put_varint(&w->gsz, w->raw.len / 20 - w->gstart[WA_SEG_NS]);
}

/* The pending lines into the streams and the meta section. */
static int wa_segw_encode_block(wa_segw *w) {
    uint64_t nl = w->nl;
    w->nstr = 0;
    w->sarena.len = w->soff.len = w->slen.len = 0;
    if (w->htab) memset(w->htab, 0, w->hcap * sizeof *w->htab);
    for (int s = 0; s < WA_SEG_NS; s++) w->sm[s].len = 0;
    w->raw.len = w->meta.len = w->gsz.len = 0;
    /* digests point into TEXT and raw while the block is built: no realloc after this */
    if (wa_bytes_reserve(&w->sm[WA_S_TEXT], w->lines.len + 64) || wa_bytes_reserve(&w->raw, 20 * (size_t)nl + 20))
        return WA_E_NOMEM;
    uint8_t *text0 = w->sm[WA_S_TEXT].p, *raw0 = w->raw.p;
    w->cx.base_ts = 0;
    for (uint64_t i = 0; i < nl; i++) {
        wa_seg_line L;
        size_t o = wa_segw_loff(w, i);
        if (wa_seg_parse_head(w->lines.p + o, wa_segw_loff(w, i + 1) - o, &L)) {
            w->cx.base_ts = L.ts;
            break;
        }
    }
    int rc;
    for (uint64_t i = 0; i < nl; i++) {
        if (i % w->R == 0) {
            if (i && (rc = wa_segw_end_group(w))) return rc;
            for (int s = 0; s < WA_SEG_NS; s++) w->gstart[s] = w->sm[s].len;
            w->gstart[WA_SEG_NS] = w->raw.len / 20;
            wa_seg_state_reset(&w->A, &w->cx, w->raw.len / 20);
        }
        size_t o = wa_segw_loff(w, i);
        if ((rc = wa_segw_encode_line(w, w->lines.p + o, wa_segw_loff(w, i + 1) - o))) return rc;
        if (w->sm[WA_S_TEXT].p != text0 || w->raw.p != raw0) {
            w->why = "literal buffer moved while a block was built (bug)";
            return WA_E_FORMAT;
        }
    }
    if ((rc = wa_segw_end_group(w))) return rc;
    if (wa_put_varint(&w->meta, nl) || wa_put_varint(&w->meta, w->R) || wa_put_varint(&w->meta, w->cx.base_ts) ||
        wa_put_varint(&w->meta, w->nstr))
        return WA_E_NOMEM;
    for (uint64_t i = 0; i < w->nstr; i++) {
        uint32_t so = ((uint32_t *)w->soff.p)[i], sl = ((uint32_t *)w->slen.p)[i];
        if (wa_put_varint(&w->meta, sl) || wa_bytes_put(&w->meta, w->sarena.p + so, sl)) return WA_E_NOMEM;
    }
    if (wa_bytes_put(&w->meta, w->gsz.p, w->gsz.len)) return WA_E_NOMEM;
    uint64_t total = w->meta.len;
    for (int s = 0; s < WA_SEG_NS; s++) total += w->sm[s].len;
    if (total > WA_SEG_MAX_BODY) return WA_E_TOO_BIG;
    w->ulen_total = total;
    return WA_OK;
}

/* The encoded block, compressed, to out: section sizes, sections, digests. */
static int wa_segw_compress_block(wa_segw *w) {
    const wa_bytes *sec[WA_SEG_NSEC];
    sec[0] = &w->meta;
    for (int s = 0; s < WA_SEG_NS; s++) sec[1 + s] = &w->sm[s];
    size_t cap = 0;
    for (int i = 0; i < WA_SEG_NSEC; i++) cap += wa_seg_bound(&w->z, sec[i]->len);
    /* compress behind room for the header, then put the header right before the sections */
    size_t room = 20 * WA_SEG_NSEC, start = w->out.len;
    if (wa_bytes_reserve(&w->out, room + cap + w->raw.len)) return WA_E_NOMEM;
    uint8_t *body = w->out.p + start + room;
    size_t at = 0, clen[WA_SEG_NSEC];
    for (int i = 0; i < WA_SEG_NSEC; i++) {
        clen[i] = 0;
        if (sec[i]->len) {
            int rc = wa_seg_compress(&w->z, sec[i]->p, sec[i]->len, body + at, cap - at, &clen[i]);
            if (rc) return rc;
            if (clen[i] == 0) return WA_E_COMPRESS;
        }
        at += clen[i];
    }
    wa_bytes hdr = {0};
    for (int i = 0; i < WA_SEG_NSEC; i++) {
        if (wa_put_varint(&hdr, sec[i]->len) || wa_put_varint(&hdr, clen[i])) {
            wa_bytes_free(&hdr);
            return WA_E_NOMEM;
        }
    }
    memmove(w->out.p + start + hdr.len, body, at);
    wa_cpy(w->out.p + start, hdr.p, hdr.len);
    wa_cpy(w->out.p + start + hdr.len + at, w->raw.p, w->raw.len);
    w->out.len = start + hdr.len + at + w->raw.len;
    wa_bytes_free(&hdr);
    return WA_OK;
}

/* Decode the block in out[start:] as a reader would and check every line against the input. */
static int wa_segw_verify(wa_segw *w, size_t start, int *ok) {
    *ok = 0;
    const char *why;
    wa_seg_block *k = NULL;
    int rc = wa_seg_block_decode(&w->z, w->out.p + start, w->out.len - start, &k, &why);
    if (rc) return rc == WA_E_NOMEM ? rc : WA_OK;
    if (k->nlines == w->nl) {
        wa_seg_cur_attach(&w->vc, k);
        wa_seg_cur_seek(&w->vc, 0);
        uint64_t i = 0;
        while ((rc = wa_seg_cur_next(&w->vc)) == WA_OK) {
            if (i >= w->nl || (rc = wa_seg_cur_format(&w->vc))) break;
            size_t o = wa_segw_loff(w, i), n = wa_segw_loff(w, i + 1) - o;
            if (w->vc.out.len != n || !wa_eq(w->vc.out.p, w->lines.p + o, n)) break;
            i++;
        }
        *ok = rc == WA_EOF && i == w->nl;
        wa_seg_cur_attach(&w->vc, NULL);
    }
    wa_seg_block_unref(k);
    return rc == WA_E_NOMEM ? rc : WA_OK;
}

/* Encode, compress and verify the pending block; its bytes go to w->out and
 * its entry to the index. */
static int wa_segw_flush(wa_segw *w) {
    if (w->nl == 0) return WA_OK;
    int rc, ok = 0;
    size_t start = w->out.len;
    uint64_t n_struct = w->n_struct, n_raw = w->n_raw;
    for (w->force_raw = 0; w->force_raw < 2; w->force_raw++) {
        w->out.len = start;
        w->n_struct = n_struct;
        w->n_raw = n_raw;
        if ((rc = wa_segw_encode_block(w)) || (rc = wa_segw_compress_block(w)) || (rc = wa_segw_verify(w, start, &ok)))
            return rc;
        if (ok) break;
        w->raw_blocks++;
    }
    if (!ok) {
        w->why = "a block does not decode back to its lines (bug)";
        return WA_E_FORMAT;
    }
    size_t disk = w->out.len - start;
    uint32_t crc = wa_crc32(0, w->out.p + start, disk);
    /* separator: the first line up to "KEY TS", and past the last line of the block before */
    const uint8_t *f = w->lines.p;
    size_t fn = wa_segw_loff(w, 1), head = fn;
    const uint8_t *sp = fn ? (const uint8_t *)memchr(f, ' ', fn) : NULL;
    if (sp) {
        const uint8_t *sp2 = (const uint8_t *)memchr(sp + 1, ' ', fn - (size_t)(sp + 1 - f));
        if (sp2) head = (size_t)(sp2 - f);
    }
    size_t sep = head;
    if (w->nblocks) {
        size_t l = wa_lcp(w->prev_last.p, w->prev_last.len, f, fn);
        if (l + 1 > sep) sep = l + 1;
        if (sep > fn) sep = fn;
    }
    size_t shared = wa_lcp(w->prev_sep.p, w->prev_sep.len, f, sep);
    uint8_t c4[4];
    wa_put_u32le(c4, crc);
    if (wa_put_varint(&w->index, shared) || wa_put_varint(&w->index, sep - shared) ||
        wa_bytes_put(&w->index, f + shared, sep - shared) || wa_put_varint(&w->index, disk) ||
        wa_put_varint(&w->index, w->nl) || wa_bytes_put(&w->index, c4, 4))
        return WA_E_NOMEM;
    w->prev_sep.len = 0;
    if (wa_bytes_put(&w->prev_sep, f, sep)) return WA_E_NOMEM;
    size_t lo = wa_segw_loff(w, w->nl - 1);
    w->prev_last.len = 0;
    if (wa_bytes_put(&w->prev_last, w->lines.p + lo, w->lines.len - lo)) return WA_E_NOMEM;
    w->nblocks++;
    w->file_off += disk;
    w->nl = 0;
    w->lines.len = 0;
    w->loff.len = sizeof(size_t);
    return WA_OK;
}

/* Flush, then append the index and the footer to w->out. */
static int wa_segw_finish(wa_segw *w) {
    int rc = wa_segw_flush(w);
    if (rc) return rc;
    if (w->nblocks > 0xffffffffu) return WA_E_TOO_BIG;
    size_t start = w->out.len;
    uint64_t index_off = w->file_off + (w->out.len - start);
    if (wa_put_varint(&w->out, w->nblocks) || wa_bytes_put(&w->out, w->index.p, w->index.len) ||
        wa_put_varint(&w->out, w->first.len) || wa_bytes_put(&w->out, w->first.p, w->first.len) ||
        wa_put_varint(&w->out, w->have_last ? w->last.len : 0) ||
        wa_bytes_put(&w->out, w->last.p, w->have_last ? w->last.len : 0))
        return WA_E_NOMEM;
    size_t ilen = w->out.len - start;
    if (wa_bytes_reserve(&w->out, WA_SEG_FOOTER)) return WA_E_NOMEM;
    uint8_t *f = w->out.p + w->out.len;
    wa_put_u64le(f, index_off);
    wa_put_u64le(f + 8, ilen);
    wa_put_u64le(f + 16, w->total_lines);
    wa_put_u32le(f + 24, (uint32_t)w->nblocks);
    wa_put_u32le(f + 28, wa_crc32(0, w->out.p + start, ilen));
    f[32] = WA_SEG_VERSION & 0xff;
    f[33] = WA_SEG_VERSION >> 8;
    f[34] = (uint8_t)w->z.kind;
    f[35] = 0;
    wa_put_u32le(f + 36, wa_crc32(0, f, 36));
    wa_cpy(f + 40, wa_seg_magic, 8);
    w->out.len += WA_SEG_FOOTER;
    w->file_off = index_off + ilen + WA_SEG_FOOTER;
    return WA_OK;
}

#endif
