/* wa_sort.h -- sort lines bytewise in memory, and merge sorted streams of lines.
 *
 * Two jobs, both for `warchive sort` / `warchive merge` (src/warchive/index/sort.py):
 *
 * 1. wa_sort_lines: the complete lines of one buffer (a run of an external sort)
 *    are indexed as 16-byte records {8-byte key, offset, length} and sorted with
 *    a caching multikey quicksort: records are partitioned on 8 bytes of the
 *    line at the current depth (kept big-endian in the record, so partitioning
 *    walks the record array, not the lines), and a group whose 8 bytes are all
 *    equal goes 8 bytes deeper. Index lines share long prefixes (SURT keys of
 *    one host), which is where comparison sorts pay for memcmp from byte 0.
 *    Two threads may sort the two halves; the halves are merged as they are
 *    written.
 *
 * 2. wa_merge: a k-way merge (binary heap) of sources read through a callback,
 *    lines written through a callback, identical lines written once. Each
 *    source can be checked to be sorted; the first line that sorts before the
 *    line above it stops the merge with WA_E_UNSORTED and its line number.
 *
 * Order is memcmp order, shorter first on a common prefix: LC_ALL=C sort.
 * A line is the bytes before LF; empty lines are dropped; a last line without
 * LF counts as a line. Nothing here calls Python; callbacks may.
 * Failure contract: functions return WA_OK or a negative status; on error
 * nothing is left allocated except what the caller frees (wa_merge_free).
 */
#ifndef WA_SORT_H
#define WA_SORT_H

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "wa_common.h"

#define WA_SORT_MAX_LINE ((size_t)1 << 30)

typedef struct {
    uint64_t key;     /* 8 bytes of the line at the current depth, big-endian, zero-padded */
    uint32_t off;     /* line start in the buffer */
    uint32_t len;     /* line length without LF */
} wa_line;

/* --- output: a buffer flushed through a callback, dropping repeated lines --- */

/* Write n bytes somewhere; return 0, or -1 (the callback keeps the reason). */
typedef int (*wa_write_fn)(void *ctx, const uint8_t *p, size_t n);

typedef struct {
    wa_write_fn write;
    void *ctx;
    uint8_t *buf;
    size_t len, cap;
    uint8_t *last;       /* copy of the last line written, for dropping repeats */
    size_t last_len, last_cap;
    int has_last;
    uint64_t lines;      /* lines written */
    uint64_t dropped;    /* repeated lines dropped */
} wa_out;

static int wa_out_init(wa_out *o, wa_write_fn fn, void *ctx, size_t cap) {
    memset(o, 0, sizeof(*o));
    o->write = fn;
    o->ctx = ctx;
    o->cap = cap < 4096 ? 4096 : cap;
    o->buf = (uint8_t *)malloc(o->cap);
    o->last_cap = 256;
    o->last = (uint8_t *)malloc(o->last_cap);
    if (!o->buf || !o->last) {
        free(o->buf);
        free(o->last);
        o->buf = o->last = NULL;
        return WA_E_NOMEM;
    }
    return WA_OK;
}

static void wa_out_free(wa_out *o) {
    free(o->buf);
    free(o->last);
    o->buf = o->last = NULL;
}

static int wa_out_flush(wa_out *o) {
    if (o->len && o->write(o->ctx, o->buf, o->len) != 0) return WA_E_CALLBACK;
    o->len = 0;
    return WA_OK;
}

static int wa_out_remember(wa_out *o, const uint8_t *p, size_t n) {
    if (wa_grow(&o->last, &o->last_cap, n, 256)) return WA_E_NOMEM;
    memcpy(o->last, p, n);
    o->last_len = n;
    o->has_last = 1;
    return WA_OK;
}

