"""No tracked file names an absolute path of a development machine.

A path such as a checkout's virtual environment or a folder of benchmark data holds on the
machine where it was typed and nowhere else: a test that reads it passes there and fails on a
fresh clone, a default that names it sends every other user to a folder they do not have. Data
comes from an environment variable or an argument with a default relative to the checkout
(``WARCHIVE_CORPUS``, else ``corpus/``; ``WARCHIVE_SHARED_FIXTURES``, else ``../shared/fixtures``),
and the peers' commands from the test environment (the directory of ``sys.executable``, or PATH).

What counts as such a path: one under the home or work folders of a development machine
(``/work/``, ``/root/``, ``/home/NAME/``, ``/Users/NAME/``), a virtual environment named by an
absolute path (``/.../.venv``), and this checkout's own absolute path, wherever it is. A path is
recognised where a path can begin (at the start of a line, after white space, a quote, a
backtick, a parenthesis, ``=``, ``[`` or ``,``), so that the path part of a URL
(``http://host/home/x``) is not one. Example paths of a user's system in the docs
(``/srv/store``, ``/mnt/d1``) are not development machines and are allowed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional, Tuple

import pytest

from repofiles import tracked_texts

ROOT = Path(__file__).resolve().parents[2]
START = r"(?:^|(?<=[\s\"'`(=\[,]))"
MACHINE = re.compile(START + r"(?:/work/|/root/|/home/[^/\s]+/|/Users/[^/\s]+/|/[^\s\"'`]*/\.venv[\w-]*\b)")
# dated result files keep the paths of the runs they record; this file names such paths as examples
SKIP = ("bench/results/", "tests/unit/test_repo_paths.py")


def machine_path(text: str, checkout: str) -> Optional[Tuple[int, str]]:
    """(line number, line) of the first line of text that names a development machine's path."""
    for n, line in enumerate(text.splitlines(), 1):
        if MACHINE.search(line) or (checkout and checkout in line):
            return n, line.strip()
    return None


@pytest.mark.parametrize("line", [
    'WARCIO = Path("/home/dev/checkout/.venv/bin/warcio")',
    'default=os.environ.get("WARCHIVE_CORPUS", "/root/corpus")',
    "SHARED = Path('/Users/dev/shared/fixtures')",
    "    python bench/compare.py /home/alice/corpus",
    "see `/root/warchive/README.md`",
    "run /opt/checkout/.venv-pywb/bin/python",
    "files=[/Users/bob/crawl.warc.gz]",
])
def test_the_rule_finds_machine_paths(line):
    assert machine_path("first line\n" + line + "\n", "") == (2, line.strip())


@pytest.mark.parametrize("line", [
    'CORPUS = Path(os.environ.get("WARCHIVE_CORPUS", REPO / "corpus"))',
    "<base href=\"http://ex.test/home/x/\">",
    "https://example.org/home/items and http://host/root/",
    "warchive store init /srv/store --volumes /mnt/d{1,2}/w",
    "    .venv/bin/python -m pytest",
    "Disallow: /tmp/",
])
def test_the_rule_leaves_other_paths(line):
    assert machine_path(line, "") is None


def test_the_checkout_path_is_found():
    here = str(ROOT)
    assert machine_path(f"x\ncd {here}/tests\n", here) == (2, f"cd {here}/tests")


def test_no_tracked_file_names_a_machine_path():
    files = tracked_texts(lambda name: not name.startswith(SKIP))
    assert len(files) > 100   # (the listing worked: the repository has hundreds of text files)
    checkout = str(ROOT) if len(ROOT.parts) > 2 else ""   # (a checkout at /x would match too much)
    bad = []
    for name, text in files:
        hit = machine_path(text, checkout)
        if hit:
            bad.append(f"{name}:{hit[0]}: {hit[1][:120]}")
    assert not bad, "absolute paths of a development machine:\n" + "\n".join(bad)
