"""A ledger's columns as the store's index reads them, from a frame or from a dataset.

A column is a frame's pandas Series or the Arrow array a
:class:`~cctx_research.service.dataset.LedgerDataset` read; each reader here turns
either into the same numpy or Arrow array, so the two stores answer alike.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import DataError

__all__ = ["NAT", "Column", "Columns", "arrow_strings", "integers", "missing", "nanos"]

NAT = np.iinfo(np.int64).min
"""int64 nanoseconds of a missing time (NaT)."""

Column = pd.Series | pa.ChunkedArray | pa.Array
"""A ledger column as the index reads it: a frame's, or Arrow's read from a dataset
(:class:`~cctx_research.service.dataset.LedgerDataset`). Each reader below turns
either into the same arrays, so the two stores answer alike."""


class Columns(Protocol):
    """What the index reads a ledger through: its length and its columns by name
    (a ``"ledger"`` frame, or a :class:`~cctx_research.service.dataset.LedgerDataset`)."""

    def __len__(self) -> int: ...

    def __getitem__(self, name: str) -> Column: ...


def nanos(series: Column) -> np.ndarray:
    """Nanoseconds since the epoch of a tz-aware column (NaT -> int64 min)."""
    if not isinstance(series, pd.Series):
        cast = pc.cast(series, pa.timestamp("ns", tz="UTC")).cast(pa.int64())
        return np.asarray(pc.fill_null(cast, NAT).to_numpy(), dtype=np.int64).copy()
    values = series.dt.tz_convert("UTC").dt.as_unit("ns").array
    return np.asarray(values.asi8, dtype=np.int64).copy()


def integers(series: Column) -> np.ndarray:
    """An integer column as int64 (a missing value is an error, as in a frame)."""
    if not isinstance(series, pd.Series):
        if series.null_count:
            raise DataError("an integer column has missing values (use -1 for 'none')")
        return np.asarray(series.to_numpy(), dtype=np.int64)
    return series.to_numpy(dtype=np.int64)


def arrow_strings(series: Column) -> pa.Array:
    """A text column as one Arrow large_string array."""
    if isinstance(series, pd.Series):
        array = pa.array(series.array, type=pa.large_string(), from_pandas=True)
    else:
        array = series.cast(pa.large_string())
    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


def missing(series: Column) -> np.ndarray:
    """Which rows of a column are missing (null, NaN, None)."""
    if isinstance(series, pd.Series):
        return np.array(series.isna(), dtype=bool)
    return np.asarray(pc.is_null(series).to_numpy(zero_copy_only=False), dtype=bool)
