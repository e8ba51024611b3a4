"""The C cores' status codes and the one table that turns them into exceptions.

ext/csrc/wa_common.h declares every status code of every C core in one enum; ext/_status.pxd maps
each failure code to one exception class, and every kernel raises through it. These tests hold the
enum (every code its own value), the table (every failure code, one class each, an ArchiveError
child where one fits) and a few kernels' failures end to end."""

from __future__ import annotations

import importlib
import io
import re
from pathlib import Path

import pytest

from warchive import errors

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ("cdx_lines", "gzip_members", "gzip_write", "html_rewrite", "index_build", "index_lookup",
           "line_sort", "surt", "sysio", "warc_headers")


def _enum() -> dict[str, int]:
    """name -> value of the status enum of wa_common.h."""
    text = (ROOT / "ext" / "csrc" / "wa_common.h").read_text()
    body = text[text.index("enum {"):]
    body = body[:body.index("};")]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"\b(WA_\w+)\s*=\s*(-?\d+)", body)}


def test_every_kernel_imports():
    for name in KERNELS:
        importlib.import_module(f"warchive._ext.{name}")


def test_status_codes_are_declared_once_with_distinct_values():
    codes = _enum()
    assert len(set(codes.values())) == len(codes), codes
    declared = {}
    for h in sorted((ROOT / "ext" / "csrc").glob("*.h")):
        for m in re.finditer(r"\b(WA_(?:E_\w+|OK|EOF|SLOW|SAME|DONE|NEED|SURT_OK|SURT_NEED_IDNA|SURT_FAIL|SURT_SMALL))\s*=\s*-?\d+|"
                             r"#define\s+(WA_E_\w+|WA_SURT_(?:OK|NEED_IDNA|FAIL|SMALL))\s", h.read_text()):
            declared.setdefault(m.group(1) or m.group(2), []).append(h.name)
    assert all(where == ["wa_common.h"] for where in declared.values()), declared


def test_each_failure_code_maps_to_exactly_one_exception_class():
    from warchive._ext.gzip_members import status_exceptions
    table = status_exceptions()
    failures = {v for v in _enum().values() if v < 0}
    assert set(table) == failures
    for code, cls in table.items():
        assert isinstance(cls, type) and issubclass(cls, BaseException), (code, cls)
        assert cls not in (errors.ArchiveError, RuntimeError), (code, cls)
    codes = _enum()
    assert table[codes["WA_E_CALLBACK"]] is BaseException   # the callback's own exception
    assert table[codes["WA_E_NOMEM"]] is MemoryError
    assert table[codes["WA_E_PARAM"]] is ValueError
    for name, cls in [("WA_E_IO", errors.ReadError), ("WA_E_CRC", errors.GzipError),
                      ("WA_E_TRUNCATED", errors.TruncatedError), ("WA_E_FORMAT", errors.IndexFormatError),
                      ("WA_E_UNSORTED", errors.UnsortedInputError), ("WA_E_SHRUNK", errors.IndexFormatError),
                      ("WA_E_UNSUPPORTED", errors.UnsupportedFormatError), ("WA_SURT_SMALL", errors.UrlError),
                      ("WA_E_COMPRESS", errors.WriteError)]:
        assert table[codes[name]] is cls, name
    rest = {c for n, c in codes.items() if c < 0 and n not in ("WA_E_CALLBACK", "WA_E_NOMEM", "WA_E_PARAM")}
    assert all(issubclass(table[c], errors.ArchiveError) for c in rest)


def test_a_bad_parameter_is_a_value_error():
    from warchive._ext.gzip_write import Deflater, DeflateWorker
    with pytest.raises(ValueError, match="deflate levels are 0 to 3, not 7"):
        Deflater(7)
    with pytest.raises(ValueError, match="deflate levels are 0 to 3, not 7"):
        DeflateWorker(7)


def test_a_callback_exception_is_raised_as_it_was():
    from warchive._ext import line_sort

    class Boom(Exception):
        pass

    def write(b):
        raise Boom("out")

    with pytest.raises(Boom, match="out"):
        line_sort.sort_chunk(bytearray(b"b\na\n"), 4, write)

    class Source:
        size = 100

        def pread(self, n, offset):
            raise Boom("in")

    from warchive._ext.gzip_members import Reader
    with pytest.raises(Boom, match="in"):
        Reader(Source())


def test_unsorted_lines_name_the_line(tmp_path):
    from warchive._ext import line_sort
    from warchive._ext.index_build import SegmentWriter
    with pytest.raises(errors.UnsortedInputError, match="line 2 is out of order"):
        line_sort.merge([io.BytesIO(b"b\na\n")], lambda b: None, names=["x.cdxj"], check=True)
    w = SegmentWriter(lambda b: None, source="y.cdxj")
    w.add(b"b")
    with pytest.raises(errors.UnsortedInputError, match="y.cdxj: line 2 is out of order"):
        w.add(b"a")


def test_a_damaged_gzip_member_names_file_and_byte(tmp_path):
    import gzip
    from warchive._ext.gzip_members import Reader
    data = bytearray(gzip.compress(b"x" * 1000))
    data[-8] ^= 0xFF   # the CRC-32
    p = tmp_path / "bad.warc.gz"
    p.write_bytes(bytes(data))
    r = Reader(str(p), verify=True)
    r.member_begin(0)
    with pytest.raises(errors.GzipError, match=r"bad\.warc\.gz at byte 0: gzip member CRC-32 mismatch"):
        r.member_finish()


def test_a_damaged_segment_is_an_index_format_error(tmp_path):
    from warchive._ext.index_lookup import Segment
    p = tmp_path / "bad.seg"
    p.write_bytes(b"\0" * 100)
    with pytest.raises(errors.IndexFormatError, match="bad.seg"):
        Segment(str(p))


class _Stream:
    """A forward-only stream (no descriptor, no pread) whose reads fail or answer None."""

    def __init__(self, answer):
        self.answer = answer

    def seekable(self):
        return False

    def readinto(self, b):
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


def test_the_one_read_callback_carries_exceptions_out():
    from warchive._ext import line_sort
    from warchive._ext.gzip_members import Reader
    with pytest.raises(KeyError, match="forward"):
        Reader(_Stream(KeyError("forward")))
    with pytest.raises(BlockingIOError):
        Reader(_Stream(None))
    with pytest.raises(KeyError, match="merge"):
        line_sort.merge([io.BytesIO(b"a\n"), _Stream(KeyError("merge"))], lambda b: None)
    with pytest.raises(ValueError, match=r"readinto\(\) returned 99"):
        line_sort.merge([_Stream(99)], lambda b: None, bufsize=16)
