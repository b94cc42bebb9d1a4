"""Volumes over time, ticket sizes (computed in :mod:`.sizes`), seasonality, KPIs, USDC in flight.

Functions take a canonical ``"transfers"`` frame (or, for :func:`in_flight`,
a ``"volume"`` frame) first and options keyword-only; amounts are in USDC.
All times are UTC. Results record the data's ``(first, last)`` timestamps
as the ``span`` of their :class:`~.results.ResultInfo` (read it with
:func:`~.results.result_info`) so that plots can title with them.

With ``dedupe=``, :func:`timeseries`, :func:`size_buckets`,
:func:`seasonality` and :func:`kpis` count volume once per end-user
movement instead of once per CCTP transfer: the rule, and why it is that
rule, are in :mod:`.once`.
"""

from __future__ import annotations

from typing import Any

import narwhals.stable.v2 as nw
import numpy as np
import pandas as pd
from pandas.tseries.frequencies import to_offset

from .. import arguments, chains, schema, times
from . import _common, _coverage, engines, once, results

# ticket sizes live in .sizes; their public names stay here (QUANTILES outside __all__)
from .sizes import QUANTILES, SIZE_CLASSES, SizeDistribution, size_buckets  # noqa: F401

__all__ = [
    "SIZE_CLASSES",
    "SizeDistribution",
    "in_flight",
    "kpis",
    "seasonality",
    "size_buckets",
    "timeseries",
]

_BY = (None, "source_chain", "destination_chain", "corridor")
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_PERIODS = (
    ("24h", pd.Timedelta(hours=24)),
    ("7d", pd.Timedelta(days=7)),
    ("30d", pd.Timedelta(days=30)),
)
_METRICS = ("volume", "transfers", "senders", "recipients")


def timeseries(
    transfers: pd.DataFrame,
    *,
    freq: str = "1D",
    by: str | None = None,
    dedupe: Any = None,
    coverage: tuple[pd.Timestamp, pd.Timestamp] | None = None,
) -> pd.DataFrame:
    """Volume and count per time bucket, overall or per chain or corridor.

    Parameters
    ----------
    transfers : pandas.DataFrame
        A canonical ``"transfers"`` frame.
    freq : str, default "1D"
        A pandas frequency such as ``"1h"``, ``"1D"``, ``"7D"``, ``"W-MON"``,
        ``"MS"`` or ``"ME"``. Buckets are half-open ``[start, start + freq)``
        and labelled by their start (the first instant). Fixed lengths start
        at multiples of their length since 1970-01-01 UTC; calendar
        frequencies bucket exactly as ``timestamp.dt.to_period(...)`` would
        (``"ME"`` and ``"MS"``: calendar months, labelled by their first day;
        ``"W-MON"``: weeks ending on Monday, labelled by their Tuesday).
        Business-day and semi-month frequencies are refused.
    by : {None, "source_chain", "destination_chain", "corridor"}
        Split each bucket by source chain, destination chain or corridor.
    dedupe : DataFrame, optional
        Count each end-user movement once (:mod:`.once`): the ledger the
        transfers came from, or a :func:`.movements.continuations` table.
        Default: every transfer.
    coverage : tuple of pandas.Timestamp, optional
        The span the data covers, for a frame that cannot carry its
        provenance (another engine's lazy frame). Default: its record's.

    Returns
    -------
    pandas.DataFrame
        One row per bucket from the first to the last transfer's bucket, for
        each group seen (every bucket x group combination is present, zeros
        where nothing moved). Columns ``timestamp`` (bucket start), then the
        group column(s) (``source_chain`` / ``destination_chain``, or
        ``corridor`` plus both chain columns), then ``volume`` (USDC,
        float64) and ``count`` (int64). Sorted by time, then group. Its
        :func:`~.results.result_info` holds ``freq``, ``by`` and ``covered``:
        the span the transfers' provenance says they cover (None when they
        record none), so that a first or last bucket only partly inside it
        can be told from a drop in activity.

    Raises
    ------
    DataError
        If ``transfers`` does not follow the schema.
    ValueError, TypeError
        If ``freq`` is not a pandas frequency or ``by`` not one of the above.

    Examples
    --------
    >>> timeseries(transfers, freq="1D", by="source_chain").head()  # doctest: +SKIP
    """
    _common.frequency(freq)
    arguments.choice("by", by, _BY)
    transfers, win = _common.source(once.transfers_once(transfers, dedupe))
    covered = coverage if coverage is not None else _coverage.recorded(transfers)
    if by is None:
        group_cols: list[str] = []
    elif by == "corridor":
        group_cols = ["source_chain", "destination_chain"]
    else:
        group_cols = [by]
    if engines.is_pandas(transfers):
        keys = [_common.time_grouper(freq), *group_cols]
        agg = transfers.groupby(keys, observed=True)["amount"].agg(["sum", "count"])
    else:
        agg = engines.grouped(transfers, group_cols, freq=freq)
        win = results.result_info(agg).span
        agg = agg[["sum", "count"]]
    agg.columns = ["volume", "count"]
    if by is None:
        out = agg.reindex(_buckets(agg.index, freq), fill_value=0).reset_index()
    else:
        out = _grid(agg, freq, group_cols, corridor=by == "corridor")
    out["timestamp"] = out["timestamp"].astype(schema.TIMESTAMP)
    out["volume"] = out["volume"].astype("float64")
    out["count"] = out["count"].astype("int64")
    out.attrs.clear()
    return results.describe(out, span=win, freq=freq, by=by, covered=covered)


