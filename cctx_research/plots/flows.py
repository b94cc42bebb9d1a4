"""Plots of chain-to-chain flows (:mod:`cctx_research.analysis.flows`).

Examples
--------
>>> from cctx_research import plots
>>> ax = plots.plot_flow_matrix(transfers)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from .. import arguments
from ..analysis import flows, inputs
from ..analysis.results import result_info
from . import _axes

__all__ = ["plot_flow_graph", "plot_flow_matrix", "plot_net_flows"]


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
        Replaces the default title (which names the span of the data).

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
    arguments.choice("weight", weight, ["volume", "count"])
    g = flows.graph(data) if isinstance(data, pd.DataFrame) else data
    if not isinstance(g, nx.DiGraph):
        raise TypeError(
            "plot_flow_graph expects flows.graph(...) output or a transfers frame, "
            f"got {type(data).__name__}"
        )
    ax = _axes.get_axes(ax)
    _axes.set_title(ax, "CCTP flows between chains", result_info(g).span, title)
    ax.set_axis_off()
    if g.number_of_nodes() == 0:
        return _axes.no_data(ax)
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
    _label_outside(ax, [pos[v] for v in nodes], [_axes.chain_text(v) for v in nodes], sizes)
    unit = f"volume ({_axes.USDC})" if weight == "volume" else "transfer count"
    ax.text(
        0.0,
        -0.02,
        f"arrow width ∝ corridor {unit}; node size ∝ chain throughput",
        transform=ax.transAxes,
        fontsize="small",
        color="0.4",
        va="top",
    )
    ax.set_aspect("equal")
    ax.margins(0.32, 0.12)  # room for the labels beside the ring, none wasted below
    return ax


def _label_outside(ax: Axes, centres: list[Any], texts: list[str], sizes: np.ndarray) -> None:
    """Each chain's label just beyond its circle, away from the ring's centre.

    A label inside a circle spills out of the small ones and over the arrowheads
    that end on it; beyond the circle, on the side facing away from the ring, it
    meets neither (the arrows run inside the ring).
    """
    for (x, y), text, size in zip(centres, texts, sizes, strict=True):
        norm = float(np.hypot(x, y)) or 1.0
        dx, dy = (x / norm, y / norm) if np.hypot(x, y) > 0 else (0.0, -1.0)
        gap = np.sqrt(size) / 2 + 4  # the marker's radius in points, and a little air
        ax.annotate(
            text,
            (x, y),
            xytext=(dx * gap, dy * gap),
            textcoords="offset points",
            ha="left" if dx > 0.3 else "right" if dx < -0.3 else "center",
            va="bottom" if dy > 0.3 else "top" if dy < -0.3 else "center",
            fontsize=9,
            gid="chain-label",
        )


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
        arguments.choice("values", values, ["volume", "count"])
    if inputs.is_transfers(data):
        data = flows.matrix(data, values=values or "volume")
    data = _axes.require_frame(data, "plot_flow_matrix", [], "flows.matrix(...) output")
    kind = values or result_info(data).values or "volume"
    ax = _axes.get_axes(ax)
    _axes.set_title(ax, "CCTP flow matrix", result_info(data).span, title)
    ax.set_xlabel("Destination chain")
    ax.set_ylabel("Source chain")
    if data.empty:
        return _axes.no_data(ax)
    grid = data.to_numpy(dtype=float)
    # a chain to itself is no CCTP route: drawn as impossible (grey, a cross), never as 0
    itself = np.asarray([[str(r) == str(c) for c in data.columns] for r in data.index], bool)
    cells = np.ma.masked_array(grid, mask=itself)
    image = ax.imshow(cells, cmap=_with_bad(cmap, "#e6e6e6"), aspect="auto")
    ax.set_xticks(
        range(grid.shape[1]), [_axes.chain_text(c) for c in data.columns], rotation=45, ha="right"
    )
    ax.set_yticks(range(grid.shape[0]), [_axes.chain_text(c) for c in data.index])
    bar = ax.figure.colorbar(image, ax=ax, label=_axes.value_label(kind))
    # compact tick labels (10M, 500k) instead of an offset exponent ("1e7"),
    # which sits above the bar and runs into the title
    _axes.compact_axis(bar.long_axis)
    if annotate:
        threshold = cells.max() / 2 if cells.count() else 0
        size = "x-small" if max(grid.shape) > 6 else "small"  # clear of the cell's borders
        for i in range(grid.shape[0]):
            for j in range(grid.shape[1]):
                ax.text(
                    j,
                    i,
                    "×" if itself[i, j] else _axes.compact(grid[i, j]),
                    ha="center",
                    va="center",
                    fontsize=size,
                    color="white" if not itself[i, j] and grid[i, j] > threshold else "black",
                )
    return ax


def _with_bad(cmap: Any, color: str) -> Any:
    """A copy of ``cmap`` (a name or a colormap) drawing masked cells in ``color``."""
    from matplotlib import colormaps

    return (colormaps[cmap] if isinstance(cmap, str) else cmap).with_extremes(bad=color)


def plot_net_flows(data: pd.DataFrame, *, ax: Axes | None = None, title: str | None = None) -> Axes:
    """Net flow per chain: bars (no time buckets) or cumulative lines over time.

    Parameters
    ----------
    data : pandas.DataFrame
        Output of :func:`cctx_research.analysis.flows.net` (with or without
        ``freq``), or a ``"transfers"`` frame (net over all of it).
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
    if inputs.is_transfers(data):
        data = flows.net(data)
    data = _axes.require_frame(data, "plot_net_flows", ["chain", "net"], "flows.net(...) output")
    ax = _axes.get_axes(ax)
    span = result_info(data).span
    over_time = "timestamp" in data.columns
    if over_time:
        _axes.set_title(ax, "Cumulative net flow per chain", span, title)
        ax.set_xlabel("Time (UTC)")
        ax.set_ylabel(f"Cumulative net flow ({_axes.USDC})")
    else:
        _axes.set_title(ax, "Net flow per chain", span, title)
        ax.set_xlabel(f"Net flow ({_axes.USDC}, inflow − outflow)")
        ax.set_ylabel("Chain")
    if data.empty:
        return _axes.no_data(ax)
    if over_time:
        column = "cumulative_net" if "cumulative_net" in data.columns else "net"
        wide = data.pivot_table(
            index="timestamp", columns="chain", values=column, aggfunc="sum", observed=True
        )
        x = _axes.naive_utc(wide.index)
        for chain in wide.columns:
            ax.plot(x, wide[chain].to_numpy(), label=_axes.chain_text(chain))
        ax.axhline(0, color="0.5", linewidth=0.8)
        _axes.legend_outside(ax)
        _axes.compact_axis(ax.yaxis)
        _axes.date_axis(ax)
    else:
        ordered = data.sort_values("net", kind="stable")
        net = ordered["net"].to_numpy(dtype=float)
        ax.barh(
            [_axes.chain_text(c) for c in ordered["chain"]],
            net,
            color=np.where(net >= 0, "#2e8b57", "#c0392b"),
        )
        ax.axvline(0, color="0.5", linewidth=0.8)
        _axes.compact_axis(ax.xaxis)
    return ax
