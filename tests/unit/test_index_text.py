"""Pieces of index lines made without the modules that `warchive index` does not import at
start-up: each is held to the module it stands in for (datetime, base64, json) on generated input."""

from __future__ import annotations

import base64
import calendar
import hashlib
import json
import re
from datetime import datetime

from hypothesis import given, settings
from hypothesis import strategies as st
from budget import examples

from warchive.index.cdx import json_dumps
from warchive.warc.digest import b32
from warchive.timestamps import iso_date_to_timestamp, timestamp_to_datetime


def _by_datetime(date: str) -> str:
    """warcio's iso_date_to_timestamp, written out: split on non-digits, datetime, strftime."""
    nums = re.split(r"[^\d]", date)
    if nums and nums[-1] == "":
        nums = nums[:-1]
    if len(nums) == 7:
        nums[6] = (nums[6][:6] + "000000")[:6]
    ints = [int(n) for n in nums]
    if not 3 <= len(ints) <= 7:
        raise ValueError(date)
    return datetime(*ints).strftime("%Y%m%d%H%M%S")


def _outcome(f, date):
    try:
        return f(date)
    except (ValueError, TypeError, OverflowError) as e:
        return type(e).__name__


numbers = st.one_of(st.integers(0, 10000), st.integers(0, 70), st.integers(990, 10000), st.integers(0, 2_000_000),
                    st.sampled_from([0, 1, 2, 12, 13, 28, 29, 30, 31, 32, 59, 60, 999999, 1000000]))


@settings(max_examples=examples(3000), deadline=None)
@given(st.lists(numbers, min_size=1, max_size=8), st.sampled_from(["-", "T", ":", " ", "Z", "."]), st.booleans())
def test_timestamps_as_datetime_makes_them(parts, sep, zulu):
    date = sep.join(str(p) for p in parts) + ("Z" if zulu else "")
    assert _outcome(iso_date_to_timestamp, date) == _outcome(_by_datetime, date)


def test_timestamp_edges():
    for date in ["2000-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2024-02-29T23:59:59Z", "2023-02-29T00:00:00Z",
                 "0999-01-01T00:00:00Z", "1000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999Z",
                 "2013-12-26T10:11:12.5Z", "2013-12-26 10:11:12", "2013-12-26", "2013-12-26T24:00:00Z"]:
        assert _outcome(iso_date_to_timestamp, date) == _outcome(_by_datetime, date), date


@settings(max_examples=examples(2000), deadline=None)
@given(st.integers(0, 10000), st.integers(0, 13), st.integers(0, 32), st.integers(0, 25), st.integers(0, 61),
       st.integers(0, 61), st.sampled_from(["{:04d}", "{:d}", "{:05d}"]))
def test_warc_dates_as_writers_write_them(y, mo, d, h, mi, s, year_form):
    """The form WARC writers use (YYYY-MM-DDThh:mm:ssZ, read without the split), valid or not."""
    date = year_form.format(y) + "-%02d-%02dT%02d:%02d:%02dZ" % (mo, d, h, mi, s)
    assert _outcome(iso_date_to_timestamp, date) == _outcome(_by_datetime, date), date


def _latest_datetime(ts: str) -> datetime:
    """A timestamp's latest valid datetime, written out: padded with 299912, each number
    clamped into its range (its range's top when it is missing or not a number)."""
    ts = ts + "299912"[len(ts):] if len(ts) < 6 else ts
    out = []
    for i, (lo, hi) in enumerate([(1900, 2999), (1, 12), (1, 31), (0, 23), (0, 59), (0, 59)]):
        start, stop = (0, 4) if i == 0 else (2 + 2 * i, 4 + 2 * i)
        if i == 2:
            hi = calendar.monthrange(out[0], out[1])[1]
        try:
            n = max(lo, min(int(ts[start:stop]), hi)) if len(ts) >= stop else hi
        except ValueError:
            n = hi
        out.append(n)
    return datetime(*out)


@settings(max_examples=examples(3000), deadline=None)
@given(st.one_of(st.text(alphabet="0123456789", min_size=14, max_size=14),
                 st.text(alphabet="0123456789 +-_x\u0661", max_size=16),
                 st.builds(lambda y, mo, d, h, mi, s: "%04d%02d%02d%02d%02d%02d" % (y, mo, d, h, mi, s),
                           st.integers(1880, 3020), st.integers(0, 13), st.integers(0, 32), st.integers(0, 25),
                           st.integers(0, 61), st.integers(0, 61))))
def test_timestamp_to_datetime_is_the_latest_it_can_mean(ts):
    assert _outcome(timestamp_to_datetime, ts) == _outcome(_latest_datetime, ts)


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=64))
def test_b32_is_base64_b32encode(data):
    d = hashlib.sha1(data).digest()
    assert b32(d) == base64.b32encode(d).decode("ascii")


@settings(max_examples=examples(1000), deadline=None)
@given(st.dictionaries(st.text(), st.text(), max_size=8))
def test_json_dumps_is_json_dumps(index):
    assert json_dumps(index) == json.dumps(index)


def test_json_dumps_other_values_go_to_json():
    index = {"url": "http://é.example/\udcff", "status": 200, "x": None}
    assert json_dumps(index) == json.dumps(index)
