"""The report's sections over the interface's frames, and the registry of every section.

:data:`REGISTRY` lists every section in the order it appears; each entry
names its builder and says whether the data supports it; the sections that
need a ledger (burn and mint times, V2 fields) are in :mod:`.ledger_sections`,
:mod:`.link_sections` and :mod:`.actor_sections`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..views.markup import (
    cards,
    escape,
    html_table,
    note,
    pairs,
    share,
    synthetic_banner,
    usd,
    when,
)
from . import actor_sections, ledger_sections, link_sections
from .registry import Context, Part, SectionSpec, figure

__all__ = ["REGISTRY", "SECTIONS"]

def _kpis(ctx: Context) -> Sequence[Part]:
    r = ctx.data
    sizes = r["sizes"]
    median = sizes.quantiles.get(0.5, float("nan"))
    scope = f"transfers touching {', '.join(ctx.chains)}" if ctx.chains else "all chains"
    return (
        cards(
            [
                ("transfers minted in the window", f"{int(sizes.count):,}"),
                ("volume minted in the window", usd(sizes.volume)),
                ("median ticket", usd(median)),
                ("senders in the window", f"{r['senders']:,}"),
                ("recipients in the window", f"{r['recipients']:,}"),
            ]
        ),
        note(
            f"Scope: {scope}. Transfers and volume: those minted in the window (a transfer "
            "burned in it and not yet minted is not counted here). Each period ends at the "
            "end of the window and is compared with the period of the same length before "
            "it. 'no data': the data "
            "does not cover that period (it is not counted as zero); change is '-' when "
            "the earlier period holds no transfer."
        ),
        _kpi_table(r["kpis"]),
    )


def _kpi_table(kpis: pd.DataFrame) -> str:
    """The KPI frame as a table: one row per period and metric, values formatted by metric.

    A period the data does not cover reads "no data" (never 0); a change
    against an empty earlier period reads "-".
    """
    rows = []
    for (period, metric), row in kpis.iterrows():

        def fmt(v: float, metric: str = metric) -> str:
            if np.isnan(v):
                return NO_DATA
            return usd(v) if metric == "volume" else f"{v:,.0f}"

        current, previous, change = (float(row[k]) for k in ("current", "previous", "change"))
        if np.isnan(current) or np.isnan(previous):
            change_text, css = NO_DATA, "num"
        elif np.isnan(change):
            change_text, css = "-", "num"
        else:
            change_text = f"{'+' if change > 0 else ''}{change * 100:,.1f}%"
            css = "num up" if change > 0 else "num down" if change < 0 else "num"
        rows.append(
            f"<tr><td>{escape(period)}</td><td>{escape(metric)}</td>"
            f"<td>{escape(when(row['start']))}</td><td>{escape(when(row['end']))}</td>"
            f'<td class="num">{escape(fmt(current))}</td>'
            f'<td class="num">{escape(fmt(previous))}</td>'
            f'<td class="{css}">{escape(change_text)}</td></tr>'
        )
    head = "".join(
        f"<th>{h}</th>"
        for h in ("period", "metric", "from", "to", "this period", "the period before", "change")
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


NO_DATA = "no data"


def _flows(ctx: Context) -> Sequence[Part]:
    r = ctx.data
    return (
        figure(
            ctx,
            "flow-graph",
            "Corridor graph: chains as nodes, edge width by volume",
            "plot_flow_graph",
            r["graph"],
            figsize=(8.0, 6.0),
        ),
        figure(
            ctx,
            "flow-matrix",
            "Flow matrix: USDC from source chain (rows) to destination chain (columns)",
            "plot_flow_matrix",
            r["matrix"],
            figsize=(8.0, 6.5),
        ),
        "<h3>Top corridors</h3>",
        html_table(r["corridors"]),
        note(
            "Mean and median: the size of a transfer on the corridor. Share of volume and of "
            "transfers: the corridor's part of all the transfers in the window."
        ),
    )


def _net_flows(ctx: Context) -> Sequence[Part]:
    net = ctx.data["net"]
    return (
        figure(ctx, "net-flows", "Inflow minus outflow per chain (USDC)", "plot_net_flows", net),
        html_table(net),
    )


def _volume(ctx: Context) -> Sequence[Part]:
    return (
        figure(
            ctx,
            "volume",
            f"Minted volume per source chain, buckets of {ctx.freq} (UTC). A first or last "
            "bucket only partly inside the window (hatched) holds less than a whole bucket: "
            "its lower total is not a drop in activity",
            "plot_volume",
            ctx.data["timeseries"],
        ),
        *ledger_sections.in_flight(ctx),
    )


def _sizes(ctx: Context) -> Sequence[Part]:
    sizes = ctx.data["sizes"]
    return (
        figure(
            ctx,
            "size-distribution",
            "Transfers and volume per ticket-size class",
            "plot_size_distribution",
            sizes,
        ),
        html_table(sizes.classes),
        "<h3>Transfer amounts at each quantile</h3>",
        html_table(
            pd.DataFrame(
                {
                    "quantile": [f"{q:.0%}" for q in sizes.quantiles.index],
                    "amount": sizes.quantiles.to_numpy(dtype="float64"),
                }
            )
        ),
        note(
            "A class holds the transfers from its first amount up to, not including, the "
            "next. Quantile: that share of the transfers moved at most the amount beside it "
            "(50%: the median)." + _largest_ticket(ctx)
        ),
    )


def _largest_ticket(ctx: Context) -> str:
    """Where the amounts end, and why when the data is the sample (whose draws are capped)."""
    largest = float(ctx.data.get("largest", float("nan")))
    if np.isnan(largest):
        return ""
    said = f" The largest ticket in the window: {usd(largest)}."
    if ctx.provenance.get("synthetic"):
        said += (
            " The synthetic sample draws no ticket above 1,000,000 USDC (the largest "
            "transfer its calibration source, XChainDataGen, reports): its histogram ends "
            "there by construction."
        )
    return said


def _seasonality(ctx: Context) -> Sequence[Part]:
    return (
        figure(
            ctx,
            "seasonality",
            "Transfers by hour of day and day of week (UTC): the mean per day, each "
            "weekday-hour's total divided by how many times the window holds it (in "
            "brackets, how many of each weekday it holds), so a weekday the window holds "
            "five times does not look busier than one it holds four times",
            "plot_seasonality",
            ctx.data["seasonality"],
            figsize=(9.0, 4.0),
        ),
    )


def _addresses(ctx: Context) -> Sequence[Part]:
    r = ctx.data
    conc = r["concentration"]
    links = {"address": ("address", "chain")}
    return (
        "<h3>Top recipients (by volume received)</h3>",
        html_table(r["top_recipients"], links=links),
        "<h3>Top senders (by volume sent; often router contracts)</h3>",
        html_table(r["top_senders"], links=links),
        note(
            "Chain: where the address received (recipients) or sent (senders) most of "
            "its volume; the address links to that chain's block explorer. Share: the "
            "address's part of all the volume received (recipients) or sent (senders) in "
            "the window."
        ),
        "<h3>Concentration of volume received</h3>",
        pairs(
            [
                ("recipients", f"{conc.n:,}"),
                ("Gini", "-" if np.isnan(conc.gini) else f"{conc.gini:.3f}"),
                ("HHI", "-" if np.isnan(conc.hhi) else f"{conc.hhi:.4f}"),
                ("top 1 share", share(conc.top1_share)),
                ("top 10 share", share(conc.top10_share)),
                ("top 100 share", share(conc.top100_share)),
            ]
        ),
        figure(
            ctx,
            "lorenz",
            "Lorenz curve of volume received per address",
            "plot_lorenz",
            conc,
            figsize=(7.5, 5.0),  # the legend beside a square-ish plot
        ),
    )


def _provenance(ctx: Context) -> Sequence[Part]:
    prov = ctx.provenance
    parts: list[Part] = []
    if prov.get("synthetic"):
        parts.append(synthetic_banner(prov.get("source"), element_id="synthetic-banner"))
    parts.append(
        pairs(
            [
                ("source", prov["source"]),
                ("synthetic sample", "yes" if prov.get("synthetic") else "no"),
                ("window", f"{when(prov['start'])} to {when(prov['end'])} (end excluded)"),
                ("chains", prov["chains"]),
                ("generated at", when(prov["generated_at"])),
                ("library", f"cctx_research {prov['library_version']}"),
                ("requests", f"{prov['requests']:,}"),
                ("cache hits", f"{prov['cache_hits']:,}"),
            ]
        )
    )
    for reason in prov.get("left_out", ()):
        parts.append(note(f"Not in this report: {reason}."))
    ops = pd.DataFrame(prov["operations"])
    if len(ops):
        parts.append("<h3>Fetches</h3>")
        parts.append(html_table(ops))
    return parts


REGISTRY: tuple[SectionSpec, ...] = (
    SectionSpec("kpis", "Headline KPIs", _kpis),
    SectionSpec("flows", "Chain-to-chain flows", _flows),
    SectionSpec("net-flows", "Net flows per chain", _net_flows),
    SectionSpec("volume", "Volume over time", _volume),
    SectionSpec("sizes", "Ticket sizes", _sizes),
    SectionSpec("seasonality", "Seasonality", _seasonality),
    SectionSpec("addresses", "Top addresses and concentration", _addresses),
    *ledger_sections.SPECS,
    *link_sections.SPECS,
    *actor_sections.SPECS,
    SectionSpec("provenance", "Provenance", _provenance),
)
"""Every section, in the order it appears."""

SECTIONS: tuple[tuple[str, str], ...] = tuple((s.id, s.title) for s in REGISTRY)
"""``(id, title)`` of every section, in the order they appear."""
