# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Kernel warc_headers: parse WARC and HTTP heads out of a buffer.

`parse_head(buf, final)` does what warchive.warc.headers.parse_head does, in
one C pass (its lines split by wa_head.h's wa_head_line, as the indexer's C parser splits them), for heads whose lines are printable ASCII (tabs allowed) ending
in LF or CRLF, which is nearly all of them. For anything else (non-ASCII or
control bytes, continuation lines) it returns None and the caller uses the
Python reference, so both always agree. It never reads outside `buf`.
"""

from libc.stdint cimport uint8_t
from libc.string cimport memchr
from cpython.unicode cimport PyUnicode_DecodeASCII

from _lib.wa_common cimport WA_EOF, WA_DONE
from _lib.wa_head cimport wa_head_line

NEED_MORE = False


cdef inline bint _plain(const uint8_t *p, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t k
    cdef uint8_t c
    for k in range(n):
        c = p[k]
        if c < 0x20 and c != 9:
            return False
        if c >= 0x7f:
            return False
    return True


def parse_head(const uint8_t[::1] buf not None, bint final):
    """(status, fields, end, total_len) of the head at buf[0:], as warcio parses it.

    Returns NEED_MORE (False) when the head may continue past the buffer and
    `final` is false, and None when a line needs the Python reference."""
    cdef const uint8_t *p = &buf[0] if buf.shape[0] else NULL
    cdef Py_ssize_t n = buf.shape[0]
    cdef Py_ssize_t i = 0, ls, le, e, nxt, c, ne, vs
    cdef size_t le_, nxt_
    cdef int r
    cdef const uint8_t *colon
    cdef int line_no = 0
    status = ""
    fields = []
    if n == 0:
        return ("", fields, 0, 0) if final else NEED_MORE
    while True:
        r = wa_head_line(p, <size_t>n, <size_t>i, final, &le_, &nxt_)
        if r == WA_EOF:
            return NEED_MORE
        if r == WA_DONE:   # the input ends: like a blank line, that ends the head
            return (status, fields, n, n)
        ls = i
        le = <Py_ssize_t>le_
        nxt = <Py_ssize_t>nxt_
        e = le
        if e > ls and p[e - 1] == 13:
            e -= 1
        if not _plain(p + ls, e - ls):
            return None
        while e > ls and (p[e - 1] == 32 or p[e - 1] == 9 or p[e - 1] == 13):
            e -= 1
        if e == ls:  # blank: the head ends after this line
            return (status, fields, nxt, nxt)
        if line_no == 0:
            status = PyUnicode_DecodeASCII(<const char *>(p + ls), e - ls, NULL)
        else:
            if p[ls] == 32 or p[ls] == 9:
                return None  # continuation line
            colon = <const uint8_t *>memchr(p + ls, 58, e - ls)
            if colon != NULL:
                c = colon - p
                ne = c
                while ne > ls and (p[ne - 1] == 32 or p[ne - 1] == 9):
                    ne -= 1
                vs = c + 1
                while vs < e and (p[vs] == 32 or p[vs] == 9):
                    vs += 1
                fields.append((PyUnicode_DecodeASCII(<const char *>(p + ls), ne - ls, NULL),
                               PyUnicode_DecodeASCII(<const char *>(p + vs), e - vs, NULL)))
        line_no += 1
        i = nxt
