/* wa_gzip.h -- find gzip member boundaries exactly and inflate members.
 *
 * A record-per-member .warc.gz is read member by member. Three ways to go
 * through a member, cheapest first:
 *   head   inflate only the first bytes with zlib (its per-member set-up is the
 *          cheapest), e.g. the WARC and HTTP heads;
 *   skip   jump to the member end given by Wget's `sl` extra field (compressed
 *          and uncompressed length) when the next member header, or the end of
 *          the file, sits where it says and ISIZE agrees;
 *   whole  inflate everything and check CRC-32 and ISIZE: libdeflate when the
 *          member fits the window (it reports the exact input consumed), else
 *          ISA-L streaming (subtracting the bytes still in its bit buffer at the
 *          end), else zlib.
 * The member end found by `whole` is the truth; `sl` is only trusted by `skip`.
 *
 * Memory: the output buffer keeps the first `keep` bytes of a member plus a
 * streaming area; members are never held whole unless they fit WA_WHOLE_MAX.
 */
#ifndef WA_GZIP_H
#define WA_GZIP_H

#include "wa_codec.h"
#include "wa_source.h"

#define WA_GZ_HEADER_MAX (64 * 1024)      /* longest gzip header we accept (FEXTRA/FNAME/FCOMMENT) */
#define WA_WHOLE_MAX_IN (2u << 20)        /* members up to this compressed size go through libdeflate */
#define WA_WHOLE_MAX_OUT (4u << 20)       /* ... if they inflate to at most this (bigger: ISA-L streams, bounded memory) */
#define WA_STREAM_CHUNK (256u << 10)

typedef struct {
    uint32_t hlen;       /* bytes of gzip header */
    int has_sl;
    uint32_t sl_clen;    /* member length, header and trailer included */
    uint32_t sl_ulen;    /* uncompressed length */
} wa_gzhdr;

enum { WA_ENG_NONE = 0, WA_ENG_ZLIB = 1, WA_ENG_ISAL = 2, WA_ENG_WHOLE = 3 };

typedef struct {
    wa_source *src;
    int64_t m_off;       /* member start */
    wa_gzhdr h;
    int engine;
    int64_t in_off;      /* next compressed byte the engine has not consumed */
    uint8_t *out;        /* output window: bytes [out_start, out_start+out_len) of the member */
    size_t out_cap;
    size_t out_len;
    uint64_t out_start;
    uint64_t produced;   /* bytes the engine produced so far */
    uint32_t crc;        /* crc32 of the first crc_len produced bytes (zlib engine) */
    uint64_t crc_len;
    int done;            /* member fully inflated and trailer checked */
    int trusted_end;     /* m_end comes from `sl` without inflating */
    int64_t m_end;
    z_stream zs;
    int zs_init;
    wa_codec lib;        /* ISA-L's inflate state, libdeflate's decompressor */
    const char *why;     /* what went wrong (static string) */
    int64_t err_off;     /* where */
    int64_t hint_off;    /* the member there is hint_len bytes long (header and trailer included), */
    uint64_t hint_len;   /* as an index says (0: unknown): inflated whole at its first read */
    int cut_ok;          /* the input ending inside a member's data or trailer ends the member (cut) */
    int cut;             /* cut_ok, and the input ended inside this member: its data is what inflated */
} wa_gz;

static int wa_gz_init(wa_gz *g, wa_source *src) {
    memset(g, 0, sizeof(*g));
    g->src = src;
    g->out = (uint8_t *)wa_buf_get(64 * 1024, &g->out_cap);
    if (!g->out) return WA_E_NOMEM;
    if (inflateInit2(&g->zs, -15) != Z_OK) return WA_E_NOMEM;
    g->zs_init = 1;
    return wa_codec_init_inflate(&g->lib);
}

static void wa_gz_free(wa_gz *g) {
    wa_buf_put(g->out, g->out_cap);
    g->out = NULL;
    if (g->zs_init) inflateEnd(&g->zs);
    g->zs_init = 0;
    wa_codec_free(&g->lib);
}

static int wa_gz_fail(wa_gz *g, int code, const char *why, int64_t off) {
    g->why = why;
    g->err_off = off;
    return code;
}

