/* wa_html.h -- the streaming HTML (and CSS) tokenizer of ext/html_rewrite: replay's rewriting of
 * URL-bearing attributes, and the crawler's link extraction, over one tokenizer.
 *
 * Input comes in chunks of any size (wa_html_feed); a construct cut by the end of a chunk (a
 * tag, a comment, the end tag of a <style>, a url() of CSS...) is held, as bytes, until the
 * chunk that completes it: the output is the same whatever the chunking. The tokenizer follows
 * the HTML standard's where it decides what is a tag and what is an attribute value (tag
 * names, attributes with all quoting forms and none, comments ending in --> or --!>, <!...>
 * and <?...> as bogus comments to '>', CDATA included, the raw text of <script>, <style>,
 * <xmp>, <iframe>, <noembed>, <noframes>, the RCDATA of <textarea> and <title>, <plaintext>);
 * its two simplifications can only make more text look like markup, never less: raw text ends
 * at the first matching end tag (no script-data escape states), and SVG and MathML content is
 * read as HTML content.
 *
 * Rewriting mode (the default): every byte goes to the output unchanged but the URLs of the
 * attributes and style sheets that the rules below name, which become archival URLs
 * (wa_urlfast.h's wa_rw_url for the common cases; WA_NEED hands the rest to the caller, which
 * answers with wa_html_answer), and three neutralisations pywb makes: `integrity` and
 * `crossorigin` renamed `_integrity`, `_crossorigin`; the content of a <meta
 * http-equiv=Content-Security-Policy> renamed `_content`; <meta name=referrer> set to
 * no-referrer-when-downgrade. A tag cut by the end of the document is passed on as it is (a
 * browser drops it). With `scripts`, the text of a JavaScript <script> (wa_script_is_js) goes to
 * the caller piece by piece (WA_REQ_SCRIPT, the last piece flagged; the caller keeps the state
 * of one script's rewriting between pieces), and the value of an event handler attribute (on...=)
 * that names what the caller rewrites (WA_REQ_HANDLER).
 *
 * Links mode: no output; every URL the rules of warchive.capture.links name is recorded
 * (wa_link), resolved against the page or its first <base href> where wa_join can, else as
 * raw bytes for Python to resolve.
 *
 * No Python here: the caller holds the GIL only between calls. Memory is the held construct,
 * the output of one chunk and small scratch; nothing is read outside the chunk and the held
 * bytes.
 */
#ifndef WA_HTML_H
#define WA_HTML_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wa_common.h"
#include "wa_css.h"
#include "wa_htmlref.h"
#include "wa_urlfast.h"


/* Where a URL sits, for the code that decodes and escapes it (the slow path). */
enum {
    WA_CTX_TEXT = 0,       /* not in an attribute (a <style> element, a CSS document) */
    WA_CTX_ATTR_UNQ = 1,   /* an unquoted attribute value */
    WA_CTX_ATTR_DQ = 2,    /* "..." */
    WA_CTX_ATTR_SQ = 3,    /* '...' */
    WA_CTX_CSS_NONE = 0,   /* << 2: not CSS */
    WA_CTX_CSS_URL = 1,    /* an unquoted url() */
    WA_CTX_CSS_DQ = 2,     /* a "string" */
    WA_CTX_CSS_SQ = 3      /* a 'string' */
};
#define WA_CTX(attr, css) ((uint8_t)((attr) | ((css) << 2)))

enum {                     /* requests */
    WA_REQ_URL = 1,        /* rewrite a URL: answer the bytes that replace it, or keep it */
    WA_REQ_BASE = 2,       /* rewrite the first <base href> (and rebase: wa_html_set_base) */
    WA_REQ_LINKBASE = 3,   /* links: resolve the first <base href> (and wa_html_set_base) */
    WA_REQ_SCRIPT = 4,     /* rewrite the next piece of an inline script's text (req_force: its last) */
    WA_REQ_HANDLER = 5     /* rewrite an event handler attribute's script (on...=, as the document holds it) */
};

/* --------------------------------------------------------------------------- records */

typedef struct {
    size_t ns, ne;          /* name */
    size_t vs, ve;          /* value (inside its quotes) */
    uint8_t quote;          /* 0, '"' or '\'' */
    uint8_t has_val;
    uint8_t id;             /* WA_A_* */
} wa_attr;

typedef struct {
    size_t s, e;            /* window bytes replaced (s == e: an insertion) */
    size_t off, len;        /* the replacement in the arena */
    uint8_t slow;           /* the caller decides */
    uint8_t ctx, slot, force, kind;
} wa_edit;

typedef struct {
    uint8_t hop;            /* 'L', 'E', 'R', 'X' */
    uint8_t what;           /* WA_LW_*: where it was found */
    uint8_t attr;           /* WA_A_* (what == WA_LW_ATTR, WA_LW_STYLE_*) */
    uint8_t raw;            /* 1: off/len are raw bytes for the caller to decode and resolve */
    uint8_t ctx;            /* raw: WA_CTX(...) */
    uint8_t css;            /* WA_LC_*: the CSS construct, 0 when not CSS */
    size_t off, len;        /* the URL (or raw bytes) in the links arena */
    size_t toff, tlen;      /* the tag name, lowercased, in the links arena */
} wa_link;

enum {
    WA_LW_ATTR = 1,         /* <tag attr> */
    WA_LW_STYLE_ATTR,       /* a url() or @import of a style attribute */
    WA_LW_STYLE_EL,         /* ... of a <style> element */
    WA_LW_CSS               /* ... of a CSS document */
};
enum { WA_LC_URL = 1, WA_LC_IMPORT = 2, WA_LC_IMAGESET = 3 };   /* which CSS construct (in ctx) */

enum {                      /* tokenizer states */
    S_DATA = 0, S_TAG_NAME, S_BEFORE_ATTR, S_ATTR_NAME, S_AFTER_ATTR_NAME, S_BEFORE_VAL, S_VAL_DQ, S_VAL_SQ,
    S_VAL_UNQ, S_AFTER_VAL, S_SELF_CLOSING, S_COMMENT, S_BOGUS, S_RAW, S_PLAINTEXT, S_CSS
};

typedef struct wa_html {
    /* configuration */
    int css_doc;            /* a CSS document, not HTML */
    int links;              /* link extraction, not rewriting */
    int all_slow;           /* every URL to the caller (tests, custom rewriting) */
    int scripts;            /* the text of JavaScript <script> elements to the caller, piece by piece */
    wa_rw rw;               /* rewriting (links mode: rw.base is the base) */
    int based;              /* the first <base href> was seen */

    /* the window: the held bytes and the chunk, or the chunk alone */
    const uint8_t *w;
    size_t wn;
    wa_bytes hold;
    int final;
    size_t pos, tok, emit;
    int state;

    /* the tag being read */
    size_t name_s, name_e;
    int end_tag;
    wa_attr *attrs;
    size_t nattrs, cap_attrs;

    /* raw text and CSS */
    int raw_tag;            /* WA_T_* of the element whose raw text is read */
    size_t raw_scan;        /* where its end tag is looked for next */
    size_t css_pos;         /* CSS scanned up to here */
    size_t css_seen;        /* the window length when it was (0: not yet in this window) */
    int js_open;            /* the raw text is a script's that goes to the caller (scripts) */
    int js_fed;             /* a piece of it went */
    wa_css_ctx css;
    wa_css_hits hits;

    /* edits of the construct being written */
    wa_edit *edits;
    size_t nedits, cap_edits, next_edit;
    wa_bytes arena;
    int emitting;
    int after_state;        /* the state to go on in once the edits are written */

    /* scratch */
    wa_bytes dec;            /* a decoded attribute value */
    wa_map map;
    wa_bytes tmp;

    wa_bytes out;            /* rewriting: the output of this call */

    wa_link *lk;            /* links found (the caller drains them) */
    size_t nlk, cap_lk;
    wa_bytes lkarena;
    /* the links already reported in this document (resolved ones: the caller keeps the others) */
    wa_bytes seen_urls;      /* hop byte + URL, one after the other */
    size_t *seen_off;       /* offsets in seen_urls; seen_len[i] their lengths */
    size_t *seen_len;
    uint32_t *seen_tab;     /* open addressing: index + 1 into seen_off, 0 empty */
    size_t nseen, seen_cap, tab_cap;

    int links_pending;      /* links mode: 1 + the tag whose other links follow a base request */

    /* the pending request */
    int req;
    size_t req_s, req_e;
    uint8_t req_ctx, req_slot, req_force;
} wa_html;

static uint8_t wa_tag_class[256];
static void wa_tag_class_init(void);

