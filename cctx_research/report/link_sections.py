"""The report's "Burns linked to mints" section: how a loaded ledger's burns found their mints.

It counts, per route, the burns, the mints and how they were joined (the
ledger's ``pairing`` column, :data:`cctx_research.schema.LEDGER_PAIRING`).
A ledger that does not say (the synthetic sample, whose transfers are made
with both sides; a transfers file) has nothing to count: the section is
then left out, and the provenance block says why in one line. Without a
ledger, it is a one-line note saying what would provide it, as the other
ledger sections are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import narwhals.stable.v2 as nw
import pandas as pd

from .. import chains as chain_registry
from .. import schema
from ..analysis import linking
from ..provenance import is_synthetic
from ..views.markup import cards, html_table, note
from . import engine_ledger
from .registry import Context, Part, SectionSpec

__all__ = ["SPECS", "WHERE", "link_quality"]

WHERE = (
    "pass ledger= to report.build (cctx_research.load(...) of event logs or exports, "
    "cctx_research.load_sample()), or run `cctx-research report --data FILE`"
)
"""What gives a report a ledger, for the notes of the sections that need one."""


def link_quality(
    ledger: pd.DataFrame,
    start: pd.Timestamp,
    end: pd.Timestamp,
    names: Sequence[str] | None,
) -> pd.DataFrame | None:
    """Links per route over the transfers burned in ``[start, end)`` and the mint-only rows
    minted in it; None when the ledger does not say how it was linked (the synthetic sample).
    A lazy ledger is counted in its engine."""
    if engine_ledger.is_lazy(ledger):
        return _engine_link_quality(ledger, start, end, names)
    frame = schema.complete(ledger.copy(deep=False), "ledger")
    if not frame["pairing"].notna().any():
        return None
    when = frame["burn_timestamp"].fillna(frame["mint_timestamp"])
    keep = ((when >= start) & (when < end)).fillna(False).to_numpy(dtype=bool)
    if names:
        wanted = {chain_registry.domain(n) for n in names}
        touching = frame["source_domain"].isin(wanted) | frame["destination_domain"].isin(wanted)
        keep = keep & touching.to_numpy(dtype=bool)
    return linking.quality(frame.loc[keep], freq=None)


def _engine_link_quality(
    ledger: Any, start: pd.Timestamp, end: pd.Timestamp, names: Sequence[str] | None
) -> pd.DataFrame | None:
    if "pairing" not in nw.from_native(ledger).collect_schema().names():
        return None
    if not engine_ledger.any_row(ledger, ~nw.col("pairing").is_null()):
        return None
    when = nw.coalesce("burn_timestamp", "mint_timestamp")
    keep = when.is_between(nw.lit(start), nw.lit(end), closed="left").fill_null(False)
    if names:
        wanted = sorted({chain_registry.domain(n) for n in names})
        keep = keep & (
            nw.col("source_domain").is_in(wanted) | nw.col("destination_domain").is_in(wanted)
        )
    frame = nw.from_native(ledger)
    lf = frame.lazy() if isinstance(frame, nw.DataFrame) else frame
    return linking.quality(lf.filter(keep).to_native(), freq=None)


def _links(ctx: Context) -> Sequence[Part]:
    table = ctx.links
    ctx.data["links"] = table
    totals = table[list(linking.COUNTS)].sum()
    rate = totals["linked"] / totals["mints"] if totals["mints"] else float("nan")
    shown = table[
        ["source_chain", "destination_chain", "burns", "mints", "linked", "ambiguous",
         "pending", "mint_only", "link_rate"]
    ].rename(columns={"mint_only": "mint only", "link_rate": "link rate"})
    return [
        cards(
            [
                ("burns", f"{int(totals['burns']):,}"),
                ("mints", f"{int(totals['mints']):,}"),
                ("linked", f"{int(totals['linked']):,}"),
                ("mints linked to their burn", "no data" if rate != rate else f"{rate:.1%}"),
            ]
        ),
        html_table(shown),
        note(
            "How each burn found its mint: by the nonce (V1), by the attested nonce, by the "
            "fields both sides carry (V2), or as the source paired them; ambiguous: identical "
            "transfers linked in time order (their latency is uncertain). Mint only: the burn is "
            "not in the data; pending: no mint yet. Link rate: the share of the mints whose "
            "burn is linked."
        ),
    ]


def _links_left_out(ctx: Context) -> str:
    """Why "Burns linked to mints" is not in a report whose ledger does not say how it was
    linked (empty when the section is in): a section of "no link data" would be empty."""
    if ctx.ledger is None or ctx.links is not None:
        return ""
    lazy = engine_ledger.is_lazy(ctx.ledger)
    if ctx.provenance.get("synthetic") if lazy else is_synthetic(ctx.ledger):
        return (
            "the synthetic sample makes both sides of each transfer together, so it has no "
            "linking to judge (a ledger loaded with cctx_research.load(...) says how each "
            "burn found its mint)"
        )
    return (
        "this ledger does not say how its burns and mints were joined (its pairing column "
        "is empty: a transfers file); cctx_research.load(...) of event logs or exports says it"
    )


SPECS: tuple[SectionSpec, ...] = (
    SectionSpec(
        "links",
        "Burns linked to mints",
        _links,
        supports=lambda ctx: ctx.links is not None and len(ctx.links) > 0,
        unsupported=lambda ctx: (
            "No links to count: the ledger has no transfer burned or minted in the window."
            if ctx.ledger is not None
            else f"No link data: this report has no ledger; {WHERE}."
        ),
        left_out=_links_left_out,
    ),
)
"""The links section (it comes after the other ledger sections)."""
