"""`warchive store` as a user runs it: init, put, get (stdout, -o, --range), ls, stat, rm; errors as
one line naming the path, exit 1, no traceback."""

import hashlib
import json
import os
from pathlib import Path

import pytest

WGET = Path(__file__).resolve().parents[1] / "data" / "wget"
FILES = sorted(WGET.glob("*.warc.gz"))


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory, warchive_cli_module):
    root = tmp_path_factory.mktemp("cli")
    vols = [str(root / f"vol{i}") for i in range(6)]
    r = warchive_cli_module(["store", "init", root / "S", "--volumes", *vols, "--fragment-size", "8K"])
    assert r.returncode == 0, r.stderr
    r = warchive_cli_module(["store", "put", root / "S", *FILES])
    assert r.returncode == 0, r.stderr
    assert r.stderr.decode().count("stored:") == len(FILES)
    return root


@pytest.fixture(scope="module")
def warchive_cli_module():
    from conftest import run_warchive
    return run_warchive


def _one_line_error(r, *words):
    err = r.stderr.decode()
    assert r.returncode == 1, err
    assert "Traceback" not in err and err.count("\n") == 1 and err.startswith("warchive: error: ")
    for w in words:
        assert str(w) in err
    return err


def test_get_to_stdout_and_to_a_file(store_dir, warchive_cli, tmp_path):
    for p in FILES:
        r = warchive_cli(["store", "get", store_dir / "S", p.name])
        assert r.returncode == 0 and hashlib.sha256(r.stdout).digest() == hashlib.sha256(p.read_bytes()).digest()
    out = tmp_path / "out.warc.gz"
    r = warchive_cli(["store", "get", store_dir / "S", FILES[0].name, "-o", out])
    assert r.returncode == 0 and out.read_bytes() == FILES[0].read_bytes() and r.stdout == b""


@pytest.mark.parametrize("spec,sl", [("0-0", (0, 1)), ("100-299", (100, 300)), ("8190-8200", (8190, 8201)),
                                     ("5000+1234", (5000, 6234)), ("570000-", (570000, None)),
                                     ("581000-99999999", (581000, None))])
def test_range(store_dir, warchive_cli, spec, sl):
    p = WGET / "docs-python-3.11-recrawl.warc.gz"
    r = warchive_cli(["store", "get", store_dir / "S", p.name, "--range", spec])
    assert r.returncode == 0, r.stderr
    assert r.stdout == p.read_bytes()[sl[0]:sl[1]]


def test_bad_ranges(store_dir, warchive_cli):
    p = WGET / "docs-python-3.11-recrawl.warc.gz"
    r = warchive_cli(["store", "get", store_dir / "S", p.name, "--range", "10-5"])
    assert r.returncode == 2 and b"END before START" in r.stderr
    r = warchive_cli(["store", "get", store_dir / "S", p.name, "--range", "99999999-"])
    _one_line_error(r, "past the end", p.name)


def test_ls_and_stat(store_dir, warchive_cli):
    r = warchive_cli(["store", "ls", store_dir / "S"])
    assert r.stdout.decode().split() == [p.name for p in FILES]
    r = warchive_cli(["store", "stat", store_dir / "S", FILES[0].name, "--json"])
    info = json.loads(r.stdout)
    assert info["size"] == FILES[0].stat().st_size
    assert info["sha256"] == hashlib.sha256(FILES[0].read_bytes()).hexdigest()
    assert (info["k"], info["m"], info["fragment_size"]) == (4, 2, 8192)
    assert [c["present"] for c in info["chunks"]] == [True] * 6
    assert all(os.path.getsize(c["path"]) == c["size"] for c in info["chunks"])
    r = warchive_cli(["store", "stat", store_dir / "S", FILES[0].name])
    assert r.returncode == 0 and info["sha256"] in r.stdout.decode()


def test_errors_are_one_line(store_dir, warchive_cli, tmp_path):
    _one_line_error(warchive_cli(["store", "ls", tmp_path]), tmp_path, "not a store")
    _one_line_error(warchive_cli(["store", "get", store_dir / "S", "nope.warc.gz"]), "nope.warc.gz")
    _one_line_error(warchive_cli(["store", "get", store_dir / "S", "../x"]), "directory separator")
    _one_line_error(warchive_cli(["store", "stat", store_dir / "S", "nope"]), "nope")
    _one_line_error(warchive_cli(["store", "put", store_dir / "S", tmp_path / "missing.warc"]), "missing.warc")
    _one_line_error(warchive_cli(["store", "init", tmp_path / "T", "--volumes", tmp_path / "a"]), "at least 6")
    _one_line_error(warchive_cli(["store", "ls", tmp_path / "nonexistent"]), "nonexistent")


def test_put_again_says_so_and_rm_needs_force(store_dir, warchive_cli, tmp_path):
    r = warchive_cli(["store", "put", store_dir / "S", FILES[0]])
    assert r.returncode == 0 and b"already stored" in r.stderr
    r = warchive_cli(["store", "rm", store_dir / "S", FILES[0].name])
    assert r.returncode == 2 and b"--force" in r.stderr
    r = warchive_cli(["store", "rm", store_dir / "S", FILES[0].name, "--force"])
    assert r.returncode == 0
    assert warchive_cli(["store", "ls", store_dir / "S"]).stdout.decode().split() == [FILES[1].name]
    left = [f for d, _, fs in os.walk(store_dir) for f in fs if f.startswith(FILES[0].name)]
    assert left == []
    _one_line_error(warchive_cli(["store", "rm", store_dir / "S", FILES[0].name, "--force"]), FILES[0].name)
    r = warchive_cli(["store", "put", store_dir / "S", FILES[0]])   # back, for the other tests
    assert r.returncode == 0


def test_a_damaged_chunk_is_a_warning_and_the_bytes_are_right(tmp_path, warchive_cli):
    vols = [str(tmp_path / f"v{i}") for i in range(6)]
    assert warchive_cli(["store", "init", tmp_path / "S", "--volumes", *vols, "-k", "3", "-m", "3"]).returncode == 0
    p = FILES[0]
    assert warchive_cli(["store", "put", tmp_path / "S", p]).returncode == 0
    for i in (0, 1, 2):
        os.unlink(os.path.join(vols[i], "chunks", f"{p.name}.{i}"))
    r = warchive_cli(["store", "get", tmp_path / "S", p.name])
    assert r.returncode == 0 and r.stdout == p.read_bytes()
    assert r.stderr.decode().count("warning") == 3 and b"repair" in r.stderr
