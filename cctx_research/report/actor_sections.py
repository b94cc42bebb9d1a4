"""The report's "Who moves the money" section: relayers, integrators, rebalancing.

It reads the ledger (both sides of each transfer): ``relayer`` is
``MessageReceived``'s caller, the integrator the depositing contract
(``message_sender``), named by :mod:`cctx_research.labels`. The analysis is
:mod:`cctx_research.analysis.actors` and :mod:`~cctx_research.analysis.movements`;
this module only lays it out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import narwhals.stable.v2 as nw
import pandas as pd

from ..analysis import actors, movements
from ..views.markup import cards, html_table, note, usd
from . import engine_ledger
from .ledger_sections import duration, ledger_of
from .registry import Context, Part, SectionSpec

__all__ = ["SPECS"]

_RELAYER_HEADERS = {
    "relayer_label": "relayer", "relayer": "address", "mints": "mints",
    "volume": "volume (USDC)", "mint_share": "share of mints", "volume_share": "share of volume",
    "median_relay_s": "median burn to mint",
}  # fmt: skip
_INTEGRATOR_HEADERS = {
    "integrator_label": "integrator", "integrator": "depositor", "transfers": "transfers",
    "end_users": "end users", "volume": "volume (USDC)",
    "volume_share": "share of volume", "routes": "routes", "v2_share": "share on V2",
}  # fmt: skip


def _named(table: pd.DataFrame, label: str, address: str) -> pd.DataFrame:
    """The label where there is one, else "unlabelled"; the address kept beside it."""
    out = table.copy()
    out[label] = out[label].astype("string").fillna("unlabelled")
    out[address] = out[address].astype("string").fillna("not in the data")
    return out


def _has_actors(ctx: Context) -> bool:
    ledger = ctx.ledger
    if ledger is None:
        return False
    names = nw.from_native(ledger).collect_schema().names()
    has_relayer = "relayer" in names and engine_ledger.any_row(
        ledger, ~nw.col("mint_timestamp").is_null() & ~nw.col("relayer").is_null()
    )
    return has_relayer or engine_ledger.any_row(ledger, ~nw.col("message_sender").is_null())


def _actors(ctx: Context) -> Sequence[Part]:
    ledger = ledger_of(ctx)
    relayed = actors.relayers(ledger)
    concentration = actors.hhi(relayed).iloc[0]
    integrated = actors.integrators(ledger)
    flagged = movements.rebalancing_share(ledger)
    # counted once: what movements.dedupe keeps, as the total less the continuing legs
    # (so a lazy ledger stays in its engine)
    continuing = movements.continuations(ledger)["amount_raw"].sum()
    net = float(engine_ledger.total(ledger, "amount_raw") - int(continuing)) / 1e6
    signers = "burn_tx_from" in nw.from_native(ledger).collect_schema().names() and (
        engine_ledger.any_row(ledger, ~nw.col("burn_tx_from").is_null())
    )
    ctx.data.update(relayers=relayed, integrators=integrated, rebalancing=flagged)
    parts: list[Part] = [_actor_cards(relayed, concentration, integrated, flagged, net)]
    shown = _named(relayed.head(ctx.top_n), "relayer_label", "relayer")
    shown = shown[list(_RELAYER_HEADERS)]
    shown["median_relay_s"] = [duration(v) for v in shown["median_relay_s"]]
    parts += [
        f"<h3>Relayers (the {len(shown)} largest by volume)</h3>",
        html_table(shown.rename(columns=_RELAYER_HEADERS)),
    ]
    shown = _named(integrated.head(ctx.top_n), "integrator_label", "integrator")
    parts += [
        f"<h3>Depositors (the {min(len(integrated), ctx.top_n)} largest by volume)</h3>",
        html_table(shown[list(_INTEGRATOR_HEADERS)].rename(columns=_INTEGRATOR_HEADERS)),
    ]
    parts += _rebalancing_routes(flagged, ctx.top_n)
    parts.append(note(_actors_note(signers=signers, synthetic=ctx.provenance.get("synthetic"))))
    return parts


def _actor_cards(
    relayed: pd.DataFrame,
    concentration: pd.Series,
    integrated: pd.DataFrame,
    flagged: pd.DataFrame,
    net: float,
) -> Part:
    """The headline numbers: relayers and their concentration, integrators, rebalancing."""
    gross = float(flagged["volume"].sum())
    rebalancing = float(flagged["rebalancing_volume"].sum())
    labelled = integrated["integrator_label"].notna()
    top = relayed[relayed["relayer"].notna()].head(1)
    return cards([
        ("relayers", f"{int(concentration['actors']):,}"),
        ("largest relayer's share of mints",
         f"{float(top['mint_share'].iloc[0]) * 100:.1f}%" if len(top) else "no data"),
        ("relayer concentration (HHI)", f"{float(concentration['hhi']):.3f}"),
        ("volume through labelled integrators",
         f"{float(integrated.loc[labelled, 'volume_share'].sum()) * 100:.1f}%"),
        ("rebalancing share of volume",
         f"{rebalancing / gross * 100:.1f}%" if gross else "no data"),
        ("volume burned in the window, counted once per movement", usd(net)),
    ])  # fmt: skip


def _rebalancing_routes(flagged: pd.DataFrame, top_n: int) -> list[Part]:
    """The routes with the most rebalancing volume, if any."""
    routes = flagged[flagged["rebalancing_volume"] > 0].sort_values(
        "rebalancing_volume", ascending=False
    ).head(top_n)
    if not len(routes):
        return []
    table = routes[["source_chain", "destination_chain", "count", "volume",
                    "rebalancing_volume", "volume_share"]].rename(columns={
        "source_chain": "from", "destination_chain": "to", "count": "transfers",
        "volume": "burned (USDC)", "rebalancing_volume": "of it rebalancing (USDC)",
        "volume_share": "rebalancing share of burned volume",
    })  # fmt: skip
    return [
        "<h3>Rebalancing per route</h3>",
        html_table(table),
        note(
            "Per route, the transfers burned in the window, minted or not: a route's burned "
            "volume here can differ from its minted volume in Top corridors (burned before "
            "the window and minted in it, or burned in it and not yet minted)."
        ),
    ]


def _actors_note(*, signers: bool, synthetic: Any) -> str:
    """What relayer, depositor, rebalancing and counted once mean here."""
    return (
        "Relayer: who called receiveMessage on the destination (MessageReceived's caller), "
        "who paid to mint; a transfer whose recipient relays itself counts under the "
        "recipient. Depositor: the burn's message sender, an application's contract when "
        "it burns for its users (end users: the distinct signers of its burns, where the "
        "data names them); labels from the bundled table (Circle's contracts and "
        "integrators' published addresses) or your own. Rebalancing: an operator moving "
        "its own money (the same labelled address or entity on both sides) or one end "
        "user burning A to B and back within a day (the end user: who signed the burn, "
        "else the depositor unless it is a labelled integrator's contract)."
        + ("" if signers else " This data names no burn's signer (burn_tx_from: receipts "
           "and cryo give it, eth_getLogs does not), so an unlabelled contract burning for "
           "many users is one end user here, and its users' opposite transfers read as "
           "its round trips.")
        + " Counted once: a leg that continues an "
        "earlier one (burned by the contract the earlier leg minted to) is left out, so a "
        "movement wrapped by an integrator is counted once."
        + (" The sample's relayers, integrator shares and rebalancing are synthetic."
           if synthetic else "")
    )

SPECS: tuple[SectionSpec, ...] = (
    SectionSpec(
        "actors",
        "Who moves the money",
        _actors,
        supports=_has_actors,
        unsupported=lambda ctx: (
            "No relayers or depositors: this ledger names neither (no MessageReceived caller, "
            "no message sender)."
            if ctx.ledger is not None
            else "Who moves the money needs a ledger (both sides of each transfer, with "
            "MessageReceived's caller): pass ledger= (report --data, or the sample)."
        ),
    ),
)
"""The actor section (after the ledger sections)."""
