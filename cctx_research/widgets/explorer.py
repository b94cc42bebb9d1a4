"""The address explorer: one address's profile and activity."""

from __future__ import annotations

from typing import Any

import ipywidgets as w

from .. import chains as chain_registry
from .. import plots
from ..analysis import addresses
from ..views.markup import address_link, escape, html_table, pairs, render_png, usd, when
from ._panel import Panel, as_date, days_window, default_dates, last_day


class AddressExplorer(Panel):
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
        d_start, d_end = default_dates(days)
        self.address = w.Text(
            value="",
            placeholder="0x… (EVM, Sui, Aptos), base58 (Solana) or noble1…",
            description="Address",
            continuous_update=False,
            layout=w.Layout(width="36em"),
        )
        self.start = w.DatePicker(description="From", value=as_date(start) or d_start)
        self.end = w.DatePicker(description="To", value=last_day(end) or d_end)
        self._setup(client, [self.address, self.start, self.end])
        self.profile: addresses.AddressProfile | None = None
        self.summary = w.HTML(value="")
        activity = self._image("activity", width="98%")
        self.children = [
            self.style,
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
        start, end = days_window(self.start.value, self.end.value)
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
        self.summary.value = profile_html(prof) + (
            f"<p>On the block explorers: {explorers}</p>" if explorers else ""
        )
        self.images["activity"].value = render_png(
            plots.plot_address_activity, prof, figsize=(12, 3.5)
        )
        self.draws += 1
        if prof.transfers == 0:
            self._say_result(
                f"{escape(prof.address)} received nothing from {start:%Y-%m-%d} to "
                f"{end:%Y-%m-%d} (end excluded)."
            )
        else:
            self._say_result(f"{prof.transfers:,} transfers received, {prof.volume:,.2f} USDC")


def profile_html(prof: addresses.AddressProfile) -> str:
    """An address profile as the explorer shows it: a summary, then its top corridors
    and counterparties as formatted tables."""

    def chain_list(frame: Any) -> str:
        return ", ".join(chain_registry.chain_label(c) for c in frame["chain"].astype(str)) or "-"

    counterparties = (
        f"{len(prof.counterparties):,}"
        if prof.source == "transfers"
        else "not known (the recipient listing has no sender)"
    )
    summary = pairs(
        [
            ("Transfers", f"{prof.transfers:,}"),
            ("Volume", usd(prof.volume)),
            ("Typical ticket (median)", usd(prof.median_amount)),
            ("First seen", when(prof.first_seen)),
            ("Last seen", when(prof.last_seen)),
            ("Source chains", chain_list(prof.source_chains)),
            ("Destination chains", chain_list(prof.destination_chains)),
            ("Counterparties", counterparties),
        ]
    )
    parts = [f"<b>Address profile</b> <code>{escape(prof.address)}</code>", summary]
    if len(prof.corridors):
        parts.append("<b>Corridors</b>" + html_table(prof.corridors.head(10)))
    if len(prof.counterparties):
        parts.append(
            "<b>Top counterparties</b>"
            + html_table(prof.counterparties.head(10))
        )
    return "".join(parts)


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
