"""The writer's examples in docs/api.md run as they are printed, and what they write passes
``warcio check`` and ``warchive check``, and holds the records each example says.

Each example is the ```python block after a ``<!-- example: NAME -->`` line; they run in
order in one directory (the copy example reads the response example's file), each in a
fresh interpreter.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator as WarcioIterator

ROOT = Path(__file__).resolve().parents[2]
WARCIO = Path(sys.executable).with_name("warcio")
EXAMPLE = re.compile(r"<!-- example: (\w+) -->\n```python\n(.*?)```", re.S)

# what each example writes: {file: [(WARC-Type, WARC-Target-URI), ...]}, from the example's text
EXPECTED = {
    "response": {"response.warc.gz": [("warcinfo", None), ("response", "https://example.com/"),
                                      ("request", "https://example.com/")]},
    "revisit": {"revisit.warc.gz": [("warcinfo", None), ("response", "https://example.com/a"),
                                    ("request", "https://example.com/a"), ("revisit", "https://example.com/b")]},
    "resource": {"resource.warc.gz": [("warcinfo", None), ("resource", "https://example.com/notes.txt"),
                                      ("resource", "urn:example:logo")]},
    "metadata": {"metadata.warc.gz": [("warcinfo", None), ("response", "https://example.com/"),
                                      ("request", "https://example.com/"), ("metadata", "https://example.com/")]},
    "warcinfo": {"warcinfo.warc.gz": [("warcinfo", None), ("resource", "urn:example:readme")],
                 "bare.warc": [("warcinfo", None)]},
    "copy": {"copy.warc.gz": [("response", "https://example.com/"), ("request", "https://example.com/")]},
}


def examples() -> list:
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    section = text[text.index("## Writing WARC files"):]
    section = section[:section.index("\n## ", 3)]
    return EXAMPLE.findall(section)


def test_the_docs_have_the_five_examples_in_ten_lines():
    found = examples()
    assert [n for n, _ in found] == list(EXPECTED)
    for name, code in found:
        assert len(code.rstrip("\n").split("\n")) <= 10, name


def listing(path: Path) -> list:
    with open(path, "rb") as f:
        return [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI")) for r in WarcioIterator(f)]


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    d = tmp_path_factory.mktemp("docs")
    out = {}
    for name, code in examples():
        before = set(d.iterdir())
        # (the environment the tests run in: warchive imports as it does here, installed or from src)
        r = subprocess.run([sys.executable, "-c", code], cwd=d, capture_output=True, text=True)
        out[name] = (r, {p.name for p in set(d.iterdir()) - before})
    return d, out


@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_example_runs_and_its_files_pass_both_checks(ran, name):
    d, out = ran
    r, made = out[name]
    assert r.returncode == 0, r.stderr
    assert made == set(EXPECTED[name])
    for fname, records in EXPECTED[name].items():
        path = d / fname
        assert listing(path) == records
        c = subprocess.run([str(WARCIO), "check", "-v", str(path)], capture_output=True, text=True)
        assert c.returncode == 0 and "fail" not in c.stdout, c.stdout + c.stderr
        c = subprocess.run([sys.executable, "-m", "warchive", "check", "--strict", str(path)],
                           capture_output=True, text=True)
        assert c.returncode == 0, c.stdout + c.stderr


def test_what_the_examples_say_they_write(ran):
    d, out = ran
    r, _ = out["response"]
    name, offset, length, digest = r.stdout.split()
    assert name == "response.warc.gz"
    data = (d / name).read_bytes()
    with open(d / name, "rb") as f:
        it = WarcioIterator(f)
        for rec in it:
            if rec.rec_type == "response":
                body = rec.content_stream().read()
                it.read_to_end()
                assert (it.get_record_offset(), it.get_record_length()) == (int(offset), int(length))
                assert rec.rec_headers.get_header("WARC-Payload-Digest") == digest
                assert body == b"<html>Welcome!</html>"
    assert int(offset) + int(length) < len(data)
    with open(d / "resource.warc.gz", "rb") as f:
        notes = [rec.content_stream().read() for rec in WarcioIterator(f) if rec.rec_type == "resource"][0]
    assert notes == "Notes: naïve café, 世界\n".encode("utf-8")
    size_line = out["copy"][0].stdout.split(maxsplit=1)
    assert int(size_line[0]) == (d / "copy.warc.gz").stat().st_size
