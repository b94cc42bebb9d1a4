"""The one call path: every public call's counters, provenance record and log summary.

A :class:`Call` is one public call in progress (``mints()``, ``volume()``):
its request counters, its cancel event, and how its tasks run. When the
call has its result, :func:`record` attaches the typed provenance record
(:mod:`cctx_research.provenance`) and logs the call's one INFO summary:
rows, requests, cache hits, seconds.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import pandas as pd

from ..net import Concurrency, Progress, RequestStats, Task, run
from ..net.progress import wanted
from ..provenance import Provenance, attach

__all__ = ["Call", "record"]

logger = logging.getLogger(__name__)

_Result = TypeVar("_Result", pd.DataFrame, pd.Series)
_BESIDE = object()  # the tag of the side task


class Call:
    """One public call in progress: its counters, cancel event and runner.

    Parameters
    ----------
    operation : str
        The public method (``"mints"``).
    cancel : threading.Event
        Set when the call stops early (passed to every request).
    progress : bool or None
        The client's progress option.
    max_workers : int
        The concurrency cap.
    abort, resume : callable
        Abandon the requests in flight, and end that (the transport's
        ``abort`` and ``resume``).
    """

    def __init__(
        self,
        operation: str,
        *,
        cancel: threading.Event,
        progress: bool | None,
        max_workers: int,
        abort: Callable[[], Any],
        resume: Callable[[], Any] | None = None,
    ) -> None:
        self.operation = operation
        self.stats = RequestStats()
        self.cancel = cancel
        self.fetched_at = pd.Timestamp.now(tz="UTC")
        self.started = time.perf_counter()
        self.peak_concurrency = 1
        self._progress = progress
        self._max_workers = max_workers
        self._abort = abort
        self._resume = resume
        self._beside: Callable[[RequestStats], Any] | None = None
        self._beside_value: Any = None

    def beside(self, fn: Callable[[RequestStats], Any]) -> None:
        """Work that runs alongside the call's tasks, in one of its worker slots.

        The coverage check is a few sequential requests; run beside a pull,
        its round trips hide under the pull's instead of following them.
        Its result is :meth:`beside_result`.
        """
        self._beside = fn

    def beside_result(self) -> Any:
        """The side work's result; run here, on the calling thread, if no runner took it."""
        if self._beside is not None:
            fn, self._beside = self._beside, None
            stats = RequestStats()
            self._beside_value = fn(stats)
            self.stats.merge(stats)
        return self._beside_value

    def progress(self, total: int, desc: str) -> Progress:
        """A progress bar over ``total`` units (chunks, buckets)."""
        return Progress(enabled=wanted(self._progress), total=total, desc=desc)

    def run(
        self,
        tasks: list[Task],
        on_result: Callable[[Task, Any], list[Task]],
        bar: Progress | None = None,
    ) -> None:
        """Run tasks on worker threads (see :func:`.runner.run`)."""
        cap = self._max_workers
        concurrency = Concurrency(cap, start=min(cap, 4))
        if self._beside is not None and cap > 1 and tasks:
            side, self._beside = Task(_BESIDE, self._beside, paced=False), None
            tasks = [side, *tasks]
            handle = on_result

            def on_result(task: Task, value: Any) -> list[Task]:
                if task.tag is _BESIDE:
                    self._beside_value = value
                    return []
                return handle(task, value)

        try:
            run(
                tasks,
                on_result,
                stats=self.stats,
                concurrency=concurrency,
                cancel=self.cancel,
                abort=self._abort,
                resume=self._resume,
                bar=bar,
            )
        finally:
            self.peak_concurrency = max(self.peak_concurrency, concurrency.peak)


def record(
    call: Call,
    result: _Result,
    params: dict[str, Any],
    *,
    source: str,
    synthetic: bool,
    project_id: str,
    coverage: tuple[pd.Timestamp, pd.Timestamp] | None = None,
) -> _Result:
    """Attach the provenance record to ``result`` and log the call's summary."""
    window = None
    if isinstance(params.get("start"), pd.Timestamp) and isinstance(
        params.get("end"), pd.Timestamp
    ):
        window = (params["start"], params["end"])
    stats = call.stats
    attach(
        result,
        Provenance(
            source=source,
            synthetic=synthetic,
            project_id=project_id,
            operation=call.operation,
            window=window,
            coverage=coverage,
            parameters={k: _jsonable(v) for k, v in params.items()},
            fetched_at=call.fetched_at,
            requests=stats.requests,
            network_requests=stats.network,
            cache_hits=stats.cache_hits,
            retries=stats.retries,
        ),
    )
    logger.info(
        "%s: %d rows, %d requests (%d over the network), %d cache hits, %.2f s",
        call.operation,
        len(result) if isinstance(result, pd.DataFrame) else 1,
        stats.requests,
        stats.network,
        stats.cache_hits,
        time.perf_counter() - call.started,
    )
    return result


def _jsonable(value: Any) -> Any:
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value
