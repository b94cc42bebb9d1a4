"""Plots of volumes over time, ticket sizes, seasonality and USDC in flight.

They draw the results of :mod:`cctx_research.analysis.volumes`.

Examples
--------
>>> from cctx_research import plots
>>> ax = plots.plot_volume(transfers, kind="area")  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from .. import arguments, schema
from ..analysis import inputs, pending, volumes
from ..analysis.results import result_info, span_of
from . import _axes

__all__ = ["plot_in_flight", "plot_seasonality", "plot_size_distribution", "plot_volume"]

_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def _group_column(frame: pd.DataFrame) -> str | None:
    for column in ("corridor", "source_chain", "destination_chain"):
        if column in frame.columns:
            return column
    return None


def plot_volume(
    data: pd.DataFrame,
    *,
    ax: Axes | None = None,
    value: str = "volume",
    kind: str = "line",
    top: int | None = 8,
    title: str | None = None,
) -> Axes:
    """Volume (or count) over time, as lines or stacked areas per group.

    Each bucket's total is drawn as a step across its bucket, from its start
    to its end. A first or last bucket only partly inside the span the data
    covers (a window that starts or ends mid-day, with daily buckets) holds
    less than a whole bucket's activity; its step is drawn under a light
    hatched band spanning exactly that bucket, with a legend entry, so that
    it does not read as a drop.
    The span is the one the transfers' provenance records (what
    ``client.mints(start, end)`` and the report's frames carry); without
    one, no bucket is marked.

    Parameters
    ----------
    data : pandas.DataFrame
        Output of :func:`cctx_research.analysis.volumes.timeseries`, or a
        ``"transfers"`` frame (daily totals).
    ax : matplotlib.axes.Axes, optional
    value : {"volume", "count"}, default "volume"
    kind : {"line", "area"}, default "line"
        One line per group, or stacked areas.
    top : int or None, default 8
        With groups, draw the ``top`` largest and merge the rest into
        "other"; None draws every group.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        Step lines (``ax.lines``; one point per bucket start, then the last
        bucket's end) or stacked areas (``ax.collections``), one per group
        drawn; one hatched band (``ax.patches``) per run of partial buckets.

    Examples
    --------
    >>> plot_volume(volumes.timeseries(transfers, by="source_chain"), kind="area")  # doctest: +SKIP
    """
    arguments.choice("value", value, ["volume", "count"])
    arguments.choice("kind", kind, ["line", "area"])
    top = arguments.positive_int("top", top, allow_none=True)
    if inputs.is_transfers(data):
        data = volumes.timeseries(data)
    data = _axes.require_frame(
        data, "plot_volume", ["timestamp", value], "volumes.timeseries(...) output"
    )
    ax = _axes.get_axes(ax)
    base = "CCTP transfer volume" if value == "volume" else "CCTP transfers"
    freq = result_info(data).freq
    if freq:
        base += f" per {freq}"
    span = result_info(data).span
    if span == (None, None):
        span = span_of(data["timestamp"])
    _axes.set_title(ax, base, span, title)
    ax.set_xlabel("Time (UTC)")
    ax.set_ylabel(_axes.value_label(value))
    if data.empty:
        return _axes.no_data(ax)
    group = _group_column(data)
    if group is None:
        wide = data.groupby("timestamp")[[value]].sum()
        labels = ["all chains"]
    else:
        wide = data.pivot_table(
            index="timestamp", columns=group, values=value, aggfunc="sum", observed=True
        )
        wide = wide[wide.sum().sort_values(ascending=False, kind="stable").index]
        if top is not None and wide.shape[1] > top:
            rest = wide.iloc[:, top:].sum(axis=1)
            wide = wide.iloc[:, :top].copy()
            wide["other"] = rest
        text = _axes.corridor_text if group == "corridor" else _axes.chain_text
        labels = [c if c == "other" else text(c) for c in wide.columns]
    info = result_info(data)
    x = _axes.naive_utc(wide.index)
    ends = _axes.bucket_ends(wide.index, info.freq)
    # each bucket's total drawn across the bucket, [start, end): the last step ends where
    # its bucket does, and a partial bucket's hatch covers its step exactly
    edges = np.append(x, ends[-1])
    values = wide.to_numpy(dtype=float)
    values = np.vstack([values, values[-1:]])
    if kind == "area":
        ax.stackplot(edges, values.T, labels=labels, alpha=0.85, step="post")
    else:
        for i, label in enumerate(labels):
            ax.plot(edges, values[:, i], label=label, drawstyle="steps-post")
    partial = _axes.partial_buckets(wide.index, info.freq, info.covered)
    marked = _axes.mark_partial(ax, x, ends, partial)
    if group is not None or marked is not None:
        handles, _ = ax.get_legend_handles_labels()
        _axes.legend_outside(ax, handles + ([marked] if marked is not None else []))
    ax.set_ylim(bottom=0)
    _axes.compact_axis(ax.yaxis)
    _axes.date_axis(ax)
    return ax


PARTIAL_LABEL = _axes.PARTIAL_LABEL
"""The legend entry of the hatched band over a bucket only partly inside the data's span."""

PARTIAL_SHARE = _axes.PARTIAL_SHARE
"""A bucket with less than this share of its time inside the data's span is partial."""


def plot_size_distribution(
    data: Any,
    *,
    ax: Axes | None = None,
    bins: int = 50,
    weights: str = "count",
    title: str | None = None,
) -> Axes:
    """Distribution of transfer amounts on a log x axis, with the size classes marked.

    Parameters
    ----------
    data : pandas.DataFrame, SizeDistribution or array-like
        A ``"transfers"`` frame or amounts in USDC (drawn as a histogram
        with log-spaced bins), or the output of
        :func:`cctx_research.analysis.volumes.size_buckets` (one bar per
        size class, spanning the class on the log axis; the dust class is
        drawn from 0.01 USDC and the whale class up to 10x its lower bound).
    ax : matplotlib.axes.Axes, optional
    bins : int, default 50
        Number of log-spaced bins (histogram only).
    weights : {"count", "volume"}, default "count"
        Height = number of transfers, or USDC volume in the bin.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        Bars (``ax.patches``), a dashed line at each class threshold of
        :data:`cctx_research.analysis.volumes.SIZE_CLASSES`, log x axis.

    Examples
    --------
    >>> plot_size_distribution(transfers, weights="volume")  # doctest: +SKIP
    >>> plot_size_distribution(volumes.size_buckets(transfers))  # doctest: +SKIP
    """
    arguments.choice("weights", weights, ["count", "volume"])
    arguments.positive_int("bins", bins)
    classes, amount, span, empty = _sizes_of(data)
    ax = _axes.get_axes(ax)
    _axes.set_title(ax, "Transfer sizes", span, title)
    ax.set_xscale("log")
    ax.set_xlabel(f"Transfer amount ({_axes.USDC}, log scale)")
    ax.set_ylabel("Transfers" if weights == "count" else f"Volume ({_axes.USDC})")
    if empty:
        return _axes.no_data(ax)
    if classes is not None:
        _class_bars(ax, classes, weights)
    else:
        _amount_histogram(ax, amount, weights, bins)
    _mark_size_classes(ax)
    _axes.compact_axis(ax.xaxis)
    _axes.compact_axis(ax.yaxis)
    return ax


def _sizes_of(data: Any) -> tuple[pd.DataFrame | None, np.ndarray, Any, bool]:
    """(size classes or None, positive amounts, span, empty) of what the plot was given."""
    if isinstance(data, volumes.SizeDistribution):
        return data.classes, np.zeros(0), data.span, data.count == 0
    if isinstance(data, pd.DataFrame):
        frame = schema.validate(data, "transfers")
        amount = frame["amount"].to_numpy(dtype=float, na_value=np.nan)
        span = span_of(frame["timestamp"])
    else:
        try:
            amount = np.asarray(data, dtype=float)
        except (TypeError, ValueError):
            amount = np.empty((0, 0))
        if amount.ndim != 1:
            raise TypeError(
                "plot_size_distribution expects a transfers frame, volumes.size_buckets(...) "
                f"output or a 1-d array of amounts, got {type(data).__name__}"
            )
        span = None
    amount = amount[np.isfinite(amount) & (amount > 0)]
    return None, amount, span, amount.size == 0


def _class_bars(ax: Axes, classes: pd.DataFrame, weights: str) -> None:
    """One bar per size class, spanning it on the log axis (dust from 0.01, whale to 10x)."""
    lower = classes["lower"].to_numpy(dtype=float).clip(min=0.01)
    upper = classes["upper"].to_numpy(dtype=float)
    upper = np.where(np.isfinite(upper), upper, lower * 10)
    ax.bar(
        lower,
        classes[weights].to_numpy(dtype=float),
        width=upper - lower,
        align="edge",
        color="#2775ca",
        alpha=0.85,
        edgecolor="white",
    )


def _amount_histogram(ax: Axes, amount: np.ndarray, weights: str, bins: int) -> None:
    """A histogram of the amounts in ``bins`` log-spaced bins."""
    lo, hi = amount.min(), amount.max()
    if lo == hi:
        lo, hi = lo / 1.5, hi * 1.5
    edges = np.logspace(np.log10(lo), np.log10(hi), bins + 1)
    ax.hist(
        amount,
        bins=edges,
        weights=amount if weights == "volume" else None,
        color="#2775ca",
        alpha=0.85,
    )


def _mark_size_classes(ax: Axes) -> None:
    """A dashed line, with the class's name, at each size class's lower bound."""
    for name, lower_bound, _upper in volumes.SIZE_CLASSES[1:]:
        ax.axvline(lower_bound, color="0.4", linestyle="--", linewidth=0.8)
        ax.text(
            lower_bound,
            1.0,
            f" {name}",
            transform=ax.get_xaxis_transform(),
            fontsize="x-small",
            va="top",
            color="0.3",
        )

def plot_seasonality(
    data: pd.DataFrame,
    *,
    ax: Axes | None = None,
    values: str = "count",
    cmap: str = "viridis",
    title: str | None = None,
) -> Axes:
    """Heatmap of activity by weekday x hour of day (UTC): the mean per day.

    Each cell is the total of its weekday-hour divided by how many times
    the data's span holds it (``count_per_day`` or ``volume_per_day`` of
    :func:`~cctx_research.analysis.volumes.seasonality`), so a weekday the
    window holds five times does not look busier than one it holds four
    times. The weekday labels say how many of each the span holds
    (``"Mon (5)"``); a weekday-hour it does not hold is left blank.

    Parameters
    ----------
    data : pandas.DataFrame
        Output of :func:`cctx_research.analysis.volumes.seasonality`, or a
        ``"transfers"`` frame.
    ax : matplotlib.axes.Axes, optional
    values : {"count", "volume"}, default "count"
        Transfers or USDC volume, per day.
    cmap : str, default "viridis"
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        A 7 x 24 image of the means per day, with a colorbar.

    Examples
    --------
    >>> plot_seasonality(transfers, values="volume")  # doctest: +SKIP
    """
    arguments.choice("values", values, ["count", "volume"])
    if inputs.is_transfers(data):
        data = volumes.seasonality(data)
    mean = f"{values}_per_day"
    data = _axes.require_frame(
        data,
        "plot_seasonality",
        ["weekday", "hour", "days", values, mean],
        "volumes.seasonality(...) output",
    )
    ax = _axes.get_axes(ax)
    _axes.set_title(ax, "Activity by weekday and hour, mean per day", result_info(data).span, title)
    ax.set_xlabel("Hour of day (UTC)")
    ax.set_ylabel("Day of week (UTC; days in the span)")
    if data.empty or not data[values].to_numpy(dtype=float).any():
        return _axes.no_data(ax)
    weekday = data["weekday"].to_numpy(dtype=int)
    grid = np.full((7, 24), np.nan)
    grid[weekday, data["hour"].to_numpy(dtype=int)] = data[mean].to_numpy(dtype=float)
    days = np.zeros(7, dtype=int)
    np.maximum.at(days, weekday, data["days"].to_numpy(dtype=int))
    image = ax.imshow(np.ma.masked_invalid(grid), aspect="auto", cmap=cmap)
    ax.set_yticks(range(7), [f"{name} ({n})" for name, n in zip(_WEEKDAYS, days, strict=True)])
    ax.set_xticks(range(0, 24, 3))
    label = "Mean volume per day (USDC)" if values == "volume" else "Mean transfers per day (count)"
    bar = ax.figure.colorbar(image, ax=ax, label=label)
    _axes.compact_axis(bar.long_axis)
    return ax


def plot_in_flight(data: pd.DataFrame, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """USDC burned but not yet minted, over time: pending apart from never minted.

    From a ledger (or :func:`cctx_research.analysis.pending.timeseries`):
    two lines, what is *pending* (younger than ``factor`` times the median
    latency of transfers like it: on its way) and what is *never minted*
    (older than that), split as :func:`~cctx_research.analysis.pending.stuck`
    splits them. Never-minted transfers pile up for as long as the data
    runs; on their own line they no longer make the pending line climb.

    From a ``"volume"`` frame (or
    :func:`cctx_research.analysis.volumes.in_flight`): one line, burns minus
    mints since the first bucket. It cannot tell the two apart, and includes
    every transfer never minted: it climbs while they accumulate.

    Parameters
    ----------
    data : pandas.DataFrame
        A ``"ledger"`` frame, the output of
        :func:`cctx_research.analysis.pending.timeseries`, a ``"volume"``
        frame, or the output of :func:`cctx_research.analysis.volumes.in_flight`.
    ax : matplotlib.axes.Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        Two lines (pending, never minted) at each moment, with a legend; or
        one step line at each bucket's end.

    Examples
    --------
    >>> plot_in_flight(ledger)  # doctest: +SKIP
    >>> history = client.volume_history(start="2024-06-01", end="2024-07-01")  # doctest: +SKIP
    >>> plot_in_flight(history)  # doctest: +SKIP
    """
    if inputs.is_ledger(data):
        data = pending.timeseries(data)
    if isinstance(data, pd.DataFrame) and {"pending", "never_minted"} <= set(data.columns):
        return _pending_lines(data, _axes.get_axes(ax), title)
    if isinstance(data, pd.DataFrame) and "in_flight" not in data.columns:
        data = volumes.in_flight(data)
    data = _axes.require_frame(
        data,
        "plot_in_flight",
        ["end", "in_flight"],
        "a ledger, pending.timeseries(...) or volumes.in_flight(...) output",
    )
    ax = _axes.get_axes(ax)
    _axes.set_title(ax, "USDC in flight", result_info(data).span, title)
    ax.set_xlabel("Time (UTC)")
    ax.set_ylabel(f"In flight ({_axes.USDC} burned, not yet minted)")
    if data.empty:
        return _axes.no_data(ax)
    ax.step(
        _axes.naive_utc(data["end"]),
        data["in_flight"].to_numpy(dtype=float),
        where="post",
        color="#2775ca",
    )
    ax.axhline(0, color="0.5", linewidth=0.8)
    _axes.compact_axis(ax.yaxis)
    _axes.date_axis(ax)
    return ax


def _pending_lines(data: pd.DataFrame, ax: Axes, title: str | None) -> Axes:
    info = result_info(data)
    span = (data["timestamp"].min(), data["timestamp"].max()) if len(data) else None
    _axes.set_title(ax, "USDC in flight", span, title)
    ax.set_xlabel("Time (UTC)")
    ax.set_ylabel(f"Burned, not yet minted ({_axes.USDC})")
    if data.empty:
        return _axes.no_data(ax)
    factor = f"{info.factor:g}" if info.factor else "N"
    x = _axes.naive_utc(data["timestamp"])
    ax.plot(
        x,
        data["pending"].to_numpy(dtype=float),
        color="#2775ca",
        label=f"pending: younger than {factor}x\nthe median latency of its route",
    )
    ax.plot(
        x,
        data["never_minted"].to_numpy(dtype=float),
        color="0.45",
        linestyle="--",
        label="never minted: older than that",
    )
    ax.set_ylim(bottom=0)
    _axes.compact_axis(ax.yaxis)
    _axes.date_axis(ax)
    _axes.legend_outside(ax)
    return ax
