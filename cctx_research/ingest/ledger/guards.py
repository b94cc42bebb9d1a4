"""Plausibility checks every reader applies to what it reads, in one place.

A file that a reader can parse may still say something impossible of CCTP:
a time from before the protocol existed (or in 2105: epoch milliseconds read
as seconds), a time in the future. These checks turn such values into a
refusal that names the file, the row and the column and says what to pass
instead (a bad row: :class:`~cctx_research.errors.DataError` under
``errors="raise"``, a row of :func:`~cctx_research.ingest.bad_rows` under
``errors="report"``), so that no plausible-looking wrong number gets through.

- **Times** are within CCTP's era: from its launch on 2023-04-26 (UTC) to
  now plus one day. Unix times are read in the unit their size says:
  seconds, milliseconds, microseconds or nanoseconds (:func:`epoch_scale`);
  within CCTP's era the four ranges are apart by factors of 1,000, so the
  unit is never a guess.

Examples
--------
>>> import numpy as np
>>> epoch_scale(np.array([1_717_200_000, 1_717_200_000_000, 1_717_200_000_000_000_000]))
array([1000000000,    1000000,          1])
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["CCTP_LAUNCH", "epoch_scale", "era_message", "outside_era"]

CCTP_LAUNCH = pd.Timestamp("2023-04-26", tz="UTC")
"""CCTP's mainnet launch (Ethereum and Avalanche); no CCTP event is older."""

_SLACK = pd.Timedelta(days=1)


def epoch_scale(whole: np.ndarray) -> np.ndarray:
    """Nanoseconds per unit of each Unix time, from its integer part's size.

    Seconds below 1e11 (the year 5138), milliseconds below 1e14,
    microseconds below 1e17, nanoseconds above.
    """
    size = np.abs(np.asarray(whole, dtype=np.int64))
    return np.select(
        [size < 10**11, size < 10**14, size < 10**17],
        [10**9, 10**6, 10**3],
        default=1,
    ).astype(np.int64)


def outside_era(times: pd.Series, *, now: pd.Timestamp | None = None) -> np.ndarray:
    """Which times fall before CCTP's launch or after ``now`` (default: the clock) plus a day."""
    latest = (pd.Timestamp.now(tz="UTC") if now is None else now) + _SLACK
    values = pd.Series(times)
    known = values.notna()
    return np.asarray(known & ((values < CCTP_LAUNCH) | (values > latest)), dtype=bool)


def era_message(column: str, cell: str, when: pd.Timestamp) -> str:
    """What a time outside CCTP's era is refused with: the column, the value, what to pass."""
    side = "before CCTP's launch on 2023-04-26" if when < CCTP_LAUNCH else "in the future"
    return (
        f"column {column!r}: {cell} reads as {when:%Y-%m-%d %H:%M:%S} UTC, {side}; pass UTC "
        "times within CCTP's era as ISO 8601 text or Unix seconds (milliseconds, micro- and "
        "nanoseconds are recognised by their size)"
    )
