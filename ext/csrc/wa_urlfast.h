/* wa_urlfast.h -- the common cases of two Python URL functions, in C, with their exact results.
 *
 *   wa_join       urllib.parse.urljoin(base, ref) of Python 3.11, for an http(s) base and a
 *                 printable-ASCII reference (the crawler's link resolution);
 *   wa_rw_url     warchive.replay.urls.UrlRewriter.rewrite(ref, modifier, force_abs) (replay's
 *                 URL rewriting), for the references that need no Python: absolute http(s)
 *                 URLs, scheme-relative ones, root-relative ones and relative ones.
 *
 * Each answers WA_SLOW for anything outside the cases it knows (a byte outside 0x21-0x7e, a
 * backslash, a %2e that may be a dot segment, a '..' left in an absolute URL, an IDN host,
 * a '%' or '+' in the host part, params, odd bases...); the caller then asks the Python
 * function itself. That is the contract: whatever these return other than WA_SLOW is what the
 * Python would have returned, byte for byte, which tests/unit/test_html_rewrite_urls.py checks
 * on generated URLs. They read only the bytes they are given and never allocate but through
 * wa_bytes (whose failure is WA_E_NOMEM).
 */
#ifndef WA_URLFAST_H
#define WA_URLFAST_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wa_common.h"


/* --------------------------------------------------------------------------- small helpers */

/* s[0..n) starts with the lowercase ASCII word w, compared without case. */
static inline int wa_starts_ci(const uint8_t *s, size_t n, const char *w) {
    size_t i;
    for (i = 0; w[i]; i++)
        if (i >= n || wa_lower(s[i]) != (uint8_t)w[i]) return 0;
    return 1;
}

static inline int wa_has(const uint8_t *s, size_t n, const char *w, size_t wn) {
    size_t i;
    if (n < wn) return 0;
    for (i = 0; i + wn <= n; i++)
        if (s[i] == (uint8_t)w[0] && memcmp(s + i, w, wn) == 0) return 1;
    return 0;
}

/* "%2e" in any case: a dot that Python and browsers may read as one in a dot segment. */
static inline int wa_has_pct2e(const uint8_t *s, size_t n) {
    size_t i;
    for (i = 0; i + 2 < n; i++)
        if (s[i] == '%' && s[i + 1] == '2' && (s[i + 2] == 'e' || s[i + 2] == 'E')) return 1;
    return 0;
}

static inline int wa_scheme_char(uint8_t c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '+' || c == '-'
           || c == '.';
}

/* The length of the scheme urlsplit finds in s (0: none): the text before the first ':' when
 * it starts with a letter and holds scheme characters only. */
static size_t wa_scheme_len(const uint8_t *s, size_t n) {
    const uint8_t *c = (const uint8_t *)memchr(s, ':', n);
    size_t i, k;
    if (!c || c == s) return 0;
    k = (size_t)(c - s);
    if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'))) return 0;
    for (i = 0; i < k; i++)
        if (!wa_scheme_char(s[i])) return 0;
    return k;
}

/* The end of what pywb's WbUrl.to_uri %-decodes as the scheme and host: the first '/' or '?'
 * neither after ':' or '/' nor before '/' (the whole string when there is none). */
static size_t wa_uri_head_end(const uint8_t *s, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        if (s[i] != '/' && s[i] != '?') continue;
        if (i > 0 && (s[i - 1] == ':' || s[i - 1] == '/')) continue;
        if (i + 1 < n && s[i + 1] == '/') continue;
        return i;
    }
    return n;
}

/* to_uri decodes nothing in the scheme and host of s ('%', '+'): with no 'xn--' in it (for
 * display_url: the callers know), a target comes out of warchive's URL functions unchanged. */
static int wa_head_plain(const uint8_t *s, size_t n) {
    size_t h = wa_uri_head_end(s, n), i;
    for (i = 0; i < h; i++)
        if (s[i] == '%' || s[i] == '+') return 0;
    return 1;
}

/* --------------------------------------------------------------------------- the base URL */

typedef struct {
    uint8_t *p;          /* the base URL (owned copy) */
    size_t n;
    int ok;              /* an http(s) URL these functions can join against */
    int rw_ok;           /* and one UrlRewriter joins against without Python (no dots in its path,
                            no 'xn--' anywhere) */
    char scheme[6];      /* "http" or "https", as urlsplit lowercases it */
    size_t scheme_n;
    size_t net_s, net_e; /* netloc */
    size_t path_s, path_e; /* path, params included */
    size_t q_s, q_e;     /* query (empty when none) */
} wa_urlbase;