def _buckets(stamps: pd.Index, freq: str) -> pd.DatetimeIndex:
    """Every bucket start from the first to the last of ``stamps``; none when it is empty."""
    if len(stamps):
        step = _common.calendar_start(to_offset(freq), freq)
        return pd.date_range(stamps.min(), stamps.max(), freq=step, name="timestamp")
    return pd.DatetimeIndex([], tz="UTC", name="timestamp")


def _grid(agg: pd.DataFrame, freq: str, group_cols: list[str], *, corridor: bool) -> pd.DataFrame:
    """The (bucket, group) sums of ``agg`` on a dense bucket x group grid, zeros where empty.

    Filled by position: no per-row string work.
    """
    buckets = _buckets(agg.index.get_level_values(0), freq)
    observed = agg.index.droplevel(0)
    groups, names, order = _groups_in_order(observed, len(group_cols))
    n_b, n_g = len(buckets), len(groups)
    cell = buckets.get_indexer(agg.index.get_level_values(0)) * n_g + groups.get_indexer(observed)
    volume = np.zeros(n_b * n_g, dtype="float64")
    count = np.zeros(n_b * n_g, dtype="int64")
    volume[cell] = agg["volume"].to_numpy()
    count[cell] = agg["count"].to_numpy()
    columns: dict[str, Any] = {"timestamp": np.repeat(buckets, n_g)}
    if corridor:
        labels = np.array(
            [
                _common.corridor_label(a, b)
                for a, b in zip(names["source_chain"], names["destination_chain"], strict=True)
            ],
            dtype=object,
        )
        columns["corridor"] = pd.array(np.tile(labels, n_b), dtype=schema.STRING)
    for col in group_cols:
        small = _common.chain_column(names[col], order)
        columns[col] = pd.Categorical.from_codes(np.tile(small.codes, n_b), dtype=small.dtype)
    columns["volume"] = volume
    columns["count"] = count
    return pd.DataFrame(columns)


def _groups_in_order(observed: pd.Index, width: int) -> tuple[pd.Index, pd.DataFrame, list[str]]:
    """The distinct groups seen, sorted by the registry order of their chains.

    Returns the groups, their chain names (one column per group column) and
    the registry order of every chain named.
    """
    groups = observed.unique()
    names = groups.to_frame(index=False).astype(str)
    order = chains.in_order(pd.unique(names.to_numpy().ravel()))
    rank = {name: k for k, name in enumerate(order)}
    sort_pos = sorted(
        range(len(names)),
        key=lambda i: tuple(rank[names.iat[i, j]] for j in range(width)),
    )
    return groups[sort_pos], names.iloc[sort_pos].reset_index(drop=True), order