/* Append line p[0:n) and LF unless it equals the last line written. */
static inline int wa_out_line(wa_out *o, const uint8_t *p, size_t n) {
    int rc;
    if (o->has_last && n == o->last_len && memcmp(p, o->last, n) == 0) {
        o->dropped++;
        return WA_OK;
    }
    if ((rc = wa_out_remember(o, p, n)) != WA_OK) return rc;
    if (WA_UNLIKELY(o->len + n + 1 > o->cap)) {
        if ((rc = wa_out_flush(o)) != WA_OK) return rc;
        if (n + 1 > o->cap) {   /* a line longer than the buffer goes straight through */
            if (o->write(o->ctx, p, n) != 0 || o->write(o->ctx, (const uint8_t *)"\n", 1) != 0)
                return WA_E_CALLBACK;
            o->lines++;
            return WA_OK;
        }
    }
    memcpy(o->buf + o->len, p, n);
    o->buf[o->len + n] = '\n';
    o->len += n + 1;
    o->lines++;
    return WA_OK;
}

/* A wa_write_fn for a file descriptor (no Python: usable with the GIL released). */
static int wa_write_fd(void *ctx, const uint8_t *p, size_t n) {
    int fd = *(int *)ctx;
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* --- in-memory sort --- */

static inline uint64_t wa_key8(const uint8_t *p, size_t len, size_t d) {
    if (WA_LIKELY(len >= d + 8)) {
        uint64_t k;
        memcpy(&k, p + d, 8);
        return __builtin_bswap64(k);
    }
    uint64_t k = 0;
    for (size_t i = d; i < len; i++) k |= (uint64_t)p[i] << (56 - 8 * (i - d));
    return k;
}

/* Compare two lines that are equal before depth d, keys loaded at depth d. */
static inline int wa_cmp_at(const uint8_t *base, const wa_line *x, const wa_line *y, size_t d) {
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    size_t d8 = d + 8;
    if (x->len > d8 && y->len > d8) {
        size_t m = (x->len < y->len ? x->len : y->len) - d8;
        int c = memcmp(base + x->off + d8, base + y->off + d8, m);
        if (c) return c;
    }
    /* equal up to the shorter length (zero padding of the key included): shorter first */
    return (x->len > y->len) - (x->len < y->len);
}

static void wa_isort(const uint8_t *base, wa_line *a, size_t n, size_t d) {
    for (size_t i = 1; i < n; i++) {
        wa_line t = a[i];
        size_t j = i;
        while (j > 0 && wa_cmp_at(base, &t, &a[j - 1], d) < 0) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = t;
    }
}

static void wa_sift(const uint8_t *base, wa_line *a, size_t i, size_t n, size_t d) {
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) return;
        if (c + 1 < n && wa_cmp_at(base, &a[c], &a[c + 1], d) < 0) c++;
        if (wa_cmp_at(base, &a[i], &a[c], d) >= 0) return;
        wa_line t = a[i]; a[i] = a[c]; a[c] = t;
        i = c;
    }
}

/* Fallback when pivots keep failing: heapsort, O(n log n) whatever the input. */
static void wa_hsort(const uint8_t *base, wa_line *a, size_t n, size_t d) {
    for (size_t i = n / 2; i-- > 0;) wa_sift(base, a, i, n, d);
    for (size_t k = n; k-- > 1;) {
        wa_line t = a[0]; a[0] = a[k]; a[k] = t;
        wa_sift(base, a, 0, k, d);
    }
}

static inline uint64_t wa_med3(uint64_t a, uint64_t b, uint64_t c) {
    if (a < b) return b < c ? b : (a < c ? c : a);
    return a < c ? a : (b < c ? c : b);
}