static void wa_urlbase_free(wa_urlbase *b) {
    free(b->p);
    memset(b, 0, sizeof(*b));
}

/* Parse s as urlsplit would, for the bases the fast paths accept. Returns WA_OK (b->ok says
 * whether it is usable) or WA_E_NOMEM. */
static int wa_urlbase_set(wa_urlbase *b, const uint8_t *s, size_t n) {
    size_t i, k, e;
    wa_urlbase_free(b);
    b->p = (uint8_t *)malloc(n ? n : 1);
    if (!b->p) return WA_E_NOMEM;
    memcpy(b->p, s, n);
    b->n = n;
    for (i = 0; i < n; i++)
        if (s[i] <= 0x20 || s[i] >= 0x7f || s[i] == '\\') return WA_OK;
    k = wa_scheme_len(s, n);
    if (k == 4 && wa_starts_ci(s, n, "http")) memcpy(b->scheme, "http", 5);
    else if (k == 5 && wa_starts_ci(s, n, "https")) memcpy(b->scheme, "https", 6);
    else return WA_OK;
    b->scheme_n = k;
    if (n < k + 3 || s[k + 1] != '/' || s[k + 2] != '/') return WA_OK;
    b->net_s = k + 3;
    for (e = b->net_s; e < n && s[e] != '/' && s[e] != '?' && s[e] != '#'; e++)
        if (s[e] == '[' || s[e] == ']') return WA_OK;
    b->net_e = e;
    if (e == b->net_s) return WA_OK;
    b->path_s = e;
    for (i = e; i < n && s[i] != '?' && s[i] != '#'; i++) {}
    b->path_e = i;
    b->q_s = b->q_e = i;
    if (i < n && s[i] == '?') {
        b->q_s = i + 1;
        for (i = i + 1; i < n && s[i] != '#'; i++) {}
        b->q_e = i;
    }
    b->ok = 1;
    b->rw_ok = !wa_has(s + b->path_s, b->path_e - b->path_s, "..", 2)
               && !wa_has_pct2e(s + b->path_s, b->path_e - b->path_s) && !wa_has(s, n, "xn--", 4);
    return WA_OK;
}

/* --------------------------------------------------------------------------- urljoin */

typedef struct { const uint8_t *p; size_t n; } wa_seg;
#define WA_MAX_SEGS 512

/* Split r (no scheme, no netloc) into path, query and fragment as urlsplit does: the fragment
 * at the first '#', then the query at the first '?'. */
static void wa_split_pqf(const uint8_t *r, size_t n, size_t *pe, size_t *qs, size_t *qe, size_t *fs) {
    const uint8_t *h = (const uint8_t *)memchr(r, '#', n);
    size_t before = h ? (size_t)(h - r) : n;
    const uint8_t *q = (const uint8_t *)memchr(r, '?', before);
    *fs = h ? before + 1 : n + 1;          /* > n: no fragment */
    if (q) {
        *pe = (size_t)(q - r);
        *qs = *pe + 1;
        *qe = before;
    } else {
        *pe = before;
        *qs = *qe = before;
    }
}

static int wa_put_tail(wa_bytes *out, const uint8_t *r, size_t n, size_t qs, size_t qe, size_t fs) {
    if (qe > qs && (wa_bytes_byte(out, '?') || wa_bytes_put(out, r + qs, qe - qs))) return WA_E_NOMEM;
    if (fs < n && (wa_bytes_byte(out, '#') || wa_bytes_put(out, r + fs, n - fs))) return WA_E_NOMEM;
    return WA_OK;
}

static size_t wa_split_segs(const uint8_t *p, size_t n, wa_seg *segs, size_t k, size_t max) {
    size_t i, s = 0;
    for (i = 0; i <= n; i++) {
        if (i == n || p[i] == '/') {
            if (k >= max) return (size_t)-1;
            segs[k].p = p + s;
            segs[k].n = i - s;
            k++;
            s = i + 1;
        }
    }
    return k;
}

static inline int wa_seg_is(const wa_seg *s, const char *w) {
    size_t n = strlen(w);
    return s->n == n && memcmp(s->p, w, n) == 0;
}

/* urljoin(base, r): r[0..n) bytes 0x21-0x7e. *same = 1 when the answer is r itself (a reference
 * of another scheme). Returns WA_OK, WA_SLOW or WA_E_NOMEM. */
