"""The actor analyses reduced in a lazy engine: only their groups come back to pandas.

:func:`.actors.relayers` and :func:`.actors.integrators` on a Polars or
DuckDB frame ask the engine for the same per-group numbers the pandas path
computes (counts, exact sums of ``amount_raw``, medians, distinct routes),
so a ledger of many millions of rows never crosses into Python; the rest of
the function (shares, sorting, labels) runs on those groups. Dask takes the
collecting path (its group-by has no median through narwhals), as does a
calendar frequency (no fixed bucket length; see :func:`.engines.bucket_seconds`).

Examples
--------
>>> import pandas as pd
>>> reduces(pd.DataFrame())
False
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import narwhals.stable.v2 as nw
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .. import schema
from . import engines

__all__ = [
    "END_USER",
    "hashed_values",
    "integrator_groups",
    "reduces",
    "relayer_groups",
    "round_trip_rows",
    "signers",
    "with_nulls",
]

_NW_TYPES = {"string": nw.String(), "Int64": nw.Int64()}


def reduces(ledger: Any, freq: str | None = None) -> bool:
    """Whether the actor analyses reduce ``ledger`` in its engine (Polars, DuckDB)."""
    if engines.is_pandas(ledger) or not engines.recognised(ledger):
        return False
    if freq is not None and engines.bucket_seconds(freq) is None:
        return False
    # the implementation only: no schema (DuckDB would answer that with a query)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Dask support is moving", FutureWarning)
        implementation = nw.from_native(ledger).implementation
    return implementation is not nw.Implementation.DASK


def with_nulls(lf: nw.LazyFrame, columns: Sequence[str], have: set[str]) -> nw.LazyFrame:
    """``lf`` (whose columns are ``have``) with the ledger's optional ``columns`` it lacks,
    all null, at their dtypes."""
    types = schema.dtypes("ledger")
    absent = [c for c in columns if c not in have]
    if not absent:
        return lf
    return lf.with_columns([nw.lit(None).cast(_NW_TYPES[str(types[c])]).alias(c) for c in absent])


def _exact_sum(column: str) -> nw.Expr:
    # DuckDB sums BIGINT into HUGEINT (decimals in pandas): back to int64 in the engine
    return nw.col(column).sum().cast(nw.Int64)


def relayer_groups(
    lf: nw.LazyFrame, keys: Sequence[str], freq: str | None
) -> tuple[pd.DataFrame, tuple[Any, Any]]:
    """Per group and relayer: ``mints``, ``volume_raw``, ``median_relay_s``; and the mints' span.

    The groups are those of :func:`.actors._relayer_groups`: the minted
    transfers by route (``source_domain``, ``destination_domain``),
    ``cctp_version`` and the mint's time bucket, as ``keys`` and ``freq`` ask.
    """
    lf = lf.filter(~nw.col("mint_timestamp").is_null())
    # nanoseconds / 1e9, as the pandas path computes it: the same floats, the same medians
    lf = engines.with_epoch_ns(lf, ["mint_timestamp", "burn_timestamp"])
    delta = nw.col("__mint_timestamp_ns") - nw.col("__burn_timestamp_ns")
    lf = lf.with_columns((delta / 1e9).alias("__latency"))
    by: list[str] = []
    if freq is not None:
        seconds = engines.bucket_seconds(freq)
        lf = engines.with_bucket(lf, "mint_timestamp", seconds, "__bucket")
        by.append("__bucket")
    if "route" in keys:
        by += ["source_domain", "destination_domain"]
    if "cctp_version" in keys:
        by.append("cctp_version")
    by.append("relayer")
    out = engines.collect(
        lf.group_by(by).agg(
            mints=nw.len(),
            volume_raw=_exact_sum("amount_raw"),
            median_relay_s=nw.col("__latency").median(),
            __first=nw.col("mint_timestamp").min(),
            __last=nw.col("mint_timestamp").max(),
        )
    )
    span = _span(out)
    if freq is not None:
        out["timestamp"] = pd.to_datetime(
            out.pop("__bucket").to_numpy(dtype="int64"), unit="s", utc=True
        ).astype(schema.TIMESTAMP)
    if "cctp_version" in keys:
        out["cctp_version"] = out["cctp_version"].astype(schema.NULLABLE_INT)
    out["relayer"] = out["relayer"].astype(schema.STRING)
    out["mints"] = out["mints"].astype("int64")
    out["volume_raw"] = out["volume_raw"].astype("int64")
    out["median_relay_s"] = out["median_relay_s"].astype("float64")
    return out, span


def _span(out: pd.DataFrame) -> tuple[Any, Any]:
    first, last = out.pop("__first"), out.pop("__last")
    if out.empty or first.isna().all():
        return None, None
    return first.min(), last.max()


def integrator_groups(
    lf: nw.LazyFrame, by: str, zero_callers: Sequence[str], *, users: bool = False
) -> tuple[pd.DataFrame, tuple[Any, Any]]:
    """Per integrator (``message_sender`` or ``destination_caller``): the raw sums of
    :func:`.actors.integrators`, and the span of the burns.

    Columns ``integrator`` (null: no destination caller, or none given),
    ``transfers``, ``routes``, and exact base-unit sums ``volume_raw``,
    ``first_raw`` / ``second_raw`` (burned before / from the middle of the
    span), ``v1_raw`` / ``v2_raw``; ``end_users`` (distinct ``burn_tx_from``,
    null where none is known; all null unless ``users``); with ``users``,
    ``own_signed`` / ``other_signed`` (burns signed by the depositor itself /
    by another account).
    """
    burned = ~nw.col("burn_timestamp").is_null() & ~(
        nw.col("burn_tx_hash").is_null() & (nw.col("burn_block") == -1)
    )
    lf = lf.filter(burned)
    bounds = engines.collect(
        lf.select(lo=nw.col("burn_timestamp").min(), hi=nw.col("burn_timestamp").max())
    )
    if bounds.empty or pd.isna(bounds["lo"].iloc[0]):
        out = pd.DataFrame({c: pd.Series([], dtype="int64") for c in _INTEGRATOR_SUMS})
        out["end_users"] = pd.Series([], dtype=schema.NULLABLE_INT)
        return out, (None, None)
    lo, hi = bounds["lo"].iloc[0], bounds["hi"].iloc[0]
    mid = lo.value + (hi.value - lo.value) // 2
    if lf.implementation is nw.Implementation.DUCKDB:
        # DuckDB keeps microseconds: the first microsecond at or after the middle
        mid = -(-mid // 1000) * 1000
    late = nw.col("burn_timestamp") >= nw.lit(pd.Timestamp(mid, tz="UTC"))
    amount = nw.col("amount_raw")
    version = nw.col("cctp_version")
    lf = lf.with_columns(
        _integrator_expr(by, zero_callers).alias("integrator"),
        (nw.col("source_domain").cast(nw.Int64) * (1 << 32) + nw.col("destination_domain")).alias(
            "__route"
        ),
        nw.when(late).then(0).otherwise(amount).alias("__first"),
        nw.when(late).then(amount).otherwise(0).alias("__second"),
        nw.when(version == 1).then(amount).otherwise(0).alias("__v1"),
        nw.when(version == 2).then(amount).otherwise(0).alias("__v2"),
    )
    if users:
        signer, sender = nw.col("burn_tx_from"), nw.col("message_sender")
        lf = lf.with_columns(
            nw.when(signer == sender).then(1).otherwise(0).cast(nw.Int64).alias("__own"),
            nw.when(signer != sender).then(1).otherwise(0).cast(nw.Int64).alias("__other"),
        )
    out = engines.collect(lf.group_by("integrator").agg(**_integrator_aggs(users=users)))
    out["integrator"] = out["integrator"].astype(schema.STRING)
    for col in _INTEGRATOR_SUMS[1:]:
        out[col] = out[col].to_numpy(dtype=np.int64)
    if users:
        known = out["__known"].to_numpy(dtype=np.int64)
        users_ = out["__users"].to_numpy(dtype=np.int64) - (known < out["transfers"].to_numpy())
        out["end_users"] = pd.arrays.IntegerArray(users_, known == 0)
        for col in ("own_signed", "other_signed"):
            out[col] = out[col].fillna(0).to_numpy(dtype=np.int64)
        return out[[*_INTEGRATOR_SUMS, "end_users", "own_signed", "other_signed"]], (lo, hi)
    out["end_users"] = pd.Series(pd.NA, index=out.index, dtype=schema.NULLABLE_INT)
    return out[[*_INTEGRATOR_SUMS, "end_users"]], (lo, hi)


_INTEGRATOR_SUMS = (
    "integrator", "transfers", "routes", "volume_raw", "first_raw", "second_raw", "v1_raw",
    "v2_raw",
)  # fmt: skip
"""The columns of :func:`integrator_groups` before ``end_users``."""


def _integrator_expr(by: str, zero_callers: Sequence[str]) -> nw.Expr:
    """What names the integrator: the column ``by``; a zero destination caller is null."""
    if by != "destination_caller":
        return nw.col(by)
    caller = nw.col("destination_caller")
    return (
        nw.when(~caller.str.to_lowercase().is_in(list(zero_callers)))
        .then(caller)
        .otherwise(nw.lit(None).cast(nw.String()))
    )


def _integrator_aggs(*, users: bool) -> dict[str, nw.Expr]:
    """The per-integrator aggregations, over the columns :func:`integrator_groups` adds."""
    aggs = {
        "transfers": nw.len(),
        "routes": nw.col("__route").n_unique(),
        "volume_raw": _exact_sum("amount_raw"),
        "first_raw": _exact_sum("__first"),
        "second_raw": _exact_sum("__second"),
        "v1_raw": _exact_sum("__v1"),
        "v2_raw": _exact_sum("__v2"),
    }
    if users:
        # n_unique counts null as a value: take it off where a sender is unknown
        aggs["__users"] = nw.col("burn_tx_from").n_unique()
        aggs["__known"] = nw.col("burn_tx_from").count()
        aggs["own_signed"] = _exact_sum("__own")
        aggs["other_signed"] = _exact_sum("__other")
    return aggs

# --- round trips on DuckDB: integer codes of the addresses, not their strings ----------------
#
# The round-trip rule needs every row (a sort of each end user's burns), so its inputs cross
# into Python per row; on DuckDB they cross as integers. DuckDB's ``hash`` of an address is
# its code, made exact by a check that no two distinct values share one (then the caller
# collects the strings instead). narwhals has no hash: this is the relation's own SQL, on
# the ledger's fixed column names.

_BURNED = (
    "coalesce(burn_timestamp IS NOT NULL"
    " AND NOT (burn_tx_hash IS NULL AND burn_block = -1), false)"
)
_WRAPPED = (
    "(coalesce(length(hook_data) > 2, false)"
    " OR coalesce(destination_caller = mint_recipient, false))"
)
END_USER = "coalesce(burn_tx_from, message_sender)"
"""The end user of a transfer in SQL: who signed the burn, else the depositor."""


def hashed_values(lf: nw.LazyFrame, expr: str) -> pa.Table | None:
    """The distinct non-null values of the SQL ``expr`` (a DuckDB ledger's address column)
    as ``h`` (their hash) and ``value``; None when two values share a hash."""
    rel = lf.to_native()
    # grouped by the value itself (the engine's own hash table), the hash read per group
    found = (
        rel.filter(f"({expr}) IS NOT NULL")
        .aggregate(f"{expr} AS value, hash({expr}) AS h", expr)
        .to_arrow_table()
    )
    if pc.count_distinct(found["h"]).as_py() < found.num_rows:
        return None
    return found


def signers(lf: nw.LazyFrame) -> int:
    """How many rows of a DuckDB ledger name the burn's signer (``burn_tx_from``)."""
    return int(lf.to_native().aggregate("count(burn_tx_from) AS n").fetchall()[0][0])


def round_trip_rows(lf: nw.LazyFrame, labelled: Sequence[str], *, users: bool) -> pa.Table:
    """Per row of a DuckDB ledger, in its order, what the rebalancing rules read: the route,
    ``amount_raw``, the burn's time (``stamp``, ns), ``burned``, ``wrapped``, ``same``
    (depositor is recipient), ``signed`` (a signer is known), the depositor's hash
    (``sender``), the end user's (``user``, only with ``users``), and where the depositor
    is one of the ``labelled`` addresses (null elsewhere): the depositor
    (``labelled_sender``) and ``mint_recipient``.

    The ledger's addresses are canonical, as the labels' are (:mod:`cctx_research.schema`):
    a labelled depositor is found by an exact test of the column on the rows a filter of
    the labelled addresses' hashes lets through (:func:`_maybe_labelled`), and only those
    rows carry strings."""
    rel = lf.to_native()
    sender = "CASE WHEN message_sender IS NULL THEN NULL ELSE hash(message_sender) END"
    maybe = _maybe_labelled(rel, labelled)
    columns = [
        "source_domain",
        "destination_domain",
        "amount_raw",
        "epoch_ns(burn_timestamp) AS stamp",
        f"{_BURNED} AS burned",
        f"{_WRAPPED} AS wrapped",
        "coalesce(message_sender = mint_recipient, false) AS same",
        "burn_tx_from IS NOT NULL AS signed",
        f"{sender} AS sender",
        f"CASE WHEN {maybe} THEN message_sender END AS labelled_sender",
        f"CASE WHEN {maybe} THEN mint_recipient END AS mint_recipient",
    ]
    if users:
        columns.append(f"CASE WHEN {END_USER} IS NULL THEN NULL ELSE hash({END_USER}) END AS user")
    got = rel.project(", ".join(columns)).to_arrow_table()
    if maybe == "false":
        return got
    # the filter's false positives dropped: the depositor's string is tested exactly
    found = got["labelled_sender"]
    hit = pc.fill_null(pc.is_in(found, value_set=pa.array(list(labelled), found.type)), False)
    for name in ("labelled_sender", "mint_recipient"):
        column = got[name]
        kept = pc.if_else(hit, column, pa.scalar(None, column.type))
        got = got.set_column(got.schema.get_field_index(name), name, kept)
    return got


def _maybe_labelled(rel: Any, labelled: Sequence[str]) -> str:
    """An SQL test of ``message_sender`` true for each ``labelled`` address (and for about
    one other address in sixty-four): a bit of a constant bit string, addressed by the
    address's hash.

    Not ``message_sender IN (...)``: DuckDB answers a list of more than a few values
    with a join, whose rows come back out of the scan's order, and the rows of
    :func:`round_trip_rows` must keep it (the transfer ids, asked for by a second
    query when legs tie, are matched to them by position)."""
    if not labelled:
        return "false"
    listed = ", ".join("'" + str(a).replace("'", "''") + "'" for a in labelled)
    hashes = rel.limit(1).project(f"[hash(a) FOR a IN [{listed}]] AS h").fetchall()
    if not hashes:  # no rows: nothing to label
        return "false"
    size = 1 << max(12, (64 * len(labelled)).bit_length())
    bits = bytearray(b"0" * size)
    for h in hashes[0][0]:
        bits[h % size] = ord("1")
    return f"get_bit('{bits.decode()}'::BITSTRING, (hash(message_sender) % {size})::INTEGER) = 1"
