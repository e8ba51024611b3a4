/* wa_common.h -- status codes and small helpers shared by the C cores of the kernels.
 *
 * Every function of the C cores returns one of these status codes: the one
 * enum of them all, each code with its own value. The kernels cimport them from
 * _lib/wa_common.pxd and turn a negative one into an exception at the `def`
 * edge with raise_status (ext/_status.pxd), the one table of code to exception. Nothing here may call into
 * Python or allocate on the hot path.
 */
#ifndef WA_COMMON_H
#define WA_COMMON_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum {
    /* outcomes (>= 0) */
    WA_OK = 0,
    WA_EOF = 1,              /* clean end of input */
    WA_SLOW = 2,             /* the fast path declines; the caller takes the general path */
    WA_SAME = 3,             /* wa_urlfast.h: the URL stays as it is */
    WA_DONE = 4,             /* wa_urlfast.h: the rewritten URL is in the output */
    WA_NEED = 5,             /* wa_html.h: a request waits for wa_html_answer */
    WA_SURT_NEED_IDNA = 6,   /* wa_surt.h: the host needs IDNA encoding (Python's codec) */
    WA_SURT_FAIL = 7,        /* wa_surt.h: the surt package raises for this URL */
    /* failures (< 0): the kernels' raise_status (ext/_status.pxd) names the exception of each */
    WA_E_IO = -1,            /* read error (errno kept by the source) */
    WA_E_NOMEM = -2,
    WA_E_GZIP_HEADER = -3,
    WA_E_DEFLATE = -4,       /* invalid deflate data in a gzip member */
    WA_E_CRC = -5,
    WA_E_ISIZE = -6,
    WA_E_TRUNCATED = -7,
    WA_E_FORMAT = -8,        /* the bytes of an index segment do not decode */
    WA_E_CALLBACK = -9,      /* a Python callback raised; its exception is kept for the def edge */
    WA_E_TOO_BIG = -10,      /* an index line or block larger than its format holds */
    WA_E_GZIP_STATE = -11,   /* a gzip member read out of order (back before what streamed) */
    WA_E_PARAM = -12,        /* a parameter out of range (a deflate level) */
    WA_E_COMPRESS = -13,     /* compressing failed (an input the compressor cannot take) */
    WA_E_UNSUPPORTED = -14,  /* the input needs a library this build lacks */
    WA_E_UNSORTED = -15,     /* an input that must be sorted is not */
    WA_E_SHRUNK = -16,       /* a mapped file was cut short while open (a block is past its end now) */
    WA_SURT_SMALL = -17      /* wa_surt.h: the output buffer is too small, or the URL too long */
};

#define WA_LIKELY(x) __builtin_expect(!!(x), 1)
#define WA_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* p + off for a buffer that may not be allocated yet (p NULL, off 0): NULL + 0 is undefined in C */
#define WA_AT(p, off) ((p) ? (p) + (off) : (p))

static inline uint32_t wa_le32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline uint16_t wa_le16(const uint8_t *p) {
    return (uint16_t)(p[0] | (p[1] << 8));
}

static inline int wa_lower(int c) {
    return (c >= 'A' && c <= 'Z') ? c + 32 : c;
}

/* Case-insensitive compare of n bytes against a lowercase ASCII literal. */
static inline int wa_ieq(const uint8_t *p, const char *lit, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (wa_lower(p[i]) != (unsigned char)lit[i]) return 0;
    }
    return 1;
}

/* Find "\n" in [p, p+n); NULL when absent. */
static inline const uint8_t *wa_find_nl(const uint8_t *p, size_t n) {
    return (const uint8_t *)memchr(p, '\n', n);
}

/* Grow *p (NULL, or from malloc/realloc) of *cap bytes to hold at least need bytes,
 * doubling *cap (from `first` when it is 0); the contents are kept. WA_OK, or
 * WA_E_NOMEM with *p and *cap as they were. */
static inline int wa_grow(uint8_t **p, size_t *cap, size_t need, size_t first) {
    if (WA_LIKELY(need <= *cap)) return WA_OK;
    size_t c = *cap ? *cap : first;
    while (c < need) {
        if (c > SIZE_MAX / 2) return WA_E_NOMEM;
        c *= 2;
    }
    uint8_t *nb = (uint8_t *)realloc(*p, c);
    if (!nb) return WA_E_NOMEM;
    *p = nb;
    *cap = c;
    return WA_OK;
}

/* Growable bytes, the one buffer type of the C cores: owned (cap > 0, from malloc/realloc) or
 * borrowed (cap == 0, p pointing at memory the caller keeps alive: never freed; growing one
 * copies it first). Every function returns WA_OK or WA_E_NOMEM (b as it was). */