static int wa_join(const wa_urlbase *b, const uint8_t *r, size_t n, wa_bytes *out, int *same) {
    size_t k, pe, qs, qe, fs, i, ns = 0, nr = 0;
    const uint8_t *bp = b->p;
    wa_seg segs[WA_MAX_SEGS], res[WA_MAX_SEGS];
    *same = 0;
    if (!b->ok) return WA_SLOW;
    if (n == 0) return WA_SLOW;   /* urljoin(base, '') is base: never asked */
    k = wa_scheme_len(r, n);
    if (k) {
        if (!(k == b->scheme_n && wa_starts_ci(r, n, b->scheme))) {
            size_t e;             /* another scheme: returned as it is, once urlsplit takes it */
            if (n >= k + 3 && r[k + 1] == '/' && r[k + 2] == '/')
                for (e = k + 3; e < n && r[e] != '/' && r[e] != '?' && r[e] != '#'; e++)
                    if (r[e] == '[' || r[e] == ']') return WA_SLOW;
            *same = 1;
            return WA_OK;
        }
        if (n < k + 3 || r[k + 1] != '/' || r[k + 2] != '/') return WA_SLOW;   /* 'http:x' */
        r += k + 1;
        n -= k + 1;
    }
    if (n >= 2 && r[0] == '/' && r[1] == '/') {           /* a netloc: urlunparse(urlparse(ref)) */
        size_t e;
        for (e = 2; e < n && r[e] != '/' && r[e] != '?' && r[e] != '#'; e++)
            if (r[e] == '[' || r[e] == ']') return WA_SLOW;
        if (e == 2) return WA_SLOW;
        wa_split_pqf(r + e, n - e, &pe, &qs, &qe, &fs);
        if (memchr(r + e, ';', pe)) return WA_SLOW;
        if (wa_bytes_put(out, b->scheme, b->scheme_n) || wa_bytes_put(out, ":", 1) || wa_bytes_put(out, r, e)
            || wa_bytes_put(out, r + e, pe))
            return WA_E_NOMEM;
        return wa_put_tail(out, r + e, n - e, qs, qe, fs);
    }
    wa_split_pqf(r, n, &pe, &qs, &qe, &fs);
    if (memchr(r, ';', pe)) return WA_SLOW;
    if (wa_bytes_put(out, b->scheme, b->scheme_n) || wa_bytes_put(out, "://", 3)
        || wa_bytes_put(out, bp + b->net_s, b->net_e - b->net_s))
        return WA_E_NOMEM;
    if (pe == 0) {                                          /* no path: the base's, and its query */
        if (memchr(bp + b->path_s, ';', b->path_e - b->path_s)) {
            out->len -= b->scheme_n + 3 + (b->net_e - b->net_s);   /* urlunparse may drop an empty ';' */
            return WA_SLOW;
        }
        if (wa_bytes_put(out, bp + b->path_s, b->path_e - b->path_s)) return WA_E_NOMEM;
        if (qe > qs) return wa_put_tail(out, r, n, qs, qe, fs);
        if (b->q_e > b->q_s && (wa_bytes_byte(out, '?') || wa_bytes_put(out, bp + b->q_s, b->q_e - b->q_s)))
            return WA_E_NOMEM;
        return wa_put_tail(out, r, n, 0, 0, fs);
    }
    if (r[0] == '/') {
        ns = wa_split_segs(r, pe, segs, 0, WA_MAX_SEGS);
        if (ns == (size_t)-1) return WA_SLOW;
    } else {
        size_t nb = wa_split_segs(bp + b->path_s, b->path_e - b->path_s, segs, 0, WA_MAX_SEGS), j;
        if (nb == (size_t)-1) return WA_SLOW;
        if (segs[nb - 1].n != 0) nb--;
        ns = wa_split_segs(r, pe, segs, nb, WA_MAX_SEGS);
        if (ns == (size_t)-1) return WA_SLOW;
        for (i = 1, j = 1; i + 1 < ns; i++)                 /* empty segments out of the middle */
            if (segs[i].n) segs[j++] = segs[i];
        segs[j++] = segs[ns - 1];
        ns = j;
    }
    for (i = 0; i < ns; i++) {
        if (wa_seg_is(&segs[i], "..")) {
            if (nr) nr--;
        } else if (!wa_seg_is(&segs[i], ".")) {
            res[nr++] = segs[i];
        }
    }
    if (wa_seg_is(&segs[ns - 1], ".") || wa_seg_is(&segs[ns - 1], "..")) {
        res[nr].p = r;
        res[nr++].n = 0;
    }
    {
        size_t start = out->len;
        for (i = 0; i < nr; i++) {
            if (i && wa_bytes_byte(out, '/')) return WA_E_NOMEM;
            if (wa_bytes_put(out, res[i].p, res[i].n)) return WA_E_NOMEM;
        }
        if (out->len == start) {
            if (wa_bytes_byte(out, '/')) return WA_E_NOMEM;
        } else if (out->p[start] != '/') {                  /* urlunsplit: a path after a netloc */
            if (wa_bytes_byte(out, 0)) return WA_E_NOMEM;
            memmove(out->p + start + 1, out->p + start, out->len - start - 1);
            out->p[start] = '/';
        }
    }
    return wa_put_tail(out, r, n, qs, qe, fs);
}

