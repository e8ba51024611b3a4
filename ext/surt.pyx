# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""SURT keys equal to ``surt.surt(url, **options)`` (surt 0.3.1).

The work is done by the C core in csrc/wa_surt.h; this module only moves
bytes in and out, turns the package's keyword arguments into the core's
option bits, does the one step that needs Python (IDNA-encoding a non-ASCII
host, as the package does with the ``idna`` codec) and turns the core's
failure status into ``UrlError``.  It must not canonicalize anything itself:
one implementation, one place to fix.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE, PyBytes_FromStringAndSize
from cpython.unicode cimport PyUnicode_AsUTF8AndSize, PyUnicode_New, PyUnicode_DATA
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF
from cpython.sequence cimport PySequence_Fast, PySequence_Fast_GET_SIZE, PySequence_Fast_GET_ITEM
from libc.stdlib cimport malloc, realloc, free
from libc.stdint cimport uint64_t
from libc.string cimport memcpy, memcmp

from _lib.wa_surt cimport *
from _lib.wa_common cimport WA_OK, WA_SURT_NEED_IDNA, WA_SURT_FAIL, WA_SURT_SMALL
from _status cimport raise_status

from types import MappingProxyType

from warchive.errors import UrlError

# Scratch for one key while the GIL is held (URLs up to ~5.9 kB); longer URLs
# and batches get their own buffer and run without the GIL.
cdef enum:
    _STATIC_CAP = 65536
    # Batches are cut into chunks so the result arena stays small and warm.
    _CHUNK = 4096

cdef unsigned char _scratch[65536]

cdef enum:
    _K_STR = 0
    _K_BYTES = 1
    _K_NONE = 2
    _K_BAD_STR = 3      # str that cannot be UTF-8 encoded (lone surrogates)
    _K_PASS = 4         # "filedesc..." URL: its own key


# ---- options ----------------------------------------------------------------

# Every keyword argument that surt.surt(url, **options) passes on and some part
# of the package reads (IAURLCanonicalizer.canonicalize, handyurl.geturl_bytes),
# with the package's default; the bit of the C core for those that change a key.
DEFAULTS = MappingProxyType({
    "surt": True, "with_scheme": False, "trailing_comma": False, "reverse_ipaddr": True,
    "public_suffix": False,
    "host_lowercase": True, "host_massage": True, "auth_strip_user": True, "auth_strip_pass": True,
    "port_strip_default": True, "path_strip_empty": False, "path_lowercase": True,
    "path_strip_session_id": True, "path_strip_trailing_slash_unless_empty": True,
    "query_lowercase": True, "query_strip_session_id": True, "query_strip_empty": True,
    "query_alpha_reorder": True, "hash_strip": True,
})
cdef dict _BITS = {
    "surt": WA_SURT_OPT_SURT,
    "with_scheme": WA_SURT_OPT_WITH_SCHEME,
    "trailing_comma": WA_SURT_OPT_TRAILING_COMMA,
    "reverse_ipaddr": WA_SURT_OPT_REVERSE_IPADDR,
    "host_lowercase": WA_SURT_OPT_HOST_LOWERCASE,
    "host_massage": WA_SURT_OPT_HOST_MASSAGE,
    "port_strip_default": WA_SURT_OPT_PORT_STRIP_DEFAULT,
    "path_strip_empty": WA_SURT_OPT_PATH_STRIP_EMPTY,
    "path_lowercase": WA_SURT_OPT_PATH_LOWERCASE,
    "path_strip_session_id": WA_SURT_OPT_PATH_STRIP_SESSION_ID,
    "path_strip_trailing_slash_unless_empty": WA_SURT_OPT_PATH_STRIP_TRAILING_SLASH_UNLESS_EMPTY,
    "query_lowercase": WA_SURT_OPT_QUERY_LOWERCASE,
    "query_strip_session_id": WA_SURT_OPT_QUERY_STRIP_SESSION_ID,
    "query_strip_empty": WA_SURT_OPT_QUERY_STRIP_EMPTY,
    "query_alpha_reorder": WA_SURT_OPT_QUERY_ALPHA_REORDER,
}
# Read by the package but without effect on any key: handyurl.parse never sets
# the userinfo that auth_strip_* would strip, and GoogleURLCanonicalizer drops
# the fragment whatever hash_strip says.
cdef tuple _NO_EFFECT = ("auth_strip_user", "auth_strip_pass", "hash_strip")
DEFAULT_FLAGS = WA_SURT_OPT_DEFAULT

