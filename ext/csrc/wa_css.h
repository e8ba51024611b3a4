/* wa_css.h -- find the URLs of a style sheet, as a browser's CSS tokenizer sees them.
 *
 * A URL is: the value of a url() token (unquoted, "quoted" or 'quoted'), the first string or
 * url() of an @import, and a string directly inside image-set() or -webkit-image-set(). What
 * is not one: text in comments and other strings, `url (x)` with a space (a browser loads
 * nothing), a bad url() (a quote, '(' or control inside, or a space before more text), the
 * URL of @namespace (a name, not a resource: rewriting it would change the namespace).
 *
 * wa_css_scan() reads p[from..n) and reports every URL it finds complete; it returns where it
 * stopped: n, or (not final) the start of a construct that the end of the input cuts (a comment,
 * a string, a url(), a word), from which the caller scans again once it has more bytes. `skip`
 * says how far into that construct a later scan may start looking for its end, so that a long
 * string or comment fed in small pieces costs linear time. With final set, the end of the input
 * ends every construct, as the end of a style sheet does (an unterminated url() or string is
 * still a URL: a browser loads it). It never reads outside p[0..n).
 */
#ifndef WA_CSS_H
#define WA_CSS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wa_urlfast.h"

typedef struct {
    int depth;          /* open ( and functions */
    int imgset;         /* the depth of the image-set() being read, 0 when none */
    int at;             /* 0, or the at-rule whose prelude is being read: 1 @import, 2 @namespace, 3 done */
    size_t skip;        /* see above: into a comment, string or url() */
    size_t wskip;       /* the same into a word (an identifier, @keyword, #hash) */
} wa_css_ctx;

enum { WA_CSS_UNQ = 0, WA_CSS_DQ = '"', WA_CSS_SQ = '\'' };

typedef struct {
    size_t s, e;        /* the URL's bytes (inside the quotes) */
    uint8_t quote;      /* WA_CSS_UNQ, WA_CSS_DQ, WA_CSS_SQ */
    uint8_t slot;       /* WA_M_CS (@import) or WA_M_OE */
    uint8_t esc;        /* holds a backslash: only Python unescapes it */
    uint8_t fn;         /* inside url() (else a bare string of @import or image-set()) */
} wa_css_hit;

typedef struct { wa_css_hit *v; size_t n, cap; } wa_css_hits;

static int wa_css_hit_add(wa_css_hits *h, size_t s, size_t e, uint8_t q, uint8_t slot, uint8_t esc, uint8_t fn) {
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 16;
        wa_css_hit *v = (wa_css_hit *)realloc(h->v, cap * sizeof(*v));
        if (!v) return WA_E_NOMEM;
        h->v = v;
        h->cap = cap;
    }
    h->v[h->n].s = s;
    h->v[h->n].e = e;
    h->v[h->n].quote = q;
    h->v[h->n].slot = slot;
    h->v[h->n].esc = esc;
    h->v[h->n].fn = fn;
    h->n++;
    return WA_OK;
}

