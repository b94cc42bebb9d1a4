"""Typed columns from what files hold, with every bad cell recorded by row.

A :class:`Rows` wraps one table read from one file. Its methods turn a
column into its canonical dtype (text from a CSV included) and record each
row whose value does not fit, with the reason, instead of stopping at the
first: the caller keeps the good rows and reports the bad ones
(``errors="report"``) or raises naming them (``errors="raise"``).

Integers stay exact: a uint256 from a Dune CSV (``"123456789012345678901"``)
or a Parquet decimal is parsed as text, never through a float, and a value
beyond int64 is a bad row naming the value, never a wrap.

Examples
--------
>>> import pandas as pd
>>> rows = Rows(pd.DataFrame({"amount": ["5", "99999999999999999999", "x"]}), "a.csv")
>>> rows.integers("amount").tolist()
[5, -1, -1]
>>> sorted((p["index"], p["reason"][:30]) for p in rows.problems)
[(3, "column 'amount': '999999999999"), (4, "column 'amount': 'x' is not an")]
"""

from __future__ import annotations

import decimal
import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .. import schema
from ..addressing import canonical_addresses, normalize_address, normalize_hash
from ..errors import DataError
from .ledger import guards

__all__ = ["INT64_MAX", "Rows", "bad_frame", "malformed_error"]

logger = logging.getLogger(__name__)

INT64_MAX = int(np.iinfo(np.int64).max)
_DIGITS = r"^[0-9]+$"


