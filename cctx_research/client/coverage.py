"""Coverage: does a pull's window lie inside what the service holds?

A window that reaches past the service's clock, starts before its first
record or ends after its last one returns an empty or a shortened frame
that looks like a quiet period. The client says so, once per pull, with a
:class:`~cctx_research.errors.CoverageWarning` naming what the data covers.

How the client learns what the service holds, through the interface only
------------------------------------------------------------------------

* **The service's clock.** ``transactions-volume`` with an empty body
  answers for its default window, "1 day before now" to "now", and echoes
  ``endDate``: the service's "now" in Unix seconds. The client asks once,
  bypassing the cache, and keeps the offset from its own clock
  (:attr:`Probe.skew`); the horizon of a pull is the earlier of the two
  clocks.
* **What it holds.** The volume operation's counts (``mintCount +
  burnCount``) over ``[0, start)`` and ``[end, horizon)`` say whether there
  is data before and after the window: two cheap requests, whose answers
  are remembered (data does not disappear: once there is data before
  ``start``, there is data before any later start). Only when one side is
  empty does the client bisect for the first or last record, to the
  minute, with a request per step (about 16 for a month); those windows
  are cached like any other volume request.
* **Tolerance.** A window may end up to :data:`CLOCK_TOLERANCE` (a
  minute) past the horizon unreported. A gap of up to :data:`TOLERANCE` (one hour) at either end
  is not reported: quiet minutes are ordinary, a quiet hour across every
  chain is not. The counts treat ``startDate``/``endDate`` as inclusive
  seconds; whichever way the service reads them, the error is one second,
  far below the minute the bisection resolves.

Offline, nothing can be asked: the check compares the window with the
client's clock only.

The check runs beside the pull, in one of the call's worker slots
(:meth:`~.calls.Call.beside`), so over a real link its round trips hide
under the pull's; :meth:`Probe.check` makes the requests and
:meth:`Probe.covered` warns, on the calling thread.

The pure part is :func:`assess`, a generator that yields the windows it
wants counted and returns a :class:`Verdict`; :class:`Probe` runs it with
a counting function the client supplies, so the logic is tested without
HTTP and the client keeps all the IO.
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import pandas as pd

from ..errors import CctxError, CoverageWarning
from ..net import Keep
from .cache_policy import CachePolicy

__all__ = [
    "CLOCK_TOLERANCE", "TOLERANCE", "Asker", "Probe", "Verdict", "assess", "describe",
    "for_session",
]  # fmt: skip

logger = logging.getLogger(__name__)

TOLERANCE = 3600
"""Seconds of empty data at either end of a window that are not reported."""
CLOCK_TOLERANCE = 60
"""Seconds a window may reach past the clock unreported (latency, rounding)."""
_RESOLUTION = 60



@dataclass(frozen=True)
class Verdict:
    """What a window ``[start, end)`` has of the data.

    Attributes
    ----------
    start, end : int
        The window, Unix seconds.
    horizon : int
        The earlier of the service's and the client's clocks.
    first, last : int or None
        The first and last record of the data, to the minute, when the
        check had to find them (``None``: they lie outside the window).
    empty : bool
        The service holds no data at all up to its clock.
    """

    start: int
    end: int
    horizon: int
    first: int | None = None
    last: int | None = None
    empty: bool = False

    @property
    def covered(self) -> tuple[int, int] | None:
        """The part of the window the data covers, or ``None`` if none of it."""
        if self.empty:
            return None
        lo = self.start if self.first is None else max(self.start, self.first)
        hi = min(self.end, self.horizon)
        if self.last is not None:
            hi = min(hi, self.last + _RESOLUTION)
        return (lo, hi) if lo < hi else None

    @property
    def complete(self) -> bool:
        """The data covers the whole window (within :data:`TOLERANCE`)."""
        span = self.covered
        return span is not None and span[0] - self.start <= TOLERANCE and (
            self.end - span[1] <= TOLERANCE
        )


def assess(start: int, end: int, horizon: int, *, before: bool | None = None,
           after: bool | None = None,
           first: int | None = None) -> Generator[tuple[int, int], int, Verdict]:
    """Decide what of ``[start, end)`` the data covers; yields windows to count.

    Send the number of records in each yielded ``(a, b)`` back; the return
    value (``StopIteration.value``) is the :class:`Verdict`.

    Parameters
    ----------
    start, end : int
        The window, Unix seconds.
    horizon : int
        The earlier of the service's and the client's clocks.
    before, after : bool, optional
        Already known: there is data before ``start`` / after ``end``.
    first : int, optional
        Already known: the first record the data holds, to the minute (a
        :attr:`Verdict.first` found before). The first record of a service
        does not move, so a window that starts before it needs neither the
        count before it nor the bisection.

    Examples
    --------
    >>> data = [1_000_000 + 60 * i for i in range(100)]  # one record a minute
    >>> def run(gen):
    ...     try:
    ...         window = next(gen)
    ...         while True:
    ...             window = gen.send(sum(window[0] <= t < window[1] for t in data))
    ...     except StopIteration as stop:
    ...         return stop.value
    >>> run(assess(1_000_000, 1_006_000, 2_000_000)).complete
    True
    >>> v = run(assess(990_000, 1_003_000, 2_000_000))
    >>> v.complete, 1_000_000 - 60 <= v.first <= 1_000_000
    (False, True)
    """
    w_end = min(end, horizon)
    known_first = first if first is not None and start <= first < w_end - _RESOLUTION else None
    if known_first is not None:
        before = False
    if start >= horizon:
        # the whole window lies past the clock: nothing to count in it
        has_any = (yield (0, horizon)) > 0
        return Verdict(start, end, horizon, empty=not has_any)
    if before is None:
        before = (yield (0, start)) > 0
    if after is None:
        # data after the window; at the clock, data in its last hour (live)
        a = w_end if w_end < horizon else max(start, horizon - TOLERANCE)
        after = (yield (a, horizon)) > 0 if a < horizon else True
    if before and after:
        return Verdict(start, end, horizon)
    inside = known_first is not None or (yield (start, w_end)) > 0
    first = last = None
    if known_first is not None:
        first = known_first
    elif not before:
        if inside:
            first = yield from _first(start, w_end)
        elif after:
            first = yield from _first(w_end, horizon)
        else:
            return Verdict(start, end, horizon, empty=True)
    if not after:
        if inside:
            last = yield from _last(start, w_end)
        elif before:
            last = yield from _last(0, start)
    return Verdict(start, end, horizon, first=first, last=last)


def _first(lo: int, hi: int) -> Generator[tuple[int, int], int, int]:
    """The first record in ``[lo, hi)``, which holds one: within a minute before it."""
    while hi - lo > _RESOLUTION:
        mid = lo + (hi - lo) // 2
        if (yield (lo, mid)) > 0:
            hi = mid
        else:
            lo = mid
    return lo


def _last(lo: int, hi: int) -> Generator[tuple[int, int], int, int]:
    """The last record in ``[lo, hi)``, which holds one: within a minute before it."""
    while hi - lo > _RESOLUTION:
        mid = lo + (hi - lo) // 2
        if (yield (mid, hi)) > 0:
            lo = mid
        else:
            hi = mid
    return lo


def _held_last(hi: int) -> Generator[tuple[int, int], int, int | None]:
    """The last record in ``[0, hi)``, within a minute before it; None when it holds none."""
    if (yield (0, hi)) == 0:
        return None
    return (yield from _last(0, hi))


def _iso(seconds: int) -> str:
    ts = pd.Timestamp(seconds, unit="s", tz="UTC")
    return ts.strftime("%Y-%m-%d %H:%M") + " UTC"


def describe(verdict: Verdict, *, clock_label: str = "the service's clock") -> str | None:
    """The warning text for a verdict, or ``None`` when the window is covered.

    Examples
    --------
    >>> print(describe(Verdict(0, 7200, 3600)))  # doctest: +NORMALIZE_WHITESPACE
    the window 1970-01-01 00:00 UTC to 1970-01-01 02:00 UTC reaches 1h past the
    service's clock (1970-01-01 01:00 UTC); the data covers 1970-01-01 00:00 UTC
    to 1970-01-01 01:00 UTC
    >>> describe(Verdict(0, 3600, 7200)) is None
    True
    """
    window = f"the window {_iso(verdict.start)} to {_iso(verdict.end)}"
    if verdict.empty:
        return f"{window}: the service holds no data up to {clock_label} ({_iso(verdict.horizon)})"
    parts = []
    if verdict.end - verdict.horizon > CLOCK_TOLERANCE:
        late = pd.Timedelta(seconds=verdict.end - verdict.horizon)
        parts.append(f"reaches {_span(late)} past {clock_label} ({_iso(verdict.horizon)})")
    whole = verdict.covered is None
    if verdict.first is not None and verdict.first - verdict.start > TOLERANCE:
        where = "lies before" if whole else "starts before"
        parts.append(f"{where} the first record the service holds ({_iso(verdict.first)})")
    if verdict.last is not None and min(verdict.end, verdict.horizon) - verdict.last > TOLERANCE:
        where = "lies after" if whole else "ends after"
        parts.append(f"{where} the last record the service holds ({_iso(verdict.last)})")
    if not parts:
        return None
    span = verdict.covered
    covers = (
        "none of it is covered"
        if span is None
        else f"the data covers {_iso(span[0])} to {_iso(span[1])}"
    )
    return f"{window} {' and '.join(parts)}; {covers}"


def _span(delta: pd.Timedelta) -> str:
    seconds = int(delta.total_seconds())
    if seconds >= 86_400:
        days = seconds / 86_400
        return f"{days:.3g} day{'' if round(days, 2) == 1 else 's'}"
    if seconds >= 3600:
        return f"{seconds // 3600}h" + (f"{seconds % 3600 // 60:02d}m" if seconds % 3600 else "")
    return f"{max(seconds // 60, 1)} min"


class Probe:
    """Runs :func:`assess` for a client and warns; remembers what it learned.

    Parameters
    ----------
    count : callable
        ``count(a, b, stats, cancel)``: records in ``[a, b)``, from the volume operation.
    clock : callable
        ``clock(stats, cancel) -> int``: the service's "now" in Unix seconds (asked once).
    now : callable
        The client's "now" (a tz-aware Timestamp).
    online : bool
        ``False`` (offline): compare with the client's clock only.
    """

    def __init__(
        self,
        count: Callable[[int, int, Any, threading.Event | None], int],
        clock: Callable[[Any, threading.Event | None], int],
        now: Callable[[], pd.Timestamp],
        *,
        online: bool = True,
    ) -> None:
        self._count = count
        self._clock = clock
        self._now = now
        self.online = online
        self.skew: int | None = None
        """Service clock minus client clock, seconds (learned on the first check)."""
        self._lock = threading.Lock()
        self._before_from: int | None = None  # any start >= this has data before it
        self._after_until: int | None = None  # any end <= this has data after it
        self._first: int | None = None  # the first record, once a bisection found it

    def _client_now(self) -> int:
        return int(self._now().value // 1_000_000_000)

    def horizon(self, stats: Any = None, cancel: threading.Event | None = None) -> int:
        """The earlier of the two clocks, Unix seconds."""
        if not self.online:
            return self._client_now()
        if self.skew is None:
            served = self._clock(stats, cancel)
            self.skew = served - self._client_now()
            if abs(self.skew) > CLOCK_TOLERANCE:
                logger.warning(
                    "the service's clock is %+d s from this machine's; windows are "
                    "checked against the earlier of the two",
                    self.skew,
                )
        return self._client_now() + min(0, self.skew)

    def check(
        self,
        start: pd.Timestamp,
        end: pd.Timestamp,
        *,
        stats: Any = None,
        cancel: threading.Event | None = None,
    ) -> Verdict | None:
        """Assess ``[start, end)``: the requests only, safe on a worker thread.

        Returns the verdict, or ``None`` when the service could not be asked
        (the failure is logged; a pull never fails because of this check).
        ``cancel`` stops the check at its next request.
        """
        s = int(start.value // 1_000_000_000)
        e = int(-((-end.value) // 1_000_000_000))
        try:
            with self._lock:
                return self._assess(s, e, stats, cancel)
        except CctxError as exc:
            logger.info("could not check the window against the data held: %s", exc)
            return None

    def covered(
        self,
        start: pd.Timestamp,
        end: pd.Timestamp,
        verdict: Verdict | None,
        *,
        stacklevel: int = 3,
    ) -> tuple[pd.Timestamp, pd.Timestamp] | None:
        """Warn once if ``verdict`` (from :meth:`check`) says the data does not cover the window.

        Returns the covered span for provenance: the window itself when the
        data covers it (within the tolerances), ``(start, start)`` when it
        covers none of it, ``None`` when unknown. Call it on the calling
        thread, so that the warning points at the user's line
        (``stacklevel`` counts from the caller of this method).
        """
        if verdict is None:
            return None
        message = describe(
            verdict,
            clock_label="the service's clock" if self.online else "this machine's clock",
        )
        if message is None:
            return (start, end)
        logger.debug("coverage: %s", message)
        warnings.warn(CoverageWarning(message), stacklevel=stacklevel + 1)
        span = verdict.covered
        if span is None:
            return (start, start)
        lo = max(start, pd.Timestamp(span[0], unit="s", tz="UTC"))
        hi = min(end, pd.Timestamp(span[1], unit="s", tz="UTC"))
        return (lo, hi) if lo < hi else (start, start)

    def _assess(self, s: int, e: int, stats: Any, cancel: threading.Event | None) -> Verdict:
        horizon = self.horizon(stats, cancel)
        if not self.online:
            return Verdict(s, e, horizon)
        w_end = min(e, horizon)
        before = True if self._before_from is not None and s >= self._before_from else None
        after = (
            True
            if self._after_until is not None and w_end <= self._after_until and w_end < horizon
            else None
        )
        gen = assess(s, e, horizon, before=before, after=after, first=self._first)
        verdict: Verdict = self._drive(gen, horizon, stats, cancel)
        if verdict.first is not None:
            self._first = verdict.first
        return verdict

    def last_before(self, before: int | None = None, *, stats: Any = None,
                    cancel: threading.Event | None = None) -> int | None:
        """The last record before ``before`` (Unix seconds; default: the horizon), to the
        minute; ``None`` when there is none.

        One count over ``[0, before)``, then a bisection: about 25 counts over the whole
        history, the windows that have settled cached like any volume reply. Unlike
        :meth:`check`, a failure is raised (the caller asked for this answer).
        """
        with self._lock:
            horizon = self.horizon(stats, cancel)
            hi = horizon if before is None else min(before, horizon)
            if hi <= 0:
                return None
            return self._drive(_held_last(hi), horizon, stats, cancel)

    def _drive(self, gen: Generator[tuple[int, int], int, Any], horizon: int, stats: Any,
               cancel: threading.Event | None) -> Any:
        """Count each window ``gen`` yields (remembering what a count says about the data
        before and after) until it returns; its value."""
        try:
            window = next(gen)
            while True:
                n = self._count(window[0], window[1], stats, cancel)
                if n > 0 and window[0] == 0:
                    self._before_from = min(self._before_from or window[1], window[1])
                if n > 0 and window[1] == horizon and window[0] < horizon:
                    self._after_until = max(self._after_until or window[0], window[0])
                window = gen.send(n)
        except StopIteration as stop:
            return stop.value


class Asker(Protocol):
    """What the probe asks through: a session's call path and clock (:class:`~.session.Session`)."""

    policy: CachePolicy

    def post(self, operation: str, body: Mapping[str, Any], *, stats: Any,
             check: Callable[[Any], None], keep: Keep,
             cancel: threading.Event | None = None) -> Any: ...  # fmt: skip

    def keep_for(self, end: pd.Timestamp) -> Keep: ...

    def now(self) -> pd.Timestamp: ...


def for_session(session: Asker) -> Probe:
    """The probe of a client's session, asking through its :meth:`~.session.Session.post`.

    Counts are ``mintCount + burnCount`` of ``transactions-volume`` over
    ``startDate = a``, ``endDate = b - 1`` (cached like any volume reply:
    forever once settled). The clock is the ``endDate`` the service echoes
    for an empty body, asked past the cache.
    """
    from . import parse

    def count(a: int, b: int, stats: Any, cancel: threading.Event | None) -> int:
        answer = session.post(
            "transactions-volume",
            {"startDate": str(a), "endDate": str(max(a, b - 1))},
            stats=stats,
            check=parse.check_volume,
            keep=session.keep_for(pd.Timestamp(b, unit="s", tz="UTC")),
            cancel=cancel,
        )
        body = answer.body
        return int(body["mintCount"]) + int(body["burnCount"])

    def clock(stats: Any, cancel: threading.Event | None) -> int:
        answer = session.post(
            "transactions-volume", {}, stats=stats, check=parse.check_volume,
            keep=Keep.SKIP, cancel=cancel,
        )  # fmt: skip
        return int(answer.body["endDate"])

    return Probe(count, clock, session.now, online=not session.policy.offline)