/* Caching multikey quicksort; a[i].key holds the 8 bytes at depth d. */
static void wa_mkqs(const uint8_t *base, wa_line *a, size_t n, size_t d, int budget) {
    while (n > 1) {
        if (n < 24) { wa_isort(base, a, n, d); return; }
        if (budget-- <= 0) { wa_hsort(base, a, n, d); return; }
        uint64_t piv;
        if (n > 256) {
            size_t s = n / 8;
            piv = wa_med3(wa_med3(a[0].key, a[s].key, a[2 * s].key),
                          wa_med3(a[3 * s].key, a[4 * s].key, a[5 * s].key),
                          wa_med3(a[6 * s].key, a[7 * s].key, a[n - 1].key));
        } else {
            piv = wa_med3(a[0].key, a[n / 2].key, a[n - 1].key);
        }
        /* Dijkstra 3-way partition on the cached keys: [0,lt) < piv, [lt,gt) == piv, [gt,n) > piv */
        size_t lt = 0, i = 0, gt = n;
        while (i < gt) {
            uint64_t k = a[i].key;
            if (k < piv) { wa_line t = a[lt]; a[lt] = a[i]; a[i] = t; lt++; i++; }
            else if (k > piv) { gt--; wa_line t = a[gt]; a[gt] = a[i]; a[i] = t; }
            else i++;
        }
        wa_mkqs(base, a, lt, d, budget);
        wa_mkqs(base, a + gt, n - gt, d, budget);
        /* The equal group: lines ending within these 8 bytes are prefixes of the
           longer ones, shortest first; the rest go 8 bytes deeper. */
        wa_line *e = a + lt;
        size_t ne = gt - lt, nend = 0;
        size_t d8 = d + 8;
        for (size_t j = 0; j < ne; j++) {
            if (e[j].len <= d8) { wa_line t = e[nend]; e[nend] = e[j]; e[j] = t; nend++; }
        }
        if (nend > 1) {
            size_t pos = 0;  /* at most 9 distinct lengths: d..d+8 */
            for (size_t L = d; L <= d8 && pos < nend; L++) {
                for (size_t j = pos; j < nend; j++) {
                    if (e[j].len == L) { wa_line t = e[pos]; e[pos] = e[j]; e[j] = t; pos++; }
                }
            }
        }
        a = e + nend;
        n = ne - nend;
        d = d8;
        for (size_t j = 0; j < n; j++) a[j].key = wa_key8(base + a[j].off, a[j].len, d);
        budget = 2 * 64;
    }
}

/* Count the lines of buf[0:n) (n ends at an LF, or at the end of input). */
static size_t wa_count_lines(const uint8_t *buf, size_t n) {
    size_t c = 0;
    const uint8_t *p = buf, *end = buf + n;
    while (p < end) {
        const uint8_t *q = (const uint8_t *)memchr(p, '\n', (size_t)(end - p));
        if (!q) { c++; break; }
        c++;
        p = q + 1;
    }
    return c;
}

/* Index up to cap non-empty lines of buf[0:n) into a; *used = bytes they span
   (through their LF). Returns the number of records. */
static size_t wa_index_lines(const uint8_t *buf, size_t n, wa_line *a, size_t cap, size_t *used) {
    size_t c = 0;
    const uint8_t *p = buf, *end = buf + n;
    while (p < end && c < cap) {
        const uint8_t *q = (const uint8_t *)memchr(p, '\n', (size_t)(end - p));
        size_t len = q ? (size_t)(q - p) : (size_t)(end - p);
        if (len) {
            a[c].off = (uint32_t)(p - buf);
            a[c].len = (uint32_t)len;
            a[c].key = wa_key8(p, len, 0);
            c++;
        }
        p = q ? q + 1 : end;
    }
    *used = (size_t)(p - buf);
    return c;
}

typedef struct { const uint8_t *base; wa_line *a; size_t n; } wa_sort_job;

static void *wa_sort_thread(void *arg) {
    wa_sort_job *j = (wa_sort_job *)arg;
    wa_mkqs(j->base, j->a, j->n, 0, 2 * 64);
    return NULL;
}

static inline int wa_cmp_full(const uint8_t *base, const wa_line *x, const wa_line *y) {
    size_t m = x->len < y->len ? x->len : y->len;
    int c = memcmp(base + x->off, base + y->off, m);
    if (c) return c;
    return (x->len > y->len) - (x->len < y->len);
}

