"""The tracked text files of the checkout, for tests that read the whole repository
(tests/unit/test_repo_paths.py, tests/unit/test_repo_prose.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Callable, List, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[1]


def tracked_texts(wanted: Callable[[str], bool]) -> List[Tuple[str, str]]:
    """(path, text) of every tracked file that ``wanted`` keeps and that is UTF-8 text (binary
    fixtures are passed over); the test is skipped outside a git checkout."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    files = []
    for name in out.decode().split("\0"):
        if not name or not wanted(name):
            continue
        try:
            files.append((name, (ROOT / name).read_bytes().decode("utf-8")))
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue
    return files