/* The input ends inside the current member, at `end`: an error, or with cut_ok the member's end
 * (done, its data what inflated so far, no CRC-32 or ISIZE to check: the caller reads `cut`). */
static int wa_gz_cut(wa_gz *g, int64_t end, const char *why) {
    if (!g->cut_ok) return wa_gz_fail(g, WA_E_TRUNCATED, why, g->m_off);
    g->cut = 1;
    g->done = 1;
    g->m_end = end;
    return WA_OK;
}

static int wa_gz_reserve(wa_gz *g, size_t need) { return wa_grow(&g->out, &g->out_cap, need, 64 * 1024); }

/* Parse a gzip member header in p[0..n). n covers WA_GZ_HEADER_MAX bytes or the rest of the input. */
static int wa_gz_parse_header(const uint8_t *p, size_t n, wa_gzhdr *h, const char **why) {
    memset(h, 0, sizeof(*h));
    if (n < 10) {
        *why = "file ends inside a gzip header";
        return WA_E_TRUNCATED;
    }
    if (p[0] != 0x1f || p[1] != 0x8b) {
        *why = "not a gzip member (bad magic)";
        return WA_E_GZIP_HEADER;
    }
    if (p[2] != 8) {
        *why = "gzip member with a compression method other than deflate";
        return WA_E_GZIP_HEADER;
    }
    uint8_t flg = p[3];
    if (flg & 0xe0) {
        *why = "gzip member with reserved flag bits set";
        return WA_E_GZIP_HEADER;
    }
    size_t pos = 10;
    if (flg & 4) { /* FEXTRA */
        if (pos + 2 > n) goto trunc;
        size_t xlen = wa_le16(p + pos);
        pos += 2;
        if (pos + xlen > n) goto trunc;
        size_t x = pos, xend = pos + xlen;
        while (x + 4 <= xend) {
            size_t slen = wa_le16(p + x + 2);
            if (x + 4 + slen > xend) break; /* malformed subfield list: ignore the rest */
            if (p[x] == 's' && p[x + 1] == 'l' && slen == 8) {
                h->has_sl = 1;
                h->sl_clen = wa_le32(p + x + 4);
                h->sl_ulen = wa_le32(p + x + 8);
            }
            x += 4 + slen;
        }
        pos = xend;
    }
    if (flg & 8) { /* FNAME */
        const uint8_t *z = (const uint8_t *)memchr(p + pos, 0, n - pos);
        if (!z) goto trunc;
        pos = (size_t)(z - p) + 1;
    }
    if (flg & 16) { /* FCOMMENT */
        if (pos > n) goto trunc;
        const uint8_t *z = (const uint8_t *)memchr(p + pos, 0, n - pos);
        if (!z) goto trunc;
        pos = (size_t)(z - p) + 1;
    }
    if (flg & 2) pos += 2; /* FHCRC */
    if (pos > n) goto trunc;
    h->hlen = (uint32_t)pos;
    return WA_OK;
trunc:
    *why = n >= WA_GZ_HEADER_MAX ? "gzip header longer than 64 KiB" : "file ends inside a gzip header";
    return n >= WA_GZ_HEADER_MAX ? WA_E_GZIP_HEADER : WA_E_TRUNCATED;
}

