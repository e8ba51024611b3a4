/* wa_surt.h — SURT keys, byte-identical to the `surt` package (0.3.1):
 * surt.surt(url, **options), i.e. GoogleURLCanonicalizer then
 * IAURLCanonicalizer, then handyurl.geturl_bytes, each step with the
 * package's keyword arguments.  With no options that is what cdxj-indexer
 * and pywb call (surt=True, with_scheme=False): the host reversed into
 * "com,example)".
 *
 * Pure C: no Python API, no GIL, no heap, no DNS.  Everything is computed in
 * one caller-provided buffer, so this header can be #included by any kernel
 * and called from a nogil loop.  Include it as it is: it needs only libc.
 *
 * Contract
 * --------
 *   int wa_surt_key_opts(const unsigned char *url, size_t n,
 *                        unsigned char *out, size_t cap, size_t *outlen,
 *                        const unsigned char *idna_host, size_t idna_len,
 *                        int have_idna, unsigned opts);
 *   int wa_surt_key(...same but opts...)      = wa_surt_key_opts(..., WA_SURT_OPT_DEFAULT)
 *
 *   `url` holds the URL bytes (a str is UTF-8 encoded first).  `out` must be
 *   at least WA_SURT_CAP(n, idna_len) bytes; it is scratch as well as result.
 *   `opts` is an OR of WA_SURT_OPT_* bits, one per boolean option of the
 *   package that has an effect (see below); bits outside WA_SURT_OPT_ALL are
 *   ignored.  Returns
 *     WA_OK        out[0..*outlen) is the key.  It is always ASCII,
 *                       except for the "filedesc..." passthrough (the input).
 *     WA_SURT_NEED_IDNA the host, percent-unescaped, has a byte >= 0x80 and
 *                       must be IDNA-encoded as the package does:
 *                       host.decode('utf-8','ignore').encode('idna'), or the
 *                       host bytes themselves when that raises.  The host
 *                       bytes are out[0..*outlen) (the same for every opts).
 *                       Call again with the same url and opts, idna_host/
 *                       idna_len set to the result and have_idna = 1.
 *     WA_SURT_FAIL      the package raises for this URL (empty after strip,
 *                       bad port, all-digit host over 4300 digits); callers
 *                       such as cdxj-indexer then use the URL as its key.
 *     WA_SURT_SMALL     cap < WA_SURT_CAP(n, idna_len), or n or idna_len is
 *                       WA_SURT_MAX_LEN (256 MiB) or more; nothing was read.
 *   The function never reads url or idna_host past their lengths, never
 *   writes out past cap, and needs no NUL terminators.
 *
 * Options
 * -------
 *   Each WA_SURT_OPT_* bit is the keyword argument of the same name set
 *   true; WA_SURT_OPT_DEFAULT is the package's defaults.  The package's other
 *   keywords have no bit: auth_strip_user, auth_strip_pass and hash_strip
 *   change nothing (handyurl.parse keeps no userinfo, and the Google step
 *   always drops the fragment), and public_suffix=True is refused by the
 *   Python layer (ext/surt.pyx says why).
 *
 * Deviation: hosts shaped like dotted numbers (surt's DECIMAL_IP/OCTAL_IP
 * patterns) are converted with glibc inet_aton rules; when those reject the
 * host, surt asks DNS (socket.gethostbyname_ex) and we do not: we answer as
 * surt does when the lookup fails.  See docs/format.md, "SURT keys".
 */
#ifndef WA_SURT_H
#define WA_SURT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wa_common.h"

/* The key is computed by one body compiled twice (see wa__surt_key): the
 * helpers it calls once are always inlined into each copy, so that each is
 * optimized as one function. */
#if defined(__GNUC__) || defined(__clang__)
#define WA__ALWAYS_INLINE inline __attribute__((always_inline))
#define WA__NOINLINE __attribute__((noinline))
#else
#define WA__ALWAYS_INLINE inline
#define WA__NOINLINE
#endif

/* WA_OK, WA_SURT_NEED_IDNA, WA_SURT_FAIL and WA_SURT_SMALL are wa_common.h's */

/* Always enough room for wa_surt_key_opts, whatever the options (keys themselves
 * are < 3n + 3*idna + 40). */
#define WA_SURT_CAP(n, idna_len) (11u * (size_t)(n) + 3u * (size_t)(idna_len) + 256u)

/* Longer inputs get WA_SURT_SMALL (offsets in the sort index are 32-bit). */
#define WA_SURT_MAX_LEN ((size_t)1 << 28)

/* Python's int() refuses decimal strings longer than this (sys.get_int_max_str_digits). */
#define WA_SURT_INT_MAX_DIGITS 4300u

/* ---- options: the package's keyword arguments, one bit each -------------- */

/* handyurl.geturl_bytes */
#define WA_SURT_OPT_SURT                       (1u << 0)   /* host reversed, then ')' */
#define WA_SURT_OPT_WITH_SCHEME                (1u << 1)   /* "http://(" before the host */
#define WA_SURT_OPT_TRAILING_COMMA             (1u << 2)   /* ',' before the ')' */
#define WA_SURT_OPT_REVERSE_IPADDR             (1u << 3)   /* dotted quads reversed too */
/* IAURLCanonicalizer.canonicalize */
#define WA_SURT_OPT_HOST_LOWERCASE             (1u << 4)   /* host escapes as %xx, not %XX */
#define WA_SURT_OPT_HOST_MASSAGE               (1u << 5)   /* leading www\d*\. removed */
#define WA_SURT_OPT_PORT_STRIP_DEFAULT         (1u << 6)   /* :80 for http, :443 for https dropped */
#define WA_SURT_OPT_PATH_STRIP_EMPTY           (1u << 7)   /* path "/" dropped */
#define WA_SURT_OPT_PATH_LOWERCASE             (1u << 8)
#define WA_SURT_OPT_PATH_STRIP_SESSION_ID      (1u << 9)   /* ASP.NET "(S(...))/" segments */
#define WA_SURT_OPT_PATH_STRIP_TRAILING_SLASH_UNLESS_EMPTY (1u << 10)
#define WA_SURT_OPT_QUERY_LOWERCASE            (1u << 11)
#define WA_SURT_OPT_QUERY_STRIP_SESSION_ID     (1u << 12)  /* jsessionid=..., cfid=...&cftoken=... */
#define WA_SURT_OPT_QUERY_STRIP_EMPTY          (1u << 13)  /* no "?" for an empty query */
#define WA_SURT_OPT_QUERY_ALPHA_REORDER        (1u << 14)  /* arguments sorted */

