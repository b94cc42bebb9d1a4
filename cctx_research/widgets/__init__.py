"""ipywidgets panels: thin glue over :mod:`~cctx_research.analysis` and :mod:`.plots`.

Four panels, each an :class:`ipywidgets.VBox` you display by leaving it as
the last expression of a cell:

:func:`dashboard`
    Date range, chains, metric (volume / count), time bucket, role and
    top-n controls over a flow graph, a flow matrix, volume over time and a
    table of top addresses.
:func:`address_explorer`
    A text box for an address; shows its profile and activity.
:func:`transaction_lookup`
    A text box for a transaction hash; shows the transaction.
:func:`actors_panel`
    Who moves the money in a ledger: relayers, depositors, rebalancing.

How they behave
---------------
- A change of the date range makes **one** fetch (``client.mints``); the
  other controls only redraw from the frame already fetched. Asking again
  for a window already fetched is answered by the client's cache (the
  status line shows the requests and cache hits).
- Text boxes use ``continuous_update=False``: they act on Enter or when
  they lose focus, not on every key.
- While a fetch runs, the status line says so and the controls are
  disabled (the busy indicator).
- Every callback runs inside the panel's :class:`ipywidgets.Output`
  (``panel.output``): bad input gets a one-line message in red on the status
  line; any other error is shown there too, with its traceback in
  ``panel.output``. Nothing is swallowed: the last error is also kept as
  ``panel.error``.
- The toolkit's warnings met while fetching or drawing (a window past the
  data, a read-only cache, other tokens left out) are said on the status line
  in amber, ahead of what was shown, and kept in ``panel.notes``; they are not
  printed as Python's warning text. Other warnings go on to Python's warning
  machinery.
- Tables have headers with units and right-aligned numbers
  (:mod:`cctx_research.views.columns`); the transaction lookup leaves out the
  service's bookkeeping fields. An image takes no room until it has a figure.
- Figures are drawn on bare matplotlib figures and shown as PNG images
  (``panel.images``), so nothing piles up in pyplot and the panels work the
  same with any matplotlib backend.
- Data from the bundled synthetic sample is labelled as such.

ipywidgets is an optional dependency (``pip install 'cctx-research[notebooks]'``);
importing this module without it raises an :class:`ImportError` that says so.

Examples
--------
>>> import cctx_research as cctx
>>> from cctx_research import widgets
>>> client = cctx.connect()  # doctest: +SKIP
>>> widgets.dashboard(client)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports
from ._panel import DEFAULT_DAYS as DEFAULT_DAYS  # the panels open on these days
from .overview import Dashboard, dashboard

if TYPE_CHECKING:  # imported on first use: the app's first page needs the dashboard alone
    from .actors import ActorsPanel, actors_panel
    from .explorer import AddressExplorer, address_explorer
    from .lookup import TransactionLookup, transaction_lookup

_HOMES: dict[str, str] = {
    "ActorsPanel": "actors", "actors_panel": "actors",
    "AddressExplorer": "explorer", "address_explorer": "explorer",
    "TransactionLookup": "lookup", "transaction_lookup": "lookup",
}  # fmt: skip
"""The other panels' modules, imported when first asked for (the actors panel's brings the
report's ledger helpers and the ingest code, which the dashboard does not need)."""

__all__ = [
    "ActorsPanel",
    "AddressExplorer",
    "Dashboard",
    "TransactionLookup",
    "actors_panel",
    "address_explorer",
    "dashboard",
    "transaction_lookup",
]


__getattr__, __dir__ = exports(__name__, _HOMES, __all__)
