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
import threading
from typing import Any

import pandas as pd

from .. import widgets

try:
    import ipywidgets as w
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "the dashboard app needs ipywidgets: pip install 'cctx-research[notebooks]'"
    ) from exc

__all__ = ["TITLES", "AppPanels", "app", "ledger_behind"]

logger = logging.getLogger(__name__)

_EXPLORER_DAYS = 30
"""The address explorer's days: the 30 ending on the dashboard's last day when it opens."""

TITLES: tuple[str, ...] = (
    "Dashboard", "Address explorer", "Transaction lookup", "Who moves the money",
)
"""The tabs, in order."""


class AppPanels(w.VBox):
    """A heading naming the data source over a tab per panel (see :func:`app`).

    The page opens on the dashboard; every other tab is built when it is first
    selected (or its attribute first read), so the first page waits on the
    dashboard alone. With ``later=True`` it waits on nothing: the dashboard
    fetches and draws on a thread once the page is built (``ready`` is set
    when it is done; a click meanwhile waits for it).

    Attributes
    ----------
    dashboard : cctx_research.widgets.Dashboard
    explorer : cctx_research.widgets.AddressExplorer
        On the 30 days that end on the dashboard's last day when the tab opens
        (the last 30 complete days, or the data's last 30 when it ends before them).
    lookup : cctx_research.widgets.TransactionLookup
    actors : cctx_research.widgets.ActorsPanel
        Over the ledger behind the data (:func:`ledger_behind`), else a note;
        it counts the transfers burned on the dashboard's days, and follows
        them when they change.
    tabs : ipywidgets.Tab
        One box per panel; a box holds its panel once it is built.
    heading : ipywidgets.HTML
    ready : threading.Event
        Set once the dashboard has fetched and drawn its first window.

    Parameters ``figures``: as for :func:`app` (default here: none kept).
    """

    def __init__(
        self,
        client: Any,
        *,
        days: int = widgets.DEFAULT_DAYS,
        ledger: Any = None,
        later: bool = False,
        figures: Any = None,
    ) -> None:
        super().__init__()
        self.client = client
        # a frame, None (no ledger), or a function loading it when the actors tab opens
        self._ledger = ledger
        self.ready = threading.Event()
        self._pending, self._lock = later, threading.Lock()  # the first draw not begun yet
        # every page draws the same opening days: the first page's figures are kept for
        # the next ones (keyed on their data, so a page on other data draws its own)
        self.dashboard = widgets.Dashboard(client, days=days, fetch=not later, figures=figures)
        self._built: dict[int, Any] = {0: self.dashboard}
        boxes = [w.VBox([self.dashboard])]
        boxes += [w.VBox([w.HTML(value=f"<i>opening {html.escape(t)}&hellip;</i>")])
                  for t in TITLES[1:]]  # fmt: skip
        for picker in (self.dashboard.start, self.dashboard.end):
            # after the dashboard's own observer, which fetches the new days first
            picker.observe(self._follow_days, names="value")
        self.tabs = w.Tab(children=boxes, titles=list(TITLES))
        self.tabs.observe(self._on_tab, names="selected_index")
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
        if later:
            _after_this_cell(self._start)
        else:
            self.ready.set()

    def _begin(self) -> bool:
        """True for the one caller that is to begin the first draw."""
        with self._lock:
            pending, self._pending = self._pending, False
        return pending

    def _start(self) -> None:
        if self._begin():
            threading.Thread(target=self._open, name="cctx-app-first-draw", daemon=True).start()

    def _draw_if_pending(self) -> None:
        # asked for in the cell that made the page (page.wait(), page.actors): the thread
        # would start only after that cell, so the first draw runs here and now
        if self._begin():
            self._open()

    def _open(self) -> None:
        try:
            self.dashboard.refresh()  # errors are said on its status line
        finally:
            self.ready.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the dashboard has drawn its first window; False if ``timeout`` ran out."""
        if timeout is not None and not timeout >= 0:
            raise ValueError(f"timeout must be a number of seconds >= 0 or None, got {timeout!r}")
        self._draw_if_pending()
        return self.ready.wait(timeout)

    @property
    def explorer(self) -> Any:
        return self._panel(1)

    @property
    def lookup(self) -> Any:
        return self._panel(2)

    @property
    def actors(self) -> Any:
        return self._panel(3)

    @property
    def built(self) -> tuple[str, ...]:
        """The titles of the tabs built so far, in tab order."""
        return tuple(TITLES[i] for i in sorted(self._built))

    def _panel(self, index: int) -> Any:
        if index not in self._built:
            self._built[index] = panel = self._build(index)
            self.tabs.children[index].children = [panel]
        return self._built[index]

    def _build(self, index: int) -> Any:
        if index == 2:
            return widgets.transaction_lookup(self.client)
        ledger = None
        if index == 3:
            ledger = self._ledger() if callable(self._ledger) else self._ledger
        self._draw_if_pending()
        self.ready.wait()  # opened during the first draw: on the days it draws
        # the days the dashboard shows now (None if it could not fetch them)
        start, end = self.dashboard.window or (None, None)
        if index == 1:  # its 30 days, ending where the dashboard's days end (the data's end)
            start = None if end is None else end - pd.Timedelta(days=_EXPLORER_DAYS)
            return widgets.address_explorer(self.client, start=start, end=end)
        return widgets.actors_panel(ledger, start=start, end=end)

    def _on_tab(self, change: Any) -> None:
        if change["new"] is not None:
            self._panel(change["new"])

    def _follow_days(self, _change: Any) -> None:
        # one window for both tabs (a range the dashboard refused keeps the last one);
        # an actors tab not built yet takes the dashboard's days when it is
        actors = self._built.get(3)
        if actors is None or self.dashboard.window is None:
            return
        if self.dashboard.window != actors.window:
            actors.set_window(*self.dashboard.window)


def _after_this_cell(start: Any) -> None:
    """Call ``start()`` once the running notebook cell is done, or at once outside IPython.

    A panel draws inside its Output widget's capture, which takes the outputs of
    the request running at the time: started while the cell runs, it would take
    the cell's own result (the page) away from Voila and the notebook.
    """
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        get_ipython = None
    shell = get_ipython() if get_ipython is not None else None
    if shell is None or getattr(shell, "kernel", None) is None:
        start()
        return

    def once(*_: Any) -> None:
        shell.events.unregister("post_run_cell", once)
        start()

    shell.events.register("post_run_cell", once)


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


def app(
    client: Any,
    *,
    days: int = widgets.DEFAULT_DAYS,
    ledger: Any = None,
    later: bool = True,
    figures: Any = True,
) -> AppPanels:
    """The dashboard, the address explorer, the transaction lookup and who moves the money.

    Parameters
    ----------
    client : cctx_research.Client
        The one client every panel uses.
    days : int, default 7
        The dashboard's opening window: the last ``days`` complete days (today,
        still partial, left out), or the data's last ``days`` days when it ends
        before them (``dashboard --data`` on a ledger of the past).
    ledger : DataFrame, optional
        The ledger of the "Who moves the money" tab (default
        :func:`ledger_behind`, loaded when that tab is first opened).
    later : bool, default True
        Return the page at once and let the dashboard fetch and draw on a
        thread (the page shows its widgets first, the figures as they come);
        ``page.wait()`` blocks until they are drawn. False: draw before returning.
    figures : bool or path, default True
        Keep the dashboard's figures and read them back when a page shows the same
        data again (every page opens on the same days): ``True`` for ``figures/`` in
        the cache directory (``CCTX_CACHE_DIR``), a directory, or False to draw each.

    Returns
    -------
    AppPanels
        An ipywidgets VBox; display it.

    Raises
    ------
    TypeError
        If ``later`` is not a bool.
    """
    from ..arguments import check_type

    check_type(later, bool, "later", "True (draw after the page shows) or False")
    loader = ledger_behind if ledger is None else ledger
    return AppPanels(client, days=days, ledger=loader, later=later, figures=figures)