#define WA_SURT_OPT_ALL ((1u << 15) - 1u)
/* The bits IAURLCanonicalizer reads: all clear is GoogleURLCanonicalizer alone. */
#define WA_SURT_OPT_IA (WA_SURT_OPT_ALL & ~(WA_SURT_OPT_SURT | WA_SURT_OPT_WITH_SCHEME \
                                             | WA_SURT_OPT_TRAILING_COMMA | WA_SURT_OPT_REVERSE_IPADDR))
/* surt.surt(url): everything true but with_scheme, trailing_comma, path_strip_empty. */
#define WA_SURT_OPT_DEFAULT (WA_SURT_OPT_ALL & ~(WA_SURT_OPT_WITH_SCHEME | WA_SURT_OPT_TRAILING_COMMA \
                                                  | WA_SURT_OPT_PATH_STRIP_EMPTY))

/* ---- byte classes -------------------------------------------------------- */

static inline int wa__isdigit(unsigned c) { return c - '0' < 10u; }
static inline int wa__isalpha(unsigned c) { return (c | 0x20u) - 'a' < 26u; }
static inline int wa__isalnum(unsigned c) { return wa__isdigit(c) || wa__isalpha(c); }
static inline unsigned char wa__lower(unsigned c)
{
    return (unsigned char)(c - 'A' < 26u ? c + 32u : c);
}
static inline int wa__hexval(unsigned c)
{
    if (c - '0' < 10u) return (int)(c - '0');
    if ((c | 0x20u) - 'a' < 6u) return (int)((c | 0x20u) - 'a' + 10);
    return -1;
}
/* Bytes that surt's escapeOnce (quote_from_bytes with its safe set) escapes:
 * controls, space, '#', '%', DEL and everything >= 0x80. */
static const unsigned char wa__escape_tab[256] = {
    1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,
    1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,
    1,0,0,1,0,1,0,0,0,0,0,0,0,0,0,0,
    0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
    0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
    0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
    0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,
    0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1,
    1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,
    1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,
    1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,
    1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,
    1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,
    1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,
    1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,
    1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,
};
static inline int wa__must_escape(unsigned c) { return wa__escape_tab[c & 0xffu]; }

/* ---- percent coding ------------------------------------------------------- */

/* unescapeRepeatedly: unquote_to_bytes until nothing changes, in place.
 * "%XX" redexes never overlap, so the fixpoint is unique and one pass with a
 * stack reaches it: after each byte, fold a "%XX" that ends at the top. */
static size_t wa__unescape_rep(unsigned char *p, size_t n)
{
    const unsigned char *pct = (const unsigned char *)memchr(p, '%', n);
    if (pct == NULL) return n;
    size_t w = (size_t)(pct - p);
    for (size_t r = w; r < n; r++) {
        p[w++] = p[r];
        while (w >= 3 && p[w - 3] == '%') {
            int hi = wa__hexval(p[w - 2]), lo = wa__hexval(p[w - 1]);
            if (hi < 0 || lo < 0) break;
            p[w - 3] = (unsigned char)(hi << 4 | lo);
            w -= 2;
        }
    }
    return w;
}

/* escapeOnce followed by the IA canonicalizer's lower(): escapes come out as
 * "%xx" (lowercase hex) and ASCII letters are lowered.  In place; p must have
 * room for 3*n bytes. */
#define WA__ONES 0x0101010101010101u
#define WA__HIGHS 0x8080808080808080u
#define WA__HAS_ZERO(v) (((v) - WA__ONES) & ~(v) & WA__HIGHS)

/* Lowercases the eight bytes of *x and returns 0 when none must be escaped;
 * returns 1 (and leaves *x alone) otherwise. */
static inline int wa__lower8_if_clean(uint64_t *x)
{
    uint64_t v = *x;
    uint64_t bad = (v & WA__HIGHS)                              /* >= 0x80 */
        | ((v - WA__ONES * 0x21u) & ~v & WA__HIGHS)             /* < 0x21  */
        | WA__HAS_ZERO(v ^ (WA__ONES * 0x7fu))
        | WA__HAS_ZERO(v ^ (WA__ONES * '#'))
        | WA__HAS_ZERO(v ^ (WA__ONES * '%'));
    if (bad) return 1;
    uint64_t ge_a = v + WA__ONES * (0x80u - 'A'), gt_z = v + WA__ONES * (0x80u - 'Z' - 1);
    *x = v | ((ge_a & ~gt_z & WA__HIGHS) >> 2);                 /* 'A'..'Z' += 0x20 */
    return 0;
}

static size_t wa__escape_lower(unsigned char *p, size_t n)
{
    static const char hexl[] = "0123456789abcdef";
    size_t e = 0, i = 0;
    for (; i + 8 <= n; i += 8) {                /* lower first: letters are never escaped */
        uint64_t x;
        memcpy(&x, p + i, 8);
        if (!wa__lower8_if_clean(&x)) { memcpy(p + i, &x, 8); continue; }
        for (size_t k = i; k < i + 8; k++) { e += wa__escape_tab[p[k]]; p[k] = wa__lower(p[k]); }
    }
    for (; i < n; i++) {
        unsigned c = p[i];
        e += wa__escape_tab[c];
        p[i] = wa__lower(c);
    }
    if (e == 0) return n;
    size_t m = n + 2 * e, w = m;
    for (size_t i = n; i-- > 0;) {
        unsigned c = p[i];
        if (wa__must_escape(c)) {
            p[--w] = (unsigned char)hexl[c & 15u];
            p[--w] = (unsigned char)hexl[c >> 4];
            p[--w] = '%';
        } else {
            p[--w] = wa__lower(c);
        }
    }
    return m;
}

