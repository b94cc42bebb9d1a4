"""CCTP V2 per route: fast against standard transfers, fees, fee caps and hooks.

Functions take a canonical ``"ledger"`` frame and look at its V2 transfers
(``cctp_version == 2``); V1 transfers and rows whose V2 fields are null are
left out, so a V1-only ledger gives empty results. A V2 transfer is
``"fast"`` when its ``min_finality_threshold`` is at most 1000 and
``"standard"`` above (see :mod:`.latency`).

Fees are what the mint collected (``fee_raw``, the ``feeCollected`` of
``MintAndWithdraw``), in USDC and in basis points of the amount burned;
``max_fee_raw`` is the most the sender allowed (``maxFee`` of
``DepositForBurn``). Results record the first and last burn time as the
``span`` of their :func:`~.results.result_info`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import _ledger, ledger_lazy, results

__all__ = ["BY", "fast_share", "fee_caps", "fees", "hooks"]

BY: tuple[str, ...] = ("finality",)
"""What ``by`` may add to the route in :func:`fees` and :func:`fee_caps`."""

_BPS = 10_000


def _v2(ledger: pd.DataFrame, *, what: str, columns: list[str]) -> tuple[pd.DataFrame, tuple]:
    """Route, finality and ``columns`` of the V2 transfers, and the ledger's span."""
    frame = _ledger.ledger_frame(ledger, what=what)
    rows = frame.loc[(frame["cctp_version"] == 2).fillna(False).to_numpy(dtype=bool)]
    table = _ledger.table(rows, ["amount_raw", *columns])
    table["amount_raw"] = table["amount_raw"].astype("int64")
    table["amount"] = _ledger.amount(table["amount_raw"])
    return table, _ledger.span(frame)


def _finish(out: pd.DataFrame, keys: list[str], win: tuple) -> pd.DataFrame:
    out = _ledger.sort_groups(out, keys)
    out.attrs.clear()
    return results.describe(out, span=win)


def _share(part: pd.Series, whole: pd.Series) -> pd.Series:
    whole = whole.astype("float64")
    return (part / whole.where(whole > 0)).astype("float64")


def _flag_shares(
    table: pd.DataFrame, flag: np.ndarray, win: tuple, *, count: str, share: str, volume: str
) -> pd.DataFrame:
    """Per route: transfers and volume, the flagged ones' (columns ``count`` and
    ``volume``) and their shares (``share``, ``<volume>_share``)."""
    table = table.assign(
        flagged=flag.astype("int64"), flagged_amount=np.where(flag, table["amount"], 0.0)
    )
    out = (
        table.groupby(list(_ledger.ROUTE), observed=True, sort=True)
        .agg(
            count=("flagged", "size"),
            flagged_count=("flagged", "sum"),
            volume=("amount", "sum"),
            flagged_volume=("flagged_amount", "sum"),
        )
        .reset_index()
        .astype({"count": "int64", "flagged_count": "int64"})
        .astype({"volume": "float64", "flagged_volume": "float64"})
    )
    out.insert(4, share, _share(out["flagged_count"], out["count"]))
    out[f"{volume}_share"] = _share(out["flagged_volume"], out["volume"])
    out = out.rename(columns={"flagged_count": count, "flagged_volume": volume})
    return _finish(out, list(_ledger.ROUTE), win)