def bad_frame(problems: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """The table of bad rows: ``source_file``, ``index``, ``reason``.

    ``index`` is the line number in a CSV or JSON Lines file (the header is
    line 1), the row's position (from 0) in a Parquet file or JSON list, and
    the log's position in an event-log file.
    """
    return pd.DataFrame(
        {
            "source_file": pd.array([p["source_file"] for p in problems], dtype=schema.STRING),
            "index": np.array([int(p["index"]) for p in problems], dtype=np.int64),
            "reason": pd.array([p["reason"] for p in problems], dtype=schema.STRING),
        }
    )


_SHOWN = 5


def malformed_error(problems: Sequence[dict[str, Any]]) -> DataError:
    """The error for malformed rows: their count and the first few, file, place and reason."""
    from pathlib import Path

    first = "; ".join(
        f"{Path(p['source_file']).name}:{p['index']}: {p['reason']}" for p in problems[:_SHOWN]
    )
    more = f" (and {len(problems) - _SHOWN} more)" if len(problems) > _SHOWN else ""
    return DataError(
        f"{len(problems)} malformed row(s) or log(s): {first}{more}",
        hint="fix them, or pass errors='report' to keep the good rows "
        "(the bad ones: cctx_research.bad_rows(ledger))",
    )


class Rows:
    """One table from one file, coerced column by column.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table as read (any dtypes).
    source_file : str
        Its file, for the bad-rows table.
    first : int, default 2
        The number problem reports give the first row: 2 is its line in a
        CSV file (the header is line 1), 1 in JSON Lines, 0 for positions.
    """

    def __init__(self, frame: pd.DataFrame, source_file: str, *, first: int = 2):
        self.frame = frame.reset_index(drop=True)
        self.source_file = source_file
        self.offset = first
        self.bad = np.zeros(len(self.frame), dtype=bool)
        self.problems: list[dict[str, Any]] = []

    def __len__(self) -> int:
        return len(self.frame)

    def flag(self, mask: Any, reason: Any) -> None:
        """Record the rows of ``mask`` as bad; ``reason`` is a str or a per-row function."""
        mask = np.asarray(mask, dtype=bool)
        for i in np.flatnonzero(mask & ~self.bad).tolist():
            text = reason(i) if callable(reason) else reason
            self.problems.append(
                {"source_file": self.source_file, "index": i + self.offset, "reason": text}
            )
        self.bad |= mask

    def _cell(self, column: str, i: int) -> str:
        return repr(str(self.frame[column].iloc[i])[:80])

    def has(self, column: str) -> bool:
        return column in self.frame.columns

    # -- typed columns ---------------------------------------------------

    def integers(self, column: str, *, missing: int | None = None) -> np.ndarray:
        """Exact int64 values; bad or (when ``missing`` is None) absent cells flag the row."""
        values, absent = self._exact(column)
        if missing is None:
            self.flag(absent, f"column {column!r} is empty")
        values[absent] = -1 if missing is None else missing
        return values

    def amounts(self, column: str, *, missing: int | None = None) -> np.ndarray:
        """Exact base units (as :meth:`integers`) within USDC's supply; others flag their row."""
        values = self.integers(column, missing=missing)
        self.flag(
            guards.outside_supply(values) & ~self.bad,
            lambda i: guards.amount_message(column, self._cell(column, i)),
        )
        return values

    def domains(self, column: str) -> np.ndarray:
        """CCTP domain ids: exact integers that a message's ``uint32`` can carry."""
        values = self.integers(column)
        self.flag(
            guards.not_a_domain(values) & ~self.bad,
            lambda i: f"column {column!r}: {self._cell(column, i)} is not a CCTP domain "
            "(a whole number from 0, e.g. 0 for Ethereum, 6 for Base)",
        )
        return values

    def nullable_integers(self, column: str) -> pd.Series:
        """Exact Int64 values; absent cells stay <NA>."""
        if not self.has(column):
            return pd.Series(pd.NA, index=self.frame.index, dtype=schema.NULLABLE_INT)
        values, absent = self._exact(column)
        out = pd.array(values, dtype=schema.NULLABLE_INT)
        out[absent] = pd.NA
        return pd.Series(out, index=self.frame.index)

    def _exact(self, column: str) -> tuple[np.ndarray, np.ndarray]:
        raw = self.frame[column]
        n = len(raw)
        out = np.full(n, -1, dtype=np.int64)
        if pd.api.types.is_integer_dtype(raw.dtype):
            absent = np.asarray(raw.isna(), dtype=bool)
            values = raw.astype(object).where(~absent, 0).to_numpy()
            big = np.array([int(v) > INT64_MAX for v in values], dtype=bool)
            self.flag(big, lambda i: self._too_big(column, i))
            ok = ~absent & ~big
            out[ok] = np.array([int(v) for v in values[ok]], dtype=np.int64)
            return out, absent
        if pd.api.types.is_float_dtype(raw.dtype):
            absent = np.asarray(raw.isna(), dtype=bool)
            values = raw.to_numpy(dtype=np.float64, na_value=np.nan)
            exact = ~absent & (values % 1 == 0) & (np.abs(values) < 2.0**53)
            self.flag(~absent & ~exact, lambda i: self._not_exact(column, i))
            out[exact] = values[exact].astype(np.int64)
            return out, absent
        text = _text(raw).str.strip()
        absent = np.asarray(text.isna() | (text == ""), dtype=bool)
        digits = text.str.lstrip("-").str.lstrip("0").fillna("")
        is_int = np.asarray(text.str.match(r"^-?[0-9]+$").fillna(False), dtype=bool)
        length = np.asarray(digits.str.len().fillna(0), dtype=np.int64)
        fits = is_int & (
            (length < 19) | ((length == 19) & np.asarray(digits <= str(INT64_MAX), dtype=bool))
        )
        self.flag(~absent & ~is_int, lambda i: self._not_int(column, i))
        self.flag(is_int & ~fits, lambda i: self._too_big(column, i))
        if fits.any():
            out[fits] = np.asarray(text[fits].astype("int64"), dtype=np.int64)
        return out, absent

    def _not_int(self, column: str, i: int) -> str:
        return f"column {column!r}: {self._cell(column, i)} is not an integer"

    def _not_exact(self, column: str, i: int) -> str:
        return (
            f"column {column!r}: {self._cell(column, i)} is not an exact integer "
            "(store amounts as integers or text, not floats)"
        )

    def _too_big(self, column: str, i: int) -> str:
        return (
            f"column {column!r}: {self._cell(column, i)} does not fit a 64-bit integer "
            f"(max {INT64_MAX}); it is kept out rather than wrapped"
        )

    def times(self, column: str, *, optional: bool = False) -> pd.Series:
        """UTC timestamps from ISO 8601 text, Unix seconds or datetimes (sub-second kept)."""
        if not self.has(column):
            return pd.Series(pd.NaT, index=self.frame.index, dtype=schema.TIMESTAMP)
        raw = self.frame[column]
        if isinstance(raw.dtype, pd.DatetimeTZDtype):
            out = raw.dt.tz_convert("UTC")
            absent = raw.isna()
        elif pd.api.types.is_datetime64_dtype(raw.dtype):
            out = raw.dt.tz_localize("UTC")
            absent = raw.isna()
        else:
            text = raw.astype(schema.STRING).str.strip()
            absent = text.isna() | (text == "")
            # text that starts with a date is never a number: only the rest is tried as one
            dated = text.str.match(r"\d{4}-\d\d-\d\d").fillna(False).to_numpy(dtype=bool)
            numeric = np.zeros(len(text), dtype=bool)
            if not dated.all():
                tried = pd.to_numeric(text[~dated], errors="coerce")
                numeric[~dated] = tried.notna().to_numpy(dtype=bool)
            as_seconds = _seconds(text, numeric)
            # Dune writes "2024-07-01 12:00:00.000 UTC" (the suffix and the space before it
            # dropped as one vectorised pass, not a regular expression a row)
            cleaned = text.where(~numeric).str.removesuffix("UTC").str.rstrip()
            as_text = pd.to_datetime(cleaned, utc=True, errors="coerce", format="ISO8601")
            out = as_seconds.where(numeric, as_text)
        out = pd.Series(out, index=self.frame.index).astype(schema.TIMESTAMP)
        self.flag(
            np.asarray(out.isna() & ~absent, dtype=bool),
            lambda i: f"column {column!r}: {self._cell(column, i)} is not a time "
            "(ISO 8601 or Unix seconds)",
        )
        self.flag(
            guards.outside_era(out),
            lambda i: guards.era_message(column, self._cell(column, i), out.iat[i]),
        )
        if not optional:
            self.flag(np.asarray(absent, dtype=bool), f"column {column!r} is empty")
        return out

    def booleans(self, column: str) -> np.ndarray:
        raw = self.frame[column]
        if pd.api.types.is_bool_dtype(raw.dtype) and not raw.isna().any():
            return raw.to_numpy(dtype=bool)
        text = raw.astype(schema.STRING).str.strip().str.lower()
        mapping = {"true": True, "false": False, "1": True, "0": False, "yes": True, "no": False}
        out = text.map(mapping)
        self.flag(
            np.asarray(out.isna(), dtype=bool),
            lambda i: f"column {column!r}: {self._cell(column, i)} is not true/false",
        )
        return np.asarray(out.fillna(False), dtype=bool)

    def strings(self, column: str, *, lower: bool = False) -> pd.Series:
        """Text, stripped; empty cells become <NA>; absent columns are all <NA>."""
        if not self.has(column):
            return pd.Series(pd.NA, index=self.frame.index, dtype=schema.STRING)
        raw = self.frame[column]
        out = _text(raw).str.strip()
        out = out.mask(out == "")
        return out.str.lower() if lower else out

    def addresses(self, column: str) -> pd.Series:
        """Canonical addresses (bytes32-padded EVM addresses become 20 bytes); a value that
        is no address in any chain's spelling flags the row."""
        text = self.strings(column)
        if not len(text):
            return text
        out = pd.Series(canonical_addresses(text.array).array, index=self.frame.index)
        hex_rows = out.str.match(r"^0x(?:[0-9a-f]{40}|[0-9a-f]{64})$").fillna(False).astype(bool)
        wrong = np.zeros(len(out), dtype=bool)
        for i in np.flatnonzero((out.notna() & ~hex_rows).to_numpy()):
            try:
                normalize_address(out.iat[i])
            except (TypeError, ValueError):
                wrong[i] = True
        self.flag(wrong, lambda i: f"column {column!r}: {self._cell(column, i)} is not an address")
        return out

    def hashes(self, column: str) -> pd.Series:
        """Transaction hashes in their chain's spelling; a value that is none flags the row.

        EVM hashes (``0x`` + 64 hex, nearly all rows) are lowercased in one
        vectorised pass; the others (Solana signatures in base58, Noble's bare
        hex) are checked one by one with
        :func:`cctx_research.addressing.normalize_hash` and kept as written.
        """
        text = self.strings(column)
        hex_rows = text.str.match(r"^0[xX][0-9a-fA-F]{64}$").fillna(False).astype(bool)
        out = text.where(~hex_rows, text.str.lower())
        others = text.notna() & ~hex_rows
        wrong = np.zeros(len(text), dtype=bool)
        for i in np.flatnonzero(others.to_numpy()):
            # checked, kept as written: these spellings depend on the chain
            # (Noble's hex is upper case), which a column of hashes does not say
            try:
                normalize_hash(text.iat[i])
            except ValueError:
                wrong[i] = True
        self.flag(
            wrong,
            lambda i: f"column {column!r}: {self._cell(column, i)} is not a transaction hash",
        )
        return out


def _text(raw: pd.Series) -> pd.Series:
    """A column as Arrow-backed text (bytes as 0x hex, decimals in full)."""
    if raw.dtype == object and pd.api.types.infer_dtype(raw, skipna=True) not in (
        "string",
        "empty",
    ):  # bytes from Parquet binary columns, decimals, numbers
        raw = raw.map(_as_text, na_action="ignore")
    return raw.astype(schema.STRING)


def _as_text(value: Any) -> Any:
    """Bytes as 0x hex (Parquet binary columns), decimals without exponent, others as str."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "0x" + bytes(value).hex()
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


_UNIX = r"^(?P<units>-?\d+)(?:\.(?P<frac>\d{1,9}))?$"
"""A Unix time as text: whole units, then up to nine decimals."""


def _seconds(text: pd.Series, numeric: np.ndarray) -> pd.Series:
    """Unix times (integer or decimal text) as exact nanosecond timestamps, for the cells
    ``numeric`` marks (those that parse as numbers); NaT elsewhere.

    The unit (seconds, milli-, micro- or nanoseconds) is read from each
    value's size (:func:`.ledger.guards.epoch_scale`).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    out = pd.Series(pd.NaT, index=text.index, dtype=schema.TIMESTAMP)
    if not numeric.any():  # a column of dates: no pattern to match a row against
        return out
    # one pass of Arrow's regular expressions (not Python's, a cell at a time)
    parts = pc.extract_regex(pa.array(text[numeric].array), _UNIX)
    whole, part = pc.struct_field(parts, "units"), pc.struct_field(parts, "frac")
    size = pc.utf8_length(whole)
    # at most 19 characters, and no 19 digits past int64's largest (a bad row, not a crash)
    past = pc.and_(pc.equal(size, 19), pc.greater(whole, str(np.iinfo(np.int64).max)))
    ok = pc.and_(pc.and_(parts.is_valid(), pc.less_equal(size, 19)), pc.invert(past))
    ok = ok.to_numpy(zero_copy_only=False).astype(bool)
    if ok.any():  # exact: through int64 nanoseconds, never a float
        units = pc.cast(whole.filter(ok), pa.int64()).to_numpy()
        frac = pc.cast(pc.utf8_rpad(part.filter(ok), 9, "0"), pa.int64()).to_numpy()
        scale = guards.epoch_scale(units)
        with np.errstate(over="ignore"):
            total = units * scale + frac * scale // 1_000_000_000
        fits = (units == 0) | (total // scale == units)
        stamps = pd.Series(pd.NaT, index=range(len(units)), dtype=schema.TIMESTAMP)
        stamps[fits] = pd.to_datetime(total[fits], unit="ns", utc=True)
        out.iloc[np.flatnonzero(numeric)[ok]] = stamps.array
    return out