/* Start the member at off. WA_EOF when the input ends exactly there. */
static int wa_gz_begin(wa_gz *g, int64_t off) {
    const uint8_t *p;
    size_t avail;
    /* a member of known length: its header is looked for in its own bytes first (one read) */
    size_t first = WA_GZ_HEADER_MAX;
    if (g->hint_len && off == g->hint_off && g->hint_len < first) first = g->hint_len < 64 ? 64 : (size_t)g->hint_len;
    int rc = wa_src_get(g->src, off, first, &p, &avail);
    if (rc != WA_OK) return wa_gz_fail(g, rc, "read error", off);
    g->m_off = off;
    g->engine = WA_ENG_NONE;
    g->out_len = 0;
    g->out_start = 0;
    g->produced = 0;
    g->crc = 0;
    g->crc_len = 0;
    g->done = 0;
    g->trusted_end = 0;
    g->cut = 0;
    g->m_end = -1;
    if (avail == 0) return WA_EOF;
    if (avail > WA_GZ_HEADER_MAX) avail = WA_GZ_HEADER_MAX;
    const char *why = NULL;
    rc = wa_gz_parse_header(p, avail, &g->h, &why);
    if (rc != WA_OK && first < WA_GZ_HEADER_MAX && avail < WA_GZ_HEADER_MAX) {
        /* not in the length given: the header as any other (the answer is then that one's) */
        if ((rc = wa_src_get(g->src, off, WA_GZ_HEADER_MAX, &p, &avail)) != WA_OK) return wa_gz_fail(g, rc, "read error", off);
        if (avail > WA_GZ_HEADER_MAX) avail = WA_GZ_HEADER_MAX;
        rc = wa_gz_parse_header(p, avail, &g->h, &why);
    }
    if (rc != WA_OK) return wa_gz_fail(g, rc, why, off);
    g->in_off = off + g->h.hlen;
    return WA_OK;
}

/* Check the 8-byte trailer at *at against crc/isize; on success set the member end. */
static int wa_gz_trailer(wa_gz *g, int64_t at, uint32_t crc, uint64_t isize) {
    const uint8_t *p;
    size_t avail;
    int rc = wa_src_get(g->src, at, 8, &p, &avail);
    if (rc != WA_OK) return wa_gz_fail(g, rc, "read error", at);
    if (avail < 8) return wa_gz_cut(g, at + (int64_t)avail, "file ends inside a gzip trailer");
    if (wa_le32(p) != crc) return wa_gz_fail(g, WA_E_CRC, "gzip member CRC-32 mismatch (corrupt data)", g->m_off);
    if (wa_le32(p + 4) != (uint32_t)isize)
        return wa_gz_fail(g, WA_E_ISIZE, "gzip member ISIZE mismatch (corrupt data)", g->m_off);
    g->done = 1;
    g->m_end = at + 8;
    return WA_OK;
}

/* zlib engine, head mode: the CRC is left for later (a head whose member is
 * skipped never needs it). Head mode keeps out[0..) = member bytes [0..), so
 * the missing part can be folded in whenever a non-head run starts or the
 * member ends. */
static void wa_gz_crc_catchup(wa_gz *g) {
    if (g->engine != WA_ENG_ZLIB || g->crc_len >= g->produced) return;
    if (g->out_start == 0 && g->out_len == g->produced) {
        g->crc = (uint32_t)crc32(g->crc, g->out + g->crc_len, (uInt)(g->produced - g->crc_len));
        g->crc_len = g->produced;
    }
}

/* zlib engine: produce output into out[out_len..limit) (window-relative).
 * lazy: head mode (see wa_gz_crc_catchup). */
static int wa_gz_zlib_run(wa_gz *g, size_t limit, int lazy) {
    const uint8_t *p;
    size_t avail;
    int rc;
    if (g->engine != WA_ENG_ZLIB) {
        inflateReset(&g->zs);
        g->engine = WA_ENG_ZLIB;
        g->crc = (uint32_t)crc32(0L, Z_NULL, 0);
        g->crc_len = 0;
    }
    if (!lazy) wa_gz_crc_catchup(g);
    while (!g->done && g->out_len < limit) {
        rc = wa_src_get(g->src, g->in_off, 64 * 1024, &p, &avail);
        if (rc != WA_OK) return wa_gz_fail(g, rc, "read error", g->in_off);
        if (avail > (1u << 30)) avail = 1u << 30;
        g->zs.next_in = (Bytef *)p;
        g->zs.avail_in = (uInt)avail;
        g->zs.next_out = g->out + g->out_len;
        g->zs.avail_out = (uInt)(limit - g->out_len);
        int zr = inflate(&g->zs, Z_NO_FLUSH);
        size_t used = avail - g->zs.avail_in;
        size_t made = (limit - g->out_len) - g->zs.avail_out;
        if (!lazy && made) {
            g->crc = (uint32_t)crc32(g->crc, g->out + g->out_len, (uInt)made);
            g->crc_len += made;
        }
        g->in_off += (int64_t)used;
        g->out_len += made;
        g->produced += made;
        if (zr == Z_STREAM_END) {
            wa_gz_crc_catchup(g);
            return wa_gz_trailer(g, g->in_off, g->crc, g->produced);
        }
        if (zr == Z_DATA_ERROR || zr == Z_NEED_DICT)
            return wa_gz_fail(g, WA_E_DEFLATE, "invalid deflate data in gzip member", g->m_off);
        if (zr == Z_MEM_ERROR) return WA_E_NOMEM;
        if (used == 0 && made == 0) {
            if (avail == 0) return wa_gz_cut(g, g->in_off, "file ends inside a gzip member");
            return wa_gz_fail(g, WA_E_DEFLATE, "deflate stream makes no progress", g->m_off);
        }
    }
    return WA_OK;
}