def fast_share(ledger: pd.DataFrame) -> pd.DataFrame:
    """Share of fast transfers per route, by count and by volume.

    Parameters
    ----------
    ledger : pandas.DataFrame
        A canonical ``"ledger"`` frame.

    Returns
    -------
    pandas.DataFrame
        One row per route with V2 transfers of known finality:
        ``source_chain``, ``destination_chain``, ``count`` (V2 transfers),
        ``fast_count``, ``fast_count_share``, ``volume`` and
        ``fast_volume`` (USDC), ``fast_volume_share``. Sorted by route. On
        the bundled sample the fast transfers are exactly those planted
        (:func:`cctx_research.service.sample.truth`).

    Raises
    ------
    DataError
        If the frame does not follow the ledger schema or has no burn times.
    TypeError
        If ``ledger`` is not a frame.

    Examples
    --------
    >>> import cctx_research as cctx
    >>> share = fast_share(cctx.load_sample(as_of="2024-07-01", days=1))
    >>> list(share.columns)  # doctest: +NORMALIZE_WHITESPACE
    ['source_chain', 'destination_chain', 'count', 'fast_count', 'fast_count_share',
     'volume', 'fast_volume', 'fast_volume_share']
    >>> bool(share["fast_count_share"].between(0, 1).all())
    True
    """
    if ledger_lazy.handles(ledger):  # grouped in the engine: only the table comes back
        return ledger_lazy.fast_share(ledger)
    table, win = _v2(ledger, what="v2.fast_share", columns=[])
    table = table.loc[(table["finality"] != "unknown").to_numpy()]
    fast = (table["finality"] == "fast").to_numpy()
    return _flag_shares(
        table, fast, win, count="fast_count", share="fast_count_share", volume="fast_volume"
    )


def fees(ledger: pd.DataFrame, *, by: str | list[str] | None = None) -> pd.DataFrame:
    """Fees collected per route: in USDC and in basis points of the volume.

    Parameters
    ----------
    ledger : pandas.DataFrame
        A canonical ``"ledger"`` frame.
    by : {None, "finality"}
        Also split each route by finality class.

    Returns
    -------
    pandas.DataFrame
        One row per route (and class) with minted V2 transfers whose fee is
        known: ``source_chain``, ``destination_chain``, ``finality`` when
        asked, ``count``, ``volume`` (USDC burned), ``fee`` (USDC),
        ``fee_raw`` (int64, exact), ``fee_bps`` (the fees over the volume,
        in basis points) and ``median_fee_bps`` (the median transfer's fee
        in basis points of its amount). Sorted by route. On the bundled
        sample the fees are exactly those planted on the transfers minted by
        its clock (:func:`cctx_research.service.sample.truth`).

    Raises
    ------
    DataError
        If the frame does not follow the ledger schema or has no burn times.
    TypeError, ValueError
        If ``ledger`` is not a frame or ``by`` is not one of the above.

    Examples
    --------
    >>> from cctx_research import schema
    >>> fees(schema.empty("ledger"), by="finality").columns[:3].tolist()
    ['source_chain', 'destination_chain', 'finality']
    """
    keys = [*_ledger.ROUTE, *_ledger.by_keys(by, BY)]
    if ledger_lazy.handles(ledger):
        return ledger_lazy.fees(ledger, _ledger.by_keys(by, BY))
    table, win = _v2(ledger, what="v2.fees", columns=["fee_raw"])
    table = table.loc[table["fee_raw"].notna().to_numpy()]
    table = table.assign(
        fee_raw=table["fee_raw"].astype("int64"),
        bps=table["fee_raw"].to_numpy(dtype="float64") / table["amount_raw"].to_numpy() * _BPS,
    )
    out = (
        table.groupby(keys, observed=True, sort=True)
        .agg(
            count=("fee_raw", "size"),
            volume_raw=("amount_raw", "sum"),
            fee_raw=("fee_raw", "sum"),
            median_fee_bps=("bps", "median"),
        )
        .reset_index()
    )
    out["count"] = out["count"].astype("int64")
    out["fee_raw"] = out["fee_raw"].astype("int64")
    volume_raw = out.pop("volume_raw").astype("int64")
    out.insert(len(keys) + 1, "volume", _ledger.amount(volume_raw))
    out.insert(len(keys) + 2, "fee", _ledger.amount(out["fee_raw"]))
    out.insert(len(keys) + 4, "fee_bps", _share(out["fee_raw"], volume_raw) * _BPS)
    out["median_fee_bps"] = out["median_fee_bps"].astype("float64")
    return _finish(out, keys, win)


