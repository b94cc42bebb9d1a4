"""Plots of the ledger analyses: latency, stuck transfers, fast-transfer share.

They draw the results of :mod:`cctx_research.analysis.latency`,
:mod:`~cctx_research.analysis.pending` and :mod:`~cctx_research.analysis.v2`,
or compute them from a ``"ledger"`` frame.

Examples
--------
>>> from cctx_research import plots
>>> ax = plots.plot_latency(ledger)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from .. import arguments, chains
from ..analysis import inputs, latency, pending, v2
from ..analysis.results import result_info
from . import _axes

__all__ = ["plot_fast_share", "plot_latency", "plot_stuck"]


_BLUE = "#2775ca"
_COLORS = {"fast": "#f39c12", "standard": _BLUE, "unknown": "0.6"}


def _computable(data: Any, name: str) -> bool:
    """True for a ledger; a transfers frame (no burn times) gets the clear error."""
    if inputs.is_ledger(data):
        return True
    if inputs.is_transfers(data) and "timestamp" in data.columns:
        raise inputs.no_burn_times(name)
    return False


def _bar_axes(ax: Axes | None, rows: int) -> Axes:
    """The given axes, or a new figure tall enough for one labelled bar per row."""
    return _axes.get_axes(ax, figsize=(8, max(3.0, 0.3 * rows + 1.5)))


def _route_text(source: Any, destination: Any) -> str:
    return _axes.corridor_text(f"{source}->{destination}")


def _row_labels(frame: pd.DataFrame) -> list[str]:
    groups = [c for c in ("cctp_version", "finality") if c in frame.columns]
    labels = []
    for row in frame.itertuples(index=False):
        text = _route_text(row.source_chain, row.destination_chain)
        extra = []
        if "cctp_version" in groups:
            version = row.cctp_version
            extra.append("V?" if pd.isna(version) else f"V{int(version)}")
        if "finality" in groups:
            extra.append(str(row.finality))
        labels.append(f"{text} ({', '.join(extra)})" if extra else text)
    return labels


def _check_reference(reference: Any) -> dict[str, float]:
    if reference is None:
        return {}
    if not isinstance(reference, Mapping):
        raise TypeError(
            "reference must map routes to seconds, e.g. {'ethereum->base': 1064}, "
            f"got {type(reference).__name__}"
        )
    out = {}
    for key, value in reference.items():
        if not isinstance(key, str) or "->" not in key:
            raise ValueError(f"reference keys must be routes such as 'ethereum->base', got {key!r}")
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
            raise TypeError(f"reference values must be seconds (numbers), got {value!r}")
        source, destination = (part.strip() for part in key.split("->", 1))
        try:  # any name the registry knows ('eth', 'Base', 6): the route in canonical names
            route = f"{chains.chain_name(chains.domain(source))}->"
            route += chains.chain_name(chains.domain(destination))
        except ValueError as exc:
            raise ValueError(f"reference key {key!r}: {exc}") from None
        out[route] = float(value)
    return out


def plot_latency(
    data: pd.DataFrame,
    *,
    ax: Axes | None = None,
    by: str | list[str] | None = None,
    reference: Mapping[str, float] | None = None,
    log: bool = True,
    top: int = 8,
    title: str | None = None,
) -> Axes:
    """Burn-to-mint latency per route: the median with its 10-90 % range, or over time.

    Parameters
    ----------
    data : pandas.DataFrame
        Output of :func:`cctx_research.analysis.latency.by_route` (bars),
        of :func:`~cctx_research.analysis.latency.timeseries` (lines), or a
        ``"ledger"`` frame to compute ``by_route`` from.
    ax : matplotlib.axes.Axes, optional
    by : {None, "cctp_version", "finality"} or a list of them
        For a ledger: passed to ``by_route`` (one bar per route and group,
        coloured by finality class).
    reference : mapping of route to seconds, optional
        Published medians to mark on the bars, e.g.
        ``{"ethereum->base": 1064}``; they are marked on the route's
        standard and V1 bars, not on its fast ones.
    log : bool, default True
        A logarithmic time axis (latencies range from seconds to hours).
    top : int, default 8
        For a time series: how many routes to draw (those with the most
        transfers).
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        Bars: one bar per row (``ax.patches``), a p10-p90 error bar each,
        and one marker per matching ``reference`` route. Lines: one per
        route.

    Raises
    ------
    TypeError, ValueError
        If ``data`` is none of the above, or an option is malformed.

    Examples
    --------
    >>> plot_latency(ledger, by="finality", reference={"ethereum->base": 1064})  # doctest: +SKIP
    """
    if not isinstance(log, bool):
        raise TypeError(f"log must be a bool, got {type(log).__name__}")
    top = arguments.positive_int("top", top)
    marks = _check_reference(reference)
    if _computable(data, "plot_latency"):
        data = latency.by_route(data, by=by)
    data = _axes.require_frame(
        data,
        "plot_latency",
        ["source_chain", "destination_chain", "median_s"],
        "latency.by_route(...) or latency.timeseries(...) output, or a ledger frame",
    )
    span = result_info(data).span
    if "timestamp" in data.columns:
        ax = _axes.get_axes(ax)
        return _latency_lines(data, ax, log=log, top=top, span=span, title=title)
    ax = _bar_axes(ax, len(data))
    _axes.set_title(ax, "Burn-to-mint latency per route", span, title)
    ax.set_xlabel("Burn to mint (seconds; median, bar: 10th-90th percentile)")
    if data.empty:
        return _axes.no_data(ax)
    rows = data.iloc[::-1].reset_index(drop=True)  # first row at the top
    _latency_bars(rows, ax, log=log)
    if marks:
        _mark_published(rows, ax, marks)
    if "finality" in rows.columns or marks:
        _finality_legend(rows, ax)
    return ax


def _latency_bars(rows: pd.DataFrame, ax: Axes, *, log: bool) -> None:
    """One bar per row, bottom up: the median, a p10-p90 error bar, coloured by finality."""
    y = np.arange(len(rows))
    median = rows["median_s"].to_numpy(dtype=float)
    low = np.clip(median - rows["p10_s"].to_numpy(dtype=float), 0, None)
    high = np.clip(rows["p90_s"].to_numpy(dtype=float) - median, 0, None)
    if "finality" in rows.columns:
        colors = [_COLORS.get(str(f), _BLUE) for f in rows["finality"]]
    else:
        colors = [_BLUE] * len(rows)
    ax.barh(y, median, color=colors, alpha=0.85, xerr=[low, high], ecolor="0.3", capsize=2)
    ax.set_yticks(y, _row_labels(rows))
    if log:
        ax.set_xscale("log")
    _axes.compact_axis(ax.xaxis)


def _mark_published(rows: pd.DataFrame, ax: Axes, marks: dict[str, float]) -> None:
    """A marker at each route's published median, on its bars that are not fast ones."""
    keys = [
        f"{s}->{d}" for s, d in zip(rows["source_chain"], rows["destination_chain"], strict=True)
    ]
    # published medians are of standard (finality-waiting) transfers
    fast = (
        (rows["finality"].astype(str) == "fast").to_numpy()
        if "finality" in rows.columns
        else np.zeros(len(rows), dtype=bool)
    )
    hit = [(i, marks[k]) for i, k in enumerate(keys) if k in marks and not fast[i]]
    if hit:
        ax.scatter(
            [v for _, v in hit],
            [i for i, _ in hit],
            marker="D",
            color="black",
            zorder=3,
            label="published median",
        )


