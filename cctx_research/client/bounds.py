"""Learning whether the service's ``startDate`` / ``endDate`` bounds are inclusive.

Listings can be filtered after the fact, so they ask for a second more on
each side and keep ``[start, end)``. Aggregates (volume, top senders)
cannot, so the client must know the bound semantics to ask for exactly the
whole seconds of ``[start, end)``. :func:`learn` finds them with a handful
of requests:

1. find one mint at a known second ``t`` (in the window asked for, or else
   in the service's default window);
2. count the mints listed at ``t-1``, ``t`` and ``t+1``: a listing of
   ``[t-2, t+2]``, paged by the same pager as every listing
   (:class:`~.planner.ChunkPages`), holds them all whatever the bounds mean;
3. compare what the volume report counts for ``[t, t]``, ``[t, t+1]`` and
   ``[t-1, t]`` with what each reading of the bounds predicts. Neighbouring
   mints cannot fool it, since the prediction uses their counts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pandas as pd

from ..errors import BadRequestError
from ..net import Answer, Keep
from ..times import to_unix, to_unix_ceil
from . import columns, parse
from .planner import ChunkPages, PageSize

__all__ = ["Post", "learn", "subwindow"]

logger = logging.getLogger(__name__)

Post = Callable[..., Answer]
"""``post(operation, body, *, check, keep) -> Answer`` (the session's call path)."""

Bounds = tuple[bool, bool]
"""``(start inclusive, end inclusive)``."""

ASSUMED: Bounds = (True, False)


def _second(record: dict[str, Any]) -> int:
    return int(parse.timestamps([record["timestamp"]]).asi8[0] // 1_000_000_000)


def _listing(post: Post, size: PageSize, a: int, b: int, keep: Keep) -> list[dict[str, Any]]:
    """Every mint record listed for the bounds ``[a, b]``."""
    records: list[dict[str, Any]] = []
    pager = ChunkPages(size)
    while pager.request is not None:
        request = pager.request
        try:
            answer = post(
                "transactions-mint",
                {"startDate": str(a), "endDate": str(b), "page": request.page,
                 "limit": request.limit},
                check=parse.check_mints,
                keep=keep,
            )  # fmt: skip
        except BadRequestError:
            if request.page == 1 and size.rejected(request.limit):
                pager = ChunkPages(size)  # a smaller page size, from the start
                continue
            raise
        got = parse.mint_records(answer.body)
        records.extend(got)
        pager.answered(len(got))
    return records


def learn(
    post: Post,
    start: pd.Timestamp,
    end: pd.Timestamp,
    *,
    size: PageSize,
    keep_for: Callable[[pd.Timestamp], Keep],
) -> Bounds:
    """The service's bound semantics, ``(start inclusive, end inclusive)``.

    Parameters
    ----------
    post : callable
        Sends one request (see :data:`Post`).
    start, end : Timestamp
        The window the caller asks about (a mint in it is the probe).
    size : PageSize
        The page size of mint listings.
    keep_for : callable
        How long replies about a window ending at a time may be kept.
    """
    t = _probe(post, start, end, keep_for)
    if t is None:
        logger.info("no mint found to learn the bound semantics; assuming [start, end)")
        return ASSUMED

    def ts(second: int) -> pd.Timestamp:
        return pd.Timestamp(second + 1, unit="s", tz="UTC")

    def mints_in(a: int, b: int) -> int:
        try:
            answer = post(
                "transactions-volume",
                {"startDate": str(a), "endDate": str(b)},
                check=parse.check_volume,
                keep=keep_for(ts(b)),
            )
        except BadRequestError:
            return 0
        return int(columns.ints([answer.body["mintCount"]], name="mintCount")[0])

    seen: dict[int, int] = {}
    for record in _listing(post, size, t - 2, t + 2, keep_for(ts(t + 2))):
        second = _second(record)
        seen[second] = seen.get(second, 0) + 1
    n = {d: seen.get(t + d, 0) for d in (-1, 0, 1)}
    # what the volume report would count for [t, t], [t, t+1], [t-1, t]
    # under each reading of the bounds, compared with what it does count
    expected = {
        (True, True): (n[0], n[0] + n[1], n[-1] + n[0]),
        (True, False): (0, n[0], n[-1]),
        (False, True): (0, n[1], n[0]),
        (False, False): (0, 0, 0),
    }
    observed = (mints_in(t, t), mints_in(t, t + 1), mints_in(t - 1, t))
    matches = [mode for mode, counts in expected.items() if counts == observed]
    if len(matches) != 1:
        logger.warning(
            "could not tell the service's bound semantics apart (%s); assuming [start, end)",
            "ambiguous" if matches else "inconsistent counts",
        )
        return ASSUMED
    mode = matches[0]
    logger.debug(
        "service bounds: startDate %s, endDate %s",
        "inclusive" if mode[0] else "exclusive",
        "inclusive" if mode[1] else "exclusive",
    )
    return mode


def _probe(
    post: Post, start: pd.Timestamp, end: pd.Timestamp, keep_for: Callable[[pd.Timestamp], Keep]
) -> int | None:
    """The second of one mint: in the window asked about, else any; ``None`` without mints."""
    for window in ({"startDate": str(to_unix(start)), "endDate": str(to_unix_ceil(end))}, {}):
        answer = post(
            "transactions-mint",
            {**window, "page": 1, "limit": 1},
            check=parse.check_mints,
            keep=keep_for(end) if window else Keep.FRESH,
        )
        records = parse.mint_records(answer.body)
        if records:
            return _second(records[0])
    return None


def subwindow(start: pd.Timestamp, end: pd.Timestamp, bounds: Bounds) -> dict[str, str] | None:
    """Request bounds selecting exactly the whole seconds of ``[start, end)``.

    ``None`` when the window holds no whole second.

    Examples
    --------
    >>> s, e = pd.Timestamp("2024-06-01", tz="UTC"), pd.Timestamp("2024-06-02", tz="UTC")
    >>> subwindow(s, e, (True, False))
    {'startDate': '1717200000', 'endDate': '1717286400'}
    >>> subwindow(s, e, (False, True))
    {'startDate': '1717199999', 'endDate': '1717286399'}
    """
    s, e = to_unix_ceil(start), to_unix_ceil(end)  # integer seconds t with start <= t < end
    if s >= e:
        return None
    start_incl, end_incl = bounds
    return {
        "startDate": str(s if start_incl else s - 1),
        "endDate": str(e - 1 if end_incl else e),
    }