def fee_caps(ledger: pd.DataFrame, *, by: str | list[str] | None = None) -> pd.DataFrame:
    """The fee taken against the most the sender allowed (``max_fee``), per route.

    Only minted V2 transfers with a positive ``max_fee_raw`` and a known fee
    count (with a zero cap the ratio means nothing).

    Parameters
    ----------
    ledger : pandas.DataFrame
        A canonical ``"ledger"`` frame.
    by : {None, "finality"}
        Also split each route by finality class.

    Returns
    -------
    pandas.DataFrame
        ``source_chain``, ``destination_chain``, ``finality`` when asked,
        ``count``, ``median_fee_ratio``, ``p90_fee_ratio`` (``fee_raw /
        max_fee_raw``: 1 means the whole cap was taken), ``at_cap_count``
        and ``at_cap_share`` (transfers whose fee reached the cap),
        ``median_max_fee_bps`` (the cap in basis points of the amount).
        Sorted by route.

    Raises
    ------
    DataError
        If the frame does not follow the ledger schema or has no burn times.
    TypeError, ValueError
        If ``ledger`` is not a frame or ``by`` is not one of the above.

    Examples
    --------
    >>> from cctx_research import schema
    >>> len(fee_caps(schema.empty("ledger")))
    0
    """
    keys = [*_ledger.ROUTE, *_ledger.by_keys(by, BY)]
    if ledger_lazy.handles(ledger):
        return ledger_lazy.fee_caps(ledger, _ledger.by_keys(by, BY))
    table, win = _v2(ledger, what="v2.fee_caps", columns=["fee_raw", "max_fee_raw"])
    keep = table["fee_raw"].notna() & (table["max_fee_raw"] > 0).fillna(False)
    table = table.loc[keep.to_numpy(dtype=bool)]
    fee = table["fee_raw"].to_numpy(dtype="float64")
    cap = table["max_fee_raw"].to_numpy(dtype="float64")
    table = table.assign(
        ratio=fee / cap,
        at_cap=(fee >= cap).astype("int64"),
        cap_bps=cap / table["amount_raw"].to_numpy() * _BPS,
    )
    grouped = table.groupby(keys, observed=True, sort=True)
    out = grouped.agg(
        count=("ratio", "size"),
        median_fee_ratio=("ratio", "median"),
        at_cap_count=("at_cap", "sum"),
        median_max_fee_bps=("cap_bps", "median"),
    )
    out.insert(2, "p90_fee_ratio", grouped["ratio"].quantile(0.9).astype("float64"))
    out = out.reset_index()
    out["count"] = out["count"].astype("int64")
    out["at_cap_count"] = out["at_cap_count"].astype("int64")
    out.insert(len(keys) + 4, "at_cap_share", _share(out["at_cap_count"], out["count"]))
    for col in ("median_fee_ratio", "median_max_fee_bps"):
        out[col] = out[col].astype("float64")
    return _finish(out, keys, win)


def hooks(ledger: pd.DataFrame) -> pd.DataFrame:
    """Share of V2 transfers that carry hook data, per route.

    A transfer has a hook when its ``hook_data`` is neither empty nor
    ``"0x"``; V2 transfers whose ``hook_data`` is null (unknown) are left
    out.

    Parameters
    ----------
    ledger : pandas.DataFrame
        A canonical ``"ledger"`` frame.

    Returns
    -------
    pandas.DataFrame
        ``source_chain``, ``destination_chain``, ``count``, ``hook_count``,
        ``hook_share``, ``volume`` and ``hook_volume`` (USDC),
        ``hook_volume_share``. Sorted by route.

    Raises
    ------
    DataError
        If the frame does not follow the ledger schema or has no burn times.
    TypeError
        If ``ledger`` is not a frame.

    Examples
    --------
    >>> from cctx_research import schema
    >>> hooks(schema.empty("ledger"))["hook_share"].dtype
    dtype('float64')
    """
    if ledger_lazy.handles(ledger):
        return ledger_lazy.hooks(ledger)
    table, win = _v2(ledger, what="v2.hooks", columns=["hook_data"])
    table = table.loc[table["hook_data"].notna().to_numpy()]
    data = table["hook_data"].astype(str).str.strip().str.lower()
    has = (~data.isin(["", "0x"])).to_numpy()
    return _flag_shares(
        table, has, win, count="hook_count", share="hook_share", volume="hook_volume"
    )