def _finality_legend(rows: pd.DataFrame, ax: Axes) -> None:
    """The legend: the finality classes drawn, and the published median if marked."""
    from matplotlib.patches import Patch

    handles = [
        Patch(color=_COLORS[c], label=c)
        for c in _COLORS
        if "finality" in rows.columns and c in set(rows["finality"].astype(str))
    ]
    extra, _ = ax.get_legend_handles_labels()
    if handles or extra:  # a reference matching no route shown draws no marker
        _axes.legend_outside(ax, handles + extra)

def _latency_lines(
    data: pd.DataFrame, ax: Axes, *, log: bool, top: int, span: Any, title: str | None
) -> Axes:
    _axes.set_title(ax, "Median burn-to-mint latency", span, title)
    ax.set_xlabel("Burn time (UTC)")
    ax.set_ylabel("Median burn to mint (seconds)")
    if data.empty:
        return _axes.no_data(ax)
    keys = [
        c for c in ("source_chain", "destination_chain", "cctp_version", "finality") if c in data
    ]
    sizes = data.groupby(keys, observed=True, dropna=False)["count"].sum()
    chosen = sizes.sort_values(ascending=False, kind="stable").head(top).index
    for key in chosen:
        key = key if isinstance(key, tuple) else (key,)
        mask = np.ones(len(data), dtype=bool)
        for col, value in zip(keys, key, strict=True):
            mask &= (data[col] == value).fillna(False).to_numpy(dtype=bool)
        part = data.loc[mask]
        label = _row_labels(part.head(1))[0]
        ax.plot(
            _axes.naive_utc(part["timestamp"]),
            part["median_s"].to_numpy(dtype=float),
            marker=".",
            label=label,
        )
    if log:
        ax.set_yscale("log")
    _axes.compact_axis(ax.yaxis)
    _axes.date_axis(ax)
    _axes.legend_outside(ax)
    return ax