def seasonality(
    transfers: pd.DataFrame,
    *,
    dedupe: Any = None,
    coverage: tuple[pd.Timestamp, pd.Timestamp] | None = None,
) -> pd.DataFrame:
    """Counts and volume by hour of day x day of week, in UTC, in total and per day.

    A window holds some weekdays more often than others (a 30-day window
    holds two or three of its weekdays five times, the rest four times), so
    totals favour those weekdays; the means per day (``count_per_day``,
    ``volume_per_day``) do not. Each is the total of its weekday-hour
    divided by ``days``: how many times the span the data covers holds that
    hour of that weekday (an hour it holds in part counts once). That span
    is the one its provenance records (``coverage``, else ``window``; the
    report's window), widened to the data's own first and last time; a
    frame that records none covers its own first to last time.

    Parameters
    ----------
    transfers : pandas.DataFrame
        A canonical ``"transfers"`` frame.
    dedupe : DataFrame, optional
        Count each end-user movement once (see :func:`timeseries`).
    coverage : tuple of pandas.Timestamp, optional
        As for :func:`timeseries`.

    Returns
    -------
    pandas.DataFrame
        Always 168 rows (7 weekdays x 24 hours, zeros where empty), columns
        ``weekday`` (0 = Monday ... 6 = Sunday), ``day`` (``"Mon"`` ...),
        ``hour`` (0-23, UTC), ``count`` (int64) and ``volume`` (USDC), the
        totals; ``days`` (int64, see above), ``count_per_day`` and
        ``volume_per_day`` (float64, the means per day; NaN where ``days`` is
        0: the span does not hold that hour).

    Raises
    ------
    DataError
        If ``transfers`` does not follow the schema.

    Examples
    --------
    >>> s = seasonality(transfers)  # doctest: +SKIP
    >>> s.pivot(index="weekday", columns="hour", values="count_per_day")  # doctest: +SKIP
    """
    transfers, win = _common.source(once.transfers_once(transfers, dedupe))
    covered = coverage if coverage is not None else _coverage.recorded(transfers)
    if engines.is_pandas(transfers):
        ts = transfers["timestamp"].dt
        slot = ts.day_of_week.to_numpy(dtype="int64") * 24 + ts.hour.to_numpy(dtype="int64")
        amount = transfers["amount"].to_numpy(dtype="float64", na_value=0.0)
        ones = None
    else:
        # weekday is 1 (Monday) to 7 in every engine narwhals speaks to
        # (small integer types in some engines: widen before multiplying)
        day = nw.col("timestamp").dt.weekday().cast(nw.Int64) - 1
        slot_expr = day * 24 + nw.col("timestamp").dt.hour().cast(nw.Int64)
        cells = engines.collect(
            transfers.with_columns(slot_expr.cast(nw.Int64).alias("slot"))
            .group_by("slot")
            .agg(
                sum=nw.col("amount").sum(),
                count=nw.len(),
                first=nw.col("timestamp").min(),
                last=nw.col("timestamp").max(),
            )
        )
        win = (None, None) if cells.empty else (cells["first"].min(), cells["last"].max())
        slot = cells["slot"].to_numpy(dtype="int64")
        amount = cells["sum"].to_numpy(dtype="float64")
        ones = cells["count"].to_numpy(dtype="float64")
    counts = np.bincount(slot, weights=ones, minlength=168).astype("int64")
    vols = np.bincount(slot, weights=amount, minlength=168).astype("float64")
    days = _coverage.weekday_hours(win, covered)
    held = days > 0
    weekday = np.repeat(np.arange(7, dtype="int64"), 24)
    out = pd.DataFrame(
        {
            "weekday": weekday,
            "day": pd.Categorical(
                [_WEEKDAYS[d] for d in weekday], categories=list(_WEEKDAYS), ordered=True
            ),
            "hour": np.tile(np.arange(24, dtype="int64"), 7),
            "count": counts,
            "volume": vols,
            "days": days,
            "count_per_day": np.divide(counts, days, out=np.full(168, np.nan), where=held),
            "volume_per_day": np.divide(vols, days, out=np.full(168, np.nan), where=held),
        }
    )
    return results.describe(out, span=win)


