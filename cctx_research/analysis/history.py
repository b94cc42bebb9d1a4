"""Mint and burn volume per time bucket of a ledger: ``client.volume_history`` without a service.

The interface's ``volume`` operation counts mints by mint time and burns by
burn time; :func:`volume_history` does the same over a ``"ledger"`` frame
held in memory, bucket by bucket, and returns the same ``"volume"`` frame
(:mod:`cctx_research.schema`), so that :func:`~.volumes.in_flight`, the
plots and the report read it unchanged.

Examples
--------
>>> from cctx_research.service.sample import generate
>>> history = volume_history(generate("2024-07-01", days=2), "2024-06-29", "2024-07-01")
>>> len(history), bool((history["burn_count"] > 0).all())
(2, True)
"""

from __future__ import annotations

from typing import Any

import narwhals.stable.v2 as nw
import numpy as np
import pandas as pd

from .. import schema, times
from ..provenance import attach, provenance
from . import engines

__all__ = ["MAX_BUCKETS", "volume_history"]

MAX_BUCKETS = 100_000
"""The most buckets one call makes (as ``client.volume_history``)."""

_UNIT = 10**6  # USDC base units
_SIDES = ("burn_timestamp", "mint_timestamp")


def _bucket_sums(stamps: pd.Series, amounts: np.ndarray, edges: np.ndarray) -> tuple:
    """Exact int64 sums and counts of ``amounts`` per bucket ``[edges[i], edges[i+1])``."""
    known = stamps.notna().to_numpy()
    ns = pd.DatetimeIndex(stamps[known]).as_unit("ns").asi8
    raw = amounts[known]
    k = len(edges) - 1
    idx = np.searchsorted(edges, ns, side="right") - 1
    inside = (idx >= 0) & (idx < k)
    sums = np.zeros(k, dtype=np.int64)
    np.add.at(sums, idx[inside], raw[inside])
    counts = np.bincount(idx[inside], minlength=k).astype(np.int64)
    return sums, counts


