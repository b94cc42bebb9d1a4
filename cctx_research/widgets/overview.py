"""The dashboard: flows, volume over time and top addresses for a date range."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from typing import Any

import ipywidgets as w
import pandas as pd

from .. import chains as chain_registry
from .. import provenance
from ..analysis import addresses, flows, volumes
from ..errors import CctxError, CoverageWarning
from ..views.figures import figure_cache
from ..views.markup import escape, html_table
from ..views.selection import chain_names, touching, with_main_chain
from ._panel import (
    DEFAULT_DAYS,
    Panel,
    as_date,
    days_window,
    default_dates,
    fetch_summary,
    last_day,
)

logger = logging.getLogger(__name__)

FREQUENCIES: tuple[tuple[str, str], ...] = (
    ("hour", "1h"),
    ("6 hours", "6h"),
    ("day", "1D"),
    ("week", "7D"),
)


class Dashboard(Panel):
    """The overview panel (see :func:`dashboard`).

    Attributes
    ----------
    start, end : ipywidgets.DatePicker
        The days shown, both included (UTC).
    chains : ipywidgets.SelectMultiple
        Keep transfers touching any selected chain; none selected means all.
    metric : ipywidgets.ToggleButtons
        ``"volume"`` (USDC) or ``"count"`` (transfers).
    freq : ipywidgets.Dropdown
        Time bucket of the volume plot (``"1h"``, ``"6h"``, ``"1D"``, ``"7D"``).
    role : ipywidgets.ToggleButtons
        Top ``"recipient"`` or ``"sender"`` addresses.
    top_n : ipywidgets.IntSlider
        Rows of the top-address table.
    images : dict of ipywidgets.Image
        ``"flow_graph"``, ``"flow_matrix"``, ``"volume"``.
    top_table : ipywidgets.HTML
    status : ipywidgets.HTML
        What was fetched, the busy indicator, or the last error.
    output : ipywidgets.Output
        The callbacks' output capture; tracebacks of unexpected errors.
    transfers : pandas.DataFrame or None
        The frame last fetched (before the chain filter): the transfers minted
        in ``window``.
    window : tuple of pandas.Timestamp or None
        The half-open UTC window ``[start, end)`` last fetched.
    fetches, draws : int
        How many fetches and redraws happened.
    error : Exception or None
        The last error, if the last callback failed.
    figures : cctx_research.views.figures.FigureCache or None
        Where the figures drawn are kept and found again (``figures=True``: the
        cache directory's ``figures/``; the app's pages share it), or None: each
        redraw draws them.
    """

    def __init__(
        self,
        client: Any,
        *,
        start: Any = None,
        end: Any = None,
        days: int = DEFAULT_DAYS,
        chains: Any = None,
        fetch: bool = True,
        figures: Any = None,
    ) -> None:
        super().__init__()
        try:  # a bad value is said before any widget is made
            kept = figure_cache(figures)
        except TypeError:
            raise TypeError(
                "figures must be True (the cache directory's figures/), False, or a directory "
                f"path, got {figures!r}"
            ) from None
        d_start, d_end = default_dates(days)
        # the default days hold no data when the data ends before them (a ledger of the past,
        # served): the first fetch then moves to the data's last days (see _to_the_data)
        self._opening = start is None and end is None
        self.start = w.DatePicker(description="From", value=as_date(start) or d_start)
        self.end = w.DatePicker(description="To", value=last_day(end) or d_end)
        picked = list(chain_names(chains) or ())
        # every chain until the data says which it holds (then: those, and any picked)
        options = chain_options(chain_registry.known_names(), picked)
        self.chains = w.SelectMultiple(
            options=options,
            value=tuple(picked),
            rows=min(len(options), 8),
            description="Chains",
            tooltip="transfers touching any selected chain; none selected: all chains",
        )
        self.metric = w.ToggleButtons(options=["volume", "count"], value="volume")
        self.freq = w.Dropdown(options=list(FREQUENCIES), value="1D", description="Bucket")
        self.role = w.ToggleButtons(options=["recipient", "sender"], value="recipient")
        self.top_n = w.IntSlider(
            value=10, min=5, max=50, step=5, description="Top", continuous_update=False
        )
        controls = [self.start, self.end, self.chains, self.metric, self.freq, self.role,
                    self.top_n]  # fmt: skip
        self._setup(client, controls)
        self.figures = kept
        self.transfers: pd.DataFrame | None = None
        self.window: tuple[pd.Timestamp, pd.Timestamp] | None = None
        self.top_table = w.HTML(value="")
        self._drawn: dict[str, tuple[Any, ...]] = {}  # what each image shows (see _show)
        graph = self._image("flow_graph")
        matrix = self._image("flow_matrix")
        volume = self._image("volume", width="98%")
        self.children = [
            self.style,
            self.banner,
            w.HBox([w.VBox([self.start, self.end, self.freq, self.top_n]), self.chains]),
            w.HBox([self.metric, self.role]),
            self.status,
            w.HBox([graph, matrix]),
            volume,
            self.top_table,
            self.output,
        ]
        for control in (self.start, self.end):
            control.observe(self._on_window, names="value")
        for control in (self.chains, self.metric, self.freq, self.role, self.top_n):
            control.observe(self._on_view, names="value")
        if fetch:  # else the caller calls refresh() (the app: after its page shows)
            self.refresh()

    # callbacks -----------------------------------------------------------

    def _on_window(self, change: dict[str, Any]) -> None:
        self.refresh()

    def _on_view(self, change: dict[str, Any]) -> None:
        self._run(self._draw)

    def refresh(self) -> None:
        """Fetch the picked window (one ``client.mints`` call) and redraw."""
        self._run(self._refresh)

    def redraw(self) -> None:
        """Redraw from the frame already fetched: every figure drawn again (a control
        changed draws again only the figures it changes)."""
        self._drawn.clear()  # a style or settings changed since are the caller's to see
        self._run(self._draw)

    def _pull(self) -> tuple[pd.Timestamp, pd.Timestamp]:
        """Fetch the picked days into ``transfers``; their window."""
        start, end = days_window(self.start.value, self.end.value)
        self.transfers = self._fetch(
            f"fetching transfers {start:%Y-%m-%d} to {end:%Y-%m-%d}",
            lambda: self.client.mints(start, end),
        )
        return start, end

    def _refresh(self) -> None:
        start, end = self._pull()
        opening, self._opening = self._opening, False
        moved = opening and self._to_the_data(start)
        if moved:
            # the opening days' own warning (none of them covered) is answered by the move
            if self._caught is not None:
                self._caught[:] = [x for x in self._caught
                                   if not issubclass(x.category, CoverageWarning)]
            start, end = self._pull()
            self._fetch_notes.insert(0, moved)
        self.window = (start, end)
        held = set(self.transfers["source_chain"].astype(str)) | set(
            self.transfers["destination_chain"].astype(str)
        )
        picked = list(self.chains.value)
        options = chain_options(sorted(held), picked)
        if options != list(self.chains.options):
            self.chains.unobserve(self._on_view, names="value")  # one draw, below
            self.chains.options = options
            self.chains.value = tuple(p for p in picked if p in {v for _, v in options})
            self.chains.observe(self._on_view, names="value")
        self._draw()

    def _to_the_data(self, start: pd.Timestamp) -> str | None:
        """Move the pickers to the last days the data holds, when the opening days hold none
        of it and the data ends before them; what to say about it, or None (not moved).

        Asked only for the opening days, and only when the service says the data covers
        none of them (a live service's default days hold data: nothing more is asked)."""
        record = provenance.provenance(self.transfers)
        covered = None if record is None else record.coverage
        last_record = getattr(self.client, "last_record", None)
        if len(self.transfers) or covered is None or covered[0] < covered[1] or not callable(
                last_record):  # fmt: skip
            return None
        self._set_busy("finding where the data ends")
        try:
            last = last_record(before=start)
        except CctxError as exc:  # the opening days stay, with their own note
            logger.info("could not ask where the data ends: %s", exc)
            return None
        finally:
            self._set_busy(None)
        if last is None:
            return None
        days = (self.end.value - self.start.value).days + 1
        shown = f"{self.start.value:%Y-%m-%d} to {self.end.value:%Y-%m-%d}"
        final = last.date()
        first = final - dt.timedelta(days=days - 1)
        for picker in (self.start, self.end):  # one fetch, by the caller
            picker.unobserve(self._on_window, names="value")
        try:
            self.start.value, self.end.value = first, final
        finally:
            for picker in (self.start, self.end):
                picker.observe(self._on_window, names="value")
        return (f"no data from {shown}: the data ends {last:%Y-%m-%d %H:%M} UTC, so these "
                f"are its last {days} days")  # fmt: skip

    def _show(self, name: str, inputs: tuple[Any, ...], png: Callable[[], bytes]) -> None:
        """Put ``png()`` in image ``name``, unless it shows ``inputs``' picture already."""
        if self._drawn.get(name) != inputs:
            self.images[name].value = png()
            self._drawn[name] = inputs

    def _draw(self) -> None:
        if self.transfers is None:
            raise ValueError("nothing fetched yet: pick a valid date range first")
        picked = list(self.chains.value)
        data = touching(self.transfers, picked or None)
        metric, freq = self.metric.value, self.freq.value
        # a figure is drawn again only when what it shows changed: the transfers (a fetch),
        # the chains or a control of its own; the role and top N change the table alone
        shown = (self.fetches, tuple(picked), metric)
        self._show("flow_graph", shown, lambda: self._png(
            "plot_flow_graph", flows.graph(data, weight=metric), weight=metric, figsize=(6, 5)))
        self._show("flow_matrix", shown, lambda: self._png(
            "plot_flow_matrix", flows.matrix(data, values=metric), figsize=(6, 5)))
        self._show("volume", (*shown, freq), lambda: self._png(
            "plot_volume", volumes.timeseries(data, freq=freq, by="source_chain"),
            value=metric, figsize=(12, 4)))  # fmt: skip
        ranked = with_main_chain(
            addresses.top(data, role=self.role.value, by=metric, n=self.top_n.value),
            data,
            role=self.role.value,
        )
        self.top_table.value = (
            f"<b>Top {escape(self.top_n.value)} {escape(self.role.value)}s by {escape(metric)}</b>"
            + html_table(ranked, links={"address": ("address", "chain")})
        )
        self.draws += 1
        scope = ", ".join(picked) if picked else "all chains"
        # the base, said: transfers minted on the days shown (the actors tab counts burns)
        first, last = self.window[0], self.window[1] - pd.Timedelta(days=1)
        days = f"{first:%Y-%m-%d}" if first == last else f"{first:%Y-%m-%d} to {last:%Y-%m-%d}"
        text = (
            f"{len(data):,} transfers ({escape(scope)}) of {len(self.transfers):,} minted "
            f"{days} (UTC) &middot; {escape(fetch_summary(self.transfers))}"
        )
        self._say_result(text)


def dashboard(
    client: Any,
    *,
    start: Any = None,
    end: Any = None,
    days: int = DEFAULT_DAYS,
    chains: Any = None,
    figures: Any = None,
) -> Dashboard:
    """An overview of CCTP flows and volumes over a date range, redrawn on every change.

    Parameters
    ----------
    client : cctx_research.Client
        From :func:`cctx_research.connect`; ``client.mints`` is called once
        per date range.
    start, end : date-like, optional
        The window ``[start, end)`` like everywhere in the toolkit (naive
        means UTC); the pickers then show its first and last day, which they
        treat as included. Default: the last ``days`` complete days (today,
        still partial, left out); when the data covers none of them and ends
        before them (your own ledger of the past, served), the data's last
        ``days`` days instead (``client.last_record``), and the status line
        says so.
    days : int, default 7
    chains : chain or list of chains, optional
        Chains preselected (transfers touching any of them). Default: all.
    figures : bool or path, optional
        Keep the figures drawn and read them back when the same data is shown
        again (:mod:`cctx_research.views.figures`): ``True`` for ``figures/`` in
        the cache directory (``CCTX_CACHE_DIR``), or a directory. Default: none.

    Returns
    -------
    Dashboard
        An ipywidgets VBox; display it, or drive its controls
        (``.start.value = ...``, ``.metric.value = "count"``).

    Examples
    --------
    >>> dash = dashboard(client, days=3)  # doctest: +SKIP
    >>> dash.metric.value = "count"  # doctest: +SKIP
    """
    return Dashboard(client, start=start, end=end, days=days, chains=chains, figures=figures)


# --------------------------------------------------------------------------
# address explorer


def chain_options(names: Any, picked: Any = ()) -> list[tuple[str, str]]:
    """``(label, name)`` of each chain: the EVM chains first, then the others, each group in
    the registry's order; labels say the group ("EVM · Base", "other · Solana").

    >>> chain_options(["solana", "base", "ethereum"])
    [('EVM · Ethereum', 'ethereum'), ('EVM · Base', 'base'), ('other · Solana', 'solana')]
    """
    every = list(dict.fromkeys([*names, *picked]))

    def evm(name: str) -> bool:
        return chain_registry.address_format(name) == "evm"

    ordered = chain_registry.in_order(every)
    return [
        (f"{'EVM' if evm(n) else 'other'} · {chain_registry.chain_label(n)}", n)
        for n in sorted(ordered, key=lambda n: (not evm(n), ordered.index(n)))
    ]
