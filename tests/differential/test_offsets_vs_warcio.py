"""warchive's record reader against warcio, record by record.

For every valid archive (generated fixtures and the committed Wget crawls),
``warchive.warc.open`` must yield the same records as warcio's
``ArchiveIterator(arc2warc=True)``: same offset, same length (warcio's
``get_record_length()``: the whole gzip member for .gz, the record without
its trailing CRLFCRLF for plain files), same WARC-Type and the same
WARC-Target-URI value (warcio strips Wget's ``<...>`` and writes spaces as
%20; ARC header records are ``warcinfo`` without target URI). Expected
values come from warcio only; warchive's own output is never the reference.
"""

from __future__ import annotations

import importlib

import pytest

_warcio_cache: dict = {}


def warchive_listing(path, types=None) -> list:
    ww = importlib.import_module("warchive.warc")   # imported here: a missing module fails tests, not collection
    kwargs = {} if types is None else {"types": set(types)}
    out = []
    with ww.open(path, **kwargs) as reader:
        for rec in reader:
            offset, rtype, uri = rec.offset, rec.type, rec.target_uri
            out.append((offset, rec.length, rtype, uri))
    return out


def expected_listing(warcio_list, path, types=None) -> list:
    key = str(path)
    if key not in _warcio_cache:
        _warcio_cache[key] = warcio_list(path)
    full = _warcio_cache[key]
    return full if types is None else [r for r in full if r[2] in types]


def _first_difference(expected, got) -> str:
    for i, (a, b) in enumerate(zip(expected, got)):
        if a != b:
            return f"record #{i}: warcio {a!r} != warchive {b!r}"
    return f"warcio has {len(expected)} records, warchive {len(got)}; first extra/missing: " \
           f"{(expected[len(got)] if len(expected) > len(got) else got[len(expected)])!r}"


def test_records_match_warcio(valid_archive, warcio_list):
    expected = expected_listing(warcio_list, valid_archive.path)
    assert expected, "fixture holds records"
    got = warchive_listing(valid_archive.path)
    assert got == expected, f"{valid_archive.id}: {_first_difference(expected, got)}"


TYPE_FILTERS = [
    ("response",),
    ("response", "revisit"),
    ("warcinfo", "request", "metadata"),
    ("resource",),
    ("no-such-type",),
]


@pytest.mark.parametrize("types", TYPE_FILTERS, ids=["+".join(t) for t in TYPE_FILTERS])
def test_type_filter_matches_warcio(valid_archive, types, warcio_list):
    expected = expected_listing(warcio_list, valid_archive.path, set(types))
    got = warchive_listing(valid_archive.path, types)
    assert got == expected, f"{valid_archive.id} types={types}: {_first_difference(expected, got)}"


def test_reopen_is_repeatable(valid_archives, warcio_list):
    """Two readers over the same file at once agree (no shared buffer state)."""
    ww = importlib.import_module("warchive.warc")
    path = valid_archives["kitchen_sink.warc.gz"].path
    with ww.open(path) as a, ww.open(path) as b:
        pairs = list(zip(a, b))
        got = [(x.offset, x.length, y.offset, y.length) for x, y in pairs]
    expected = [(o, n, o, n) for o, n, _, _ in expected_listing(warcio_list, path)]
    assert got == expected


@pytest.mark.parametrize("name", ["get_pairs.warc.gz", "get_pairs.warc", "kitchen_sink.warc.gz"])
def test_an_in_memory_stream_from_a_record_matches_warcio(valid_archives, name):
    """An io.BytesIO seeked to a record (as warcio is given one), or given ``offset=``: the records
    from there, at the offsets warcio reports for the same stream (counted from its start)."""
    import contextlib
    import io

    from warcio.archiveiterator import ArchiveIterator

    ww = importlib.import_module("warchive.warc")
    data = open(valid_archives[name].path, "rb").read()
    with ww.open(valid_archives[name].path) as reader:
        starts = [rec.offset for rec in reader]
    for start in starts[1:4]:
        fh = io.BytesIO(data)
        fh.seek(start)
        with contextlib.redirect_stderr(io.StringIO()):
            it = ArchiveIterator(fh, arc2warc=True)
            expected = [(it.get_record_offset(), rec.rec_headers.get_header("WARC-Record-ID")) for rec in it]
        assert expected[0][0] == start
        seeked = io.BytesIO(data)
        seeked.seek(start)
        for source, kwargs in ((seeked, {}), (io.BytesIO(data), {"offset": start})):
            with ww.open(source, **kwargs) as reader:
                got = [(rec.offset, rec.headers.get("WARC-Record-ID")) for rec in reader]
            assert got == expected, (name, start, kwargs)