typedef struct {
    uint8_t *p;
    size_t len, cap;
} wa_bytes;

#define WA_BYTES_MAX ((size_t)1 << 40)

/* Room for extra more bytes after len. */
static inline int wa_bytes_reserve(wa_bytes *b, size_t extra) {
    if (WA_LIKELY(b->len <= b->cap && b->cap - b->len >= extra)) return WA_OK;
    if (b->len > WA_BYTES_MAX || extra > WA_BYTES_MAX - b->len) return WA_E_NOMEM;
    if (!b->cap && b->p) {   /* borrowed */
        uint8_t *p = NULL;
        size_t cap = 0;
        if (wa_grow(&p, &cap, b->len + extra, 256)) return WA_E_NOMEM;
        if (b->len) memcpy(p, b->p, b->len);
        b->p = p;
        b->cap = cap;
        return WA_OK;
    }
    return wa_grow(&b->p, &b->cap, b->len + extra, 256);
}

static inline int wa_bytes_put(wa_bytes *b, const void *s, size_t n) {
    if (wa_bytes_reserve(b, n)) return WA_E_NOMEM;
    if (n) memcpy(b->p + b->len, s, n);
    b->len += n;
    return WA_OK;
}

static inline int wa_bytes_byte(wa_bytes *b, uint8_t c) {
    if (wa_bytes_reserve(b, 1)) return WA_E_NOMEM;
    b->p[b->len++] = c;
    return WA_OK;
}

/* Point b at n bytes the caller keeps alive (b's own bytes are freed). */
static inline void wa_bytes_borrow(wa_bytes *b, const void *p, size_t n) {
    if (b->cap) free(b->p);
    b->p = (uint8_t *)p;
    b->len = n;
    b->cap = 0;
}

static inline void wa_bytes_free(wa_bytes *b) {
    if (b->cap) free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

/* Big buffers (input windows, inflate and line output) are kept for the next reader
 * instead of being freed. Memory the process has touched costs nothing to use again, while
 * fresh memory costs a page fault per 4 KiB: about 3 us each on the VMs we measure on, so
 * 0.8 ms for each 1 MiB window of each range `warchive index -j N` reads. Each kernel
 * module has its own pool (static), shared by its threads; at most WA_POOL_BYTES stay. */
#define WA_POOL_SLOTS 8
#define WA_POOL_MIN ((size_t)64 * 1024)
#define WA_POOL_BYTES ((size_t)16 * 1024 * 1024)

typedef struct {
    void *p;
    size_t cap;
} wa_pool_slot;

static pthread_mutex_t wa_pool_mu = PTHREAD_MUTEX_INITIALIZER;
static wa_pool_slot wa_pool[WA_POOL_SLOTS];
static size_t wa_pool_bytes;

/* A buffer of at least `want` bytes (its size in *cap): a pooled one if one is big enough. */
static void *wa_buf_get(size_t want, size_t *cap) {
    if (want >= WA_POOL_MIN) {
        int best = -1;
        pthread_mutex_lock(&wa_pool_mu);
        for (int i = 0; i < WA_POOL_SLOTS; i++) {
            if (wa_pool[i].p && wa_pool[i].cap >= want && (best < 0 || wa_pool[i].cap < wa_pool[best].cap))
                best = i;
        }
        if (best >= 0) {
            void *p = wa_pool[best].p;
            *cap = wa_pool[best].cap;
            wa_pool[best].p = NULL;
            wa_pool_bytes -= *cap;
            pthread_mutex_unlock(&wa_pool_mu);
            return p;
        }
        pthread_mutex_unlock(&wa_pool_mu);
    }
    *cap = want;
    return malloc(want);
}

/* Give back a buffer from wa_buf_get (or malloc/realloc): pooled if there is room, else freed. */
static void wa_buf_put(void *p, size_t cap) {
    if (!p) return;
    if (cap >= WA_POOL_MIN) {
        pthread_mutex_lock(&wa_pool_mu);
        if (wa_pool_bytes + cap <= WA_POOL_BYTES) {
            for (int i = 0; i < WA_POOL_SLOTS; i++) {
                if (!wa_pool[i].p) {
                    wa_pool[i].p = p;
                    wa_pool[i].cap = cap;
                    wa_pool_bytes += cap;
                    pthread_mutex_unlock(&wa_pool_mu);
                    return;
                }
            }
        }
        pthread_mutex_unlock(&wa_pool_mu);
    }
    free(p);
}

#endif
