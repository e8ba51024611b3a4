"""warchive.replay.handles: the archive files replay keeps open are the files their names lead to
(looked at again after ``recheck``), at most ``limit`` of them."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from warchive.replay.handles import OpenFiles


def read(f, n: int = 100) -> bytes:
    return os.pread(f.fileno(), n, 0)


def test_a_file_is_kept_open_and_shared(tmp_path: Path) -> None:
    p = tmp_path / "a.warc.gz"
    p.write_bytes(b"one")
    files = OpenFiles()
    f = files.get(str(p))
    assert files.get(str(p)) is f and read(f) == b"one"
    files.close()
    assert f.closed


def test_a_replaced_file_is_opened_again_after_the_recheck(tmp_path: Path) -> None:
    p = tmp_path / "a.warc.gz"
    p.write_bytes(b"old")
    files = OpenFiles(recheck=0.05)
    f = files.get(str(p))
    tmp = tmp_path / "new"
    tmp.write_bytes(b"new")
    os.replace(tmp, p)   # as a writer publishes: another file under the name
    assert read(files.get(str(p))) == b"old"   # within the recheck: the file that was opened
    time.sleep(0.06)
    g = files.get(str(p))
    assert g is not f and read(g) == b"new"
    assert read(f) == b"old"   # (a reader still holding the old one reads on)
    files.close()


def test_a_renamed_file_is_gone_after_the_recheck(tmp_path: Path) -> None:
    p = tmp_path / "a.warc.gz.open"
    p.write_bytes(b"data")
    files = OpenFiles(recheck=0.05)
    files.get(str(p))
    os.rename(p, tmp_path / "a.warc.gz")
    time.sleep(0.06)
    with pytest.raises(FileNotFoundError):
        files.get(str(p))
    files.close()


def test_at_most_limit_files_stay_open(tmp_path: Path) -> None:
    files = OpenFiles(limit=3)
    opened = []
    for i in range(5):
        p = tmp_path / f"{i}.warc.gz"
        p.write_bytes(str(i).encode())
        opened.append(files.get(str(p)))
    assert len(files._open) == 3
    assert files.get(str(tmp_path / "4.warc.gz")) is opened[4]   # the latest stay
    assert files.get(str(tmp_path / "0.warc.gz")) is not opened[0]   # the oldest was let go
    files.close()
