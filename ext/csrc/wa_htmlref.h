/* wa_htmlref.h -- what an HTML attribute value means, byte-level: character references decoded
 * as the HTML standard decodes them in an attribute value (with a map back to the raw bytes),
 * the candidates of a srcset, the URL of a refresh, and the tag and attribute names the
 * rewriting kernel knows.
 *
 * The decoder follows the standard's tokenizer: numeric references (decimal or hex, ';'
 * optional; 0, surrogates and values past U+10FFFF become U+FFFD, 0x80-0x9F the characters
 * windows-1252 has there), named references by the longest name of the table (wa_entities.h),
 * the legacy names without ';' too, except when the next character is '=' or an ASCII
 * alphanumeric (the attribute-value rule: `?a=1&copy=2` keeps its `&copy`). Decoded characters
 * are written as UTF-8, whatever the document's encoding: a URL holding one is left to Python,
 * which knows the encoding. warchive.replay.htmltext.unescape_attr is the same decoder in
 * Python; the tests compare them.
 */
#ifndef WA_HTMLREF_H
#define WA_HTMLREF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wa_entities.h"
#include "wa_urlfast.h"

/* --------------------------------------------------------------------------- character classes */

static inline int wa_html_ws(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
static inline int wa_alnum(uint8_t c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
static inline int wa_c0_or_space(uint8_t c) { return c <= 0x20; }

/* --------------------------------------------------------------------------- offsets map */

typedef struct { uint32_t *v; size_t n, cap; } wa_map;

static int wa_map_push(wa_map *m, uint32_t x) {
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 256;
        uint32_t *v = (uint32_t *)realloc(m->v, cap * sizeof(uint32_t));
        if (!v) return WA_E_NOMEM;
        m->v = v;
        m->cap = cap;
    }
    m->v[m->n++] = x;
    return WA_OK;
}

/* --------------------------------------------------------------------------- character references */

static const uint16_t wa_c1_table[32] = {   /* 0x80-0x9F as windows-1252 has them (0: kept as is) */
    0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
    0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178,
};

static size_t wa_utf8(uint32_t cp, uint8_t *o) {
    if (cp < 0x80) { o[0] = (uint8_t)cp; return 1; }
    if (cp < 0x800) { o[0] = (uint8_t)(0xC0 | (cp >> 6)); o[1] = (uint8_t)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        o[0] = (uint8_t)(0xE0 | (cp >> 12)); o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (uint8_t)(0x80 | (cp & 0x3F)); return 3;
    }
    o[0] = (uint8_t)(0xF0 | (cp >> 18)); o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (uint8_t)(0x80 | (cp & 0x3F)); return 4;
}

static int wa_ent_cmp(const uint8_t *s, size_t n, const char *name, size_t nn) {
    size_t m = n < nn ? n : nn;
    int c = memcmp(s, name, m);
    if (c) return c;
    return n < nn ? -1 : n > nn ? 1 : 0;
}

/* The table entry named s[0..n) (without ';'), or NULL. */
static const wa_ent *wa_ent_find(const uint8_t *s, size_t n) {
    size_t lo = 0, hi = WA_ENT_COUNT;
    if (n > WA_ENT_MAX_NAME) return NULL;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = wa_ent_cmp(s, n, wa_ents[mid].name, wa_ents[mid].nlen);
        if (c == 0) return &wa_ents[mid];
        if (c < 0) hi = mid; else lo = mid + 1;
    }
    return NULL;
}

static int wa_is_legacy(const uint8_t *s, size_t n) {
    size_t lo = 0, hi = WA_ENT_LEGACY_COUNT;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = wa_ent_cmp(s, n, wa_ent_legacy[mid], strlen(wa_ent_legacy[mid]));
        if (c == 0) return 1;
        if (c < 0) hi = mid; else lo = mid + 1;
    }
    return 0;
}

/* The character reference at s[j] == '&' of an attribute value s[0..n): its length in s (0: the
 * '&' is literal) and its UTF-8 expansion in o (up to 8 bytes), length *on. */