/* Sort the n records of a (indexing base) and write them to o, repeats once.
   threads == 2 sorts the halves in two threads and merges them while writing. */
static int wa_sort_lines(const uint8_t *base, wa_line *a, size_t n, int threads, wa_out *o) {
    int rc = WA_OK;
    if (threads < 2 || n < 65536) {
        wa_mkqs(base, a, n, 0, 2 * 64);
        for (size_t i = 0; i < n && rc == WA_OK; i++) rc = wa_out_line(o, base + a[i].off, a[i].len);
        return rc;
    }
    size_t h = n / 2;
    wa_sort_job job = {base, a, h};
    pthread_t t;
    int spawned = pthread_create(&t, NULL, wa_sort_thread, &job) == 0;
    if (!spawned) wa_sort_thread(&job);
    wa_mkqs(base, a + h, n - h, 0, 2 * 64);
    if (spawned) pthread_join(t, NULL);
    size_t i = 0, j = h;
    while (rc == WA_OK && (i < h || j < n)) {
        wa_line *x;
        if (j >= n || (i < h && wa_cmp_full(base, &a[i], &a[j]) <= 0)) x = &a[i++];
        else x = &a[j++];
        rc = wa_out_line(o, base + x->off, x->len);
    }
    return rc;
}

/* --- k-way merge of sorted sources --- */

/* Read up to n bytes into dst; *got = 0 at the end. Return 0, or -1 (callback keeps why). */
typedef int (*wa_fill_fn)(void *ctx, uint8_t *dst, size_t n, size_t *got);

typedef struct {
    wa_fill_fn fill;
    void *ctx;
    uint8_t *buf;
    size_t cap, end;        /* buf[0:end) holds data */
    size_t pos;             /* start of the next unread line */
    size_t cur, cur_len;    /* the current line (the source's head) */
    size_t prev, prev_len;  /* the line before it, kept for the order check */
    int has_prev;
    int eof;
    uint64_t key;           /* first 8 bytes of the current line */
    uint64_t lineno;        /* line number of the current line (1-based, empty lines counted) */
} wa_msrc;

typedef struct {
    wa_msrc *src;
    size_t n;
    size_t *heap;           /* indices of sources that have a current line */
    size_t nheap;
    int check;              /* verify that every source is sorted */
    /* set with WA_E_UNSORTED / WA_E_TOO_BIG: */
    size_t bad_src;
    uint64_t bad_lineno;
} wa_merge;

static int wa_merge_init(wa_merge *m, size_t n, size_t bufcap, int check) {
    memset(m, 0, sizeof(*m));
    m->src = (wa_msrc *)calloc(n ? n : 1, sizeof(wa_msrc));
    m->heap = (size_t *)calloc(n ? n : 1, sizeof(size_t));
    if (!m->src || !m->heap) return WA_E_NOMEM;
    m->n = n;
    m->check = check;
    for (size_t i = 0; i < n; i++) {
        m->src[i].cap = bufcap < 256 ? 256 : bufcap;
        m->src[i].buf = (uint8_t *)malloc(m->src[i].cap);
        if (!m->src[i].buf) return WA_E_NOMEM;
    }
    return WA_OK;
}

static void wa_merge_free(wa_merge *m) {
    if (m->src) for (size_t i = 0; i < m->n; i++) free(m->src[i].buf);
    free(m->src);
    free(m->heap);
    m->src = NULL;
    m->heap = NULL;
}

static inline int wa_msrc_cmp(const wa_msrc *x, const wa_msrc *y) {
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    size_t m = x->cur_len < y->cur_len ? x->cur_len : y->cur_len;
    int c = memcmp(x->buf + x->cur, y->buf + y->cur, m);
    if (c) return c;
    return (x->cur_len > y->cur_len) - (x->cur_len < y->cur_len);
}

