"""The app's page: one tab per widget panel, over one client.

Examples
--------
>>> import cctx_research as cctx
>>> from cctx_research.webapp.panels import app
>>> page = app(cctx.connect())  # doctest: +SKIP
"""

from __future__ import annotations

import html
import logging
from typing import Any

from .. import widgets

try:
    import ipywidgets as w
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "the dashboard app needs ipywidgets: pip install 'cctx-research[notebooks]'"
    ) from exc

__all__ = ["TITLES", "AppPanels", "app", "ledger_behind"]

logger = logging.getLogger(__name__)

TITLES: tuple[str, ...] = (
    "Dashboard", "Address explorer", "Transaction lookup", "Who moves the money",
)
"""The tabs, in order."""


class AppPanels(w.VBox):
    """A heading naming the data source over a tab per panel (see :func:`app`).

    Attributes
    ----------
    dashboard : cctx_research.widgets.Dashboard
    explorer : cctx_research.widgets.AddressExplorer
    lookup : cctx_research.widgets.TransactionLookup
    actors : cctx_research.widgets.ActorsPanel
        Over the ledger behind the data (:func:`ledger_behind`), else a note;
        it counts the transfers burned on the dashboard's days, and follows
        them when they change.
    tabs : ipywidgets.Tab
    heading : ipywidgets.HTML
    """

    def __init__(
        self, client: Any, *, days: int = widgets.DEFAULT_DAYS, ledger: Any = None
    ) -> None:
        super().__init__()
        self.dashboard = widgets.dashboard(client, days=days)
        self.explorer = widgets.address_explorer(client)
        self.lookup = widgets.transaction_lookup(client)
        # the days the dashboard fetched (None if it could not): the actors tab counts them
        start, end = self.dashboard.window or (None, None)
        self.actors = widgets.actors_panel(ledger, start=start, end=end)
        for picker in (self.dashboard.start, self.dashboard.end):
            # after the dashboard's own observer, which fetches the new days first
            picker.observe(self._follow_days, names="value")
        self.tabs = w.Tab(
            children=[self.dashboard, self.explorer, self.lookup, self.actors],
            titles=list(TITLES),
        )
        source = html.escape(str(getattr(client, "source", "")))
        self.heading = w.HTML(
            value=f'<h2 style="margin:0">CCTP dashboard</h2><div>data: {source}</div>'
        )
        # tab titles in full ("Who moves the money" is longer than the default tab)
        self.style = w.HTML(
            value="<style>.cctx-app .lm-TabBar-tab{flex:0 0 auto !important;"
            "max-width:none !important;min-width:10em}</style>"
        )
        self.add_class("cctx-app")
        self.children = [self.style, self.heading, self.tabs]

    def _follow_days(self, _change: Any) -> None:
        # one window for both tabs (a range the dashboard refused keeps the last one)
        if self.dashboard.window is not None and self.dashboard.window != self.actors.window:
            self.actors.set_window(*self.dashboard.window)


def ledger_behind() -> Any:
    """The ledger ``cctx-research dashboard`` serves (``CCTX_LEDGER``), or None.

    ``sample``: the embedded sample's ledger (what its service serves); a
    ledger dataset or ledger Parquet file: opened in DuckDB
    (:func:`cctx_research.views.ledger_files.open_ledger`), so the kernel
    analyses it there and holds no copy of it; another file: loaded. Without
    the variable (the configured service) there is no ledger: the interface's
    frames carry one side of each transfer.
    """
    from .. import config

    named = config.ledger_source()
    if named is None:
        return None
    from .. import load, load_sample
    from ..views.ledger_files import open_ledger

    if named == "sample":
        return load_sample()
    try:
        opened = open_ledger(named)
    except ImportError:  # no engines extra: the kernel reads the ledger into pandas
        opened = None
    return opened if opened is not None else load(named)


def app(client: Any, *, days: int = widgets.DEFAULT_DAYS, ledger: Any = None) -> AppPanels:
    """The dashboard, the address explorer, the transaction lookup and who moves the money.

    Parameters
    ----------
    client : cctx_research.Client
        The one client every panel uses.
    days : int, default 7
        The dashboard's opening window: the last ``days`` complete days (today,
        still partial, left out).
    ledger : DataFrame, optional
        The ledger of the "Who moves the money" tab (default
        :func:`ledger_behind`).

    Returns
    -------
    AppPanels
        An ipywidgets VBox; display it.
    """
    return AppPanels(client, days=days, ledger=ledger_behind() if ledger is None else ledger)