static size_t wa_charref(const uint8_t *s, size_t j, size_t n, uint8_t *o, size_t *on) {
    size_t k = j + 1;
    *on = 0;
    if (k < n && s[k] == '#') {
        int hex = 0;
        uint32_t cp = 0;
        size_t d;
        k++;
        if (k < n && (s[k] == 'x' || s[k] == 'X')) { hex = 1; k++; }
        d = k;
        while (k < n) {
            uint8_t c = s[k];
            uint32_t v;
            if (c >= '0' && c <= '9') v = (uint32_t)(c - '0');
            else if (hex && c >= 'a' && c <= 'f') v = (uint32_t)(c - 'a' + 10);
            else if (hex && c >= 'A' && c <= 'F') v = (uint32_t)(c - 'A' + 10);
            else break;
            if (cp <= 0x10FFFF) cp = cp * (hex ? 16 : 10) + v;
            k++;
        }
        if (k == d) return 0;
        if (k < n && s[k] == ';') k++;
        if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
        else if (cp >= 0x80 && cp <= 0x9F && wa_c1_table[cp - 0x80]) cp = wa_c1_table[cp - 0x80];
        *on = wa_utf8(cp, o);
        return k - j;
    }
    {
        size_t e = k, L;
        const wa_ent *ent;
        while (e < n && wa_alnum(s[e])) e++;
        if (e == k) return 0;
        if (e < n && s[e] == ';' && (ent = wa_ent_find(s + k, e - k)) != NULL) {
            memcpy(o, ent->val, ent->vlen);
            *on = ent->vlen;
            return e + 1 - j;
        }
        for (L = (e - k < WA_ENT_MAX_LEGACY ? e - k : WA_ENT_MAX_LEGACY); L >= 2; L--) {
            if (wa_is_legacy(s + k, L)) {
                size_t nx = k + L;
                if (nx < n && (s[nx] == '=' || wa_alnum(s[nx]))) return 0;
                ent = wa_ent_find(s + k, L);
                if (!ent) return 0;
                memcpy(o, ent->val, ent->vlen);
                *on = ent->vlen;
                return 1 + L;
            }
        }
        return 0;
    }
}

/* Decode the attribute value s[0..n) into out; map gets, for each byte of out, the offset in s of
 * the character it comes from, then n. Returns WA_OK or WA_E_NOMEM. */
static int wa_attr_decode(const uint8_t *s, size_t n, wa_bytes *out, wa_map *map) {
    size_t i = 0;
    out->len = 0;
    map->n = 0;
    while (i < n) {
        const uint8_t *a = (const uint8_t *)memchr(s + i, '&', n - i);
        size_t j = a ? (size_t)(a - s) : n, k, len, on;
        uint8_t o[8];
        if (wa_bytes_put(out, s + i, j - i)) return WA_E_NOMEM;
        for (k = i; k < j; k++)
            if (wa_map_push(map, (uint32_t)k)) return WA_E_NOMEM;
        if (!a) break;
        len = wa_charref(s, j, n, o, &on);
        if (len == 0) {
            if (wa_bytes_byte(out, '&') || wa_map_push(map, (uint32_t)j)) return WA_E_NOMEM;
            i = j + 1;
            continue;
        }
        if (wa_bytes_put(out, o, on)) return WA_E_NOMEM;
        for (k = 0; k < on; k++)
            if (wa_map_push(map, (uint32_t)j)) return WA_E_NOMEM;
        i = j + len;
    }
    return wa_map_push(map, (uint32_t)n);
}

/* --------------------------------------------------------------------------- srcset */

/* The candidates of a srcset (the HTML standard's parsing): each URL's span [s, e) is passed to
 * fn. URLs may hold commas; a candidate's URL ends at white space, and one that ends in commas
 * loses them; its descriptors run to the next comma outside parentheses. Returns fn's first
 * non-zero status. */
typedef int (*wa_span_fn)(void *ctx, size_t s, size_t e);

static int wa_srcset(const uint8_t *v, size_t n, wa_span_fn fn, void *ctx) {
    size_t i = 0;
    while (i < n) {
        size_t j, e;
        int rc;
        while (i < n && (wa_html_ws(v[i]) || v[i] == ',')) i++;
        if (i >= n) break;
        j = i;
        while (j < n && !wa_html_ws(v[j])) j++;
        e = j;
        if (v[e - 1] == ',') {
            while (e > i && v[e - 1] == ',') e--;
            if (e > i && (rc = fn(ctx, i, e)) != 0) return rc;
            i = j;
            continue;
        }
        if ((rc = fn(ctx, i, e)) != 0) return rc;
        {
            int depth = 0;
            while (j < n) {
                uint8_t c = v[j];
                if (c == '(') depth++;
                else if (c == ')') { if (depth > 0) depth--; }
                else if (c == ',' && depth == 0) break;
                j++;
            }
        }
        i = j + 1;
    }
    return 0;
}

