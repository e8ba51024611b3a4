/* wa_deflate.h -- raw deflate for the WARC writer, in the caller's thread or in a worker.
 *
 * wa_defl_part compresses two pieces (a record's block and its CRLF CRLF) as one
 * raw deflate stream; with final=0 it ends with a sync flush instead (byte-aligned,
 * no block marked final), so that parts concatenate into one stream.
 *
 * wa_dworker is one worker thread with its own compressor. The writer posts a
 * block, computes the record's digests meanwhile, and then waits for the
 * deflated bytes. A hand-off to a thread asleep on a condition variable costs
 * 50-100 us on the VMs we measured, as much as a typical record's work, so
 * the worker spins (without the GIL, with a pause instruction) for spin_us
 * after each job before it sleeps: during a burst of records a hand-off costs
 * about a microsecond; an idle writer costs no CPU after spin_us.
 *
 * Nothing here calls into Python. The poster keeps the input alive until
 * wa_dw_wait returns.
 */
#ifndef WA_DEFLATE_H
#define WA_DEFLATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include "wa_codec.h"
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define WA_PAUSE() _mm_pause()
#else
#define WA_PAUSE() ((void)0)
#endif

typedef struct {
    int level;           /* ISA-L 0-3; with zlib alone, zlib level level+1 */
    uint8_t *out;
    size_t len, cap;
#ifdef WA_HAVE_ISAL
    struct isal_zstream s;
#endif
    wa_codec lib;        /* ISA-L's level buffer */
} wa_defl;

static inline int wa_defl_init(wa_defl *d, int level) {
    memset(d, 0, sizeof *d);
    if (level < 0 || level > 3) return WA_E_PARAM;
    d->level = level;
#ifdef WA_HAVE_ISAL
    uint8_t *buf;
    uint32_t size;
    if (wa_isal_level_buf(&d->lib, level, &buf, &size) != WA_OK) return WA_E_NOMEM;
#endif
    return WA_OK;
}

static inline void wa_defl_free(wa_defl *d) {
    free(d->out);
    wa_codec_free(&d->lib);
    memset(d, 0, sizeof *d);
}

static inline int wa_defl_grow(wa_defl *d, size_t want) { return wa_grow(&d->out, &d->cap, want, 4096); }

static int wa_defl_part(wa_defl *d, const uint8_t *a, size_t na, const uint8_t *b, size_t nb, int final) {
    size_t n = na + nb;
    int rc = wa_defl_grow(d, n + (n >> 4) + 1024);
    if (rc) return rc;
    d->len = 0;
    const uint8_t *in[2] = {a, b};
    size_t inn[2] = {na, nb};
#ifdef WA_HAVE_ISAL
    struct isal_zstream *s = &d->s;
    isal_deflate_init(s);
    s->level = (uint32_t)d->level;
    s->level_buf = d->lib.isal_lvl;      /* NULL, 0 at level 0 */
    s->level_buf_size = d->lib.isal_lvl_size;
    s->gzip_flag = IGZIP_DEFLATE;
    for (int i = 0; i < 2; i++) {
        if (inn[i] > UINT32_MAX) return WA_E_COMPRESS;
        int last = (i == 1);
        s->next_in = (uint8_t *)(uintptr_t)in[i];
        s->avail_in = (uint32_t)inn[i];
        s->end_of_stream = (uint16_t)(last && final);
        s->flush = (uint16_t)(last && !final ? SYNC_FLUSH : NO_FLUSH);
        for (;;) {
            if (d->cap - d->len < 64 && (rc = wa_defl_grow(d, d->cap + 1))) return rc;
            size_t room = d->cap - d->len;
            if (room > UINT32_MAX) room = UINT32_MAX;
            s->next_out = d->out + d->len;
            s->avail_out = (uint32_t)room;
            if (isal_deflate(s) != COMP_OK) return WA_E_COMPRESS;
            d->len += room - s->avail_out;
            if (s->avail_in != 0 || s->avail_out == 0) continue;   /* output was full: more to come */
            if (last && final && s->internal_state.state != ZSTATE_END) continue;
            break;
        }
    }
    return WA_OK;
#else
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, d->level + 1, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) return WA_E_NOMEM;
    for (int i = 0; i < 2 && rc == WA_OK; i++) {
        if (inn[i] > UINT32_MAX) { rc = WA_E_COMPRESS; break; }
        int last = (i == 1);
        int flush = last ? (final ? Z_FINISH : Z_SYNC_FLUSH) : Z_NO_FLUSH;
        z.next_in = (Bytef *)(uintptr_t)in[i];
        z.avail_in = (uInt)inn[i];
        for (;;) {
            if (d->cap - d->len < 64 && (rc = wa_defl_grow(d, d->cap + 1))) break;
            size_t room = d->cap - d->len;
            if (room > UINT32_MAX) room = UINT32_MAX;
            z.next_out = d->out + d->len;
            z.avail_out = (uInt)room;
            int zr = deflate(&z, flush);
            d->len += room - z.avail_out;
            if (zr == Z_STREAM_END) break;
            if (zr != Z_OK && zr != Z_BUF_ERROR) { rc = WA_E_COMPRESS; break; }
            if (z.avail_in == 0 && z.avail_out != 0) break;
        }
    }
    deflateEnd(&z);
    return rc;
