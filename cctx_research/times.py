"""Time windows: one helper that turns what users pass into UTC timestamps.

``start`` / ``end`` accept ``str``, ``datetime.date``, ``datetime.datetime``,
``pandas.Timestamp`` or Unix seconds (``int``/``float``; values that only make
sense as milliseconds, above ``1e11``, are read as milliseconds). Naive
times mean UTC. Windows are half-open: ``[start, end)``.

Strings must be ISO 8601 (``"2024-06-01"``, ``"2024-06-01T12:00Z"``,
``"2024-06-01 12:00:00+02:00"``) or Unix seconds. Any other spelling is
refused with the ISO form to use instead, the unambiguous ones too
(``"20/11/2026"``): a reader that accepts ``"20/11/2026"`` as November 20
cannot help reading ``"03/11/2026"`` as March 11, and the user who wrote
both meant the same calendar. One rule with no exceptions is easier to
remember than one that depends on the day of the month.
"""

from __future__ import annotations

import datetime as dt
import re
import warnings
from collections.abc import Callable, Iterator
from typing import TypeVar

import numpy as np
import pandas as pd

__all__ = [
    "MS_THRESHOLD",
    "TimeLike",
    "chunk_window",
    "from_unix_epoch",
    "pandas_period",
    "to_timestamp",
    "to_unix",
    "to_unix_ceil",
    "window",
]

TimeLike = str | dt.date | dt.datetime | pd.Timestamp | int | float | np.integer

_ONE_DAY = pd.Timedelta(days=1)
MS_THRESHOLD = 100_000_000_000
"""Unix times at or above this (year 5138 in seconds) are read as milliseconds."""

_ISO = re.compile(
    r"^[+-]?\d{4}-\d{2}(-\d{2}"
    r"([T ]\d{2}(:\d{2}(:\d{2}([.,]\d{1,9})?)?)?\s*(Z|z|UTC|[+-]\d{2}(:?\d{2})?)?)?)?$"
)
_DAY_MONTH = re.compile(r"^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})(?:[ T](.*))?$")


def _not_iso(text: str, name: str) -> ValueError:
    """The error for a string that is not ISO 8601, with the ISO form(s) it may mean."""
    m = _DAY_MONTH.match(text)
    if m:
        a, b, year = int(m.group(1)), int(m.group(2)), m.group(3)
        readings = []
        for day, month, label in ((a, b, "day/month"), (b, a, "month/day")):
            try:
                readings.append((dt.date(int(year), month, day).isoformat(), label))
            except ValueError:
                continue
        if len(readings) == 2 and readings[0][0] != readings[1][0]:
            return ValueError(
                f"{name}={text!r} is ambiguous: {readings[0][0]} ({readings[0][1]}) or "
                f"{readings[1][0]} ({readings[1][1]}); write it as ISO 8601 YYYY-MM-DD, "
                f"e.g. {readings[0][0]!r}"
            )
        if readings:
            return ValueError(
                f"{name}={text!r} is not ISO 8601; write it as YYYY-MM-DD: "
                f"{readings[0][0]!r} (dates like '03/11/2026' are ambiguous, so none "
                "of that form is read)"
            )
    return ValueError(
        f"{name}={text!r} is not a date or time in ISO 8601 form; pass e.g. '2024-06-01', "
        "'2024-06-01T12:00Z', a datetime or Unix seconds"
    )