/* --------------------------------------------------------------------------- refresh */

/* The URL of a <meta http-equiv=refresh content> as the HTML standard reads it ("shared
 * declarative refresh steps"): [*s, *e), or 0 when it names none (then the page itself). */
static int wa_refresh_url(const uint8_t *v, size_t n, size_t *s, size_t *e) {
    size_t i = 0, t;
    uint8_t quote = 0;
    while (i < n && wa_html_ws(v[i])) i++;
    t = i;
    while (i < n && v[i] >= '0' && v[i] <= '9') i++;
    if (i == t && !(i < n && v[i] == '.')) return 0;
    while (i < n && ((v[i] >= '0' && v[i] <= '9') || v[i] == '.')) i++;
    if (i < n && !(v[i] == ';' || v[i] == ',' || wa_html_ws(v[i]))) return 0;
    while (i < n && wa_html_ws(v[i])) i++;
    if (i < n && (v[i] == ';' || v[i] == ',')) i++;
    while (i < n && wa_html_ws(v[i])) i++;
    if (i >= n) return 0;
    if (v[i] == 'u' || v[i] == 'U') {
        i++;
        if (i < n && (v[i] == 'r' || v[i] == 'R')) {
            i++;
            if (i < n && (v[i] == 'l' || v[i] == 'L')) {
                i++;
                while (i < n && wa_html_ws(v[i])) i++;
                if (i < n && v[i] == '=') {
                    i++;
                    while (i < n && wa_html_ws(v[i])) i++;
                }
            }
        }
    }
    if (i < n && (v[i] == '\'' || v[i] == '"')) quote = v[i++];
    *s = i;
    *e = n;
    if (quote) {
        const uint8_t *q = (const uint8_t *)memchr(v + i, quote, n - i);
        if (q) *e = (size_t)(q - v);
    }
    return 1;
}

/* Python's str.strip() and str.split() white space, in ASCII (what capture.links reads with). */
static inline int wa_py_ws(uint8_t c) { return c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f); }

/* capture.links' reading of a refresh (its regular expression
 * ^\s*[0-9.]*\s*[;,]?\s*(?:url\s*=\s*)?(['"]?)(.*)$ and the strip and quote cut that follow):
 * [*s, *e), or 0 for none. */
static int wa_links_refresh_url(const uint8_t *v, size_t n, size_t *s, size_t *e) {
    size_t i = 0, j;
    uint8_t quote = 0;
    while (i < n && wa_py_ws(v[i])) i++;
    while (i < n && ((v[i] >= '0' && v[i] <= '9') || v[i] == '.')) i++;
    while (i < n && wa_py_ws(v[i])) i++;
    if (i < n && (v[i] == ';' || v[i] == ',')) i++;
    while (i < n && wa_py_ws(v[i])) i++;
    j = i;
    if (j + 3 <= n && wa_starts_ci(v + j, n - j, "url")) {
        size_t k = j + 3;
        while (k < n && wa_py_ws(v[k])) k++;
        if (k < n && v[k] == '=') {
            k++;
            while (k < n && wa_py_ws(v[k])) k++;
            i = k;
        }
    }
    if (i < n && (v[i] == '\'' || v[i] == '"')) quote = v[i++];
    while (i < n && wa_py_ws(v[i])) i++;
    j = n;
    while (j > i && wa_py_ws(v[j - 1])) j--;
    if (quote) {
        const uint8_t *q = (const uint8_t *)memchr(v + i, quote, j - i);
        if (q) j = (size_t)(q - v);
    }
    if (j <= i) return 0;
    *s = i;
    *e = j;
    return 1;
}

/* --------------------------------------------------------------------------- names */

enum {
    WA_T_OTHER = 0, WA_T_A, WA_T_APPLET, WA_T_AREA, WA_T_AUDIO, WA_T_BASE, WA_T_BLOCKQUOTE, WA_T_BODY,
    WA_T_BUTTON, WA_T_COMMAND, WA_T_DEL, WA_T_EMBED, WA_T_FORM, WA_T_FRAME, WA_T_IFRAME, WA_T_IMAGE,
    WA_T_IMG, WA_T_INPUT, WA_T_INS, WA_T_LINK, WA_T_META, WA_T_OBJECT, WA_T_PARAM, WA_T_Q, WA_T_SCRIPT,
    WA_T_SOURCE, WA_T_TRACK, WA_T_VIDEO, WA_T_HTML, WA_T_HEAD, WA_T_STYLE, WA_T_TITLE, WA_T_TEXTAREA,
    WA_T_XMP, WA_T_NOEMBED, WA_T_NOFRAMES, WA_T_PLAINTEXT, WA_T_TABLE, WA_T_TD, WA_T_TH, WA_T_COUNT
};

