"""ipywidgets panels: thin glue over :mod:`~cctx_research.analysis` and :mod:`.plots`.

Three panels, each an :class:`ipywidgets.VBox` you display by leaving it as
the last expression of a cell:

:func:`dashboard`
    Date range, chains, metric (volume / count), time bucket, role and
    top-n controls over a flow graph, a flow matrix, volume over time and a
    table of top addresses.
:func:`address_explorer`
    A text box for an address; shows its profile and activity.
:func:`transaction_lookup`
    A text box for a transaction hash; shows the transaction.

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

import datetime as dt
import logging
import traceback
import warnings
from collections.abc import Callable
from typing import Any

import pandas as pd

from . import chains as chain_registry
from . import plots, provenance, times
from .analysis import addresses, flows, volumes
from .errors import CctxError, CoverageWarning, NotFoundError
from .markup import address_link, escape, field_table, html_table, render_png, synthetic_banner
from .selection import chain_names, touching, with_main_chain

try:
    import ipywidgets as w
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "cctx_research.widgets needs ipywidgets: pip install 'cctx-research[notebooks]'"
    ) from exc

__all__ = [
    "AddressExplorer",
    "Dashboard",
    "TransactionLookup",
    "address_explorer",
    "dashboard",
    "transaction_lookup",
]

logger = logging.getLogger(__name__)

DEFAULT_DAYS = 7
"""Days shown when a panel opens: the last week, today included."""

FREQUENCIES: tuple[tuple[str, str], ...] = (
    ("hour", "1h"),
    ("6 hours", "6h"),
    ("day", "1D"),
    ("week", "7D"),
)

_BUSY = "&#9203; {what}&hellip;"
_OK_STYLE = "color:#1a7f37"
_WARN_STYLE = "color:#9a6700;font-weight:600"
_ERROR_STYLE = "color:#cf222e;font-weight:600"
_SYNTHETIC_NOTE = synthetic_banner(subject="these panels are")


def _default_dates(days: int = DEFAULT_DAYS) -> tuple[dt.date, dt.date]:
    today = pd.Timestamp.now(tz="UTC").date()
    return today - dt.timedelta(days=days - 1), today


def _window(start: Any, end: Any) -> tuple[pd.Timestamp, pd.Timestamp]:
    """Days picked (both included) -> the half-open UTC window ``[start, end + 1 day)``."""
    if start is None or end is None:
        raise ValueError("pick both a start and an end date")
    lo = pd.Timestamp(_as_date(start)).tz_localize("UTC")
    hi = pd.Timestamp(_as_date(end)).tz_localize("UTC") + pd.Timedelta(days=1)
    if lo >= hi:
        raise ValueError(
            f"the start date ({start}) is after the end date ({end}); pick a start on or "
            "before the end"
        )
    return lo, hi


def _fetch_summary(frame: Any) -> str:
    record = provenance.provenance(frame) if hasattr(frame, "attrs") else None
    if record is None:
        return ""
    return f"{record.network_requests:,} requests sent, {record.cache_hits:,} cache hits"


def _synthetic(value: Any) -> bool:
    """Whether a fetched frame or a client says its data is synthetic (by the typed flag)."""
    if hasattr(value, "attrs"):
        return provenance.is_synthetic(value)
    return getattr(value, "synthetic", False) is True


class _Panel(w.VBox):
    """Status line, busy indicator and error capture shared by the panels."""

    def _setup(self, client: Any, controls: list[Any]) -> None:
        self.client = client
        self.status = w.HTML(value="")
        self.banner = w.HTML(value="")
        self.output = w.Output(layout=w.Layout(max_height="300px", overflow="auto"))
        self.error: BaseException | None = None
        self.busy = False
        self.fetches = 0
        self.coverage_note: str | None = None
        self.draws = 0
        self.images: dict[str, w.Image] = {}
        self._controls = controls
        if _synthetic(client):
            self.banner.value = _SYNTHETIC_NOTE

    def _image(self, name: str, width: str = "49%") -> w.Image:
        image = w.Image(format="png", layout=w.Layout(width=width, height="auto"))
        self.images[name] = image
        return image

    def _say(self, text: str, *, style: str = "") -> None:
        self.status.value = f'<span style="{style}">{text}</span>' if style else text

    def _set_busy(self, what: str | None) -> None:
        self.busy = what is not None
        for control in self._controls:
            control.disabled = self.busy
        if what is not None:
            self._say(_BUSY.format(what=escape(what)))

    def _fetch(self, what: str, fn: Callable[[], Any]) -> Any:
        """One fetch, with the busy indicator on while it runs."""
        self._set_busy(what)
        try:
            with warnings.catch_warnings(record=True) as shown:
                warnings.simplefilter("always")
                result = fn()
        finally:
            self._set_busy(None)
        # a window the data does not cover is said on the status line (not a
        # green "0 transfers"), and the warning goes on to the notebook
        notes = [str(x.message) for x in shown if issubclass(x.category, CoverageWarning)]
        self.coverage_note = notes[0] if notes else None
        for x in shown:
            warnings.warn_explicit(x.message, x.category, x.filename, x.lineno)
        self.fetches += 1
        if _synthetic(result):
            self.banner.value = _SYNTHETIC_NOTE
        return result

    def _run(self, action: Callable[[], None]) -> None:
        """Run a callback inside the Output capture; show any error, never drop it."""
        self.output.outputs = ()
        self.error = None
        with self.output:
            try:
                action()
            except Exception as exc:
                self._show_error(exc)

    def _show_error(self, exc: BaseException) -> None:
        self.error = exc
        logger.debug("widget callback failed", exc_info=exc)
        if isinstance(exc, (ValueError, TypeError)):
            # bad input: what to do instead is in the message
            message = str(exc)
        elif isinstance(exc, CctxError):
            message = f"{type(exc).__name__}: {exc}"
        else:
            message = f"{type(exc).__name__}: {exc} (traceback below)"
            self.output.outputs = (
                {
                    "output_type": "error",
                    "ename": type(exc).__name__,
                    "evalue": str(exc),
                    "traceback": traceback.format_exception(type(exc), exc, exc.__traceback__),
                },
            )
        self._say(escape(message), style=_ERROR_STYLE)


# --------------------------------------------------------------------------
# dashboard


class Dashboard(_Panel):
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
        The frame last fetched (before the chain filter).
    fetches, draws : int
        How many fetches and redraws happened.
    error : Exception or None
        The last error, if the last callback failed.
    """

    def __init__(
        self,
        client: Any,
        *,
        start: Any = None,
        end: Any = None,
        days: int = DEFAULT_DAYS,
        chains: Any = None,
    ) -> None:
        super().__init__()
        d_start, d_end = _default_dates(days)
        self.start = w.DatePicker(description="From", value=_as_date(start) or d_start)
        self.end = w.DatePicker(description="To", value=_last_day(end) or d_end)
        options = [
            (chain_registry.chain_label(d), chain_registry.chain_name(d))
            for d in chain_registry.DEFAULT_DOMAINS
        ]
        picked = list(chain_names(chains) or ())
        for name in picked:
            if name not in [v for _, v in options]:
                options.append((chain_registry.chain_label(name), name))
        self.chains = w.SelectMultiple(
            options=options,
            value=tuple(picked),
            rows=min(len(options), 6),
            description="Chains",
            tooltip="transfers touching any selected chain; none selected: all chains",
        )
        self.metric = w.ToggleButtons(options=["volume", "count"], value="volume")
        self.freq = w.Dropdown(options=list(FREQUENCIES), value="1D", description="Bucket")
        self.role = w.ToggleButtons(options=["recipient", "sender"], value="recipient")
        self.top_n = w.IntSlider(
            value=10, min=5, max=50, step=5, description="Top", continuous_update=False
        )
        controls = [
            self.start,
            self.end,
            self.chains,
            self.metric,
            self.freq,
            self.role,
            self.top_n,
        ]
        self._setup(client, controls)
        self.transfers: pd.DataFrame | None = None
        self.top_table = w.HTML(value="")
        graph = self._image("flow_graph")
        matrix = self._image("flow_matrix")
        volume = self._image("volume", width="98%")
        self.children = [
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
        """Redraw from the frame already fetched."""
        self._run(self._draw)

    def _refresh(self) -> None:
        start, end = _window(self.start.value, self.end.value)
        self.transfers = self._fetch(
            f"fetching transfers {start:%Y-%m-%d} to {end:%Y-%m-%d}",
            lambda: self.client.mints(start, end),
        )
        self._draw()

    def _draw(self) -> None:
        if self.transfers is None:
            raise ValueError("nothing fetched yet: pick a valid date range first")
        picked = list(self.chains.value)
        data = touching(self.transfers, picked or None)
        metric = self.metric.value
        self.images["flow_graph"].value = render_png(
            plots.plot_flow_graph, flows.graph(data, weight=metric), weight=metric, figsize=(6, 5)
        )
        self.images["flow_matrix"].value = render_png(
            plots.plot_flow_matrix, flows.matrix(data, values=metric), figsize=(6, 5)
        )
        self.images["volume"].value = render_png(
            plots.plot_volume,
            volumes.timeseries(data, freq=self.freq.value, by="source_chain"),
            value=metric,
            figsize=(12, 4),
        )
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
        text = (
            f"{len(data):,} transfers ({escape(scope)}) of {len(self.transfers):,} fetched"
            f" &middot; {escape(_fetch_summary(self.transfers))}"
        )
        if self.coverage_note:
            note = escape(self.coverage_note)
            self._say(f"Partial data: {note} &middot; {text}", style=_WARN_STYLE)
        else:
            self._say(text, style=_OK_STYLE)


def _as_date(value: Any) -> dt.date | None:
    if value is None:
        return None
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    return times.to_timestamp(value, name="date").date()


def _last_day(end: Any) -> dt.date | None:
    """The last day a half-open ``end`` covers: the day of the instant before it."""
    if end is None:
        return None
    return (times.to_timestamp(end, name="end") - pd.Timedelta(1, "ns")).date()


def dashboard(
    client: Any,
    *,
    start: Any = None,
    end: Any = None,
    days: int = DEFAULT_DAYS,
    chains: Any = None,
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
        treat as included. Default: the last ``days`` days, today included.
    days : int, default 7
    chains : chain or list of chains, optional
        Chains preselected (transfers touching any of them). Default: all.

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
    return Dashboard(client, start=start, end=end, days=days, chains=chains)


# --------------------------------------------------------------------------
# address explorer


class AddressExplorer(_Panel):
    """Look up what an address received (see :func:`address_explorer`).

    Attributes
    ----------
    address : ipywidgets.Text
        An address in its chain's own format (EVM ``0x`` + 40 hex digits,
        Solana base58, Noble ``noble1...``, Sui/Aptos ``0x`` + 64) or the
        bytes32 form; acts on Enter.
    start, end : ipywidgets.DatePicker
    profile : AddressProfile or None
        The last profile shown.
    summary : ipywidgets.HTML
        The profile's table.
    images : dict of ipywidgets.Image
        ``"activity"``.
    status, output, error, fetches
        As for :class:`Dashboard`.
    """

    def __init__(
        self, client: Any, *, address: str = "", start: Any = None, end: Any = None, days: int = 30
    ) -> None:
        super().__init__()
        d_start, d_end = _default_dates(days)
        self.address = w.Text(
            value="",
            placeholder="0x… (EVM, Sui, Aptos), base58 (Solana) or noble1…",
            description="Address",
            continuous_update=False,
            layout=w.Layout(width="36em"),
        )
        self.start = w.DatePicker(description="From", value=_as_date(start) or d_start)
        self.end = w.DatePicker(description="To", value=_last_day(end) or d_end)
        self._setup(client, [self.address, self.start, self.end])
        self.profile: addresses.AddressProfile | None = None
        self.summary = w.HTML(value="")
        activity = self._image("activity", width="98%")
        self.children = [
            self.banner,
            self.address,
            w.HBox([self.start, self.end]),
            self.status,
            self.summary,
            activity,
            self.output,
        ]
        for control in (self.address, self.start, self.end):
            control.observe(self._on_change, names="value")
        self._say("Enter an address and press Enter.")
        if address:
            self.address.value = address

    def _on_change(self, change: dict[str, Any]) -> None:
        self._run(self._lookup)

    def _lookup(self) -> None:
        text = self.address.value.strip()
        if not text:
            self.profile = None
            self.summary.value = ""
            self.images["activity"].value = b""
            self._say("Enter an address and press Enter.")
            return
        start, end = _window(self.start.value, self.end.value)
        try:
            prof = self._fetch(
                f"fetching transfers received by {text[:10]}",
                lambda: addresses.profile(text, client=self.client, start=start, end=end),
            )
        except ValueError:
            # a malformed address is rejected before any request: clear the old result
            self.profile = None
            self.summary.value = ""
            self.images["activity"].value = b""
            raise
        self.profile = prof
        explorers = " &middot; ".join(
            address_link(chain, prof.address, chain_registry.chain_label(chain))
            for chain in prof.destination_chains["chain"].astype(str)
        )
        self.summary.value = prof._repr_html_() + (
            f"<p>On the block explorers: {explorers}</p>" if explorers else ""
        )
        self.images["activity"].value = render_png(
            plots.plot_address_activity, prof, figsize=(12, 3.5)
        )
        self.draws += 1
        if prof.transfers == 0:
            self._say(
                f"{escape(prof.address)} received nothing from {start:%Y-%m-%d} to "
                f"{end:%Y-%m-%d} (end excluded).",
                style=_OK_STYLE,
            )
        else:
            self._say(
                f"{prof.transfers:,} transfers received, {prof.volume:,.2f} USDC",
                style=_OK_STYLE,
            )


def address_explorer(
    client: Any, *, address: str = "", start: Any = None, end: Any = None, days: int = 30
) -> AddressExplorer:
    """A text box for an address, showing its profile and activity.

    The address is checked before anything is fetched; a malformed one gets
    a message saying what to type instead.

    Parameters
    ----------
    client : cctx_research.Client
        ``client.received`` is called once per address and window.
    address : str, optional
        An address to show at once.
    start, end : date-like, optional
        The window ``[start, end)``, shown in the pickers as its first and last
        day (both included there); default the last ``days`` days.
    days : int, default 30

    Returns
    -------
    AddressExplorer

    Examples
    --------
    >>> ex = address_explorer(client)  # doctest: +SKIP
    >>> ex.address.value = "0x" + "ab" * 20  # doctest: +SKIP
    """
    return AddressExplorer(client, address=address, start=start, end=end, days=days)


# --------------------------------------------------------------------------
# transaction lookup


class TransactionLookup(_Panel):
    """Look up one transaction by hash (see :func:`transaction_lookup`).

    Attributes
    ----------
    tx_hash : ipywidgets.Text
        ``0x`` + 64 hex digits; acts on Enter.
    transaction : pandas.Series or None
        The last transaction shown.
    details : ipywidgets.HTML
    status, output, error, fetches
        As for :class:`Dashboard`.
    """

    def __init__(self, client: Any, *, tx_hash: str = "") -> None:
        super().__init__()
        self.tx_hash = w.Text(
            value="",
            placeholder="0x followed by 64 hex digits",
            description="Tx hash",
            continuous_update=False,
            layout=w.Layout(width="48em"),
        )
        self._setup(client, [self.tx_hash])
        self.transaction: pd.Series | None = None
        self.details = w.HTML(value="")
        self.children = [self.banner, self.tx_hash, self.status, self.details, self.output]
        self.tx_hash.observe(self._on_change, names="value")
        self._say("Enter a transaction hash and press Enter.")
        if tx_hash:
            self.tx_hash.value = tx_hash

    def _on_change(self, change: dict[str, Any]) -> None:
        self._run(self._lookup)

    def _lookup(self) -> None:
        text = self.tx_hash.value.strip()
        self.transaction = None
        self.details.value = ""
        if not text:
            self._say("Enter a transaction hash and press Enter.")
            return
        try:
            row = self._fetch(f"looking up {text[:12]}", lambda: self.client.transaction(text))
        except NotFoundError as exc:
            raise NotFoundError(
                f"no transaction has the hash {text}; check it, or look for it on the "
                "other chain of the transfer",
                operation=exc.operation,
                status=exc.status,
            ) from exc
        self.transaction = row
        kind = row.get("transaction_type", "transaction")
        self.details.value = field_table(row, links=_transaction_links(row))
        self.draws += 1
        self._say(f"{escape(kind)} found", style=_OK_STYLE)


def _transaction_links(row: pd.Series) -> dict[str, tuple[str, str]]:
    """Explorer links of a transaction's hash and addresses: each on the chain it lives on."""
    fields = {str(i) for i in row.index}
    tx_chain = "destination_chain" if row.get("transaction_type") == "mint" else "source_chain"
    wanted = {
        "tx_hash": ("tx", tx_chain),
        "mint_recipient": ("address", "destination_chain"),
        "message_sender": ("address", "source_chain"),
    }
    return {k: v for k, v in wanted.items() if k in fields and v[1] in fields}


def transaction_lookup(client: Any, *, tx_hash: str = "") -> TransactionLookup:
    """A text box for a transaction hash, showing the burn or mint it names.

    Parameters
    ----------
    client : cctx_research.Client
        ``client.transaction`` is called once per hash (and cached).
    tx_hash : str, optional
        A hash to show at once.

    Returns
    -------
    TransactionLookup

    Examples
    --------
    >>> tx = transaction_lookup(client)  # doctest: +SKIP
    >>> tx.tx_hash.value = "0x" + "ab" * 32  # doctest: +SKIP
    """
    return TransactionLookup(client, tx_hash=tx_hash)
