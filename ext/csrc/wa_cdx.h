/* wa_cdx.h -- the indexer's loop: WARC records in, CDXJ or CDX-11 lines out.
 *
 * For each record it finds the gzip member (or the plain record) boundaries,
 * parses the WARC head and, when the record is indexed, the HTTP head, keys the
 * URL with wa_surt.h (cdxj-indexer's key, or the `surt_opts` asked for) and writes the line byte-identical to cdxj-indexer's. With
 * Wget's `sl` lengths it inflates only the heads (zlib) and skips payloads;
 * otherwise (or with verify) it inflates whole members (libdeflate / ISA-L) and
 * checks CRC-32 and ISIZE.
 *
 * It handles the common case only. For any record it cannot settle byte-wise
 * (ARC, non-ASCII fields, IDN hosts, missing payload digest, odd dates, damage)
 * it stops with WA_SLOW and `slow_off` = the record's offset, having written
 * nothing for it; the Python reference (warchive.index.cdx) indexes that record
 * and calls back with the offset of the next one. Lines are therefore always
 * in file order and each record is indexed exactly once. Defects that warcio
 * reads past (a wrong Content-Length, missing or extra blank lines, bytes that
 * are no record) are declined the same way: the reference reads the record
 * leniently and reports the defect, so a file reads alike by both paths.
 */
#ifndef WA_CDX_H
#define WA_CDX_H

#include "wa_gzip.h"
#include "wa_head.h"
#include "wa_surt.h"

#define WA_MAX_TYPES 16
#define WA_HEAD_LIMIT (64u << 10)   /* heads longer than this go to the Python path */

enum { WA_FILTER_ALL = 0, WA_FILTER_DEFAULT = 1, WA_FILTER_LIST = 2 };

typedef struct {
    /* options */
    int cdx11;
    int verify;
    int filter;
    int ntypes;
    const uint8_t *types[WA_MAX_TYPES];
    size_t type_len[WA_MAX_TYPES];
    const uint8_t *fname;        /* JSON-escaped for CDXJ, raw for CDX-11 */
    size_t fname_len;
    int64_t stop;                /* no record starting at or after this offset (-1: none) */
    unsigned surt_opts;          /* WA_SURT_OPT_* bits of the keys (WA_SURT_OPT_DEFAULT: cdxj-indexer's) */
    /* input */
    wa_source src;
    wa_gz g;
    int gz;
    int64_t pos;
    /* output */
    uint8_t *out;
    size_t out_len, out_cap;
    uint8_t *scratch;
    size_t scratch_cap;
    /* why we stopped */
    int64_t slow_off;
    const char *why;
    int64_t err_off;
    /* counters */
    uint64_t n_records, n_lines, n_slow;
    uint64_t n_inflated;         /* bytes inflated (head mode: only heads) */
} wa_indexer;

static int wa_ix_reserve(uint8_t **buf, size_t *cap, size_t need) {
    if (need <= *cap) return WA_OK;
    if (*buf == NULL) { /* first use: a pooled buffer if there is one (wa_buf_put gives it back) */
        size_t ncap = *cap ? *cap : 4096;
        while (ncap < need) ncap *= 2;
        *buf = (uint8_t *)wa_buf_get(ncap < WA_POOL_MIN ? WA_POOL_MIN : ncap, cap);
        return *buf ? WA_OK : WA_E_NOMEM;
    }
    return wa_grow(buf, cap, need, 4096);
}

static inline int wa_span_is(wa_span s, const char *lit) {
    size_t n = strlen(lit);
    return s.n == n && memcmp(s.p, lit, n) == 0;
}

/* Is a record of this type (and WARC Content-Type) indexed? */
static int wa_ix_wanted(const wa_indexer *x, const wa_head *wh) {
    if (x->filter == WA_FILTER_ALL) return 1;
    if (!wh->have[WA_F_TYPE]) return 0;
    wa_span t = wh->f[WA_F_TYPE];
    if (x->filter == WA_FILTER_DEFAULT) {
        if (wa_span_is(t, "response") || wa_span_is(t, "revisit")) return 1;
        if (wa_span_is(t, "resource") || wa_span_is(t, "metadata"))
            return !(wh->have[WA_F_CTYPE] && wa_span_is(wh->f[WA_F_CTYPE], "application/warc-fields"));
        return 0;
    }
    for (int k = 0; k < x->ntypes; k++)
        if (t.n == x->type_len[k] && memcmp(t.p, x->types[k], t.n) == 0) return 1;
    return 0;
}

