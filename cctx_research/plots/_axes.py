"""Drawing helpers shared by the plot modules (private to :mod:`cctx_research.plots`).

Axes creation and checks, titles that carry the span of the data, the "no
data" note, chain and corridor labels, UTC date axes, compact numbers
(:func:`compact`, and :func:`compact_axis` for every axis of amounts or
counts) and legends outside the data (:func:`legend_outside`): one home for
what every plot family draws with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.ticker import Formatter, LogFormatter

from .. import chains

USDC = "USDC"
NO_DATA = "no data"


def get_axes(ax: Axes | None, *, figsize: tuple[float, float] | None = None) -> Axes:
    """``ax`` checked, or the axes of a new figure when it is None.

    A new figure is laid out by matplotlib's constrained layout, which makes
    room for a legend beside the axes (:func:`legend_outside`).
    """
    if ax is None:
        _, ax = plt.subplots(figsize=figsize, layout="constrained")
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


_SUFFIXES = ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k"))


def compact(value: float, digits: int = 3) -> str:
    """The toolkit's one number format for pictures: ``12.3M``, ``950k``, ``0.5``.

    ``digits`` significant digits, a k/M/B/T suffix from a thousand up, and
    never an exponent (``1e6``) nor an offset: every axis of every figure,
    colour bars and cell labels included, speaks it.

    Examples
    --------
    >>> [compact(v) for v in (12_345_678, 950_000, 999_950, 0.5, 2e-6, -1500)]
    ['12.3M', '950k', '1M', '0.5', '0.000002', '-1.5k']
    """
    value = float(value)
    if not np.isfinite(value):
        return str(value)
    value = float(f"{value:.{digits}g}")  # rounded first: 999,950 is 1M, not 1e+03k
    for limit, suffix in _SUFFIXES:
        if abs(value) >= limit:
            return _significant(value / limit, digits) + suffix
    return _significant(value, digits)


def _significant(value: float, digits: int) -> str:
    if value == 0:
        return "0"
    return np.format_float_positional(
        value, precision=digits, unique=False, fractional=False, trim="-"
    )


class CompactFormatter(Formatter):
    """Tick labels in the :func:`compact` format: no offset text, no exponent.

    Where three significant digits would give two ticks one label (a narrow
    range of large values), each label gets the digits it needs.
    """

    def __call__(self, x: float, pos: int | None = None) -> str:
        return self.fix_minus(compact(x))

    def format_ticks(self, values: Sequence[float]) -> list[str]:
        values = list(values)
        labels = [compact(v) for v in values]
        for digits in range(4, 9):
            if len(set(labels)) == len(set(values)):
                break
            labels = [compact(v, digits) for v in values]
        return [self.fix_minus(label) for label in labels]


class _CompactLogFormatter(LogFormatter):
    # which ticks of a log axis get a label stays LogFormatter's choice; the
    # label is compact (1k, 10k) instead of 10^3, 10^4
    def __call__(self, x: float, pos: int | None = None) -> str:
        return self.fix_minus(compact(x)) if super().__call__(x, pos) else ""


def compact_axis(axis: Axis) -> None:
    """Label ``axis`` (x, y, or a colour bar's long axis) in the :func:`compact` format.

    Call it after setting the axis' scale: a new scale brings its own formatters.
    """
    if axis.get_scale() == "log":
        axis.set_major_formatter(_CompactLogFormatter())
        axis.set_minor_formatter(_CompactLogFormatter(labelOnlyBase=False))
    else:
        axis.set_major_formatter(CompactFormatter())


def legend_outside(ax: Axes, handles: Sequence[Any] | None = None, **options: Any) -> None:
    """The legend of ``ax`` beside it, to the right and top-aligned: never over the data.

    ``handles`` (artists with labels) replace those drawn on ``ax``;
    ``options`` go to :meth:`~matplotlib.axes.Axes.legend`. A figure with
    constrained layout (the report's, and every new one :func:`get_axes`
    makes) shrinks the axes to make room; otherwise save with
    ``bbox_inches="tight"``, as notebooks do.
    """
    placement: dict[str, Any] = {
        "loc": "upper left",
        "bbox_to_anchor": (1.01, 1.0),
        "borderaxespad": 0.0,
        "fontsize": "small",
        "frameon": False,
    }
    placement.update(options)
    if handles is not None:
        placement["handles"] = list(handles)
    ax.legend(**placement)


def value_label(value: str, noun: str = "Volume") -> str:
    return f"{noun} ({USDC})" if value == "volume" else "Transfers (count)"


PARTIAL_LABEL = "partial bucket: part of it\nis outside the data's span"
"""The legend entry of the hatched band over a bucket only partly inside the data's span."""

PARTIAL_SHARE = 0.99
"""A bucket with less than this share of its time inside the data's span is partial.

(A span that starts at its first record, seconds after the hour, leaves its
first bucket whole for every purpose: no band.)"""

PARTIAL_STYLE: dict[str, Any] = {
    "facecolor": "white", "alpha": 0.6, "hatch": "///", "edgecolor": "0.55"
}  # fmt: skip


def bucket_ends(starts: Any, freq: str | None) -> np.ndarray:
    """The end of each bucket (naive UTC datetime64), given their starts and their length.

    Fixed lengths (``"1h"``, ``"1D"``, ``"7D"``) end one length after their
    start; calendar buckets (``"W-MON"``, ``"MS"``, ``"ME"``), labelled by
    their first day, end where the next one starts. Without ``freq``, buckets
    are as long as the shortest gap between two starts (a day for one start).
    """
    index = pd.DatetimeIndex(naive_utc(starts))
    if not freq:
        gaps = np.diff(index.to_numpy())
        step = gaps.min() if len(gaps) else np.timedelta64(1, "D")
        return naive_utc(index + pd.Timedelta(step))
    offset = pd.tseries.frequencies.to_offset(freq)
    if isinstance(offset, pd.offsets.Tick):
        return naive_utc(index + offset)
    code = offset.rule_code
    period = "M" if code in ("ME", "MS") else code
    try:
        return naive_utc((index.to_period(period) + 1).start_time)
    except (ValueError, TypeError):  # a period pandas has no alias for: its offset
        return naive_utc(index + offset)


def partial_buckets(starts: Any, freq: str | None, covered: Any) -> np.ndarray:
    """Which buckets (by their start) lie partly outside ``covered``; none when unknown."""
    partial = np.zeros(len(starts), dtype=bool)
    if not freq or covered is None or not len(starts):
        return partial
    lo, hi = (naive_utc([t])[0] for t in covered)
    begin, ends = naive_utc(starts), bucket_ends(starts, freq)
    inside = (np.minimum(ends, hi) - np.maximum(begin, lo)) / (ends - begin)
    return np.asarray(inside < PARTIAL_SHARE, dtype=bool)


def mark_partial(ax: Axes, starts: np.ndarray, ends: np.ndarray, partial: np.ndarray) -> Any:
    """A light hatched band over each run of partial buckets; its legend proxy, or None.

    A bucket only partly inside the data's span holds less than a whole
    bucket's activity: drawn as is, the first or last bucket of a window
    that starts or ends mid-bucket would read as a drop. Each band spans
    exactly the partial buckets, from the first one's start to the last
    one's end (naive UTC ``starts`` and ``ends``, as drawn).
    """
    if not partial.any():
        return None
    from matplotlib.patches import Patch

    spans: list[list[Any]] = []
    for i in np.flatnonzero(partial):
        if spans and starts[i] <= spans[-1][1]:
            spans[-1][1] = ends[i]
        else:
            spans.append([starts[i], ends[i]])
    for lo, hi in spans:
        ax.axvspan(lo, hi, zorder=3, linewidth=0, **PARTIAL_STYLE)
    return Patch(label=PARTIAL_LABEL, **PARTIAL_STYLE)
