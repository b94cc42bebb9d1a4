"""Keeping a rate: a token bucket shared by threads, and an adapter that waits on it.

Some APIs block a client that goes too fast: Circle's attestation API
(Iris) allows 35 requests a second and answers 429 for five minutes to a
client above that. :class:`TokenBucket` spaces requests so that no window
of one second holds more than ``rate + burst`` of them, whatever the
number of threads. :class:`PacedAdapter` wraps the adapter a session sends
through, so the wait is paid only by requests that go over the wire: a
reply answered from the cache never waits (``SenderOptions(pace=bucket.acquire)``
mounts it).

Examples
--------
>>> clock = iter([0.0, 0.0, 0.0]).__next__
>>> waits = []
>>> bucket = TokenBucket(10, clock=clock, sleep=waits.append)
>>> bucket.acquire(); bucket.acquire()
>>> waits
[0.1]
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Any

import requests
from requests.adapters import BaseAdapter

__all__ = ["PacedAdapter", "TokenBucket"]


class TokenBucket:
    """At most ``rate`` acquisitions a second on average, ``burst`` at once, across threads.

    Each :meth:`acquire` reserves the next free slot under a lock and
    sleeps outside it until that slot, so waiting threads are served in
    order and never more than ``burst`` pass together.

    Parameters
    ----------
    rate : float
        Acquisitions per second (> 0).
    burst : int, default 1
        How many may pass at once after an idle spell. With the default,
        requests are spaced ``1 / rate`` apart, so any one-second window
        holds at most ``rate + 1``.
    clock, sleep : callable, optional
        The monotonic clock and the sleep (tests replace them).
    """

    def __init__(
        self,
        rate: float,
        *,
        burst: int = 1,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Any] = time.sleep,
    ) -> None:
        if isinstance(rate, bool) or not isinstance(rate, (int, float)):
            raise TypeError(f"rate must be a number of requests per second, got {rate!r}")
        if not (rate > 0 and math.isfinite(rate)):
            raise ValueError(f"rate must be a positive number of requests per second, got {rate}")
        if isinstance(burst, bool) or not isinstance(burst, int) or burst < 1:
            raise ValueError(f"burst must be a positive int, got {burst!r}")
        self.rate = float(rate)
        self.burst = burst
        self._interval = 1.0 / self.rate
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._next: float | None = None  # the earliest time the next slot may start

    def acquire(self) -> None:
        """Wait for a slot."""
        with self._lock:
            now = self._clock()
            # after an idle spell, up to `burst` slots are free at once
            earliest = now - (self.burst - 1) * self._interval
            slot = earliest if self._next is None else max(self._next, earliest)
            self._next = slot + self._interval
        wait = slot - now
        if wait > 0:
            self._sleep(wait)

    def __repr__(self) -> str:
        return f"TokenBucket(rate={self.rate:g}, burst={self.burst})"


class PacedAdapter(BaseAdapter):
    """Calls ``pace()`` before every request it sends, then sends it through ``inner``."""

    def __init__(self, inner: BaseAdapter, pace: Callable[[], Any]) -> None:
        super().__init__()
        self.inner = inner
        self.pace = pace

    def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> Any:
        self.pace()
        return self.inner.send(request, *args, **kwargs)

    def close(self) -> None:
        self.inner.close()