/* The type from a head whose first two lines are "WARC/1.x" and "WARC-Type: T",
 * both complete within p[0..n). 0 when the head does not start that way. */
static int wa_ix_quick_type(const uint8_t *p, size_t n, wa_span *t) {
    const uint8_t *nl = wa_find_nl(p, n);
    if (!nl) return 0;
    size_t a = (size_t)(nl - p) + 1;
    wa_span st = {p, (uint32_t)(nl - p)};
    while (st.n && (st.p[st.n - 1] == '\r' || st.p[st.n - 1] == ' ')) st.n--;
    if (!wa_is_warc_status(st)) return 0;
    const uint8_t *nl2 = wa_find_nl(p + a, n - a);
    if (!nl2 || n - a < 10 || !wa_ieq(p + a, "warc-type:", 10)) return 0;
    size_t b = a + 10, e = (size_t)(nl2 - p);
    while (b < e && p[b] == ' ') b++;
    while (e > b && (p[e - 1] == '\r' || p[e - 1] == ' ')) e--;
    for (size_t k = b; k < e; k++)
        if (!wa_is_graph(p[k])) return 0;
    t->p = p + b;
    t->n = (uint32_t)(e - b);
    return 1;
}

/* Could a record of this type be indexed (before its Content-Type is known)? */
static int wa_ix_type_maybe_wanted(const wa_indexer *x, wa_span t) {
    if (x->filter == WA_FILTER_ALL) return 1;
    if (x->filter == WA_FILTER_DEFAULT)
        return wa_span_is(t, "response") || wa_span_is(t, "revisit") || wa_span_is(t, "resource") ||
               wa_span_is(t, "metadata");
    for (int k = 0; k < x->ntypes; k++)
        if (t.n == x->type_len[k] && memcmp(t.p, x->types[k], t.n) == 0) return 1;
    return 0;
}

/* The URI as warcio presents it: <...> removed. Spaces are handled by the caller. */
static wa_span wa_ix_uri(const wa_head *wh) {
    wa_span u = wh->f[WA_F_URI];
    if (u.n >= 2 && u.p[0] == '<' && u.p[u.n - 1] == '>') {
        u.p++;
        u.n -= 2;
    }
    return u;
}

/* Does the record get its HTTP head parsed (warcio's rule)? */
static int wa_ix_has_http(const wa_head *wh, int64_t clen) {
    if (!wh->have[WA_F_TYPE] || !wh->have[WA_F_URI] || clen == 0) return 0;
    wa_span t = wh->f[WA_F_TYPE];
    if (!(wa_span_is(t, "response") || wa_span_is(t, "request") || wa_span_is(t, "revisit"))) return 0;
    wa_span u = wa_ix_uri(wh);
    return (u.n >= 5 && memcmp(u.p, "http:", 5) == 0) || (u.n >= 6 && memcmp(u.p, "https:", 6) == 0);
}

static inline uint8_t *wa_put(uint8_t *o, const void *s, size_t n) {
    memcpy(o, s, n);
    return o + n;
}

static inline uint8_t *wa_put_json(uint8_t *o, const uint8_t *s, size_t n) {
    for (size_t k = 0; k < n; k++) {
        uint8_t c = s[k];
        if (c == '"' || c == '\\') *o++ = '\\';
        *o++ = c;
    }
    return o;
}

static inline uint8_t *wa_put_i64(uint8_t *o, int64_t v) {
    char tmp[24];
    int k = 0;
    if (v == 0) tmp[k++] = '0';
    while (v > 0) {
        tmp[k++] = (char)('0' + v % 10);
        v /= 10;
    }
    while (k) *o++ = (uint8_t)tmp[--k];
    return o;
}

/* Write the line of one record. wh: WARC head; hh: HTTP head or NULL.
 * WA_SLOW when a field needs the Python reference (nothing written then). */
