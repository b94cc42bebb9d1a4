"""The ledger analyses run in a lazy engine (DuckDB, Polars): latency and V2 per route.

:func:`.latency.by_route`, :func:`.v2.fast_share`, :func:`.v2.fees`,
:func:`.v2.fee_caps` and :func:`.v2.hooks` given a DuckDB relation or a
Polars frame come here (private: the public functions are the API). Each is
one group-by in the engine, keyed by the domains and the finality class as
integers; only its result (one row per route and class) comes back, where
the pandas path's helpers (:func:`._ledger.routes`, :func:`._ledger.sort_groups`)
give it the same columns, types and order as the pandas result. The pending
analyses' engine form is :mod:`.pending_lazy`.

What stays the pandas path's alone: the rules as they read one transfer
(burn known, finality class, latency, the fee's basis points) are written
twice, once here as narwhals expressions and once in :mod:`._ledger` as
numpy, because a pandas ledger is read faster by numpy than through an
engine; ``tests/test_report_lazy.py`` holds every result equal on the
sample, and on windows with no row, one row and ties.

Quantiles are linear between transfers, as pandas takes them; an engine
may round the interpolation (or a latency's division) otherwise than numpy
does, in the last bit (a relative 1e-16), far below any figure shown.
Volumes are summed from the exact ``amount_raw`` (then in USDC), so they do
not depend on the order an engine adds in (pandas adds the floats, with
compensation: the same to the last bit or two).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import narwhals.stable.v2 as nw
import pandas as pd

from .. import schema
from ..errors import OtherTokenWarning
from ..tokens import DEFAULT_TOKEN
from . import _ledger, engines, results
from .inputs import no_burn_times

__all__ = ["Ledger", "by_route", "fast_share", "fee_caps", "fees", "handles", "hooks", "ledger",
           "usdc_only"]

_ENGINES = (nw.Implementation.DUCKDB, nw.Implementation.POLARS)
_DOMAINS = ["source_domain", "destination_domain"]
_NW = {"string": nw.String(), "Int64": nw.Int64(), "int64": nw.Int64()}
_BPS = 10_000


def handles(data: Any) -> bool:
    """Whether ``data`` is a frame these engine paths run on (DuckDB, Polars).

    Dask's group-by takes no quantile: the analyses collect its columns instead.
    """
    if engines.is_pandas(data) or not engines.recognised(data):
        return False
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Dask support is moving", FutureWarning)
        return nw.from_native(data).implementation in _ENGINES


@dataclass(frozen=True)
class Ledger:
    """A checked lazy ledger: its USDC rows (every column, typed nulls for the absent) and
    the first and last burn time (the ``span`` of results)."""

    lf: nw.LazyFrame
    span: tuple[Any, Any]


def ledger(data: Any, *, what: str) -> Ledger:
    """``data`` checked as :func:`._ledger.ledger_frame` checks a pandas ledger, left lazy."""
    names = engines.lazy(data, "ledger", columns=()).collect_schema().names()
    if "burn_timestamp" not in names and "timestamp" in names:
        raise no_burn_times(what)
    optional = schema.optional_columns("ledger")
    lf = engines.lazy(data, "ledger", columns=[c for c in schema.columns("ledger")
                                               if c not in optional])  # fmt: skip
    types = schema.dtypes("ledger")
    absent = [c for c in optional if c not in names]
    if absent:
        lf = lf.with_columns([nw.lit(None).cast(_NW[str(types[c])]).alias(c) for c in absent])
    seen = engines.collect(lf.select(n=nw.len(), known=burn_known().any()))
    if int(seen["n"].iloc[0]) and not bool(seen["known"].fillna(False).iloc[0]):
        raise no_burn_times(what)
    lf = usdc_only(lf, what)
    return Ledger(lf, engines.span(lf, "burn_timestamp"))


def usdc_only(lf: nw.LazyFrame, what: str, *, stacklevel: int = 4) -> nw.LazyFrame:
    """:func:`cctx_research.tokens.default_token_rows`, asked of the engine (a ``token``
    column it lacks keeps every row); the warning names ``what``."""
    if "token" not in lf.collect_schema().names():
        return lf
    token = nw.col("token")
    counts = engines.collect(lf.filter(~token.is_null()).group_by("token").agg(n=nw.len()))
    usdc = counts["token"] == DEFAULT_TOKEN
    if not usdc.any() or usdc.all():
        return lf
    other = counts.loc[~usdc].sort_values("token")
    listed = ", ".join(f"{t} {int(n):,}" for t, n in zip(other["token"], other["n"], strict=True))
    warnings.warn(
        f"{what} counts {DEFAULT_TOKEN} and left out {int(other['n'].sum()):,} transfers of "
        f"other tokens ({listed}); to study them, select their rows by the 'token' column "
        "and pass those alone",
        OtherTokenWarning,
        stacklevel=stacklevel,
    )
    return lf.filter(token.is_null() | (token == DEFAULT_TOKEN))


def burn_known() -> nw.Expr:
    """:func:`._ledger.burn_known`: a burn time, and a burn side (hash or block)."""
    no_side = nw.col("burn_tx_hash").is_null() & (nw.col("burn_block") == -1)
    return ~nw.col("burn_timestamp").is_null() & ~no_side


def finality_code() -> nw.Expr:
    """:func:`._ledger.finality_class` as its code: 0 fast, 1 standard, 2 unknown."""
    threshold, version = nw.col("min_finality_threshold"), nw.col("cctp_version")
    fast = _ledger.FAST_THRESHOLD
    return (
        nw.when(threshold <= fast).then(nw.lit(0))
        .when(threshold > fast).then(nw.lit(1))
        .when((version == 1) & threshold.is_null()).then(nw.lit(1))
        .otherwise(nw.lit(2)).cast(nw.Int64())
    )  # fmt: skip


def with_latency(lf: nw.LazyFrame) -> nw.LazyFrame:
    """``lf`` with ``latency_s`` (burn to mint, seconds) and the times' epoch nanoseconds."""
    lf = engines.with_epoch_ns(lf, ["burn_timestamp", "mint_timestamp"])
    span = nw.col("__mint_timestamp_ns") - nw.col("__burn_timestamp_ns")
    return lf.with_columns((span.cast(nw.Float64()) / 1e9).alias("latency_s"))