/* escapeOnce alone (host_lowercase, path_lowercase or query_lowercase false):
 * escapes come out as "%XX" and nothing is lowercased.  In place; p must have
 * room for 3*n bytes. */
static size_t wa__escape_once(unsigned char *p, size_t n)
{
    static const char hexu[] = "0123456789ABCDEF";
    size_t e = 0;
    for (size_t i = 0; i < n; i++) e += wa__escape_tab[p[i]];
    if (e == 0) return n;
    size_t m = n + 2 * e, w = m;
    for (size_t i = n; i-- > 0;) {
        unsigned c = p[i];
        if (wa__must_escape(c)) {
            p[--w] = (unsigned char)hexu[c & 15u];
            p[--w] = (unsigned char)hexu[c >> 4];
            p[--w] = '%';
        } else {
            p[--w] = (unsigned char)c;
        }
    }
    return m;
}

/* ---- path ----------------------------------------------------------------- */

/* GoogleURLCanonicalizer.normalizePath, in place (room for n + 1 bytes).
 * The text before the first '/' is dropped; "." segments are skipped; ".."
 * pops the last kept segment (even an empty one) or is kept when there is
 * none; then empty segments but the last are dropped.  Kept segments are held
 * as "/seg" runs, so a pop truncates to the last '/', and the final dropping
 * of empty segments is a collapse of '/' runs. */
static WA__ALWAYS_INLINE size_t wa__normalize_path(unsigned char *p, size_t n)
{
    if (n > 0 && p[0] == '/') {                 /* no "//" and no "/." : nothing to do */
        size_t i = 0;
        while (i + 1 < n && !(p[i] == '/' && (p[i + 1] == '/' || p[i + 1] == '.'))) i++;
        if (i + 1 >= n) return n;
    }
    const unsigned char *s = n ? (const unsigned char *)memchr(p, '/', n) : NULL;
    if (s == NULL) { p[0] = '/'; return 1; }
    size_t r = (size_t)(s - p), w = 0;          /* invariant: w <= r, p[r] == '/' */
    while (r < n) {
        size_t a = r + 1;
        const unsigned char *q = a < n ? (const unsigned char *)memchr(p + a, '/', n - a) : NULL;
        size_t b = q ? (size_t)(q - p) : n, len = b - a;
        if (len == 1 && p[a] == '.') {
            /* skip */
        } else if (len == 2 && p[a] == '.' && p[a + 1] == '.') {
            if (w > 0) {
                while (p[--w] != '/') {}
            } else {
                p[w++] = '/'; p[w++] = '.'; p[w++] = '.';
            }
        } else {
            p[w++] = '/';
            memmove(p + w, p + a, len);
            w += len;
        }
        r = b;
    }
    size_t o = 0;
    for (size_t i = 0; i < w; i++) {
        if (p[i] == '/' && o > 0 && p[o - 1] == '/') continue;
        p[o++] = p[i];
    }
    if (o == 0) { p[0] = '/'; o = 1; }
    return o;
}

static inline int wa__aspx_at(const unsigned char *p, size_t n, size_t i)
{
    return i + 5 <= n && p[i] == '.' && wa__lower(p[i + 1]) == 'a' && wa__lower(p[i + 2]) == 's'
        && wa__lower(p[i + 3]) == 'p' && wa__lower(p[i + 4]) == 'x';
}

/* The middle group of surt's two path session-id patterns, tested on the
 * text between two consecutive slashes (the second slash included):
 *   kind 1:  "(" ( [a-z] "(" [0-9a-z]{24} ")" )+ ")/"
 *   kind 2:  "(" [0-9a-z]{24} ")/"                                          */
static int wa__path_sid_middle(const unsigned char *s, size_t len, int kind)
{
    if (kind == 2) {
        if (len != 27 || s[0] != '(' || s[25] != ')' || s[26] != '/') return 0;
        for (size_t i = 1; i < 25; i++) if (!wa__isalnum(s[i])) return 0;
        return 1;
    }
    if (len < 30 || (len - 3) % 27 != 0 || s[0] != '(' || s[len - 2] != ')' || s[len - 1] != '/')
        return 0;
    for (size_t k = 1; k + 27 <= len - 2; k += 27) {
        if (!wa__isalpha(s[k]) || s[k + 1] != '(' || s[k + 26] != ')') return 0;
        for (size_t i = k + 2; i < k + 26; i++) if (!wa__isalnum(s[i])) return 0;
    }
    return 1;
}

/* stripPathSessionID for one pattern  ^(.*[/])(MIDDLE)([^?]+\.aspx.*)$ .
 * The middle has exactly one '/', its last byte, and group 1 ends in '/', so
 * candidates are the texts between consecutive slashes; the greedy (.*[/])
 * takes the rightmost candidate whose tail matches.  The tail matches at s
 * when ".aspx" starts somewhere in [s+1, first '?' at or after s).  Tails
 * are tested right to left and each test reuses the previous one, so the
 * whole search is linear. */
static size_t wa__strip_path_sid(unsigned char *p, size_t n, int kind)
{
    if (memchr(p, '(', n) == NULL) return n;    /* both middles start with '(' */
    size_t hi = n, ms = (size_t)-1;
    int mres = 0;
    for (;;) {
        while (hi > 0 && p[hi - 1] != '/') hi--;      /* hi-1: the closing slash */
        if (hi == 0) return n;
        size_t lo = hi - 1;
        while (lo > 0 && p[lo - 1] != '/') lo--;      /* lo-1: the opening slash */
        if (lo == 0) return n;
        if (wa__path_sid_middle(p + lo, hi - lo, kind)) {
            size_t s = hi, end = ms == (size_t)-1 ? n : ms, i;
            int res = -1;
            for (i = s; i < end; i++) {
                if (p[i] == '?') { res = 0; break; }
                if (i > s && wa__aspx_at(p, n, i)) { res = 1; break; }
            }
            if (res < 0) {
                if (ms == (size_t)-1) res = 0;
                else res = wa__aspx_at(p, n, ms) ? 1 : mres;
            }
            ms = s;
            mres = res;
            if (res) {
                memmove(p + lo, p + hi, n - hi);
                return n - (hi - lo);
            }
        }
        hi = lo;                                /* its opening slash closes the next one */
    }
}

