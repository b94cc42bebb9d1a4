"""Plots of address-level analyses: concentration and one address's activity.

They draw the results of :mod:`cctx_research.analysis.addresses`.

Examples
--------
>>> from cctx_research import plots
>>> ax = plots.plot_lorenz(transfers, role="sender")  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.axes import Axes

from .. import arguments
from ..analysis import addresses, inputs
from ..analysis.results import result_info, span_of
from . import _axes

__all__ = ["plot_address_activity", "plot_lorenz"]


def plot_lorenz(
    data: Any,
    *,
    ax: Axes | None = None,
    role: str = "recipient",
    title: str | None = None,
) -> Axes:
    """Lorenz curve of volume per address, with the Gini coefficient.

    Parameters
    ----------
    data : Concentration, pandas.DataFrame or array-like
        A :class:`~cctx_research.analysis.addresses.Concentration`, a
        ``"transfers"`` frame (volume per ``role`` address), or the values
        themselves (USDC per address).
    ax : matplotlib.axes.Axes, optional
    role : {"recipient", "sender"}, default "recipient"
        For a transfers frame: whose volume.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        Two lines: the Lorenz curve and the line of equality.

    Examples
    --------
    >>> plot_lorenz(transfers, role="sender")  # doctest: +SKIP
    """
    arguments.choice("role", role, ["recipient", "sender"])
    span = None
    if isinstance(data, addresses.Concentration):
        conc = data
        span = data.span
    elif inputs.is_transfers(data):
        ranked = addresses.top(data, role=role, n=None)
        span = result_info(ranked).span
        conc = addresses.concentration(ranked["volume"])
    else:
        conc = addresses.concentration(data)
    ax = _axes.get_axes(ax)
    # the plot is narrow (square by design): the span goes on a second line
    base, text = f"Concentration of volume per {role}", _axes.span_text(span)
    _axes.set_title(ax, base, None, title if title is not None or not text else f"{base}\n{text}")
    ax.set_xlabel("Cumulative share of addresses (smallest first)")
    ax.set_ylabel(f"Cumulative share of volume ({_axes.USDC})")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.plot([0, 1], [0, 1], linestyle="--", color="0.5", label="equality")
    if conc.n == 0 or not np.isfinite(conc.gini):
        return _axes.no_data(ax)
    curve = conc.lorenz
    ax.plot(
        curve["population_share"].to_numpy(),
        curve["value_share"].to_numpy(),
        color="#2775ca",
        label=f"Lorenz curve (Gini {conc.gini:.3f})",
    )
    _axes.legend_outside(ax)
    return ax


def plot_address_activity(
    data: Any,
    *,
    ax: Axes | None = None,
    value: str = "volume",
    title: str | None = None,
) -> Axes:
    """Bars of what an address received per time bucket.

    Parameters
    ----------
    data : AddressProfile or pandas.DataFrame
        A profile from :func:`cctx_research.analysis.addresses.profile`, or
        its ``activity`` frame (``timestamp``, ``volume``, ``count``).
    ax : matplotlib.axes.Axes, optional
    value : {"volume", "count"}, default "volume"
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        One bar per bucket (``ax.patches``); a bucket only partly inside
        the span the data covers (today, while it lasts) under a hatched
        band spanning exactly that bucket, with a legend entry, as
        :func:`~cctx_research.plots.plot_volume` marks it.

    Examples
    --------
    >>> plot_address_activity(addresses.profile(address, transfers))  # doctest: +SKIP
    """
    arguments.choice("value", value, ["volume", "count"])
    if isinstance(data, addresses.AddressProfile):
        activity = data.activity
        addr = data.address
        base = f"Received by {addr[:6]}…{addr[-4:]}"
    else:
        activity = _axes.require_frame(
            data, "plot_address_activity", ["timestamp", value], "an AddressProfile"
        )
        base = "Received by address"
    ax = _axes.get_axes(ax)
    _axes.set_title(ax, base, span_of(activity["timestamp"]), title)
    ax.set_xlabel("Time (UTC)")
    ax.set_ylabel(f"Volume received ({_axes.USDC})" if value == "volume" else "Transfers received")
    if activity.empty:
        return _axes.no_data(ax)
    info = result_info(activity)
    x = _axes.naive_utc(activity["timestamp"])
    ends = _axes.bucket_ends(activity["timestamp"], info.freq)
    width = (ends - x) / np.timedelta64(1, "D") * 0.8
    ax.bar(x, activity[value].to_numpy(dtype=float), width=width, align="edge", color="#2775ca")
    partial = _axes.partial_buckets(activity["timestamp"], info.freq, info.covered)
    marked = _axes.mark_partial(ax, x, ends, partial)
    if marked is not None:
        _axes.legend_outside(ax, [marked])
    _axes.compact_axis(ax.yaxis)
    _axes.date_axis(ax)
    return ax
