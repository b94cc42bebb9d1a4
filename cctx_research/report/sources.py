"""Where a report's frames come from: a client, or frames the caller holds.

A report reads two frames over its window, the mints (a ``"transfers"``
frame) and the mint and burn volume per bucket (a ``"volume"`` frame), and
optionally a ``"ledger"`` frame for its latency, pending and V2 sections.
:func:`fetch` asks a client for the first two; :func:`from_frames` takes
them as given, or derives them from a ledger exactly as the local service
would serve that ledger, so that a report on a file and a report on the
service that serves it say the same.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from .. import schema, times
from ..analysis.history import volume_history
from ..provenance import attach, provenance
from . import engine_ledger
from .progress import ProgressCallback, quiet

__all__ = ["check", "data_span", "fetch", "from_frames", "mints_from_ledger", "mints_record"]

_WHAT = (
    "a client (cctx_research.connect()), or frames: transfers= and volume_history=, "
    "or a ledger= (cctx_research.load(...), cctx_research.load_sample())"
)


def check(client: Any, transfers: Any, history: Any, ledger: Any) -> None:
    """Refuse a mix of sources, or none, saying what to pass.

    Raises
    ------
    TypeError
        If ``client`` is not a client, or a frame is not a DataFrame.
    ValueError
        If a client comes with ``transfers``/``volume_history``, or neither
        a client nor enough frames are given, or ``ledger`` has no rows.
    """
    if client is not None:
        if not callable(getattr(client, "mints", None)) or not callable(
            getattr(client, "volume_history", None)
        ):
            raise TypeError(
                f"client must be a cctx_research.Client (from connect()), got {client!r}"
            )
        if transfers is not None or history is not None:
            raise ValueError(
                "pass either a client or transfers=/volume_history=, not both: "
                "the client fetches those frames"
            )
        return
    for name, frame in (("transfers", transfers), ("volume_history", history)):
        if frame is not None and not isinstance(frame, pd.DataFrame):
            raise TypeError(
                f"{name} must be a pandas DataFrame (client.mints(...), "
                f"client.volume_history(...)), got {type(frame).__name__}"
            )
    if ledger is not None and not isinstance(ledger, pd.DataFrame) and not (
        engine_ledger.is_lazy(ledger)
    ):
        raise TypeError(
            "ledger must be a pandas DataFrame of kind 'ledger' (cctx_research.load(...), "
            "cctx_research.load_sample()) or an engine's lazy frame of one "
            f"(cctx_research.load(..., engine='duckdb')), got {type(ledger).__name__}"
        )
    if ledger is not None and transfers is None and not engine_ledger.count(ledger):
        # else every section draws empty 0-1 axes over a window of nothing
        raise ValueError(
            "ledger= has no rows: there is nothing to report on; pass a ledger with "
            "transfers (check what cctx.load read: cctx.provenance.provenance(ledger).count)"
        )
    if ledger is None and (transfers is None or history is None):
        missing = "volume_history=" if transfers is not None else "transfers="
        if transfers is None and history is None:
            raise ValueError(f"nothing to report on: pass {_WHAT}")
        raise ValueError(f"{missing} is missing: pass {_WHAT}")


def data_span(ledger: Any, transfers: pd.DataFrame | None) -> tuple[Any, Any, Any]:
    """The data's span as a window: ``(start, end, last event)``; Nones if there is no data.

    ``start`` is the first event floored to the minute, ``end`` the minute
    after the last event (the window is half-open), ``last`` the last event
    itself: the clock a report on this data ages pending transfers at.
    """
    if engine_ledger.is_lazy(ledger):
        return engine_ledger.span(ledger)
    if ledger is not None and {"burn_timestamp", "mint_timestamp"} <= set(ledger.columns):
        stamps = pd.concat([ledger["burn_timestamp"], ledger["mint_timestamp"]]).dropna()
    elif transfers is not None and "timestamp" in transfers.columns:
        stamps = transfers["timestamp"].dropna()
    else:
        return None, None, None
    if not len(stamps):
        return None, None, None
    last = stamps.max()
    return stamps.min().floor("min"), last.floor("min") + pd.Timedelta(minutes=1), last


def mints_from_ledger(
    ledger: pd.DataFrame, start: times.TimeLike, end: times.TimeLike
) -> pd.DataFrame:
    """The mints of ``[start, end)`` as the interface lists them from this ledger.

    Completed transfers by mint time, between every chain, as
    ``client.mints`` returns them by default.

    Returns
    -------
    pandas.DataFrame
        A ``"transfers"`` frame with the ledger's provenance, as operation
        ``"mints"`` over the window; its ``coverage`` is the part of the
        window between the ledger's first and last record (what a service
        serving the ledger would report), so the KPIs do not count days the
        data does not reach as zeros.
    """
    start_ts = times.to_timestamp(start, name="start")
    end_ts = times.to_timestamp(end, name="end")
    from ..ingest import transfers_from_ledger  # here: a report fed by a client never needs it

    frame = transfers_from_ledger(ledger)
    record = provenance(frame)
    keep = (
        frame["is_completed"]
        & (frame["timestamp"] >= start_ts)
        & (frame["timestamp"] < end_ts)
    )
    out = frame.loc[keep.to_numpy(dtype=bool)].reset_index(drop=True)
    out.attrs = dict(frame.attrs)
    if record is not None:
        attach(out, mints_record(record, ledger, start_ts, end_ts))
    return out


def _held(ledger: Any) -> tuple[Any, Any]:
    """The first and last time of any record of ``ledger`` (Nones when it has none)."""
    if engine_ledger.is_lazy(ledger):
        first, last = engine_ledger.events(ledger)
        return (None, None) if first is None else (first, last + pd.Timedelta(seconds=1))
    stamps = pd.concat([ledger["burn_timestamp"], ledger["mint_timestamp"]]).dropna()
    if not len(stamps):
        return None, None
    return stamps.min(), stamps.max() + pd.Timedelta(seconds=1)


def mints_record(record: Any, ledger: Any, start: pd.Timestamp, end: pd.Timestamp) -> Any:
    """The provenance of the mints of ``[start, end)`` drawn from a ledger of ``record``."""
    if record is None:
        return None
    first, last = _held(ledger)
    coverage = None
    if first is not None:
        lo, hi = max(first, start), min(last, end)
        coverage = (lo, hi) if lo < hi else (start, start)
    return record.replace(
        operation="mints", window=(start, end), coverage=coverage,
        parameters={"start": start, "end": end},
    )  # fmt: skip


def _within(frame: pd.DataFrame, start: pd.Timestamp, end: pd.Timestamp) -> pd.DataFrame:
    stamps = frame["timestamp"]
    keep = ((stamps >= start) & (stamps < end)).to_numpy(dtype=bool)
    if keep.all():
        return frame
    out = frame.loc[keep].reset_index(drop=True)
    out.attrs = dict(frame.attrs)
    return out


def fetch(
    client: Any,
    start: pd.Timestamp,
    end: pd.Timestamp,
    *,
    freq: str,
    on_step: ProgressCallback | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The mints and the volume history of ``[start, end)``, through ``client``.

    ``on_step`` is told when each fetch starts and is done (``"transfers"``,
    ``"volume history"``; see :mod:`cctx_research.report.progress`).
    """
    step = on_step or quiet
    step("transfers", False)
    fetched = client.mints(start, end)
    step("transfers", True)
    step("volume history", False)
    history = client.volume_history(start, end, freq=freq)
    step("volume history", True)
    return fetched, history


def from_frames(
    transfers: pd.DataFrame | None,
    history: pd.DataFrame | None,
    ledger: pd.DataFrame | None,
    start: pd.Timestamp,
    end: pd.Timestamp,
    *,
    freq: str,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The mints and the volume history of ``[start, end)`` from frames held in memory.

    Given frames are kept to the window; missing ones come from ``ledger``
    (:func:`mints_from_ledger`, :func:`cctx_research.analysis.history.volume_history`).

    Raises
    ------
    cctx_research.errors.DataError
        If a frame does not follow its schema.
    """
    if transfers is None and engine_ledger.is_lazy(ledger):
        transfers = engine_ledger.mints(ledger, start, end)
    elif transfers is None:
        transfers = mints_from_ledger(ledger, start, end)
    else:
        transfers = _within(schema.validate(transfers, "transfers"), start, end)
    if history is None:
        history = volume_history(ledger, start, end, freq=freq)
    else:
        history = _within(schema.validate(history, "volume"), start, end)
    return transfers, history
