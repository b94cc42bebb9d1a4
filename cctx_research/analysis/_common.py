"""Helpers shared by the analysis modules (private: no public API here)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import narwhals.stable.v2 as nw
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pandas.tseries.frequencies import to_offset

from .. import addressing, chains, schema, times
from . import engines, inputs, results


def transfers_frame(frame: Any, *, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Validate a transfers frame (raises TypeError / DataError).

    A frame of another engine (Polars, DuckDB, Dask: see :mod:`.engines`) is
    checked for the columns of the kind, and only ``columns`` (default: all)
    are collected into pandas, typed as the schema says.
    """
    if engines.is_pandas(frame) or not engines.recognised(frame):
        inputs.ledger_not_transfers(frame)
        return schema.validate(frame, "transfers")
    lf = engines.lazy(frame, "transfers")
    wanted = list(columns) if columns is not None else schema.columns("transfers")
    return typed(engines.collect(lf.select(wanted)), "transfers")


OWNER = "mint_recipient_owner"
"""A token-account recipient's owner (Solana), where the frame carries it."""


def recipients_as_owners(data: Any) -> Any:
    """``data`` (pandas, or a narwhals LazyFrame) with each ``mint_recipient`` that is a
    token account counted as its owner (``mint_recipient_owner``, where the frame has
    it): who received the money, not the account that holds it for them."""
    if isinstance(data, pd.DataFrame):
        if OWNER not in data.columns or not data[OWNER].notna().any():
            return data
        owner, written = data[OWNER].astype(schema.STRING), data["mint_recipient"]
        return data.assign(mint_recipient=owner.fillna(written.astype(schema.STRING)))
    if OWNER not in data.collect_schema().names():
        return data
    return data.with_columns(nw.coalesce(OWNER, "mint_recipient").alias("mint_recipient"))


def source(frame: Any) -> tuple[Any, tuple[Any, Any] | None]:
    """The data and its span: a validated pandas frame, or a lazy frame of another engine.

    Functions that can reduce in the engine (group-by sums and counts) take
    the lazy frame, and the span from the aggregate's
    :func:`~.results.result_info` (``None`` here); see :mod:`.engines`.
    """
    if engines.is_pandas(frame) or not engines.recognised(frame):
        inputs.ledger_not_transfers(frame)
        data = schema.validate(frame, "transfers")
        return data, results.span_of(data["timestamp"])
    # the span of another engine's data comes with its aggregate (engines.grouped)
    return engines.lazy(frame, "transfers"), None


def typed(frame: pd.DataFrame, kind: str) -> pd.DataFrame:
    """Cast the columns ``frame`` has to the dtypes of ``kind`` (chains as categoricals)."""
    spec = schema.dtypes(kind)
    for col in frame.columns:
        dtype = spec.get(col)
        if dtype is None:
            continue
        if isinstance(dtype, pd.CategoricalDtype):
            frame[col] = schema.chain_categorical(frame[col].astype(object))
        elif isinstance(dtype, pd.DatetimeTZDtype):
            frame[col] = pd.to_datetime(frame[col], utc=True).astype(schema.TIMESTAMP)
        else:
            frame[col] = frame[col].astype(dtype)
    return frame


def frequency(freq: Any) -> str:
    """Check a pandas frequency string such as ``"1h"``, ``"1D"`` or ``"7D"``."""
    if not isinstance(freq, str):
        raise TypeError(
            f"freq must be a pandas frequency string such as '1h', '1D' or '7D', "
            f"got {type(freq).__name__}"
        )
    # a deprecated spelling ('1d') or a retired one ('1M') is refused naming the one to pass,
    # not left to print pandas' warnings wherever freq is used
    offset = times.pandas_period(
        to_offset, freq, name="freq", fixed=False,
        expected="pandas frequency; pass e.g. '1h', '1D', '7D', 'W-MON' or '1MS' (months)",
    )  # fmt: skip
    if getattr(offset, "n", 1) < 1:
        raise ValueError(f"freq must be a positive duration, got {freq!r}")
    calendar_start(offset, freq)
    return freq


def calendar_start(offset: Any, freq: str) -> Any:
    """The offset whose bucket *starts* match the calendar periods ``freq`` names.

    Buckets follow pandas' periods (``Series.dt.to_period``): ``"ME"`` and
    ``"MS"`` are calendar months, ``"QE-MAR"`` quarters ending in March,
    ``"W-MON"`` weeks *ending* on Monday (Tuesday to Monday), ``"W"`` weeks
    ending on Sunday. A bucket is labelled by the first instant of its
    period, whichever end the frequency is anchored on. Fixed lengths
    (``Tick`` and days) are returned unchanged. Raises ValueError for
    frequencies with no calendar period (business days, semi-months).
    """
    if isinstance(offset, (pd.offsets.Tick, pd.offsets.Day)):
        return offset
    n = offset.n
    if isinstance(offset, (pd.offsets.MonthEnd, pd.offsets.MonthBegin)) and type(offset) in (
        pd.offsets.MonthEnd,
        pd.offsets.MonthBegin,
    ):
        return pd.offsets.MonthBegin(n)
    if type(offset) is pd.offsets.QuarterEnd:
        return pd.offsets.QuarterBegin(n, startingMonth=offset.startingMonth % 12 + 1)
    if type(offset) is pd.offsets.QuarterBegin:
        return offset
    if type(offset) is pd.offsets.YearEnd:
        return pd.offsets.YearBegin(n, month=offset.month % 12 + 1)
    if type(offset) is pd.offsets.YearBegin:
        return offset
    if type(offset) is pd.offsets.Week and offset.weekday is not None:
        return pd.offsets.Week(n, weekday=(offset.weekday + 1) % 7)
    raise ValueError(
        f"freq={freq!r} has no calendar period to bucket by; pass a fixed length "
        f"('1h', '1D', '7D') or a calendar one ('W-MON', 'MS', 'ME', 'QS', 'QE', 'YS', 'YE')"
    )


