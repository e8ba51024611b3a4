# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Kernel html_rewrite: the streaming HTML and CSS tokenizer of replay's rewriting and the
crawler's link extraction.

The work is done by the C core (ext/csrc/wa_html.h and the headers it includes); this module
moves bytes in and out with the GIL released while C scans, and answers the core's requests:
when a URL needs more than the C fast paths know (wa_urlfast.h), or a <base href> changes the
base, the core stops and ``Kernel`` calls its handler (an object with ``on_url``, ``on_base`` and
``on_link_base`` methods, see ``Kernel``) with the raw bytes, then goes on. Which URLs to
rewrite, how to decode and escape them, what the prefixes and modifiers are: the handler's
job (warchive.replay.kernel, warchive.capture.links). This module decides nothing itself.
"""

from libc.stdint cimport uint8_t, uint32_t
from libc.string cimport memset
from libc.stdlib cimport free
from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE
from cpython.unicode cimport PyUnicode_DecodeASCII

from _lib.wa_common cimport WA_OK, WA_SLOW, WA_SAME, WA_DONE, WA_NEED, wa_bytes, wa_bytes_borrow, wa_bytes_free
from _lib.wa_html cimport *
from _status cimport raise_status

# The modifier slots, in the C core's order (wa_urlfast.h WA_M_*): the handler maps them to
# modifiers.
SLOTS = ("def", "", "im_", "js_", "cs_", "oe_", "if_", "fr_", "mp_")
assert len(SLOTS) == WA_NSLOTS

REQ_URL = WA_REQ_URL
REQ_BASE = WA_REQ_BASE
REQ_LINKBASE = WA_REQ_LINKBASE
REQ_SCRIPT = WA_REQ_SCRIPT
REQ_HANDLER = WA_REQ_HANDLER
SAME = WA_SAME
DONE = WA_DONE
SLOW = WA_SLOW

# Where a link was found (wa_html.h WA_LW_*) and, in CSS, in what (WA_LC_*).
LW_ATTR, LW_STYLE_ATTR, LW_STYLE_EL, LW_CSS = 1, 2, 3, 4
LC_URL, LC_IMPORT, LC_IMAGESET = 1, 2, 3

ATTR_NAMES = tuple(wa_attr_names[i].decode("ascii") for i in range(WA_A_COUNT))
TAG_NAMES = tuple(wa_tag_names[i].decode("ascii") for i in range(WA_T_COUNT))


cdef inline bytes _bytes(const uint8_t *p, size_t n):
    return PyBytes_FromStringAndSize(<const char *>p, <Py_ssize_t>n)


cdef class Kernel:
    """One document being tokenized.

    ``Kernel(handler, css=False, links=False, all_slow=False, scripts=False)``: an HTML document
    (or, with ``css``, a style sheet), rewritten (``feed`` returns the output) or, with ``links``,
    read for links (``feed`` returns the links found). ``all_slow`` sends every URL to the
    handler; ``scripts`` the text of every JavaScript ``<script>`` element (no ``type``, or one
    naming JavaScript, ECMAScript or ``module``).

    The handler answers the core's requests, with the GIL held:

    * ``on_url(raw, ctx, slot, force_abs) -> bytes | None``: the bytes that replace ``raw`` (a URL
      as the document holds it: ``ctx`` says where, see wa_html.h WA_CTX), or None to keep it;
    * ``on_base(raw, ctx) -> bytes | None``: the same for the first <base href>, which it must also
      make the base of what follows (``set_base``);
    * ``on_script(raw, last) -> bytes | None`` (``scripts``): the bytes that replace the next piece
      of a script's text (the pieces of one script come in order; ``last``: the script ends with
      this one, which may be empty), or None to keep it;
    * ``on_handler(raw, ctx) -> bytes | None`` (``scripts``): the same for the value of an event
      handler attribute (``on...=``) that names ``location``, ``top``, ``parent`` or ``import``;
    * ``on_link_base(raw, ctx, links) -> None``: links mode, the first <base href>: ``links`` are
      those found before it (to be resolved against the old base), then ``set_base`` or not.

    Links come out as tuples ``(hop, what, attr, css, raw, ctx, value, tag)``: ``value`` is the
    URL resolved against the base (str) when ``raw`` is 0, each (hop, URL) once per document,
    else the raw bytes (to decode, resolve, and compare with those already found).
    An exception in the handler leaves the kernel unusable (``ValueError`` afterwards).
    """
    cdef wa_html *h
    cdef object handler
    cdef bint broken
    cdef bint closed
    cdef object _kept      # the bytes the C core borrows (prefixes, heads)

    def __cinit__(self, handler, bint css=False, bint links=False, bint all_slow=False, bint scripts=False):
        self.h = wa_html_new(css, links)
        if self.h == NULL:
            raise MemoryError()
        self.h.all_slow = all_slow
        self.h.scripts = scripts and not links
        self.handler = handler

    def __dealloc__(self):
        wa_html_free(self.h)

    def set_base(self, bytes url not None):
        """The base relative URLs are resolved against (the page, or its <base href>)."""
        if wa_html_set_base(self.h, <const uint8_t *>PyBytes_AS_STRING(url), <size_t>PyBytes_GET_SIZE(url)):
            raise MemoryError()

    def base_ok(self):
        """(links fast path usable, rewriting fast path usable) for the current base."""
        return bool(self.h.rw.base.ok), bool(self.h.rw.base.rw_ok)

    def set_prefixes(self, bytes prefix not None, bytes full not None, bint check_prefix, bint check_full):
        """URLs starting with ``prefix`` (when ``check_prefix``) or ``full`` (``check_full``) are
        left alone, as UrlRewriter leaves them."""
        wa_bytes_borrow(&self.h.rw.prefix, PyBytes_AS_STRING(prefix), PyBytes_GET_SIZE(prefix))
        wa_bytes_borrow(&self.h.rw.full, PyBytes_AS_STRING(full), PyBytes_GET_SIZE(full))
        self._keep((prefix, full))
        self.h.rw.check_prefix = check_prefix
        self.h.rw.check_full = check_full

    def set_head(self, int slot, head):
        """The pieces of the archival URLs of modifier slot ``slot``: ``(abs, rel, sr, tail)``
        bytes (see wa_urlfast.h wa_rwhead), or None: that slot always goes to the handler."""
        cdef wa_rwhead *hd
        if not 0 <= slot < WA_NSLOTS:
            raise ValueError(f"slot {slot} out of range")
        cdef bytes a, r, s, t
        hd = &self.h.rw.heads[slot]
        hd.ok = 0
        if head is None:
            return
        a, r, s, t = head
        wa_bytes_borrow(&hd.abs, PyBytes_AS_STRING(a), PyBytes_GET_SIZE(a))
        wa_bytes_borrow(&hd.rel, PyBytes_AS_STRING(r), PyBytes_GET_SIZE(r))
        wa_bytes_borrow(&hd.sr, PyBytes_AS_STRING(s), PyBytes_GET_SIZE(s))
        wa_bytes_borrow(&hd.tail, PyBytes_AS_STRING(t), PyBytes_GET_SIZE(t))
        self._keep(head)
        hd.ok = 1

    cdef _keep(self, object x):
        if self._kept is None:
            self._kept = [x]
        else:
            self._kept.append(x)

    def set_heads(self, tuple heads not None):
        """``set_head`` for every slot at once: a tuple of WA_NSLOTS pieces (or None each)."""
        cdef int slot
        if len(heads) != WA_NSLOTS:
            raise ValueError(f"{len(heads)} heads for {WA_NSLOTS} slots")
        for slot in range(WA_NSLOTS):
            self.set_head(slot, heads[slot])

    cdef list _links(self):
        cdef wa_html *h = self.h
        cdef size_t i
        cdef wa_link *l
        cdef list out = []
        cdef const uint8_t *a = h.lkarena.p
        for i in range(h.nlk):
            l = &h.lk[i]
            out.append((chr(l.hop), l.what, l.attr, l.css, l.raw, l.ctx,
                        _bytes(a + l.off, l.len) if l.raw else PyUnicode_DecodeASCII(<const char *>a + l.off, <Py_ssize_t>l.len, NULL),
                        _bytes(a + l.toff, l.tlen)))
        h.nlk = 0
        h.lkarena.len = 0
        return out

    def feed(self, data, bint final=False):
        """Tokenize the next chunk (any bytes-like object); ``final``: the document ends with it.
        Returns the output bytes of this chunk (rewriting) or the links it completed (links)."""
        cdef Py_buffer buf
        cdef int rc
        cdef wa_html *h = self.h
        cdef object ans
        cdef bytes raw
        if self.broken:
            raise ValueError("the kernel stopped on an error earlier")
        if self.closed:
            raise ValueError("feed() after the final chunk")
        PyObject_GetBuffer(data, &buf, PyBUF_SIMPLE)
        try:
            with nogil:
                rc = wa_html_feed(h, <const uint8_t *>buf.buf, <size_t>buf.len, final)
            while rc == WA_NEED:
                raw = _bytes(h.w + h.req_s, h.req_e - h.req_s)
                try:
                    if h.req == WA_REQ_URL:
                        ans = self.handler.on_url(raw, h.req_ctx, h.req_slot, bool(h.req_force))
                    elif h.req == WA_REQ_BASE:
                        ans = self.handler.on_base(raw, h.req_ctx)
                    elif h.req == WA_REQ_SCRIPT:
                        ans = self.handler.on_script(raw, bool(h.req_force))
                    elif h.req == WA_REQ_HANDLER:
                        ans = self.handler.on_handler(raw, h.req_ctx)
                    else:
                        self.handler.on_link_base(raw, h.req_ctx, self._links())
                        ans = None
                except BaseException:
                    self.broken = True
                    raise
                if ans is None:
                    rc = wa_html_answer(h, NULL, 0, 1)
                else:
                    rc = wa_html_answer(h, <const uint8_t *>PyBytes_AS_STRING(ans), <size_t>PyBytes_GET_SIZE(ans), 0)
                if rc == WA_OK:
                    with nogil:
                        rc = wa_html_continue(h)
        finally:
            PyBuffer_Release(&buf)
        if rc != WA_OK:
            self.broken = True
            raise_status(rc)
        if final:
            self.closed = True
        if h.links:
            return self._links()
        out = _bytes(h.out.p, h.out.len)
        h.out.len = 0
        return out

    def held(self):
        """How many bytes the kernel holds for the next chunk (a construct the last one cut)."""
        return self.h.hold.len

    def rewrite_url(self, bytes url not None, int slot, bint force_abs=False):
        """The C fast path alone on one URL (tests): (SAME | DONE | SLOW, result bytes)."""
        cdef wa_bytes out
        cdef int verbatim, rc
        if not 0 <= slot < WA_NSLOTS:
            raise ValueError(f"slot {slot} out of range")
        memset(&out, 0, sizeof(out))
        try:
            rc = wa_rw_url(&self.h.rw, slot, force_abs, <const uint8_t *>PyBytes_AS_STRING(url),
                           <size_t>PyBytes_GET_SIZE(url), &out, &verbatim)
            raise_status(rc)
            return rc, _bytes(out.p, out.len) if rc == WA_DONE else b""
        finally:
            wa_bytes_free(&out)


def join(bytes base not None, bytes ref not None):
    """The C urljoin alone (tests): the joined URL, or None where it answers WA_SLOW."""
    cdef wa_urlbase b
    cdef wa_bytes out
    cdef int same, rc
    memset(&b, 0, sizeof(b))
    memset(&out, 0, sizeof(out))
    try:
        if wa_urlbase_set(&b, <const uint8_t *>PyBytes_AS_STRING(base), <size_t>PyBytes_GET_SIZE(base)):
            raise MemoryError()
        rc = wa_join(&b, <const uint8_t *>PyBytes_AS_STRING(ref), <size_t>PyBytes_GET_SIZE(ref), &out, &same)
        raise_status(rc)
        if rc == WA_SLOW:
            return None
        return ref if same else _bytes(out.p, out.len)
    finally:
        wa_urlbase_free(&b)
        wa_bytes_free(&out)


def decode_attr(bytes value not None):
    """The C character-reference decoder alone (tests): (decoded bytes, map)."""
    cdef wa_bytes out
    cdef wa_map m
    memset(&out, 0, sizeof(out))
    memset(&m, 0, sizeof(m))
    try:
        if wa_attr_decode(<const uint8_t *>PyBytes_AS_STRING(value), <size_t>PyBytes_GET_SIZE(value), &out, &m):
            raise MemoryError()
        return _bytes(out.p, out.len), [m.v[i] for i in range(m.n)]
    finally:
        wa_bytes_free(&out)
        free(m.v)