/* ---- query ---------------------------------------------------------------- */

static inline int wa__lit(const unsigned char *p, const char *lit, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (wa__lower(p[i]) != (unsigned char)lit[i]) return 0;
    return 1;
}

/* Length of session-id token `kind` (1..4) at q[i..n), 0 when absent:
 *   1 jsessionid=[0-9a-z]{32}   2 phpsessid=[0-9a-z]{32}   3 sid=[0-9a-z]{32}
 *   4 aspsessionid[a-z]{8}=[a-z]{24}          (all case-insensitive)        */
static size_t wa__qsid_token(const unsigned char *q, size_t n, size_t i, int kind)
{
    static const char *const lits[] = {"", "jsessionid=", "phpsessid=", "sid=", "aspsessionid"};
    static const size_t litlen[] = {0, 11, 10, 4, 12};
    size_t L = litlen[kind], tot = kind == 4 ? 12 + 8 + 1 + 24 : L + 32;
    if (i + tot > n || !wa__lit(q + i, lits[kind], L)) return 0;
    if (kind == 4) {
        for (size_t k = i + 12; k < i + 20; k++) if (!wa__isalpha(q[k])) return 0;
        if (q[i + 20] != '=') return 0;
        for (size_t k = i + 21; k < i + tot; k++) if (!wa__isalpha(q[k])) return 0;
    } else {
        for (size_t k = i + L; k < i + tot; k++) if (!wa__isalnum(q[k])) return 0;
    }
    return tot;
}

/* One of stripQuerySessionID's patterns  ^(.*)TOKEN(?:&(.*))?$ : the greedy
 * (.*) takes the rightmost TOKEN that ends the query or is followed by '&';
 * the result is the text before it plus the text after that '&'. */
static WA__ALWAYS_INLINE size_t wa__strip_query_sid(unsigned char *q, size_t n, int kind)
{
    if (kind <= 4) {
        for (size_t i = n; i-- > 0;) {
            size_t t = wa__qsid_token(q, n, i, kind);
            if (t == 0) continue;
            size_t e = i + t;
            if (e < n && q[e] != '&') continue;
            if (e == n) return i;
            memmove(q + i, q + e + 1, n - e - 1);
            return i + (n - e - 1);
        }
        return n;
    }
    /* cfid=[^&]+&cftoken=[^&]+ : both runs are maximal, so with a1/a2 the
     * first two '&' at or after i, the token is cfid=X a1 cftoken=Y a2. */
    size_t a1 = n, a2 = n;
    for (size_t i = n; i-- > 0;) {
        if (q[i] == '&') { a2 = a1; a1 = i; continue; }
        if (i + 5 > n || !wa__lit(q + i, "cfid=", 5)) continue;
        if (a1 == n || a1 <= i + 5) continue;
        if (a1 + 9 > n || !wa__lit(q + a1 + 1, "cftoken=", 8)) continue;
        if (a2 <= a1 + 9) continue;
        if (a2 == n) return i;
        memmove(q + i, q + a2 + 1, n - a2 - 1);
        return i + (n - a2 - 1);
    }
    return n;
}

/* Order of two query arguments as surt sorts them: as Python tuples
 * (name,) or (name, value) split at the first '=', compared bytewise. */
static int wa__qarg_cmp(const unsigned char *q, size_t n, uint32_t ia, uint32_t ib)
{
    size_t a = ia, b = ib;
    for (;;) {                                  /* names */
        int ea = a >= n || q[a] == '&' || q[a] == '=';
        int eb = b >= n || q[b] == '&' || q[b] == '=';
        if (ea || eb) {
            if (!ea) return 1;
            if (!eb) return -1;
            break;
        }
        if (q[a] != q[b]) return q[a] < q[b] ? -1 : 1;
        a++; b++;
    }
    int va = a < n && q[a] == '=', vb = b < n && q[b] == '=';
    if (!va || !vb) return va - vb;             /* (name,) < (name, value) */
    a++; b++;
    for (;;) {                                  /* values */
        int ea = a >= n || q[a] == '&', eb = b >= n || q[b] == '&';
        if (ea || eb) return eb - ea;
        if (q[a] != q[b]) return q[a] < q[b] ? -1 : 1;
        a++; b++;
    }
}

static void wa__qarg_sift(const unsigned char *q, size_t n, uint32_t *v, size_t root, size_t k)
{
    for (;;) {
        size_t c = 2 * root + 1;
        if (c >= k) return;
        if (c + 1 < k && wa__qarg_cmp(q, n, v[c], v[c + 1]) < 0) c++;
        if (wa__qarg_cmp(q, n, v[root], v[c]) >= 0) return;
        uint32_t t = v[root]; v[root] = v[c]; v[c] = t;
        root = c;
    }
}

/* alphaReorderQuery from q[0..n) into dst (n bytes).  Equal arguments are
 * byte-identical, so an unstable sort gives the same text. */
static WA__ALWAYS_INLINE void wa__reorder_query(const unsigned char *q, size_t n, unsigned char *dst, uint32_t *v)
{
    size_t k = 0;
    v[k++] = 0;
    for (size_t i = 0; i < n; i++) if (q[i] == '&') v[k++] = (uint32_t)(i + 1);
    if (k <= 12) {
        for (size_t i = 1; i < k; i++) {
            uint32_t x = v[i];
            size_t j = i;
            while (j > 0 && wa__qarg_cmp(q, n, v[j - 1], x) > 0) { v[j] = v[j - 1]; j--; }
            v[j] = x;
        }
    } else {
        for (size_t i = k / 2; i-- > 0;) wa__qarg_sift(q, n, v, i, k);
        for (size_t e = k - 1; e > 0; e--) {
            uint32_t t = v[0]; v[0] = v[e]; v[e] = t;
            wa__qarg_sift(q, n, v, 0, e);
        }
    }
    size_t w = 0;
    for (size_t i = 0; i < k; i++) {
        if (i) dst[w++] = '&';
        size_t a = v[i], b = a;
        while (b < n && q[b] != '&') b++;
        memcpy(dst + w, q + a, b - a);
        w += b - a;
    }
}

