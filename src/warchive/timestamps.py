"""14-digit timestamps (YYYYMMDDhhmmss) and WARC dates, converted as warcio converts them.

WARC-Date -> timestamp splits the date on every non-digit and builds a
datetime from the numbers (a 7th number is the fraction of a second), so
``2013-12-26T10:11:12.5Z`` and ``2013-12-26 10:11:12`` both give
``20131226101112``. An ARC archive-date is padded and clamped into a valid
date (``2014`` -> end of 2014). Invalid input raises ValueError.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import List

_NON_DIGIT = re.compile(r"[^\d]")
# A WARC-Date as WARC writers write it (ASCII digits, whole seconds): read without the split.
_WARC_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})Z")

PAD_14_DOWN = "10000101000000"
PAD_14_UP = "29991231235959"
PAD_6_UP = "299912"


def iso_date_to_timestamp(date: str) -> str:
    """WARC-Date (ISO 8601, any separators) -> 14-digit timestamp."""
    m = _WARC_DATE.fullmatch(date)
    if m is not None:
        ints = [int(n) for n in m.groups()]
        if _valid_ymdhms(ints):   # then the digits are the timestamp's, as they stand
            return "".join(m.groups())
    nums = _NON_DIGIT.split(date)
    if nums and nums[-1] == "":
        nums = nums[:-1]
    if len(nums) == 7:
        nums[6] = (nums[6][:6] + "000000")[:6]
    ints = [int(n) for n in nums]
    if not 3 <= len(ints) <= 7:  # datetime() takes year, month, day and up to four more
        raise ValueError(f"not a WARC date: {date!r}")
    if len(ints) >= 6 and _valid_ymdhms(ints):  # the usual case, without building a datetime
        return "%04d%02d%02d%02d%02d%02d" % tuple(ints[:6])
    dt = datetime(*ints)  # type: ignore[arg-type]
    return dt.strftime("%Y%m%d%H%M%S")


_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _valid_ymdhms(v: List[int]) -> bool:
    """The numbers make a datetime whose strftime("%Y...") is plain zero-padded digits
    (a 4-digit year; a 7th number, microseconds, below 10**6)."""
    y, mo, d, h, mi, s = v[:6]
    if not (1000 <= y <= 9999 and 1 <= mo <= 12 and 0 <= h <= 23 and 0 <= mi <= 59 and 0 <= s <= 59):
        return False
    if not 1 <= d <= _days_in_month(y, mo):
        return False
    return len(v) == 6 or 0 <= v[6] < 1000000


def _days_in_month(year: int, month: int) -> int:
    """calendar.monthrange(year, month)[1], for a month 1-12."""
    return _DAYS[month - 1] + (month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0))


def pad_timestamp(ts: str, pad: str = PAD_6_UP) -> str:
    """Pad a partial timestamp on the right with the digits of ``pad``."""
    return ts + pad[len(ts) :] if len(ts) < len(pad) else ts


def timestamp_to_datetime(ts: str) -> datetime:
    """A (partial, even malformed) timestamp -> the latest valid datetime it can mean."""
    if len(ts) == 14 and ts.isdigit() and ts.isascii():   # the usual timestamp: valid as it is?
        year, month, day = int(ts[0:4]), int(ts[4:6]), int(ts[6:8])
        hour, minute, second = int(ts[8:10]), int(ts[10:12]), int(ts[12:14])
        if (1900 <= year <= 2999 and 1 <= month <= 12 and hour <= 23 and minute <= 59 and second <= 59
                and 1 <= day <= _days_in_month(year, month)):
            return datetime(year, month, day, hour, minute, second)
    ts = pad_timestamp(ts, PAD_6_UP)
    year = _clamped(ts, 0, 4, 1900, 2999)
    month = _clamped(ts, 4, 6, 1, 12)
    day = _clamped(ts, 6, 8, 1, _days_in_month(year, month))
    return datetime(year, month, day, _clamped(ts, 8, 10, 0, 23), _clamped(ts, 10, 12, 0, 59),
                    _clamped(ts, 12, 14, 0, 59))


def _clamped(ts: str, start: int, stop: int, lo: int, hi: int) -> int:
    """The number ts[start:stop] clamped into lo..hi; hi when it is missing or not a number."""
    if len(ts) < stop:
        return hi
    try:
        return max(lo, min(int(ts[start:stop]), hi))
    except ValueError:
        return hi


def timestamp_to_iso_date(ts: str) -> str:
    """14-digit (or partial) timestamp -> ``YYYY-MM-DDThh:mm:ssZ``."""
    return timestamp_to_datetime(ts).strftime("%Y-%m-%dT%H:%M:%SZ")