# The canonicalizers of the package that the core implements, by qualified name:
# the default (GoogleURLCanonicalizer then IAURLCanonicalizer) and the Google
# step alone (the IA bits clear).
cdef dict _CANONICALIZERS = {
    "surt.DefaultIAURLCanonicalizer": WA_SURT_OPT_ALL,
    "surt.DefaultIAURLCanonicalizer.canonicalize": WA_SURT_OPT_ALL,
    "surt.GoogleURLCanonicalizer": WA_SURT_OPT_ALL & ~WA_SURT_OPT_IA,
    "surt.GoogleURLCanonicalizer.canonicalize": WA_SURT_OPT_ALL & ~WA_SURT_OPT_IA,
}


cdef unsigned _canonicalizer_mask(object c) except 0:
    """The bits a canonicalizer lets through; ValueError for one the core does not implement.
    Known by name: the package's canonicalize functions, or their modules (it takes any
    object with a .canonicalize)."""
    cdef object name = getattr(c, "__module__", None)
    if isinstance(name, str) and getattr(c, "__name__", None) == "canonicalize":
        name = name + ".canonicalize"
    else:
        name = getattr(c, "__name__", None)
    mask = _CANONICALIZERS.get(name) if isinstance(name, str) else None
    if mask is not None:
        return mask
    raise ValueError(
        f"canonicalizer {c!r} is not supported: the SURT kernel implements the surt package's "
        "DefaultIAURLCanonicalizer (canonicalizer=None) and GoogleURLCanonicalizer, not Python code; "
        "IAURLCanonicalizer's steps are switched by its options (host_massage=False, ...)")


cdef long _flags(object canonicalizer, dict options, str fname) except -1:
    """The core's option bits for surt.surt(url, canonicalizer, **options).

    TypeError names an option the package does not have (the package ignores
    it, so a misspelt option would silently give the default key); ValueError
    for public_suffix=True and canonicalizers other than the package's own."""
    cdef unsigned flags = WA_SURT_OPT_DEFAULT
    cdef unsigned bit
    for name, value in options.items():
        b = _BITS.get(name)
        if b is not None:
            bit = b
            if value:
                flags |= bit
            else:
                flags &= ~bit
        elif name in _NO_EFFECT:
            pass
        elif name == "public_suffix":
            if value:
                raise ValueError(
                    "public_suffix=True is not supported: the key would depend on the Public Suffix "
                    "List that tldextract fetches at run time (and surt 0.3.1 itself raises TypeError "
                    "for every URL with a host under tldextract 5)")
        else:
            raise TypeError(f"{fname}() got an unexpected keyword argument {name!r} "
                            "(the options are warchive.surt.OPTIONS)")
    if canonicalizer is not None:
        flags &= _canonicalizer_mask(canonicalizer)
    return flags


def surt_flags(canonicalizer=None, **options):
    """The option bits of the C core for these options (for kernels that key URLs: cdx_lines)."""
    return _flags(canonicalizer, options, "surt_flags")


cdef object _idna(bytes host):
    """The package's IDNA step: the codec's result, or the host as it is when the codec raises."""
    try:
        return host.decode("utf-8", "ignore").encode("idna")
    except ValueError:
        return host


