"""The repository speaks of the product, not of how it was developed.

The README, docs/, the benchmark scripts and their README, src/ and tests/ say what warchive does
and why; they do not point into this project's issue tracker or its history, which a reader of a
release does not have. What fails here:

- **an issue number of this project**: ``issue 17``, ``issue #17``, ``Issue 13's walk``,
  ``issues 12 and 13`` (the word ``issue`` or ``issues``, then a number, ``#`` allowed between),
  and an acceptance label, ``acceptance 3``, ``Acceptance 4:``. A number without ``#`` followed
  by a plural noun is the verb (``a crawl issues 300 requests``, ``may issue 2 fetches``) and is
  allowed; ``was``, ``has``, ``is``, ``does``, ``says`` and the like after the number are not
  nouns (``issue 13 was``). Another project's issue is a fact about that project and may be
  cited: ``pywb#858``, ``webrecorder/warcio#74`` (no word ``issue``), and ``its issue #961``,
  ``their issue 5``, ``pywb's issue 961``: an issue number right after ``its``, ``their`` or a
  possessive name other than ``warchive's``, ``this project's`` or ``our``.
- **a commit hash in prose**: 7 to 40 hex digits, at least one of them a digit and one a letter,
  after ``commit``/``commits``/``revision``/``rev``, or after ``main at``, ``master at``,
  ``HEAD at`` or ``branch NAME at``: ``commit 7ce76d5``, ``(main at be166d5)``, ``branch dask at
  85ae76c``. Other hex (digests, record ids, ``.commit()`` calls) is not in that position.

Checked: every tracked text file (UTF-8; binary fixtures are skipped) under ``README.md``,
``docs/``, ``bench/*.py`` (the scripts at the top of bench/), ``bench/README.md``, ``src/`` and
``tests/``. Not checked: ``bench/results/`` (dated result files keep the history of the runs
they record) and this file, whose examples must name what the rules find.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

import pytest

from repofiles import tracked_texts

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().relative_to(ROOT).as_posix()

ISSUE = re.compile(r"\b(?:issues?\s*#?\s*|acceptance\s+#?)\d+", re.IGNORECASE)
# an issue of another project: "its issue #961", "their issue 5", "pywb's issue 961"
OTHERS = re.compile(r"(?:\b(?:its|their)|(?<![\w.-])(?!(?:warchive|project|our)'s\b)[A-Za-z][\w.-]*'s)\s+$",
                    re.IGNORECASE)
# "issue 300 requests": the verb, its object a plural noun (not "issue 13 was", "issue 12 says")
VERB = re.compile(r"\s+(?!(?:was|is|has|does|says|asks|lists|wants|needs|gives|holds|makes|calls|adds)\b)"
                  r"[a-z]+s\b")
HASH = re.compile(r"\b(?:commits?|revision|rev\.?|(?:main|master|HEAD|branch\s+\S+)\s+at)\s+\(?"
                  r"(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])([0-9a-f]{7,40})\b")


def history(line: str) -> Optional[str]:
    """What in ``line`` points into this project's history (an issue number, an acceptance label,
    a commit hash), or None."""
    for m in ISSUE.finditer(line):
        if m.group().lower().startswith("issue"):
            if OTHERS.search(line[:m.start()]):
                continue
            if "#" not in m.group() and VERB.match(line, m.end()):
                continue
        return m.group()
    h = HASH.search(line)
    return h.group() if h else None


def checked(name: str) -> bool:
    """Whether the tracked file ``name`` is one this test reads."""
    if name == HERE or name.startswith("bench/results/"):
        return False
    if name in ("README.md", "bench/README.md"):
        return True
    if name.startswith("bench/"):
        return name.count("/") == 1 and name.endswith(".py")
    return name.startswith(("docs/", "src/", "tests/"))


@pytest.mark.parametrize("line", [
    '"""``warchive serve`` held under load for minutes (issue 17): wrk at 200 connections',
    "files (issue 14, acceptance 3), and damage to the chunks is served around",
    "(Issue 13's walk over the CLI; the rules are docs/cli.md's \"Paths\").",
    "see issue #17 for the figures",
    "fixed by issues 12 and 13",
    "an issue#9 leftover",
    '    """Acceptance 4: a generated 10 GB CDXJ sorts with default settings',
    "the rule warchive's issue 12 asked for",
    "a traceback before issue 13 was closed",
    "issue 12 says so",
    "as our issue 5 and this project's issue 12 asked",
    "see issue #17 items",
    "| warchive serve of commit 7ce76d5 (before the quick path), same run | 6,027 |",
    "took its work (main at be166d5), kept unchanged below",
    "== AFTER: branch dask at 85ae76c (its later commits change no library code)",
    "the commits 1a2b3c4 and 5d6e7f8",
    "the tree at revision 0123abcd4567ef",
])
def test_the_rules_find_history(line: str) -> None:
    assert history(line) is not None


@pytest.mark.parametrize("line", [
    "no HTTP token. pywb crashes on some of these (its issue #961); sent as they are",
    "pywb's issue 961 and their issue 5 are theirs",
    "warcio's writer (webrecorder/warcio#74), Heritrix FetchHTTP (pywb#858)",
    '    """The warning a lenient reader issues for a defect when it was given no callback;',
    "a crawl issues 300 requests; the issue is that 20 of them fail",
    "each lane may issue 2 fetches at once",
    "the previous capture's digest sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ",
    "WARC-Record-ID: <urn:uuid:5122ea46-d1c3-4ed4-9b92-4c7a99f3519e>",
    "        cluster = writer.commit()   # then 7ce76d5 is not a commit here",
    "commit the decade facade",
    "the commit 12345678 records",
])
def test_the_rules_leave_other_text(line: str) -> None:
    assert history(line) is None


def test_the_files_read_are_the_products() -> None:
    assert checked("README.md") and checked("docs/cli.md") and checked("bench/compare.py")
    assert checked("bench/README.md") and checked("src/warchive/surt.py") and checked("tests/data/README.md")
    assert not checked("bench/results/dask-2026-12-07.txt") and not checked(HERE)
    assert not checked("bench/results/x.py") and not checked("scripts/demo.sh") and not checked("pyproject.toml")


def test_no_tracked_file_tells_the_projects_history() -> None:
    files = tracked_texts(checked)
    assert len(files) > 100   # (the listing worked: the repository has hundreds of text files)
    bad = []
    for name, text in files:
        for n, line in enumerate(text.splitlines(), 1):
            hit = history(line)
            if hit:
                bad.append(f"{name}:{n}: {hit!r} in {line.strip()[:120]}")
    assert not bad, "issue numbers or commit hashes of this project (say what the product does instead):\n" \
        + "\n".join(bad)
