"""The aggregate calls of :class:`~.core.Client`: volume, volume history, top senders.

Aggregates cannot be filtered after the fact, so each asks for exactly the
whole seconds of ``[start, end)``, using the service's bound semantics
learned once per client (:mod:`.bounds`). These functions are the
client's methods of the same names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .. import arguments, schema
from ..times import TimeLike, chunk_window
from . import bounds, parse
from .cache import parse_age
from .runner import Task

if TYPE_CHECKING:
    from .calls import Call
    from .core import Client
    from .http import RequestStats

__all__ = ["top_senders", "volume", "volume_history"]

_ZERO = {"mintVolume": 0, "burnVolume": 0, "mintCount": 0, "burnCount": 0}


def _mode(client: Client, call: Call, start: pd.Timestamp, end: pd.Timestamp) -> bounds.Bounds:
    """The bound semantics, learned unless the window holds no whole second."""
    if bounds.subwindow(start, end, bounds.ASSUMED) is None:
        return bounds.ASSUMED  # nothing will be asked
    return client._bound_semantics(call, start, end)


def _volume_row(
    client: Client,
    call: Call,
    start: pd.Timestamp,
    end: pd.Timestamp,
    stats: RequestStats,
    mode: bounds.Bounds,
) -> dict[str, Any]:
    body = bounds.subwindow(start, end, mode)
    if body is None:
        return parse.volume(_ZERO, start=start, end=end, decimals=client.decimals)
    answer = client._post(
        "transactions-volume",
        body,
        stats=stats,
        check=parse.check_volume,
        forever=client._settled(end),
        cancel=call.cancel,
    )
    return parse.volume(answer.body, start=start, end=end, decimals=client.decimals)


def volume(client: Client, start: TimeLike | None = None, end: TimeLike | None = None) -> pd.Series:
    """Mint and burn volume and counts in ``[start, end)``.

    Returns
    -------
    pandas.Series
        One row of the ``volume`` frame: ``timestamp`` (start), ``end``,
        ``mint_volume``, ``burn_volume``, ``total_volume``, their raw
        integers, and the counts.
    """
    start_ts, end_ts = client._window(start, end)

    def fetch(call: Call) -> pd.Series:
        mode = _mode(client, call, start_ts, end_ts)
        row = _volume_row(client, call, start_ts, end_ts, call.stats, mode)
        series = parse.volume_frame([row]).iloc[0].copy()
        series.name = "volume"
        return series

    return client._call("volume", {"start": start_ts, "end": end_ts}, fetch)


def volume_history(
    client: Client, start: TimeLike, end: TimeLike, *, freq: str | pd.Timedelta = "1D"
) -> pd.DataFrame:
    """Mint and burn volume and counts per ``freq`` bucket of ``[start, end)``.

    One volume request per bucket, run concurrently. Bucket edges fall on
    multiples of ``freq`` since the Unix epoch (UTC midnights for days); the
    first and last buckets are clipped to the window.

    Returns
    -------
    pandas.DataFrame
        The ``volume`` frame, one row per bucket, ``timestamp`` its start.
    """
    if start is None or end is None:
        raise ValueError(
            "volume_history needs both start and end, e.g. ('2024-06-01', '2024-07-01')"
        )
    step = parse_age(freq, name="freq")
    if step <= pd.Timedelta(0):
        raise ValueError(f"freq must be a positive duration such as '1D' or '1h', got {freq!r}")
    start_ts, end_ts = client._window(start, end)
    buckets = list(chunk_window(start_ts, end_ts, step))
    if len(buckets) > 100_000:
        raise ValueError(
            f"{len(buckets)} buckets of {freq!r}: pass a larger freq or a shorter window"
        )

    def fetch(call: Call) -> pd.DataFrame:
        mode = _mode(client, call, start_ts, end_ts)  # learned once, up front
        rows: dict[int, dict[str, Any]] = {}

        def task(i: int, a: pd.Timestamp, b: pd.Timestamp) -> Task:
            return Task(i, lambda stats: _volume_row(client, call, a, b, stats, mode))

        def on_result(t: Task, value: dict[str, Any]) -> list[Task]:
            rows[t.tag] = value
            bar.advance()
            return []

        with call.progress(len(buckets), "transactions-volume") as bar:
            call.run([task(i, a, b) for i, (a, b) in enumerate(buckets)], on_result, bar)
        return parse.volume_frame([rows[i] for i in sorted(rows)])

    return client._call(
        "volume_history", {"start": start_ts, "end": end_ts, "freq": str(step)}, fetch
    )


def top_senders(
    client: Client,
    start: TimeLike | None = None,
    end: TimeLike | None = None,
    *,
    limit: int = 100,
) -> pd.DataFrame:
    """Addresses that sent the most volume in ``[start, end)``.

    Parameters
    ----------
    limit : int, default 100
        How many addresses.

    Returns
    -------
    pandas.DataFrame
        The ``top_addresses`` frame, ranked by volume (descending, ties by address).
    """
    limit = arguments.integer(limit, "limit", low=1)
    start_ts, end_ts = client._window(start, end)

    def fetch(call: Call) -> pd.DataFrame:
        body = bounds.subwindow(start_ts, end_ts, _mode(client, call, start_ts, end_ts))
        if body is None:
            return schema.empty("top_addresses")
        answer = client._post(
            "stats-senders",
            {**body, "limit": limit},
            stats=call.stats,
            check=parse.check_top,
            forever=client._settled(end_ts),
            cancel=call.cancel,
        )
        frame = parse.top_addresses(answer.body["topRecipients"], decimals=client.decimals)
        frame = frame.sort_values(
            ["volume_raw", "address"], ascending=[False, True], kind="stable"
        ).head(limit)
        frame["rank"] = np.arange(1, len(frame) + 1, dtype=np.int64)
        return frame.reset_index(drop=True)

    return client._call("top_senders", {"start": start_ts, "end": end_ts, "limit": limit}, fetch)