/* ---- host ----------------------------------------------------------------- */

/* glibc inet_aton on a string of digits and dots (1 to 4 parts; 0x forms
 * cannot occur here): a part with a leading 0 is octal; all parts but the
 * last must fit a byte, the last fills the remaining bytes. */
static int wa__inet_aton(const unsigned char *h, size_t n, uint32_t *addr)
{
    uint32_t parts[4];
    size_t np = 0, i = 0;
    for (;;) {
        if (np == 4 || i >= n || !wa__isdigit(h[i])) return 0;
        unsigned base = h[i] == '0' ? 8u : 10u;
        uint64_t v = 0;
        for (; i < n && h[i] != '.'; i++) {
            unsigned d = h[i] - '0';
            if (d >= base) return 0;
            v = v * base + d;
            if (v > 0xffffffffu) return 0;
        }
        parts[np++] = (uint32_t)v;
        if (i == n) break;
        i++;                                    /* the '.' */
    }
    static const uint32_t maxlast[4] = {0xffffffffu, 0xffffffu, 0xffffu, 0xffu};
    uint32_t a = 0;
    for (size_t k = 0; k + 1 < np; k++) {
        if (parts[k] > 0xffu) return 0;
        a |= parts[k] << (24 - 8 * k);
    }
    if (parts[np - 1] > maxlast[np - 1]) return 0;
    *addr = a | parts[np - 1];
    return 1;
}

/* surt's DECIMAL_IP and OCTAL_IP patterns (without the '$'-before-newline
 * case, which the caller handles):
 *   ^([1-9][0-9]*)(\.[0-9]+)?(\.[0-9]+)?(\.[0-9]+)?$
 *   ^(0[0-7]*)(\.[0-7]+)?(\.[0-7]+)?(\.[0-7]+)?$                            */
static int wa__ip_shaped(const unsigned char *h, size_t n)
{
    if (n == 0 || !wa__isdigit(h[0])) return 0;
    unsigned top = h[0] == '0' ? '7' : '9';
    size_t i = 0, parts = 0;
    for (;;) {
        size_t d = 0;
        while (i < n && wa__isdigit(h[i]) && (parts == 0 || h[i] <= top)) { i++; d++; }
        if (d == 0) return 0;
        if (parts == 0 && top == '7') {         /* first octal part: 0[0-7]* */
            for (size_t k = 1; k < d; k++) if (h[k] > '7') return 0;
        }
        parts++;
        if (i == n) return 1;
        if (h[i] != '.' || parts == 4) return 0;
        i++;
    }
}

static size_t wa__put_dotted(unsigned char *p, uint32_t a)
{
    size_t w = 0;
    for (int k = 3; k >= 0; k--) {
        unsigned b = (a >> (8 * k)) & 0xffu;
        if (b >= 100) p[w++] = (unsigned char)('0' + b / 100);
        if (b >= 10) p[w++] = (unsigned char)('0' + b / 10 % 10);
        p[w++] = (unsigned char)('0' + b % 10);
        if (k) p[w++] = '.';
    }
    return w;
}

/* attemptIPFormats.  Returns 1 and writes the dotted quad over h when the
 * host is an IPv4 address, 0 when it is not, -1 when Python's int() raises. */
static WA__ALWAYS_INLINE int wa__ip_host(unsigned char *h, size_t n, size_t *outn)
{
    if (n == 0) return 0;
    size_t i = 0;
    while (i < n && wa__isdigit(h[i])) i++;
    uint32_t a;
    if (i == n) {                               /* host.isdigit(): int(host) & 0xffffffff */
        if (n > WA_SURT_INT_MAX_DIGITS) return -1;
        a = 0;
        for (size_t k = 0; k < n; k++) a = a * 10u + (uint32_t)(h[k] - '0');
    } else {
        /* A trailing '\n' still matches the patterns ('$'), but no resolver
         * takes such a name as a number: surt asks DNS, which fails. */
        if (!wa__ip_shaped(h, n) || !wa__inet_aton(h, n, &a)) return 0;
    }
    *outn = wa__put_dotted(h, a);               /* h has room: the key region is >= 64 */
    return 1;
}

/* surt's _RE_IP_ADDRESS, (?:\d{1,3}\.){3}\d{1,3}$ matched at the start: the
 * hosts that hostToSURT leaves in reading order with reverse_ipaddr=False.
 * Digits never match '.', so taking up to three greedily is exact; '$' also
 * allows a final '\n', which a canonicalized host never has (it is escaped). */
static WA__ALWAYS_INLINE int wa__dotted_quad_shape(const unsigned char *h, size_t n)
{
    size_t i = 0;
    for (int part = 0; part < 4; part++) {
        size_t d = 0;
        while (i < n && d < 3 && wa__isdigit(h[i])) { i++; d++; }
        if (d == 0) return 0;
        if (part < 3) {
            if (i >= n || h[i] != '.') return 0;
            i++;
        }
    }
    return i == n;
}

/* hostToSURT: "www.example.com" -> "com,example,www", in place. */
static WA__ALWAYS_INLINE void wa__reverse_labels(unsigned char *p, size_t n)
{
    for (size_t i = 0, j = n; i + 1 < j; i++, j--) {
        unsigned char t = p[i]; p[i] = p[j - 1]; p[j - 1] = t;
    }
    size_t a = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || p[i] == '.') {
            for (size_t x = a, y = i; x + 1 < y; x++, y--) {
                unsigned char t = p[x]; p[x] = p[y - 1]; p[y - 1] = t;
            }
            if (i < n) p[i] = ',';
            a = i + 1;
        }
    }
}

/* ---- parse ---------------------------------------------------------------- */