#ifdef WA_HAVE_ISAL
/* ISA-L engine: like wa_gz_zlib_run. */
static int wa_gz_isal_run(wa_gz *g, size_t limit) {
    const uint8_t *p;
    size_t avail;
    int rc;
    struct inflate_state *st = g->lib.isal;
    if (g->engine != WA_ENG_ISAL) {
        isal_inflate_reset(st);
        st->crc_flag = ISAL_GZIP_NO_HDR;
        g->engine = WA_ENG_ISAL;
    }
    while (!g->done && g->out_len < limit) {
        rc = wa_src_get(g->src, g->in_off, WA_STREAM_CHUNK, &p, &avail);
        if (rc != WA_OK) return wa_gz_fail(g, rc, "read error", g->in_off);
        if (avail > (1u << 30)) avail = 1u << 30;
        st->next_in = (uint8_t *)p;
        st->avail_in = (uint32_t)avail;
        st->next_out = g->out + g->out_len;
        size_t room = limit - g->out_len;
        if (room > (1u << 30)) room = 1u << 30;
        st->avail_out = (uint32_t)room;
        int ir = isal_inflate(st);
        size_t used = avail - st->avail_in;
        size_t made = room - st->avail_out;
        g->in_off += (int64_t)used;
        g->out_len += made;
        g->produced += made;
        if (ir < 0) return wa_gz_fail(g, WA_E_DEFLATE, "invalid deflate data in gzip member", g->m_off);
        if (st->block_state == ISAL_BLOCK_FINISH) {
            /* ISA-L reads ahead: bytes still in its bit buffer belong to what follows */
            int64_t end = g->in_off - (int64_t)(st->read_in_length >> 3) - (int64_t)st->tmp_in_size;
            g->in_off = end;
            return wa_gz_trailer(g, end, st->crc, g->produced);
        }
        if (used == 0 && made == 0) {
            if (avail == 0) return wa_gz_cut(g, g->in_off, "file ends inside a gzip member");
            if (st->avail_out != 0)
                return wa_gz_fail(g, WA_E_DEFLATE, "deflate stream makes no progress", g->m_off);
        }
    }
    return WA_OK;
}
#endif

/* Run the streaming engine (ISA-L if present, else zlib) until out_len >= limit or the member ends. */
static int wa_gz_run(wa_gz *g, size_t limit, int prefer_zlib) {
#ifdef WA_HAVE_ISAL
    if (g->engine == WA_ENG_ISAL || (g->engine == WA_ENG_NONE && !prefer_zlib)) return wa_gz_isal_run(g, limit);
#endif
    return wa_gz_zlib_run(g, limit, prefer_zlib);
}

static int wa_gz_try_hint(wa_gz *g);

/* Head: make the first `want` bytes of the member available in out[0..out_len)
 * (fewer only if the member is shorter). Uses zlib unless an engine already runs. */
static int wa_gz_head(wa_gz *g, size_t want) {
    int rc;
    if (g->out_start != 0) return wa_gz_fail(g, WA_E_GZIP_STATE, "head after streaming", g->m_off);
    if (g->out_len >= want || (g->done && !g->trusted_end)) return WA_OK;
    if ((rc = wa_gz_try_hint(g)) != WA_SLOW) return rc;
    if (g->trusted_end) { /* skipped on `sl`, now more is wanted: the engine goes on where the head stopped */
        g->done = 0;
        g->trusted_end = 0;
        g->m_end = -1;
    }
    if ((rc = wa_gz_reserve(g, want)) != WA_OK) return rc;
    return wa_gz_run(g, want, 1);
}