cdef inline bint _is_filedesc(const unsigned char *p, size_t n) noexcept:
    """The package returns such URLs as they are (its index files' header lines)."""
    return n >= 8 and memcmp(p, b"filedesc", 8) == 0


cdef inline object _ascii_str(const unsigned char *p, size_t n):
    """Keys are ASCII (every other byte is percent-escaped); decode as the package would if not."""
    cdef size_t i = 0
    cdef uint64_t word, seen = 0
    while i + 8 <= n:               # eight bytes a step: this check is most of the call's cost
        memcpy(&word, p + i, 8)
        seen |= word
        i += 8
    while i < n:
        seen |= p[i]
        i += 1
    if seen & 0x8080808080808080u:
        return PyBytes_FromStringAndSize(<const char *>p, <Py_ssize_t>n).decode("utf-8")
    cdef object s = PyUnicode_New(<Py_ssize_t>n, 127)
    memcpy(PyUnicode_DATA(s), p, n)
    return s


cdef object _key(const unsigned char *p, size_t n, bint as_str, unsigned flags):
    """The key of n bytes at p, as str or bytes; None when the package would raise.
    Raises UrlError for a URL too long to canonicalize, MemoryError."""
    cdef unsigned char *buf
    cdef unsigned char *big = NULL
    cdef size_t cap
    cdef size_t outlen = 0
    cdef int rc
    cdef bytes idna = None
    cdef const unsigned char *ip = NULL
    cdef size_t il = 0
    try:
        while True:
            cap = WA_SURT_CAP(n, il)
            if cap <= _STATIC_CAP:
                buf = _scratch
                rc = wa_surt_key_opts(p, n, buf, cap, &outlen, ip, il, idna is not None, flags)
            else:
                free(big)
                big = <unsigned char *>malloc(cap)
                if big == NULL:
                    raise MemoryError()
                buf = big
                with nogil:
                    rc = wa_surt_key_opts(p, n, buf, cap, &outlen, ip, il, idna is not None, flags)
            if rc == WA_OK:
                if as_str:
                    return _ascii_str(buf, outlen)
                return PyBytes_FromStringAndSize(<char *>buf, <Py_ssize_t>outlen)
            if rc == WA_SURT_FAIL:
                return None
            if rc == WA_SURT_NEED_IDNA and idna is None:
                idna = _idna(PyBytes_FromStringAndSize(<char *>buf, <Py_ssize_t>outlen))
                ip = <const unsigned char *>PyBytes_AS_STRING(idna)
                il = <size_t>PyBytes_GET_SIZE(idna)
                continue
            if rc == WA_SURT_SMALL:
                raise_status(rc, None, None, f"URL of {n} bytes is too long to canonicalize")
            raise UrlError(f"SURT kernel status {rc} for a URL of {n} bytes")
    finally:
        free(big)


cdef object _surt_one(object url, bint or_url, unsigned flags):
    """surt(url), or with or_url surt_or_url(url), with the core's option bits;
    raises UrlError, TypeError as they do."""
    cdef const char *p
    cdef Py_ssize_t n
    cdef object key
    if isinstance(url, str):
        try:
            p = PyUnicode_AsUTF8AndSize(url, &n)
        except UnicodeEncodeError:
            if or_url:
                return url
            raise UrlError(f"URL is not encodable as UTF-8: {url!r}") from None
        if _is_filedesc(<const unsigned char *>p, <size_t>n):
            return url
        key = _key(<const unsigned char *>p, <size_t>n, True, flags)
        if key is None:
            if or_url:
                return url
            raise UrlError(f"cannot canonicalize URL {url!r}")
        return key
    if isinstance(url, bytes):
        n = PyBytes_GET_SIZE(url)
        if _is_filedesc(<const unsigned char *>PyBytes_AS_STRING(url), <size_t>n):
            return url
        key = _key(<const unsigned char *>PyBytes_AS_STRING(url), <size_t>n, False, flags)
        if key is None:
            if or_url:
                return url
            raise UrlError(f"cannot canonicalize URL {url!r}")
        return key
    if url is None:
        return "-"
    raise TypeError(f"surt() takes str, bytes or None, not {type(url).__name__}")


