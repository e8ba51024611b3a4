# Extern-only declarations of ext/csrc/wa_codec.h (the deflate libraries of the build):
# only what a kernel asks of it directly; the C cores use the rest.

cdef extern from "wa_codec.h" nogil:
    const char *wa_inflate_libs()
