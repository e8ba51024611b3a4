/* wa_source.h -- a window over an input file or stream.
 *
 * Kernels never hold a whole file: they ask for bytes [off, off+want) and get a
 * pointer into a reusable buffer holding at least that much (less only at the
 * end of input). Files are read with pread(2), so skipping a payload costs
 * nothing; so are random-access objects that are no file (a stored file of the
 * durable store) through a positional callback, `preadfn`; streams (pipes,
 * Python file objects) are read forward through `readfn` and cannot go back.
 * The window grows only up to `maxcap`.
 */
#ifndef WA_SOURCE_H
#define WA_SOURCE_H

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include "wa_common.h"

/* Read up to n bytes into dst; *got = 0 means end of stream. Return 0, or -1 on error. */
typedef int (*wa_read_fn)(void *ctx, uint8_t *dst, size_t n, size_t *got);
/* Read up to n bytes at offset off into dst; *got < n only at the end of input. Return 0, or -1. */
typedef int (*wa_pread_fn)(void *ctx, uint8_t *dst, size_t n, int64_t off, size_t *got);

typedef struct {
    int fd;              /* >= 0: positional reads on fd; < 0: preadfn if set, else readfn */
    wa_read_fn readfn;
    wa_pread_fn preadfn; /* positional reads through a callback (set after wa_src_init; size known) */
    void *ctx;
    int64_t size;        /* file size (fd mode); -1 while unknown (streams) */
    uint8_t *buf;
    size_t cap;
    size_t maxcap;
    int64_t base;        /* absolute offset of buf[0] */
    size_t len;          /* valid bytes in buf */
    int eof;             /* stream mode: nothing after base+len */
    int err_no;
    int64_t err_off;     /* where the read that failed (err_no) began */
    size_t ahead;        /* fd mode: a read brings in max(this, what is wanted) bytes, not a full buffer
                            (0); set by a reader that knows how much it needs (one record) */
} wa_source;

/* Can reads go back (pread on a descriptor or through preadfn), and is the size known? */
static inline int wa_src_random(const wa_source *s) { return s->fd >= 0 || s->preadfn != NULL; }

static int wa_src_init(wa_source *s, int fd, int64_t size, wa_read_fn fn, void *ctx,
                       int64_t start, size_t cap, size_t maxcap) {
    memset(s, 0, sizeof(*s));
    if (cap == 0) cap = 1; /* wa_src_grow doubles it */
    s->fd = fd;
    s->readfn = fn;
    s->ctx = ctx;
    s->size = size;
    s->base = start;
    s->maxcap = maxcap < cap ? cap : maxcap;
    s->buf = (uint8_t *)wa_buf_get(cap, &s->cap);
    return s->buf ? WA_OK : WA_E_NOMEM;
}

static void wa_src_free(wa_source *s) {
    wa_buf_put(s->buf, s->cap);
    s->buf = NULL;
    s->cap = s->len = 0;
}

static int wa_src_grow(wa_source *s, size_t want) {
    size_t ncap = s->cap;
    while (ncap < want) ncap *= 2;
    if (ncap > s->maxcap) ncap = s->maxcap;
    if (ncap <= s->cap) return WA_OK;
    uint8_t *nb = (uint8_t *)realloc(s->buf, ncap);
    if (!nb) return WA_E_NOMEM;
    s->buf = nb;
    s->cap = ncap;
    return WA_OK;
}

/* Fill buf[len..] from the input until len >= want or the input ends. */
static int wa_src_fill(wa_source *s, size_t want) {
    while (s->len < want) {
        size_t room = s->cap - s->len;
        if (room == 0) break;
        if (s->fd >= 0) {
            size_t ask = room;
            if (s->ahead && want - s->len < ask) ask = want - s->len;   /* no more than asked for */
            ssize_t n = pread(s->fd, s->buf + s->len, ask, (off_t)(s->base + (int64_t)s->len));
            if (n < 0) {
                if (errno == EINTR) continue;
                s->err_no = errno;
                s->err_off = s->base + (int64_t)s->len;
                return WA_E_IO;
            }
            if (n == 0) break;
            s->len += (size_t)n;
        } else if (s->preadfn) {
            size_t ask = room, got = 0;
            if (s->ahead && want - s->len < ask) ask = want - s->len;
            if (s->preadfn(s->ctx, s->buf + s->len, ask, s->base + (int64_t)s->len, &got) != 0) return WA_E_CALLBACK;
            if (got == 0) break;
            s->len += got;
        } else {
            if (s->eof) break;
            size_t got = 0;
            if (s->readfn(s->ctx, s->buf + s->len, room, &got) != 0) return WA_E_CALLBACK;
            if (got == 0) {
                s->eof = 1;
                s->size = s->base + (int64_t)s->len;
                break;
            }
            s->len += got;
        }
    }
    return WA_OK;
}