/* Inflate the current member again from its first byte (the input must be able to go back). */
static void wa_gz_restart(wa_gz *g) {
    g->done = 0;
    g->trusted_end = 0;
    g->cut = 0;
    g->m_end = -1;
    g->engine = WA_ENG_NONE;
    g->out_len = 0;
    g->out_start = 0;
    g->produced = 0;
    g->in_off = g->m_off + g->h.hlen;
}

#ifdef WA_HAVE_LIBDEFLATE
/* Inflate the member whole with libdeflate: the in_want bytes after its header (fewer where the
 * input ends) into out_want bytes of output. WA_E_TOO_BIG when the output does not fit, WA_SLOW
 * when the input is no whole deflate stream (the caller streams instead: that gives the
 * authoritative answer); else the trailer's check. */
static int wa_gz_ld_whole(wa_gz *g, size_t in_want, size_t out_want) {
    const uint8_t *p;
    size_t avail;
    int rc;
    int64_t start = g->m_off + g->h.hlen;
    rc = wa_src_get(g->src, start, in_want, &p, &avail);
    if (rc != WA_OK) return wa_gz_fail(g, rc, "read error", start);
    if (avail > WA_WHOLE_MAX_IN) avail = WA_WHOLE_MAX_IN;
    if ((rc = wa_gz_reserve(g, out_want)) != WA_OK) return rc;
    size_t ain = 0, aout = 0;
    rc = wa_ld_inflate(&g->lib, p, avail, g->out, out_want, &ain, &aout);
    if (rc != WA_OK) return rc == WA_E_TOO_BIG ? WA_E_TOO_BIG : WA_SLOW;
    g->engine = WA_ENG_WHOLE;
    g->out_start = 0;
    g->out_len = aout;
    g->produced = aout;
    g->in_off = start + (int64_t)ain;
    return wa_gz_trailer(g, g->in_off, (uint32_t)libdeflate_crc32(0, g->out, aout), aout);
}

/* Try the whole member with libdeflate; WA_SLOW when it does not fit (caller streams instead). */
static int wa_gz_whole_libdeflate(wa_gz *g) {
    size_t in_want = g->h.has_sl && g->h.sl_clen > g->h.hlen ? g->h.sl_clen - g->h.hlen : 1u << 20;
    if (in_want > WA_WHOLE_MAX_IN) return WA_SLOW;
    /* without `sl` the size is a guess: the output buffer as it is (at least 1 MiB),
     * doubled for next time when it was too small */
    size_t out_want = g->h.has_sl ? (size_t)g->h.sl_ulen : (g->out_cap > (1u << 20) ? g->out_cap : (1u << 20));
    if (out_want < 64 * 1024) out_want = 64 * 1024;
    if (out_want > WA_WHOLE_MAX_OUT) return WA_SLOW;
    int rc = wa_gz_ld_whole(g, in_want, out_want);
    if (rc == WA_E_TOO_BIG) {
        if (!g->h.has_sl && 2 * g->out_cap <= WA_WHOLE_MAX_OUT) wa_gz_reserve(g, 2 * g->out_cap);
        return WA_SLOW;
    }
    return rc;
}
#endif

/* A member whose length an index gave (hint_len; files only): inflated whole by libdeflate from
 * one read, the output size guessed (8 times the input, doubled while too small). WA_SLOW when
 * that does not apply or fails (a wrong length, a corrupt member): the member is then read as
 * any other, which gives the authoritative answer. */
