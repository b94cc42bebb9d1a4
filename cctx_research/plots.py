"""Matplotlib plots of the analysis results.

Every ``plot_*`` function takes the data first (an analysis result, or a
canonical ``"transfers"`` frame it computes that result from), options
keyword-only, draws on ``ax`` (a new figure when ``ax`` is None) and returns
the :class:`~matplotlib.axes.Axes`. None of them calls ``plt.show()``.
Axes are labelled with units (USDC); titles carry the time window of the
data (override with ``title=``). Empty data gives an empty axes with a
"no data" note, never an error. Chains are labelled with
:func:`cctx_research.chains.chain_label` (``"Arbitrum One"``).
The plots of ledger analyses (:func:`plot_latency`, :func:`plot_stuck`,
:func:`plot_fast_share`) live in :mod:`cctx_research.plots_ledger` and are
re-exported here.

Examples
--------
>>> from cctx_research import plots
>>> ax = plots.plot_flow_matrix(transfers)  # doctest: +SKIP
>>> ax.figure.savefig("matrix.png")  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from ._plotting import USDC as _USDC
from ._plotting import axes as _axes
from ._plotting import chain_text as _chain_text
from ._plotting import compact as _compact
from ._plotting import corridor_text as _corridor_text
from ._plotting import date_axis as _date_axis
from ._plotting import is_transfers as _is_transfers
from ._plotting import naive_utc as _naive_utc
from ._plotting import no_data as _no_data
from ._plotting import require_frame as _require_frame
from ._plotting import set_title as _set_title
from ._plotting import value_label as _value_label
from .analysis import _common, addresses, flows, volumes
from .plots_ledger import plot_fast_share, plot_latency, plot_stuck

__all__ = [
    "plot_address_activity",
    "plot_fast_share",
    "plot_flow_graph",
    "plot_flow_matrix",
    "plot_in_flight",
    "plot_latency",
    "plot_lorenz",
    "plot_net_flows",
    "plot_seasonality",
    "plot_size_distribution",
    "plot_stuck",
    "plot_volume",
]


# ------------------------------------------------------------------- flows


def plot_flow_graph(
    data: nx.DiGraph | pd.DataFrame,
    *,
    ax: Axes | None = None,
    weight: str = "volume",
    title: str | None = None,
) -> Axes:
    """Chains in a circle, corridors as arrows whose width follows their volume.

    Parameters
    ----------
    data : networkx.DiGraph or pandas.DataFrame
        A graph from :func:`cctx_research.analysis.flows.graph`, or a
        ``"transfers"`` frame to build it from.
    ax : matplotlib.axes.Axes, optional
    weight : {"volume", "count"}, default "volume"
        Edge attribute that sets the arrow width.
    title : str, optional
        Replaces the default title (which names the window).

    Returns
    -------
    matplotlib.axes.Axes
        One arrow patch per corridor, one label per chain.

    Raises
    ------
    TypeError
        If ``data`` is neither a graph nor a transfers frame.
    ValueError
        For an unknown ``weight``.

    Examples
    --------
    >>> plot_flow_graph(transfers)  # doctest: +SKIP
    """
    _common.choice("weight", weight, ["volume", "count"])
    g = flows.graph(data) if isinstance(data, pd.DataFrame) else data
    if not isinstance(g, nx.DiGraph):
        raise TypeError(
            "plot_flow_graph expects flows.graph(...) output or a transfers frame, "
            f"got {type(data).__name__}"
        )
    ax = _axes(ax)
    _set_title(ax, "CCTP flows between chains", g.graph.get("window"), title)
    ax.set_axis_off()
    if g.number_of_nodes() == 0:
        return _no_data(ax)
    nodes = list(g)
    pos = nx.circular_layout(nodes) if len(nodes) > 1 else {nodes[0]: np.zeros(2)}
    throughput = np.array(
        [g.nodes[v].get("inflow", 0.0) + g.nodes[v].get("outflow", 0.0) for v in nodes]
        if weight == "volume"
        else [g.nodes[v].get("count_in", 0) + g.nodes[v].get("count_out", 0) for v in nodes],
        dtype=float,
    )
    top = throughput.max() if throughput.size and throughput.max() > 0 else 1.0
    sizes = 300 + 1700 * np.sqrt(throughput / top)
    nx.draw_networkx_nodes(
        g, pos, nodelist=nodes, node_size=sizes, node_color="#2775ca", alpha=0.85, ax=ax
    )
    edges = list(g.edges)
    if edges:
        values = np.array([float(g.edges[e].get(weight, 0.0)) for e in edges])
        biggest = values.max() if values.max() > 0 else 1.0
        widths = 0.5 + 7.5 * values / biggest
        nx.draw_networkx_edges(
            g,
            pos,
            edgelist=edges,
            width=widths,
            node_size=sizes.tolist(),
            arrows=True,
            arrowstyle="-|>",
            arrowsize=12,
            connectionstyle="arc3,rad=0.15",
            edge_color="0.35",
            alpha=0.7,
            ax=ax,
        )
    nx.draw_networkx_labels(g, pos, labels={v: _chain_text(v) for v in nodes}, font_size=9, ax=ax)
    unit = f"volume ({_USDC})" if weight == "volume" else "transfer count"
    ax.text(
        0.0,
        -0.02,
        f"arrow width ∝ corridor {unit}; node size ∝ chain throughput",
        transform=ax.transAxes,
        fontsize="small",
        color="0.4",
        va="top",
    )
    ax.margins(0.15)
    return ax


def plot_flow_matrix(
    data: pd.DataFrame,
    *,
    ax: Axes | None = None,
    values: str | None = None,
    annotate: bool = True,
    cmap: str = "Blues",
    title: str | None = None,
) -> Axes:
    """Annotated heatmap of the source x destination flow matrix.

    Parameters
    ----------
    data : pandas.DataFrame
        Output of :func:`cctx_research.analysis.flows.matrix`, or a
        ``"transfers"`` frame to compute it from.
    ax : matplotlib.axes.Axes, optional
    values : {"volume", "count"}, optional
        For a transfers frame, which matrix to compute (default
        ``"volume"``); for a matrix, taken from the matrix.
    annotate : bool, default True
        Write each cell's value (compact: ``1.2M``).
    cmap : str, default "Blues"
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        The heatmap (an image) with a colorbar and, if ``annotate``, one
        text per cell.

    Examples
    --------
    >>> plot_flow_matrix(transfers, values="count")  # doctest: +SKIP
    """
    if values is not None:
        _common.choice("values", values, ["volume", "count"])
    if _is_transfers(data):
        data = flows.matrix(data, values=values or "volume")
    data = _require_frame(data, "plot_flow_matrix", [], "flows.matrix(...) output")
    kind = values or data.attrs.get("values", "volume")
    ax = _axes(ax)
    _set_title(ax, "CCTP flow matrix", data.attrs.get(_common.WINDOW_ATTR), title)
    ax.set_xlabel("Destination chain")
    ax.set_ylabel("Source chain")
    if data.empty:
        return _no_data(ax)
    grid = data.to_numpy(dtype=float)
    image = ax.imshow(grid, cmap=cmap, aspect="auto")
    ax.set_xticks(
        range(grid.shape[1]), [_chain_text(c) for c in data.columns], rotation=45, ha="right"
    )
    ax.set_yticks(range(grid.shape[0]), [_chain_text(c) for c in data.index])
    ax.figure.colorbar(image, ax=ax, label=_value_label(kind))
    if annotate:
        threshold = grid.max() / 2 if grid.size else 0
        for i in range(grid.shape[0]):
            for j in range(grid.shape[1]):
                ax.text(
                    j,
                    i,
                    _compact(grid[i, j]),
                    ha="center",
                    va="center",
                    fontsize="small",
                    color="white" if grid[i, j] > threshold else "black",
                )
    return ax


def plot_net_flows(data: pd.DataFrame, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """Net flow per chain: bars (no time buckets) or cumulative lines over time.

    Parameters
    ----------
    data : pandas.DataFrame
        Output of :func:`cctx_research.analysis.flows.net` (with or without
        ``freq``), or a ``"transfers"`` frame (net over the whole window).
    ax : matplotlib.axes.Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        Horizontal bars (one per chain; green in, red out), or one line of
        ``cumulative_net`` per chain.

    Examples
    --------
    >>> plot_net_flows(flows.net(transfers, freq="1D"))  # doctest: +SKIP
    """
    if _is_transfers(data):
        data = flows.net(data)
    data = _require_frame(data, "plot_net_flows", ["chain", "net"], "flows.net(...) output")
    ax = _axes(ax)
    win = data.attrs.get(_common.WINDOW_ATTR)
    over_time = "timestamp" in data.columns
    if over_time:
        _set_title(ax, "Cumulative net flow per chain", win, title)
        ax.set_xlabel("Time (UTC)")
        ax.set_ylabel(f"Cumulative net flow ({_USDC})")
    else:
        _set_title(ax, "Net flow per chain", win, title)
        ax.set_xlabel(f"Net flow ({_USDC}, inflow − outflow)")
        ax.set_ylabel("Chain")
    if data.empty:
        return _no_data(ax)
    if over_time:
        column = "cumulative_net" if "cumulative_net" in data.columns else "net"
        wide = data.pivot_table(
            index="timestamp", columns="chain", values=column, aggfunc="sum", observed=True
        )
        x = _naive_utc(wide.index)
        for chain in wide.columns:
            ax.plot(x, wide[chain].to_numpy(), label=_chain_text(chain))
        ax.axhline(0, color="0.5", linewidth=0.8)
        ax.legend(fontsize="small")
        _date_axis(ax)
    else:
        ordered = data.sort_values("net", kind="stable")
        net = ordered["net"].to_numpy(dtype=float)
        ax.barh(
            [_chain_text(c) for c in ordered["chain"]],
            net,
            color=np.where(net >= 0, "#2e8b57", "#c0392b"),
        )
        ax.axvline(0, color="0.5", linewidth=0.8)
    return ax


# ----------------------------------------------------------------- volumes


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
        Lines (``ax.lines``) or stacked areas (``ax.collections``), one per
        group drawn.

    Examples
    --------
    >>> plot_volume(volumes.timeseries(transfers, by="source_chain"), kind="area")  # doctest: +SKIP
    """
    _common.choice("value", value, ["volume", "count"])
    _common.choice("kind", kind, ["line", "area"])
    top = _common.positive_int("top", top, allow_none=True)
    if _is_transfers(data):
        data = volumes.timeseries(data)
    data = _require_frame(
        data, "plot_volume", ["timestamp", value], "volumes.timeseries(...) output"
    )
    ax = _axes(ax)
    base = "CCTP transfer volume" if value == "volume" else "CCTP transfers"
    freq = data.attrs.get("freq")
    if freq:
        base += f" per {freq}"
    _set_title(
        ax, base, data.attrs.get(_common.WINDOW_ATTR) or _common.window(data["timestamp"]), title
    )
    ax.set_xlabel("Time (UTC)")
    ax.set_ylabel(_value_label(value))
    if data.empty:
        return _no_data(ax)
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
        text = _corridor_text if group == "corridor" else _chain_text
        labels = [c if c == "other" else text(c) for c in wide.columns]
    x = _naive_utc(wide.index)
    if kind == "area":
        ax.stackplot(x, wide.to_numpy(dtype=float).T, labels=labels, alpha=0.85)
    else:
        for column, label in zip(wide.columns, labels, strict=True):
            ax.plot(x, wide[column].to_numpy(dtype=float), label=label)
    if group is not None:
        ax.legend(fontsize="small")
    ax.set_ylim(bottom=0)
    _date_axis(ax)
    return ax


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
    _common.choice("weights", weights, ["count", "volume"])
    _common.positive_int("bins", bins)
    classes = None
    if isinstance(data, volumes.SizeDistribution):
        classes = data.classes
        win = data.window
        amount = np.zeros(0)
        empty = data.count == 0
    elif isinstance(data, pd.DataFrame):
        frame = _common.transfers_frame(data)
        amount = frame["amount"].to_numpy(dtype=float, na_value=np.nan)
        win = _common.window(frame["timestamp"])
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
        win = None
    if classes is None:
        amount = amount[np.isfinite(amount) & (amount > 0)]
        empty = amount.size == 0
    ax = _axes(ax)
    _set_title(ax, "Transfer sizes", win, title)
    ax.set_xscale("log")
    ax.set_xlabel(f"Transfer amount ({_USDC}, log scale)")
    ax.set_ylabel("Transfers" if weights == "count" else f"Volume ({_USDC})")
    if empty:
        return _no_data(ax)
    if classes is not None:
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
    else:
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
    return ax


