"""Values of decoded JSON -> typed columns: exact amounts, UTC times, addresses, chains.

The vectorised conversions behind :mod:`cctx_research.client.parse`: each
takes the values of one field (a list pulled out of the records) and gives a
numpy array, a pandas column or a categorical; a value that fits no rule is a
:class:`~cctx_research.errors.ResponseSchemaError` naming the field.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .. import chains, schema
from .._codes import unique_ints
from ..addressing import canonical_addresses
from ..errors import ResponseSchemaError
from ..times import MS_THRESHOLD

__all__ = [
    "addresses",
    "bools",
    "chain_names_from_domains",
    "chain_names_from_ids",
    "coerce",
    "column",
    "first",
    "ints",
    "raw_amounts",
    "scale",
    "schema_error",
    "strings",
    "timestamps",
    "tx_hashes",
]

_EXACT = 2**53


def schema_error(message: str) -> ResponseSchemaError:
    """The error of a reply that does not follow the interface, with what to check."""
    return ResponseSchemaError(
        message, hint="the reply does not follow the interface; check base_url and the service"
    )


# ---------------------------------------------------------------------------
# column conversions


def column(records: Sequence[dict[str, Any]], *names: str, required: bool = False) -> list:
    name = names[0]
    try:
        return [r[name] for r in records]
    except KeyError:
        pass
    except TypeError:
        raise schema_error("every record must be an object") from None
    for alt in names[1:]:
        try:
            return [r[alt] for r in records]
        except KeyError:
            continue
    if required:
        missing = sum(1 for r in records if name not in r)
        raise schema_error(f"{missing} record(s) lack the field {name!r}")
    return [first(r, names) for r in records]


def first(record: dict[str, Any], names: Iterable[str]) -> Any:
    for name in names:
        if name in record:
            return record[name]
    return None


def raw_amounts(values: Sequence[Any], *, name: str = "amount") -> np.ndarray:
    """Exact integer amounts (int64) from JSON numbers or digit strings."""
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64)
    arr = np.asarray(values)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64, copy=False)
    if arr.dtype.kind == "f":
        if not np.isfinite(arr).all():
            raise schema_error(f"{name} holds missing or infinite values")
        if (np.abs(arr) >= _EXACT).any() or (arr != np.round(arr)).any():
            raise schema_error(
                f"{name} holds values that are not exact integer base units "
                "(fractional or beyond 2**53)"
            )
        return arr.astype(np.int64)
    out = np.empty(len(values), dtype=np.int64)
    try:
        for i, value in enumerate(values):
            if isinstance(value, bool) or value is None:
                raise ValueError(value)
            if isinstance(value, float):
                if not value.is_integer() or abs(value) >= _EXACT:
                    raise ValueError(value)
                value = int(value)
            out[i] = int(value.strip()) if isinstance(value, str) else int(value)
    except (ValueError, TypeError, OverflowError):
        raise schema_error(
            f"{name} holds a value that is not an integer amount: {value!r}"
        ) from None
    return out


def timestamps(values: Sequence[Any], *, name: str = "timestamp") -> pd.DatetimeIndex:
    """Tz-aware UTC times from Unix seconds, milliseconds or ISO strings."""
    if len(values) == 0:
        return pd.DatetimeIndex([], dtype=schema.TIMESTAMP)
    arr = np.asarray(values)
    if arr.dtype.kind in "OUS":
        numbers = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce")
        if numbers.notna().all():
            arr = numbers.to_numpy()
        else:
            try:
                out = pd.to_datetime(pd.Series(values, dtype=object), utc=True, format="mixed")
            except (ValueError, TypeError) as exc:
                raise schema_error(f"{name} holds values that are not times") from exc
            if out.isna().any():
                raise schema_error(f"{name} holds missing times")
            return pd.DatetimeIndex(out).as_unit("ns")
    if arr.dtype.kind == "b":
        raise schema_error(f"{name} holds booleans, not times")
    if arr.dtype.kind == "f":
        if not np.isfinite(arr).all():
            raise schema_error(f"{name} holds missing times")
        ms = np.abs(arr) >= MS_THRESHOLD
        ns = np.round(arr * np.where(ms, 1e6, 1e9)).astype(np.int64)
    else:
        arr = arr.astype(np.int64)
        ms = np.abs(arr) >= MS_THRESHOLD
        ns = arr * np.where(ms, 1_000_000, 1_000_000_000)
    return pd.DatetimeIndex(ns.astype("datetime64[ns]")).tz_localize("UTC")


def addresses(values: Sequence[Any], chains: Any = None) -> pd.Series:
    """Addresses in their chain's own spelling (see :mod:`cctx_research.addressing`).

    ``chains`` gives each row's chain (domain ids); without it, hex is only
    made canonical.
    """
    return canonical_addresses(values, chains)


def tx_hashes(values: Sequence[Any]) -> pd.Series:
    """Transaction hashes: ``0x`` hex in lower case; others (base58, Cosmos) as given."""
    text = strings(values)
    is_hex = text.str.startswith("0x").fillna(False)
    return text.where(~is_hex, text.str.lower())


def ints(values: Sequence[Any], *, name: str) -> np.ndarray:
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64)
    fast = _plain_ints(values)
    if fast is not None:
        return fast
    numbers = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce")
    # past 2**53 a JSON number has lost digits (read as a float): never cast it
    if numbers.isna().any() or (numbers != np.round(numbers)).any() or (
        numbers.abs() >= _EXACT
    ).any():
        bad = next(
            v
            for v, n in zip(values, numbers, strict=True)
            if pd.isna(n) or n != round(n) or abs(n) >= _EXACT
        )
        raise schema_error(f"{name} holds a value that is not an integer: {bad!r}")
    return numbers.to_numpy().astype(np.int64)


def _plain_ints(values: Sequence[Any]) -> np.ndarray | None:
    """Integers or digit strings (no nulls, no booleans) as int64 through Arrow; else None."""
    try:
        arr = pa.array(values)
        if not (pa.types.is_integer(arr.type) or pa.types.is_string(arr.type)):
            return None
        arr = pc.cast(arr, pa.int64())
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return None
    return None if arr.null_count else arr.to_numpy()


def _chains_by_unique(
    values: Sequence[Any] | pd.Series, name_of: Callable[[Any], str]
) -> pd.Categorical:
    """A chain categorical, naming each distinct value once (registry names first)."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        uniques, codes = unique_ints(values)  # domain ids: no objects
        uniques = uniques.tolist()
    else:
        if not isinstance(values, pd.Series):
            values = pd.Series(values, dtype=object)
        codes, uniques = pd.factorize(values, use_na_sentinel=True)
    names = [name_of(u) for u in uniques]
    known = chains.known_names()
    categories = known + sorted(set(names) - set(known))
    position = {name: i for i, name in enumerate(categories)}
    mapping = np.array([position[n] for n in names] + [-1], dtype=np.int64)
    return pd.Categorical.from_codes(mapping[codes], dtype=schema.chain_dtype(tuple(categories)))