def kpis(
    transfers: pd.DataFrame,
    *,
    now: times.TimeLike | None = None,
    dedupe: Any = None,
    coverage: tuple[pd.Timestamp, pd.Timestamp] | None = None,
) -> pd.DataFrame:
    """Headline numbers for the last 24 hours, 7 days and 30 days.

    Each period is the half-open window ``[now - period, now)``, compared
    with the previous window of the same length ``[now - 2 period, now -
    period)``.

    Distinct senders and recipients need the addresses: given a Polars,
    DuckDB or Dask frame, this collects the four columns it uses, of the
    last two 30-day periods only.

    Parameters
    ----------
    transfers : pandas.DataFrame
        A canonical ``"transfers"`` frame.
    now : str, datetime, Timestamp or int, optional
        End of the periods (naive means UTC). Default: one second after the
        latest transfer (floored to the second), so the result does not
        depend on the wall clock.
    dedupe : DataFrame, optional
        Count each end-user movement once (see :func:`timeseries`).
    coverage : tuple of pandas.Timestamp, optional
        As for :func:`timeseries`.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``(period, metric)`` with periods ``"24h"``, ``"7d"``,
        ``"30d"`` and metrics ``"volume"`` (USDC), ``"transfers"``,
        ``"senders"`` (distinct ``message_sender``) and ``"recipients"``
        (distinct ``mint_recipient``); columns ``start``, ``end``,
        ``current``, ``previous`` (float64), ``change``
        (``current / previous - 1``; NaN when ``previous`` is 0), and
        ``current_covered`` / ``previous_covered`` (bool). Empty input
        without ``now`` gives zeros with NaT windows.

        A period is covered when it lies inside the span the frame's data
        covers, give or take an hour: the span its provenance records
        (``coverage``, else ``window``), else, when it records none (a
        ledger read from files, a frame built by hand), the span of the
        frame's own timestamps, first to last. Over a period that is not
        covered the value is NaN, never 0, and its flag is False: a 30-day
        KPI of a 7-day frame has no previous period to compare with, and
        says so.

    Raises
    ------
    DataError
        If ``transfers`` does not follow the schema.
    TypeError, ValueError
        If ``now`` is not a time.

    Examples
    --------
    >>> kpis(transfers).loc[("24h", "volume"), "current"]  # doctest: +SKIP
    """
    end = None if now is None else times.to_timestamp(now, name="now")
    transfers, whole, end = _kpi_rows(once.transfers_once(transfers, dedupe), end)
    ts = transfers["timestamp"]
    if coverage is not None:
        span = coverage
    else:
        span = _coverage.recorded(transfers) or (None if whole[0] is None else whole)
    rows = []
    for period, length in _PERIODS:
        if end is None:
            cur = prev = transfers.iloc[0:0]
            start = pd.NaT
        else:
            start = end - length
            cur = transfers[(ts >= start) & (ts < end)]
            prev = transfers[(ts >= start - length) & (ts < start)]
        current, previous = _kpi_values(cur), _kpi_values(prev)
        cur_ok = end is None or _coverage.inside(span, start, end)
        prev_ok = end is None or _coverage.inside(span, start - length, start)
        for metric in _METRICS:
            c = current[metric] if cur_ok else np.nan
            p = previous[metric] if prev_ok else np.nan
            rows.append(
                (
                    period,
                    metric,
                    start,
                    end if end is not None else pd.NaT,
                    c,
                    p,
                    c / p - 1.0 if p and not np.isnan(p) else np.nan,
                    cur_ok,
                    prev_ok,
                )
            )
    out = pd.DataFrame(
        rows,
        columns=[
            "period", "metric", "start", "end", "current", "previous", "change",
            "current_covered", "previous_covered",
        ],
    )
    for col in ("start", "end"):
        out[col] = pd.to_datetime(out[col], utc=True).astype(schema.TIMESTAMP)
    for col in ("current", "previous", "change"):
        out[col] = out[col].astype("float64")
    out = out.set_index(["period", "metric"])
    return results.describe(out, span=whole)


