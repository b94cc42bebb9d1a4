"""Small shared pieces of the log decoder: per-row reasons and column conversions.

Examples
--------
>>> import numpy as np
>>> reasons = Reasons(3)
>>> reasons.flag(np.array([True, False, True]), "first")
>>> reasons.flag(np.array([True, True, False]), "second")
>>> reasons.text.tolist()
['first', 'second', 'first']
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from cctx_research import schema

__all__ = ["Reasons", "column", "int_column", "nullable", "string_column"]


class Reasons:
    """Why each row is bad: the first reason recorded for a row wins."""

    def __init__(self, m: int) -> None:
        self.flagged = np.zeros(m, dtype=bool)
        self.text = np.full(m, None, dtype=object)

    def flag(self, mask: np.ndarray, reason: str) -> None:
        """Record ``reason`` for the rows in ``mask`` that have none yet."""
        new = np.asarray(mask, dtype=bool) & ~self.flagged
        if new.any():
            self.text[new] = reason
            self.flagged |= new

    def set(self, row: int, reason: str) -> None:
        """Record a reason particular to one row (one that names its values)."""
        if not self.flagged[row]:
            self.text[row] = reason
            self.flagged[row] = True


def column(series: pd.Series) -> pa.Array:
    """A string column of a frame as an Arrow array (no copy for Arrow-backed strings)."""
    values = pa.array(series.astype(schema.STRING), type=pa.large_string(), from_pandas=True)
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values


def string_column(values: pa.Array) -> pd.Series:
    """An Arrow string array as a Series of the schema's string dtype."""
    return pd.Series(pd.array(values.cast(pa.large_string()), dtype=schema.STRING))


def int_column(series: pd.Series) -> np.ndarray:
    """A nullable integer column as int64 (nulls, already flagged as bad, become 0)."""
    return series.fillna(0).to_numpy(dtype=np.int64)


def nullable(values: np.ndarray, present: np.ndarray) -> pd.arrays.IntegerArray:
    """Int64 values, <NA> where ``present`` is False."""
    return pd.arrays.IntegerArray(values.astype(np.int64), ~np.asarray(present, dtype=bool))