def chain_names_from_domains(domains: np.ndarray) -> pd.Categorical:
    """Chain names of domain ids (unknown: ``"domain-<id>"``)."""
    return _chains_by_unique(np.asarray(domains), lambda d: chains.chain_name(int(d)))


def chain_names_from_ids(values: Sequence[Any]) -> pd.Categorical:
    """Chain names of interface chain ids (``"8453"``; unknown: ``"chain-<id>"``)."""
    return _chains_by_unique(values, lambda v: chains.name_from_chain_id(str(v)))


def strings(values: Sequence[Any]) -> pd.Series:
    return pd.Series([None if v is None else str(v) for v in values], dtype=schema.STRING)


def bools(values: Sequence[Any], *, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype.kind == "b":
        return arr
    out = []
    for v in values:
        if isinstance(v, bool):
            out.append(v)
        elif isinstance(v, str) and v.lower() in ("true", "false"):
            out.append(v.lower() == "true")
        elif v is None:
            out.append(False)
        else:
            raise schema_error(f"{name} holds a value that is not a boolean: {v!r}")
    return np.array(out, dtype=bool)


def coerce(frame: pd.DataFrame, kind: str) -> pd.DataFrame:
    """``frame`` with exactly the columns of ``kind``, in order, at their dtypes."""
    if frame.empty:
        out = schema.empty(kind)
        out.attrs = dict(frame.attrs)
        return out
    data = {}
    for col, dtype in schema.dtypes(kind).items():
        s = frame[col]
        if isinstance(dtype, pd.CategoricalDtype):
            data[col] = (
                s
                if isinstance(s.dtype, pd.CategoricalDtype)
                else pd.Series(_chains_by_unique(s, str), index=s.index)
            )
        elif s.dtype != dtype:
            data[col] = s.astype(dtype)
        else:
            data[col] = s
    out = pd.DataFrame(data, index=frame.index)
    out.attrs = dict(frame.attrs)
    return out


def scale(raw: np.ndarray, decimals: int) -> np.ndarray:
    return raw / 10**decimals