static int wa_gz_try_hint(wa_gz *g) {
#ifdef WA_HAVE_LIBDEFLATE
    if (g->engine != WA_ENG_NONE || g->out_len || g->trusted_end || g->done || !g->hint_len ||
        g->m_off != g->hint_off || !wa_src_random(g->src))
        return WA_SLOW;
    if (g->hint_len <= (uint64_t)g->h.hlen + 8 || g->hint_len - g->h.hlen > WA_WHOLE_MAX_IN) return WA_SLOW;
    size_t in_want = (size_t)(g->hint_len - g->h.hlen);
    /* the output's size: `sl` says it (Wget's members), else a guess */
    size_t out_want = in_want < WA_WHOLE_MAX_OUT / 8 ? 8 * in_want : WA_WHOLE_MAX_OUT;
    if (g->h.has_sl && g->h.sl_ulen <= WA_WHOLE_MAX_OUT) out_want = g->h.sl_ulen;
    if (out_want < 64 * 1024) out_want = 64 * 1024;
    for (;;) {
        int rc = wa_gz_ld_whole(g, in_want, out_want);
        if (rc == WA_E_TOO_BIG && out_want < WA_WHOLE_MAX_OUT) {
            out_want = out_want < WA_WHOLE_MAX_OUT / 2 ? 2 * out_want : WA_WHOLE_MAX_OUT;
            continue;
        }
        if (rc == WA_OK || rc == WA_E_NOMEM) return rc;
        wa_gz_restart(g);
        g->why = NULL;
        return WA_SLOW;
    }
#else
    (void)g;
    return WA_SLOW;
#endif
}

/* Whole: inflate to the member end, checking CRC-32 and ISIZE. The first
 * `keep` bytes stay in out[0..) (more when libdeflate inflated everything). */
static int wa_gz_whole(wa_gz *g, size_t keep) {
    int rc;
    if (g->done && !g->trusted_end) return WA_OK;
    if (g->trusted_end) wa_gz_restart(g); /* we skipped on `sl`; now inflate for real */
    if (g->out_start != 0) keep = 0;
    /* a head inflated by zlib is cheap to redo: restart with the fast engines (if the input can go back) */
    if (g->engine == WA_ENG_ZLIB && g->produced <= 64 * 1024 && g->out_start == 0 && wa_src_random(g->src))
        wa_gz_restart(g);
    wa_gz_crc_catchup(g); /* zlib goes on: a lazy CRC takes in the head before the loop below drops it */
#ifdef WA_HAVE_LIBDEFLATE
    if (g->engine == WA_ENG_NONE) {
        rc = wa_gz_whole_libdeflate(g);
        if (rc != WA_SLOW) return rc;
    }
#endif
    if ((rc = wa_gz_reserve(g, keep + WA_STREAM_CHUNK)) != WA_OK) return rc;
    if (g->out_len < keep && (rc = wa_gz_run(g, keep, 0)) != WA_OK) return rc;
    while (!g->done) {
        /* discard everything after the kept head */
        size_t base = g->out_len > keep ? keep : g->out_len;
        g->out_start = 0;
        g->out_len = base;
        if ((rc = wa_gz_run(g, base + WA_STREAM_CHUNK, 0)) != WA_OK) return rc;
    }
    if (g->out_len > keep && keep < g->produced) g->out_len = keep; /* streamed tail is garbage */
    return WA_OK;
}

/* Skip: go to the member end cheaply. Trust `sl` when it is consistent (next
 * member or end of input exactly there, ISIZE equal); else inflate (whole). */
static int wa_gz_skip(wa_gz *g, int verify) {
    if (g->done) return WA_OK;
    /* a stream cannot come back if `sl` proves wrong, so only files skip on it */
    if (!verify && g->h.has_sl && wa_src_random(g->src) && g->h.sl_clen >= g->h.hlen + 10) {
        int64_t end = g->m_off + (int64_t)g->h.sl_clen;
        const uint8_t *p;
        size_t avail;
        int rc = wa_src_get(g->src, end - 8, 11, &p, &avail);
        if (rc != WA_OK) return wa_gz_fail(g, rc, "read error", end - 8);
        if (avail >= 8 && wa_le32(p + 4) == g->h.sl_ulen &&
            (avail == 8 || (avail >= 11 && p[8] == 0x1f && p[9] == 0x8b && p[10] == 8))) {
            g->m_end = end;
            g->done = 1;
            g->trusted_end = 1;
            return WA_OK;
        }
    }
    return wa_gz_whole(g, g->out_start == 0 ? g->out_len : 0);
}

/* Stream: make member bytes [pos, pos+want) available at *p (fewer at member end).
 * Bytes before pos may be dropped; pos must not go back before out_start. */