def quantiles(column: str, named: Sequence[tuple[str, float]]) -> dict[str, nw.Expr]:
    """Linear quantiles of ``column`` (pandas' default), as group-by aggregations."""
    return {name: nw.col(column).quantile(q, interpolation="linear") for name, q in named}


def grouped(lf: nw.LazyFrame, keys: Sequence[str], aggs: dict[str, nw.Expr]) -> pd.DataFrame:
    """``aggs`` per route (and ``keys``) in the engine, back with the pandas path's route
    and finality columns, in route order."""
    out = engines.collect(lf.group_by([*_DOMAINS, *keys]).agg(**aggs))
    for name, column in _ledger.routes(out).items():
        out[name] = column
    if "finality" in keys:
        codes = out["finality"].to_numpy(dtype="int8")
        out["finality"] = pd.Categorical.from_codes(
            codes, dtype=pd.CategoricalDtype(list(_ledger.FINALITY_CLASSES), ordered=True)
        )
    if "cctp_version" in keys:
        out["cctp_version"] = out["cctp_version"].astype("Int64")
    order = [*_ledger.ROUTE, *keys]
    out = _ledger.sort_groups(out.drop(columns=_DOMAINS), order)
    return out[[*order, *aggs]]


def by_route(data: Any, keys: list[str], *, what: str) -> pd.DataFrame:
    """:func:`.latency.by_route` (``keys`` checked) of a lazy ledger."""
    checked = ledger(data, what=what)
    lf = checked.lf.filter(burn_known() & ~nw.col("mint_timestamp").is_null())
    lf = with_latency(lf).with_columns(
        finality=finality_code(),
        ambiguous=(nw.col("pairing") == "content_ambiguous").fill_null(False).cast(nw.Int64()),
    )
    aggs = {"count": nw.len(),
            **quantiles("latency_s", [("median_s", 0.5), ("p10_s", 0.1), ("p90_s", 0.9)]),
            "ambiguous": nw.col("ambiguous").sum()}  # fmt: skip
    out = grouped(lf, keys, aggs)
    out = out.astype({"count": "int64", "ambiguous": "int64", "median_s": "float64",
                      "p10_s": "float64", "p90_s": "float64"})  # fmt: skip
    return results.describe(out, span=checked.span, by=keys)


def _v2(data: Any, what: str) -> tuple[nw.LazyFrame, tuple[Any, Any]]:
    checked = ledger(data, what=what)
    lf = checked.lf.filter((nw.col("cctp_version") == 2).fill_null(False))
    return lf.with_columns(finality=finality_code()), checked.span


