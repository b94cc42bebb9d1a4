"""A report over a ledger left in its engine (DuckDB, Polars, Dask): what it asks of it.

``report.build(ledger=...)`` takes a ``"ledger"`` frame held in pandas, or a
lazy frame of another engine (``cctx_research.load(..., engine="duckdb")``,
:func:`cctx_research.ingest.datasets.scan`), optionally with its provenance
as an :class:`EngineLedger`. Over a lazy ledger the report never makes a
pandas copy of it: the window's span, the scoping to the window and chains,
the mints of the window (as a lazy ``"transfers"`` frame) and the yes/no
questions the sections ask (burn times? V2 transfers?) are expressions
run in the engine, and the analysis functions, given the lazy frames,
reduce in the engine and bring back their small results
(:mod:`cctx_research.analysis.engines`).

Each function here answers for a pandas frame too, through the same
narwhals expression, so the two paths ask the same question.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import narwhals.stable.v2 as nw
import pandas as pd

from .. import chains as chain_registry
from .. import schema
from ..analysis import ledger_lazy
from ..provenance import Provenance, provenance
from ..views.ledger_files import EngineLedger

__all__ = [
    "EngineLedger",
    "any_row",
    "completed_by",
    "count",
    "distinct",
    "events",
    "has_burn_times",
    "is_lazy",
    "largest",
    "mints",
    "record_of",
    "scope",
    "span",
    "sums_by",
    "total",
    "touching",
    "unwrap",
]

logger = logging.getLogger(__name__)


def unwrap(ledger: Any) -> Any:
    """The frame of an :class:`EngineLedger`, else ``ledger`` itself."""
    return ledger.frame if isinstance(ledger, EngineLedger) else ledger


def record_of(ledger: Any) -> Provenance | None:
    """The provenance of a ledger, lazy (its :class:`EngineLedger` record) or pandas."""
    if isinstance(ledger, EngineLedger):
        return ledger.record
    return provenance(ledger) if isinstance(ledger, pd.DataFrame) else None


def is_lazy(data: Any) -> bool:
    """Whether ``data`` is a frame of an engine other than pandas (narwhals knows it)."""
    if isinstance(data, pd.DataFrame) or data is None:
        return False
    deps = nw.dependencies
    return bool(deps.is_into_dataframe(data) or deps.is_into_lazyframe(data))


def _lf(data: Any) -> nw.LazyFrame:
    frame = nw.from_native(data)
    return frame.lazy() if isinstance(frame, nw.DataFrame) else frame


def _back(lf: nw.LazyFrame) -> Any:
    return lf.to_native()


def _one(lf: nw.LazyFrame) -> Any:
    """The single value of a one-cell query."""
    out = lf.collect()
    return out.item() if len(out) else None


def count(data: Any) -> int:
    """Rows of ``data``, counted in its engine."""
    if isinstance(data, pd.DataFrame):
        return len(data)
    return int(_one(_lf(data).select(nw.len())) or 0)


def any_row(data: Any, condition: nw.Expr) -> bool:
    """Whether any row of ``data`` meets ``condition`` (nulls count as false)."""
    lf = _lf(data)
    return bool(_one(lf.select(condition.fill_null(False).any())) or False)


def has_burn_times(data: Any) -> bool:
    """Whether a row has a burn time of a real burn side (not a mint-only row's guess)."""
    no_side = nw.col("burn_tx_hash").is_null() & (nw.col("burn_block") == -1)
    return any_row(data, ~nw.col("burn_timestamp").is_null() & ~no_side)


def events(data: Any) -> tuple[Any, Any]:
    """The first and last burn or mint time of a lazy ledger; ``(None, None)`` without any."""
    bounds = _lf(data).select(
        b0=nw.col("burn_timestamp").min(), b1=nw.col("burn_timestamp").max(),
        m0=nw.col("mint_timestamp").min(), m1=nw.col("mint_timestamp").max(),
    ).collect().to_pandas()  # fmt: skip
    lows = [pd.Timestamp(v) for v in bounds[["b0", "m0"]].iloc[0] if not pd.isna(v)]
    highs = [pd.Timestamp(v) for v in bounds[["b1", "m1"]].iloc[0] if not pd.isna(v)]
    if not lows:
        return None, None
    return min(lows).tz_convert("UTC"), max(highs).tz_convert("UTC")


def span(data: Any) -> tuple[Any, Any, Any]:
    """``(start, end, last event)`` of a lazy ledger, as :func:`.sources.data_span` says it."""
    first, last = events(data)
    if first is None:
        return None, None, None
    return first.floor("min"), last.floor("min") + pd.Timedelta(minutes=1), last


_NW_TYPES = {"string": nw.String(), "Int64": nw.Int64(), "int64": nw.Int64()}


def _complete(lf: nw.LazyFrame) -> nw.LazyFrame:
    """The ledger's optional columns it lacks, added as typed nulls (``schema.complete``)."""
    have = set(lf.collect_schema().names())
    types = schema.dtypes("ledger")
    absent = [c for c in schema.optional_columns("ledger") if c not in have]
    return lf.with_columns(
        [nw.lit(None).cast(_NW_TYPES[str(types[c])]).alias(c) for c in absent]
    ) if absent else lf


def _domains(names: Sequence[str]) -> list[int]:
    return sorted({chain_registry.domain(n) for n in names})


def scope(data: Any, start: pd.Timestamp, end: pd.Timestamp, names: Sequence[str] | None) -> Any:
    """The lazy ledger's rows burned in ``[start, end)`` touching ``names`` (a lazy frame)."""
    burn = nw.col("burn_timestamp")
    keep = ~burn.is_null() & (burn >= nw.lit(start)) & (burn < nw.lit(end))
    if names:
        wanted = _domains(names)
        keep = keep & (
            nw.col("source_domain").is_in(wanted) | nw.col("destination_domain").is_in(wanted)
        )
    return _back(_complete(_lf(data)).filter(keep))


def completed_by(data: Any, end: pd.Timestamp) -> Any:
    """The rows minted before ``end`` or not at all (a lazy frame)."""
    mint = nw.col("mint_timestamp")
    return _back(_lf(data).filter(mint.is_null() | (mint < nw.lit(end))))


def touching(data: Any, names: Sequence[str] | None) -> Any:
    """The lazy transfers whose source or destination chain is one of ``names``."""
    if not names:
        return data
    keep = nw.col("source_chain").is_in(list(names)) | nw.col("destination_chain").is_in(
        list(names)
    )
    return _back(_lf(data).filter(keep))


def _chain(column: str) -> nw.Expr:
    """A domain column as its chain's name, in the engine."""
    known = {d: chain_registry.chain_name(d) for d in chain_registry.all_domains()}
    return nw.col(column).replace_strict(
        known, default=nw.col(column).cast(nw.String()), return_dtype=nw.String()
    )


def _usdc_only(lf: nw.LazyFrame, what: str) -> nw.LazyFrame:
    """:func:`cctx_research.tokens.default_token_rows`, asked of the engine."""
    return ledger_lazy.usdc_only(lf, what, stacklevel=4)


_STRINGS = ("mint_recipient", "message_sender", "burn_token", "destination_caller",
            "destination_token_messenger")  # fmt: skip


def mints(data: Any, start: pd.Timestamp, end: pd.Timestamp) -> Any:
    """The lazy ledger's mints of ``[start, end)`` as a lazy ``"transfers"`` frame.

    What :func:`.sources.mints_from_ledger` makes of a pandas ledger (through
    :func:`cctx_research.transfers_from_ledger`), as an engine's query.
    """
    lf = _usdc_only(_complete(_lf(data)), "transfers_from_ledger")
    mint = nw.col("mint_timestamp")
    lf = lf.filter(~mint.is_null() & (mint >= nw.lit(start)) & (mint < nw.lit(end)))
    columns = [
        nw.col("transfer_id").cast(nw.String()),
        mint.alias("timestamp"),
        (nw.col("amount_raw").cast(nw.Float64()) / 1_000_000).alias("amount"),
        nw.col("amount_raw").cast(nw.Int64()),
        nw.lit(True).alias("is_completed"),
        nw.col("source_domain").cast(nw.Int64()),
        nw.col("destination_domain").cast(nw.Int64()),
        _chain("source_domain").alias("source_chain"),
        _chain("destination_domain").alias("destination_chain"),
        *(nw.col(c).cast(nw.String()) for c in _STRINGS),
    ]
    if any_row(lf, ~nw.col("mint_recipient_owner").is_null()):
        columns.append(nw.col("mint_recipient_owner").cast(nw.String()))
    return _back(lf.select(columns))


def sums_by(data: Any, keys: Sequence[str], value: str = "amount") -> pd.DataFrame:
    """The sum of ``value`` per ``keys``, in the engine: one row per group, in pandas."""
    lf = _lf(data).group_by(list(keys)).agg(nw.col(value).sum())
    return lf.collect().to_pandas()


def distinct(data: Any, column: str) -> int:
    """Distinct non-null values of ``column`` (pandas' ``nunique``), in the engine."""
    lf = _lf(data).filter(~nw.col(column).is_null())
    return int(_one(lf.select(nw.col(column).n_unique())) or 0)


def total(data: Any, column: str) -> int:
    """The exact sum of an integer column (``amount_raw``), in the engine."""
    value = _one(_lf(data).select(nw.col(column).sum()))
    return 0 if value is None or pd.isna(value) else int(value)


def largest(data: Any, column: str = "amount") -> float:
    """The largest value of ``column``, NaN when there are no rows."""
    value = _one(_lf(data).select(nw.col(column).max()))
    return float("nan") if value is None or pd.isna(value) else float(value)
