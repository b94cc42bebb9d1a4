"""How well a ledger's burns are linked to their mints, per route and period.

A ledger's ``pairing`` column says how each row's burn and mint were joined
(:data:`cctx_research.schema.LEDGER_PAIRING`, and
:mod:`cctx_research.ingest.ledger.linking` for the rules). :func:`quality` counts
them, so a researcher sees at once where the data links well and where it
does not: many ``mint_only`` rows mean burns missing from the data (an
export that starts later, a chain not loaded); ``content_ambiguous`` rows
are identical transfers whose latency is uncertain.

Examples
--------
>>> import cctx_research as cctx
>>> from cctx_research.analysis import linking
>>> ledger = cctx.load("logs/", chain="base")  # doctest: +SKIP
>>> linking.quality(ledger, freq="1D")         # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

import narwhals.stable.v2 as nw
import numpy as np
import pandas as pd

from .. import schema
from . import _ledger, engines

__all__ = ["COUNTS", "quality"]

COUNTS: tuple[str, ...] = (
    "burns",
    "mints",
    "exact",
    "attested",
    "content",
    "content_ambiguous",
    "source",
    "pending",
    "unpaired",
    "mint_only",
    "unknown",
    "linked",
    "ambiguous",
)
"""The count columns of :func:`quality`, then ``link_rate``."""


def _check(ledger: Any) -> pd.DataFrame:
    if not isinstance(ledger, pd.DataFrame):
        raise TypeError(
            "ledger must be a pandas DataFrame of kind 'ledger' (cctx_research.load(...)), "
            f"got {type(ledger).__name__}"
        )
    if "pairing" not in ledger.columns and "timestamp" in ledger.columns:
        raise ValueError(
            "quality needs a ledger (both sides of each transfer, with its 'pairing'): "
            "this looks like a 'transfers' frame; pass the frame cctx_research.load(...) returns"
        )
    frame = ledger
    if any(c not in frame.columns for c in schema.optional_columns("ledger")):
        frame = schema.complete(frame.copy(deep=False), "ledger")
    return schema.validate(frame, "ledger")


def quality(ledger: pd.DataFrame, *, freq: str | None = "1D") -> pd.DataFrame:
    """Burns, mints and links per route and period.

    Parameters
    ----------
    ledger : pandas.DataFrame
        Kind ``"ledger"`` (:func:`cctx_research.load`). Rows whose ledger
        does not say how they were paired (``pairing`` null: the synthetic
        sample, a ``transfers`` file) count as ``unknown``.
    freq : str or None, default "1D"
        Period length (a pandas offset alias: ``"1h"``, ``"1D"``, ``"7D"``);
        a row falls in the period of its burn time, else its mint time.
        ``None``: one row per route over the whole ledger.

    Returns
    -------
    pandas.DataFrame
        One row per route (and period, column ``timestamp``, UTC), with
        :data:`COUNTS`: ``burns`` (rows with a burn side), ``mints`` (with a
        mint side), one column per ``pairing`` value, ``linked`` (every
        kind of link), ``ambiguous`` (``content_ambiguous`` plus
        ``unpaired``), and ``link_rate``: the share of the mints in the data
        whose burn is linked (NaN without mints). Pending burns do not lower
        it: a recent burn is rightly unminted.

    Raises
    ------
    TypeError, ValueError
        If ``ledger`` is not a ledger frame, or ``freq`` is not an offset alias.

    Examples
    --------
    >>> import pandas as pd
    >>> from cctx_research import schema
    >>> t = pd.Timestamp("2026-11-01", tz="UTC")
    >>> ledger = schema.empty("ledger").reindex(range(3))
    >>> ledger = ledger.assign(transfer_id=["a", "b", "c"], source_domain=0,
    ...     destination_domain=6, amount_raw=1, burn_block=-1, mint_block=-1,
    ...     burn_timestamp=[t, t, pd.NaT], mint_timestamp=[t, pd.NaT, t],
    ...     burn_tx_hash=["0x1", "0x2", None], mint_tx_hash=["0x3", None, "0x4"],
    ...     pairing=["content", "pending", "mint_only"])
    >>> ledger = schema.complete(ledger.astype(schema.dtypes("ledger")), "ledger")
    >>> row = quality(ledger, freq=None).iloc[0]
    >>> int(row.burns), int(row.mints), int(row.linked), float(row.link_rate)
    (2, 2, 1, 0.5)
    """
    if freq is not None:
        if not isinstance(freq, str):
            raise TypeError(f"freq must be an offset alias such as '1D', or None, got {freq!r}")
        try:
            pd.tseries.frequencies.to_offset(freq)
        except ValueError as exc:
            raise ValueError(
                f"freq={freq!r} is not a pandas offset alias; pass '1h', '1D', '7D' or None"
            ) from exc
    if engines.is_pandas(ledger) or not engines.recognised(ledger):
        rows, keys = _rows(_check(ledger), freq)
    else:
        rows, keys = _engine_rows(ledger, freq)
    kinds = [c for c in COUNTS if c in schema.LEDGER_PAIRING or c == "unknown"]
    dummies = pd.get_dummies(rows["pairing"]).reindex(columns=kinds, fill_value=0)
    dummies = dummies.astype(np.int64).mul(rows["n"].to_numpy(dtype=np.int64), axis=0)
    rows = pd.concat([rows[[*keys, "burns", "mints"]], dummies], axis=1)
    out = rows.groupby(keys, observed=True, sort=True, dropna=False).sum()
    out["linked"] = out[list(schema.LINKED)].sum(axis=1)
    out["ambiguous"] = out["content_ambiguous"] + out["unpaired"]
    out = out[list(COUNTS)].astype(np.int64)
    mints = out["mints"].to_numpy(dtype="float64")
    with np.errstate(invalid="ignore", divide="ignore"):
        out["link_rate"] = np.where(mints > 0, out["linked"] / mints, np.nan)
    return out.reset_index()


def _rows(frame: pd.DataFrame, freq: str | None) -> tuple[pd.DataFrame, list[str]]:
    """One row per transfer: its route (and period), pairing, burn and mint counts."""
    pairing = frame["pairing"].astype(object).where(frame["pairing"].notna(), "unknown")
    rows = pd.DataFrame(_ledger.routes(frame), index=frame.index)
    rows["pairing"] = pairing.to_numpy()
    burn = frame["burn_tx_hash"].notna() | frame["burn_timestamp"].notna()
    mint = frame["mint_tx_hash"].notna() | frame["mint_timestamp"].notna()
    rows["burns"] = burn.to_numpy(dtype=np.int64)
    rows["mints"] = mint.to_numpy(dtype=np.int64)
    rows["n"] = np.ones(len(rows), dtype=np.int64)
    keys = list(_ledger.ROUTE)
    if freq is not None:
        when = frame["burn_timestamp"].fillna(frame["mint_timestamp"])
        rows["timestamp"] = when.dt.floor(freq) if len(when) else when
        keys = ["timestamp", *keys]
    return rows, keys


def _engine_rows(data: Any, freq: str | None) -> tuple[pd.DataFrame, list[str]]:
    """:func:`_rows` of an engine's frame, counted in the engine: one row per route,
    pairing and side (and period), ``n`` the transfers it stands for."""
    seconds = None if freq is None else engines.bucket_seconds(freq)
    if freq is not None and seconds is None:
        raise ValueError(
            f"freq={freq!r} has no fixed length; on {engines.SUPPORTED.split(', ', 1)[1]} "
            "pass a fixed one such as '1h', '1D' or '7D', or None"
        )
    need = ["source_domain", "destination_domain", "burn_tx_hash", "burn_timestamp",
            "mint_tx_hash", "mint_timestamp"]  # fmt: skip
    lf = engines.lazy(data, "ledger", columns=need)
    if "pairing" not in lf.collect_schema().names():
        lf = lf.with_columns(nw.lit(None).cast(nw.String()).alias("pairing"))
    sides = {
        "__burns": ~nw.col("burn_tx_hash").is_null() | ~nw.col("burn_timestamp").is_null(),
        "__mints": ~nw.col("mint_tx_hash").is_null() | ~nw.col("mint_timestamp").is_null(),
    }
    lf = lf.with_columns(
        *(flag.cast(nw.Int64).alias(name) for name, flag in sides.items()),
        nw.col("pairing").fill_null("unknown").alias("__pairing"),
    )
    by = ["source_domain", "destination_domain", "__pairing", "__burns", "__mints"]
    if seconds is not None:
        lf = engines.with_epoch_ns(lf, ["burn_timestamp", "mint_timestamp"])
        when = nw.coalesce("__burn_timestamp_ns", "__mint_timestamp_ns")
        lf = lf.with_columns((when // (seconds * 10**9) * seconds).alias("__bucket"))
        by.append("__bucket")
    counted = engines.collect(lf.group_by(by).agg(n=nw.len()))
    rows = pd.DataFrame(_ledger.routes(counted))
    rows["pairing"] = counted["__pairing"].astype(object).to_numpy()
    rows["burns"] = counted["__burns"].to_numpy(dtype=np.int64) * counted["n"].to_numpy()
    rows["mints"] = counted["__mints"].to_numpy(dtype=np.int64) * counted["n"].to_numpy()
    rows["n"] = counted["n"].to_numpy(dtype=np.int64)
    keys = list(_ledger.ROUTE)
    if seconds is not None:
        stamps = pd.to_datetime(counted["__bucket"].to_numpy(dtype=np.int64), unit="s", utc=True)
        rows["timestamp"] = stamps.astype(schema.TIMESTAMP)
        keys = ["timestamp", *keys]
    return rows, keys