static int wa_ix_emit(wa_indexer *x, const wa_head *wh, const wa_head *hh, int64_t off, int64_t len) {
    int rc;
    uint8_t ts[14];
    if (!wh->have[WA_F_DATE] || wa_warc_date_ts(wh->f[WA_F_DATE], ts) != 0) return WA_SLOW;
    if (wh->n_uri > 1) return WA_SLOW; /* warcio rewrites the last of several: leave that to Python */
    wa_span type = wh->f[WA_F_TYPE];
    int have_type = wh->have[WA_F_TYPE];
    int is_revisit = have_type && wa_span_is(type, "revisit");
    int is_resp = have_type && wa_span_is(type, "response");
    int is_req = have_type && wa_span_is(type, "request");

    /* url: <> removed, spaces as %20 */
    wa_span url = {NULL, 0};
    int have_url = wh->have[WA_F_URI];
    size_t url_spaces = 0;
    if (have_url) {
        url = wa_ix_uri(wh);
        for (uint32_t k = 0; k < url.n; k++) url_spaces += url.p[k] == ' ';
    }
    size_t url_len = url.n + 2 * url_spaces;

    /* digest: the first header as it is; without one the payload digest must be
     * computed (Python), except for revisit and warcinfo records */
    wa_span dig = {NULL, 0};
    int have_dig = wh->have[WA_F_PDIGEST];
    if (have_dig) dig = wh->f[WA_F_PDIGEST];
    if (!have_dig && !(have_type && (is_revisit || wa_span_is(type, "warcinfo"))))
        return WA_SLOW; /* (an empty header stays empty: warcio appends the computed one after it) */

    /* mime */
    wa_span mime = {NULL, 0};
    int have_mime = 0;
    static const uint8_t revisit_mime[] = "warc/revisit";
    if (is_revisit) {
        mime.p = revisit_mime;
        mime.n = 12;
        have_mime = 1;
    } else if (is_resp || is_req) {
        if (hh && hh->have[WA_F_CTYPE]) {
            mime = hh->f[WA_F_CTYPE];
            have_mime = 1;
        }
    } else if (wh->have[WA_F_CTYPE]) {
        mime = wh->f[WA_F_CTYPE];
        have_mime = 1;
    }
    if (have_mime) {
        uint32_t k = 0;
        while (k < mime.n && mime.p[k] != ';' && mime.p[k] != ' ') k++;
        mime.n = k;
    }

    /* status: response/revisit with a non-empty HTTP head */
    wa_span status = {NULL, 0};
    int have_status = 0;
    if ((is_resp || is_revisit) && hh && !hh->empty) {
        wa_span s = hh->status;
        uint32_t k = 0;
        while (k < s.n && s.p[k] != ' ') k++;          /* protocol */
        uint32_t a = k < s.n ? k + 1 : s.n;
        while (a < s.n && s.p[a] == ' ') a++;          /* statusline.strip() */
        uint32_t b = a;
        while (b < s.n && s.p[b] != ' ') b++;          /* code */
        int statusline_nonempty = a < s.n;
        if (statusline_nonempty || hh->nfields > 0) {
            status.p = s.p + a;
            status.n = b - a;
            have_status = 1;
        }
    }

    /* SURT key */
    const uint8_t *key;
    size_t key_len;
    uint8_t *ubuf = NULL;
    if (have_url) {
        size_t need = WA_SURT_CAP(url_len, 0) + url_len;
        if ((rc = wa_ix_reserve(&x->scratch, &x->scratch_cap, need)) != WA_OK) return rc;
        const uint8_t *u = url.p;
        if (url_spaces) {
            ubuf = x->scratch + WA_SURT_CAP(url_len, 0);
            uint8_t *q = ubuf;
            for (uint32_t k = 0; k < url.n; k++) {
                if (url.p[k] == ' ') q = wa_put(q, "%20", 3);
                else *q++ = url.p[k];
            }
            u = ubuf;
        }
        size_t kl = 0;
        int sr = wa_surt_key_opts(u, url_len, x->scratch, WA_SURT_CAP(url_len, 0), &kl, NULL, 0, 0, x->surt_opts);
        if (sr == WA_OK) {
            key = x->scratch;
            key_len = kl;
        } else if (sr == WA_SURT_FAIL) {
            key = u;
            key_len = url_len;
        } else {
            return WA_SLOW; /* IDNA host (or absurd length) */
        }
        url.p = u;
        url.n = (uint32_t)url_len;
    } else {
        key = (const uint8_t *)"-";
        key_len = 1;
    }

    size_t need = x->out_len + key_len + 2 * url.n + 2 * mime.n + status.n + 2 * dig.n + 2 * x->fname_len + 200;
    if ((rc = wa_ix_reserve(&x->out, &x->out_cap, need)) != WA_OK) return rc;
    uint8_t *o = x->out + x->out_len;
    o = wa_put(o, key, key_len);
    *o++ = ' ';
    o = wa_put(o, ts, 14);
    *o++ = ' ';
    if (x->cdx11) {
        static const uint8_t dash = '-';
        if (have_url) o = wa_put(o, url.p, url.n); else *o++ = dash;
        *o++ = ' ';
        if (have_mime) o = wa_put(o, mime.p, mime.n); else *o++ = dash;
        *o++ = ' ';
        if (have_status) o = wa_put(o, status.p, status.n); else *o++ = dash;
        *o++ = ' ';
        if (have_dig) {
            uint32_t k = dig.n;
            while (k > 0 && dig.p[k - 1] != ':') k--;
            o = wa_put(o, dig.p + k, dig.n - k);
        } else {
            *o++ = dash;
        }
        o = wa_put(o, " - - ", 5);
        o = wa_put_i64(o, len);
        *o++ = ' ';
        o = wa_put_i64(o, off);
        *o++ = ' ';
        o = wa_put(o, x->fname, x->fname_len);
    } else {
        *o++ = '{';
        int first = 1;
#define WA_KEY(k)                                      \
    do {                                               \
        if (!first) o = wa_put(o, ", ", 2);            \
        first = 0;                                     \
        o = wa_put(o, "\"" k "\": \"", sizeof(k) + 4); \
    } while (0)
#define WA_TEXT(k, have, s)                   \
    do {                                      \
        if (have) {                           \
            WA_KEY(k);                        \
            o = wa_put_json(o, (s).p, (s).n); \
            *o++ = '"';                       \
        }                                     \
    } while (0)
        WA_TEXT("url", have_url, url);
        WA_TEXT("mime", have_mime, mime);
        WA_TEXT("status", have_status, status);
        WA_TEXT("digest", have_dig, dig);
        WA_KEY("length");
        o = wa_put_i64(o, len);
        *o++ = '"';
        WA_KEY("offset");
        o = wa_put_i64(o, off);
        *o++ = '"';
        WA_KEY("filename");
        o = wa_put(o, x->fname, x->fname_len);
        *o++ = '"';
        *o++ = '}';
#undef WA_TEXT
#undef WA_KEY
    }
    *o++ = '\n';
    x->out_len = (size_t)(o - x->out);
    x->n_lines++;
    return WA_OK;
}