/* --------------------------------------------------------------------------- UrlRewriter.rewrite */

/* The modifier slots the kernel asks for; Python fills each one's pieces from UrlRewriter. */
enum {
    WA_M_DEF = 0,   /* the HTML rewriter's default modifier (pywb's defmod) */
    WA_M_NONE,      /* '' */
    WA_M_IM, WA_M_JS, WA_M_CS, WA_M_OE, WA_M_IF, WA_M_FR, WA_M_MP,
    WA_NSLOTS
};

typedef struct {
    int ok;
    wa_bytes abs;    /* before an absolute target */
    wa_bytes rel;    /* before a target resolved from a relative reference */
    wa_bytes sr;     /* before a scheme-relative one */
    wa_bytes tail;   /* after the target */
} wa_rwhead;

typedef struct {
    wa_urlbase base;          /* the page (or its <base href>) */
    wa_bytes prefix, full;     /* URLs already under these are left alone */
    int check_prefix, check_full;
    wa_rwhead heads[WA_NSLOTS];
} wa_rw;

static void wa_rw_free(wa_rw *rw) {
    int i;
    wa_urlbase_free(&rw->base);
    wa_bytes_free(&rw->prefix);
    wa_bytes_free(&rw->full);
    for (i = 0; i < WA_NSLOTS; i++) {
        wa_bytes_free(&rw->heads[i].abs);
        wa_bytes_free(&rw->heads[i].rel);
        wa_bytes_free(&rw->heads[i].sr);
        wa_bytes_free(&rw->heads[i].tail);
        rw->heads[i].ok = 0;
    }
}

/* What wa_rw_url needs to know of a reference, in one pass. */
typedef struct {
    int bad;         /* a byte outside 0x21-0x7e, or a backslash */
    int dds;         /* "../" anywhere (UrlRewriter's own test) */
    int dd_seg;      /* a ".." segment before the query */
    int pct2e;       /* "%2e" (any case) before the query */
    int xn;          /* "xn--" anywhere */
} wa_refscan;

static inline int wa_bad_byte(uint8_t c) { return c <= 0x20 || c >= 0x7f || c == '\\'; }

static void wa_scan_ref(const uint8_t *u, size_t n, wa_refscan *r) {
    size_t i, seg = 0;
    int in_path = 1;
    memset(r, 0, sizeof(*r));
    for (i = 0; i < n; i++) {
        uint8_t c = u[i];
        if (wa_bad_byte(c)) {
            r->bad = 1;
            return;
        }
        switch (c) {
        case '/':
            if (in_path && i - seg == 2 && u[seg] == '.' && u[seg + 1] == '.') r->dd_seg = 1;
            if (i >= 2 && u[i - 1] == '.' && u[i - 2] == '.') r->dds = 1;
            seg = i + 1;
            break;
        case '?':
        case '#':
            if (in_path && i - seg == 2 && u[seg] == '.' && u[seg + 1] == '.') r->dd_seg = 1;
            in_path = 0;
            break;
        case '%':
            if (in_path && i + 2 < n && u[i + 1] == '2' && (u[i + 2] == 'e' || u[i + 2] == 'E')) r->pct2e = 1;
            break;
        case '-':
            if (i >= 3 && u[i - 1] == '-' && u[i - 2] == 'n' && u[i - 3] == 'x') r->xn = 1;
            break;
        default:
            break;
        }
    }
    if (in_path && n - seg == 2 && u[seg] == '.' && u[seg + 1] == '.') r->dd_seg = 1;
}

/* A '..' segment in the path of an absolute (or scheme-relative) URL, its path being what follows
 * urls._AUTHORITY: an optional scheme and ':', then an optional '//' and netloc. */
static int wa_abs_dotdot(const uint8_t *u, size_t n) {
    size_t a = wa_scheme_len(u, n), i, seg;
    if (a) a++;
    if (a + 1 < n && u[a] == '/' && u[a + 1] == '/') {
        a += 2;
        while (a < n && u[a] != '/' && u[a] != '?' && u[a] != '#') a++;
    }
    for (i = seg = a;; i++) {
        if (i == n || u[i] == '/' || u[i] == '?' || u[i] == '#') {
            if (i - seg == 2 && u[seg] == '.' && u[seg + 1] == '.') return 1;
            if (i == n || u[i] != '/') return 0;
            seg = i + 1;
        }
    }
}