typedef struct {
    const unsigned char *s;     /* cleaned URL: stripped, \t\r\n removed, scheme ensured */
    size_t n;
    size_t scheme_len;          /* s[0..scheme_len) */
    const unsigned char *host;  /* hostname, or NULL */
    size_t host_len;
    int host_lower_upto_pct;    /* hostname came from netloc: lowercase before first '%' */
    const unsigned char *path;  /* NULL when absent */
    size_t path_len;
    const unsigned char *query; /* NULL when absent or empty */
    size_t query_len;
    long port;                  /* -1: none (port 0 counts as none) */
} wa_surt_url;

static inline int wa__is_space(unsigned c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}
static inline int wa__is_scheme_char(unsigned c)
{
    return wa__isalnum(c) || c == '+' || c == '-' || c == '.';
}

/* Whether any of p[0..n) is <= '\r' (so may be \t \n \r), eight bytes at a time. */
static int wa__has_byte_le_cr(const unsigned char *p, size_t n)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, p + i, 8);
        if ((x - ones * ('\r' + 1)) & ~x & highs) return 1;    /* some byte < 14 */
    }
    for (; i < n; i++) if (p[i] <= '\r') return 1;
    return 0;
}

/* First of '?' or '#' in p[a..b), else b. */
static size_t wa__find_qf(const unsigned char *p, size_t a, size_t b)
{
    const unsigned char *q = (const unsigned char *)memchr(p + a, '?', b - a);
    if (q != NULL) b = (size_t)(q - p);
    const unsigned char *h = (const unsigned char *)memchr(p + a, '#', b - a);
    return h != NULL ? (size_t)(h - p) : b;
}

/* handyurl.parse up to the SplitResultBytes properties.  dst has room for
 * n + 7 bytes.  Returns 0, or -1 where the package raises. */
static WA__ALWAYS_INLINE int wa__parse(const unsigned char *url, size_t n, unsigned char *dst, wa_surt_url *u)
{
    size_t a = 0, b = n;
    while (a < b && wa__is_space(url[a])) a++;
    while (b > a && wa__is_space(url[b - 1])) b--;
    if (a == b) return -1;                      /* scheme None: .startswith raises */

    unsigned char *c = dst + 7;
    size_t m = 0;
    if (!wa__has_byte_le_cr(url + a, b - a)) {
        memcpy(c, url + a, b - a);
        m = b - a;
    } else {
        for (size_t i = a; i < b; i++) {
            unsigned ch = url[i];
            if (ch != '\n' && ch != '\r' && ch != '\t') c[m++] = (unsigned char)ch;
        }
    }
    if (m == 0) return -1;

    size_t i = 1;
    int has_scheme = wa__isalpha(c[0]);
    if (has_scheme) {
        while (i < m && wa__is_scheme_char(c[i])) i++;
        has_scheme = i < m && c[i] == ':';
    }
    const unsigned char *s = c;
    if (!has_scheme) {
        memcpy(dst, "http://", 7);
        s = dst;
        m += 7;
    }
    /* ^(https?://)+ -> its last repetition */
    size_t p = 0, last = (size_t)-1;
    for (;;) {
        if (p + 7 <= m && memcmp(s + p, "http://", 7) == 0) { last = p; p += 7; }
        else if (p + 8 <= m && memcmp(s + p, "https://", 8) == 0) { last = p; p += 8; }
        else break;
    }
    if (last != (size_t)-1) { s += last; m -= last; }

    u->s = s;
    u->n = m;
    size_t sl = 0;
    while (s[sl] != ':') sl++;                  /* present: checked or prepended */
    u->scheme_len = sl;

    size_t r = sl + 1, na = r, nb = r;
    if (r + 2 <= m && s[r] == '/' && s[r + 1] == '/') {
        na = r + 2;
        const unsigned char *sl_ = (const unsigned char *)memchr(s + na, '/', m - na);
        nb = wa__find_qf(s, na, sl_ != NULL ? (size_t)(sl_ - s) : m);
        r = nb;
    }
    size_t pe = r < m ? wa__find_qf(s, r, m) : m;
    u->path = pe > r ? s + r : NULL;
    u->path_len = pe - r;
    u->query = NULL;
    u->query_len = 0;
    if (pe < m && s[pe] == '?') {
        const unsigned char *hash = (const unsigned char *)memchr(s + pe + 1, '#', m - pe - 1);
        size_t qe = hash != NULL ? (size_t)(hash - s) : m;
        if (qe > pe + 1) { u->query = s + pe + 1; u->query_len = qe - pe - 1; }
    }

    /* netloc: trailing ':' stripped, then urllib's _hostinfo / port / hostname */
    while (nb > na && s[nb - 1] == ':') nb--;
    size_t hs = na;
    for (size_t k = nb; k > na; k--) if (s[k - 1] == '@') { hs = k; break; }
    size_t h0, h1, p0 = nb, p1 = nb;
    const unsigned char *br = hs < nb ? (const unsigned char *)memchr(s + hs, '[', nb - hs) : NULL;
    if (br != NULL) {
        h0 = (size_t)(br - s) + 1;
        h1 = h0;
        while (h1 < nb && s[h1] != ']') h1++;
        if (h1 < nb) {
            size_t k = h1 + 1;
            while (k < nb && s[k] != ':') k++;
            if (k < nb) p0 = k + 1;
        }
    } else {
        h0 = hs;
        h1 = hs;
        while (h1 < nb && s[h1] != ':') h1++;
        if (h1 < nb) p0 = h1 + 1;
    }
    u->port = -1;
    if (p1 > p0) {
        if (p1 - p0 > WA_SURT_INT_MAX_DIGITS) return -1;
        long v = 0;
        for (size_t k = p0; k < p1; k++) {
            if (!wa__isdigit(s[k])) return -1;
            v = v * 10 + (s[k] - '0');
            if (v > 65535) {
                for (k++; k < p1; k++) if (!wa__isdigit(s[k])) return -1;
                return -1;
            }
        }
        if (v) u->port = v;
    }
    u->host = h1 > h0 ? s + h0 : NULL;
    u->host_len = h1 - h0;
    u->host_lower_upto_pct = 1;

    /* "http:///host/path", "http:host": the host is the path's first segment */
    if (sl >= 4 && memcmp(s, "http", 4) == 0 && u->host == NULL && u->path != NULL) {
        const unsigned char *q = u->path, *e = u->path + u->path_len;
        while (q < e && *q == '/') q++;
        const unsigned char *sep = (const unsigned char *)memchr(q, '/', (size_t)(e - q));
        u->host = q;
        u->host_len = (size_t)((sep ? sep : e) - q);
        u->host_lower_upto_pct = 0;
        if (sep) { u->path = sep; u->path_len = (size_t)(e - sep); }
        else { u->path = (const unsigned char *)"/"; u->path_len = 1; }
    }
    return 0;
}