#endif
}

/* ------------------------------------------------------------------ worker */

enum { WA_DW_IDLE = 0, WA_DW_POSTED = 1, WA_DW_DONE = 2, WA_DW_QUIT = 3 };

typedef struct {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    atomic_int state;
    atomic_int sleeping;
    const uint8_t *a, *b;
    size_t na, nb;
    int final, rc;
    long spin_ns;
    wa_defl d;
} wa_dworker;

static inline long wa_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void *wa_dw_main(void *arg) {
    wa_dworker *w = (wa_dworker *)arg;
    for (;;) {
        long until = wa_now_ns() + w->spin_ns;
        int st;
        unsigned k = 0;
        while ((st = atomic_load_explicit(&w->state, memory_order_acquire)) != WA_DW_POSTED && st != WA_DW_QUIT) {
            WA_PAUSE();
            if ((++k & 255) == 0 && wa_now_ns() > until) {
                pthread_mutex_lock(&w->mu);
                atomic_store(&w->sleeping, 1);
                while ((st = atomic_load(&w->state)) != WA_DW_POSTED && st != WA_DW_QUIT)
                    pthread_cond_wait(&w->cv, &w->mu);
                atomic_store(&w->sleeping, 0);
                pthread_mutex_unlock(&w->mu);
                break;
            }
        }
        if (st == WA_DW_QUIT) return NULL;
        w->rc = wa_defl_part(&w->d, w->a, w->na, w->b, w->nb, w->final);
        atomic_store_explicit(&w->state, WA_DW_DONE, memory_order_release);
    }
}

static int wa_dw_start(wa_dworker *w, int level, long spin_us) {
    memset(w, 0, sizeof *w);
    int rc = wa_defl_init(&w->d, level);
    if (rc) return rc;
    w->spin_ns = spin_us * 1000L;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    atomic_store(&w->state, WA_DW_IDLE);
    if (pthread_create(&w->th, NULL, wa_dw_main, w) != 0) {
        wa_defl_free(&w->d);
        return WA_E_NOMEM;
    }
    return WA_OK;
}

/* Wait for the posted job (if any); its rc, and the output in w->d. */
static int wa_dw_wait(wa_dworker *w) {
    int st = atomic_load_explicit(&w->state, memory_order_acquire);
    if (st == WA_DW_IDLE) return WA_OK;
    while ((st = atomic_load_explicit(&w->state, memory_order_acquire)) == WA_DW_POSTED)
        WA_PAUSE();
    atomic_store(&w->state, WA_DW_IDLE);
    return w->rc;
}

static void wa_dw_post(wa_dworker *w, const uint8_t *a, size_t na, const uint8_t *b, size_t nb, int final) {
    w->a = a; w->na = na; w->b = b; w->nb = nb; w->final = final;
    atomic_store(&w->state, WA_DW_POSTED);   /* seq_cst: pairs with the worker's store of sleeping */
    if (atomic_load(&w->sleeping)) {
        pthread_mutex_lock(&w->mu);
        pthread_cond_signal(&w->cv);
        pthread_mutex_unlock(&w->mu);
    }
}

static void wa_dw_stop(wa_dworker *w) {
    wa_dw_wait(w);
    pthread_mutex_lock(&w->mu);
    atomic_store(&w->state, WA_DW_QUIT);
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->th, NULL);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    wa_defl_free(&w->d);
}

#endif