static const char *const wa_tag_names[WA_T_COUNT] = {
    "", "a", "applet", "area", "audio", "base", "blockquote", "body", "button", "command", "del", "embed",
    "form", "frame", "iframe", "image", "img", "input", "ins", "link", "meta", "object", "param", "q", "script",
    "source", "track", "video", "html", "head", "style", "title", "textarea", "xmp", "noembed", "noframes",
    "plaintext", "table", "td", "th",
};

enum {
    WA_A_OTHER = 0, WA_A_HREF, WA_A_SRC, WA_A_SRCSET, WA_A_IMAGESRCSET, WA_A_ACTION, WA_A_FORMACTION,
    WA_A_DATA, WA_A_CODEBASE, WA_A_ARCHIVE, WA_A_POSTER, WA_A_BACKGROUND, WA_A_CITE, WA_A_LONGDESC, WA_A_PING,
    WA_A_XLINK_HREF, WA_A_CONTENT, WA_A_HTTP_EQUIV, WA_A_NAME, WA_A_REL, WA_A_AS, WA_A_STYLE, WA_A_INTEGRITY,
    WA_A_CROSSORIGIN, WA_A_ICON, WA_A_VALUE, WA_A_MANIFEST, WA_A_METHOD, WA_A_LOWSRC, WA_A_DATA_SRC,
    WA_A_DATA_SRCSET, WA_A_DATA_ORIGINAL, WA_A_DATA_LAZY_SRC, WA_A_TYPE, WA_A_COUNT
};

static const char *const wa_attr_names[WA_A_COUNT] = {
    "", "href", "src", "srcset", "imagesrcset", "action", "formaction", "data", "codebase", "archive", "poster",
    "background", "cite", "longdesc", "ping", "xlink:href", "content", "http-equiv", "name", "rel", "as", "style",
    "integrity", "crossorigin", "icon", "value", "manifest", "method", "lowsrc", "data-src", "data-srcset",
    "data-original", "data-lazy-src", "type",
};

/* Name lookup: the ids of each table by first letter (built once: wa_names_init). */
#define WA_NAME_BUCKET 8
typedef struct {
    uint8_t ids[26][WA_NAME_BUCKET];
    uint8_t cnt[26];
    uint32_t lens[26];      /* bit L: a name of length L starts with this letter */
    uint8_t len[64];
} wa_name_index;

static wa_name_index wa_tag_index, wa_attr_index;
static int wa_names_ready;

static void wa_name_index_build(wa_name_index *x, const char *const *names, int count) {
    int k;
    memset(x, 0, sizeof(*x));
    for (k = 1; k < count; k++) {
        int f = names[k][0] - 'a';
        x->len[k] = (uint8_t)strlen(names[k]);
        if (f >= 0 && f < 26 && x->cnt[f] < WA_NAME_BUCKET) {
            x->ids[f][x->cnt[f]++] = (uint8_t)k;
            x->lens[f] |= 1u << x->len[k];
        }
    }
}

/* Called once before any lookup (the kernel module calls it when it is imported). */
static void wa_names_init(void) {
    if (wa_names_ready) return;
    wa_name_index_build(&wa_tag_index, wa_tag_names, WA_T_COUNT);
    wa_name_index_build(&wa_attr_index, wa_attr_names, WA_A_COUNT);
    wa_names_ready = 1;
}

/* The id of the name s[0..n) (ASCII case ignored) in names (indexed by x), 0 when none. */
static inline int wa_name_id(const uint8_t *s, size_t n, const char *const *names, const wa_name_index *x) {
    uint8_t low[16];
    size_t i;
    int f, k;
    if (n == 0 || n > sizeof(low)) return 0;
    f = wa_lower(s[0]) - 'a';
    if (f < 0 || f >= 26 || !(x->lens[f] & (1u << n))) return 0;
    for (i = 0; i < n; i++) low[i] = (uint8_t)wa_lower(s[i]);
    for (k = 0; k < x->cnt[f]; k++) {
        int id = x->ids[f][k];
        if (x->len[id] == n) {
            const char *w = names[id];
            for (i = 1; i < n && (uint8_t)w[i] == low[i]; i++) {}
            if (i == n) return id;
        }
    }
    return 0;
}

#endif
