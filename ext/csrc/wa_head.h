/* wa_head.h -- fast parse of WARC and HTTP heads for the indexer's common case.
 *
 * The reference rules are warcio's (src/warchive/warc/headers.py): lines end at
 * LF, are decoded UTF-8-else-Latin-1 and right-stripped of Unicode whitespace,
 * continuation lines start with space or tab (a value folded onto them from an
 * empty first line loses its leading white space: WARC's grammar, where warcio
 * keeps it), a blank line ends the head. This
 * C parser follows them exactly for the lines it accepts and answers WA_SLOW for
 * anything it cannot decide byte-wise (control characters, continuation lines,
 * non-ASCII bytes in a field we use, a line that might be blank only after
 * decoding); the caller then parses that record with the Python reference.
 */
#ifndef WA_HEAD_H
#define WA_HEAD_H

#include "wa_common.h"

typedef struct {
    const uint8_t *p;
    uint32_t n;
} wa_span;

/* fields the indexer reads; first occurrence wins, as in warcio */
enum {
    WA_F_TYPE = 0,      /* WARC-Type */
    WA_F_URI,           /* WARC-Target-URI */
    WA_F_DATE,          /* WARC-Date */
    WA_F_CLEN,          /* Content-Length */
    WA_F_CTYPE,         /* Content-Type */
    WA_F_PDIGEST,       /* WARC-Payload-Digest */
    WA_F_COUNT
};

typedef struct {
    wa_span f[WA_F_COUNT];
    uint8_t have[WA_F_COUNT];
    int n_uri;          /* how many WARC-Target-URI fields (warcio rewrites the last one) */
    int nfields;        /* lines with a ':' after the first line (all of them, used or not) */
    size_t end;         /* bytes of the head, terminating blank line included */
    wa_span status;     /* first line, right-stripped */
    int empty;          /* no bytes at all */
} wa_head;

/* Byte classes: printable ASCII, and bytes whose meaning depends on decoding. */
static inline int wa_is_graph(uint8_t c) { return c > 0x20 && c < 0x7f; }

/* Does a field name (already right-stripped of spaces/tabs) match lowercase lit? */
static inline int wa_name_is(const uint8_t *p, size_t n, const char *lit, size_t ln) {
    return n == ln && wa_ieq(p, lit, ln);
}

/* Classify a field name of the WARC head. */
static inline int wa_warc_field(const uint8_t *p, size_t n) {
    switch (n) {
    case 9:
        if (wa_ieq(p, "warc-type", 9)) return WA_F_TYPE;
        if (wa_ieq(p, "warc-date", 9)) return WA_F_DATE;
        break;
    case 12:
        if (wa_ieq(p, "content-type", 12)) return WA_F_CTYPE;
        break;
    case 14:
        if (wa_ieq(p, "content-length", 14)) return WA_F_CLEN;
        break;
    case 15:
        if (wa_ieq(p, "warc-target-uri", 15)) return WA_F_URI;
        break;
    case 19:
        if (wa_ieq(p, "warc-payload-digest", 19)) return WA_F_PDIGEST;
        break;
    }
    return -1;
}

/* Classify a field name of an HTTP head: only Content-Type matters. */
static inline int wa_http_field(const uint8_t *p, size_t n) {
    if (n == 12 && wa_ieq(p, "content-type", 12)) return WA_F_CTYPE;
    return -1;
}

/* The line of a head that starts at p[i] (of p[0..n)): it ends at *le (its LF, or n) and the next
 * one starts at *next. WA_OK; WA_EOF when the line may go on past n (not `final`: give more
 * bytes); WA_DONE when the input ends at i (`final`: like a blank line, that ends the head). The
 * one line splitter of the head parsers: wa_parse_head and the warc_headers kernel's. */
static inline int wa_head_line(const uint8_t *p, size_t n, size_t i, int final, size_t *le, size_t *next) {
    if (i >= n) return final ? WA_DONE : WA_EOF;
    const uint8_t *nl = wa_find_nl(p + i, n - i);
    if (nl) {
        *le = (size_t)(nl - p);
        *next = *le + 1;
        return WA_OK;
    }
    if (!final) return WA_EOF;
    *le = n;
    *next = n;
    return WA_OK;
}

/* Parse the head at p[0..n). `final`: nothing follows p+n in this unit.
 * `http`: classify names with wa_http_field instead of wa_warc_field.
 * Returns WA_OK, WA_EOF (the head may continue past n: give more bytes) or WA_SLOW. */
