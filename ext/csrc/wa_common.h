/* wa_common.h -- status codes and small helpers shared by the C cores of the kernels.
 *
 * Every function in ext/csrc returns one of these status codes; Cython turns a
 * negative one into an ArchiveError child at the `def` edge. Nothing here may
 * call into Python or allocate on the hot path.
 */
#ifndef WA_COMMON_H
#define WA_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum {
    WA_OK = 0,
    WA_EOF = 1,          /* clean end of input */
    WA_SLOW = 2,         /* the fast path declines; the caller takes the general path */
    WA_E_IO = -1,        /* read error (errno kept by the source) */
    WA_E_NOMEM = -2,
    WA_E_GZIP_HEADER = -3,
    WA_E_DEFLATE = -4,
    WA_E_CRC = -5,
    WA_E_ISIZE = -6,
    WA_E_TRUNCATED = -7,
    WA_E_FORMAT = -8,
    WA_E_CALLBACK = -9,  /* a Python read callback raised */
    WA_E_TOO_BIG = -10
};

#define WA_LIKELY(x) __builtin_expect(!!(x), 1)
#define WA_UNLIKELY(x) __builtin_expect(!!(x), 0)

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

#endif