/* ---- the key -------------------------------------------------------------- */

/* The body of the key functions, always inlined, so that each of the two
 * below has its own copy: wa_surt_key with the default options folded in as
 * constants (the options cost the default key nothing), wa__surt_key_other
 * with the bits tested at run time.  wa_surt_key_opts picks one; they are
 * kept out of line so that each is compiled on its own (inlined into one
 * function, both copies ran some 4% slower). */
static WA__ALWAYS_INLINE int wa__surt_key(const unsigned char *url, size_t n, unsigned char *out, size_t cap,
                                          size_t *outlen, const unsigned char *idna_host, size_t idna_len,
                                          int have_idna, unsigned opts)
{
    *outlen = 0;
    if (!have_idna) idna_len = 0;
    if (n >= WA_SURT_MAX_LEN || idna_len >= WA_SURT_MAX_LEN || cap < WA_SURT_CAP(n, idna_len))
        return WA_SURT_SMALL;
    if (n == 0) { out[0] = '-'; *outlen = 1; return WA_OK; }
    if (n >= 8 && memcmp(url, "filedesc", 8) == 0) {
        memcpy(out, url, n);
        *outlen = n;
        return WA_OK;
    }

    /* Regions of out:  [0, O) the key, built left to right;  [O, O+M) the
     * cleaned URL;  [T, T+3M+8) the query while it is escaped and sorted;
     * [X, X+4(M+2)) the sort index.  The key is at most 3M + 3*idna_len + 20
     * bytes: host, path and query are disjoint parts of the cleaned URL,
     * each at most tripled by escaping, the scheme prefix of with_scheme is
     * copied as it is, and the rest ("://(", ",)", ":port" digits beyond the
     * URL's, "/", "?", "?") is bounded. */
    size_t M = n + 7;
    size_t O = 3 * M + 3 * idna_len + 64;
    size_t T = O + M;
    size_t X = (T + 3 * M + 8 + 3) & ~(size_t)3;
    uint32_t *idx = (uint32_t *)(void *)(out + X);
    if ((uintptr_t)idx % sizeof(uint32_t) != 0)
        idx = (uint32_t *)(void *)(out + X + (sizeof(uint32_t) - (uintptr_t)(out + X) % sizeof(uint32_t)));

    wa_surt_url u;
    if (wa__parse(url, n, out + O, &u) != 0) return WA_SURT_FAIL;
    int dns = u.scheme_len == 3 && memcmp(u.s, "dns", 3) == 0;

    /* host (GoogleURLCanonicalizer, then IA lower and www-massage) */
    size_t w = 0, hl = 0;
    if (u.host != NULL && u.host_len > 0) {
        unsigned char *h = out;
        memcpy(h, u.host, u.host_len);
        hl = u.host_len;
        if (u.host_lower_upto_pct)
            for (size_t i = 0; i < hl && h[i] != '%'; i++) h[i] = wa__lower(h[i]);
        hl = wa__unescape_rep(h, hl);
        int ascii = 1;
        for (size_t i = 0; i < hl; i++) if (h[i] >= 0x80) { ascii = 0; break; }
        if (!ascii) {
            if (!have_idna) { *outlen = hl; return WA_SURT_NEED_IDNA; }
            if (idna_len > 0) memcpy(h, idna_host, idna_len);
            hl = idna_len;
        }
        size_t k = 0;                           /* replace(b'..', b'.') */
        for (size_t i = 0; i < hl; i++) {
            h[k++] = h[i];
            if (h[i] == '.' && i + 1 < hl && h[i + 1] == '.') i++;
        }
        hl = k;
        size_t a = 0;                           /* strip(b'.') */
        while (a < hl && h[a] == '.') a++;
        while (hl > a && h[hl - 1] == '.') hl--;
        if (a) { memmove(h, h + a, hl - a); hl -= a; }
        size_t ipn;
        int ip = wa__ip_host(h, hl, &ipn);
        if (ip < 0) return WA_SURT_FAIL;
        if (ip) {
            hl = ipn;
        } else if (opts & WA_SURT_OPT_HOST_LOWERCASE) {
            hl = wa__escape_lower(h, hl);
        } else {                                /* escapeOnce(host.lower()) and no IA lower() */
            for (size_t i = 0; i < hl; i++) h[i] = wa__lower(h[i]);
            hl = wa__escape_once(h, hl);
        }
    }
    int google_host = hl > 0;                   /* decides normalizePath */
    if (hl > 0 && (opts & WA_SURT_OPT_HOST_MASSAGE) && !dns) {
        /* massageHost: strip a leading www\d*\. */
        if (hl >= 4 && out[0] == 'w' && out[1] == 'w' && out[2] == 'w') {
            size_t i = 3;
            while (i < hl && wa__isdigit(out[i])) i++;
            if (i < hl && out[i] == '.') { memmove(out, out + i + 1, hl - i - 1); hl -= i + 1; }
        }
    }
    if (hl > 0) {
        if ((opts & WA_SURT_OPT_SURT)
            && ((opts & WA_SURT_OPT_REVERSE_IPADDR) || !wa__dotted_quad_shape(out, hl)))
            wa__reverse_labels(out, hl);
        w = hl;
        long port = u.port;
        if (port >= 0 && (opts & WA_SURT_OPT_PORT_STRIP_DEFAULT)) {
            unsigned char lower_scheme[6];
            size_t sl = u.scheme_len;
            if (sl == 4 || sl == 5) {
                for (size_t i = 0; i < sl; i++) lower_scheme[i] = wa__lower(u.s[i]);
                if (sl == 4 && memcmp(lower_scheme, "http", 4) == 0 && port == 80) port = -1;
                if (sl == 5 && memcmp(lower_scheme, "https", 5) == 0 && port == 443) port = -1;
            }
        }
        if (port >= 0) {
            char d[8];
            int nd = 0;
            do { d[nd++] = (char)('0' + port % 10); port /= 10; } while (port);
            out[w++] = ':';
            while (nd) out[w++] = (unsigned char)d[--nd];
        }
        if (opts & WA_SURT_OPT_SURT) {
            if (opts & WA_SURT_OPT_TRAILING_COMMA) out[w++] = ',';
            out[w++] = ')';
        }
    } else {
        memcpy(out, u.s, u.scheme_len);
        w = u.scheme_len;
        out[w++] = ':';
    }

    /* path: Google's unescape, normalizePath and escapeOnce, then IA's steps in its order */
    int has_path = 0;
    if (u.path != NULL || google_host) {
        unsigned char *p = out + w;
        size_t pl = u.path_len;
        if (u.path != NULL) memcpy(p, u.path, pl);
        pl = wa__unescape_rep(p, pl);
        if (google_host) pl = wa__normalize_path(p, pl);
        pl = (opts & WA_SURT_OPT_PATH_LOWERCASE) ? wa__escape_lower(p, pl) : wa__escape_once(p, pl);
        if ((opts & WA_SURT_OPT_PATH_STRIP_EMPTY) && pl == 1 && p[0] == '/') {
            pl = 0;
        } else if (pl > 0) {
            if (opts & WA_SURT_OPT_PATH_STRIP_SESSION_ID) {
                pl = wa__strip_path_sid(p, pl, 1);
                pl = wa__strip_path_sid(p, pl, 2);
            }
            if ((opts & WA_SURT_OPT_PATH_STRIP_EMPTY) && pl == 1 && p[0] == '/') pl = 0;
            if ((opts & WA_SURT_OPT_PATH_STRIP_TRAILING_SLASH_UNLESS_EMPTY) && pl > 1 && p[pl - 1] == '/')
                pl--;
        }
        w += pl;
        has_path = pl > 0;
    }

    /* query.  IA strips session ids before it lowercases; its patterns ignore
     * case, so doing it after (as here, on the escaped text) is the same. */
    if (u.query != NULL) {
        unsigned char *q = out + T;
        size_t ql = u.query_len;
        memcpy(q, u.query, ql);
        ql = wa__unescape_rep(q, ql);
        ql = (opts & WA_SURT_OPT_QUERY_LOWERCASE) ? wa__escape_lower(q, ql) : wa__escape_once(q, ql);
        if (opts & WA_SURT_OPT_QUERY_STRIP_SESSION_ID) {
            /* every pattern contains "id"; 0x20 folds 'I' and 'D' when the query kept its case */
            unsigned fold = (opts & WA_SURT_OPT_QUERY_LOWERCASE) ? 0u : 0x20u;
            int maybe_sid = 0;
            for (size_t i = 0; i + 1 < ql; i++)
                if ((q[i] | fold) == 'i' && (q[i + 1] | fold) == 'd') { maybe_sid = 1; break; }
            if (maybe_sid)
                for (int kind = 1; kind <= 5; kind++) ql = wa__strip_query_sid(q, ql, kind);
        }
        if (ql > 0 || !(opts & WA_SURT_OPT_QUERY_STRIP_EMPTY)) {
            if (!has_path) out[w++] = '/';      /* a query needs a path */
            out[w++] = '?';
            if (ql > 1 && (opts & WA_SURT_OPT_QUERY_ALPHA_REORDER)) wa__reorder_query(q, ql, out + w, idx);
            else if (ql > 0) memcpy(out + w, q, ql);
            w += ql;
        }
    } else if (!(opts & WA_SURT_OPT_QUERY_STRIP_EMPTY) && u.s[u.n - 1] == '?') {
        out[w++] = '?';                         /* handyurl's last_delimiter: "x/?" keeps its '?' */
    }

    /* with_scheme: "scheme:" then, before a host, "//" (not for dns) and "(" (surt) */
    if ((opts & WA_SURT_OPT_WITH_SCHEME) && hl > 0) {
        size_t sl = u.scheme_len;
        size_t pre = sl + 1 + (dns ? 0 : 2) + ((opts & WA_SURT_OPT_SURT) ? 1 : 0);
        memmove(out + pre, out, w);             /* u.s lies at O and beyond, past the key */
        memcpy(out, u.s, sl);
        size_t k = sl;
        out[k++] = ':';
        if (!dns) { out[k++] = '/'; out[k++] = '/'; }
        if (opts & WA_SURT_OPT_SURT) out[k++] = '(';
        w += pre;
    }
    *outlen = w;
    return WA_OK;
}

