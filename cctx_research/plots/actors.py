"""Who moves the money, drawn: relayers' shares over time."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from .. import arguments
from ..analysis import actors
from ..analysis.results import result_info
from . import _axes

__all__ = ["plot_relayer_shares"]


def _name(label: Any, address: Any) -> str:
    if isinstance(label, str) and label:
        return label
    if isinstance(address, str) and address:
        return address[:6] + "…" + address[-4:]
    return "not given"


def plot_relayer_shares(
    data: pd.DataFrame,
    *,
    ax: Axes | None = None,
    freq: str = "1D",
    top: int = 6,
    value: str = "volume_share",
    title: str | None = None,
) -> Axes:
    """The largest relayers' share of each time bucket, stacked, with the rest as "others".

    Parameters
    ----------
    data : pandas.DataFrame
        Output of :func:`cctx_research.analysis.actors.relayers` with
        ``freq`` (a ``timestamp`` column), or a ``"ledger"`` frame to
        compute it from (with ``freq``).
    ax : matplotlib.axes.Axes, optional
    freq : str, default "1D"
        The bucket, when ``data`` is a ledger.
    top : int, default 6
        Relayers drawn by name (the largest over the whole span); the others
        are one band.
    value : {"volume_share", "mint_share"}
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        One band per relayer, stacked to 100 % per bucket; the legend
        outside the data, on the right.
    """
    arguments.choice("value", value, ["volume_share", "mint_share"])
    top = arguments.positive_int("top", top)
    if isinstance(data, pd.DataFrame) and "timestamp" not in data.columns and (
        "mint_timestamp" in data.columns
    ):
        data = actors.relayers(data, freq=freq)
    data = _axes.require_frame(
        data, "plot_relayer_shares", ["timestamp", "relayer", value],
        "actors.relayers(ledger, freq=...) output or a ledger frame",
    )  # fmt: skip
    ax = _axes.get_axes(ax)
    _axes.set_title(ax, "Relayers' share of " + ("volume" if value == "volume_share" else
                                                  "mints"), result_info(data).span, title)
    if data.empty:
        return _axes.no_data(ax)
    label = data["relayer_label"] if "relayer_label" in data.columns else pd.Series(
        pd.NA, index=data.index)  # fmt: skip
    names = np.array([_name(a, b) for a, b in zip(label, data["relayer"], strict=True)],
                     dtype=object)  # fmt: skip
    weight = data["volume" if value == "volume_share" else "mints"].astype(float)
    largest = pd.Series(weight.to_numpy(), index=names).groupby(level=0).sum()
    keep = list(largest.sort_values(ascending=False).index[:top])
    names = np.where(np.isin(names, keep), names, "others")
    table = (
        pd.DataFrame({"timestamp": data["timestamp"].to_numpy(), "name": names,
                      "share": data[value].astype(float).to_numpy()})
        .groupby(["timestamp", "name"])["share"].sum().unstack(fill_value=0.0)
    )  # fmt: skip
    order = [k for k in keep if k in table.columns] + (
        ["others"] if "others" in table.columns else [])  # fmt: skip
    x = _axes.naive_utc(table.index)
    ax.stackplot(x, *(table[c].to_numpy() * 100 for c in order), labels=order, alpha=0.9)
    ax.set_ylim(0, 100)
    ax.set_ylabel("share of the bucket (%)")
    _axes.date_axis(ax)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize="small")
    return ax