static void wa_html_free(wa_html *h) {
    if (!h) return;
    wa_rw_free(&h->rw);
    wa_bytes_free(&h->hold);
    free(h->attrs);
    free(h->hits.v);
    free(h->edits);
    wa_bytes_free(&h->arena);
    wa_bytes_free(&h->dec);
    free(h->map.v);
    wa_bytes_free(&h->tmp);
    wa_bytes_free(&h->out);
    free(h->lk);
    wa_bytes_free(&h->lkarena);
    wa_bytes_free(&h->seen_urls);
    free(h->seen_off);
    free(h->seen_len);
    free(h->seen_tab);
    free(h);
}

static wa_html *wa_html_new(int css_doc, int links) {
    wa_html *h = (wa_html *)calloc(1, sizeof(wa_html));
    wa_names_init();
    if (!wa_tag_class['>']) wa_tag_class_init();
    if (!h) return NULL;
    h->css_doc = css_doc;
    h->links = links;
    h->state = css_doc ? S_CSS : S_DATA;
    return h;
}

/* --------------------------------------------------------------------------- edits and links */

static int wa_edit_new(wa_html *h, wa_edit **out) {
    if (h->nedits == h->cap_edits) {
        size_t cap = h->cap_edits ? h->cap_edits * 2 : 32;
        wa_edit *v = (wa_edit *)realloc(h->edits, cap * sizeof(wa_edit));
        if (!v) return WA_E_NOMEM;
        h->edits = v;
        h->cap_edits = cap;
    }
    *out = &h->edits[h->nedits++];
    memset(*out, 0, sizeof(wa_edit));
    return WA_OK;
}

/* Replace window bytes [s, e) with p[0..n) (an insertion when s == e). */
static int wa_edit_bytes(wa_html *h, size_t s, size_t e, const void *p, size_t n) {
    wa_edit *ed;
    if (wa_edit_new(h, &ed)) return WA_E_NOMEM;
    ed->s = s;
    ed->e = e;
    ed->off = h->arena.len;
    ed->len = n;
    return wa_bytes_put(&h->arena, p, n);
}

static int wa_edit_slow(wa_html *h, size_t s, size_t e, uint8_t ctx, uint8_t slot, uint8_t force, uint8_t kind) {
    wa_edit *ed;
    if (wa_edit_new(h, &ed)) return WA_E_NOMEM;
    ed->s = s;
    ed->e = e;
    ed->slow = 1;
    ed->ctx = ctx;
    ed->slot = slot;
    ed->force = force;
    ed->kind = kind;
    return WA_OK;
}

static uint64_t wa_fnv(uint8_t hop, const uint8_t *u, size_t n) {
    uint64_t x = 1469598103934665603ull;
    size_t i;
    x = (x ^ hop) * 1099511628211ull;
    for (i = 0; i < n; i++) x = (x ^ u[i]) * 1099511628211ull;
    return x;
}

/* 1 when (hop, URL) was reported before in this document, else records it and returns 0. */
static int wa_seen(wa_html *h, uint8_t hop, const uint8_t *u, size_t n) {
    uint64_t x = wa_fnv(hop, u, n);
    size_t mask, j;
    if (2 * (h->nseen + 1) > h->tab_cap) {           /* grow (and rehash) at half full */
        size_t cap = h->tab_cap ? h->tab_cap * 2 : 1024, i;
        uint32_t *t = (uint32_t *)calloc(cap, sizeof(uint32_t));
        if (!t) return -1;
        for (i = 0; i < h->nseen; i++) {
            size_t k = (size_t)wa_fnv(h->seen_urls.p[h->seen_off[i]], h->seen_urls.p + h->seen_off[i] + 1,
                                      h->seen_len[i] - 1) & (cap - 1);
            while (t[k]) k = (k + 1) & (cap - 1);
            t[k] = (uint32_t)(i + 1);
        }
        free(h->seen_tab);
        h->seen_tab = t;
        h->tab_cap = cap;
    }
    mask = h->tab_cap - 1;
    for (j = (size_t)x & mask; h->seen_tab[j]; j = (j + 1) & mask) {
        size_t i = h->seen_tab[j] - 1;
        const uint8_t *p = h->seen_urls.p + h->seen_off[i];
        if (h->seen_len[i] == n + 1 && p[0] == hop && memcmp(p + 1, u, n) == 0) return 1;
    }
    if (h->nseen == h->seen_cap) {
        size_t cap = h->seen_cap ? h->seen_cap * 2 : 256;
        size_t *o = (size_t *)realloc(h->seen_off, cap * sizeof(size_t)), *l;
        if (!o) return -1;
        h->seen_off = o;
        l = (size_t *)realloc(h->seen_len, cap * sizeof(size_t));
        if (!l) return -1;
        h->seen_len = l;
        h->seen_cap = cap;
    }
    h->seen_off[h->nseen] = h->seen_urls.len;
    h->seen_len[h->nseen] = n + 1;
    if (wa_bytes_byte(&h->seen_urls, hop) || wa_bytes_put(&h->seen_urls, u, n)) return -1;
    h->seen_tab[j] = (uint32_t)(h->nseen + 1);
    h->nseen++;
    return 0;
}

static int wa_link_add(wa_html *h, uint8_t hop, uint8_t what, uint8_t attr, uint8_t lc, int raw, uint8_t ctx,
                       const uint8_t *u, size_t un) {
    wa_link *l;
    size_t i;
    if (!raw) {
        int seen = wa_seen(h, hop, u, un);
        if (seen < 0) return WA_E_NOMEM;
        if (seen) return WA_OK;
    }
    if (h->nlk == h->cap_lk) {
        size_t cap = h->cap_lk ? h->cap_lk * 2 : 64;
        wa_link *v = (wa_link *)realloc(h->lk, cap * sizeof(wa_link));
        if (!v) return WA_E_NOMEM;
        h->lk = v;
        h->cap_lk = cap;
    }
    l = &h->lk[h->nlk];
    l->hop = hop;
    l->what = what;
    l->attr = attr;
    l->raw = (uint8_t)raw;
    l->ctx = ctx;
    l->css = lc;
    l->off = h->lkarena.len;
    l->len = un;
    if (wa_bytes_put(&h->lkarena, u, un)) return WA_E_NOMEM;
    l->toff = h->lkarena.len;
    l->tlen = what == WA_LW_ATTR || what == WA_LW_STYLE_ATTR ? h->name_e - h->name_s : 0;
    for (i = 0; i < l->tlen; i++)
        if (wa_bytes_byte(&h->lkarena, wa_lower(h->w[h->name_s + i]))) return WA_E_NOMEM;
    h->nlk++;
    return WA_OK;
}

/* --------------------------------------------------------------------------- one URL */

/* A view of a value: its decoded bytes and, when they differ from the raw ones, the map back. */
typedef struct {
    const uint8_t *p;
    size_t n;
    const uint32_t *map;    /* NULL: p is the raw bytes themselves */
    size_t base;            /* window offset of the raw value */
    uint8_t actx;           /* WA_CTX_ATTR_* or WA_CTX_TEXT */
} wa_view;

static inline size_t wa_view_raw(const wa_view *v, size_t i) { return v->base + (v->map ? v->map[i] : i); }

/* The view of attribute value [vs, ve) of the window: decoded when it holds '&'. */
static int wa_view_attr(wa_html *h, const wa_attr *a, wa_view *v) {
    v->base = a->vs;
    v->actx = a->quote == '"' ? WA_CTX_ATTR_DQ : a->quote == '\'' ? WA_CTX_ATTR_SQ : WA_CTX_ATTR_UNQ;
    if (!memchr(h->w + a->vs, '&', a->ve - a->vs)) {
        v->p = h->w + a->vs;
        v->n = a->ve - a->vs;
        v->map = NULL;
        return WA_OK;
    }
    if (wa_attr_decode(h->w + a->vs, a->ve - a->vs, &h->dec, &h->map)) return WA_E_NOMEM;
    v->p = h->dec.p;
    v->n = h->dec.len;
    v->map = h->map.v;
    return WA_OK;
}

/* HTML-escape p[0..n) for an attribute value quoted by actx, into the arena. */
static int wa_put_escaped(wa_bytes *o, const uint8_t *p, size_t n, uint8_t actx) {
    size_t i;
    for (i = 0; i < n; i++) {
        uint8_t c = p[i];
        const char *r = NULL;
        if (c == '&') r = "&amp;";
        else if (c == '"' && actx != WA_CTX_ATTR_SQ) r = "&quot;";
        else if (c == '\'' && actx != WA_CTX_ATTR_DQ) r = "&#39;";
        else if (actx == WA_CTX_ATTR_UNQ && (wa_html_ws(c) || c == '<' || c == '>' || c == '=' || c == '`')) {
            char tmp[8];
            static const char hexd[] = "0123456789ABCDEF";
            tmp[0] = '&'; tmp[1] = '#'; tmp[2] = 'x'; tmp[3] = hexd[c >> 4]; tmp[4] = hexd[c & 15]; tmp[5] = ';';
            if (wa_bytes_put(o, tmp, 6)) return WA_E_NOMEM;
            continue;
        }
        if (r) {
            if (wa_bytes_put(o, r, strlen(r))) return WA_E_NOMEM;
        } else if (wa_bytes_byte(o, c)) {
            return WA_E_NOMEM;
        }
    }
    return WA_OK;
}