static int wa_ix_slow(wa_indexer *x, int64_t off) {
    x->slow_off = off;
    x->pos = off;
    x->n_slow++;
    return WA_SLOW;
}

/* A gzip error: I/O and memory errors stop; damage goes to the Python reference,
 * which raises it with the file, offset and a remedy (or skips it on request). */
static int wa_ix_gzfail(wa_indexer *x, int rc, int64_t off) {
    if (rc == WA_E_IO || rc == WA_E_NOMEM || rc == WA_E_CALLBACK) return rc;
    return wa_ix_slow(x, off);
}

/* One gzip member (= one record). */
static int wa_ix_member(wa_indexer *x) {
    wa_gz *g = &x->g;
    int64_t off = x->pos;
    int rc = wa_gz_begin(g, off);
    if (rc == WA_EOF || rc == WA_E_IO || rc == WA_E_NOMEM) return rc;
    if (rc != WA_OK) return wa_ix_slow(x, off); /* damage: the Python reference reports it */
    int fast = !x->verify && g->h.has_sl && wa_src_random(&x->src);
    /* Head mode inflates as little as it can. Records are typed by their first
     * WARC-Type field, nearly always the line after the version line: 64 bytes
     * tell whether the record is indexed at all, and a record that is not is
     * skipped on `sl` right there (its head is not parsed: --verify checks it).
     * Indexed ones get enough for a typical WARC head plus HTTP head; each
     * miss asks for more. */
    size_t want = 832, http_want = 256;
    if (fast) {
        if ((rc = wa_gz_head(g, 64)) != WA_OK) return wa_ix_gzfail(x, rc, off);
        wa_span t;
        if (x->filter != WA_FILTER_ALL && wa_ix_quick_type(g->out, g->out_len, &t) && !wa_ix_type_maybe_wanted(x, t)) {
            if ((rc = wa_gz_skip(g, 0)) != WA_OK) return wa_ix_gzfail(x, rc, off);
            if (g->trusted_end) {
                x->n_records++;
                x->n_inflated += g->produced;
                x->pos = g->m_end;
                return WA_OK;
            }
            /* `sl` did not hold: the member was inflated; go the long way */
        }
        rc = wa_gz_head(g, want);
    } else {
        rc = wa_gz_whole(g, WA_HEAD_LIMIT);
    }
    if (rc != WA_OK) return wa_ix_gzfail(x, rc, off);

    wa_head wh, hh;
    int have_http = 0;
    int64_t clen = -1;
    int wanted = 0;
    for (;;) {
        /* everything of the member that exists is in out when final */
        int final = g->done && !g->trusted_end && g->out_len == g->produced;
        if (g->out_len == 0 || wa_lower(g->out[0]) != 'w') return wa_ix_slow(x, off);
        rc = wa_parse_head(g->out, g->out_len, final, 0, &wh);
        if (rc == WA_SLOW) return wa_ix_slow(x, off);
        if (rc == WA_EOF) {
            if (!fast || want >= WA_HEAD_LIMIT) return wa_ix_slow(x, off);
            want *= 4;
            if ((rc = wa_gz_head(g, want)) != WA_OK) return wa_ix_gzfail(x, rc, off);
            continue;
        }
        if (!wa_is_warc_status(wh.status) || !wh.have[WA_F_CLEN]) return wa_ix_slow(x, off);
        clen = wa_parse_u63(wh.f[WA_F_CLEN]);
        if (clen < 0) return wa_ix_slow(x, off);
        wanted = wa_ix_wanted(x, &wh);
        have_http = wanted && wa_ix_has_http(&wh, clen);
        if (!have_http) break;
        /* the HTTP head: within the block, from the end of the WARC head */
        size_t hs = wh.end;
        uint64_t block_end = (uint64_t)hs + (uint64_t)clen;
        uint64_t need = (uint64_t)hs + ((uint64_t)clen < http_want ? (uint64_t)clen : http_want);
        if (fast && g->out_len < need && !g->done) {
            want = (size_t)need;
            if ((rc = wa_gz_head(g, want)) != WA_OK) return wa_ix_gzfail(x, rc, off);
            continue; /* the buffer may have moved: parse again */
        }
        size_t avail_end = g->out_len < block_end ? g->out_len : (size_t)block_end;
        int hfinal = (uint64_t)g->out_len >= block_end || final;
        rc = wa_parse_head(g->out + hs, avail_end - hs, hfinal, 1, &hh);
        if (rc == WA_SLOW) return wa_ix_slow(x, off);
        if (rc == WA_OK) break;
        if (!fast || http_want >= WA_HEAD_LIMIT) return wa_ix_slow(x, off);
        http_want *= 4;
    }
    if (have_http && hh.empty && !(wh.have[WA_F_TYPE] && wa_span_is(wh.f[WA_F_TYPE], "revisit")))
        return wa_ix_slow(x, off); /* a response without content: truncated */

    /* where the member ends, and is the record alone in it? */
    uint64_t content_end = (uint64_t)wh.end + (uint64_t)clen;
    const uint8_t *base = g->out;
    if (fast && !g->done && g->h.sl_ulen == content_end + 4) {
        if ((rc = wa_gz_skip(g, 0)) != WA_OK) return wa_ix_gzfail(x, rc, off);
        if (!g->trusted_end) return wa_ix_slow(x, off); /* `sl` was wrong: let Python sort it out */
    } else {
        if ((rc = wa_gz_whole(g, g->out_len > WA_HEAD_LIMIT ? g->out_len : WA_HEAD_LIMIT)) != WA_OK)
            return wa_ix_gzfail(x, rc, off);
        if (g->produced < content_end) return wa_ix_slow(x, off); /* truncated content */
        if (g->out_len != g->produced) return wa_ix_slow(x, off); /* tail not kept: big member */
        /* the record ends its member with exactly CRLFCRLF; anything else is a defect that the
         * Python reference reports (missing or extra blank lines, a wrong Content-Length) */
        if (g->produced - content_end != 4 || memcmp(g->out + content_end, "\r\n\r\n", 4) != 0)
            return wa_ix_slow(x, off);
    }
    if (g->out != base) { /* the output buffer moved: re-point the spans */
        ptrdiff_t d = g->out - base;
        for (int k = 0; k < WA_F_COUNT; k++) {
            if (wh.have[k]) wh.f[k].p += d;
            if (have_http && hh.have[k]) hh.f[k].p += d;
        }
        wh.status.p += d;
        if (have_http) hh.status.p += d;
    }
    int64_t end = g->m_end;
    x->n_records++;
    x->n_inflated += g->produced;
    if (wanted) {
        rc = wa_ix_emit(x, &wh, have_http ? &hh : NULL, off, end - off);
        if (rc == WA_SLOW) return wa_ix_slow(x, off);
        if (rc != WA_OK) return rc;
    }
    x->pos = end;
    return WA_OK;
}

