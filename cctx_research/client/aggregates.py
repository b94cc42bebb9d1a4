"""The aggregate calls: volume, volume history, top senders.

Aggregates cannot be filtered after the fact, so each asks for exactly the
whole seconds of ``[start, end)``, using the service's bound semantics
learned once per session (:mod:`.bounds`). These functions take the
client's :class:`~.session.Session` and use only its public methods; they
are the :class:`~cctx_research.client.Client` methods of the same names.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .. import arguments, schema
from ..net import RequestStats, Task, parse_age
from ..times import TimeLike, chunk_window, to_timestamp, to_unix_ceil
from . import bounds, parse

if TYPE_CHECKING:
    from ..net import RequestStats
    from .calls import Call
    from .session import Session

__all__ = ["last_record", "top_senders", "volume", "volume_history"]

logger = logging.getLogger(__name__)

_ZERO = {"mintVolume": 0, "burnVolume": 0, "mintCount": 0, "burnCount": 0}


def _mode(session: Session, call: Call, start: pd.Timestamp, end: pd.Timestamp) -> bounds.Bounds:
    """The bound semantics, learned unless the window holds no whole second."""
    if bounds.subwindow(start, end, bounds.ASSUMED) is None:
        return bounds.ASSUMED  # nothing will be asked
    return session.bounds(call, start, end)


def _volume_row(
    session: Session,
    call: Call,
    start: pd.Timestamp,
    end: pd.Timestamp,
    stats: RequestStats,
    mode: bounds.Bounds,
) -> dict[str, Any]:
    body = bounds.subwindow(start, end, mode)
    if body is None:
        return parse.volume(_ZERO, start=start, end=end, decimals=session.options.decimals)
    answer = session.post(
        "transactions-volume",
        body,
        stats=stats,
        check=parse.check_volume,
        keep=session.keep_for(end),
        cancel=call.cancel,
    )
    return parse.volume(answer.body, start=start, end=end, decimals=session.options.decimals)


def volume(
    session: Session, start: TimeLike | None = None, end: TimeLike | None = None
) -> pd.Series:
    """Mint and burn volume and counts in ``[start, end)`` (see ``Client.volume``)."""
    start_ts, end_ts = session.window(start, end)

    def fetch(call: Call) -> pd.Series:
        mode = _mode(session, call, start_ts, end_ts)
        row = _volume_row(session, call, start_ts, end_ts, call.stats, mode)
        series = parse.volume_frame([row]).iloc[0].copy()
        series.name = "volume"
        return series

    return session.call("volume", {"start": start_ts, "end": end_ts}, fetch)


def volume_history(
    session: Session, start: TimeLike, end: TimeLike, *, freq: str | pd.Timedelta = "1D"
) -> pd.DataFrame:
    """Volume and counts per ``freq`` bucket of ``[start, end)`` (see ``Client.volume_history``)."""
    if start is None or end is None:
        raise ValueError(
            "volume_history needs both start and end, e.g. ('2024-06-01', '2024-07-01')"
        )
    step = parse_age(freq, name="freq")
    if step <= pd.Timedelta(0):
        raise ValueError(f"freq must be a positive duration such as '1D' or '1h', got {freq!r}")
    start_ts, end_ts = session.window(start, end)
    buckets = list(chunk_window(start_ts, end_ts, step))
    if len(buckets) > 100_000:
        raise ValueError(
            f"{len(buckets)} buckets of {freq!r}: pass a larger freq or a shorter window"
        )

    def fetch(call: Call) -> pd.DataFrame:
        mode = _mode(session, call, start_ts, end_ts)  # learned once, up front
        rows: dict[int, dict[str, Any]] = {}

        def task(i: int, a: pd.Timestamp, b: pd.Timestamp) -> Task:
            return Task(i, lambda stats: _volume_row(session, call, a, b, stats, mode))

        def on_result(t: Task, value: dict[str, Any]) -> list[Task]:
            rows[t.tag] = value
            bar.advance()
            return []

        with call.progress(len(buckets), "transactions-volume") as bar:
            call.run([task(i, a, b) for i, (a, b) in enumerate(buckets)], on_result, bar)
        return parse.volume_frame([rows[i] for i in sorted(rows)])

    return session.call(
        "volume_history", {"start": start_ts, "end": end_ts, "freq": str(step)}, fetch
    )


def top_senders(
    session: Session,
    start: TimeLike | None = None,
    end: TimeLike | None = None,
    *,
    limit: int = 100,
) -> pd.DataFrame:
    """Addresses that sent the most volume in ``[start, end)`` (see ``Client.top_senders``)."""
    limit = arguments.integer(limit, "limit", low=1)
    start_ts, end_ts = session.window(start, end)

    def fetch(call: Call) -> pd.DataFrame:
        body = bounds.subwindow(start_ts, end_ts, _mode(session, call, start_ts, end_ts))
        if body is None:
            return schema.empty("top_addresses")
        answer = session.post(
            "stats-senders",
            {**body, "limit": limit},
            stats=call.stats,
            check=parse.check_top,
            keep=session.keep_for(end_ts),
            cancel=call.cancel,
        )
        frame = parse.top_addresses(
            answer.body["topRecipients"], decimals=session.options.decimals
        )
        frame = frame.sort_values(
            ["volume_raw", "address"], ascending=[False, True], kind="stable"
        ).head(limit)
        frame["rank"] = np.arange(1, len(frame) + 1, dtype=np.int64)
        return frame.reset_index(drop=True)

    return session.call("top_senders", {"start": start_ts, "end": end_ts, "limit": limit}, fetch)


def last_record(session: Session, before: TimeLike | None = None) -> pd.Timestamp | None:
    """When the last record the service holds happened (see ``Client.last_record``)."""
    cut = None
    if before is not None:
        cut = to_timestamp(before, name="before")
        if cut <= pd.Timestamp(0, tz="UTC"):
            raise ValueError(
                f"before={cut.isoformat()} is not after 1970-01-01, where the interface's "
                "times (Unix seconds) begin; pass a later time, or None for the service's now"
            )
    stats = RequestStats()
    began = time.perf_counter()
    found = session.coverage.last_before(None if cut is None else to_unix_ceil(cut), stats=stats)
    logger.info(
        "last_record: %d requests (%d over the network), %d cache hits, %.2f s",
        stats.requests, stats.network, stats.cache_hits, time.perf_counter() - began,
    )  # fmt: skip
    return None if found is None else pd.Timestamp(found, unit="s", tz="UTC")