/* Rewrite the URL at view bytes [s, e) (css: WA_CTX_CSS_*, esc: the CSS holds a backslash). */
static int wa_url_edit(wa_html *h, const wa_view *v, size_t s, size_t e, uint8_t slot, int force, uint8_t css,
                       int esc) {
    size_t rs, re;
    int rc, verbatim, amp;
    while (s < e && wa_c0_or_space(v->p[s])) s++;
    while (e > s && wa_c0_or_space(v->p[e - 1])) e--;
    if (s == e) return WA_OK;
    rs = wa_view_raw(v, s);
    re = wa_view_raw(v, e);
    if (h->all_slow || esc) return wa_edit_slow(h, rs, re, WA_CTX(v->actx, css), slot, (uint8_t)force, WA_REQ_URL);
    h->tmp.len = 0;
    rc = wa_rw_url(&h->rw, slot, force, v->p + s, e - s, &h->tmp, &verbatim);
    if (rc == WA_SAME) return WA_OK;
    if (rc == WA_SLOW) return wa_edit_slow(h, rs, re, WA_CTX(v->actx, css), slot, (uint8_t)force, WA_REQ_URL);
    if (rc != WA_DONE) return rc;
    if (h->tmp.len == e - s && memcmp(h->tmp.p, v->p + s, e - s) == 0) return WA_OK;   /* rewritten to itself */
    amp = v->map != NULL && memchr(h->w + rs, '&', re - rs) != NULL;
    if (!amp) return wa_edit_bytes(h, rs, re, h->tmp.p, h->tmp.len);
    {
        wa_edit *ed;
        if (wa_edit_new(h, &ed)) return WA_E_NOMEM;
        ed->s = rs;
        ed->e = re;
        ed->off = h->arena.len;
        if (wa_put_escaped(&h->arena, h->tmp.p, h->tmp.len, v->actx)) return WA_E_NOMEM;
        ed->len = h->arena.len - ed->off;
    }
    return WA_OK;
}

/* links: strip as capture.links.resolve does (" \t\n\r\f"), then resolve in C or record raw. */
static int wa_url_link(wa_html *h, const wa_view *v, size_t s, size_t e, uint8_t hop, uint8_t what, uint8_t attr,
                       uint8_t css, uint8_t lc, int esc) {
    size_t i, rs, re, fs;
    int same, rc;
    const uint8_t *u;
    while (s < e && wa_html_ws(v->p[s])) s++;
    while (e > s && wa_html_ws(v->p[e - 1])) e--;
    rs = wa_view_raw(v, s);
    re = wa_view_raw(v, e);
    if (s == e) return WA_OK;
    u = v->p + s;
    if (h->all_slow || esc) goto raw;
    for (i = s; i < e; i++)
        if (v->p[i] <= 0x20 || v->p[i] >= 0x7f) goto raw;
    if (u[0] == '#') return WA_OK;
    {
        static const char *const skipped[] = {
            "javascript:", "mailto:", "data:", "tel:", "about:", "blob:", "file:", "vbscript:", "sms:", "callto:",
            "news:", "irc:", "magnet:", "chrome:", "view-source:", NULL};
        size_t k = wa_scheme_len(u, e - s);
        const char *const *p;
        for (p = skipped; k && *p; p++)
            if (strlen(*p) == k + 1 && wa_starts_ci(u, e - s, *p)) return WA_OK;
    }
    h->tmp.len = 0;
    rc = wa_join(&h->rw.base, u, e - s, &h->tmp, &same);
    if (rc == WA_SLOW) goto raw;
    if (rc != WA_OK) return rc;
    if (same) {
        h->tmp.len = 0;
        if (wa_bytes_put(&h->tmp, u, e - s)) return WA_E_NOMEM;
    }
    for (fs = 0; fs < h->tmp.len && h->tmp.p[fs] != '#'; fs++) {}
    h->tmp.len = fs;
    {
        const uint8_t *t = h->tmp.p;
        size_t tn = h->tmp.len, k;
        if (!(tn >= 7 && memcmp(t, "http://", 7) == 0) && !(tn >= 8 && memcmp(t, "https://", 8) == 0)
            && !(tn >= 6 && memcmp(t, "ftp://", 6) == 0)) {
            k = wa_scheme_len(t, tn);
            if (!((k == 4 && wa_starts_ci(t, tn, "http")) || (k == 5 && wa_starts_ci(t, tn, "https"))
                  || (k == 3 && wa_starts_ci(t, tn, "ftp"))))
                return WA_OK;
        }
    }
    return wa_link_add(h, hop, what, attr, lc, 0, 0, h->tmp.p, h->tmp.len);
raw:
    return wa_link_add(h, hop, what, attr, lc, 1, WA_CTX(v->actx, css), h->w + rs, re - rs);
}

/* --------------------------------------------------------------------------- CSS */

/* The URLs of CSS in view bytes [s, e) (final: the CSS ends there), as edits or links; *stop is
 * where the scan stopped. ctx persists across calls for one style sheet. */
static int wa_css_urls(wa_html *h, const wa_view *v, size_t s, size_t e, int final, wa_css_ctx *ctx, size_t *stop,
                       uint8_t what) {
    size_t k, st;
    h->hits.n = 0;
    st = wa_css_scan(ctx, v->p, s, e, final, &h->hits);
    if (st == (size_t)-1) return WA_E_NOMEM;
    *stop = st;
    for (k = 0; k < h->hits.n; k++) {
        const wa_css_hit *x = &h->hits.v[k];
        uint8_t css = x->quote == WA_CSS_UNQ ? WA_CTX_CSS_URL : x->quote == '"' ? WA_CTX_CSS_DQ : WA_CTX_CSS_SQ;
        int rc;
        if (h->links) {
            uint8_t lc = x->fn ? WA_LC_URL : x->slot == WA_M_CS ? WA_LC_IMPORT : WA_LC_IMAGESET;
            rc = wa_url_link(h, v, x->s, x->e, 'E', what, (uint8_t)(what == WA_LW_STYLE_ATTR ? WA_A_STYLE : 0),
                             css, lc, x->esc);
        } else {
            rc = wa_url_edit(h, v, x->s, x->e, x->slot, 0, css, x->esc);
        }
        if (rc) return rc;
    }
    return WA_OK;
}

/* --------------------------------------------------------------------------- rewriting rules */

static const wa_attr *wa_first(const wa_html *h, int id) {
    size_t i;
    for (i = 0; i < h->nattrs; i++)
        if (h->attrs[i].id == id) return &h->attrs[i];
    return NULL;
}

/* The value of attribute a decoded, copied into tmp (for the few values rules compare). */
static int wa_value_copy(wa_html *h, const wa_attr *a, wa_bytes *o) {
    wa_view v;
    o->len = 0;
    if (!a || !a->has_val) return WA_OK;
    if (wa_view_attr(h, a, &v)) return WA_E_NOMEM;
    return wa_bytes_put(o, v.p, v.n);
}

static int wa_eq_ci(const uint8_t *p, size_t n, const char *w) {
    return strlen(w) == n && wa_starts_ci(p, n, w);
}

/* capture.links' / replay's modifier of a <link href> by its rel and as (urls.link_modifier). */
static uint8_t wa_link_slot(wa_html *h) {
    const wa_attr *rel = wa_first(h, WA_A_REL), *as = wa_first(h, WA_A_AS);
    int stylesheet = 0, preload = 0, modulepreload = 0, imp = 0;
    size_t i = 0, n;
    const uint8_t *p;
    if (wa_value_copy(h, rel, &h->tmp)) return 0xff;
    p = h->tmp.p;
    n = h->tmp.len;
    while (i < n) {
        size_t j;
        while (i < n && wa_py_ws(p[i])) i++;
        j = i;
        while (j < n && !wa_py_ws(p[j])) j++;
        if (j > i) {
            if (wa_eq_ci(p + i, j - i, "stylesheet")) stylesheet = 1;
            else if (wa_eq_ci(p + i, j - i, "preload")) preload = 1;
            else if (wa_eq_ci(p + i, j - i, "modulepreload")) modulepreload = 1;
            else if (wa_eq_ci(p + i, j - i, "import") || wa_eq_ci(p + i, j - i, "alternate")) imp = 1;
        }
        i = j;
    }
    if (stylesheet) return WA_M_CS;
    if (preload) {
        static const struct { const char *as; uint8_t slot; } types[] = {
            {"script", WA_M_JS}, {"worker", WA_M_JS}, {"style", WA_M_CS}, {"image", WA_M_IM}, {"document", WA_M_IF},
            {"fetch", WA_M_MP}, {"font", WA_M_OE}, {"audio", WA_M_OE}, {"video", WA_M_OE}, {"embed", WA_M_OE},
            {"object", WA_M_OE}, {"track", WA_M_OE}, {NULL, 0}};
        size_t s = 0, e, k;
        if (wa_value_copy(h, as, &h->tmp)) return 0xff;
        e = h->tmp.len;
        while (s < e && wa_py_ws(h->tmp.p[s])) s++;
        while (e > s && wa_py_ws(h->tmp.p[e - 1])) e--;
        for (k = 0; types[k].as; k++)
            if (wa_eq_ci(h->tmp.p + s, e - s, types[k].as)) return types[k].slot;
        return WA_M_OE;
    }
    if (modulepreload) return WA_M_JS;
    if (imp) return WA_M_MP;
    return WA_M_OE;
}