/* One record of a plain (uncompressed) WARC file. */
static int wa_ix_plain(wa_indexer *x) {
    int64_t off = x->pos;
    const uint8_t *p;
    size_t avail;
    int rc;
    if (x->src.size >= 0 && off >= x->src.size) return WA_EOF;
    size_t want = 1024;
    wa_head wh, hh;
    int have_http = 0, wanted = 0;
    int64_t clen = -1;
    for (;;) {
        if ((rc = wa_src_get(&x->src, off, want, &p, &avail)) != WA_OK) return rc;
        if (avail == 0) return WA_EOF;
        int final = avail < want;
        if (wa_lower(p[0]) != 'w') return wa_ix_slow(x, off);
        rc = wa_parse_head(p, avail, final, 0, &wh);
        if (rc == WA_SLOW) return wa_ix_slow(x, off);
        if (rc == WA_EOF) {
            if (want >= WA_HEAD_LIMIT) return wa_ix_slow(x, off);
            want *= 4;
            continue;
        }
        if (!wa_is_warc_status(wh.status) || !wh.have[WA_F_CLEN]) return wa_ix_slow(x, off);
        clen = wa_parse_u63(wh.f[WA_F_CLEN]);
        if (clen < 0) return wa_ix_slow(x, off);
        if (x->src.size >= 0 && off + (int64_t)wh.end + clen > x->src.size) return wa_ix_slow(x, off);
        wanted = wa_ix_wanted(x, &wh);
        have_http = wanted && wa_ix_has_http(&wh, clen);
        if (!have_http) break;
        uint64_t block_end = (uint64_t)wh.end + (uint64_t)clen;
        size_t avail_end = avail < block_end ? avail : (size_t)block_end;
        int hfinal = (uint64_t)avail >= block_end || final;
        rc = wa_parse_head(p + wh.end, avail_end - wh.end, hfinal, 1, &hh);
        if (rc == WA_SLOW) return wa_ix_slow(x, off);
        if (rc == WA_OK) break;
        if (want >= WA_HEAD_LIMIT) return wa_ix_slow(x, off);
        want *= 4;
    }
    if (have_http && hh.empty && !(wh.have[WA_F_TYPE] && wa_span_is(wh.f[WA_F_TYPE], "revisit")))
        return wa_ix_slow(x, off);
    int64_t len = (int64_t)wh.end + clen;
    size_t mark = x->out_len;
    uint64_t lines = x->n_lines;
    if (wanted) {
        rc = wa_ix_emit(x, &wh, have_http ? &hh : NULL, off, len);
        if (rc == WA_SLOW) return wa_ix_slow(x, off);
        if (rc != WA_OK) return rc;
    }
    /* exactly CRLFCRLF after the record: anything else (no blank line, more or fewer blank lines,
     * the file ending first) is a defect for the Python reference to report, and so is whatever
     * other than a record follows (the next call declines it) */
    int64_t q = off + len;
    if ((rc = wa_src_get(&x->src, q, 4, &p, &avail)) != WA_OK) return rc;
    if (avail < 4 || memcmp(p, "\r\n\r\n", 4) != 0) {
        x->out_len = mark;
        x->n_lines = lines;
        return wa_ix_slow(x, off);
    }
    q += 4;
    x->n_records++;
    x->pos = q;
    return WA_OK;
}

/* Index until the output holds flush_at bytes (WA_OK), the input ends (WA_EOF),
 * a record needs Python (WA_SLOW) or an error. */
static int wa_ix_run(wa_indexer *x, size_t flush_at) {
    while (x->out_len < flush_at) {
        if (x->stop >= 0 && x->pos >= x->stop) return WA_EOF;
        int rc = x->gz ? wa_ix_member(x) : wa_ix_plain(x);
        if (rc != WA_OK) {
            if (rc < 0 && x->gz && x->g.why) {
                x->why = x->g.why;
                x->err_off = x->g.err_off;
            }
            return rc;
        }
    }
    return WA_OK;
}

#endif