_KPI_COLUMNS = ["timestamp", "amount", "message_sender", "mint_recipient"]


def _kpi_rows(source: Any, end: pd.Timestamp | None) -> tuple[pd.DataFrame, Any, Any]:
    """The rows :func:`kpis` reads, the first and last time of all of them, and the
    periods' end (``end``, else one second after the last time; None without times).

    Of a Polars, DuckDB or Dask frame only the rows of the last two longest periods
    are collected: the span is the engine's, and a whole history's addresses would
    be gigabytes in pandas (2.8 million recipients in twelve million transfers).
    """
    if engines.is_pandas(source) or not engines.recognised(source):
        frame = _common.transfers_frame(source, columns=_KPI_COLUMNS)
        whole = results.span_of(frame["timestamp"])
        return frame, whole, _after(whole) if end is None else end
    lf = engines.lazy(source, "transfers", columns=_KPI_COLUMNS)
    lo, hi = engines.span(lf)
    whole = (None, None) if lo is None else (times.to_timestamp(lo), times.to_timestamp(hi))
    end = _after(whole) if end is None else end
    if end is not None:
        since = end - 2 * _PERIODS[-1][1]
        recent = nw.col("timestamp").is_between(nw.lit(since), nw.lit(end), closed="left")
        lf = lf.filter(recent.fill_null(False))
    return _common.transfers_frame(lf.to_native(), columns=_KPI_COLUMNS), whole, end


def _after(span: Any) -> pd.Timestamp | None:
    """One second after the last time of ``span`` (floored to the second); None without."""
    return None if span[1] is None else span[1].floor("s") + pd.Timedelta(seconds=1)


def _kpi_values(frame: pd.DataFrame) -> dict[str, float]:
    return {
        "volume": float(frame["amount"].sum()),
        "transfers": float(len(frame)),
        "senders": float(frame["message_sender"].nunique()),
        "recipients": float(frame["mint_recipient"].nunique()),
    }


def in_flight(volume_history: pd.DataFrame) -> pd.DataFrame:
    """USDC burned but not yet minted, over time.

    The running sum of burn volume minus the running sum of mint volume,
    from a ``"volume"`` frame (``Client.volume_history``). It is relative to
    the start of the history: USDC already in flight before the first bucket
    is not known and counts as zero.

    Parameters
    ----------
    volume_history : pandas.DataFrame
        A canonical ``"volume"`` frame, one row per bucket.

    Returns
    -------
    pandas.DataFrame
        Sorted by ``timestamp``: ``timestamp``, ``end`` (the bucket), ``burn_volume``,
        ``mint_volume``, ``cumulative_burn``, ``cumulative_mint``,
        ``in_flight`` (USDC, at the bucket's end) and ``in_flight_raw``
        (int64 base units, exact).

    Raises
    ------
    DataError
        If ``volume_history`` does not follow the ``"volume"`` schema.

    Examples
    --------
    >>> in_flight(client.volume_history(start="2024-06-01", end="2024-07-01"))  # doctest: +SKIP
    """
    frame = schema.validate(volume_history, "volume")
    frame = frame.sort_values("timestamp", kind="stable")
    burn = frame["burn_volume"].astype("float64")
    mint = frame["mint_volume"].astype("float64")
    out = pd.DataFrame(
        {
            "timestamp": frame["timestamp"].astype(schema.TIMESTAMP),
            "end": frame["end"].astype(schema.TIMESTAMP),
            "burn_volume": burn,
            "mint_volume": mint,
            "cumulative_burn": burn.cumsum(),
            "cumulative_mint": mint.cumsum(),
        }
    )
    out["in_flight"] = out["cumulative_burn"] - out["cumulative_mint"]
    out["in_flight_raw"] = (
        frame["burn_volume_raw"].astype("int64").cumsum()
        - frame["mint_volume_raw"].astype("int64").cumsum()
    ).astype("int64")
    out = out.reset_index(drop=True)
    win = (None, None) if out.empty else (out["timestamp"].min(), out["end"].max())
    return results.describe(out, span=win)