enum { R_NONE = 0, R_URL, R_SRCSET, R_CSS, R_LIST, R_RENAME, R_LINK, R_BASE, R_META, R_PARAM };

/* The rule for attribute id `a` of tag `t`, and its modifier slot. */
static int wa_rw_rule(int t, int a, uint8_t *slot) {
    *slot = WA_M_DEF;
    switch (a) {
    case WA_A_STYLE: return R_CSS;
    case WA_A_BACKGROUND: *slot = WA_M_IM; return R_URL;
    case WA_A_SRCSET:
        *slot = t == WA_T_IMG ? WA_M_IM : t == WA_T_SOURCE ? WA_M_OE : WA_M_DEF;
        return R_SRCSET;
    case WA_A_IMAGESRCSET: *slot = WA_M_IM; return t == WA_T_LINK ? R_SRCSET : R_NONE;
    case WA_A_INTEGRITY: case WA_A_CROSSORIGIN: return R_RENAME;
    case WA_A_HREF:
        if (t == WA_T_LINK) return R_LINK;
        if (t == WA_T_BASE) return R_BASE;
        if (t == WA_T_IMAGE) *slot = WA_M_IM;
        else if (t == WA_T_SCRIPT) *slot = WA_M_JS;
        return R_URL;
    case WA_A_XLINK_HREF:
        if (t == WA_T_IMAGE) *slot = WA_M_IM;
        else if (t == WA_T_SCRIPT) *slot = WA_M_JS;
        return R_URL;
    case WA_A_SRC:
        switch (t) {
        case WA_T_IMG: case WA_T_IMAGE: case WA_T_INPUT: *slot = WA_M_IM; return R_URL;
        case WA_T_SCRIPT: *slot = WA_M_JS; return R_URL;
        case WA_T_IFRAME: *slot = WA_M_IF; return R_URL;
        case WA_T_FRAME: *slot = WA_M_FR; return R_URL;
        case WA_T_EMBED: case WA_T_AUDIO: case WA_T_VIDEO: case WA_T_SOURCE: case WA_T_TRACK:
            *slot = WA_M_OE; return R_URL;
        default: return R_NONE;
        }
    case WA_A_ACTION: return t == WA_T_FORM ? R_URL : R_NONE;
    case WA_A_FORMACTION: return t == WA_T_BUTTON || t == WA_T_INPUT ? R_URL : R_NONE;
    case WA_A_DATA: *slot = WA_M_OE; return t == WA_T_OBJECT ? R_URL : R_NONE;
    case WA_A_CODEBASE: *slot = WA_M_OE; return t == WA_T_APPLET || t == WA_T_OBJECT ? R_URL : R_NONE;
    case WA_A_ARCHIVE: *slot = WA_M_OE; return t == WA_T_APPLET ? R_URL : R_NONE;
    case WA_A_POSTER: *slot = WA_M_IM; return t == WA_T_VIDEO ? R_URL : R_NONE;
    case WA_A_CITE:
        return t == WA_T_BLOCKQUOTE || t == WA_T_DEL || t == WA_T_INS || t == WA_T_Q ? R_URL : R_NONE;
    case WA_A_LONGDESC: return t == WA_T_IMG || t == WA_T_FRAME || t == WA_T_IFRAME ? R_URL : R_NONE;
    case WA_A_PING: return t == WA_T_A || t == WA_T_AREA ? R_LIST : R_NONE;
    case WA_A_ICON: *slot = WA_M_IM; return t == WA_T_COMMAND ? R_URL : R_NONE;
    case WA_A_CONTENT: return t == WA_T_META ? R_META : R_NONE;
    case WA_A_VALUE: *slot = WA_M_OE; return t == WA_T_PARAM ? R_PARAM : R_NONE;
    case WA_A_MANIFEST: *slot = WA_M_OE; return t == WA_T_HTML ? R_URL : R_NONE;
    default: return R_NONE;
    }
}

typedef struct { wa_html *h; const wa_view *v; uint8_t slot, hop, attr; int links; } wa_list_ctx;

static int wa_list_one(void *c, size_t s, size_t e) {
    wa_list_ctx *x = (wa_list_ctx *)c;
    if (x->links) return wa_url_link(x->h, x->v, s, e, x->hop, WA_LW_ATTR, x->attr, 0, 0, 0);
    return wa_url_edit(x->h, x->v, s, e, x->slot, 0, WA_CTX_CSS_NONE, 0);
}

/* Space-separated URLs (ping). */
static int wa_ws_list(const wa_view *v, wa_span_fn fn, void *ctx) {
    size_t i = 0, n = v->n;
    while (i < n) {
        size_t j;
        int rc;
        while (i < n && wa_html_ws(v->p[i])) i++;
        j = i;
        while (j < n && !wa_html_ws(v->p[j])) j++;
        if (j > i && (rc = fn(ctx, i, j)) != 0) return rc;
        i = j;
    }
    return 0;
}

static int wa_meta_equiv(wa_html *h, const char *w) {
    const wa_attr *a = wa_first(h, WA_A_HTTP_EQUIV);
    if (!a) return 0;
    if (wa_value_copy(h, a, &h->tmp)) return -1;
    return wa_eq_ci(h->tmp.p, h->tmp.len, w);
}

/* Does the script s[0..n) name what warchive.replay.js rewrites (location, top, parent, import)?
 * A cheap test before the caller is asked; the rewriter decides. */
static int wa_js_words(const uint8_t *s, size_t n) {
    return wa_has(s, n, "location", 8) || wa_has(s, n, "top", 3) || wa_has(s, n, "parent", 6)
           || wa_has(s, n, "import", 6);
}

/* An event handler attribute: on + a name (not on-..., as pywb tells them). */
static int wa_is_handler(const wa_html *h, const wa_attr *a) {
    size_t n = a->ne - a->ns;
    const uint8_t *p = h->w + a->ns;
    return n > 2 && wa_lower(p[0]) == 'o' && wa_lower(p[1]) == 'n' && p[2] != '-';
}