def plot_seasonality(
    data: pd.DataFrame,
    *,
    ax: Axes | None = None,
    values: str = "count",
    cmap: str = "viridis",
    title: str | None = None,
) -> Axes:
    """Heatmap of activity by weekday x hour of day (UTC).

    Parameters
    ----------
    data : pandas.DataFrame
        Output of :func:`cctx_research.analysis.volumes.seasonality`, or a
        ``"transfers"`` frame.
    ax : matplotlib.axes.Axes, optional
    values : {"count", "volume"}, default "count"
    cmap : str, default "viridis"
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        A 7 x 24 image with a colorbar.

    Examples
    --------
    >>> plot_seasonality(transfers, values="volume")  # doctest: +SKIP
    """
    _common.choice("values", values, ["count", "volume"])
    if _is_transfers(data):
        data = volumes.seasonality(data)
    data = _require_frame(
        data, "plot_seasonality", ["weekday", "hour", values], "volumes.seasonality(...) output"
    )
    ax = _axes(ax)
    _set_title(ax, "Activity by weekday and hour", data.attrs.get(_common.WINDOW_ATTR), title)
    ax.set_xlabel("Hour of day (UTC)")
    ax.set_ylabel("Day of week (UTC)")
    if data.empty or not data[values].to_numpy(dtype=float).any():
        return _no_data(ax)
    grid = np.zeros((7, 24))
    grid[data["weekday"].to_numpy(dtype=int), data["hour"].to_numpy(dtype=int)] = data[
        values
    ].to_numpy(dtype=float)
    image = ax.imshow(grid, aspect="auto", cmap=cmap)
    ax.set_yticks(range(7), ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"])
    ax.set_xticks(range(0, 24, 3))
    ax.figure.colorbar(image, ax=ax, label=_value_label(values))
    return ax


# --------------------------------------------------------------- addresses


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
    _common.choice("role", role, ["recipient", "sender"])
    win = None
    if isinstance(data, addresses.Concentration):
        conc = data
        win = data.window
    elif _is_transfers(data):
        ranked = addresses.top(data, role=role, n=None)
        win = ranked.attrs.get(_common.WINDOW_ATTR)
        conc = addresses.concentration(ranked["volume"])
    else:
        conc = addresses.concentration(data)
    ax = _axes(ax)
    _set_title(ax, f"Concentration of volume per {role}", win, title)
    ax.set_xlabel("Cumulative share of addresses (smallest first)")
    ax.set_ylabel(f"Cumulative share of volume ({_USDC})")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.plot([0, 1], [0, 1], linestyle="--", color="0.5", label="equality")
    if conc.n == 0 or not np.isfinite(conc.gini):
        return _no_data(ax)
    curve = conc.lorenz
    ax.plot(
        curve["population_share"].to_numpy(),
        curve["value_share"].to_numpy(),
        color="#2775ca",
        label=f"Lorenz curve (Gini {conc.gini:.3f})",
    )
    ax.legend(loc="upper left", fontsize="small")
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
        One bar per bucket.

    Examples
    --------
    >>> plot_address_activity(addresses.profile(address, transfers))  # doctest: +SKIP
    """
    _common.choice("value", value, ["volume", "count"])
    if isinstance(data, addresses.AddressProfile):
        activity = data.activity
        addr = data.address
        base = f"Received by {addr[:6]}…{addr[-4:]}"
    else:
        activity = _require_frame(
            data, "plot_address_activity", ["timestamp", value], "an AddressProfile"
        )
        base = "Received by address"
    ax = _axes(ax)
    _set_title(ax, base, _common.window(activity["timestamp"]), title)
    ax.set_xlabel("Time (UTC)")
    ax.set_ylabel(f"Volume received ({_USDC})" if value == "volume" else "Transfers received")
    if activity.empty:
        return _no_data(ax)
    x = _naive_utc(activity["timestamp"])
    step = np.diff(x).min() if len(x) > 1 else np.timedelta64(1, "D")
    width = step / np.timedelta64(1, "D") * 0.8
    ax.bar(x, activity[value].to_numpy(dtype=float), width=width, align="edge", color="#2775ca")
    _date_axis(ax)
    return ax


def plot_in_flight(data: pd.DataFrame, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """USDC burned but not yet minted, over time.

    Parameters
    ----------
    data : pandas.DataFrame
        Output of :func:`cctx_research.analysis.volumes.in_flight`, or a
        ``"volume"`` frame to compute it from.
    ax : matplotlib.axes.Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        One step line, at each bucket's end.

    Examples
    --------
    >>> history = client.volume_history(start="2024-06-01", end="2024-07-01")  # doctest: +SKIP
    >>> plot_in_flight(history)  # doctest: +SKIP
    """
    if isinstance(data, pd.DataFrame) and "in_flight" not in data.columns:
        data = volumes.in_flight(data)
    data = _require_frame(
        data, "plot_in_flight", ["end", "in_flight"], "volumes.in_flight(...) output"
    )
    ax = _axes(ax)
    _set_title(ax, "USDC in flight", data.attrs.get(_common.WINDOW_ATTR), title)
    ax.set_xlabel("Time (UTC)")
    ax.set_ylabel(f"In flight ({_USDC} burned, not yet minted)")
    if data.empty:
        return _no_data(ax)
    ax.step(
        _naive_utc(data["end"]),
        data["in_flight"].to_numpy(dtype=float),
        where="post",
        color="#2775ca",
    )
    ax.axhline(0, color="0.5", linewidth=0.8)
    _date_axis(ax)
    return ax
