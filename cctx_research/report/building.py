"""Building a report: resolve one window's inputs, then analyse them and draw every section.

:func:`build` is the one entry: it resolves what the caller holds into a
:class:`~cctx_research.report.inputs.ReportInputs` record
(:func:`~cctx_research.report.inputs.resolve_inputs`: a client, frames or a
ledger), shows the caller what fetching warned, and hands the record to
:func:`draw`, which knows one mode only. Progress goes to the caller's
callback (:mod:`cctx_research.report.progress`).
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Mapping
from contextlib import nullcontext
from typing import Any

import pandas as pd

from .. import provenance as _provenance
from .. import times
from .._version import __version__
from ..analysis import addresses, flows, volumes
from ..views import figures as _figures
from ..views.selection import with_main_chain
from . import engine_ledger
from .document import Report
from .inputs import DEFAULT_DAYS, ReportInputs, bucket_for, default_window, resolve_inputs
from .progress import ProgressCallback, progress_bar, quiet
from .registry import Context, build_sections
from .sections import REGISTRY

# DEFAULT_DAYS, bucket_for and default_window live with the inputs they resolve; this module
# names them too, as it always has
__all__ = ["DEFAULT_DAYS", "bucket_for", "build", "default_window", "draw", "is_synthetic"]

logger = logging.getLogger(__name__)


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


def _record(frame: Any) -> _provenance.Provenance | None:
    """A frame's provenance, or the record given for a frame left in an engine."""
    if isinstance(frame, _provenance.Provenance) or frame is None:
        return frame
    return _provenance.provenance(frame) if isinstance(frame, (pd.DataFrame, pd.Series)) else None


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
        record = _record(frame)
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


# The one function past ten parameters: these keywords are how README, the notebooks and
# users call it (tests/test_public_api_input.py binds them by name); past this point
# everything travels as a ReportInputs record.
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
    progress: bool | ProgressCallback = False,
    attestations: pd.DataFrame | None = None,
    figure_cache: bool | str | os.PathLike[str] = False,
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
        :func:`~cctx_research.report.inputs.bucket_for`). Default: computed
        from ``ledger`` (:func:`cctx_research.analysis.history.volume_history`).
    chains : chain or list of chains, optional
        Keep the transfers touching any of these chains (names, aliases or
        domain ids). The mint/burn volume and in-flight figures always cover
        every chain.
    title : str
        The report's heading.
    top_n : int, default 10
        Rows of the top-address and top-corridor tables.
    progress : bool or callable, default False
        Show a progress bar (tqdm, on stderr or in the notebook) over the
        steps; or a callback told of each step as it starts and ends
        (:data:`~cctx_research.report.progress.ProgressCallback`), for a
        caller that shows them its own way.
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
    figure_cache : bool or path, default False
        Keep each rendered figure on disk and use it again when the same figure
        (function, data, options, plotting code and library versions) is asked
        for: ``True`` in ``figures/`` of the cache directory (``CCTX_CACHE_DIR``),
        or in a directory given (:mod:`cctx_research.views.figures`). The command
        ``cctx-research report`` does so unless ``--no-cache``.

    Returns
    -------
    Report

    Warns
    -----
    cctx_research.errors.CoverageWarning
        When the data does not cover the whole window (also noted in the report).

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
    if not isinstance(title, str):
        raise TypeError(f"title must be a str, got {type(title).__name__}")
    if isinstance(top_n, bool) or not isinstance(top_n, int) or top_n < 1:
        raise ValueError(f"top_n must be a positive int, got {top_n!r}")
    figures = _figures.figure_cache(figure_cache)  # a wrong value: said before any work
    shown = nullcontext(progress) if callable(progress) else progress_bar(bool(progress))
    with shown as on_step:
        inputs = resolve_inputs(
            client, start, end, transfers=transfers, volume_history=volume_history,
            ledger=ledger, chains=chains, attestations=attestations, on_step=on_step,
        )  # fmt: skip
        # what fetching warned goes on to the caller (CLI, notebook), as it is in the report
        for w in inputs.warnings:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        return draw(inputs, title=title, top_n=top_n, on_step=on_step, figures=figures)


