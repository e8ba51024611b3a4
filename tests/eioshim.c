/* An LD_PRELOAD shim for tests/faults/test_read_errors.py: reads of chosen files fail with EIO.
 *
 * WARCHIVE_EIO_PATHS is a ':'-separated list of absolute paths; WARCHIVE_EIO_FROM a byte offset.
 * A read, pread or preadv of one of those files whose range reaches that byte or beyond fails
 * with errno EIO, as a bad sector of a failing disk does; every other read goes through. The
 * file behind a descriptor is found with readlink(/proc/self/fd/N), and a read()'s position
 * with lseek. Reads of a mapped file are page faults, not calls: they are not covered.
 *
 * Built by the test with `cc -shared -fPIC -O1 -o eioshim.so eioshim.c -ldl`.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static int failing(int fd, off_t off, size_t n) {
    const char *paths = getenv("WARCHIVE_EIO_PATHS"), *from = getenv("WARCHIVE_EIO_FROM");
    if (!paths || !from || n == 0 || off < 0) return 0;
    if ((long long)off + (long long)n <= atoll(from)) return 0;
    char link[64], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t k = readlink(link, target, sizeof target - 1);
    if (k <= 0) return 0;
    target[k] = 0;
    size_t tl = (size_t)k;
    for (const char *p = paths; *p;) {
        const char *e = strchr(p, ':');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == tl && memcmp(p, target, l) == 0) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

static size_t iov_len(const struct iovec *v, int n) {
    size_t t = 0;
    for (int i = 0; i < n; i++) t += v[i].iov_len;
    return t;
}

typedef ssize_t (*read_fn)(int, void *, size_t);
typedef ssize_t (*pread_fn)(int, void *, size_t, off_t);
typedef ssize_t (*readv_fn)(int, const struct iovec *, int);
typedef ssize_t (*preadv_fn)(int, const struct iovec *, int, off_t);
typedef ssize_t (*preadv2_fn)(int, const struct iovec *, int, off_t, int);

#define REAL(name, type) static type real_##name; if (!real_##name) real_##name = (type)dlsym(RTLD_NEXT, #name)

ssize_t read(int fd, void *buf, size_t n) {
    REAL(read, read_fn);
    if (failing(fd, lseek(fd, 0, SEEK_CUR), n)) { errno = EIO; return -1; }
    return real_read(fd, buf, n);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off) {
    REAL(pread, pread_fn);
    if (failing(fd, off, n)) { errno = EIO; return -1; }
    return real_pread(fd, buf, n, off);
}

ssize_t pread64(int fd, void *buf, size_t n, off_t off) {
    REAL(pread64, pread_fn);
    if (failing(fd, off, n)) { errno = EIO; return -1; }
    return real_pread64(fd, buf, n, off);
}

ssize_t readv(int fd, const struct iovec *v, int cnt) {
    REAL(readv, readv_fn);
    if (failing(fd, lseek(fd, 0, SEEK_CUR), iov_len(v, cnt))) { errno = EIO; return -1; }
    return real_readv(fd, v, cnt);
}

ssize_t preadv(int fd, const struct iovec *v, int cnt, off_t off) {
    REAL(preadv, preadv_fn);
    if (failing(fd, off, iov_len(v, cnt))) { errno = EIO; return -1; }
    return real_preadv(fd, v, cnt, off);
}

ssize_t preadv64(int fd, const struct iovec *v, int cnt, off_t off) {
    REAL(preadv64, preadv_fn);
    if (failing(fd, off, iov_len(v, cnt))) { errno = EIO; return -1; }
    return real_preadv64(fd, v, cnt, off);
}

ssize_t preadv2(int fd, const struct iovec *v, int cnt, off_t off, int flags) {
    REAL(preadv2, preadv2_fn);
    if (failing(fd, off < 0 ? lseek(fd, 0, SEEK_CUR) : off, iov_len(v, cnt))) { errno = EIO; return -1; }
    return real_preadv2(fd, v, cnt, off, flags);
}
