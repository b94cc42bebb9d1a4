"""The runner: requests of one call on worker threads, adaptively, cancellably.

A call (a 30-day ``mints()``, one chain's sync) is a set of
:class:`Task` values. Each task is one unit of IO or parsing that runs on a
worker thread and *returns* its result; the calling thread alone keeps the
call's state: it hands each result to ``on_result``, which may give back
follow-up tasks (the next page of a chunk, the parse of a finished chunk).
So no state is written from worker threads. Requests run on the request
workers; parsing (``Task.cpu``) runs on one parsing thread beside them, so
the requests in flight stay at the concurrency while chunks are parsed, and
new requests wait while more than one chunk waits to be parsed.

Concurrency is adaptive (:class:`Concurrency`): it starts low, grows by one
while the latency of tasks stays flat, halves when the service asks the
client to slow down (429 or 503; the sender honours ``Retry-After``),
and never passes the cap the user set (``max_workers``).

Cancelling. The first failing task cancels the call: no new task starts,
queued ones are dropped, the running ones stop at their next request, and
the first real error is raised. ``KeyboardInterrupt`` (Ctrl-C, a notebook's
interrupt button) does the same and also abandons the requests in flight
(``abort`` shuts their sockets down), so the call ends within a second,
with its worker threads gone; chunks already stored stay valid, and nothing
half-written is left (the stores write atomically).
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .progress import Progress
from .stats import RequestStats

__all__ = ["Concurrency", "Task", "run"]

_PARSE_BACKLOG = 1
"""Chunks waiting to be parsed (beyond the one being parsed) before requests pause."""

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Task:
    """One unit of work: ``fn(stats)`` runs on a worker and returns a result.

    ``tag`` is for ``on_result`` (which chunk, which page); ``fn`` gets a
    fresh :class:`RequestStats` of its own, merged into the call's by the
    calling thread.
    """

    tag: Any
    fn: Callable[[RequestStats], Any]
    paced: bool = True
    """Whether its time feeds the adaptive concurrency (False for a long side task)."""
    cpu: bool = False
    """Work with no request (parsing a chunk): it runs on the call's parsing
    thread, outside the request slots, so the requests in flight stay at the
    concurrency while pages are parsed."""


class Concurrency:
    """How many tasks may run at once: additive increase, multiplicative decrease.

    Examples
    --------
    >>> c = Concurrency(8, start=2)
    >>> for _ in range(4):
    ...     c.record(0.05, throttled=False)
    >>> c.current
    5
    >>> c.record(0.05, throttled=True)
    >>> c.current
    2
    """

    GROWTH_LATENCY = 1.5
    """Grow only while a task takes at most this multiple of the fastest seen lately."""

    def __init__(self, cap: int, *, start: int = 4) -> None:
        self.cap = cap
        self.current = max(1, min(cap, start))
        self.peak = self.current
        self._floor: float | None = None
        self._streak = 0

    def record(self, seconds: float, *, throttled: bool) -> None:
        """Feed back one finished task."""
        if throttled:
            self.current = max(1, self.current // 2)
            self._streak = 0
            logger.debug("throttled: concurrency down to %d", self.current)
            return
        if self._floor is None or seconds < self._floor:
            self._floor = seconds
        if seconds <= self.GROWTH_LATENCY * self._floor:
            self._streak += 1
            if self._streak >= max(1, self.current // 2) and self.current < self.cap:
                self.current += 1
                self.peak = max(self.peak, self.current)
                self._streak = 0
        else:
            self._streak = 0
            # let the floor follow a slower service rather than stick to one lucky reply
            self._floor = 0.9 * self._floor + 0.1 * seconds


def _timed(task: Task) -> tuple[Any, RequestStats, float]:
    stats = RequestStats()
    started = time.perf_counter()
    value = task.fn(stats)
    return value, stats, time.perf_counter() - started


def run(
    tasks: Iterable[Task],
    on_result: Callable[[Task, Any], Iterable[Task]],
    *,
    stats: RequestStats,
    concurrency: Concurrency,
    cancel: threading.Event,
    abort: Callable[[], Any],
    resume: Callable[[], Any] | None = None,
    bar: Progress | None = None,
) -> None:
    """Run ``tasks`` and their follow-ups until none is left.

    Follow-ups run before the tasks still queued (depth first), so that
    work under way finishes before new work starts and its memory is freed.

    Parameters
    ----------
    tasks : iterable of Task
        The first tasks.
    on_result : callable
        ``on_result(task, value)`` on the calling thread for every finished
        task; returns the follow-up tasks.
    stats : RequestStats
        The call's counters; each task's are merged in.
    concurrency : Concurrency
        The limiter (its ``cap`` is the pool size).
    cancel : threading.Event
        Set when the call stops early; tasks pass it to the transport.
    abort : callable
        Abandons the requests in flight (on ``KeyboardInterrupt``), and the
        connections still being made, until ``resume``.
    resume : callable, optional
        Ends ``abort`` once the worker threads are gone.
    bar : Progress, optional
        Counts requests.

    Raises
    ------
    Exception
        The first error of any task.
    KeyboardInterrupt
        After the call has stopped.
    """
    work = _Run(tasks, on_result, stats=stats, concurrency=concurrency, bar=bar)
    if concurrency.cap == 1:
        work.here()  # no thread: Ctrl-C interrupts the request itself
        return
    work.on_threads(cancel=cancel, abort=abort, resume=resume)


class _Run:
    """One run's queue and tasks in flight: touched by the calling thread alone."""

    def __init__(
        self,
        tasks: Iterable[Task],
        on_result: Callable[[Task, Any], Iterable[Task]],
        *,
        stats: RequestStats,
        concurrency: Concurrency,
        bar: Progress | None,
    ) -> None:
        self.queue = collections.deque(tasks)
        self.on_result = on_result
        self.stats = stats
        self.concurrency = concurrency
        self.bar = bar
        self.running: dict[cf.Future[Any], Task] = {}
        self.requests_running = 0

    def settle(self, task: Task, value: Any, task_stats: RequestStats, seconds: float) -> None:
        """Take a finished task's result in: its counters, its timing, its follow-ups."""
        self.stats.merge(task_stats)
        if self.bar is not None and task_stats.requests:
            self.bar.page(task_stats.requests)
        if (task.paced and not task.cpu) or task_stats.throttled:
            self.concurrency.record(seconds, throttled=task_stats.throttled > 0)
        # follow-ups first: a chunk under way is finished before another
        # starts, so only about `current` chunks hold their pages at once
        self.queue.extendleft(reversed(list(self.on_result(task, value))))

    def here(self) -> None:
        """Run every task on the calling thread, one at a time."""
        while self.queue:
            task = self.queue.popleft()
            self.settle(task, *_timed(task))

    def on_threads(
        self, *, cancel: threading.Event, abort: Callable[[], Any], resume: Callable[[], Any] | None
    ) -> None:
        """Run the tasks on the worker threads (requests) and the parsing thread (``cpu``)."""
        cap = self.concurrency.cap
        pool = cf.ThreadPoolExecutor(max_workers=cap, thread_name_prefix="cctx-client")
        parser = cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="cctx-client-parse")
        try:
            while self.queue or self.running:
                self.start(pool, parser)
                # a timeout, so that a signal handled late (delivered to another
                # thread) still surfaces here promptly
                done, _ = cf.wait(self.running, timeout=0.2, return_when=cf.FIRST_COMPLETED)
                # futures in submission order, so that results are handled in a stable order
                for future in [f for f in self.running if f in done]:
                    task = self.running.pop(future)
                    if not task.cpu:
                        self.requests_running -= 1
                    self.settle(task, *future.result())
        except BaseException as exc:
            self.stop(exc, (pool, parser), cancel=cancel, abort=abort, resume=resume)
            raise
        finally:
            pool.shutdown(wait=True)
            parser.shutdown(wait=True)

    def start(self, pool: cf.Executor, parser: cf.Executor) -> None:
        """Start the queued tasks that may start now; keep the others queued, in order."""
        parsing = sum(1 for t in self.running.values() if t.cpu)
        held: list[Task] = []
        while self.queue:
            task = self.queue.popleft()
            if task.cpu:
                self.running[parser.submit(_timed, task)] = task
                parsing += 1
            # while chunks wait to be parsed, no new request: their pages
            # are held in memory until then
            elif (
                self.requests_running < self.concurrency.current and parsing <= _PARSE_BACKLOG
            ):
                self.running[pool.submit(_timed, task)] = task
                self.requests_running += 1
            else:
                held.append(task)
        self.queue.extend(held)

    def stop(
        self,
        exc: BaseException,
        executors: tuple[cf.Executor, ...],
        *,
        cancel: threading.Event,
        abort: Callable[[], Any],
        resume: Callable[[], Any] | None,
    ) -> None:
        """Stop after ``exc``: drop what is queued, and abandon the requests in flight on Ctrl-C."""
        cancel.set()
        self.queue.clear()
        for future in self.running:
            future.cancel()
        aborted = not isinstance(exc, Exception)
        if aborted:
            abandoned = abort()
            logger.debug("interrupted: %s requests abandoned", abandoned)
        # the tasks still running stop at their next request (their errors,
        # Cancelled mostly, are dropped: the first error is the one raised)
        try:
            for executor in executors:
                executor.shutdown(wait=True, cancel_futures=True)
        finally:
            if aborted and resume is not None:
                resume()
