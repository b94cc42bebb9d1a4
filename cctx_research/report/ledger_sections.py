"""The report's sections over a ledger: latency, pending and stuck transfers, V2 and fees.

They need both sides of each transfer (burn and mint times), which the
interface's frames lack: :func:`~cctx_research.report.build` takes them from
``ledger=`` (``cctx_research.load(...)``, ``load_sample()``, the file given
to ``report --data``). Without one, each section shows a one-line note
saying what would provide it.

The report judges the ledger as of the end of its window: it keeps the
transfers burned in ``[start, end)`` that touch the chains picked, and a
transfer minted at or after ``end`` counts as pending.
"""

from __future__ import annotations

from collections.abc import Sequence

import narwhals.stable.v2 as nw
import pandas as pd

from .. import chains as chain_registry
from .. import schema
from ..analysis import latency, pending, v2
from ..analysis.results import result_info
from ..views.markup import cards, html_table, note, usd, when
from ..views.values import duration
from . import engine_ledger
from .link_sections import WHERE, link_quality
from .registry import Context, Part, SectionSpec, figure

__all__ = ["SPECS", "duration", "in_flight", "ledger_of", "link_quality", "scope_ledger"]


def _durations(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """``frame`` with ``*_s`` columns shown as durations (``"12 min 30 s"``).

    The names stay: the table's headers (:mod:`cctx_research.views.columns`)
    say what each is (``median_s``: "median latency").
    """
    out = frame.copy()
    for column in columns:
        if column in out.columns:
            out[column] = [duration(v) for v in out[column].to_numpy(dtype="float64")]
    return out


def scope_ledger(
    ledger: pd.DataFrame,
    start: pd.Timestamp,
    end: pd.Timestamp,
    names: Sequence[str] | None,
) -> pd.DataFrame:
    """The ledger rows a report covers: burned in ``[start, end)``, touching ``names``.

    Parameters
    ----------
    ledger : pandas.DataFrame, or an engine's lazy frame
        A ``"ledger"`` frame; the V2 columns it lacks are added as nulls
        (on a copy). A lazy frame stays lazy: the rows are kept in its engine.
    start, end : pandas.Timestamp
    names : sequence of str or None
        Canonical chain names; None keeps every chain.

    Returns
    -------
    pandas.DataFrame or lazy frame
        With the ledger's provenance (pandas).

    Raises
    ------
    TypeError
        If ``ledger`` is not a DataFrame.
    cctx_research.errors.DataError
        If it does not follow the ledger schema (naming the columns).
    """
    if engine_ledger.is_lazy(ledger):
        return engine_ledger.scope(ledger, start, end, names)
    if not isinstance(ledger, pd.DataFrame):
        raise TypeError(
            "ledger must be a pandas DataFrame of kind 'ledger' (cctx_research.load(...), "
            f"cctx_research.load_sample()), got {type(ledger).__name__}"
        )
    frame = schema.complete(ledger.copy(deep=False), "ledger")
    schema.validate(frame, "ledger")
    burn = frame["burn_timestamp"]
    keep = ((burn >= start) & (burn < end)).fillna(False).to_numpy(dtype=bool)
    if names:
        wanted = {chain_registry.domain(n) for n in names}
        touching = frame["source_domain"].isin(wanted) | frame["destination_domain"].isin(wanted)
        keep = keep & touching.to_numpy(dtype=bool)
    out = frame.loc[keep].reset_index(drop=True)
    out.attrs = dict(ledger.attrs)
    return out


def ledger_of(ctx: Context) -> pd.DataFrame:
    """The report's ledger, for the sections whose predicate says it has one."""
    if ctx.ledger is None:  # the predicates keep builders from getting here
        raise ValueError("this section needs a ledger: pass ledger= to report.build")
    return ctx.ledger


def _has_burn_times(ctx: Context) -> bool:
    return ctx.ledger is not None and engine_ledger.has_burn_times(ctx.ledger)


def _completed_by_end(ctx: Context) -> pd.DataFrame:
    ledger = ledger_of(ctx)
    if engine_ledger.is_lazy(ledger):
        return engine_ledger.completed_by(ledger, ctx.end)
    minted = (ledger["mint_timestamp"] < ctx.end).fillna(False).to_numpy(dtype=bool)
    out = ledger.loc[minted | ledger["mint_timestamp"].isna().to_numpy()]
    out.attrs = dict(ledger.attrs)
    return out


def _supports_latency(ctx: Context) -> bool:
    if not _has_burn_times(ctx):
        return False
    return engine_ledger.any_row(_completed_by_end(ctx), ~nw.col("mint_timestamp").is_null())


def _supports_v2(ctx: Context) -> bool:
    if not _has_burn_times(ctx):
        return False
    return engine_ledger.any_row(ledger_of(ctx), nw.col("cctp_version") == 2)


def _latency(ctx: Context) -> Sequence[Part]:
    done = _completed_by_end(ctx)
    table = latency.by_route(done)
    ctx.data["latency"] = table
    # a fast transfer is minted in seconds, a standard one after the source's finality:
    # one median over both describes neither, so each route is split where both occur
    classes = latency.by_route(done, by="finality")
    split = classes["finality"].astype(str).nunique() > 1
    if split:
        ctx.data["latency_by_finality"] = classes
    shown = classes if split else table
    what = "per route and finality class (fast, standard)" if split else "per route"
    parts: list[Part] = [
        figure(
            ctx,
            "latency",
            f"Burn-to-mint latency {what}: median, with the 10th to 90th percentile",
            "plot_latency",
            shown,
            figsize=(9.0, max(3.5, (0.24 if split else 0.32) * len(shown) + 1.5)),
        ),
        html_table(_durations(shown, ["median_s", "p10_s", "p90_s"])),
    ]
    parts.append(
        note(
            "Burn to mint, over the transfers burned in the window and minted before its "
            "end; a transfer minted later counts as pending (next section). 10th and 90th "
            "percentile: a tenth of the transfers were faster than the first, a tenth slower "
            "than the second. Ambiguous links: transfers linked among identical ones in time "
            "order, whose latency is uncertain. Fast: attested at the source's confirmation "
            "(seconds); standard: after the source chain's finality (minutes)."
        )
    )
    return parts


def _pending(ctx: Context) -> Sequence[Part]:
    ledger = ledger_of(ctx)
    now = ctx.now
    total = pending.in_flight(ledger, as_of=now, by=None).iloc[0]
    routes = pending.in_flight(ledger, as_of=now)
    late = pending.stuck(ledger, as_of=now, attestations=ctx.attestations)
    ctx.data.update(in_flight_at_end=routes, stuck=late)
    factor = result_info(late).factor or 3.0
    parts: list[Part] = [_pending_cards(total, late, factor)]
    if len(routes):
        parts += [
            "<h3>Burned, not minted, per route</h3>",
            html_table(_durations(routes.drop(columns=["amount_raw"]), ["max_age_s"])),
        ]
    if len(late):
        parts += _stuck_parts(ctx, late)
    if ctx.attestations is not None and int(total["count"]):
        parts += _waiting_parts(ctx, ledger)
    clock = (
        f"{when(now)}, the data's last event" if ctx.as_of is not None else f"{when(now)}, "
        "the end of the window"
    )
    parts.append(
        note(
            f"Ages are measured at {clock}, over the transfers burned in the window. Pending "
            f"now: burned, not minted, and younger than {factor:g} times the median latency of "
            "transfers like it (same route and finality class, else the nearest broader group: "
            "'typical of'). Never minted: older than that; in flight in the data but most "
            "likely never to arrive (a mint the data lacks, an unclaimed transfer)."
        )
    )
    return parts


def _pending_cards(total: pd.Series, late: pd.DataFrame, factor: float) -> Part:
    """Burned and not minted: in all, pending now, never minted, and the oldest burn."""
    waiting = int(total["count"]) - len(late)
    waiting_usdc = max(float(total["amount"]) - float(late["amount"].sum()), 0.0)
    return cards(
        [
            ("burned, not minted", f"{int(total['count']):,}"),
            (f"pending now ({usd(waiting_usdc)})", f"{waiting:,}"),
            (f"never minted: older than {factor:g}x the usual latency "
             f"({usd(float(late['amount'].sum()))})", f"{len(late):,}"),
            ("oldest burned, not minted, since", when(total["oldest"])),
        ]
    )


def _stuck_parts(ctx: Context, late: pd.DataFrame) -> list[Part]:
    """The never-minted transfers: their figure and a table of the oldest ``ctx.top_n``."""
    top_n = ctx.top_n
    shown = late.head(top_n)[
        [
            "burn_tx_hash",
            "source_chain",
            "destination_chain",
            "finality",
            "amount",
            "burn_timestamp",
            "age_s",
            "reference_s",
            "reference",
            *(["waiting_on", "delay_reason"] if "waiting_on" in late.columns else []),
        ]
    ]
    shown = _durations(shown, ["age_s", "reference_s"]).rename(columns=_STUCK_HEADERS)
    return [
        figure(
            ctx,
            "stuck",
            "Never minted: age against amount",
            "plot_stuck",
            late,
            figsize=(9.0, 4.0),
        ),
        f"<h3>Never minted (the {min(len(late), top_n)} oldest of {len(late):,})</h3>",
        html_table(shown, links={"burn transaction": ("tx", "from")}),
    ]


def _waiting_parts(ctx: Context, ledger: pd.DataFrame) -> list[Part]:
    """What the pending transfers wait on, by Circle's attestation API (Iris)."""
    waits = pending.waiting(ledger, ctx.attestations, as_of=ctx.now)
    ctx.data["waiting"] = waits
    summary = (
        waits.assign(delay_reason=waits["delay_reason"].fillna("-"))
        .groupby(["waiting_on", "delay_reason"], observed=True)["amount"]
        .agg(["size", "sum"]).reset_index()
        .rename(columns={"waiting_on": "waiting on", "delay_reason": "Circle's delay reason",
                         "size": "transfers", "sum": "amount (USDC)"})
    )  # fmt: skip
    return [
        "<h3>What the transfers burned and not minted wait on (Circle's API)</h3>",
        html_table(summary),
    ]

_STUCK_HEADERS = {
    "burn_tx_hash": "burn transaction",
    "source_chain": "from",
    "destination_chain": "to",
    "amount": "amount (USDC)",
    "burn_timestamp": "burned at",
    "age_s": "age",
    "reference_s": "typical latency",
    "reference": "typical of",
    "waiting_on": "waiting on (Circle's API)",
    "delay_reason": "Circle's delay reason",
}


def in_flight(ctx: Context) -> Sequence[Part]:
    """The "USDC in flight" figure and its note: from the ledger when the report has one.

    With burn times, pending apart from never minted, hour by hour (daily
    beyond 120 days), split as the "Pending and stuck" section splits them;
    without, burns minus mints of the volume history, which cannot tell
    them apart and says so.
    """
    if _has_burn_times(ctx):
        step = "1D" if ctx.freq == "7D" else "1h"
        series = pending.timeseries(ledger_of(ctx), freq=step, as_of=ctx.now)
        ctx.data["in_flight_over_time"] = series
        factor = f"{result_info(series).factor:g}"
        every = "hour" if step == "1h" else "day"
        return (
            figure(
                ctx,
                "in-flight",
                f"USDC in flight, every {every}: pending (burned, not yet minted, younger "
                f"than {factor}x the median latency of transfers like it) apart from never "
                "minted (older than that), as 'Pending and stuck' splits them",
                "plot_in_flight",
                series,
            ),
            note(
                "From the ledger, over the transfers burned in the window (and touching the "
                "chains picked): USDC burned before it is not counted, so both lines start "
                "from zero. Transfers never minted pile up on their own line for as long as "
                "the window runs; the pending line is what is on its way."
            ),
        )
    return (
        figure(
            ctx,
            "in-flight",
            "USDC in flight: burns minus mints since the start of the window",
            "plot_in_flight",
            ctx.data["in_flight"],
        ),
        note(
            "From the interface's volume operation, which covers every chain whatever the "
            "chain selection; USDC already in flight before the window counts as zero. It "
            "cannot tell a transfer on its way from one never minted, and counts both: it "
            "climbs as never-minted transfers accumulate. With a ledger (ledger= to "
            "report.build, report --data) the two are drawn apart."
        ),
    )


def _v2_section(ctx: Context) -> Sequence[Part]:
    done = _completed_by_end(ctx)
    share = v2.fast_share(ledger_of(ctx))
    fees = v2.fees(done, by="finality")
    caps = v2.fee_caps(done)
    hooked = v2.hooks(ledger_of(ctx))
    ctx.data.update(fast_share=share, fees=fees, fee_caps=caps, hooks=hooked)
    parts: list[Part] = [
        figure(
            ctx,
            "fast-share",
            "Share of V2 transfers sent as fast transfers, per route",
            "plot_fast_share",
            share,
            figsize=(9.0, max(3.5, 0.32 * len(share) + 1.5)),
        ),
        html_table(share),
        note(
            "V2 transfers burned in the window. Fast: minimum finality threshold of at most "
            "1000 (attested at confirmation), standard above."
        ),
        *_fee_parts(fees),
        "<h3>Fee caps (max fee) against the fee taken</h3>",
        html_table(caps),
        note(
            "Max fee: the most the sender allowed the fee to be. Fee / max fee: how much of "
            "that cap the fee took (1: all of it); the fee at the cap: transfers whose fee "
            "reached it. Median max fee: the cap in basis points of the amount."
        ),
        "<h3>Hooks</h3>",
        html_table(hooked),
        note(
            "Hook data: instructions the sender attached for the destination to run after "
            "the mint (V2); transfers whose hook data is unknown are left out."
        ),
    ]
    return parts


def _fee_parts(fees: pd.DataFrame) -> list[Part]:
    """Fees of fast transfers in a table; standard ones apart, said free when they were.

    A standard transfer pays no fee today: mixed with fast ones, its zeros pull
    a route's fee rate under the median fee rate of the transfers that pay one.
    """
    fast = fees["finality"].astype(str) == "fast"
    rest = fees.loc[~fast]
    parts: list[Part] = [
        "<h3>Fees collected on fast transfers</h3>",
        html_table(fees.loc[fast].drop(columns="finality")),
    ]
    if len(rest) and int(rest["fee_raw"].sum()) == 0:
        parts.append(
            note(
                f"Standard transfers paid no fee: {int(rest['count'].sum()):,} standard V2 "
                f"transfers on {len(rest)} routes, 0 USDC collected."
            )
        )
    elif len(rest):
        parts += ["<h3>Fees collected on standard transfers</h3>", html_table(rest)]
    parts.append(
        note(
            "Fees are what the mint collected, over the V2 transfers minted by the end of the "
            "window whose fee is known; 1 bps (basis point) is 0.01% of the amount burned. "
            "Fee rate: the route's fees over its volume, so the largest transfers weigh "
            "most. Median fee rate: each transfer's own fee over its amount, the middle one: "
            "what a typical transfer paid."
        )
    )
    return parts


SPECS: tuple[SectionSpec, ...] = (
    SectionSpec(
        "latency",
        "Latency",
        _latency,
        supports=_supports_latency,
        unsupported=lambda ctx: (
            "No latency: no transfer burned in the window was minted before its end."
            if _has_burn_times(ctx)
            else "No latency: this data has no burn times (the interface's frames carry one "
            f"timestamp per transfer, the mint's); {WHERE}."
        ),
    ),
    SectionSpec(
        "pending",
        "Pending and stuck",
        _pending,
        supports=_has_burn_times,
        unsupported=lambda ctx: (
            "No pending or stuck transfers to judge: the ledger has no transfer burned in "
            "the window."
            if ctx.ledger is not None
            else "No pending or stuck transfers: this data has no burn times (the interface's "
            f"frames carry one timestamp per transfer, the mint's); {WHERE}."
        ),
    ),
    SectionSpec(
        "v2",
        "V2 fast transfers and fees",
        _v2_section,
        supports=_supports_v2,
        unsupported=lambda ctx: (
            "No CCTP V2 transfers burned in the window of this ledger."
            if _has_burn_times(ctx)
            else "No CCTP V2 fields in this data (finality threshold, max fee, fee collected, "
            f"hook data: the interface's frames have none); {WHERE}."
        ),
    ),
)
"""The ledger sections, in order (they come after the address section)."""