static int wa_put3(wa_bytes *out, const wa_bytes *h, const uint8_t *t, size_t tn, const wa_bytes *tail) {
    if (wa_bytes_put(out, h->p, h->len) || wa_bytes_put(out, t, tn) || wa_bytes_put(out, tail->p, tail->len))
        return WA_E_NOMEM;
    return WA_OK;
}

/* UrlRewriter.rewrite(u, modifier of `slot`, force_abs=fa) appended to out. Returns WA_SAME
 * (left as it is), WA_DONE (*verbatim = 1 when out holds head + u + tail), WA_SLOW, WA_E_NOMEM.
 * u is the reference as the attribute gives it, spaces around it already trimmed. */
static int wa_rw_url(const wa_rw *rw, int slot, int fa, const uint8_t *u, size_t n, wa_bytes *out, int *verbatim) {
    int is_abs = 0, sr = 0, rc, same;
    const wa_rwhead *h = &rw->heads[slot];
    wa_refscan sc;
    *verbatim = 0;
    if (n == 0) return WA_SAME;
    wa_scan_ref(u, n, &sc);
    if (sc.bad) return WA_SLOW;
    switch (wa_lower(u[0])) {         /* _NO_REWRITE, then _PROTOCOLS */
    case '#': case '{': return WA_SAME;
    case 'j': if (wa_starts_ci(u, n, "javascript:")) return WA_SAME; break;
    case 'd': if (wa_starts_ci(u, n, "data:")) return WA_SAME; break;
    case 'a': if (wa_starts_ci(u, n, "about:")) return WA_SAME; break;
    case 'b': if (wa_starts_ci(u, n, "blob:")) return WA_SAME; break;
    case 't': if (wa_starts_ci(u, n, "tel:")) return WA_SAME; break;
    case 'm':
        if (wa_starts_ci(u, n, "mailto:")) return WA_SAME;
        is_abs = wa_starts_ci(u, n, "mms:");
        break;
    case 'f':
        if (wa_starts_ci(u, n, "file:")) return WA_SAME;
        is_abs = wa_starts_ci(u, n, "ftp:");
        break;
    case 'h': is_abs = wa_starts_ci(u, n, "http:") || wa_starts_ci(u, n, "https:"); break;
    case 'r': is_abs = wa_starts_ci(u, n, "rtsp:"); break;
    case 'w': is_abs = wa_starts_ci(u, n, "wais:"); break;
    default: break;
    }
    if (rw->check_prefix && n >= rw->prefix.len && u[0] == rw->prefix.p[0]
        && memcmp(u, rw->prefix.p, rw->prefix.len) == 0)
        return WA_SAME;
    if (rw->check_full && n >= rw->full.len && u[0] == rw->full.p[0] && memcmp(u, rw->full.p, rw->full.len) == 0)
        return WA_SAME;
    if (n >= 2 && u[0] == '/' && u[1] == '/') {
        is_abs = sr = 1;
    } else if (!fa && !is_abs && u[0] != '/') {
        if (!sc.dds) return sc.pct2e ? WA_SLOW : WA_SAME;   /* left to the browser */
    }
    if (!h->ok) return WA_SLOW;
    if (is_abs) {
        if (sc.pct2e || sc.xn || wa_abs_dotdot(u, n) || !wa_head_plain(u, n)) return WA_SLOW;
        *verbatim = 1;
        rc = wa_put3(out, sr ? &h->sr : &h->abs, u, n, &h->tail);
        return rc ? rc : WA_DONE;
    }
    if (!rw->base.rw_ok || sc.pct2e || sc.xn || wa_scheme_len(u, n)) return WA_SLOW;
    if (u[0] == '?' && rw->base.path_e == rw->base.path_s) return WA_SLOW;   /* pywb's _join would add a '/' */
    {
        size_t start = out->len, tn;
        if (wa_bytes_put(out, h->rel.p, h->rel.len)) return WA_E_NOMEM;
        tn = out->len;
        rc = wa_join(&rw->base, u, n, out, &same);
        if (rc != WA_OK || same) {
            out->len = start;
            return rc == WA_E_NOMEM ? rc : WA_SLOW;
        }
        if (!wa_head_plain(out->p + tn, out->len - tn)) {
            out->len = start;
            return WA_SLOW;
        }
        if (wa_bytes_put(out, h->tail.p, h->tail.len)) return WA_E_NOMEM;
    }
    return WA_DONE;
}

#endif
