"""The counters of one public call, and the signal that a call was cancelled."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

__all__ = ["Cancelled", "RequestStats"]


@dataclass
class RequestStats:
    """Counters of one public call (thread-safe)."""

    requests: int = 0
    """Requests that produced an answer (from the network or the HTTP cache)."""
    network: int = 0
    """Attempts that went over the network (including retried ones)."""
    cache_hits: int = 0
    """Answers read from a cache (HTTP cache or chunk cache)."""
    retries: int = 0
    throttled: int = 0
    """Replies that asked the client to slow down (429 and 503)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, **counts: int) -> None:
        with self._lock:
            for name, value in counts.items():
                setattr(self, name, getattr(self, name) + value)

    def merge(self, other: RequestStats) -> None:
        """Add another record's counts to this one."""
        self.add(
            requests=other.requests,
            network=other.network,
            cache_hits=other.cache_hits,
            retries=other.retries,
            throttled=other.throttled,
        )


class Cancelled(Exception):
    """The call was cancelled (Ctrl-C, or another part of it failed): stop."""
