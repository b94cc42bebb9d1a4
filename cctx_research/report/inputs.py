"""A report's inputs, resolved before anything is drawn: one window, one set of frames.

A report is drawn from one record, :class:`ReportInputs`, whatever the
caller holds: :func:`resolve_inputs` turns a client (two fetches), frames
(the mints and the volume history), or a ledger they are derived from,
with a window and chains, into that record. The window is resolved here
too (:func:`default_window`, and, without a client, the data's span), with
its time bucket (:func:`bucket_for`).

What fetching warned (a window past the data, say) is kept in the record,
both as the report's coverage notes and as the warnings themselves, for the
caller to show; the steps are told to the caller's callback
(:mod:`cctx_research.report.progress`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .. import times
from ..errors import CoverageWarning
from ..views.selection import chain_names, touching
from . import engine_ledger
from .ledger_sections import link_quality, scope_ledger
from .progress import ProgressCallback, quiet
from .sources import check, data_span, fetch, from_frames, mints_record

__all__ = ["DEFAULT_DAYS", "ReportInputs", "bucket_for", "default_window", "resolve_inputs"]

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


@dataclass(frozen=True, eq=False)
class ReportInputs:
    """Everything a report is drawn from: one window, its frames, what fetching said.

    Attributes
    ----------
    start, end : pandas.Timestamp
        The half-open window, tz-aware UTC.
    freq : str
        The window's time bucket (:func:`bucket_for`).
    chains : tuple of str or None
        The chains kept (canonical names), or None for all.
    as_of : pandas.Timestamp or None
        The clock pending transfers are aged at when the window is the
        data's span (no client), else None (the window's end).
    fetched : pandas.DataFrame
        The mints of the window as served (every chain): a ``"transfers"`` frame.
    transfers : pandas.DataFrame
        ``fetched`` kept to the transfers touching ``chains``.
    volume_history : pandas.DataFrame
        The mint and burn volume per bucket (every chain): a ``"volume"`` frame.
    ledger : pandas.DataFrame or None
        The ledger as given.
    scoped : pandas.DataFrame or None
        Its transfers burned in the window and touching ``chains``.
    links : pandas.DataFrame or None
        How its burns and mints were linked, per route (None: it does not say).
    attestations : pandas.DataFrame or None
        What Circle's attestation API said of the burns.
    notes : tuple of str
        The coverage warnings' messages, once each: the report shows them.
    warnings : tuple of warnings.WarningMessage
        Every warning raised while the frames were fetched, for the caller to show.
    records : dict
        The provenance of the frames left in an engine (``"transfers"``,
        ``"ledger"``), which cannot carry it themselves; empty for pandas frames.
    """

    start: pd.Timestamp
    end: pd.Timestamp
    freq: str
    chains: tuple[str, ...] | None
    as_of: pd.Timestamp | None
    fetched: pd.DataFrame
    transfers: pd.DataFrame
    volume_history: pd.DataFrame
    ledger: pd.DataFrame | None = None
    scoped: pd.DataFrame | None = None
    links: pd.DataFrame | None = None
    attestations: pd.DataFrame | None = None
    notes: tuple[str, ...] = ()
    warnings: tuple[warnings.WarningMessage, ...] = ()
    records: dict[str, Any] = field(default_factory=dict)


def resolve_inputs(
    client: Any = None,
    start: times.TimeLike | None = None,
    end: times.TimeLike | None = None,
    *,
    transfers: pd.DataFrame | None = None,
    volume_history: pd.DataFrame | None = None,
    ledger: pd.DataFrame | None = None,
    chains: Any = None,
    attestations: pd.DataFrame | None = None,
    on_step: ProgressCallback | None = None,
) -> ReportInputs:
    """Resolve the window and get its frames: from ``client``, or from the frames given.

    Parameters
    ----------
    client, start, end, transfers, volume_history, ledger, chains, attestations
        As for :func:`cctx_research.report.build`.
    on_step : callable, optional
        Told of the ``"transfers"`` and ``"volume history"`` steps
        (:data:`~cctx_research.report.progress.ProgressCallback`).

    Returns
    -------
    ReportInputs

    Raises
    ------
    ValueError, TypeError
        For a bad window or chain, a ``ledger`` that is not a DataFrame, a
        client given with frames, or neither a client nor enough frames.
    cctx_research.errors.DataError
        If a frame does not follow its schema.
    cctx_research.errors.CctxError
        When fetching fails.
    """
    record, ledger = engine_ledger.record_of(ledger), engine_ledger.unwrap(ledger)
    check(client, transfers, volume_history, ledger)
    start_ts, end_ts, as_of = _window(client, start, end, ledger, transfers)
    names = chain_names(chains)
    freq = bucket_for(start_ts, end_ts)
    scoped = None if ledger is None else scope_ledger(ledger, start_ts, end_ts, names)
    links = None if ledger is None else link_quality(ledger, start_ts, end_ts, names)
    records = {}
    if engine_ledger.is_lazy(ledger):
        records = {"ledger": record, "transfers": mints_record(record, ledger, start_ts, end_ts)}
    step = on_step or quiet
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        if client is not None:
            fetched, history = fetch(client, start_ts, end_ts, freq=freq, on_step=step)
        else:
            fetched, history = from_frames(
                transfers, volume_history, ledger, start_ts, end_ts, freq=freq
            )
            step("transfers", True)
            step("volume history", True)
        if engine_ledger.is_lazy(fetched):
            kept = engine_ledger.touching(fetched, names)
            _attach_record(history, records.get("ledger"), start_ts, end_ts, freq)
        else:
            kept = touching(fetched, names)
    notes = dict.fromkeys(str(w.message) for w in shown if issubclass(w.category, CoverageWarning))
    return ReportInputs(
        start=start_ts, end=end_ts, freq=freq, chains=names, as_of=as_of, fetched=fetched,
        transfers=kept, volume_history=history, ledger=ledger, scoped=scoped, links=links,
        attestations=attestations, notes=tuple(notes), warnings=tuple(shown), records=records,
    )  # fmt: skip


def _attach_record(history: pd.DataFrame, record: Any, start: Any, end: Any, freq: str) -> None:
    """The volume history of a lazy ledger gets the provenance a pandas one's would."""
    if record is not None:
        from ..provenance import attach

        attach(history, record.replace(
            operation="volume_history", window=(start, end), coverage=None,
            parameters={"start": start, "end": end, "freq": str(pd.Timedelta(freq))},
        ))  # fmt: skip


def _window(
    client: Any, start: Any, end: Any, ledger: Any, transfers: Any
) -> tuple[pd.Timestamp, pd.Timestamp, pd.Timestamp | None]:
    """``(start, end, as_of)``: without a client, missing ends are the data's span."""
    as_of = None
    if client is None and (start is None or end is None):
        held = ledger if isinstance(ledger, pd.DataFrame) or engine_ledger.is_lazy(ledger) else None
        first, after, last = data_span(held, transfers)
        if first is not None:
            start = first if start is None else start
            if end is None:  # the data's end is "now": ages, in flight and stuck
                end, as_of = after, last
    start_ts, end_ts = default_window(start, end)
    return start_ts, end_ts, as_of