static int wa_rewrite_tag(wa_html *h, int t) {
    size_t i;
    int rc;
    for (i = 0; i < h->nattrs; i++) {
        wa_attr *a = &h->attrs[i];
        uint8_t slot;
        int rule = a->id ? wa_rw_rule(t, a->id, &slot) : R_NONE;
        wa_view v;
        if (rule == R_NONE) {
            if (h->scripts && !a->id && a->has_val && a->ve > a->vs && wa_is_handler(h, a)
                && wa_js_words(h->w + a->vs, a->ve - a->vs)) {
                uint8_t actx = a->quote == '"' ? WA_CTX_ATTR_DQ : a->quote == '\'' ? WA_CTX_ATTR_SQ : WA_CTX_ATTR_UNQ;
                if ((rc = wa_edit_slow(h, a->vs, a->ve, WA_CTX(actx, 0), 0, 0, WA_REQ_HANDLER)) != 0) return rc;
            }
            continue;
        }
        if (rule == R_RENAME) {
            if ((rc = wa_edit_bytes(h, a->ns, a->ns, "_", 1)) != 0) return rc;
            continue;
        }
        if (rule == R_BASE) {
            if (h->based) continue;
            h->based = 1;
            if (!a->has_val) continue;
            if ((rc = wa_view_attr(h, a, &v)) != 0) return rc;
            {
                size_t s = 0, e = v.n;
                while (s < e && wa_c0_or_space(v.p[s])) s++;
                while (e > s && wa_c0_or_space(v.p[e - 1])) e--;
                if (s == e) continue;
                rc = wa_edit_slow(h, wa_view_raw(&v, s), wa_view_raw(&v, e), WA_CTX(v.actx, 0), WA_M_DEF, 0,
                                  WA_REQ_BASE);
                if (rc) return rc;
            }
            continue;
        }
        if (!a->has_val || a->ve == a->vs) continue;
        if (rule == R_META) {
            int eq = wa_meta_equiv(h, "refresh");
            if (eq < 0) return WA_E_NOMEM;
            if (eq) {
                size_t s, e;
                if ((rc = wa_view_attr(h, a, &v)) != 0) return rc;
                if (wa_refresh_url(v.p, v.n, &s, &e) && (rc = wa_url_edit(h, &v, s, e, WA_M_DEF, 0, 0, 0)) != 0)
                    return rc;
                continue;
            }
            eq = wa_meta_equiv(h, "content-security-policy");
            if (eq < 0) return WA_E_NOMEM;
            if (eq) {
                if ((rc = wa_edit_bytes(h, a->ns, a->ns, "_", 1)) != 0) return rc;
                continue;
            }
            {
                const wa_attr *nm = wa_first(h, WA_A_NAME);
                if (nm) {
                    if (wa_value_copy(h, nm, &h->tmp)) return WA_E_NOMEM;
                    if (wa_eq_ci(h->tmp.p, h->tmp.len, "referrer")) {
                        static const char nr[] = "no-referrer-when-downgrade";
                        if ((rc = wa_edit_bytes(h, a->vs, a->ve, nr, sizeof(nr) - 1)) != 0) return rc;
                        continue;
                    }
                }
            }
            rule = R_PARAM;   /* a URL-like content (og:image...): rewritten as pywb does */
        }
        if ((rc = wa_view_attr(h, a, &v)) != 0) return rc;
        switch (rule) {
        case R_PARAM: {
            size_t s = 0;
            while (s < v.n && wa_c0_or_space(v.p[s])) s++;
            if (wa_starts_ci(v.p + s, v.n - s, "http://") || wa_starts_ci(v.p + s, v.n - s, "https://")
                || wa_starts_ci(v.p + s, v.n - s, "//"))
                rc = wa_url_edit(h, &v, 0, v.n, slot, 0, 0, 0);
            else
                rc = WA_OK;
            break;
        }
        case R_URL:
            rc = wa_url_edit(h, &v, 0, v.n, slot, t == WA_T_SCRIPT && a->id == WA_A_SRC, 0, 0);
            break;
        case R_LINK: {
            uint8_t s2 = wa_link_slot(h);
            if (s2 == 0xff) return WA_E_NOMEM;
            /* wa_link_slot used the scratch of the view: take it again */
            if ((rc = wa_view_attr(h, a, &v)) != 0) return rc;
            rc = wa_url_edit(h, &v, 0, v.n, s2, 0, 0, 0);
            break;
        }
        case R_SRCSET: {
            wa_list_ctx c = {h, &v, slot, 0, 0, 0};
            rc = wa_srcset(v.p, v.n, wa_list_one, &c);
            break;
        }
        case R_LIST: {
            wa_list_ctx c = {h, &v, slot, 0, 0, 0};
            rc = wa_ws_list(&v, wa_list_one, &c);
            break;
        }
        case R_CSS: {
            wa_css_ctx cc;
            size_t stop;
            memset(&cc, 0, sizeof(cc));
            rc = wa_css_urls(h, &v, 0, v.n, 1, &cc, &stop, 0);
            break;
        }
        default:
            rc = WA_OK;
        }
        if (rc) return rc;
    }
    return WA_OK;
}

/* --------------------------------------------------------------------------- link rules */

typedef struct { uint8_t tag, attr, hop, srcset; } wa_lrule;

/* capture.links._URL_ATTRS, in its order. */
static const wa_lrule wa_lrules[] = {
    {WA_T_A, WA_A_HREF, 'L', 0}, {WA_T_A, WA_A_XLINK_HREF, 'L', 0}, {WA_T_AREA, WA_A_HREF, 'L', 0},
    {WA_T_IMG, WA_A_SRC, 'E', 0}, {WA_T_IMG, WA_A_SRCSET, 'E', 1}, {WA_T_IMG, WA_A_LOWSRC, 'E', 0},
    {WA_T_SCRIPT, WA_A_SRC, 'E', 0}, {WA_T_IFRAME, WA_A_SRC, 'E', 0}, {WA_T_FRAME, WA_A_SRC, 'E', 0},
    {WA_T_EMBED, WA_A_SRC, 'E', 0}, {WA_T_SOURCE, WA_A_SRC, 'E', 0}, {WA_T_SOURCE, WA_A_SRCSET, 'E', 1},
    {WA_T_VIDEO, WA_A_SRC, 'E', 0}, {WA_T_VIDEO, WA_A_POSTER, 'E', 0}, {WA_T_AUDIO, WA_A_SRC, 'E', 0},
    {WA_T_TRACK, WA_A_SRC, 'E', 0}, {WA_T_INPUT, WA_A_SRC, 'E', 0}, {WA_T_OBJECT, WA_A_DATA, 'E', 0},
    {WA_T_BODY, WA_A_BACKGROUND, 'E', 0}, {WA_T_TABLE, WA_A_BACKGROUND, 'E', 0},
    {WA_T_TD, WA_A_BACKGROUND, 'E', 0}, {WA_T_IMAGE, WA_A_HREF, 'E', 0}, {WA_T_IMAGE, WA_A_XLINK_HREF, 'E', 0},
    {WA_T_HTML, WA_A_MANIFEST, 'E', 0}, {WA_T_BLOCKQUOTE, WA_A_CITE, 'L', 0}, {WA_T_Q, WA_A_CITE, 'L', 0},
    {WA_T_TH, WA_A_BACKGROUND, 'E', 0}, {0, 0, 0, 0},
};

static int wa_link_value(wa_html *h, const wa_attr *a, uint8_t hop, int srcset) {
    wa_view v;
    int rc;
    if (!a) return WA_OK;
    if (!a->has_val) return WA_OK;
    if ((rc = wa_view_attr(h, a, &v)) != 0) return rc;
    if (srcset) {
        wa_list_ctx c = {h, &v, 0, hop, a->id, 1};
        return wa_srcset(v.p, v.n, wa_list_one, &c);
    }
    return wa_url_link(h, &v, 0, v.n, hop, WA_LW_ATTR, a->id, 0, 0, 0);
}

static int wa_links_rels_embed(wa_html *h) {
    static const char *const embed[] = {"stylesheet", "icon", "apple-touch-icon", "apple-touch-icon-precomposed",
                                        "preload", "modulepreload", "prefetch", "manifest", "mask-icon", NULL};
    const wa_attr *rel = wa_first(h, WA_A_REL);
    size_t i = 0, n;
    if (wa_value_copy(h, rel, &h->tmp)) return -1;
    n = h->tmp.len;
    while (i < n) {
        size_t j;
        const char *const *p;
        while (i < n && wa_py_ws(h->tmp.p[i])) i++;
        j = i;
        while (j < n && !wa_py_ws(h->tmp.p[j])) j++;
        for (p = embed; j > i && *p; p++)
            if (wa_eq_ci(h->tmp.p + i, j - i, *p)) return 1;
        i = j;
    }
    return 0;
}

static int wa_py_stripped_is(const uint8_t *p, size_t n, const char *w) {
    size_t s = 0, e = n;
    while (s < e && wa_py_ws(p[s])) s++;
    while (e > s && wa_py_ws(p[e - 1])) e--;
    return wa_eq_ci(p + s, e - s, w);
}

static int wa_links_rest(wa_html *h, int t);

/* Returns WA_OK, WA_NEED (the base needs the caller: h->req set; the rest of the tag's links
 * follow once it answered, against the new base), or an error. */
static int wa_links_tag(wa_html *h, int t, size_t gt) {
    const wa_attr *a;
    if (!memchr(h->w + h->name_e, '=', gt - h->name_e)) return WA_OK;   /* as capture.links: values only */
    if (t == WA_T_BASE) {
        a = wa_first(h, WA_A_HREF);
        if (a && !h->based) {
            wa_view v;
            int rc;
            h->based = 1;
            if ((rc = wa_view_attr(h, a, &v)) != 0) return rc;
            h->req = WA_REQ_LINKBASE;
            h->req_s = wa_view_raw(&v, 0);
            h->req_e = a->has_val ? wa_view_raw(&v, v.n) : h->req_s;
            h->req_ctx = WA_CTX(v.actx, 0);
            h->links_pending = t + 1;
            return WA_NEED;
        }
    }
    return wa_links_rest(h, t);
}

