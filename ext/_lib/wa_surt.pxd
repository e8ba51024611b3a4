# Extern-only declarations of ext/csrc/wa_surt.h (SURT keys in pure C).
# Every function here is safe without the GIL; see the header for the contract.

cdef extern from "wa_surt.h" nogil:
    int WA_SURT_OK
    int WA_SURT_NEED_IDNA
    int WA_SURT_FAIL
    int WA_SURT_SMALL
    size_t WA_SURT_MAX_LEN
    size_t WA_SURT_CAP(size_t n, size_t idna_len)

    int wa_surt_key(const unsigned char *url, size_t n,
                    unsigned char *out, size_t cap, size_t *outlen,
                    const unsigned char *idna_host, size_t idna_len,
                    int have_idna)