/* Make the next non-empty line current. 1: a line; 0: end; < 0: error. */
static int wa_msrc_next(wa_merge *m, size_t si) {
    wa_msrc *s = &m->src[si];
    if (s->cur_len) {  /* the current line becomes the previous one */
        s->prev = s->cur;
        s->prev_len = s->cur_len;
        s->has_prev = 1;
    }
    for (;;) {
        uint8_t *q = s->pos < s->end ? (uint8_t *)memchr(s->buf + s->pos, '\n', s->end - s->pos) : NULL;
        size_t start = s->pos, len;
        if (q) {
            len = (size_t)(q - (s->buf + start));
            s->pos = start + len + 1;
        } else if (s->eof) {
            if (s->pos >= s->end) { s->cur_len = 0; return 0; }
            len = s->end - start;   /* last line without LF */
            s->pos = s->end;
        } else {
            /* keep the previous line (order check) and the partial line; read more */
            size_t keep = s->has_prev && m->check ? s->prev : s->pos;
            if (keep > s->pos) keep = s->pos;
            if (keep) {
                memmove(s->buf, s->buf + keep, s->end - keep);
                s->end -= keep;
                s->pos -= keep;
                s->prev -= s->has_prev && m->check ? keep : 0;
            }
            if (s->end == s->cap) {
                if (s->cap >= WA_SORT_MAX_LINE) {
                    m->bad_src = si;
                    m->bad_lineno = s->lineno + 1;
                    return WA_E_TOO_BIG;
                }
                if (wa_grow(&s->buf, &s->cap, s->cap + 1, 4096)) return WA_E_NOMEM;   /* doubles it */
            }
            size_t got = 0;
            if (s->fill(s->ctx, s->buf + s->end, s->cap - s->end, &got) != 0) return WA_E_CALLBACK;
            if (got == 0) s->eof = 1;
            s->end += got;
            continue;
        }
        s->lineno++;
        if (len == 0) continue;
        if (len > WA_SORT_MAX_LINE) {
            m->bad_src = si;
            m->bad_lineno = s->lineno;
            return WA_E_TOO_BIG;
        }
        s->cur = start;
        s->cur_len = len;
        s->key = wa_key8(s->buf + start, len, 0);
        if (m->check && s->has_prev) {
            size_t mm = len < s->prev_len ? len : s->prev_len;
            int c = memcmp(s->buf + start, s->buf + s->prev, mm);
            if (c < 0 || (c == 0 && len < s->prev_len)) {
                m->bad_src = si;
                m->bad_lineno = s->lineno;
                return WA_E_UNSORTED;
            }
        }
        return 1;
    }
}

static void wa_heap_down(wa_merge *m, size_t i) {
    size_t n = m->nheap, *h = m->heap;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) return;
        if (c + 1 < n && wa_msrc_cmp(&m->src[h[c + 1]], &m->src[h[c]]) < 0) c++;
        if (wa_msrc_cmp(&m->src[h[c]], &m->src[h[i]]) >= 0) return;
        size_t t = h[i]; h[i] = h[c]; h[c] = t;
        i = c;
    }
}

/* Merge every source into o. Sources must have fill/ctx set. */
static int wa_merge_run(wa_merge *m, wa_out *o) {
    int rc;
    m->nheap = 0;
    for (size_t i = 0; i < m->n; i++) {
        rc = wa_msrc_next(m, i);
        if (rc < 0) return rc;
        if (rc == 1) m->heap[m->nheap++] = i;
    }
    for (size_t i = m->nheap / 2; i-- > 0;) wa_heap_down(m, i);
    while (m->nheap) {
        size_t si = m->heap[0];
        wa_msrc *s = &m->src[si];
        rc = wa_out_line(o, s->buf + s->cur, s->cur_len);
        if (rc != WA_OK) return rc;
        rc = wa_msrc_next(m, si);
        if (rc < 0) return rc;
        if (rc == 0) m->heap[0] = m->heap[--m->nheap];
        wa_heap_down(m, 0);
    }
    return wa_out_flush(o);
}

#endif /* WA_SORT_H */