/* The links of a tag but its first <base href> (capture.links' order). */
static int wa_links_rest(wa_html *h, int t) {
    int rc;
    size_t k;
    const wa_attr *a;
    if (t == WA_T_LINK) {
        a = wa_first(h, WA_A_HREF);
        if (a) {
            int emb = wa_links_rels_embed(h);
            if (emb < 0) return WA_E_NOMEM;
            if ((rc = wa_link_value(h, a, emb ? 'E' : 'L', 0)) != 0) return rc;
        }
        if ((rc = wa_link_value(h, wa_first(h, WA_A_IMAGESRCSET), 'E', 1)) != 0) return rc;
    } else if (t == WA_T_META) {
        a = wa_first(h, WA_A_HTTP_EQUIV);
        if (a) {
            if (wa_value_copy(h, a, &h->tmp)) return WA_E_NOMEM;
            if (wa_py_stripped_is(h->tmp.p, h->tmp.len, "refresh")) {
                const wa_attr *c = wa_first(h, WA_A_CONTENT);
                if (c && c->has_val) {
                    wa_view v;
                    size_t s, e;
                    if ((rc = wa_view_attr(h, c, &v)) != 0) return rc;
                    if (wa_links_refresh_url(v.p, v.n, &s, &e)
                        && (rc = wa_url_link(h, &v, s, e, 'R', WA_LW_ATTR, WA_A_CONTENT, 0, 0, 0)) != 0)
                        return rc;
                }
            }
        }
    } else if (t == WA_T_FORM) {
        a = wa_first(h, WA_A_ACTION);
        if (a && a->has_val && a->ve > a->vs) {
            const wa_attr *m = wa_first(h, WA_A_METHOD);
            int get = 1;
            if (m) {
                if (wa_value_copy(h, m, &h->tmp)) return WA_E_NOMEM;
                get = wa_py_stripped_is(h->tmp.p, h->tmp.len, "get");
            }
            if (get && (rc = wa_link_value(h, a, 'L', 0)) != 0) return rc;
        }
    }
    for (k = 0; wa_lrules[k].tag; k++)
        if (wa_lrules[k].tag == t
            && (rc = wa_link_value(h, wa_first(h, wa_lrules[k].attr), wa_lrules[k].hop, wa_lrules[k].srcset)) != 0)
            return rc;
    {
        static const uint8_t lazy[] = {WA_A_DATA_SRC, WA_A_DATA_SRCSET, WA_A_DATA_ORIGINAL, WA_A_DATA_LAZY_SRC};
        for (k = 0; k < 4; k++)
            if ((rc = wa_link_value(h, wa_first(h, lazy[k]), 'X', lazy[k] == WA_A_DATA_SRCSET)) != 0) return rc;
    }
    a = wa_first(h, WA_A_STYLE);
    if (a && a->has_val && a->ve > a->vs) {
        wa_view v;
        wa_css_ctx cc;
        size_t stop;
        memset(&cc, 0, sizeof(cc));
        if ((rc = wa_view_attr(h, a, &v)) != 0) return rc;
        if ((rc = wa_css_urls(h, &v, 0, v.n, 1, &cc, &stop, WA_LW_STYLE_ATTR)) != 0) return rc;
    }
    return WA_OK;
}

/* --------------------------------------------------------------------------- the tokenizer */

static int wa_raw_kind(int t) {
    switch (t) {
    case WA_T_SCRIPT: case WA_T_STYLE: case WA_T_XMP: case WA_T_IFRAME: case WA_T_NOEMBED: case WA_T_NOFRAMES:
    case WA_T_TEXTAREA: case WA_T_TITLE:
        return 1;
    case WA_T_PLAINTEXT:
        return 2;
    default:
        return 0;
    }
}

static int wa_attr_push(wa_html *h, size_t ns) {
    wa_attr *a;
    if (h->nattrs == h->cap_attrs) {
        size_t cap = h->cap_attrs ? h->cap_attrs * 2 : 16;
        wa_attr *v = (wa_attr *)realloc(h->attrs, cap * sizeof(wa_attr));
        if (!v) return WA_E_NOMEM;
        h->attrs = v;
        h->cap_attrs = cap;
    }
    a = &h->attrs[h->nattrs++];
    memset(a, 0, sizeof(*a));
    a->ns = a->ne = ns;
    return WA_OK;
}

/* Is the <script> being read JavaScript: no type, an empty one, or one naming JavaScript,
 * ECMAScript or a module (pywb's rule, and module scripts)? */
static int wa_script_is_js(wa_html *h) {
    const wa_attr *a = wa_first(h, WA_A_TYPE);
    size_t n, i;
    const uint8_t *p;
    if (!a || !a->has_val) return 1;
    p = h->w + a->vs;
    n = a->ve - a->vs;
    while (n && wa_html_ws(*p)) { p++; n--; }
    while (n && wa_html_ws(p[n - 1])) n--;
    if (!n || wa_eq_ci(p, n, "module")) return 1;
    for (i = 0; i + 10 <= n; i++)
        if (wa_starts_ci(p + i, n - i, "javascript") || wa_starts_ci(p + i, n - i, "ecmascript")) return 1;
    return 0;
}

/* A tag ended at gt ('>' at gt - 1): apply the rules, set the next state. Returns WA_OK, WA_NEED
 * (links: base) or an error; h->nedits > 0 means edits to write. */
static int wa_on_tag(wa_html *h, size_t gt) {
    int t, rc = WA_OK, raw;
    size_t i;
    h->state = S_DATA;
    if (h->end_tag) return WA_OK;
    t = wa_name_id(h->w + h->name_s, h->name_e - h->name_s, wa_tag_names, &wa_tag_index);
    for (i = 0; i < h->nattrs; i++)
        h->attrs[i].id = (uint8_t)wa_name_id(h->w + h->attrs[i].ns, h->attrs[i].ne - h->attrs[i].ns, wa_attr_names,
                                             &wa_attr_index);
    raw = wa_raw_kind(t);
    if (raw == 1) {
        h->state = S_RAW;
        h->raw_tag = t;
        h->raw_scan = gt;
        h->css_pos = gt;
        h->css_seen = 0;
        memset(&h->css, 0, sizeof(h->css));
        h->js_open = t == WA_T_SCRIPT && h->scripts && !h->links && wa_script_is_js(h);
        h->js_fed = 0;
    } else if (raw == 2) {
        h->state = S_PLAINTEXT;
    }
    if (h->links) rc = wa_links_tag(h, t, gt);
    else if (h->nattrs) rc = wa_rewrite_tag(h, t);
    return rc;
}

/* The end tag of the raw text element h->raw_tag from `from`: the index of its '<', or wn;
 * *partial: a '<' near the end that may start it once more bytes come (wn when none). */
static size_t wa_raw_end(const wa_html *h, size_t from, size_t *partial) {
    const char *name = wa_tag_names[h->raw_tag];
    size_t nl = strlen(name), i = from, wn = h->wn;
    const uint8_t *w = h->w;
    *partial = wn;
    while (i < wn) {
        const uint8_t *lt = (const uint8_t *)memchr(w + i, '<', wn - i);
        size_t j, k;
        if (!lt) break;
        j = (size_t)(lt - w);
        if (j + 2 + nl >= wn) {       /* too few bytes to know */
            if (!h->final) {
                size_t m = wn - j;
                int may = 1;
                if (m >= 2 && w[j + 1] != '/') may = 0;
                for (k = 0; may && k + 2 < m && k < nl; k++)
                    if (wa_lower(w[j + 2 + k]) != (uint8_t)name[k]) may = 0;
                if (may) {
                    *partial = j;
                    return wn;
                }
            }
            i = j + 1;
            continue;
        }
        if (w[j + 1] == '/') {
            for (k = 0; k < nl; k++)
                if (wa_lower(w[j + 2 + k]) != (uint8_t)name[k]) break;
            if (k == nl) {
                uint8_t c = w[j + 2 + nl];
                if (wa_html_ws(c) || c == '/' || c == '>') return j;
            }
        }
        i = j + 1;
    }
    return wn;
}

/* Byte classes of the tag states. */
enum { WA_C_WS = 1, WA_C_SLASH = 2, WA_C_GT = 4, WA_C_EQ = 8 };

static void wa_tag_class_init(void) {
    wa_tag_class[' '] = wa_tag_class['\t'] = wa_tag_class['\n'] = wa_tag_class['\r'] = wa_tag_class['\f'] = WA_C_WS;
    wa_tag_class['/'] = WA_C_SLASH;
    wa_tag_class['>'] = WA_C_GT;
    wa_tag_class['='] = WA_C_EQ;
}

/* The whole tag whose name starts at i, when the window holds all of it: the same automaton as
 * the states S_TAG_NAME..S_SELF_CLOSING, without their bookkeeping. Returns the index after its
 * '>' (attributes in h->attrs, name end in h->name_e), or 0 when the window ends first (the
 * caller then runs the states from the start of the tag). */