def _flag_shares(lf: nw.LazyFrame, flag: nw.Expr, names: tuple[str, str, str]) -> pd.DataFrame:
    """:func:`.v2._flag_shares` in the engine: per route, transfers and volume, the flagged
    ones' and their shares; ``names`` are the count, share and volume columns."""
    count, share, volume = names
    raw = nw.col("amount_raw")
    out = grouped(lf, [], {
        "count": nw.len(),
        "flagged": flag.cast(nw.Int64()).sum(),
        "volume_raw": raw.sum(),
        "flagged_raw": nw.when(flag).then(raw).otherwise(nw.lit(0)).sum(),
    })  # fmt: skip
    out["count"] = out["count"].astype("int64")
    out[count] = out.pop("flagged").astype("int64")
    out[share] = _share(out[count], out["count"])
    out["volume"] = _ledger.amount(out.pop("volume_raw").astype("int64"))
    out[volume] = _ledger.amount(out.pop("flagged_raw").astype("int64"))
    out[f"{volume}_share"] = _share(out[volume], out["volume"])
    return out


def _share(part: pd.Series, whole: pd.Series) -> pd.Series:
    whole = whole.astype("float64")
    return (part / whole.where(whole > 0)).astype("float64")


def fast_share(data: Any) -> pd.DataFrame:
    """:func:`.v2.fast_share` of a lazy ledger."""
    lf, span = _v2(data, "v2.fast_share")
    lf = lf.filter(nw.col("finality") != 2)
    out = _flag_shares(lf, nw.col("finality") == 0, ("fast_count", "fast_count_share",
                                                     "fast_volume"))  # fmt: skip
    return results.describe(out, span=span)


def hooks(data: Any) -> pd.DataFrame:
    """:func:`.v2.hooks` of a lazy ledger."""
    lf, span = _v2(data, "v2.hooks")
    lf = lf.filter(~nw.col("hook_data").is_null())
    text = nw.col("hook_data").str.strip_chars().str.to_lowercase()
    out = _flag_shares(lf, ~text.is_in(["", "0x"]), ("hook_count", "hook_share",
                                                      "hook_volume"))  # fmt: skip
    return results.describe(out, span=span)


def _per_amount(column: str) -> nw.Expr:
    """``column`` over the amount burned, in basis points (as :mod:`.v2` reckons them)."""
    return nw.col(column).cast(nw.Float64()) / nw.col("amount_raw").cast(nw.Float64()) * _BPS


def fees(data: Any, keys: list[str]) -> pd.DataFrame:
    """:func:`.v2.fees` (``keys``: the checked ``by``) of a lazy ledger."""
    lf, span = _v2(data, "v2.fees")
    lf = lf.filter(~nw.col("fee_raw").is_null()).with_columns(bps=_per_amount("fee_raw"))
    out = grouped(lf, keys, {
        "count": nw.len(),
        "volume_raw": nw.col("amount_raw").sum(),
        "fee_raw": nw.col("fee_raw").sum(),
        **quantiles("bps", [("median_fee_bps", 0.5)]),
    })  # fmt: skip
    out["count"] = out["count"].astype("int64")
    out["fee_raw"] = out["fee_raw"].astype("int64")
    volume_raw = out.pop("volume_raw").astype("int64")
    where = len(_ledger.ROUTE) + len(keys)
    out.insert(where + 1, "volume", _ledger.amount(volume_raw))
    out.insert(where + 2, "fee", _ledger.amount(out["fee_raw"]))
    out.insert(where + 4, "fee_bps", _share(out["fee_raw"], volume_raw) * _BPS)
    out["median_fee_bps"] = out["median_fee_bps"].astype("float64")
    return results.describe(out, span=span)


def fee_caps(data: Any, keys: list[str]) -> pd.DataFrame:
    """:func:`.v2.fee_caps` (``keys``: the checked ``by``) of a lazy ledger."""
    lf, span = _v2(data, "v2.fee_caps")
    fee, cap = nw.col("fee_raw"), nw.col("max_fee_raw")
    lf = lf.filter(~fee.is_null() & (cap > 0).fill_null(False))
    lf = lf.with_columns(
        ratio=fee.cast(nw.Float64()) / cap.cast(nw.Float64()),
        at_cap=(fee >= cap).cast(nw.Int64()),
        cap_bps=_per_amount("max_fee_raw"),
    )
    out = grouped(lf, keys, {
        "count": nw.len(),
        **quantiles("ratio", [("median_fee_ratio", 0.5), ("p90_fee_ratio", 0.9)]),
        "at_cap_count": nw.col("at_cap").sum(),
        **quantiles("cap_bps", [("median_max_fee_bps", 0.5)]),
    })  # fmt: skip
    out["count"] = out["count"].astype("int64")
    out["at_cap_count"] = out["at_cap_count"].astype("int64")
    where = len(_ledger.ROUTE) + len(keys)
    out.insert(where + 4, "at_cap_share", _share(out["at_cap_count"], out["count"]))
    for col in ("median_fee_ratio", "p90_fee_ratio", "median_max_fee_bps"):
        out[col] = out[col].astype("float64")
    return results.describe(out, span=span)