def surt(url, canonicalizer=None, **options):
    """The SURT key of ``url``, as ``surt.surt(url, canonicalizer, **options)`` gives it.

    str in, str out; bytes in, bytes out; None or empty gives "-", and a
    "filedesc..." URL is returned as it is.  Raises ``UrlError`` where the
    package raises (port not a number or out of range, nothing but spaces).
    The options are the package's keyword arguments (``DEFAULTS``), true or
    false by their truth value; an unknown one raises TypeError.
    """
    return _surt_one(url, False, <unsigned>_flags(canonicalizer, options, "surt"))


def surt_or_url(url, canonicalizer=None, **options):
    """The SURT key of ``url``, or ``url`` itself when it has none (cdxj-indexer's get_url_key)."""
    return _surt_one(url, True, <unsigned>_flags(canonicalizer, options, "surt_or_url"))


# ---- the one-URL call without argument parsing --------------------------------
#
# A def with **options makes a dict on every call, even an empty one; with the
# optional canonicalizer that is some 150 instructions, 4-8% of a one-URL call.
# So the module's `surt` and `surt_or_url` are METH_FASTCALL functions that
# take the usual call, one positional URL, straight to the core, and hand any
# other call, unchanged, to the def above (whose argument binding and error
# messages are Python's).

cdef extern from "Python.h":
    ctypedef struct PyMethodDef:
        const char *ml_name
        int ml_flags
        const char *ml_doc
    int METH_FASTCALL
    int METH_KEYWORDS
    object PyCFunction_NewEx(PyMethodDef *ml, PyObject *self, object module)
    object PyObject_Vectorcall(object callable, PyObject **args, size_t nargsf, PyObject *kwnames)

cdef extern from *:
    """
    /* ml_meth is declared a PyCFunction; METH_FASTCALL functions are cast to it, as CPython's own are */
    static void wa_surt_set_meth(PyMethodDef *d, void *fn) { d->ml_meth = (PyCFunction)(void (*)(void))fn; }
    """
    void wa_surt_set_meth(PyMethodDef *d, void *fn)

cdef object _surt_bound = surt
cdef object _surt_or_url_bound = surt_or_url


cdef object _surt_fast(PyObject *self, PyObject **args, Py_ssize_t nargs, PyObject *kwnames):
    """surt(*args, **kwargs) as a METH_FASTCALL function: NULL with the exception set as surt()
    raises it (Cython's convention for an object result is CPython's)."""
    if nargs == 1 and kwnames == NULL:
        return _surt_one(<object>args[0], False, WA_SURT_OPT_DEFAULT)
    return PyObject_Vectorcall(_surt_bound, args, <size_t>nargs, kwnames)


cdef object _surt_or_url_fast(PyObject *self, PyObject **args, Py_ssize_t nargs, PyObject *kwnames):
    """surt_or_url(*args, **kwargs), as _surt_fast is surt()."""
    if nargs == 1 and kwnames == NULL:
        return _surt_one(<object>args[0], True, WA_SURT_OPT_DEFAULT)
    return PyObject_Vectorcall(_surt_or_url_bound, args, <size_t>nargs, kwnames)


cdef PyMethodDef _fast_defs[2]
cdef list _fast_strings = []    # the bytes the method defs point into, alive with the module


