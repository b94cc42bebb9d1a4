"""Analysis inputs beyond pandas: Polars, DuckDB and Dask, through narwhals.

Every analysis function takes its data first. A pandas frame goes the
pandas way, as always. Any other frame that `narwhals
<https://narwhals-dev.github.io/narwhals/>`_ recognises (a Polars
``DataFrame`` or ``LazyFrame``, a DuckDB relation, a Dask ``DataFrame``) is
*reduced in its own engine* to the small aggregate the function needs
(group-by sums and counts, the span of a time column, the rows of one address), and
only that aggregate is collected into pandas; the rest of the function is
the same code as for pandas. So a Dask frame on a cluster, or a lazy scan
of a Parquet dataset, never comes into memory whole.

A few questions cannot be answered from an aggregate (exact quantiles over
all rows, for instance); those functions say so in their docstring and
collect only the columns they need.

The engines are optional: ``pip install 'cctx-research[engines]'`` installs
Polars, DuckDB and Dask; narwhals itself is a small dependency of the core.

Examples
--------
>>> import pandas as pd
>>> from cctx_research import schema
>>> is_pandas(schema.empty("transfers"))
True
>>> recognised([1, 2])
False
"""

from __future__ import annotations

import decimal
import warnings
from collections.abc import Sequence
from typing import Any

import narwhals.stable.v2 as nw
import numpy as np
import pandas as pd
from pandas.tseries.frequencies import to_offset

from .. import schema
from ..errors import DataError
from . import results

__all__ = [
    "SUPPORTED",
    "bucket",
    "bucket_seconds",
    "collect",
    "grouped",
    "is_pandas",
    "lazy",
    "recognised",
    "span",
    "with_bucket",
    "with_epoch_ns",
]

SUPPORTED = "a pandas, Polars (DataFrame or LazyFrame), DuckDB relation or Dask DataFrame"
"""What the analysis functions accept, for error messages."""

_EPOCH = pd.Timestamp("1970-01-01", tz="UTC")


def is_pandas(data: Any) -> bool:
    """Whether ``data`` is a pandas DataFrame (the analysis functions' own path)."""
    return isinstance(data, pd.DataFrame)


def recognised(data: Any) -> bool:
    """Whether ``data`` is a frame of an engine narwhals knows (pandas included)."""
    deps = nw.dependencies
    return bool(deps.is_into_dataframe(data) or deps.is_into_lazyframe(data))


def lazy(data: Any, kind: str, *, columns: Sequence[str] | None = None) -> nw.LazyFrame:
    """A narwhals LazyFrame over ``data``, checked to hold ``columns`` of ``kind``.

    Parameters
    ----------
    data : Polars DataFrame or LazyFrame, DuckDB relation, Dask DataFrame
    kind : str
        The schema kind the data should follow (``"transfers"``, ``"ledger"``).
    columns : sequence of str, optional
        The columns the caller needs (default: every column of ``kind``).

    Raises
    ------
    TypeError
        If narwhals does not recognise ``data``.
    DataError
        Naming the missing columns.
    """
    try:
        with warnings.catch_warnings():
            # narwhals announces that its Dask support will move to a plugin
            # package; until that package exists, the built-in support is it
            warnings.filterwarnings("ignore", "Dask support is moving", FutureWarning)
            frame = nw.from_native(data)
    except TypeError:
        raise TypeError(
            f"expected {SUPPORTED} of kind {kind!r}, got {type(data).__name__}"
        ) from None
    lf = frame.lazy() if isinstance(frame, nw.DataFrame) else frame
    names = set(lf.collect_schema().names())
    need = list(columns) if columns is not None else schema.columns(kind)
    missing = [c for c in need if c not in names]
    if missing:
        raise DataError(
            f"the {type(data).__name__} does not follow the {kind!r} schema: "
            f"missing columns: {', '.join(missing)}",
            hint=f"see cctx_research.schema.columns({kind!r})",
        )
    return lf


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    """Engine quirks out: DuckDB's Decimal sums and 'Etc/UTC', Arrow-backed numbers."""
    for col in frame.columns:
        series = frame[col]
        if (
            series.dtype == object
            and len(series)
            and isinstance(
                series.dropna().iloc[0] if series.notna().any() else None, decimal.Decimal
            )
        ):
            frame[col] = series.map(lambda v: None if v is None else int(v)).astype("int64")
        elif isinstance(series.dtype, pd.DatetimeTZDtype):
            frame[col] = series.dt.tz_convert("UTC").astype(schema.TIMESTAMP)
        elif isinstance(series.dtype, pd.ArrowDtype):
            kind = series.dtype.numpy_dtype.kind if hasattr(series.dtype, "numpy_dtype") else ""
            if kind in "iuf":
                frame[col] = series.astype(series.dtype.numpy_dtype)
            elif kind == "b":
                frame[col] = series.astype(bool)
            else:
                frame[col] = series.astype(schema.STRING)
        elif isinstance(series.dtype, pd.CategoricalDtype):
            frame[col] = series.astype(str).astype(schema.STRING)
    return frame


def collect(lf: nw.LazyFrame) -> pd.DataFrame:
    """Run a lazy query in its engine and bring the (small) result into pandas."""
    return _plain(lf.collect().to_pandas().reset_index(drop=True))


def span(lf: nw.LazyFrame, column: str = "timestamp") -> tuple[Any, Any]:
    """``(min, max)`` of a time column, computed in the engine; ``(None, None)`` when empty."""
    bounds = collect(lf.select(lo=nw.col(column).min(), hi=nw.col(column).max()))
    if bounds.empty or pd.isna(bounds["lo"].iloc[0]):
        return None, None
    return bounds["lo"].iloc[0], bounds["hi"].iloc[0]


