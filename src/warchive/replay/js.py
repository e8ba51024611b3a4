"""Server-side rewriting of JavaScript (``js_`` bodies and, through ``rewrite_js``, the inline
scripts the HTML rewriter finds): the few references that would take a replayed page out of
the archive are pointed at objects of the client script (static/wa_client.js), as pywb's
light JS rewriters do (its ``JSLocationRewriterRules``; the rules are ours, learned from it):

    location, x.location        ->  __wa_location, x.__wa_location
    top, x.top                  ->  __wa_top, x.__wa_top
    parent, window.parent       ->  __wa_parent, window.__wa_parent   (bare, or after window/self/top/parent)
    import(spec)                ->  __wa_import("<script URL>")(spec)

The client defines ``__wa_location``, ``__wa_top`` and ``__wa_parent`` as accessors on
``Object.prototype``: on a window (or a document, or an element in an inline handler's scope)
they give the archive's location proxy and the archive's top and parent frames, on any other
object the property of the original name, so a rename of ``rect.top`` or ``data.location`` reads
and writes what it did. ``__wa_import(base)`` resolves the specifier against the script's
original URL and imports it from the archive.

Unlike pywb, the rewriter tokenizes as far as it must to leave literals alone: nothing inside a
string, a template's text, a comment or a regular expression literal is changed ("Back to top"
stays as written), while code inside a template's ``${...}`` is rewritten. A regular expression
is told from a division by the token before the ``/``, as every JavaScript tokenizer without a
parser does (after ``)``, ``]``, an identifier, a number or a literal it is a division). Other
rules that keep rewritten code meaning what it meant: object keys and labels (``top: 1``,
``break top``) are left; a shorthand property (``{top, left}``, ``scrollTo({top})``) keeps its
key (``{top: __wa_top, left}``) except in declarations and module import/export lists, where
the rename is consistent as it is.

The rewriter streams: ``feed`` takes any piece of the body and gives back what it can already
decide (it holds back at most an unfinished literal, a word cut at the end of the piece and
the white space after a word); ``close`` gives the rest. Bytes are read as Latin-1, so every
byte it does not rewrite comes out as it went in, whatever the script's encoding. It never
raises on bad input: a literal left open at a line end (where JavaScript would have failed) is
closed there. docs/replay.md ("JavaScript") lists where it differs from pywb, with the inputs
that show it; tests/differential/test_js_vs_pywb.py compares it with pywb on the corpus scripts.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import List, Optional, Tuple

PREFIX = "__wa_"
NAMES = ("location", "top", "parent")
IMPORT = "import"
_OBJECTS_OF_PARENT = ("window", "self", "globalThis", "top", "parent", PREFIX + "top", PREFIX + "parent")

# the words after which `/` starts a regular expression (after any other word it is a division)
_BEFORE_REGEX = frozenset(("return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case",
                           "do", "else", "yield", "await"))
# the words before a `{` that open an expression (an object literal)
_BEFORE_LITERAL = frozenset(("return", "yield", "await", "typeof", "void", "case", "in", "of", "delete"))

CONTEXT = 512        # characters of input kept before the unread text, for the looks back
LOOKAHEAD = 64       # white space looked through after a word
REGEX_LIMIT = 4096   # a `/` whose literal does not end within this many characters is a division

_WORDS = "location|top|parent|import"
# what code mode looks for: a whole string or block comment first (one match for the common
# case), else the character that opens a literal, a brace (in a template's ${}), a word
_WHOLE = (r"\"(?:[^\"\\\n\r]|\\(?:\r\n|[\s\S]))*\"|'(?:[^'\\\n\r]|\\(?:\r\n|[\s\S]))*'|/\*[\s\S]*?\*/|")
_CODE = re.compile(_WHOLE + r"[\"'`/]|(?<![\w$#])(?:" + _WORDS + r")(?![\w$])")
_CODE_IN_TEMPLATE = re.compile(_WHOLE + r"[\"'`/{}]|(?<![\w$#])(?:" + _WORDS + r")(?![\w$])")
_STRING = {"'": re.compile(r"(?:[^'\\\n\r]|\\(?:\r\n|[\s\S]))*"),
           '"': re.compile(r'(?:[^"\\\n\r]|\\(?:\r\n|[\s\S]))*')}
_TEMPLATE = re.compile(r"(?:[^`\\$]|\\[\s\S]|\$(?!\{))*")
_REGEX = re.compile(r"(?:[^\\/\[\n\r]|\\[^\n\r]|\[(?:[^\]\\\n\r]|\\[^\n\r])*\])*")
_LINE_END = re.compile(r"[\n\r\u2028\u2029]")
_TAIL_WORD = re.compile(r"[\w$]{1,8}\Z")
_WORD_BEFORE = re.compile(r"([\w$]+)\s*\Z")
_SPACE = " \t\n\r\x0b\x0c\xa0\ufeff\u2028\u2029"

CODE, SQ, DQ, TEMPLATE, LINE_COMMENT, BLOCK_COMMENT = "code", "'", '"', "`", "//", "/*"


@dataclass(frozen=True)
class Edit:
    """One change, at ``start``..``end`` of the input (in characters of the text fed)."""
    start: int
    end: int
    name: str          # "location", "top", "parent" or "import"
    text: str          # what replaced input[start:end]


def js_string(value: Optional[str]) -> str:
    """``value`` as a JavaScript literal that no HTML parser can end a ``<script>`` with."""
    text = json.dumps(value, ensure_ascii=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


class JsRewriter:
    """The streaming rewriter of one script (see the module docstring). ``base`` is the URL the
    script's ``import()`` specifiers are relative to (its original URL; None: the page's).
    ``record``: keep ``edits`` (every change) and ``literals`` (the (start, end) of every
    string, template text, comment and regular expression), for tests."""

    def __init__(self, base: Optional[str] = None, *, prefix: str = PREFIX, record: bool = False) -> None:
        self.prefix = prefix
        self._import = f"{prefix}import({js_string(base)})("
        self._ctx = ""            # input before the unread text
        self._text = ""           # input not decided yet
        self._offset = 0          # where _text starts in the whole input
        self._mode = CODE
        self._stack: List[str] = []   # "{" and "${" open in code, innermost last
        self._literal_start = 0
        self.record = record
        self.edits: List[Edit] = []
        self.literals: List[Tuple[int, int]] = []

    # ------------------------------------------------------------------ the doors
    def feed(self, data: bytes) -> bytes:
        return self.feed_text(data.decode("latin-1")).encode("latin-1")

    def close(self) -> bytes:
        return self.close_text().encode("latin-1")

    def feed_text(self, text: str) -> str:
        self._text += text
        return self._run(final=False)

    def close_text(self) -> str:
        out = self._run(final=True)
        if self._mode != CODE:
            self._end_literal(self._offset + len(self._text))
        return out

    # ------------------------------------------------------------------ the scanner
    def _run(self, final: bool) -> str:
        s = self._ctx + self._text
        base = self._offset - len(self._ctx)   # the input position of s[0]
        i = len(self._ctx)                     # where the unread text starts in s
        n = len(s)
        out: List[str] = []
        done = i                               # s[i:done] decided and copied ... s[done:] not yet
        last = i                               # copied to out up to here

        def emit_to(j: int) -> None:
            nonlocal last
            if j > last:
                out.append(s[last:j])
                last = j

        pos = i
        while pos < n:
            mode = self._mode
            if mode in (SQ, DQ):
                end = _run_end(_STRING[mode], s, pos)
                if end >= n or s[end] == "\\":     # the piece ends inside it (or on a backslash)
                    pos = done = n if final else end
                    break
                if s[end] == mode:
                    end += 1
                self._mode = CODE                       # closed, or left open at a line end
                self._end_literal(base + end)
                pos = done = end
                continue
            if mode == TEMPLATE:
                end = _run_end(_TEMPLATE, s, pos)
                if end < n and s[end] == "`":
                    self._mode = CODE
                    self._end_literal(base + end + 1)
                    pos = done = end + 1
                    continue
                if end < n and s[end] == "$":             # '${' (any other '$' was read)
                    self._end_literal(base + end)
                    self._stack.append("${")
                    self._mode = CODE
                    pos = done = end + 2
                    continue
                if final:
                    pos = done = n
                    break
                hold = end
                if hold == n and s.endswith("$"):         # maybe '${' cut in two
                    hold = n - 2 if s.endswith("\\$") else n - 1
                pos = done = max(pos, hold)
                break
            if mode == LINE_COMMENT:
                m2 = _LINE_END.search(s, pos)
                if m2 is None:
                    pos = done = n
                    break
                self._mode = CODE
                self._end_literal(base + m2.start())
                pos = done = m2.start()
                continue
            if mode == BLOCK_COMMENT:
                k = s.find("*/", pos)
                if k < 0:
                    pos = done = n - 1 if (not final and s.endswith("*")) else n
                    break
                self._mode = CODE
                self._end_literal(base + k + 2)
                pos = done = k + 2
                continue
            # code
            rx = _CODE_IN_TEMPLATE if self._stack else _CODE
            m = rx.search(s, pos)
            if m is None:
                if final:
                    pos = done = n
                else:
                    tail = _TAIL_WORD.search(s, pos)
                    hold = tail.start() if tail is not None else (n - 1 if s.endswith("/") else n)
                    pos = done = max(hold, pos)
                break
            c = m.group()
            a = m.start()
            if len(c) > 1 and c[0] in "'\"/":     # a whole string or block comment
                if self.record:
                    self.literals.append((base + a, base + m.end()))
                pos = done = m.end()
                continue
            if c in ("'", '"', "`"):
                self._begin_literal(base + a)
                self._mode = {"'": SQ, '"': DQ, "`": TEMPLATE}[c]
                pos = done = a + 1
                continue
            if c == "{":
                self._stack.append("{")
                pos = done = a + 1
                continue
            if c == "}":
                top = self._stack.pop() if self._stack else "{"
                if top == "${":
                    self._mode = TEMPLATE
                    self._begin_literal(base + a)
                pos = done = a + 1
                continue
            if c == "/":
                if a + 1 >= n and not final:
                    pos = done = a
                    break
                nxt = s[a + 1] if a + 1 < n else ""
                if nxt == "/":
                    self._begin_literal(base + a)
                    self._mode = LINE_COMMENT
                    pos = done = a + 2
                    continue
                if nxt == "*":
                    self._begin_literal(base + a)
                    self._mode = BLOCK_COMMENT
                    pos = done = a + 2
                    continue
                if not _regex_may_start(s, a):
                    pos = done = a + 1
                    continue
                end = _run_end(_REGEX, s, a + 1)
                if end < n and s[end] == "/":
                    self._begin_literal(base + a)
                    self._end_literal(base + end + 1)
                    pos = done = end + 1
                    continue
                if not final and n - a < REGEX_LIMIT and _LINE_END.search(s, end) is None:
                    pos = done = a   # maybe a regex not all here yet
                    break
                pos = done = a + 1   # not a regex after all: a division
                continue
            # a word
            b = m.end()
            j = b
            while j < n and j - b < LOOKAHEAD and s[j] in _SPACE:
                j += 1
            if j >= n and not final and j - b < LOOKAHEAD:
                pos = done = a   # what follows the word is not here yet
                break
            after = s[j] if j < n else ""
            replacement = self._decide(s, a, b, c, after, j)
            if replacement is not None:
                text, end = replacement
                emit_to(a)
                out.append(text)
                last = end
                if self.record:
                    self.edits.append(Edit(base + a, base + end, c, text))
                pos = done = end
            else:
                pos = done = b
        emit_to(done)
        consumed = done
        self._ctx = s[max(0, consumed - CONTEXT):consumed]
        self._text = s[consumed:]
        self._offset = base + consumed
        return "".join(out)

    def _begin_literal(self, at: int) -> None:
        self._literal_start = at

    def _end_literal(self, at: int) -> None:
        if self.record and at > self._literal_start:
            self.literals.append((self._literal_start, at))

    # ------------------------------------------------------------------ the rules
    def _decide(self, s: str, a: int, b: int, word: str, after: str, j: int) -> Optional[Tuple[str, int]]:
        """What replaces s[a:...] for the word s[a:b] (``after`` is the first character after
        it and its white space, at j), or None to leave it."""
        p = s[a - 1] if a > 0 else ""
        member = p == "." and s[a - 3:a] != "..."
        if word == IMPORT:
            if member or after != "(":
                return None
            k = _innermost_opener(s, a)
            if _token_before(s, a)[1] in ("{", ",") and k >= 0 and s[k] == "{":
                return None                                     # a method named import
            return self._import, j + 1
        renamed = self.prefix + word
        if member:
            if word == "parent" and _object_before(s, a - 1) not in _OBJECTS_OF_PARENT:
                return None
            return renamed, b
        before_word, before = _token_before(s, a)
        if before_word in ("break", "continue"):
            return None                                         # a label
        if after == ":" and s[j + 1:j + 2] != ":":
            if before == "?" or before_word == "case":
                return renamed, b                               # a ternary's branch, a case
            return None                                         # a key, a label
        if after in (",", "}") and before in ("{", ","):        # a shorthand property
            if _literal_brace(s, a):
                return f"{word}: {renamed}", b
        return renamed, b


def _run_end(rx: "re.Pattern[str]", s: str, pos: int) -> int:
    """Where the run of ``rx`` (a pattern that matches the empty string too) from ``pos`` ends."""
    m = rx.match(s, pos)
    return m.end() if m is not None else pos


def _token_before(s: str, a: int) -> Tuple[str, str]:
    """(the word, or "", and the last character) before position a, white space skipped."""
    k = a
    while k > 0 and s[k - 1] in _SPACE:
        k -= 1
    if k == 0:
        return "", ""
    m = _WORD_BEFORE.search(s, max(0, k - 32), k)
    return (m.group(1) if m else ""), s[k - 1]


def _object_before(s: str, dot: int) -> str:
    """The identifier before the ``.`` (or ``?.``) at ``dot``."""
    k = dot - 1 if dot > 0 and s[dot - 1] == "?" else dot
    m = _WORD_BEFORE.search(s, max(0, k - 32), k)
    return m.group(1) if m else ""


def _regex_may_start(s: str, a: int) -> bool:
    """Whether the ``/`` at ``a`` (not a comment) starts a regular expression literal: it does
    after an operator, a punctuator but ``)`` and ``]``, or a keyword that takes an expression,
    and at the start; it is a division after an identifier, a number, a literal, ``)``, ``]``."""
    word, c = _token_before(s, a)
    if not c:
        return True
    if word:
        return word in _BEFORE_REGEX and not word[0].isdigit()
    return c not in ")]'\"`"


def _innermost_opener(s: str, a: int) -> int:
    """The position of the innermost bracket open before position a (-1: none in the context)."""
    depth = 0
    k = a - 1
    low = max(0, a - CONTEXT)
    while k >= low:
        c = s[k]
        if c in "}])":
            depth += 1
        elif c in "{[(":
            if depth == 0:
                return k
            depth -= 1
        k -= 1
    return -1


def _literal_brace(s: str, a: int) -> bool:
    """Whether the innermost ``{`` open before position a (looked for in the context held)
    opens an object literal or a parameter's pattern, where a shorthand property must keep its
    key, rather than a declaration, an import/export list or a class body."""
    k = _innermost_opener(s, a)
    if k < 0 or s[k] != "{":
        return False
    word, before = _token_before(s, k)
    if word:
        return word in _BEFORE_LITERAL
    return bool(before) and before not in ")]}"


def rewrite_js(text: str, base: Optional[str] = None) -> str:
    """A whole script rewritten (an inline ``<script>``'s text, an event handler's)."""
    rw = JsRewriter(base)
    return rw.feed_text(text) + rw.close_text()


__all__ = ["Edit", "JsRewriter", "NAMES", "PREFIX", "js_string", "rewrite_js"]