def to_timestamp(value: TimeLike, *, name: str = "time") -> pd.Timestamp:
    """Normalise one time value to a tz-aware UTC :class:`pandas.Timestamp`.

    Parameters
    ----------
    value : str, date, datetime, Timestamp, int or float
        Naive values are read as UTC; numbers are Unix seconds (or
        milliseconds when above 1e11).
    name : str
        The argument's name, used in error messages.

    Raises
    ------
    TypeError
        For any other type (including ``bool``).
    ValueError
        For a string that is not an ISO 8601 date/time (the message gives
        the ISO form to use), or NaN/NaT.

    Examples
    --------
    >>> to_timestamp("2024-06-01")
    Timestamp('2024-06-01 00:00:00+0000', tz='UTC')
    >>> to_timestamp(1717200000000)
    Timestamp('2024-06-01 00:00:00+0000', tz='UTC')
    >>> to_timestamp("03/11/2026")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: time='03/11/2026' is ambiguous: 2026-11-03 (day/month) or 2026-03-11 ...
    """
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a date, datetime, string or Unix seconds, not a bool")
    if isinstance(value, (int, float, np.integer, np.floating)):
        if not np.isfinite(value):
            raise ValueError(f"{name} must be a finite number of Unix seconds, got {value!r}")
        number = float(value)
        unit = "ms" if abs(number) >= MS_THRESHOLD else "s"
        try:
            ts = pd.Timestamp(int(value) if float(value).is_integer() else number, unit=unit)
        except (OverflowError, ValueError) as exc:
            raise ValueError(f"{name}={value!r} is outside the supported time range") from exc
    elif isinstance(value, (str, dt.date, dt.datetime, pd.Timestamp, np.datetime64)):
        if isinstance(value, str) and not value.strip():
            raise ValueError(f"{name} is an empty string; pass e.g. '2024-06-01' or a datetime")
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return to_timestamp(int(value.strip()), name=name)
        if isinstance(value, str) and not _ISO.match(value.strip()):
            raise _not_iso(value.strip(), name)
        try:
            ts = pd.Timestamp(value)
        except (ValueError, TypeError, OverflowError) as exc:
            raise ValueError(
                f"{name}={value!r} is not a date or time; pass e.g. '2024-06-01', "
                "'2024-06-01T12:00Z', a datetime or Unix seconds"
            ) from exc
    else:
        raise TypeError(
            f"{name} must be a str, date, datetime, pandas.Timestamp or Unix seconds, "
            f"got {type(value).__name__}"
        )
    if ts is pd.NaT or pd.isna(ts):
        raise ValueError(f"{name} is NaT/NaN; pass a real date or time")
    ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
    return ts