static WA__NOINLINE int wa_surt_key(const unsigned char *url, size_t n, unsigned char *out, size_t cap,
                                    size_t *outlen, const unsigned char *idna_host, size_t idna_len,
                                    int have_idna)
{
    return wa__surt_key(url, n, out, cap, outlen, idna_host, idna_len, have_idna, WA_SURT_OPT_DEFAULT);
}

static WA__NOINLINE int wa__surt_key_other(const unsigned char *url, size_t n, unsigned char *out,
                                           size_t cap, size_t *outlen, const unsigned char *idna_host,
                                           size_t idna_len, int have_idna, unsigned opts)
{
    return wa__surt_key(url, n, out, cap, outlen, idna_host, idna_len, have_idna, opts);
}

static inline int wa_surt_key_opts(const unsigned char *url, size_t n, unsigned char *out, size_t cap,
                                   size_t *outlen, const unsigned char *idna_host, size_t idna_len,
                                   int have_idna, unsigned opts)
{
    opts &= WA_SURT_OPT_ALL;
    if (opts == WA_SURT_OPT_DEFAULT)
        return wa_surt_key(url, n, out, cap, outlen, idna_host, idna_len, have_idna);
    return wa__surt_key_other(url, n, out, cap, outlen, idna_host, idna_len, have_idna, opts);
}

#endif /* WA_SURT_H */