static int wa_parse_head(const uint8_t *p, size_t n, int final, int http, wa_head *h) {
    memset(h, 0, sizeof(*h));
    size_t i = 0;
    int line_no = 0;
    if (n == 0) {
        if (!final) return WA_EOF;
        h->empty = 1;
        return WA_OK;
    }
    for (;;) {
        size_t ls = i, le = 0, next = 0;
        int r = wa_head_line(p, n, i, final, &le, &next);
        if (r == WA_EOF) return WA_EOF;
        if (r == WA_DONE) { /* input ends: like a blank line, it ends the head */
            h->end = n;
            return WA_OK;
        }
        /* right strip: CR and spaces (other whitespace is declined below) */
        size_t e = le;
        while (e > ls && (p[e - 1] == '\r' || p[e - 1] == ' ')) e--;
        if (e == ls) { /* blank line: the head ends */
            if (line_no == 0) {
                h->status.p = p + ls;
                h->status.n = 0;
            }
            h->end = next;
            return WA_OK;
        }
        /* A line that starts with a printable character can never be blank, and
         * what follows only matters in the status line and in fields we use
         * (checked there). Anything else (leading space/tab: continuation;
         * control or non-ASCII first byte: blank or not depends on decoding)
         * is left to the Python reference. */
        if (!wa_is_graph(p[ls])) return WA_SLOW;
        if (line_no == 0) {
            for (size_t k = ls; k < e; k++)
                if (p[k] < 0x20 || p[k] >= 0x7f) return WA_SLOW;
            h->status.p = p + ls;
            h->status.n = (uint32_t)(e - ls);
        } else {
            const uint8_t *colon = (const uint8_t *)memchr(p + ls, ':', e - ls);
            if (colon) {
                h->nfields++;
                size_t ne = (size_t)(colon - p);
                while (ne > ls && (p[ne - 1] == ' ' || p[ne - 1] == '\t')) ne--;
                int f = http ? wa_http_field(p + ls, ne - ls) : wa_warc_field(p + ls, ne - ls);
                if (f >= 0) {
                    size_t vs = (size_t)(colon - p) + 1;
                    while (vs < e && (p[vs] == ' ' || p[vs] == '\t')) vs++;
                    for (size_t k = vs; k < e; k++)
                        if (p[k] < 0x20 || p[k] >= 0x7f) return WA_SLOW; /* we output it: keep it plain */
                    if (f == WA_F_URI) h->n_uri++;
                    if (!h->have[f]) {
                        h->have[f] = 1;
                        h->f[f].p = p + vs;
                        h->f[f].n = (uint32_t)(e - vs);
                    }
                }
            }
        }
        line_no++;
        i = next;
    }
}

/* Is the stripped first line a WARC version line ("WARC/1.0" ...), as warcio accepts it? */
static inline int wa_is_warc_status(wa_span s) {
    static const char *const vers[4] = {"warc/1.1", "warc/1.0", "warc/0.17", "warc/0.18"};
    for (int k = 0; k < 4; k++) {
        size_t ln = strlen(vers[k]);
        if (s.n >= ln && wa_ieq(s.p, vers[k], ln)) return 1;
    }
    return 0;
}

/* Parse decimal digits only (no sign, no spaces); -1 when not that or too long. */
static inline int64_t wa_parse_u63(wa_span s) {
    if (s.n == 0 || s.n > 18) return -1;
    int64_t v = 0;
    for (uint32_t k = 0; k < s.n; k++) {
        if (s.p[k] < '0' || s.p[k] > '9') return -1;
        v = v * 10 + (s.p[k] - '0');
    }
    return v;
}

static inline int wa_d2(const uint8_t *p) {
    if (p[0] < '0' || p[0] > '9' || p[1] < '0' || p[1] > '9') return -1;
    return (p[0] - '0') * 10 + (p[1] - '0');
}

/* WARC-Date "YYYY-MM-DDThh:mm:ss[.fff...]Z" -> 14 digits in out; 0 ok, -1 when not
 * exactly that shape or not a valid date (the Python reference decides then). */
static int wa_warc_date_ts(wa_span s, uint8_t out[14]) {
    const uint8_t *p = s.p;
    if (s.n < 20) return -1;
    if (p[4] != '-' || p[7] != '-' || p[10] != 'T' || p[13] != ':' || p[16] != ':') return -1;
    if (p[s.n - 1] != 'Z') return -1;
    if (s.n > 20) {
        if (p[19] != '.' || s.n == 21) return -1;
        for (uint32_t k = 20; k < s.n - 1; k++)
            if (p[k] < '0' || p[k] > '9') return -1;
    }
    int c = wa_d2(p), y2 = wa_d2(p + 2), mo = wa_d2(p + 5), d = wa_d2(p + 8);
    int hh = wa_d2(p + 11), mi = wa_d2(p + 14), ss = wa_d2(p + 17);
    if (c < 0 || y2 < 0 || mo < 0 || d < 0 || hh < 0 || mi < 0 || ss < 0) return -1;
    int year = c * 100 + y2;
    if (year < 1000 || mo < 1 || mo > 12 || d < 1 || hh > 23 || mi > 59 || ss > 59) return -1;
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int md = mdays[mo - 1];
    if (mo == 2 && ((year % 4 == 0 && year % 100 != 0) || year % 400 == 0)) md = 29;
    if (d > md) return -1;
    memcpy(out, p, 4);
    memcpy(out + 4, p + 5, 2);
    memcpy(out + 6, p + 8, 2);
    memcpy(out + 8, p + 11, 2);
    memcpy(out + 10, p + 14, 2);
    memcpy(out + 12, p + 17, 2);
    return 0;
}

#endif