def to_unix(ts: pd.Timestamp) -> int:
    """Whole Unix seconds of a timestamp (floored)."""
    return int(ts.value // 1_000_000_000)


def to_unix_ceil(ts: pd.Timestamp) -> int:
    """Whole Unix seconds of a timestamp, rounded up."""
    return int(-((-ts.value) // 1_000_000_000))


def from_unix_epoch(start: pd.Timestamp) -> pd.Timestamp:
    """``start``, refused before 1970-01-01, where the interface's times (Unix seconds) begin.

    Raises
    ------
    ValueError
        If ``start`` is before 1970-01-01 (the service would answer a raw 400).
    """
    if start < pd.Timestamp(0, tz="UTC"):
        raise ValueError(
            f"start={start.date().isoformat()} is before 1970-01-01, where the "
            "interface's times (Unix seconds) begin; pass a start on or after 1970-01-01"
        )
    return start


def window(
    start: TimeLike | None,
    end: TimeLike | None,
    *,
    now: pd.Timestamp | None = None,
    default: pd.Timedelta = _ONE_DAY,
) -> tuple[pd.Timestamp, pd.Timestamp]:
    """Resolve a half-open window ``[start, end)`` with the interface's defaults.

    ``end`` defaults to ``now``; ``start`` defaults to ``end - default``
    (the interface's "1 day before now").

    Raises
    ------
    ValueError
        If ``start >= end``.
    """
    now = pd.Timestamp.now(tz="UTC") if now is None else to_timestamp(now, name="now")
    end_ts = now if end is None else to_timestamp(end, name="end")
    start_ts = end_ts - default if start is None else to_timestamp(start, name="start")
    if start_ts >= end_ts:
        raise ValueError(
            f"start ({start_ts.isoformat()}) must be before end ({end_ts.isoformat()}); "
            "windows are half-open [start, end)"
        )
    return start_ts, end_ts


def chunk_window(
    start: pd.Timestamp, end: pd.Timestamp, chunk: pd.Timedelta | str = "1D"
) -> Iterator[tuple[pd.Timestamp, pd.Timestamp]]:
    """Split ``[start, end)`` into consecutive half-open chunks.

    Chunk edges fall on multiples of ``chunk`` since the Unix epoch (UTC
    midnights for one day), so the same day always maps to the same chunk
    and cache entries are shared between overlapping windows. The first and
    last chunks are clipped to the window.

    Examples
    --------
    >>> s, e = to_timestamp("2024-06-01T12:00"), to_timestamp("2024-06-03")
    >>> [(a.day, a.hour, b.day, b.hour) for a, b in chunk_window(s, e)]
    [(1, 12, 2, 0), (2, 0, 3, 0)]
    """
    step = pd.Timedelta(chunk)
    if step <= pd.Timedelta(0):
        raise ValueError(f"chunk must be a positive duration, got {chunk!r}")
    edge = start.floor(step)
    while edge < end:
        nxt = edge + step
        yield max(edge, start), min(nxt, end)
        edge = nxt


_T = TypeVar("_T")
_PERIOD = re.compile(r"^\s*([+-]?\d*(?:\.\d+)?)\s*([A-Za-z][A-Za-z-]*)\s*$")
_PANDAS_SAYS = re.compile(r"(?:[Uu]se|mean) '?([A-Za-z]+)'?")
_CALENDAR = {
    **dict.fromkeys(("M", "ME", "MS"), ("months", "MS")),
    **dict.fromkeys(("Y", "y", "YE", "YS", "A"), ("years", "YS")),
    **dict.fromkeys(("Q", "q", "QE", "QS"), ("quarters", "QS")),
}
"""Calendar units, as spelled (``"ms"`` is milliseconds, ``"MS"`` a month's start)."""


def pandas_period(
    parse: Callable[[str], _T], value: str, *, name: str, fixed: bool, expected: str
) -> _T:
    """``parse(value)`` (``to_offset``, ``pd.Timedelta``) with a clear error for a bad spelling.

    pandas answers a deprecated spelling (``"1d"``, ``"1H"``) with warnings
    that print wherever the value is used later, and a retired one
    (``"1M"``) with an error that names no monthly frequency to use. Both
    are refused here, once, naming the spelling to pass.

    Parameters
    ----------
    parse : callable
        What reads the value (it may warn or raise ``ValueError``).
    value : str
        What the user passed.
    name : str
        The argument's name, for the message.
    fixed : bool
        Whether a fixed length of time is asked (a duration): calendar
        months and years are then refused as not being one.
    expected : str
        What ``value`` should be, with examples ("pandas frequency; pass e.g.
        '1h'"), for a value nothing else explains: "<name>=<value> is not a
        <expected>".

    Examples
    --------
    >>> pandas_period(pd.Timedelta, "1d", name="freq", fixed=True, expected="duration")
    Traceback (most recent call last):
    ValueError: freq='1d': pandas spells this unit 'D', not 'd'; pass '1D'
    """
    match = _PERIOD.match(value)
    if fixed and match and match.group(2) in _CALENDAR:
        raise ValueError(
            f"{name}={value!r}: calendar {_CALENDAR[match.group(2)][0]} are not a fixed length "
            "of time; pass one such as '1D' or '7D' (a daily frame sums by month with "
            ".resample('MS', on='timestamp'))"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # pandas' Pandas4Warning is one
        warnings.simplefilter("error", FutureWarning)
        try:
            return parse(value)
        except (DeprecationWarning, FutureWarning, ValueError) as exc:
            raise ValueError(_period_message(value, str(exc), name, expected)) from None


def _period_message(value: str, said: str, name: str, expected: str) -> str:
    match = _PERIOD.match(value)
    if match:
        number, unit = match.groups()
        calendar = _CALENDAR.get(unit)
        if calendar is not None:
            what, start = calendar
            return (
                f"{name}={value!r} is not a pandas frequency: for calendar {what} pass "
                f"'{number or 1}{start}' (each bucket labelled by its first day)"
            )
        suggested = _PANDAS_SAYS.search(said)
        if suggested and suggested.group(1) != unit:
            new = suggested.group(1)
            return (
                f"{name}={value!r}: pandas spells this unit {new!r}, not {unit!r}; "
                f"pass {number + new!r}"
            )
    return f"{name}={value!r} is not a {expected}"