/* Bytes a stream keeps before the offset asked for: ISA-L reads up to 8 + 328 bytes past a
 * member's end, and the trailer is read back from there; and the record reader, when a plain
 * record's Content-Length proves wrong, looks for the next record from up to 64 KiB before
 * where the record was said to end (warchive.warc.framing.LOOKBACK), on streams as on files. */
#define WA_SRC_HISTORY (68u << 10)

/* Make bytes [off, off+want) available: *p points at offset off, *avail is how
 * many bytes are there (>= want unless the input ends first; capped by maxcap). */
static int wa_src_get(wa_source *s, int64_t off, size_t want, const uint8_t **p, size_t *avail) {
    int rc;
    if (WA_LIKELY(off >= s->base && (uint64_t)(off - s->base) + want <= s->len)) {
        *p = s->buf + (off - s->base);
        *avail = s->len - (size_t)(off - s->base);
        return WA_OK;
    }
    size_t hist = wa_src_random(s) ? 0 : WA_SRC_HISTORY; /* a file is read again with pread instead */
    if (want > s->maxcap - hist) want = s->maxcap - hist;
    if (want + hist > s->cap && (rc = wa_src_grow(s, want + hist)) != WA_OK) return rc;
    if (off >= s->base && off <= s->base + (int64_t)s->len) {
        size_t skip = (size_t)(off - s->base);
        skip = skip > hist ? skip - hist : 0;
        memmove(s->buf, s->buf + skip, s->len - skip);
        s->len -= skip;
        s->base += (int64_t)skip;
    } else if (wa_src_random(s)) {
        s->base = off;
        s->len = 0;
    } else {
        if (off < s->base) {
            s->err_no = ESPIPE;
            return WA_E_IO;
        }
        /* stream: read and drop everything up to off (a read may bring in bytes past off: keep those) */
        s->base += (int64_t)s->len;
        s->len = 0;
        while (s->base < off) {
            size_t chunk = (size_t)(off - s->base) < s->cap ? (size_t)(off - s->base) : s->cap;
            if ((rc = wa_src_fill(s, chunk)) != WA_OK) return rc;
            if (s->len == 0) break; /* input ended before off */
            if (s->base + (int64_t)s->len > off) {
                size_t skip = (size_t)(off - s->base);
                memmove(s->buf, s->buf + skip, s->len - skip);
                s->len -= skip;
                s->base = off;
                break;
            }
            s->base += (int64_t)s->len;
            s->len = 0;
        }
        if (s->base < off) {
            *p = s->buf;
            *avail = 0;
            return WA_OK;
        }
    }
    /* read as much as fits: later requests are then served from memory; or, for a reader that
     * knows what it needs (ahead), that much */
    size_t upto = s->cap;
    if (s->ahead) {
        size_t need = (size_t)(off - s->base) + (want > s->ahead ? want : s->ahead);
        if (need < upto) upto = need;
    }
    if ((rc = wa_src_fill(s, upto)) != WA_OK) return rc;
    *p = s->buf + (off - s->base);
    *avail = s->len - (size_t)(off - s->base);
    return WA_OK;
}

/* True when nothing is left at off (end of input). */
static int wa_src_at_end(wa_source *s, int64_t off, int *status) {
    const uint8_t *p;
    size_t avail;
    if (s->size >= 0 && wa_src_random(s)) return off >= s->size;
    *status = wa_src_get(s, off, 1, &p, &avail);
    return *status == WA_OK && avail == 0;
}

#endif