static int wa_gz_stream(wa_gz *g, uint64_t pos, size_t want, const uint8_t **p, size_t *avail) {
    int rc;
    if (pos < g->out_start) return wa_gz_fail(g, WA_E_GZIP_STATE, "stream went backwards", g->m_off);
    if ((rc = wa_gz_try_hint(g)) != WA_SLOW && rc != WA_OK) return rc;
    if (g->trusted_end) wa_gz_restart(g); /* skipped on `sl` but now the bytes are wanted */
    if (g->engine == WA_ENG_ZLIB && g->out_start == 0 && g->produced <= 64 * 1024 && !g->done &&
        pos + want > g->produced && wa_src_random(g->src)) {
        /* More than the head is wanted: a member of known, moderate size is inflated whole by
         * libdeflate (no set-up cost, everything kept, later reads are slices); others switch the
         * small zlib head to ISA-L streaming (same bytes, faster for the rest). */
        size_t had = g->out_len;
#ifdef WA_HAVE_LIBDEFLATE
        if (g->h.has_sl) {
            wa_gz_restart(g);
            rc = wa_gz_whole_libdeflate(g);
            if (rc != WA_OK && rc != WA_SLOW) return rc;
        }
#endif
#ifdef WA_HAVE_ISAL
        if (!g->done) {
            if (g->engine == WA_ENG_ZLIB) wa_gz_restart(g);
            if ((rc = wa_gz_run(g, had, 0)) != WA_OK) return rc;
        }
#else
        (void)had;
#endif
    }
    uint64_t end = g->out_start + g->out_len;
    if (pos + want > end && !g->done) {
        /* drop what is before pos, then produce more (a lazy zlib CRC first takes in what is dropped) */
        wa_gz_crc_catchup(g);
        if (pos > g->out_start) {
            size_t drop = (size_t)((pos < end ? pos : end) - g->out_start);
            memmove(g->out, g->out + drop, g->out_len - drop);
            g->out_len -= drop;
            g->out_start += drop;
        }
        if (pos > g->out_start + g->out_len) { /* skip forward through the stream */
            while (!g->done && pos > g->out_start + g->out_len) {
                        g->out_start += g->out_len;
                g->out_len = 0;
                uint64_t gap = pos - g->out_start;
                size_t lim = gap < WA_STREAM_CHUNK ? (size_t)gap : WA_STREAM_CHUNK;
                if ((rc = wa_gz_reserve(g, lim)) != WA_OK) return rc;
                if ((rc = wa_gz_run(g, lim, 0)) != WA_OK) return rc;
            }
            if (pos > g->out_start + g->out_len) { /* member ended before pos */
                *p = g->out + g->out_len;
                *avail = 0;
                return WA_OK;
            }
            size_t drop = (size_t)(pos - g->out_start);
            memmove(g->out, g->out + drop, g->out_len - drop);
            g->out_len -= drop;
            g->out_start = pos;
        }
        size_t need = (size_t)(pos - g->out_start) + want;
        if ((rc = wa_gz_reserve(g, need)) != WA_OK) return rc;
        if ((rc = wa_gz_run(g, need, 0)) != WA_OK) return rc;
        end = g->out_start + g->out_len;
    }
    if (pos >= end) {
        *p = g->out + g->out_len;
        *avail = 0;
    } else {
        *p = g->out + (size_t)(pos - g->out_start);
        *avail = (size_t)(end - pos);
    }
    return WA_OK;
}

/* Member end: known after skip/whole, or after streaming to the end. */
static int wa_gz_finish(wa_gz *g, int verify) {
    if (g->done) return WA_OK;
    if (g->engine == WA_ENG_NONE || (g->engine == WA_ENG_ZLIB && g->out_start == 0)) return wa_gz_skip(g, verify);
    /* an engine is streaming: run it to the end, discarding output */
    int rc;
    while (!g->done) {
        g->out_start += g->out_len;
        g->out_len = 0;
        if ((rc = wa_gz_reserve(g, WA_STREAM_CHUNK)) != WA_OK) return rc;
        if ((rc = wa_gz_run(g, WA_STREAM_CHUNK, 0)) != WA_OK) return rc;
    }
    return WA_OK;
}

#endif
