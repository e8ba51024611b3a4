"""The optional extras of warchive (pyproject.toml's ``[project.optional-dependencies]``) and
the one line a command prints when an option needs one that is not installed.

The library imports its optional packages at module level, as any other: a library
module of an extra (warchive.distributed) fails to import without it. The command
line is where that becomes a usage error: ``needs(extra, option)`` wraps the import
of what the option runs, and an ImportError of a package outside warchive turns
into ``MissingExtra``, printed as one line (``warchive: error: --scheduler needs
the 'distributed' extra: pip install 'warchive[distributed]'``) with exit status 2.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Dict, Iterator, Tuple

from . import MissingExtra

# extra -> (what it brings, for the message; the packages it installs)
EXTRAS: Dict[str, Tuple[str, Tuple[str, ...]]] = {
    "distributed": ("Dask distributed", ("dask", "distributed")),
    "browser": ("Playwright", ("playwright",)),
}


@contextmanager
def needs(extra: str, option: str) -> Iterator[None]:
    """Run the body (imports of what ``option`` needs); a package it cannot import raises
    MissingExtra naming ``extra``. A module of warchive that fails to import is no missing
    extra: its error goes on."""
    what, _ = EXTRAS[extra]
    try:
        yield
    except ImportError as e:
        name = e.name or ""
        if name == "warchive" or name.startswith("warchive."):
            raise
        missing = f" ({name} cannot be imported)" if name else ""
        raise MissingExtra(f"{option} needs {what}{missing}: pip install 'warchive[{extra}]'") from None