def _engine_sums(
    lf: nw.LazyFrame, column: str, edges: np.ndarray, window: tuple, step: pd.Timedelta
) -> tuple:
    """``_bucket_sums`` of an engine's frame: summed per bucket of ``step`` in the engine.

    Every bucket of ``step`` since the epoch lies in one bucket of the window (whose
    edges are multiples of ``step``, the first and last clipped), so only its sum and
    count come back, placed by its start (or the window's, when it starts before it).
    """
    when = nw.col(column)
    inside = ~when.is_null() & (when >= nw.lit(window[0])) & (when < nw.lit(window[1]))
    seconds = int(step.total_seconds())
    epoch = f"__{column}_ns"
    sums_by = engines.collect(
        engines.with_epoch_ns(lf.filter(inside), [column])
        .with_columns((nw.col(epoch) // (seconds * 10**9) * seconds).alias("__bucket"))
        .group_by("__bucket")
        .agg(raw=nw.col("amount_raw").sum(), n=nw.len())
    )
    k = len(edges) - 1
    starts = np.maximum(sums_by["__bucket"].to_numpy(dtype=np.int64) * 10**9, edges[0])
    idx = np.searchsorted(edges, starts, side="right") - 1
    sums = np.zeros(k, dtype=np.int64)
    np.add.at(sums, idx, sums_by["raw"].to_numpy(dtype=np.int64))
    counts = np.zeros(k, dtype=np.int64)
    np.add.at(counts, idx, sums_by["n"].to_numpy(dtype=np.int64))
    return sums, counts


def volume_history(
    ledger: pd.DataFrame,
    start: times.TimeLike,
    end: times.TimeLike,
    *,
    freq: str | pd.Timedelta = "1D",
) -> pd.DataFrame:
    """Mint and burn volume and counts per ``freq`` bucket of ``[start, end)``.

    Bucket edges fall on multiples of ``freq`` since the Unix epoch (UTC
    midnights for days); the first and last buckets are clipped to the
    window, as :meth:`cctx_research.Client.volume_history` does.

    Parameters
    ----------
    ledger : pandas.DataFrame, or a lazy frame of another engine
        A ``"ledger"`` frame (:func:`cctx_research.load`,
        :func:`cctx_research.load_sample`). Transfers without a burn time
        count on the mint side only; unminted ones on the burn side only.
        A Polars, DuckDB or Dask frame (``cctx_research.load(...,
        engine=...)``) is summed per bucket in its engine; only the sums
        come back.
    start, end : time
        The half-open window; naive means UTC.
    freq : str or pandas.Timedelta, default "1D"
        A fixed bucket length such as ``"1h"``, ``"1D"`` or ``"7D"``.

    Returns
    -------
    pandas.DataFrame
        The ``"volume"`` frame, one row per bucket, ``timestamp`` its start,
        with the ledger's provenance (operation ``"volume_history"``).

    Raises
    ------
    TypeError
        If ``ledger`` is not a DataFrame, or ``freq`` not a duration.
    ValueError
        For a bad window or ``freq``, or more than :data:`MAX_BUCKETS` buckets.
    cctx_research.errors.DataError
        If ``ledger`` does not follow the ledger schema.
    """
    lazy = not isinstance(ledger, pd.DataFrame) and engines.recognised(ledger)
    if not isinstance(ledger, pd.DataFrame) and not lazy:
        raise TypeError(
            "ledger must be a DataFrame of kind 'ledger' (cctx_research.load(...), "
            f"cctx_research.load_sample()) or {engines.SUPPORTED}, got {type(ledger).__name__}"
        )
    step = _step(freq)
    start_ts = times.to_timestamp(start, name="start")
    end_ts = times.to_timestamp(end, name="end")
    if start_ts >= end_ts:
        raise ValueError(
            f"start ({start_ts.isoformat()}) must be before end ({end_ts.isoformat()}); "
            "windows are half-open [start, end)"
        )
    if (end_ts - start_ts) / step > MAX_BUCKETS:
        raise ValueError(f"more than {MAX_BUCKETS} buckets of {freq!r}: pass a larger freq")
    buckets = list(times.chunk_window(start_ts, end_ts, step))
    edges = np.array([a.value for a, _ in buckets] + [buckets[-1][1].value], dtype=np.int64)
    if lazy:
        lf = engines.lazy(ledger, "ledger", columns=["amount_raw", *_SIDES])
        window = (start_ts, end_ts)
        burn_raw, burn_count = _engine_sums(lf, "burn_timestamp", edges, window, step)
        mint_raw, mint_count = _engine_sums(lf, "mint_timestamp", edges, window, step)
    else:
        frame = schema.validate(ledger, "ledger")
        amounts = frame["amount_raw"].to_numpy(dtype=np.int64)
        burn_raw, burn_count = _bucket_sums(frame["burn_timestamp"], amounts, edges)
        mint_raw, mint_count = _bucket_sums(frame["mint_timestamp"], amounts, edges)
    out = pd.DataFrame(
        {
            "timestamp": pd.DatetimeIndex([a for a, _ in buckets]),
            "end": pd.DatetimeIndex([b for _, b in buckets]),
            "mint_volume": mint_raw / _UNIT,
            "burn_volume": burn_raw / _UNIT,
            "total_volume": (mint_raw + burn_raw) / _UNIT,
            "mint_volume_raw": mint_raw,
            "burn_volume_raw": burn_raw,
            "mint_count": mint_count,
            "burn_count": burn_count,
            "total_count": mint_count + burn_count,
        }
    )
    for column in ("timestamp", "end"):
        out[column] = out[column].astype(schema.TIMESTAMP)
    record = None if lazy else provenance(ledger)
    if record is not None:
        attach(
            out,
            record.replace(
                operation="volume_history",
                window=(start_ts, end_ts),
                coverage=None,
                parameters={"start": start_ts, "end": end_ts, "freq": str(step)},
            ),
        )
    return schema.validate(out, "volume")


def _step(freq: Any) -> pd.Timedelta:
    if isinstance(freq, bool) or not isinstance(freq, (str, pd.Timedelta)):
        raise TypeError(
            f"freq must be a duration such as '1h', '1D' or '7D', got {type(freq).__name__}"
        )
    try:
        step = pd.Timedelta(freq)
    except ValueError as exc:
        raise ValueError(
            f"freq={freq!r} is not a fixed duration; pass e.g. '1h', '1D' or '7D'"
        ) from exc
    if step <= pd.Timedelta(0):
        raise ValueError(f"freq must be a positive duration such as '1D' or '1h', got {freq!r}")
    return step
