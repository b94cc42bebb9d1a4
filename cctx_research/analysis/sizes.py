"""Ticket sizes: how many transfers, and how much volume, per size class; amount quantiles.

Part of the volume family: :mod:`cctx_research.analysis.volumes` re-exports
:func:`size_buckets`, :class:`SizeDistribution` and :data:`SIZE_CLASSES`,
and documents them there. With ``dedupe=``, volume is counted once per
end-user movement (:mod:`.once`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from . import _common, once, results

__all__ = ["QUANTILES", "SIZE_CLASSES", "SizeDistribution", "size_buckets"]

SIZE_CLASSES: tuple[tuple[str, float, float], ...] = (
    ("dust", 0.0, 1.0),
    ("small", 1.0, 100.0),
    ("retail", 100.0, 1_000.0),
    ("mid", 1_000.0, 10_000.0),
    ("large", 10_000.0, 100_000.0),
    ("whale", 100_000.0, float("inf")),
)
"""Ticket-size classes as ``(name, lower, upper)`` in USDC; ``lower <= amount < upper``."""

QUANTILES: tuple[float, ...] = (0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99)


@dataclass(frozen=True, repr=False)
class SizeDistribution:
    """Ticket sizes of a set of transfers (see :func:`size_buckets`).

    Attributes
    ----------
    classes : pandas.DataFrame
        One row per class of :data:`SIZE_CLASSES`, in order: ``size_class``,
        ``lower``, ``upper`` (USDC), ``count``, ``volume`` (USDC),
        ``count_share`` and ``volume_share``.
    quantiles : pandas.Series
        Amount (USDC) at each quantile of :data:`QUANTILES` (index ``q``);
        NaN when there are no transfers.
    count : int
    volume : float
    mean : float
        NaN when there are no transfers.
    span : tuple
        First and last timestamp of the data, or ``(None, None)``.
    """

    classes: pd.DataFrame
    quantiles: pd.Series
    count: int
    volume: float
    mean: float
    span: tuple[Any, Any] = field(default=(None, None))

    def __repr__(self) -> str:
        return (
            f"SizeDistribution(count={self.count}, volume={self.volume:,.2f} USDC, "
            f"median={self.quantiles.get(0.5, float('nan')):,.2f})\n"
            + self.classes.to_string(index=False)
        )

    def _repr_html_(self) -> str:
        return (
            f"<p><b>Ticket sizes</b>: {self.count:,} transfers, {self.volume:,.2f} USDC</p>"
            + self.classes.to_html(index=False)
            + self.quantiles.rename("amount (USDC)").to_frame().to_html()
        )


def size_buckets(transfers: pd.DataFrame, *, dedupe: Any = None) -> SizeDistribution:
    """Counts and volume per ticket-size class, and amount quantiles.

    Exact quantiles need every amount: given a Polars, DuckDB or Dask frame,
    this collects the ``amount`` and ``timestamp`` columns only.

    The classes (USDC, ``lower <= amount < upper``) are:

    ======  ==========  ==========
    class   lower       upper
    ======  ==========  ==========
    dust    0           1
    small   1           100
    retail  100         1,000
    mid     1,000       10,000
    large   10,000      100,000
    whale   100,000     (none)
    ======  ==========  ==========

    Parameters
    ----------
    transfers : pandas.DataFrame
        A canonical ``"transfers"`` frame.
    dedupe : DataFrame, optional
        Count each end-user movement once (see :func:`.volumes.timeseries`).

    Returns
    -------
    SizeDistribution
        ``classes`` has all six classes even when empty (zero counts);
        ``quantiles`` the amounts at the 1, 5, 10, 25, 50, 75, 90, 95 and
        99 % quantiles.

    Raises
    ------
    DataError
        If ``transfers`` does not follow the schema.

    Examples
    --------
    >>> size_buckets(transfers).classes  # doctest: +SKIP
    """
    transfers = once.transfers_once(transfers, dedupe)
    transfers = _common.transfers_frame(transfers, columns=["timestamp", "amount"])
    amount = transfers["amount"].to_numpy(dtype="float64", na_value=np.nan)
    amount = amount[~np.isnan(amount)]
    uppers = np.array([c[2] for c in SIZE_CLASSES[:-1]])
    idx = np.searchsorted(uppers, amount, side="right")
    k = len(SIZE_CLASSES)
    counts = np.bincount(idx, minlength=k).astype("int64")
    vols = np.bincount(idx, weights=amount, minlength=k).astype("float64")
    total_n, total_v = int(counts.sum()), float(vols.sum())
    names = [c[0] for c in SIZE_CLASSES]
    classes = pd.DataFrame(
        {
            "size_class": pd.Categorical(names, categories=names, ordered=True),
            "lower": np.array([c[1] for c in SIZE_CLASSES], dtype="float64"),
            "upper": np.array([c[2] for c in SIZE_CLASSES], dtype="float64"),
            "count": counts,
            "volume": vols,
            "count_share": counts / total_n if total_n else np.zeros(k),
            "volume_share": vols / total_v if total_v else np.zeros(k),
        }
    )
    qs = np.quantile(amount, QUANTILES) if len(amount) else np.full(len(QUANTILES), np.nan)
    quantiles = pd.Series(qs, index=pd.Index(QUANTILES, name="q"), name="amount", dtype="float64")
    return SizeDistribution(
        classes=classes,
        quantiles=quantiles,
        count=total_n,
        volume=total_v,
        mean=float(amount.mean()) if len(amount) else float("nan"),
        span=results.span_of(transfers["timestamp"]),
    )
