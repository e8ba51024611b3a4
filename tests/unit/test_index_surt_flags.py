"""The option bits the indexer kernel takes (cdx_lines.LineIndexer(surt_flags=...)); the keys they
make are held to the surt package by tests/differential/test_index_surt_options_vs_cdxj_indexer.py."""

import pytest

from warchive._ext import cdx_lines
from warchive._ext import surt as surt_kernel


def test_the_kernels_agree_on_the_default_bits():
    assert cdx_lines.DEFAULT_SURT_FLAGS == surt_kernel.DEFAULT_FLAGS == surt_kernel.surt_flags()
    assert surt_kernel.surt_flags(surt=True) == surt_kernel.DEFAULT_FLAGS
    assert surt_kernel.surt_flags(with_scheme=True) != surt_kernel.DEFAULT_FLAGS


def test_bits_that_are_no_option_are_refused(tmp_path):
    path = tmp_path / "empty.warc"
    path.write_bytes(b"")
    every = surt_kernel.surt_flags(**{n: True for n in surt_kernel.DEFAULTS if n != "public_suffix"})
    cdx_lines.LineIndexer(path, b"empty.warc", surt_flags=every)   # every option's bit is accepted
    with pytest.raises(ValueError, match="bits outside"):
        cdx_lines.LineIndexer(path, b"empty.warc", surt_flags=(every << 1) | every)
