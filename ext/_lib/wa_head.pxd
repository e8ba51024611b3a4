# Extern-only declarations of ext/csrc/wa_head.h (the head parsers' line splitter). Safe without
# the GIL; returns a WA_ status (wa_common.h).
from libc.stdint cimport uint8_t

cdef extern from "wa_head.h" nogil:
    int wa_head_line(const uint8_t *p, size_t n, size_t i, int final, size_t *le, size_t *next)