static inline int wa_css_ws(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
static inline int wa_css_nl(uint8_t c) { return c == '\n' || c == '\r' || c == '\f'; }
static inline int wa_css_hex(uint8_t c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static inline int wa_css_name(uint8_t c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'
           || c >= 0x80;
}
static inline int wa_css_nonprint(uint8_t c) { return c <= 0x08 || c == 0x0b || (c >= 0x0e && c <= 0x1f) || c == 0x7f; }

/* The end of the escape at p[i] == '\\' (not before a newline): i + 2, or past its hex digits and
 * one white space; n when the input ends inside it (then more input may extend it). */
static size_t wa_css_esc_end(const uint8_t *p, size_t i, size_t n) {
    size_t j = i + 1, k;
    if (j >= n) return n;
    if (!wa_css_hex(p[j])) return j + 1;
    for (k = 0; k < 6 && j < n && wa_css_hex(p[j]); k++) j++;
    if (j < n && k < 6 && wa_css_hex(p[j])) return n;
    if (j >= n) return n;
    if (p[j] == '\r' && j + 1 < n && p[j + 1] == '\n') return j + 2;
    if (p[j] == '\r' && j + 1 >= n) return n;
    if (wa_css_ws(p[j])) return j + 1;
    return j;
}

/* A word (name characters and escapes) from p[i]; its end, or n when the input ends in it. */
static size_t wa_css_word_end(const uint8_t *p, size_t i, size_t n) {
    while (i < n) {
        if (wa_css_name(p[i])) i++;
        else if (p[i] == '\\' && i + 1 < n && !wa_css_nl(p[i + 1])) i = wa_css_esc_end(p, i, n);
        else if (p[i] == '\\' && i + 1 >= n) return n;
        else break;
    }
    return i;
}

/* Where a later scan of the word from s, cut by the end of the input at n, may start again: 16
 * bytes back (longer than any escape), when none of them is a backslash; else at its start. */
static size_t wa_css_word_resume(const uint8_t *p, size_t s, size_t n) {
    size_t k;
    if (n < s + 32) return 0;
    for (k = n - 16; k < n; k++)
        if (p[k] == '\\') return 0;
    return n - 16 - s;
}

/* The word p[s..e) is `w` (lowercase ASCII) compared without case, escapes decoded. */
static int wa_css_word_is(const uint8_t *p, size_t s, size_t e, const char *w) {
    size_t k = 0;
    while (s < e) {
        uint32_t c;
        if (p[s] == '\\') {
            size_t j = s + 1, d = 0;
            if (j < e && wa_css_hex(p[j])) {
                c = 0;
                while (j < e && d < 6 && wa_css_hex(p[j])) {
                    c = c * 16 + (uint32_t)(p[j] <= '9' ? p[j] - '0' : (p[j] | 32) - 'a' + 10);
                    j++;
                    d++;
                }
                s = wa_css_esc_end(p, s, e);
            } else {
                c = j < e ? p[j] : 0;
                s = j + 1;
            }
        } else {
            c = p[s++];
        }
        if (c >= 'A' && c <= 'Z') c += 32;
        if (!w[k] || (uint32_t)(uint8_t)w[k] != c) return 0;
        k++;
    }
    return w[k] == 0;
}

/* A string from p[i] (the quote): the index of its closing quote, or of the newline that breaks
 * it (*bad = 1), or n (the input ends in it; *esc_end says whether it ended in an escape). */
static size_t wa_css_string_end(const uint8_t *p, size_t i, size_t n, int *bad, int *esc, size_t *resume) {
    uint8_t q = p[i];
    size_t j = i + 1 + *resume;
    *bad = 0;
    for (;;) {
        const uint8_t *hit;
        size_t k;
        if (j >= n) {
            *resume = n - i - 1;
            return n;
        }
        hit = NULL;
        for (k = j; k < n; k++) {
            uint8_t c = p[k];
            if (c == q || c == '\\' || c == '\n' || c == '\r' || c == '\f') {
                hit = p + k;
                break;
            }
        }
        if (!hit) {
            *resume = n - i - 1;
            return n;
        }
        k = (size_t)(hit - p);
        if (*hit == q) return k;
        if (*hit != '\\') {
            *bad = 1;
            return k;
        }
        *esc = 1;
        if (k + 1 >= n) {
            *resume = k - i - 1;
            return n;
        }
        if (p[k + 1] == '\r' && k + 2 < n && p[k + 2] == '\n') j = k + 3;
        else if (p[k + 1] == '\r' && k + 2 >= n) {
            *resume = k - i - 1;
            return n;
        } else j = k + 2;
    }
}

/* An unquoted url( body from p[i] (after the white space that follows "url("): *e is the end of
 * the URL, the return value the index of the ')' that closes it (n at the end of the input);
 * *bad = 1 when it is a bad url (the return value is then where its remnants end). */
static size_t wa_css_url_end(const uint8_t *p, size_t i, size_t n, size_t *e, int *bad, int *esc, int final,
                             size_t *resume) {
    size_t j = *resume > i ? *resume : i;   /* bytes before *resume are plain URL characters */
    *bad = 0;
    *resume = i;
    while (j < n) {
        uint8_t c = p[j];
        if (c == ')') {
            *e = j;
            return j;
        }
        if (wa_css_ws(c)) {
            size_t k = j;
            while (k < n && wa_css_ws(p[k])) k++;
            if (k >= n) {
                *e = j;
                return final ? n : (size_t)-1;
            }
            if (p[k] == ')') {
                *e = j;
                return k;
            }
            *bad = 1;
            j = k;
            break;
        }
        if (c == '"' || c == '\'' || c == '(' || wa_css_nonprint(c)) {
            *bad = 1;
            break;
        }
        if (c == '\\') {
            if (j + 1 >= n) {
                *resume = j;
                return final ? (*e = n, n) : (size_t)-1;
            }
            if (wa_css_nl(p[j + 1])) {
                *bad = 1;
                break;
            }
            *esc = 1;
            {
                size_t k = wa_css_esc_end(p, j, n);
                if (k >= n && !final) {
                    *resume = j;
                    return (size_t)-1;
                }
                j = k;
            }
            continue;
        }
        j++;
    }
    if (!*bad) {
        *e = j;
        *resume = j;
        return final ? n : (size_t)-1;
    }
    while (j < n) {              /* the remnants of a bad url */
        if (p[j] == ')') return j;
        if (p[j] == '\\' && j + 1 < n && !wa_css_nl(p[j + 1])) {
            j = wa_css_esc_end(p, j, n);
            continue;
        }
        if (p[j] == '\\' && j + 1 >= n && !final) return (size_t)-1;
        j++;
    }
    return final ? n : (size_t)-1;
}

static int wa_css_found(wa_css_ctx *c, wa_css_hits *h, size_t s, size_t e, uint8_t q, int esc, int fn) {
    uint8_t slot = WA_M_OE;
    if (c->at == 2) return WA_OK;
    if (c->at == 1) {
        slot = WA_M_CS;
        c->at = 3;
    }
    return wa_css_hit_add(h, s, e, q, slot, (uint8_t)esc, (uint8_t)fn);
}

/* Scan p[from..n); see the top of the file. Returns the stop position, or (size_t)-1 for
 * WA_E_NOMEM. */
static size_t wa_css_scan(wa_css_ctx *c, const uint8_t *p, size_t from, size_t n, int final, wa_css_hits *h) {
    size_t i = from;
    while (i < n) {
        uint8_t ch = p[i];
        if (ch == '/') {
            if (i + 1 >= n) {
                if (final) return n;
                c->skip = 0;
                return i;
            }
            if (p[i + 1] == '*') {
                size_t j = i + 2 + (c->skip > 0 ? c->skip - 1 : 0), k;
                int done = 0;
                for (k = j; k + 1 < n; k++) {
                    if (p[k] == '*' && p[k + 1] == '/') {
                        done = 1;
                        break;
                    }
                }
                if (!done) {
                    if (final) return n;
                    c->skip = n - i - 2;
                    return i;
                }
                c->skip = 0;
                i = k + 2;
                continue;
            }
            i++;
            continue;
        }
        if (ch == '"' || ch == '\'') {
            int bad, esc = 0;
            size_t res = c->skip, k = wa_css_string_end(p, i, n, &bad, &esc, &res);
            if (k >= n) {
                if (!final) {
                    c->skip = res;
                    return i;
                }
                bad = 0;
            }
            c->skip = 0;
            if (!bad && (c->at == 1 || c->at == 2 || (c->imgset && c->depth == c->imgset))) {
                if (wa_css_found(c, h, i + 1, k, ch, esc, 0)) return (size_t)-1;
            } else if (c->at == 1) {
                c->at = 3;
            }
            i = k < n ? k + 1 : n;
            continue;
        }
        if (ch == '(') {
            c->depth++;
            i++;
            continue;
        }
        if (ch == ')') {
            if (c->imgset && c->depth == c->imgset) c->imgset = 0;
            if (c->depth > 0) c->depth--;
            i++;
            continue;
        }
        if (ch == ';' || ch == '{' || ch == '}') {
            c->at = 0;
            i++;
            continue;
        }
        if (ch == '@' || ch == '#') {
            size_t e = wa_css_word_end(p, i + 1 + c->wskip, n);
            if (e >= n && !final) {
                c->wskip = wa_css_word_resume(p, i + 1, n);
                return i;
            }
            c->wskip = 0;
            if (ch == '@') {
                c->at = wa_css_word_is(p, i + 1, e, "import") ? 1 : wa_css_word_is(p, i + 1, e, "namespace") ? 2 : 0;
            }
            i = e > i + 1 ? e : i + 1;
            continue;
        }
        if (wa_css_name(ch) || (ch == '\\' && i + 1 < n && !wa_css_nl(p[i + 1])) || (ch == '\\' && i + 1 >= n)) {
            size_t w0 = i, e, j;
            e = wa_css_word_end(p, i + c->wskip, n);
            if (e >= n) {
                if (!final) {
                    c->wskip = wa_css_word_resume(p, i, n);
                    return i;
                }
                i = n;
                continue;
            }
            c->wskip = 0;
            if (e == i) {        /* a lone backslash before a newline */
                i++;
                continue;
            }
            if (p[e] != '(') {
                if (c->at == 1) c->at = 3;
                i = e;
                continue;
            }
            if (!wa_css_word_is(p, i, e, "url")) {
                c->depth++;
                if (wa_css_word_is(p, i, e, "image-set") || wa_css_word_is(p, i, e, "-webkit-image-set"))
                    c->imgset = c->depth;
                if (c->at == 1) c->at = 3;
                i = e + 1;
                continue;
            }
            j = e + 1;
            while (j < n && wa_css_ws(p[j])) j++;
            if (j >= n) {
                if (!final) return i;
                i = n;
                continue;
            }
            if (p[j] == '"' || p[j] == '\'') {      /* url("...") : a function holding a string */
                c->depth++;
                i = j;
                {
                    int bad, esc = 0;
                    size_t off = j + 1 - w0, res = c->skip > off ? c->skip - off : 0;
                    size_t k = wa_css_string_end(p, j, n, &bad, &esc, &res);
                    if (k >= n) {
                        if (!final) {
                            c->depth--;
                            c->skip = off + res;
                            return w0;
                        }
                        bad = 0;
                    }
                    c->skip = 0;
                    if (!bad && wa_css_found(c, h, j + 1, k, p[j], esc, 1)) return (size_t)-1;
                    i = k < n ? k + 1 : n;
                }
                continue;
            } else {
                size_t ue = 0, k, res = c->skip ? w0 + c->skip : 0;
                int bad, esc = 0;
                k = wa_css_url_end(p, j, n, &ue, &bad, &esc, final, &res);
                if (k == (size_t)-1) {
                    c->skip = res > w0 ? res - w0 : 0;
                    return w0;
                }
                c->skip = 0;
                if (!bad && ue > j && wa_css_found(c, h, j, ue, WA_CSS_UNQ, esc, 1)) return (size_t)-1;
                i = k < n ? k + 1 : n;
            }
            continue;
        }
        i++;
    }
    return n;
}

#endif
