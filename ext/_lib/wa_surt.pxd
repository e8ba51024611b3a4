# Extern-only declarations of ext/csrc/wa_surt.h (SURT keys in pure C).
# Every function here is safe without the GIL; see the header for the contract.

cdef extern from "wa_surt.h" nogil:
    size_t WA_SURT_MAX_LEN
    size_t WA_SURT_CAP(size_t n, size_t idna_len)

    # the package's keyword arguments, one bit each (the header lists them)
    unsigned WA_SURT_OPT_SURT
    unsigned WA_SURT_OPT_WITH_SCHEME
    unsigned WA_SURT_OPT_TRAILING_COMMA
    unsigned WA_SURT_OPT_REVERSE_IPADDR
    unsigned WA_SURT_OPT_HOST_LOWERCASE
    unsigned WA_SURT_OPT_HOST_MASSAGE
    unsigned WA_SURT_OPT_PORT_STRIP_DEFAULT
    unsigned WA_SURT_OPT_PATH_STRIP_EMPTY
    unsigned WA_SURT_OPT_PATH_LOWERCASE
    unsigned WA_SURT_OPT_PATH_STRIP_SESSION_ID
    unsigned WA_SURT_OPT_PATH_STRIP_TRAILING_SLASH_UNLESS_EMPTY
    unsigned WA_SURT_OPT_QUERY_LOWERCASE
    unsigned WA_SURT_OPT_QUERY_STRIP_SESSION_ID
    unsigned WA_SURT_OPT_QUERY_STRIP_EMPTY
    unsigned WA_SURT_OPT_QUERY_ALPHA_REORDER
    unsigned WA_SURT_OPT_ALL
    unsigned WA_SURT_OPT_IA
    unsigned WA_SURT_OPT_DEFAULT

    int wa_surt_key(const unsigned char *url, size_t n,
                    unsigned char *out, size_t cap, size_t *outlen,
                    const unsigned char *idna_host, size_t idna_len,
                    int have_idna)
    int wa_surt_key_opts(const unsigned char *url, size_t n,
                         unsigned char *out, size_t cap, size_t *outlen,
                         const unsigned char *idna_host, size_t idna_len,
                         int have_idna, unsigned opts)