def bucket_seconds(freq: str) -> int | None:
    """Length in seconds of a fixed-length frequency (``"1h"``, ``"1D"``, ``"7D"``), else None.

    Calendar frequencies (``"W-MON"``, ``"MS"``) have no fixed length.

    Examples
    --------
    >>> bucket_seconds("1h"), bucket_seconds("7D"), bucket_seconds("MS")
    (3600, 604800, None)
    """
    offset = to_offset(freq)
    if isinstance(offset, pd.offsets.Day):
        return 86_400 * offset.n
    if isinstance(offset, pd.offsets.Tick):
        seconds = pd.Timedelta(offset).total_seconds()
        return int(seconds) if seconds >= 1 and seconds == int(seconds) else None
    return None


def bucket(column: str, seconds: int) -> nw.Expr:
    """The start (seconds since the epoch) of each time's bucket of ``seconds``, in the engine.

    Buckets start at multiples of their length since the epoch, like
    :func:`._common.time_grouper`'s; computed as whole seconds, which every
    engine has.
    """
    since = (nw.col(column) - nw.lit(_EPOCH)).dt.total_seconds()
    return (since // seconds * seconds).cast(nw.Int64)


def with_bucket(lf: nw.LazyFrame, column: str, seconds: int, name: str) -> nw.LazyFrame:
    """``lf`` with ``name``: the start (seconds since the epoch) of each time's bucket.

    :func:`bucket`, through the time's integer nanoseconds (:func:`with_epoch_ns`):
    DuckDB cannot subtract a time literal from a ``TIMESTAMPTZ_NS`` column (the
    type of a pandas-written Parquet file's times), and integers are exact.
    """
    lf = with_epoch_ns(lf, [column])
    step = seconds * 1_000_000_000
    return lf.with_columns((nw.col(f"__{column}_ns") // step * seconds).cast(nw.Int64).alias(name))


def with_epoch_ns(lf: nw.LazyFrame, columns: Sequence[str]) -> nw.LazyFrame:
    """``lf`` with ``__<column>_ns``: each time column as integer nanoseconds since the epoch.

    Differences of these are exact, and cheap: DuckDB subtracts two times
    through an ``INTERVAL``, several times slower than subtracting their
    epochs (``epoch_ns``), which narwhals does not yet spell for DuckDB.
    """
    if lf.implementation is nw.Implementation.DUCKDB:
        native = lf.to_native()
        epochs = ", ".join(f'epoch_ns("{c}") AS "__{c}_ns"' for c in columns)
        return nw.from_native(native.project(f"*, {epochs}")).lazy()
    return lf.with_columns([nw.col(c).dt.timestamp("ns").alias(f"__{c}_ns") for c in columns])


def grouped(
    lf: nw.LazyFrame,
    keys: Sequence[str],
    *,
    freq: str | None = None,
    time_column: str = "timestamp",
    value: str = "amount",
    median: bool = False,
    raw: bool = False,
) -> pd.DataFrame:
    """Sum and count of ``value`` per ``keys`` (and per time bucket), in the engine.

    Returns a pandas frame indexed by ``keys`` (with ``timestamp`` first when
    ``freq`` is given), columns ``sum`` and ``count`` (and ``median``), and
    the ``(first, last)`` time of the data as the ``span`` of its
    :func:`~.results.result_info`: the
    shape of pandas' ``groupby(keys)[value].agg(["sum", "count"])``; ``raw``
    adds ``sum_raw``, the exact sum of ``amount_raw``.

    Raises
    ------
    ValueError
        If ``freq`` is a calendar frequency, which has no fixed length.
    """
    by = list(keys)
    if freq is not None:
        seconds = bucket_seconds(freq)
        if seconds is None:
            raise ValueError(
                f"freq={freq!r} has no fixed length; on a {SUPPORTED.split(', ', 1)[1]} "
                "pass a fixed one such as '1h', '1D' or '7D'"
            )
        lf = with_bucket(lf, time_column, seconds, "__bucket")
        by = ["__bucket", *by]
    # the span rides along: no second pass over the data for it
    aggs = {
        "sum": nw.col(value).sum(),
        "count": nw.len(),
        "__first": nw.col(time_column).min(),
        "__last": nw.col(time_column).max(),
    }
    # narwhals cannot yet take a grouped median on Dask; Dask itself can (by shuffle)
    dask_median = median and lf.implementation is nw.Implementation.DASK
    if median and not dask_median:
        aggs["median"] = nw.col(value).median()
    if raw:
        aggs["sum_raw"] = nw.col("amount_raw").sum()
    out = collect(lf.group_by(by).agg(**aggs))
    if dask_median:
        native = lf.select([*by, value]).to_native()
        medians = native.groupby(by)[value].median(shuffle_method="tasks").compute()
        medians = medians.rename("median").reset_index()
        for key in by:
            medians[key] = medians[key].astype(str)
            out[key] = out[key].astype(str)
        out = out.merge(medians, on=by, how="left")
    out["count"] = out["count"].astype("int64")
    if raw:
        out["sum_raw"] = out["sum_raw"].astype("int64")
    out["sum"] = out["sum"].astype("float64") if value == "amount" else out["sum"]
    if freq is not None:
        out["__bucket"] = pd.to_datetime(
            out["__bucket"].to_numpy(dtype=np.int64), unit="s", utc=True
        ).astype(schema.TIMESTAMP)
        out = out.rename(columns={"__bucket": "timestamp"})
        by = ["timestamp", *keys]
    for key in keys:
        out[key] = out[key].astype(str)
    first, last = out.pop("__first"), out.pop("__last")
    seen = (None, None) if out.empty else (first.min(), last.max())
    out = out.sort_values(by, kind="stable") if by else out
    out = out.set_index(by) if by else out
    return results.describe(out, span=seen)