static size_t wa_tag_fast(wa_html *h, size_t i) {
    const uint8_t *w = h->w;
    size_t n = h->wn, j = i;
    while (j < n && !(wa_tag_class[w[j]] & (WA_C_WS | WA_C_SLASH | WA_C_GT))) j++;
    if (j >= n) return 0;
    h->name_e = j;
    for (;;) {
        uint8_t c, k;
        wa_attr *a;
        if (j >= n) return 0;
        c = w[j];
        k = wa_tag_class[c];
        if (k & WA_C_WS) { j++; continue; }
        if (k & WA_C_GT) return j + 1;
        if (k & WA_C_SLASH) {
            if (j + 1 >= n) return 0;
            j++;
            if (w[j] == '>') return j + 1;
            continue;
        }
        if (wa_attr_push(h, j)) return 0;
        a = &h->attrs[h->nattrs - 1];
        j++;
        while (j < n && !(wa_tag_class[w[j]] & (WA_C_WS | WA_C_SLASH | WA_C_GT | WA_C_EQ))) j++;
        if (j >= n) return 0;
        a->ne = j;
        while (j < n && (wa_tag_class[w[j]] & WA_C_WS)) j++;
        if (j >= n) return 0;
        if (w[j] != '=') continue;
        j++;
        while (j < n && (wa_tag_class[w[j]] & WA_C_WS)) j++;
        if (j >= n) return 0;
        a->has_val = 1;
        c = w[j];
        if (c == '"' || c == '\'') {
            const uint8_t *e = (const uint8_t *)memchr(w + j + 1, c, n - j - 1);
            if (!e) return 0;
            a->quote = c;
            a->vs = j + 1;
            a->ve = (size_t)(e - w);
            j = a->ve + 1;
            continue;
        }
        if (c == '>') {
            a->vs = a->ve = j;
            return j + 1;
        }
        a->vs = j;
        while (j < n && !(wa_tag_class[w[j]] & (WA_C_WS | WA_C_GT))) j++;
        if (j >= n) return 0;
        a->ve = j;
    }
}

/* Scan the window from h->pos. Returns WA_OK when the window is done (h->pos == wn or at a held
 * construct), WA_DONE when a construct completed with edits to write (h->emitting set), WA_NEED, or
 * an error. */
static int wa_tokenize(wa_html *h) {
    const uint8_t *w = h->w;
    size_t n = h->wn, i = h->pos;
    int rc;
    for (;;) {
        switch (h->state) {
        case S_DATA: {
            const uint8_t *lt;
            uint8_t c;
            if (i >= n) goto out;
            lt = (const uint8_t *)memchr(w + i, '<', n - i);
            if (!lt) {
                i = n;
                goto out;
            }
            i = (size_t)(lt - w);
            if (i + 1 >= n) {
                if (h->final) i = n;
                goto out;                       /* held: '<' and what follows */
            }
            c = w[i + 1];
            h->tok = i;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
                size_t e;
                h->end_tag = 0;
                h->name_s = i + 1;
                h->nattrs = 0;
                e = wa_tag_fast(h, i + 2);
                if (e) {
                    i = e;
                    goto tag_done;
                }
                h->nattrs = 0;
                h->state = S_TAG_NAME;
                i += 2;
                continue;
            }
            if (c == '/') {
                uint8_t d;
                if (i + 2 >= n) {
                    if (h->final) i = n;
                    goto out;
                }
                d = w[i + 2];
                if ((d >= 'a' && d <= 'z') || (d >= 'A' && d <= 'Z')) {
                    size_t e;
                    h->end_tag = 1;
                    h->name_s = i + 2;
                    h->nattrs = 0;
                    e = wa_tag_fast(h, i + 3);
                    if (e) {
                        i = e;
                        goto tag_done;
                    }
                    h->nattrs = 0;
                    h->state = S_TAG_NAME;
                    i += 3;
                    continue;
                }
                if (d == '>') {
                    i += 3;
                    continue;
                }
                h->state = S_BOGUS;
                i += 2;
                continue;
            }
            if (c == '!') {
                if (i + 4 > n && !h->final) {
                    size_t m = n - i;
                    if (memcmp(w + i, "<!--", m) == 0) goto out;   /* maybe a comment: wait */
                }
                if (i + 4 <= n && w[i + 2] == '-' && w[i + 3] == '-') {
                    h->state = S_COMMENT;
                    h->raw_scan = i + 4;
                    i += 4;
                    continue;
                }
                h->state = S_BOGUS;
                i += 2;
                continue;
            }
            if (c == '?') {
                h->state = S_BOGUS;
                i += 2;
                continue;
            }
            i += 1;
            continue;
        }
        case S_COMMENT: {
            size_t s = h->tok + 4, k;
            if (s < n && w[s] == '>') {            /* <!--> */
                i = s + 1;
                h->state = S_DATA;
                continue;
            }
            if (s + 1 < n && w[s] == '-' && w[s + 1] == '>') {   /* <!---> */
                i = s + 2;
                h->state = S_DATA;
                continue;
            }
            if (s + 1 >= n && !h->final) goto out;
            k = h->raw_scan > s ? h->raw_scan : s;
            for (;;) {
                const uint8_t *d = k < n ? (const uint8_t *)memchr(w + k, '-', n - k) : NULL;
                if (!d) {
                    if (h->final) {
                        i = n;
                        h->state = S_DATA;
                        goto out;
                    }
                    h->raw_scan = n;
                    goto out;
                }
                k = (size_t)(d - w);
                if (k + 2 < n && w[k + 1] == '-' && w[k + 2] == '>') {
                    i = k + 3;
                    break;
                }
                if (k + 3 < n && w[k + 1] == '-' && w[k + 2] == '!' && w[k + 3] == '>') {
                    i = k + 4;
                    break;
                }
                if (k + 3 >= n && !h->final) {
                    h->raw_scan = k;
                    goto out;
                }
                k++;
            }
            h->state = S_DATA;
            continue;
        }
        case S_BOGUS: {
            const uint8_t *gt = i < n ? (const uint8_t *)memchr(w + i, '>', n - i) : NULL;
            if (!gt) {
                if (h->final) {
                    i = n;
                    h->state = S_DATA;
                }
                else i = n;
                goto out;
            }
            i = (size_t)(gt - w) + 1;
            h->state = S_DATA;
            continue;
        }
        case S_TAG_NAME:
            while (i < n) {
                uint8_t c = w[i];
                if (wa_html_ws(c)) { h->name_e = i; h->state = S_BEFORE_ATTR; i++; break; }
                if (c == '/') { h->name_e = i; h->state = S_SELF_CLOSING; i++; break; }
                if (c == '>') { h->name_e = i; i++; goto tag_done; }
                i++;
            }
            if (i >= n && h->state == S_TAG_NAME) goto cut;
            continue;
        case S_BEFORE_ATTR:
            while (i < n && wa_html_ws(w[i])) i++;
            if (i >= n) goto cut;
            if (w[i] == '/' || w[i] == '>') {
                h->state = S_AFTER_ATTR_NAME;
                continue;
            }
            if ((rc = wa_attr_push(h, i)) != 0) return rc;
            h->state = S_ATTR_NAME;
            i++;            /* a first '=' belongs to the name */
            continue;
        case S_ATTR_NAME:
            while (i < n) {
                uint8_t c = w[i];
                if (wa_html_ws(c) || c == '/' || c == '>') { h->attrs[h->nattrs - 1].ne = i; h->state = S_AFTER_ATTR_NAME; break; }
                if (c == '=') { h->attrs[h->nattrs - 1].ne = i; h->state = S_BEFORE_VAL; i++; break; }
                i++;
            }
            if (i >= n && h->state == S_ATTR_NAME) goto cut;
            continue;
        case S_AFTER_ATTR_NAME:
            while (i < n && wa_html_ws(w[i])) i++;
            if (i >= n) goto cut;
            if (w[i] == '/') { h->state = S_SELF_CLOSING; i++; continue; }
            if (w[i] == '=') { h->state = S_BEFORE_VAL; i++; continue; }
            if (w[i] == '>') { i++; goto tag_done; }
            if ((rc = wa_attr_push(h, i)) != 0) return rc;
            h->state = S_ATTR_NAME;
            i++;
            continue;
        case S_BEFORE_VAL: {
            wa_attr *a = &h->attrs[h->nattrs - 1];
            while (i < n && wa_html_ws(w[i])) i++;
            if (i >= n) goto cut;
            a->has_val = 1;
            if (w[i] == '"') { a->quote = '"'; a->vs = i + 1; h->state = S_VAL_DQ; i++; continue; }
            if (w[i] == '\'') { a->quote = '\''; a->vs = i + 1; h->state = S_VAL_SQ; i++; continue; }
            if (w[i] == '>') { a->vs = a->ve = i; i++; goto tag_done; }
            a->quote = 0;
            a->vs = i;
            h->state = S_VAL_UNQ;
            continue;
        }
        case S_VAL_DQ:
        case S_VAL_SQ: {
            uint8_t q = h->state == S_VAL_DQ ? '"' : '\'';
            const uint8_t *e = i < n ? (const uint8_t *)memchr(w + i, q, n - i) : NULL;
            if (!e) {
                i = n;
                goto cut;
            }
            i = (size_t)(e - w);
            h->attrs[h->nattrs - 1].ve = i;
            h->state = S_AFTER_VAL;
            i++;
            continue;
        }
        case S_VAL_UNQ:
            while (i < n) {
                uint8_t c = w[i];
                if (wa_html_ws(c)) { h->attrs[h->nattrs - 1].ve = i; h->state = S_BEFORE_ATTR; i++; break; }
                if (c == '>') { h->attrs[h->nattrs - 1].ve = i; i++; goto tag_done; }
                i++;
            }
            if (i >= n && h->state == S_VAL_UNQ) goto cut;
            continue;
        case S_AFTER_VAL:
            if (i >= n) goto cut;
            if (wa_html_ws(w[i])) { h->state = S_BEFORE_ATTR; i++; continue; }
            if (w[i] == '/') { h->state = S_SELF_CLOSING; i++; continue; }
            if (w[i] == '>') { i++; goto tag_done; }
            h->state = S_BEFORE_ATTR;
            continue;
        case S_SELF_CLOSING:
            if (i >= n) goto cut;
            if (w[i] == '>') { i++; goto tag_done; }
            h->state = S_BEFORE_ATTR;
            continue;
        case S_RAW:
        case S_CSS: {
            size_t end, partial, stop, limit;
            int style = h->state == S_CSS || h->raw_tag == WA_T_STYLE, fin;
            if (h->state == S_CSS) {
                end = n;
                partial = n;
                fin = h->final;
            } else {
                end = wa_raw_end(h, h->raw_scan, &partial);
                fin = end < n || h->final;
                if (end >= n) h->raw_scan = partial < n ? partial : n;
            }
            limit = end < partial ? end : partial;
            if (style) {
                wa_view v;
                v.p = w;
                v.n = n;
                v.map = NULL;
                v.base = 0;
                v.actx = WA_CTX_TEXT;
                h->nedits = 0;
                h->arena.len = 0;
                if (h->css_seen != n) {
                    rc = wa_css_urls(h, &v, h->css_pos, limit, fin && limit == end, &h->css, &stop,
                                     (uint8_t)(h->state == S_CSS ? WA_LW_CSS : WA_LW_STYLE_EL));
                    if (rc) return rc;
                    h->css_pos = stop;
                    h->css_seen = n;
                }
            } else if (h->js_open) {       /* a script's next piece, to the caller */
                h->nedits = 0;
                h->arena.len = 0;
                if (limit > h->css_pos || (fin && h->js_fed)) {
                    if ((rc = wa_edit_slow(h, h->css_pos, limit, 0, 0, (uint8_t)fin, WA_REQ_SCRIPT)) != 0) return rc;
                    h->js_fed = 1;
                }
                if (fin) h->js_open = 0;
                h->css_pos = limit;
            } else {
                h->css_pos = limit;
            }
            if (end < n) {                 /* the end tag: read as a tag */
                h->tok = end;
                h->end_tag = 1;
                h->name_s = end + 2;
                h->nattrs = 0;
                h->state = S_TAG_NAME;
                i = end + 2 + strlen(wa_tag_names[h->raw_tag]);
            } else {
                i = n;
                if (h->final) h->state = h->state == S_CSS ? S_CSS : S_DATA;
            }
            if (h->nedits && !h->links) {
                h->pos = i;
                h->emitting = 1;
                h->next_edit = 0;
                return WA_DONE;
            }
            if (end < n) continue;
            goto out;
        }
        case S_PLAINTEXT:
            i = n;
            goto out;
        }
    tag_done:
        h->pos = i;
        h->nedits = 0;
        h->arena.len = 0;
        rc = wa_on_tag(h, i);
        if (rc == WA_NEED) return rc;
        if (rc) return rc;
        if (h->nedits) {
            h->emitting = 1;
            h->next_edit = 0;
            return WA_DONE;
        }
        continue;
    cut:
        if (h->final) {                     /* a tag cut by the end of the document: as it is */
            i = n;
            h->state = S_DATA;
        }
        goto out;
    }