def time_grouper(freq: str) -> pd.Grouper:
    """Bucket ``timestamp`` into buckets labelled by their (inclusive) start.

    Buckets of a fixed length (hours, days, weeks given as ``"7D"``) start
    at multiples of that length since 1970-01-01 UTC, as the client's chunks
    and ``volume_history`` do, so the buckets of different frames line up;
    pandas would otherwise start them at the first timestamp seen. Calendar
    frequencies are the calendar periods of :func:`calendar_start`, each
    labelled by its first instant (``"ME"`` and ``"MS"`` both give months
    labelled by their first day).
    """
    offset = to_offset(freq)
    if isinstance(offset, pd.offsets.Day):
        # days are calendar offsets in pandas 3, which ignores origin for them
        offset = pd.Timedelta(days=offset.n)
    elif not isinstance(offset, pd.offsets.Tick):
        start = calendar_start(offset, freq)
        return pd.Grouper(key="timestamp", freq=start, closed="left", label="left")
    return pd.Grouper(key="timestamp", freq=offset, closed="left", label="left", origin="epoch")


def chain_column(values: Iterable[Any], order: Sequence[str]) -> pd.Categorical:
    """A chain categorical whose categories are the registry names plus ``order``'s extras."""
    known = chains.known_names()
    categories = known + [c for c in order if c not in known]
    return pd.Categorical(list(values), categories=categories)


def chain_domain(name: str, transfers: pd.DataFrame | None = None) -> int | None:
    """Domain id of a chain name; falls back to the frame's domain columns, else None."""
    try:
        return chains.domain(name)
    except (TypeError, ValueError):
        pass
    if transfers is not None:
        for chain_col, domain_col in (
            ("source_chain", "source_domain"),
            ("destination_chain", "destination_domain"),
        ):
            hit = transfers.loc[transfers[chain_col] == name, domain_col]
            if len(hit):
                return int(hit.iloc[0])
    return None


def corridor_label(source: Any, destination: Any) -> str:
    """The corridor name used in frames: ``"ethereum->base"``."""
    return f"{source}->{destination}"


def corridor_columns(source: pd.Series, destination: pd.Series) -> dict[str, Any]:
    """``corridor``, ``source_chain`` and ``destination_chain`` columns of corridor rows."""
    src = source.astype(str)
    dst = destination.astype(str)
    order = chains.in_order(list(src) + list(dst))
    return {
        "corridor": pd.array(
            [corridor_label(s, d) for s, d in zip(src, dst, strict=True)], dtype=schema.STRING
        ),
        "source_chain": chain_column(src, order),
        "destination_chain": chain_column(dst, order),
    }


def canonical_addresses(values: Any) -> np.ndarray:
    """:func:`cctx_research.addressing.canonical_addresses` of a column, on its distinct values."""
    codes, uniques = pd.factorize(pd.Index(values), use_na_sentinel=True)
    canon = addressing.canonical_addresses(uniques).to_numpy(dtype=object, na_value=None)
    return np.append(canon, None)[codes]


def _all_canonical(values: pd.Index) -> bool:
    """True when no value needs respelling (the usual case: frames from the client)."""
    arr = pa.array(values.astype(str), type=pa.large_string())
    # what the codec changes with no chain given: the case of hex, and
    # EVM-padded bytes32 (a 32-byte address of another chain, a base58 one,
    # is canonical as it is)
    lower = pc.utf8_lower(arr)
    padded = pc.and_(pc.equal(pc.utf8_length(arr), 66), pc.starts_with(lower, "0x" + "00" * 12))
    recased = pc.and_(pc.starts_with(lower, "0x"), pc.not_equal(arr, lower))
    respell = pc.or_(padded, recased)
    return not pc.any(respell).as_py()


def fold_addresses(agg: pd.DataFrame) -> pd.DataFrame:
    """Sum the rows of an address-indexed aggregate whose keys name one address.

    A user's extract may hold one address in both its 20-byte and its
    bytes32-padded form, or in two cases; they are one address.
    """
    index = agg.index
    levels = (
        [index.get_level_values(i) for i in range(index.nlevels)]
        if isinstance(index, pd.MultiIndex)
        else [index]
    )
    if all(_all_canonical(level) for level in levels):
        return agg
    if isinstance(index, pd.MultiIndex):
        keys = [canonical_addresses(index.get_level_values(i)) for i in range(index.nlevels)]
        new = pd.MultiIndex.from_arrays(keys, names=index.names)
    else:
        new = pd.Index(canonical_addresses(index), name=index.name)
    if new.equals(index):
        return agg
    return agg.set_axis(new).groupby(level=list(range(new.nlevels)), sort=False).sum()
