"""An option that needs an optional extra which is not installed is a usage error: exit status 2,
one line naming the extra to install, no traceback, nothing written. The missing package is
simulated in a child process by ``sys.modules[name] = None``, which makes its import fail as
an absent package's does."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from warchive.cli import MissingExtra
from warchive.cli.extras import EXTRAS, needs

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def _without(modules, *argv, cwd):
    """`warchive ARGV` run in a child in which ``modules`` cannot be imported."""
    code = ("import sys\n"
            f"for m in {list(modules)!r}:\n"
            "    sys.modules[m] = None\n"
            "from warchive.cli import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
    return subprocess.run([sys.executable, "-c", code, *map(str, argv)], capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def _one_line_usage_error(r, extra):
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("warchive: error: "), r.stderr
    assert r.stderr.rstrip().endswith(f"pip install 'warchive[{extra}]'"), r.stderr
    assert r.stdout == ""


@pytest.mark.parametrize("missing", [["distributed"], ["dask"], ["dask", "distributed"]])
def test_index_scheduler_without_dask(tmp_path, valid_archives, missing):
    out = tmp_path / "out.cdxj"
    r = _without(missing, "index", valid_archives["get_pairs.warc.gz"].path, "--scheduler", "local:2", "-o", out,
                 cwd=tmp_path)
    _one_line_usage_error(r, "distributed")
    assert "--scheduler" in r.stderr
    assert not out.exists()


def test_crawl_screenshots_without_playwright(tmp_path):
    coll = tmp_path / "coll"
    r = _without(["playwright"], "crawl", "http://127.0.0.1:9/", "-o", coll, "--screenshots", cwd=tmp_path)
    _one_line_usage_error(r, "browser")
    assert "--screenshots" in r.stderr
    assert not coll.exists()   # refused before the collection or a session is made


def test_the_same_commands_run_on_without_the_option(tmp_path, valid_archives):
    """Without the option, the missing package is not needed."""
    r = _without(["distributed", "dask"], "index", valid_archives["get_pairs.warc.gz"].path, "-o",
                 tmp_path / "out.cdxj", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out.cdxj").read_bytes()


def test_every_extra_of_pyproject_is_known():
    extras = set(tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]) - {"test"}
    assert extras == set(EXTRAS)


def test_only_packages_outside_warchive_are_missing_extras():
    with pytest.raises(MissingExtra, match=r"^--x needs Dask distributed \(distributed cannot be imported\): "
                                           r"pip install 'warchive\[distributed\]'$"):
        with needs("distributed", "--x"):
            raise ModuleNotFoundError("No module named 'distributed'", name="distributed")
    with pytest.raises(ImportError) as e:   # a broken module of warchive itself is no missing extra
        with needs("distributed", "--x"):
            raise ImportError("cannot import name 'nothing'", name="warchive.distributed")
    assert not isinstance(e.value, MissingExtra)