def plot_stuck(
    data: pd.DataFrame,
    *,
    ax: Axes | None = None,
    factor: float = 3.0,
    title: str | None = None,
) -> Axes:
    """Stuck transfers: how long each has waited against how much it carries.

    Parameters
    ----------
    data : pandas.DataFrame
        Output of :func:`cctx_research.analysis.pending.stuck`, or a
        ``"ledger"`` frame to compute it from (at the ledger's default
        ``as_of``).
    ax : matplotlib.axes.Axes, optional
    factor : float, default 3.0
        For a ledger: passed to ``stuck``.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        One scatter collection per source chain (``ax.collections``): age
        in hours against amount in USDC (logarithmic).

    Raises
    ------
    TypeError, ValueError
        If ``data`` is neither, or ``factor`` is not a positive number.

    Examples
    --------
    >>> plot_stuck(pending.stuck(ledger, as_of="2024-07-01"))  # doctest: +SKIP
    """
    if _computable(data, "plot_stuck"):
        data = pending.stuck(data, factor=factor)
    data = _axes.require_frame(
        data,
        "plot_stuck",
        ["source_chain", "destination_chain", "age_s", "amount"],
        "pending.stuck(...) output or a ledger frame",
    )
    ax = _axes.get_axes(ax)
    as_of = result_info(data).as_of
    base = f"Stuck transfers: {len(data):,}"
    if as_of is not None and not pd.isna(as_of):
        base += f" as of {pd.Timestamp(as_of):%Y-%m-%d %H:%M} UTC"
        span = None
    else:
        span = result_info(data).span
    _axes.set_title(ax, base, span, title)
    ax.set_xlabel("Waiting since burn (hours)")
    ax.set_ylabel(f"Amount ({_axes.USDC})")
    if data.empty:
        return _axes.no_data(ax)
    hours = data["age_s"].to_numpy(dtype=float) / 3600
    amounts = np.maximum(data["amount"].to_numpy(dtype=float), 1e-6)
    # one colour per source chain: stuck transfers wait on their source's attestation
    sources = data["source_chain"].astype(str).to_numpy()
    for source in chains.in_order(sources):
        mask = sources == source
        ax.scatter(
            hours[mask], amounts[mask], s=18, alpha=0.75, label=f"from {_axes.chain_text(source)}"
        )
    ax.set_xlim(left=0)
    ax.set_yscale("log")
    _axes.compact_axis(ax.xaxis)
    _axes.compact_axis(ax.yaxis)
    _axes.legend_outside(ax)
    return ax


def plot_fast_share(
    data: pd.DataFrame,
    *,
    ax: Axes | None = None,
    value: str = "count",
    title: str | None = None,
) -> Axes:
    """Fast against standard V2 transfers per route, as stacked shares.

    Parameters
    ----------
    data : pandas.DataFrame
        Output of :func:`cctx_research.analysis.v2.fast_share`, or a
        ``"ledger"`` frame to compute it from.
    ax : matplotlib.axes.Axes, optional
    value : {"count", "volume"}, default "count"
        Shares of the transfer count or of the volume.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        Two bars per route (fast, standard) stacked to 100 %.

    Raises
    ------
    TypeError, ValueError
        If ``data`` is neither, or ``value`` is not one of the above.

    Examples
    --------
    >>> plot_fast_share(ledger, value="volume")  # doctest: +SKIP
    """
    arguments.choice("value", value, ["count", "volume"])
    if _computable(data, "plot_fast_share"):
        data = v2.fast_share(data)
    column = f"fast_{value}_share"
    data = _axes.require_frame(
        data,
        "plot_fast_share",
        ["source_chain", "destination_chain", column],
        "v2.fast_share(...) output or a ledger frame",
    )
    ax = _bar_axes(ax, len(data))
    noun = "transfers" if value == "count" else "volume"
    _axes.set_title(ax, f"Fast transfers, share of V2 {noun}", result_info(data).span, title)
    ax.set_xlabel(f"Share of V2 {noun} per route")
    if data.empty:
        return _axes.no_data(ax)
    rows = data.iloc[::-1].reset_index(drop=True)
    y = np.arange(len(rows))
    fast = rows[column].fillna(0).to_numpy(dtype=float)
    ax.barh(y, fast, color=_COLORS["fast"], label="fast (threshold ≤ 1000)")
    ax.barh(y, 1 - fast, left=fast, color=_COLORS["standard"], label="standard")
    ax.set_yticks(y, _row_labels(rows))
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
    _axes.legend_outside(ax)
    return ax