cdef object _fast_function(int k, bytes name, void *fn, object bound):
    """A METH_FASTCALL function `name` calling fn, with bound's doc and signature; raises
    MemoryError."""
    doc = name + b"(url, canonicalizer=None, **options)\n--\n\n" + bound.__doc__.encode()
    _fast_strings.append((name, doc))
    _fast_defs[k].ml_name = name
    _fast_defs[k].ml_flags = METH_FASTCALL | METH_KEYWORDS
    _fast_defs[k].ml_doc = doc
    wa_surt_set_meth(&_fast_defs[k], fn)
    return PyCFunction_NewEx(&_fast_defs[k], NULL, __name__)   # no self: a plain built-in function


surt = _fast_function(0, b"surt", <void *>_surt_fast, _surt_bound)
surt_or_url = _fast_function(1, b"surt_or_url", <void *>_surt_or_url_fast, _surt_or_url_bound)


def surt_many(urls, *, bint or_url=False, canonicalizer=None, **options):
    """``[surt(u, **options) for u in urls]`` without the per-call overhead; the work runs
    without the GIL.

    With ``or_url=True`` a URL without a key stands for itself, as in ``surt_or_url``.
    """
    cdef unsigned flags = WA_SURT_OPT_DEFAULT
    if options or canonicalizer is not None:
        flags = <unsigned>_flags(canonicalizer, options, "surt_many")
    cdef object seq = PySequence_Fast(urls, "surt_many() takes a sequence of URLs")
    cdef Py_ssize_t total = PySequence_Fast_GET_SIZE(seq)
    cdef list result = PyList_New(total)
    cdef Py_ssize_t base, cnt, i
    cdef const unsigned char **ptrs = NULL
    cdef size_t *lens = NULL
    cdef size_t *offs = NULL
    cdef int *kinds = NULL
    cdef int *rcs = NULL
    cdef unsigned char *arena = NULL
    cdef unsigned char *scratch = NULL
    cdef unsigned char *tmp
    cdef size_t arena_cap = 0, used, outlen, maxn, cap = 0, need
    cdef Py_ssize_t sn
    cdef const char *sp
    cdef object item, key
    cdef bint failed_alloc
    if total == 0:
        return result
    try:
        ptrs = <const unsigned char **>malloc(_CHUNK * sizeof(void *))
        lens = <size_t *>malloc(_CHUNK * sizeof(size_t))
        offs = <size_t *>malloc(_CHUNK * sizeof(size_t))
        kinds = <int *>malloc(_CHUNK * sizeof(int))
        rcs = <int *>malloc(_CHUNK * sizeof(int))
        if not (ptrs and lens and offs and kinds and rcs):
            raise MemoryError()
        base = 0
        while base < total:
            cnt = min(<Py_ssize_t>_CHUNK, total - base)
            maxn = 0
            # 1. with the GIL: borrow each URL's bytes (seq keeps the objects alive)
            for i in range(cnt):
                item = <object>PySequence_Fast_GET_ITEM(seq, base + i)
                if isinstance(item, str):
                    try:
                        sp = PyUnicode_AsUTF8AndSize(item, &sn)
                        kinds[i] = _K_STR
                    except UnicodeEncodeError:
                        sp = NULL
                        sn = 0
                        kinds[i] = _K_BAD_STR
                elif isinstance(item, bytes):
                    sp = PyBytes_AS_STRING(item)
                    sn = PyBytes_GET_SIZE(item)
                    kinds[i] = _K_BYTES
                elif item is None:
                    sp = NULL
                    sn = 0
                    kinds[i] = _K_NONE
                else:
                    raise TypeError(f"surt_many() takes str, bytes or None items, not {type(item).__name__}")
                ptrs[i] = <const unsigned char *>sp
                lens[i] = <size_t>sn
                if sp != NULL and _is_filedesc(ptrs[i], lens[i]):
                    kinds[i] = _K_PASS
                if <size_t>sn > maxn:
                    maxn = <size_t>sn
            need = WA_SURT_CAP(maxn, 0)
            if need > cap:
                free(scratch)
                scratch = <unsigned char *>malloc(need)
                if scratch == NULL:
                    cap = 0
                    raise MemoryError()
                cap = need
            # 2. without the GIL: every key of the chunk into one arena
            failed_alloc = False
            with nogil:
                used = 0
                for i in range(cnt):
                    rcs[i] = WA_SURT_FAIL
                    if kinds[i] != _K_STR and kinds[i] != _K_BYTES:
                        continue
                    rcs[i] = wa_surt_key_opts(ptrs[i], lens[i], scratch, cap, &outlen, NULL, 0, 0, flags)
                    if rcs[i] != WA_OK:
                        continue
                    if used + outlen > arena_cap:
                        tmp = <unsigned char *>realloc(arena, 2 * (used + outlen) + 4096)
                        if tmp == NULL:
                            failed_alloc = True
                            break
                        arena = tmp
                        arena_cap = 2 * (used + outlen) + 4096
                    memcpy(arena + used, scratch, outlen)
                    offs[i] = used
                    lens[i] = outlen
                    used += outlen
            if failed_alloc:
                raise MemoryError()
            # 3. with the GIL: the result objects; the rare statuses take the one-URL path
            for i in range(cnt):
                item = <object>PySequence_Fast_GET_ITEM(seq, base + i)
                if kinds[i] == _K_PASS:
                    key = item
                elif rcs[i] == WA_OK:
                    if kinds[i] == _K_STR:
                        key = _ascii_str(arena + offs[i], lens[i])
                    else:
                        key = PyBytes_FromStringAndSize(<char *>(arena + offs[i]), <Py_ssize_t>lens[i])
                else:
                    key = _surt_one(item, or_url, flags)
                Py_INCREF(key)
                PyList_SET_ITEM(result, base + i, key)
            base += cnt
    finally:
        free(ptrs)
        free(lens)
        free(offs)
        free(kinds)
        free(rcs)
        free(arena)
        free(scratch)
    return result


