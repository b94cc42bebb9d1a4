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

__all__ = ["TITLES", "AppPanels", "app"]

logger = logging.getLogger(__name__)

TITLES: tuple[str, ...] = ("Dashboard", "Address explorer", "Transaction lookup")
"""The tabs, in order."""


class AppPanels(w.VBox):
    """A heading naming the data source over a tab per panel (see :func:`app`).

    Attributes
    ----------
    dashboard : cctx_research.widgets.Dashboard
    explorer : cctx_research.widgets.AddressExplorer
    lookup : cctx_research.widgets.TransactionLookup
    tabs : ipywidgets.Tab
    heading : ipywidgets.HTML
    """

    def __init__(self, client: Any, *, days: int = widgets.DEFAULT_DAYS) -> None:
        super().__init__()
        self.dashboard = widgets.dashboard(client, days=days)
        self.explorer = widgets.address_explorer(client)
        self.lookup = widgets.transaction_lookup(client)
        self.tabs = w.Tab(
            children=[self.dashboard, self.explorer, self.lookup], titles=list(TITLES)
        )
        source = html.escape(str(getattr(client, "source", "")))
        self.heading = w.HTML(
            value=f'<h2 style="margin:0">CCTP dashboard</h2><div>data: {source}</div>'
        )
        self.children = [self.heading, self.tabs]


def app(client: Any, *, days: int = widgets.DEFAULT_DAYS) -> AppPanels:
    """The dashboard, the address explorer and the transaction lookup, in tabs.

    Parameters
    ----------
    client : cctx_research.Client
        The one client every panel uses.
    days : int, default 7
        The dashboard's opening window: the last ``days`` days, today included.

    Returns
    -------
    AppPanels
        An ipywidgets VBox; display it.
    """
    return AppPanels(client, days=days)
