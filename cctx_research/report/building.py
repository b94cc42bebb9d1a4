"""Building a report: get one window's frames, analyse them, build every registered section."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping
from typing import Any

import pandas as pd

from .. import provenance as _provenance
from .. import times
from .._version import __version__
from ..analysis import addresses, flows, volumes
from ..errors import CoverageWarning
from ..views.selection import chain_names, touching, with_main_chain
from .document import Report
from .ledger_sections import link_quality, scope_ledger
from .registry import Context, build_sections
from .sections import REGISTRY
from .sources import check, data_span, fetch, from_frames

__all__ = ["DEFAULT_DAYS", "bucket_for", "build", "default_window", "is_synthetic"]

logger = logging.getLogger(__name__)

DEFAULT_DAYS = 30
"""Length of the default window, in days, ending now."""


def default_window(
    start: times.TimeLike | None = None,
    end: times.TimeLike | None = None,
    *,
    days: int = DEFAULT_DAYS,
    now: times.TimeLike | None = None,
) -> tuple[pd.Timestamp, pd.Timestamp]:
    """Resolve a report window: missing ends default to the last ``days`` days.

    Parameters
    ----------
    start, end : time, optional
        Naive times mean UTC.
    days : int, default 30
    now : time, optional
        The clock (default: now, floored to the minute).

    Returns
    -------
    tuple of pandas.Timestamp
        ``(start, end)``, tz-aware UTC.

    Raises
    ------
    ValueError
        If ``start >= end``.

    Examples
    --------
    >>> start, end = default_window(now="2024-07-01")
    >>> start.isoformat(), end.isoformat()
    ('2024-06-01T00:00:00+00:00', '2024-07-01T00:00:00+00:00')
    """
    if isinstance(days, bool) or not isinstance(days, int) or days < 1:
        raise ValueError(f"days must be a positive int, got {days!r}")
    length = pd.Timedelta(days=days)
    if end is not None:
        end_ts = times.to_timestamp(end, name="end")
    elif start is not None:
        end_ts = times.to_timestamp(start, name="start") + length
        if now is None:
            end_ts = min(end_ts, pd.Timestamp.now(tz="UTC").ceil("min"))
    else:
        clock = pd.Timestamp.now(tz="UTC") if now is None else times.to_timestamp(now, name="now")
        end_ts = clock.floor("min")
    start_ts = times.to_timestamp(start, name="start") if start is not None else end_ts - length
    if start_ts >= end_ts:
        raise ValueError(
            f"start ({start_ts.isoformat()}) must be before end ({end_ts.isoformat()}); "
            "windows are half-open [start, end)"
        )
    return start_ts, end_ts


def bucket_for(start: pd.Timestamp, end: pd.Timestamp) -> str:
    """The time bucket used for a window: hours up to 3 days, days up to 120, then weeks."""
    length = end - start
    if length <= pd.Timedelta(days=3):
        return "1h"
    if length <= pd.Timedelta(days=120):
        return "1D"
    return "7D"


_SECRET_WORDS = ("key", "secret", "token", "password", "auth")


def _safe_parameters(parameters: Mapping[str, Any]) -> str:
    shown = []
    for k, v in parameters.items():
        if any(w in str(k).lower() for w in _SECRET_WORDS) or v is None:
            continue
        shown.append(f"{k}={v}")
    return ", ".join(shown)


def is_synthetic(*frames: Any) -> bool:
    """Whether any frame's provenance record flags synthetic data.

    Objects without ``attrs`` (no frame) are skipped.

    Examples
    --------
    >>> is_synthetic(pd.DataFrame())
    False
    """
    return _provenance.is_synthetic(*(f for f in frames if hasattr(f, "attrs")))


def _provenance_block(
    frames: Mapping[str, Any],
    *,
    start: pd.Timestamp,
    end: pd.Timestamp,
    chains: tuple[str, ...] | None,
    generated_at: pd.Timestamp,
    synthetic: bool,
) -> dict[str, Any]:
    operations = []
    sources: list[str] = []
    for label, frame in frames.items():
        record = _provenance.provenance(frame)
        if record is not None and record.source and record.source not in sources:
            sources.append(record.source)
        operations.append(
            {
                "data": label,
                "operation": (record.operation if record else None) or label,
                "parameters": _safe_parameters(record.params) if record else "",
                "requests": record.requests if record else 0,
                "cache_hits": record.cache_hits if record else 0,
            }
        )
    return {
        "source": "; ".join(sources) if sources else "unknown",
        "synthetic": synthetic,
        "start": start,
        "end": end,
        "chains": ", ".join(chains) if chains else "all",
        "generated_at": generated_at,
        "library_version": __version__,
        "requests": sum(o["requests"] for o in operations),
        "cache_hits": sum(o["cache_hits"] for o in operations),
        "operations": operations,
    }


def build(
    client: Any = None,
    start: times.TimeLike | None = None,
    end: times.TimeLike | None = None,
    *,
    transfers: pd.DataFrame | None = None,
    volume_history: pd.DataFrame | None = None,
    ledger: pd.DataFrame | None = None,
    chains: Any = None,
    title: str = "CCTP cross-chain USDC transfers",
    top_n: int = 10,
    progress: bool = False,
    attestations: pd.DataFrame | None = None,
) -> Report:
    """Analyse one window's frames and draw every section.

    The frames come from a client (two fetches), or are given: the mints
    (``transfers``) and the volume per bucket (``volume_history``), or a
    ``ledger`` they are derived from as the local service would serve it.

    Parameters
    ----------
    client : cctx_research.Client, optional
        From :func:`cctx_research.connect`. Only its public methods
        ``mints`` and ``volume_history`` are used (two fetches, both cached by
        the client). Without a client, pass frames.
    start, end : time, optional
        The half-open window ``[start, end)``; naive means UTC. Default: the
        30 days up to now (see :func:`default_window`); without a client,
        the span of the data (to the minute), and pending transfers are
        aged at its last event, as the page says.
    transfers : pandas.DataFrame, optional
        Without a client: the ``"transfers"`` frame to report on (kept to
        the window), e.g. ``client.mints(start, end)``. Default: the
        completed transfers of ``ledger`` as the interface lists them
        (:func:`cctx_research.report.sources.mints_from_ledger`).
    volume_history : pandas.DataFrame, optional
        Without a client: the ``"volume"`` frame per bucket of the window
        (``client.volume_history(start, end, freq=...)``, with the bucket of
        :func:`~cctx_research.report.building.bucket_for`). Default: computed
        from ``ledger`` (:func:`cctx_research.analysis.history.volume_history`).
    chains : chain or list of chains, optional
        Keep the transfers touching any of these chains (names, aliases or
        domain ids). The mint/burn volume and in-flight figures always cover
        every chain.
    title : str
        The report's heading.
    top_n : int, default 10
        Rows of the top-address and top-corridor tables.
    progress : bool, default False
        Show a progress bar (tqdm, on stderr or in the notebook) over the
        steps.
    ledger : pandas.DataFrame, optional
        A ``"ledger"`` frame (both sides of each transfer): what
        ``cctx_research.load(...)`` or ``load_sample()`` return, usually the
        data ``client`` serves. It feeds the "Latency", "Pending and stuck"
        and "V2 fast transfers and fees" sections, over the transfers
        burned in the window (and touching ``chains``), judged as of
        ``end``. Without it (or without burn times, or V2 fields, in it)
        those sections show a one-line note saying what would provide them.
    attestations : pandas.DataFrame, optional
        What Circle's attestation API said of the burns (the messages of
        :meth:`cctx_research.iris.IrisClient.messages`; a ``sync --iris``
        directory's ``iris/messages.parquet``): the never-minted table then
        says what each transfer waits on.

    Returns
    -------
    Report

    Raises
    ------
    ValueError, TypeError
        For a bad window or chain, a ``ledger`` that is not a DataFrame, a
        client given with frames, or neither a client nor enough frames.
    cctx_research.errors.DataError
        If a frame does not follow its schema.
    cctx_research.errors.CctxError
        When fetching fails.

    Examples
    --------
    >>> r = build(cctx.connect(), chains=["base", "arbitrum"])  # doctest: +SKIP
    >>> r.save("report.html")  # doctest: +SKIP

    With both sides of each transfer, the ledger sections too:

    >>> r = build(cctx.connect(), ledger=cctx.load_sample())  # doctest: +SKIP

    From a ledger held in memory, no client (the window: the data's days):

    >>> r = build(ledger=cctx.load("ledger.parquet"))  # doctest: +SKIP
    """
    check(client, transfers, volume_history, ledger)
    if not isinstance(title, str):
        raise TypeError(f"title must be a str, got {type(title).__name__}")
    as_of = None
    if client is None and (start is None or end is None):
        first, after, last = data_span(
            ledger if isinstance(ledger, pd.DataFrame) else None, transfers
        )
        if first is not None:
            start = first if start is None else start
            if end is None:  # the data's end is "now": ages, in flight and stuck
                end, as_of = after, last
    start_ts, end_ts = default_window(start, end)
    names = chain_names(chains)
    if isinstance(top_n, bool) or not isinstance(top_n, int) or top_n < 1:
        raise ValueError(f"top_n must be a positive int, got {top_n!r}")
    freq = bucket_for(start_ts, end_ts)
    scoped = None if ledger is None else scope_ledger(ledger, start_ts, end_ts, names)
    links = None if ledger is None else link_quality(ledger, start_ts, end_ts, names)

    from tqdm.auto import tqdm

    steps = ["transfers", "volume history", "analysis", "figures"]
    bar = tqdm(total=len(steps), desc="report", unit="step", disable=not progress, leave=False)
    try:
        with warnings.catch_warnings(record=True) as shown:
            warnings.simplefilter("always")
            if client is not None:
                fetched, history = fetch(client, start_ts, end_ts, freq=freq, bar=bar)
            else:
                fetched, history = from_frames(
                    transfers, volume_history, ledger, start_ts, end_ts, freq=freq
                )
                bar.update(2)
            transfers = touching(fetched, names)
        # the coverage warnings go on to the caller (CLI, notebook) and into the report
        notes = list(
            dict.fromkeys(str(w.message) for w in shown if issubclass(w.category, CoverageWarning))
        )
        for w in shown:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)

        bar.set_postfix_str("analysing")
        results = _analyse(transfers, history, end=end_ts, freq=freq, top_n=top_n)
        bar.update(1)

        bar.set_postfix_str("drawing")
        generated_at = pd.Timestamp.now(tz="UTC")
        frames = {"transfers": fetched, "volume history": history}
        if ledger is not None:
            frames["ledger"] = ledger
        synthetic = is_synthetic(*frames.values())
        prov = _provenance_block(
            frames,
            start=start_ts,
            end=end_ts,
            chains=names,
            generated_at=generated_at,
            synthetic=synthetic,
        )
        prov["coverage_notes"] = notes
        ctx = Context(
            start=start_ts,
            end=end_ts,
            freq=freq,
            chains=names,
            top_n=top_n,
            data=results,
            provenance=prov,
            ledger=scoped,
            links=links,
            as_of=as_of,
            attestations=attestations,
        )
        sections = build_sections(REGISTRY, ctx)
        if notes and fetched.empty:
            # nothing of the window is held: the note, not a page of zeros
            sections = [s for s in sections if s.id == "provenance"]
        bar.update(1)
    finally:
        bar.close()
    results["transfers"] = transfers
    results["volume_history"] = history
    if scoped is not None:
        results["ledger"] = scoped
    return Report(
        title=title,
        start=start_ts,
        end=end_ts,
        chains=names,
        sections=tuple(sections),
        provenance=prov,
        synthetic=synthetic,
        generated_at=generated_at,
        data=results,
    )


def _analyse(
    transfers: pd.DataFrame,
    history: pd.DataFrame,
    *,
    end: pd.Timestamp,
    freq: str,
    top_n: int,
) -> dict[str, Any]:
    recipients_all = addresses.top(transfers, role="recipient", n=None)
    return {
        "senders": int(transfers["message_sender"].nunique()),
        "recipients": int(transfers["mint_recipient"].nunique()),
        "kpis": volumes.kpis(transfers, now=end),
        "graph": flows.graph(transfers),
        "matrix": flows.matrix(transfers),
        "corridors": flows.corridors(transfers, n=top_n),
        "net": flows.net(transfers),
        "timeseries": volumes.timeseries(transfers, freq=freq, by="source_chain"),
        "in_flight": volumes.in_flight(history),
        "sizes": volumes.size_buckets(transfers),
        "seasonality": volumes.seasonality(transfers),
        "top_recipients": with_main_chain(recipients_all.head(top_n), transfers, role="recipient"),
        "top_senders": with_main_chain(
            addresses.top(transfers, role="sender", n=top_n), transfers, role="sender"
        ),
        "concentration": addresses.concentration(recipients_all["volume"]),
    }


