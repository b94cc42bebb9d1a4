"""Drawing helpers shared by the plot modules (private to :mod:`cctx_research.plots`).

Axes creation and checks, titles that carry the span of the data, the "no
data" note, chain and corridor labels, UTC date axes and compact numbers:
one home for what every plot family draws with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from .. import chains

USDC = "USDC"
NO_DATA = "no data"


def get_axes(ax: Axes | None) -> Axes:
    """``ax`` checked, or the axes of a new figure when it is None."""
    if ax is None:
        _, ax = plt.subplots()
        return ax
    if not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes or None, got {type(ax).__name__}")
    return ax


def require_frame(data: Any, name: str, columns: Sequence[str], what: str) -> pd.DataFrame:
    if not isinstance(data, pd.DataFrame):
        module = type(data).__module__.split(".")[0]
        hint = (
            f"; plots draw pandas frames: pass data.to_pandas() (a {module} frame)"
            if hasattr(data, "to_pandas") or module in ("polars", "duckdb", "dask", "pyarrow")
            else ""
        )
        raise TypeError(f"{name} expects {what}, got {type(data).__name__}{hint}")
    missing = [c for c in columns if c not in data.columns]
    if missing:
        raise ValueError(f"{name} expects {what}; the frame lacks column(s) {', '.join(missing)}")
    return data


def span_text(span: Any) -> str:
    """``(first, last)`` as title text; empty for no span."""
    if not isinstance(span, tuple) or len(span) != 2 or span[0] is None or pd.isna(span[0]):
        return ""
    start, end = pd.Timestamp(span[0]), pd.Timestamp(span[1])
    if start.tzinfo is not None:
        start, end = start.tz_convert("UTC"), end.tz_convert("UTC")
    if start.normalize() == end.normalize():
        if start == end:
            return f"{start:%Y-%m-%d %H:%M} UTC"
        return f"{start:%Y-%m-%d %H:%M}–{end:%H:%M} UTC"
    return f"{start:%Y-%m-%d} – {end:%Y-%m-%d} (UTC)"


def set_title(ax: Axes, base: str, span: Any, title: str | None) -> None:
    """``title``, or ``base`` followed by the span of the data."""
    if title is not None and not isinstance(title, str):
        raise TypeError(f"title must be a str or None, got {type(title).__name__}")
    if title is not None:
        ax.set_title(title)
        return
    text = span_text(span)
    ax.set_title(f"{base}, {text}" if text else base)


def no_data(ax: Axes) -> Axes:
    ax.text(
        0.5,
        0.5,
        NO_DATA,
        transform=ax.transAxes,
        ha="center",
        va="center",
        color="0.5",
        fontsize="large",
    )
    return ax


def chain_text(name: Any) -> str:
    try:
        return chains.chain_label(str(name))
    except (TypeError, ValueError):
        return str(name)


def corridor_text(label: str) -> str:
    source, _, destination = str(label).partition("->")
    if not destination:
        return str(label)
    return f"{chain_text(source)} → {chain_text(destination)}"


def naive_utc(values: Any) -> np.ndarray:
    """Datetimes as naive UTC datetime64, which matplotlib handles natively."""
    index = pd.DatetimeIndex(values)
    if index.tz is not None:
        index = index.tz_convert("UTC").tz_localize(None)
    return index.to_numpy()


def date_axis(ax: Axes) -> None:
    # ConciseDateFormatter needs no rotation; autofmt_xdate would hide the
    # tick labels of every axes but the bottom row of a grid of subplots.
    locator = mdates.AutoDateLocator()
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))


def compact(value: float) -> str:
    value = float(value)
    for limit, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"{value / limit:.3g}{suffix}"
    if value == int(value):
        return f"{int(value)}"
    return f"{value:.3g}"


def value_label(value: str, noun: str = "Volume") -> str:
    return f"{noun} ({USDC})" if value == "volume" else "Transfers (count)"
