"""``warchive index store://STORE/NAME`` (and extract, check) read a stored file from its chunks
and say exactly what they say of the plain file: the index lines byte-identical to cdxj-indexer's
of the plain file, in every mode to warchive's own of the plain file.

Every valid fixture (warcgen's and the Wget pair) is put into one store with small fragments
(stripes of 2 KiB, so that records straddle stripes and gzip members start anywhere in them).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import VALID_IDS
from warchive._ext.cdx_lines import LineIndexer
from storekit import make_store
from warchive.errors import ArchiveError
from warchive.index.build import index_paths
from warchive.index.cdx import IndexOptions
from warchive.store import put
from warchive.store.urls import open_url
from warchive.warc.reader import ArchiveIterator

MODES = {"cdx11": IndexOptions(cdx11=True), "records-all": IndexOptions(records="all"),
         "post-append": IndexOptions(post_append=True), "verify": IndexOptions(verify=True)}


@pytest.fixture(scope="module")
def stored(tmp_path_factory, valid_archives):
    """{fixture id: store://STORE/NAME} of every valid fixture, in one store."""
    root = tmp_path_factory.mktemp("indexstore")
    store = make_store(root, fragment_size=512)
    urls = {}
    for fid in VALID_IDS:
        path = valid_archives[fid].path
        put(store, str(path))
        urls[fid] = f"store://{store.root}/{path.name}"
    return urls


def _lines(inputs, opts=None) -> bytes:
    out = []
    index_paths([str(p) for p in inputs], out.append, opts or IndexOptions())
    return b"".join(out)


def test_every_fixture_indexes_from_the_store_as_cdxj_indexer_indexes_the_file(valid_archives, stored,
                                                                               cdxj_indexer):
    differ = []
    for fid, url in stored.items():
        peer = cdxj_indexer([valid_archives[fid].path], [])
        assert peer.error is None, fid
        if _lines([url]) != peer.output:
            differ.append(fid)
    assert differ == []


@pytest.mark.parametrize("mode", list(MODES))
def test_every_mode_gives_the_plain_files_lines(valid_archives, stored, mode):
    differ = [fid for fid, url in stored.items()
              if _lines([url], MODES[mode]) != _lines([valid_archives[fid].path], MODES[mode])]
    assert differ == []


def test_records_read_from_the_store_equal_the_files(valid_archives, stored):
    """Every record's offset, length, heads and payload, iterating and at its offset with its length
    (as replay opens one), read from the store equal those read from the file."""
    for fid, url in stored.items():
        with ArchiveIterator(valid_archives[fid].path) as it:
            want = [_seen(r) for r in it]
        with open_url(url) as f:
            with ArchiveIterator(f) as it:
                got = [_seen(r) for r in it]
            assert got == want, fid
            for off, length, heads, payload in want:
                if length is None:
                    continue
                with ArchiveIterator(f, offset=off, length=length, window=4096) as one:
                    assert _seen(next(iter(one))) == (off, length, heads, payload), (fid, off)


def _seen(r):
    """What a record is: offset, length, heads (but the WARC-Record-ID the reader makes up for an
    ARC record, new each time), payload."""
    heads = [kv for kv in r.headers.items() if not (r.format == "arc" and kv[0] == "WARC-Record-ID")]
    return r.offset, r.length, heads, r.payload.read()


class _Lying:
    """A random-access source whose pread breaks its promise (more bytes than asked for), or fails."""

    def __init__(self, data: bytes, fail: bool = False) -> None:
        self.data, self.size, self.fail = data, len(data), fail

    def pread(self, n: int, offset: int) -> bytes:
        if self.fail:
            raise ArchiveError("the volume went away")
        chunk = self.data[offset: offset + n]
        return chunk + bytes(n + 1 - len(chunk))   # always one byte more than asked for


def test_a_source_that_lies_or_fails_raises_and_is_never_overrun(valid_archives):
    data = valid_archives["wget/docs-python-3.11-recrawl.warc.gz"].path.read_bytes()
    with pytest.raises(ValueError, match="more bytes than asked"):
        list(ArchiveIterator(_Lying(data)))
    with pytest.raises(ArchiveError, match="went away"):
        list(ArchiveIterator(_Lying(data, fail=True)))
    with pytest.raises(ArchiveError, match="went away"):
        LineIndexer(_Lying(data, fail=True), b"x")
    with pytest.raises(ValueError, match="more bytes than asked"):
        LineIndexer(_Lying(data), b"x").run()


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "warchive", *map(str, args)], capture_output=True, timeout=120)


def test_the_command_line_takes_store_urls_and_whole_stores(valid_archives, stored, tmp_path):
    ids = ["wget/docs-python-3.11-recrawl.warc.gz", VALID_IDS[0], VALID_IDS[1]]
    got = _cli("index", *[stored[i] for i in ids])
    want = _cli("index", *[valid_archives[i].path for i in ids])
    assert got.returncode == want.returncode == 0 and got.stdout == want.stdout and want.stdout
    root = stored[ids[0]].rsplit("/", 1)[0]
    whole = _cli("index", root)     # store://STORE: every stored name, in name order
    plain = sorted((valid_archives[i].path for i in VALID_IDS), key=lambda p: p.name)
    assert whole.returncode == 0 and whole.stdout == _cli("index", *plain).stdout
    # extract and check read it as the file
    off = _lines([valid_archives[ids[0]].path]).split(b'"offset": "')[1].split(b'"')[0].decode()
    a, b = _cli("extract", stored[ids[0]], off), _cli("extract", valid_archives[ids[0]].path, off)
    assert a.returncode == b.returncode == 0 and a.stdout == b.stdout and a.stdout.startswith(b"WARC/")
    c = _cli("check", stored[ids[0]])
    assert c.returncode == 0, c.stderr


@pytest.mark.parametrize("command", [["index"], ["extract", "__URL__", "0"], ["check"]])
def test_a_missing_store_or_name_is_one_line_and_exit_1(stored, tmp_path, command):
    root = next(iter(stored.values())).rsplit("/", 1)[0]
    for url, named in [(f"{root}/no-such.warc.gz", "no-such.warc.gz"),
                       (f"store://{tmp_path}/nostore/x.warc.gz", "nostore")]:
        args = [a if a != "__URL__" else url for a in command] + ([url] if "__URL__" not in command else [])
        r = _cli(*args)
        err = r.stderr.decode().strip().splitlines()
        assert r.returncode == 1 and len(err) == 1 and named in err[0] and "Traceback" not in err[0], (args, err)


def test_load_takes_a_store_as_archive(valid_archives, stored, tmp_path):
    path = valid_archives["wget/docs-python-3.11-recrawl.warc.gz"].path
    idx = tmp_path / "i.cdxj"
    idx.write_bytes(_lines([valid_archives["wget/docs-python-3.11.warc.gz"].path]))
    line = idx.read_bytes().splitlines()[5].decode()
    root = stored["wget/docs-python-3.11.warc.gz"].rsplit("/", 1)[0]
    a = _cli("load", "--cdx", line, idx, "--archive", root)
    b = _cli("load", "--cdx", line, idx, "--archive", path.parent)
    assert a.returncode == b.returncode == 0 and a.stdout == b.stdout and a.stdout
    c = _cli("load", "--cdx", line, idx, "--archive", root[len("store://"):])   # the store's directory
    assert c.returncode == 0 and c.stdout == b.stdout
    gone = _cli("load", "--cdx", line, idx, "--archive", f"store://{tmp_path}/nostore")
    assert gone.returncode == 1 and len(gone.stderr.decode().strip().splitlines()) == 1
