"""Who moves the money, as a panel: relayers, depositors and rebalancing of a ledger."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as w
import narwhals.stable.v2 as nw
import pandas as pd

from .. import chains as chain_registry
from .. import plots
from ..analysis import actors, movements
from ..report import engine_ledger
from ..views.ledger_files import EngineLedger
from ..views.markup import escape, html_table, render_png
from ._panel import OK_STYLE, Panel
from .overview import chain_options

__all__ = ["ROLES", "ActorsPanel", "actors_panel"]

ROLES: tuple[str, ...] = ("relayers", "depositors", "rebalancing")
"""What the panel ranks."""

_SHOWN = {
    "relayers": ["relayer_label", "relayer", "mints", "volume", "mint_share", "volume_share",
                 "median_relay_s"],
    "depositors": ["integrator_label", "integrator", "transfers", "end_users", "volume",
                   "volume_share", "routes", "v2_share"],
    "rebalancing": ["source_chain", "destination_chain", "count", "volume", "rebalancing_volume",
                    "volume_share"],
}  # fmt: skip


class ActorsPanel(Panel):
    """Relayers, depositors (integrators) and rebalancing of a ledger (see :func:`actors_panel`).

    Attributes
    ----------
    role : ipywidgets.ToggleButtons
        ``relayers``, ``depositors`` or ``rebalancing``.
    chains : ipywidgets.SelectMultiple
        Keep the transfers touching these chains (none: every chain); the
        chains of the ledger, EVM first.
    top_n : ipywidgets.IntSlider
    window : tuple of pandas.Timestamp or None
        The half-open UTC window ``[start, end)`` of burns shown (None: the
        whole ledger); :meth:`set_window` changes it. The app follows the
        dashboard's dates with it, so both tabs count one window.
    table : ipywidgets.HTML
    images : dict of ipywidgets.Image
        ``"shares"``: the relayers' shares per day.
    chart_note : ipywidgets.HTML
        The relayers the chart names, in words (its legend's entries).
    status, output, error
        As for :class:`~cctx_research.widgets.Dashboard`.
    """

    def __init__(self, ledger: Any, window: Any = None) -> None:
        super().__init__()
        # a ledger opened in an engine (dashboard --data) stays there: filtered and
        # aggregated in it, never copied into the kernel
        self.ledger = ledger.frame if isinstance(ledger, EngineLedger) else ledger
        self.window: tuple[pd.Timestamp, pd.Timestamp] | None = window
        held: list[str] = []
        if ledger is not None:
            held = sorted(chain_registry.chain_name(int(d)) for d in _domains(self.ledger))
        self.role = w.ToggleButtons(options=list(ROLES), value="relayers")
        self.chains = w.SelectMultiple(
            options=chain_options(held), rows=min(max(len(held), 1), 8), description="Chains",
            tooltip="transfers touching any selected chain; none selected: all chains",
        )  # fmt: skip
        self.top_n = w.IntSlider(
            value=10, min=5, max=50, step=5, description="Top", continuous_update=False
        )
        self._setup(ledger, [self.role, self.chains, self.top_n])
        self.table = w.HTML(value="")
        shares = self._image("shares", width="98%")
        self.chart_note = w.HTML(value="")
        self.children = [
            self.style, self.banner, w.HBox([self.role, self.top_n]), self.chains, self.status,
            self.table, shares, self.chart_note, self.output,
        ]  # fmt: skip
        for control in (self.role, self.chains, self.top_n):
            control.observe(lambda _change: self.redraw(), names="value")
        if ledger is None:
            self._say(
                "Who moves the money needs a ledger (both sides of each transfer): start the "
                "app on one, `cctx-research dashboard --data ledger.parquet`, or on the sample."
            )
        else:
            self.redraw()

    def redraw(self) -> None:
        """Recompute the table (and figure) for the controls' values."""
        self._run(self._draw)

    def set_window(self, start: Any, end: Any) -> None:
        """Show the transfers burned in ``[start, end)`` (naive means UTC), then redraw."""
        self.window = _window(start, end)
        if self.ledger is not None:
            self.redraw()

    def _draw(self) -> None:
        if self.ledger is None:
            return
        data = self.ledger
        if self.window is not None:
            data = _burned_in(data, *self.window)
        picked = list(self.chains.value)
        if picked:
            wanted = list(chain_registry.domains(picked))
            touching = nw.col("source_domain").is_in(wanted) | nw.col(
                "destination_domain"
            ).is_in(wanted)
            data = _lazy(data).filter(touching).to_native()
        role, n = self.role.value, self.top_n.value
        shares = self.images["shares"]
        if role == "relayers":
            table = actors.relayers(data)
            named: list[str] = []
            shares.value = render_png(
                _named(named),
                actors.relayers(data, freq="1D"),
                top=self.top_n.value,  # the chart names the relayers the table lists
                figsize=(12, 3.5),
            )
            # what the chart names, in words under it (read from its legend)
            words = escape(", ".join(named))
            self.chart_note.value = (
                f'<p class="cctx-chart-note">Relayers named in the chart: {words}</p>'
            )
        else:
            table = (
                actors.integrators(data)
                if role == "depositors"
                else movements.rebalancing_share(data).sort_values(
                    "rebalancing_volume", ascending=False
                )
            )
            shares.value, self.chart_note.value = b"", ""
        shown = table.head(n)[[c for c in _SHOWN[role] if c in table.columns]]
        # a full address per row: it wraps to fit the panel, never cut off at its edge
        self.table.value = f'<div class="cctx-fit">{html_table(shown)}</div>'
        self.draws += 1
        scope = f" ({', '.join(picked)})" if picked else ""
        self._say(
            _summary(role, table, data) + _burned(data, self.window) + scope, style=OK_STYLE
        )


def _burned_in(data: Any, start: pd.Timestamp, end: pd.Timestamp) -> Any:
    """The transfers burned in ``[start, end)``, in the ledger's own engine."""
    if isinstance(data, pd.DataFrame):
        burned = data["burn_timestamp"]
        return data[((burned >= start) & (burned < end)).fillna(False).to_numpy(dtype=bool)]
    return engine_ledger.scope(data, start, end, None)


def _lazy(data: Any) -> nw.LazyFrame:
    frame = nw.from_native(data)
    return frame.lazy() if isinstance(frame, nw.DataFrame) else frame


def _domains(data: Any) -> set[int]:
    """The domains a ledger's transfers leave or reach, asked of its engine."""
    if isinstance(data, pd.DataFrame):
        return set(data["source_domain"]) | set(data["destination_domain"])
    lf, found = _lazy(data), set()
    for column in ("source_domain", "destination_domain"):
        found |= set(lf.select(nw.col(column)).unique().collect()[column].to_list())
    return {int(d) for d in found}


def _named(names: list[str]) -> Callable[..., Any]:
    """:func:`~cctx_research.plots.plot_relayer_shares`, noting the names its legend shows."""

    def draw(data: pd.DataFrame, *, ax: Any, **options: Any) -> Any:
        drawn = plots.plot_relayer_shares(data, ax=ax, **options)
        legend = drawn.get_legend()
        names[:] = [t.get_text() for t in legend.get_texts()] if legend is not None else []
        return drawn

    return draw


def _window(start: Any, end: Any) -> tuple[pd.Timestamp, pd.Timestamp]:
    """``[start, end)`` as UTC timestamps, checked."""
    bounds = []
    for name, value in (("start", start), ("end", end)):
        wrong = f"{name} must be a date or time (e.g. '2024-06-29'), got {value!r}"
        try:
            stamp = pd.Timestamp(value)
        except (TypeError, ValueError) as exc:
            raise ValueError(wrong) from exc
        if pd.isna(stamp):
            raise ValueError(wrong)
        bounds.append(stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC"))
    if bounds[0] >= bounds[1]:
        raise ValueError(f"start ({bounds[0]}) must be before end ({bounds[1]})")
    return bounds[0], bounds[1]


def _burned(data: Any, window: tuple[pd.Timestamp, pd.Timestamp] | None) -> str:
    """The base the counts are on: transfers burned in the window, minted or not."""
    if window is not None:
        start, end = window
        last = end - pd.Timedelta(microseconds=1)
        days = f"{start:%Y-%m-%d}" if start.date() == last.date() else (
            f"{start:%Y-%m-%d} to {last:%Y-%m-%d}"
        )
        return f", burned {days} (UTC), minted or not"
    if not engine_ledger.count(data):
        return ""
    burn = nw.col("burn_timestamp")
    first, last = _lazy(data).select(burn.min().alias("a"), burn.max().alias("b")).collect().row(0)
    first, last = pd.Timestamp(first), pd.Timestamp(last)
    return f", burned {first:%Y-%m-%d %H:%M} to {last:%Y-%m-%d %H:%M} UTC"


def _summary(role: str, table: pd.DataFrame, data: Any) -> str:
    """What the table counts, in words: "12 relayers minted 83,900 of these 83,927 transfers"."""
    transfers = engine_ledger.count(data)
    if role == "relayers":
        unminted = _lazy(data).select(nw.col("mint_timestamp").is_null().sum()).collect()
        minted = transfers - int(unminted.item())
        return f"{len(table):,} relayers minted {minted:,} of these {transfers:,} transfers"
    if role == "depositors":
        # users burning for themselves are no integrators (actors.integrators): not listed
        carried = int(table["transfers"].sum()) if len(table) else 0
        return (
            f"{len(table):,} integrators deposited {carried:,} of these {transfers:,} transfers"
        )
    flagged = int(table["rebalancing_count"].sum()) if len(table) else 0
    routes = int((table["rebalancing_count"] > 0).sum()) if len(table) else 0
    return (
        f"{flagged:,} of {transfers:,} transfers are rebalancing (an operator moving its own "
        f"money), on {routes:,} of {len(table):,} routes"
    )


def actors_panel(ledger: Any, *, start: Any = None, end: Any = None) -> ActorsPanel:
    """Relayers, depositors and rebalancing of a ledger, with a chain picker and top-N.

    Parameters
    ----------
    ledger : pandas.DataFrame, EngineLedger or None
        A ``"ledger"`` frame (``cctx.load(...)``, ``cctx.load_sample()``), or
        one opened in an engine (:func:`cctx_research.views.ledger_files.open_ledger`),
        analysed there; None shows what would provide one.
    start, end : date-like, optional
        Keep the transfers burned in ``[start, end)`` (naive means UTC), as
        the report's section does; both or neither. Default: the whole ledger.

    Returns
    -------
    ActorsPanel

    Raises
    ------
    TypeError
        If ``ledger`` is not a DataFrame, an engine's ledger or None.
    ValueError
        If only one of ``start``, ``end`` is given, either is no time, or
        ``start`` is not before ``end``.
    """
    if ledger is not None and not isinstance(ledger, (pd.DataFrame, EngineLedger)):
        raise TypeError(
            "ledger must be a pandas DataFrame of kind 'ledger' (cctx.load(...), "
            "cctx.load_sample()), a ledger opened in an engine (cctx_research.views."
            f"ledger_files.open_ledger(path)) or None, got {type(ledger).__name__}"
        )
    if (start is None) != (end is None):
        raise ValueError("pass both start and end (the burns' window), or neither")
    return ActorsPanel(ledger, None if start is None else _window(start, end))