# ---- test hooks -------------------------------------------------------------

OK = WA_OK
NEED_IDNA = WA_SURT_NEED_IDNA
FAIL = WA_SURT_FAIL
SMALL = WA_SURT_SMALL


def _cap(size_t n, size_t idna_len):
    """WA_SURT_CAP(n, idna_len): the buffer size the C core asks for."""
    return WA_SURT_CAP(n, idna_len)


def _raw_key(bytes url, Py_ssize_t cap, idna=None, unsigned flags=WA_SURT_OPT_DEFAULT):
    """One call of wa_surt_key_opts into a buffer of exactly ``cap`` bytes; (status, out[:outlen]).

    The buffer is followed by a guard zone; RuntimeError if the core wrote into it.
    """
    cdef size_t guard = 256, i, outlen = 0
    cdef int rc
    cdef unsigned char *buf
    cdef const unsigned char *ip = NULL
    cdef size_t il = 0
    if cap < 0:
        raise ValueError("cap must be >= 0")
    buf = <unsigned char *>malloc(<size_t>cap + guard)
    if buf == NULL:
        raise MemoryError()
    if idna is not None:
        ip = <const unsigned char *>PyBytes_AS_STRING(idna)
        il = <size_t>PyBytes_GET_SIZE(idna)
    try:
        for i in range(<size_t>cap + guard):
            buf[i] = 0xA5
        rc = wa_surt_key_opts(<const unsigned char *>PyBytes_AS_STRING(url), <size_t>PyBytes_GET_SIZE(url),
                              buf, <size_t>cap, &outlen, ip, il, idna is not None, flags)
        for i in range(<size_t>cap, <size_t>cap + guard):
            if buf[i] != 0xA5:
                raise RuntimeError(f"wa_surt_key wrote past its buffer at +{i - <size_t>cap}")
        if outlen > <size_t>cap:
            raise RuntimeError("wa_surt_key reported more output than its buffer holds")
        return rc, PyBytes_FromStringAndSize(<char *>buf, <Py_ssize_t>outlen)
    finally:
        free(buf)