out:
    h->pos = i;
    return WA_OK;
}

/* The first byte to hold at the end of the window. */
static size_t wa_keep(const wa_html *h) {
    if (h->final) return h->wn;
    switch (h->state) {
    case S_DATA:
        return h->pos;
    case S_PLAINTEXT:
        return h->wn;
    case S_RAW:
    case S_CSS: {
        size_t k = h->css_pos;
        if (h->state == S_RAW && h->raw_scan < k) k = h->raw_scan;
        return k;
    }
    default:
        return h->tok;
    }
}

/* Write edits from h->next_edit; WA_NEED when one needs the caller (h->req set). */
static int wa_emit(wa_html *h) {
    while (h->next_edit < h->nedits) {
        const wa_edit *e = &h->edits[h->next_edit];
        if (e->s > h->emit && wa_bytes_put(&h->out, h->w + h->emit, e->s - h->emit)) return WA_E_NOMEM;
        if (e->s > h->emit) h->emit = e->s;
        if (e->slow) {
            h->req = e->kind;
            h->req_s = e->s;
            h->req_e = e->e;
            h->req_ctx = e->ctx;
            h->req_slot = e->slot;
            h->req_force = e->force;
            return WA_NEED;
        }
        if (wa_bytes_put(&h->out, h->arena.p + e->off, e->len)) return WA_E_NOMEM;
        h->emit = e->e;
        h->next_edit++;
    }
    h->emitting = 0;
    h->nedits = 0;
    h->arena.len = 0;
    return WA_OK;
}

/* The caller's answer to the pending request: p[0..n) replaces the request's bytes, or (keep)
 * they stay. Then wa_html_continue. */
static int wa_html_answer(wa_html *h, const uint8_t *p, size_t n, int keep) {
    int req = h->req;
    h->req = 0;
    if (req == WA_REQ_LINKBASE) return WA_OK;
    if (!keep && wa_bytes_put(&h->out, p, n)) return WA_E_NOMEM;
    if (keep && wa_bytes_put(&h->out, h->w + h->req_s, h->req_e - h->req_s)) return WA_E_NOMEM;
    h->emit = h->req_e;
    h->next_edit++;
    return WA_OK;
}

/* Hold what the next chunk needs, write the rest. */
static int wa_finish_window(wa_html *h) {
    size_t k = wa_keep(h), i, rest;
    if (k > h->wn) k = h->wn;
    if (!h->links && k > h->emit && wa_bytes_put(&h->out, h->w + h->emit, k - h->emit)) return WA_E_NOMEM;
    rest = h->wn - k;
    if (h->w == h->hold.p) {
        if (k) memmove(h->hold.p, h->hold.p + k, rest);
        h->hold.len = rest;
    } else {
        h->hold.len = 0;
        if (wa_bytes_put(&h->hold, h->w + k, rest)) return WA_E_NOMEM;
    }
    h->pos -= k;
    h->tok = h->tok >= k ? h->tok - k : 0;
    h->emit = 0;
    h->name_s = h->name_s >= k ? h->name_s - k : 0;
    h->name_e = h->name_e >= k ? h->name_e - k : 0;
    h->raw_scan = h->raw_scan >= k ? h->raw_scan - k : 0;
    h->css_pos = h->css_pos >= k ? h->css_pos - k : 0;
    h->css_seen = 0;
    for (i = 0; i < h->nattrs; i++) {
        wa_attr *a = &h->attrs[i];
        a->ns = a->ns >= k ? a->ns - k : 0;
        a->ne = a->ne >= k ? a->ne - k : 0;
        a->vs = a->vs >= k ? a->vs - k : 0;
        a->ve = a->ve >= k ? a->ve - k : 0;
    }
    h->w = NULL;
    h->wn = 0;
    return WA_OK;
}

/* Go on after a request was answered (or from wa_html_feed). WA_OK: the window is done (output
 * in h->out, links in h->lk); WA_NEED: a request (h->req); < 0: an error. */
static int wa_html_continue(wa_html *h) {
    int rc;
    for (;;) {
        if (h->emitting) {
            rc = wa_emit(h);
            if (rc) return rc;
        }
        if (h->links_pending) {
            int t = h->links_pending - 1;
            h->links_pending = 0;
            if ((rc = wa_links_rest(h, t)) != 0) return rc;
        }
        rc = wa_tokenize(h);
        if (rc == WA_DONE) continue;
        if (rc == WA_NEED) return rc;
        if (rc) return rc;
        return wa_finish_window(h);
    }
}

/* Feed p[0..n) (final: the document ends with it). */
static int wa_html_feed(wa_html *h, const uint8_t *p, size_t n, int final) {
    if (!h->links && h->out.cap < h->out.len + n + n / 16 + 256 && wa_bytes_reserve(&h->out, n + n / 16 + 256))
        return WA_E_NOMEM;   /* room for the output at once: rewritten pages grow by a few per cent */
    if (h->hold.len) {
        if (wa_bytes_put(&h->hold, p, n)) return WA_E_NOMEM;
        h->w = h->hold.p;
        h->wn = h->hold.len;
    } else {
        h->w = p;
        h->wn = n;
    }
    h->final = final;
    return wa_html_continue(h);
}

/* A new base (the <base href> as the caller resolved it). */
static int wa_html_set_base(wa_html *h, const uint8_t *p, size_t n) {
    return wa_urlbase_set(&h->rw.base, p, n);
}

#endif
