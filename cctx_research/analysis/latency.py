"""How long a transfer takes: burn to mint, per route, and over time.

Functions take a canonical ``"ledger"`` frame (see
:mod:`cctx_research.schema`): one row per transfer with its burn and its
mint. Latency is ``mint_timestamp - burn_timestamp`` in seconds, over the
completed transfers (those with a mint). A *route* is an ordered
``(source_chain, destination_chain)`` pair.

Transfers can be split by CCTP version and by *finality class*: a V2
transfer is ``"fast"`` when its ``min_finality_threshold`` is at most 1000
(attested at "confirmed") and ``"standard"`` above (attested at finality);
a V1 transfer is ``"standard"``, since V1 attestation always waits for the
source chain's finality; a transfer whose version and threshold are both
unknown is ``"unknown"``.

Data without burn times (a ``"transfers"`` frame from the interface, or a
ledger built from one) raises :class:`~cctx_research.errors.DataError`
naming what provides them. Results record the first and last burn time as
the ``span`` of their :func:`~.results.result_info` so that plots can title
with it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import schema
from . import _common, _ledger, ledger_lazy, results

__all__ = ["BY", "by_relayer", "by_route", "timeseries"]

BY: tuple[str, ...] = ("cctp_version", "finality")
"""What ``by`` may add to the route: the CCTP version, the finality class."""

_QUANTILES = (("p10_s", 0.1), ("median_s", 0.5), ("p90_s", 0.9))


def _completed(ledger: pd.DataFrame, keys: list[str], *, what: str) -> pd.DataFrame:
    """Route, group keys, burn time and latency of the completed transfers."""
    frame = _ledger.ledger_frame(ledger, what=what)
    done = _ledger.completed(frame)
    rows = _ledger.table(done, ["cctp_version", "burn_timestamp"])
    rows["latency_s"] = _ledger.latency_seconds(done)
    # identical V2 transfers linked in time order: their latency is uncertain, and counted
    rows["ambiguous"] = (done["pairing"] == "content_ambiguous").fillna(False).to_numpy(bool)
    rows.attrs.clear()
    results.describe(rows, span=_ledger.span(frame))
    return rows[[*_ledger.ROUTE, *keys, "burn_timestamp", "latency_s", "ambiguous"]]


def _stats(rows: pd.DataFrame, group: list[str]) -> pd.DataFrame:
    """count, median_s, p10_s and p90_s of ``latency_s`` per group."""
    groups = rows.groupby(group, observed=True, dropna=False, sort=True)
    grouped = groups["latency_s"]
    out = grouped.size().rename("count").to_frame()
    out["ambiguous"] = groups["ambiguous"].sum().astype("int64")
    qs = grouped.quantile([q for _, q in _QUANTILES])
    if len(qs):
        qs = qs.unstack(level=-1)
        for name, q in _QUANTILES:
            out[name] = qs[q].astype("float64")
    else:
        for name, _ in _QUANTILES:
            out[name] = pd.Series(dtype="float64")
    out = out.reset_index()
    out["count"] = out["count"].astype("int64")
    return out[[*group, "count", "median_s", "p10_s", "p90_s", "ambiguous"]]


def by_route(ledger: pd.DataFrame, *, by: str | list[str] | None = None) -> pd.DataFrame:
    """Burn-to-mint latency per route: count, median and the 10th / 90th percentiles.

    Parameters
    ----------
    ledger : pandas.DataFrame
        A canonical ``"ledger"`` frame (``cctx_research.load(...)``,
        ``cctx_research.load_sample()``); the V2 columns may be missing.
    by : {None, "cctp_version", "finality"} or a list of them
        Also split each route by CCTP version and/or finality class
        (``"fast"``, ``"standard"``, ``"unknown"``; see the module notes).

    Returns
    -------
    pandas.DataFrame
        One row per route (and group) with at least one completed transfer:
        ``source_chain``, ``destination_chain`` (chain categoricals), then
        ``cctp_version`` (Int64) and/or ``finality`` (categorical) when
        asked, ``count`` (completed transfers, int64), ``median_s``,
        ``p10_s`` and ``p90_s`` (seconds, float64; linear interpolation
        between transfers), and ``ambiguous``: how many of the counted
        transfers were linked among identical ones (``pairing``
        ``"content_ambiguous"``), whose latency is uncertain. Sorted by
        route in registry order, then group. Pending transfers are left out
        (see :mod:`.pending`). On the bundled sample the ``"fast"`` class
        counts exactly the planted Fast Transfers minted by its clock
        (:func:`cctx_research.service.sample.truth`).

    Raises
    ------
    DataError
        If the frame does not follow the ledger schema, or carries no burn
        times (a ``"transfers"`` frame).
    TypeError, ValueError
        If ``ledger`` is not a frame or ``by`` names something else.

    Examples
    --------
    >>> import cctx_research as cctx
    >>> ledger = cctx.load_sample(as_of="2024-07-01", days=1)
    >>> table = by_route(ledger)
    >>> list(table.columns)
    ['source_chain', 'destination_chain', 'count', 'median_s', 'p10_s', 'p90_s', 'ambiguous']
    >>> row = table.set_index(["source_chain", "destination_chain"]).loc[("ethereum", "base")]
    >>> bool(600 < row["median_s"] < 1800)
    True
    """
    keys = _ledger.by_keys(by, BY)
    if ledger_lazy.handles(ledger):  # grouped in the engine: only the table comes back
        return ledger_lazy.by_route(ledger, keys, what="latency.by_route")
    rows = _completed(ledger, keys, what="latency.by_route")
    out = _stats(rows, [*_ledger.ROUTE, *keys])
    out = _ledger.sort_groups(out, [*_ledger.ROUTE, *keys])
    return results.describe(out, span=results.result_info(rows).span, by=keys)


def by_relayer(ledger: pd.DataFrame, *, by: str | list[str] | None = "finality") -> pd.DataFrame:
    """Burn-to-mint latency per relayer (``MessageReceived``'s caller), by finality class.

    A fast transfer is attested in seconds and a standard one waits for the
    source chain's finality, so a relayer's median over both says more of
    its mix than of its speed: by default each relayer's transfers are split
    by finality class, as :func:`by_route` splits routes.

    Parameters
    ----------
    ledger : pandas.DataFrame
        A canonical ``"ledger"`` frame; without a ``relayer`` column every
        transfer's relayer is null (one group).
    by : {"finality", "cctp_version"}, a list of them, or None; default "finality"

    Returns
    -------
    pandas.DataFrame
        ``relayer`` (string, null where the data does not name it), the ``by``
        columns, ``count``, ``median_s``, ``p10_s``, ``p90_s`` and
        ``ambiguous``, as :func:`by_route`; sorted by relayer, then group.

    Raises
    ------
    DataError
        If the frame does not follow the ledger schema or has no burn times.
    TypeError, ValueError
        If ``ledger`` is not a frame or ``by`` names something else.

    Examples
    --------
    >>> import cctx_research as cctx
    >>> table = by_relayer(cctx.load_sample(as_of="2024-07-01", days=1))
    >>> list(table.columns)
    ['relayer', 'finality', 'count', 'median_s', 'p10_s', 'p90_s', 'ambiguous']
    >>> medians = table.pivot_table(index="relayer", columns="finality", values="median_s",
    ...                             observed=True).dropna()
    >>> bool((medians["fast"] < medians["standard"]).all())
    True
    """
    keys = _ledger.by_keys(by, BY)
    frame = _ledger.ledger_frame(ledger, what="latency.by_relayer")
    if "relayer" not in frame.columns:
        frame = schema.complete(frame.copy(deep=False), "ledger")
    done = frame.loc[_ledger.burn_known(frame) & frame["mint_timestamp"].notna().to_numpy()]
    rows = _ledger.table(done, ["cctp_version"])
    rows["relayer"] = done["relayer"].astype(schema.STRING)
    rows["latency_s"] = _ledger.latency_seconds(done)
    rows["ambiguous"] = (done["pairing"] == "content_ambiguous").fillna(False).to_numpy(bool)
    out = _stats(rows, ["relayer", *keys])
    out = out.sort_values(["relayer", *keys], kind="stable").reset_index(drop=True)
    out.attrs.clear()
    return results.describe(out, span=_ledger.span(frame), by=keys)


def timeseries(
    ledger: pd.DataFrame, *, freq: str = "1D", by: str | list[str] | None = None
) -> pd.DataFrame:
    """Median burn-to-mint latency per route and time bucket.

    A transfer counts in the bucket of its burn.

    Parameters
    ----------
    ledger : pandas.DataFrame
        A canonical ``"ledger"`` frame.
    freq : str, default "1D"
        A pandas frequency (``"1h"``, ``"1D"``, ``"7D"``, ``"W-MON"``).
        Buckets are half-open ``[start, start + freq)``, labelled by their
        start; fixed-length buckets start at multiples of their length since
        1970-01-01 UTC, like :func:`cctx_research.analysis.volumes.timeseries`.
    by : {None, "cctp_version", "finality"} or a list of them
        Also split each route, as in :func:`by_route`.

    Returns
    -------
    pandas.DataFrame
        Columns ``timestamp`` (bucket start, UTC), ``source_chain``,
        ``destination_chain``, the ``by`` columns, ``count`` (completed
        transfers burned in the bucket) and ``median_s`` (NaN where the
        count is 0). Every bucket from the first to the last is present for
        every route (and group) seen. Sorted by time, then route.

    Raises
    ------
    DataError
        If the frame does not follow the ledger schema or has no burn times.
    TypeError, ValueError
        For a bad ``freq`` or ``by``.

    Examples
    --------
    >>> import cctx_research as cctx
    >>> daily = timeseries(cctx.load_sample(as_of="2024-07-01", days=2), freq="1D")
    >>> daily["timestamp"].nunique()
    2
    """
    _common.frequency(freq)
    keys = _ledger.by_keys(by, BY)
    rows = _completed(ledger, keys, what="latency.timeseries")
    group = [*_ledger.ROUTE, *keys]
    grouper = _common.time_grouper(freq)
    bucketed = rows.rename(columns={"burn_timestamp": "timestamp"})
    grouped = bucketed.groupby([grouper, *group], observed=True, dropna=False)["latency_s"]
    agg = pd.DataFrame({"count": grouped.size(), "median_s": grouped.median()}).reset_index()
    if len(agg):
        buckets = pd.date_range(
            agg["timestamp"].min(), agg["timestamp"].max(), freq=freq, name="timestamp"
        )
    else:
        buckets = pd.DatetimeIndex([], tz="UTC", name="timestamp")
    groups = agg[group].drop_duplicates().reset_index(drop=True)
    grid = pd.DataFrame({"timestamp": np.repeat(buckets, len(groups))})
    for col in group:
        grid[col] = np.tile(groups[col].to_numpy(), len(buckets)) if len(groups) else []
        grid[col] = grid[col].astype(groups[col].dtype)
    out = grid.merge(agg, on=["timestamp", *group], how="left")
    out["timestamp"] = out["timestamp"].astype(schema.TIMESTAMP)
    out["count"] = out["count"].fillna(0).astype("int64")
    out["median_s"] = out["median_s"].astype("float64")
    out = out[["timestamp", *group, "count", "median_s"]]
    out = _ledger.sort_groups(out, ["timestamp", *group])
    out.attrs.clear()
    return results.describe(out, span=results.result_info(rows).span, freq=freq, by=keys)
