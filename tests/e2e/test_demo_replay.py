"""`bash scripts/demo.sh` ends by serving the sample collection and printing a replay URL; that URL,
loaded in Debian's chromium, shows the archived page in the banner's frame.

The expected title is read from the sample WARC with warcio, not from anything warchive serves.
The demo runs with DEMO_SETUP=0 (the test environment is set up already) and DEMO_PORT=0, in a
process group of its own that the test ends.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

import localsite
from warchive.capture.browser import chromium_path

ROOT = Path(__file__).resolve().parents[2]
PAGE = "http://docs.python.org/3.11/index.html"


def _archived_title() -> str:
    with open(ROOT / "samples" / "docs-python" / "docs-python-3.11-part.warc.gz", "rb") as f:
        for rec in ArchiveIterator(f):
            if rec.rec_type == "response" and rec.rec_headers.get_header("WARC-Target-URI") == PAGE:
                html = rec.content_stream().read().decode("utf-8")
                return re.search(r"<title>(.*?)</title>", html, re.S).group(1).strip()
    raise AssertionError("the sample holds no capture of " + PAGE)


@pytest.fixture()
def demo(tmp_path):
    localsite.require_browser()
    venv_bin = Path(sys.executable).parent
    if not (venv_bin / "warchive").exists():
        pytest.skip("the demo runs .venv/bin/warchive: the test interpreter has no warchive script beside it")
    env = dict(os.environ, DEMO_SETUP="0", DEMO_PORT="0")
    proc = subprocess.Popen(["bash", "scripts/demo.sh"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    url = None
    out = []
    deadline = time.monotonic() + 240
    try:
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            out.append(line)
            m = re.match(r"\[demo\] open (\S+)", line)
            if m:
                url = m.group(1)
                break
        assert url, "the demo printed no replay URL:\n" + "".join(out[-30:])
        yield url
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)


def test_the_demo_serves_the_sample_page(demo):
    from playwright.sync_api import sync_playwright
    title = _archived_title()
    assert demo.endswith("/samples/20261129183042/" + PAGE)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), headless=True)
        try:
            page = browser.new_page()
            page.goto(demo)
            frame_el = page.wait_for_selector("#wa-frame")
            frame = frame_el.content_frame()
            frame.wait_for_load_state("load")
            assert frame.title() == title
            assert "2026" in page.inner_text("#wa-banner")
        finally:
            browser.close()
