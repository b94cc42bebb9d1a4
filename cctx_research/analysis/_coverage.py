"""What span of time a frame covers (private to :mod:`cctx_research.analysis`).

The span a frame's provenance records (``coverage``, else ``window``), else
the frame's own first to last time; whether a period lies inside it; how
many times it holds each hour of each weekday. The KPIs, the time buckets
and the seasonality of :mod:`.volumes` read them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..provenance import provenance
from . import engines, results

SLACK = pd.Timedelta(hours=1)
"""How far a period may reach past a covered span and still count as inside it."""


def recorded(frame: Any) -> tuple[pd.Timestamp, pd.Timestamp] | None:
    """The span a pandas frame's provenance says it covers (``coverage``, else ``window``)."""
    if not engines.is_pandas(frame):
        return None
    record = provenance(frame)
    return None if record is None else record.covered


def covered(frame: pd.DataFrame, timestamps: pd.Series) -> tuple[pd.Timestamp, pd.Timestamp] | None:
    """The span the frame's data covers: its provenance's, else its own first to last time.

    ``None`` for a frame with no times and no recorded span: it covers nothing.
    """
    span = recorded(frame)
    if span is not None:
        return span
    first, last = results.span_of(timestamps)
    return None if first is None else (first, last)


def inside(
    span: tuple[pd.Timestamp, pd.Timestamp] | None, start: pd.Timestamp, end: pd.Timestamp
) -> bool:
    """Whether ``[start, end)`` lies inside ``span``, give or take :data:`SLACK`."""
    if span is None:  # no times and no recorded span: nothing is known to be covered
        return False
    lo, hi = span
    return bool(start >= lo - SLACK and end <= hi + SLACK)


def weekday_hours(span: Any, covered: Any) -> np.ndarray:
    """How many times ``covered`` (half-open) and ``span`` (inclusive) hold each weekday-hour.

    168 counts, Monday 00:00 first; an hour held in part counts once. Either
    may be None (or an empty span); both None hold nothing.
    """
    first: list[pd.Timestamp] = []
    last: list[pd.Timestamp] = []
    if span is not None and span[0] is not None and not pd.isna(span[0]):
        first.append(pd.Timestamp(span[0]))
        last.append(pd.Timestamp(span[1]))
    if covered is not None and covered[0] < covered[1]:
        first.append(pd.Timestamp(covered[0]))
        last.append(pd.Timestamp(covered[1]) - pd.Timedelta(1, "ns"))
    if not first:
        return np.zeros(168, dtype="int64")
    hours = pd.date_range(
        min(first).tz_convert("UTC").floor("h"), max(last).tz_convert("UTC").floor("h"), freq="h"
    )
    slot = hours.day_of_week.to_numpy(dtype="int64") * 24 + hours.hour.to_numpy(dtype="int64")
    return np.bincount(slot, minlength=168).astype("int64")