def draw(
    inputs: ReportInputs,
    *,
    title: str = "CCTP cross-chain USDC transfers",
    top_n: int = 10,
    on_step: ProgressCallback | None = None,
    figures: _figures.FigureCache | None = None,
) -> Report:
    """Analyse the resolved inputs and draw every section.

    Parameters
    ----------
    inputs : ReportInputs
        From :func:`~cctx_research.report.inputs.resolve_inputs`.
    title : str
        The report's heading.
    top_n : int, default 10
        Rows of the top-address and top-corridor tables.
    on_step : callable, optional
        Told of the ``"analysis"`` and ``"figures"`` steps.
    figures : FigureCache, optional
        Where rendered figures are kept and found again (default: every one drawn).

    Returns
    -------
    Report
    """
    step = on_step or quiet
    step("analysis", False)
    record = inputs.records.get("transfers")
    results = _analyse(
        inputs.transfers, inputs.volume_history, end=inputs.end, freq=inputs.freq, top_n=top_n,
        coverage=None if record is None else record.covered,
    )  # fmt: skip
    step("analysis", True)
    step("figures", False)
    generated_at = pd.Timestamp.now(tz="UTC")
    frames = {"transfers": inputs.fetched, "volume history": inputs.volume_history}
    if inputs.ledger is not None:
        frames["ledger"] = inputs.ledger
    # frames left in an engine carry no attrs: their provenance travels beside them
    frames = {k: inputs.records.get(k, v) for k, v in frames.items()}
    synthetic = any(r.synthetic for r in map(_record, frames.values()) if r is not None)
    prov = _provenance_block(
        frames,
        start=inputs.start,
        end=inputs.end,
        chains=inputs.chains,
        generated_at=generated_at,
        synthetic=synthetic,
    )
    prov["coverage_notes"] = list(inputs.notes)
    context = _context(inputs, results, prov, top_n)
    context.figures = figures
    sections = build_sections(REGISTRY, context)
    if inputs.notes and not engine_ledger.count(inputs.fetched):
        # nothing of the window is held: the note, not a page of zeros
        sections = [s for s in sections if s.id == "provenance"]
    step("figures", True)
    results["transfers"] = inputs.transfers
    results["volume_history"] = inputs.volume_history
    if inputs.scoped is not None:
        results["ledger"] = inputs.scoped
    return Report(
        title=title,
        start=inputs.start,
        end=inputs.end,
        chains=inputs.chains,
        sections=tuple(sections),
        provenance=prov,
        synthetic=synthetic,
        generated_at=generated_at,
        data=results,
    )


def _context(
    inputs: ReportInputs, results: dict[str, Any], prov: dict[str, Any], top_n: int
) -> Context:
    return Context(
        start=inputs.start,
        end=inputs.end,
        freq=inputs.freq,
        chains=inputs.chains,
        top_n=top_n,
        data=results,
        provenance=prov,
        ledger=inputs.scoped,
        links=inputs.links,
        as_of=inputs.as_of,
        attestations=inputs.attestations,
    )


def _analyse(
    transfers: pd.DataFrame,
    history: pd.DataFrame,
    *,
    end: pd.Timestamp,
    freq: str,
    top_n: int,
    coverage: tuple[pd.Timestamp, pd.Timestamp] | None = None,
) -> dict[str, Any]:
    recipients_all = addresses.top(transfers, role="recipient", n=None)
    return {
        "senders": engine_ledger.distinct(transfers, "message_sender"),
        "recipients": engine_ledger.distinct(transfers, "mint_recipient"),
        "kpis": volumes.kpis(transfers, now=end, coverage=coverage),
        "graph": flows.graph(transfers),
        "matrix": flows.matrix(transfers),
        "corridors": flows.corridors(transfers, n=top_n),
        "net": flows.net(transfers),
        "timeseries": volumes.timeseries(
            transfers, freq=freq, by="source_chain", coverage=coverage
        ),
        "in_flight": volumes.in_flight(history),
        "sizes": volumes.size_buckets(transfers),
        "largest": engine_ledger.largest(transfers),
        "seasonality": volumes.seasonality(transfers, coverage=coverage),
        "top_recipients": _main_chain(recipients_all.head(top_n), transfers, role="recipient"),
        "top_senders": _main_chain(
            addresses.top(transfers, role="sender", n=top_n), transfers, role="sender"
        ),
        "concentration": addresses.concentration(recipients_all["volume"]),
    }




_SIDE = {"recipient": ("mint_recipient", "destination_chain"),
         "sender": ("message_sender", "source_chain")}  # fmt: skip


def _main_chain(ranked: pd.DataFrame, transfers: Any, *, role: str) -> pd.DataFrame:
    """:func:`~cctx_research.views.selection.with_main_chain`; over lazy transfers, from the
    volume per address and chain summed in the engine (sums of sums: the same totals)."""
    if engine_ledger.is_lazy(transfers):
        transfers = engine_ledger.sums_by(transfers, _SIDE[role])
    return with_main_chain(ranked, transfers, role=role)
