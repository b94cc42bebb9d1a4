"""Cache policy: what is kept, for how long, and what is asked past the cache, decided here.

Every request names what its reply is (:class:`Keep`): data that can no
longer change, data about the recent past, or a reply not to be stored.
:class:`CachePolicy`, one small frozen record built from the client's
options, turns that into what the HTTP layer needs (:class:`RequestCaching`)
and decides which listing chunks are kept and how old a stored chunk may be.
No other module of the client decides any of it.

Examples
--------
>>> import pandas as pd
>>> policy = CachePolicy(enabled=True, offline=False, expire_after=300,
...                      settle_after=pd.Timedelta("1h"))
>>> now = pd.Timestamp("2024-07-01T12:00Z")
>>> policy.keep_for(pd.Timestamp("2024-07-01T10:00Z"), now)
<Keep.FOREVER: 'forever'>
>>> policy.keep_for(pd.Timestamp("2024-07-01T11:30Z"), now)
<Keep.FRESH: 'fresh'>
>>> policy.request(Keep.FRESH)
RequestCaching(only_if_cached=False, expire_after=300, store=True)
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import pandas as pd

__all__ = ["NEVER_EXPIRE", "CachePolicy", "Keep", "RequestCaching"]

NEVER_EXPIRE = -1
"""requests-cache's "never expires"."""


class Keep(enum.Enum):
    """What a request's reply is, for the cache."""

    FOREVER = "forever"
    """About a window that has settled: it can no longer change."""
    FRESH = "fresh"
    """About the recent past: fresh for ``expire_after`` seconds."""
    SKIP = "skip"
    """Not stored: a settled chunk's page (the chunk cache keeps it parsed) or the clock."""


@dataclass(frozen=True)
class RequestCaching:
    """How the HTTP layer treats one request (see :meth:`.http.Sender.post`)."""

    only_if_cached: bool
    """Answer from the cache alone (offline)."""
    expire_after: int | None
    """Seconds the stored reply stays fresh (``-1``: forever); ``None`` without a cache."""
    store: bool
    """Consult and fill the reply cache; ``False`` sends the request past it."""


@dataclass(frozen=True)
class CachePolicy:
    """The client's cache decisions, from its options (one record, decided once).

    Parameters
    ----------
    enabled : bool
        Replies and chunks are cached on disk (``cache=True``).
    offline : bool
        Answer from the cache alone.
    expire_after : int
        Seconds replies and chunks about the recent past stay fresh.
    settle_after : Timedelta
        Windows that ended longer ago than this are final: kept forever.
    """

    enabled: bool
    offline: bool
    expire_after: int
    settle_after: pd.Timedelta

    def settled(self, end: pd.Timestamp, now: pd.Timestamp) -> bool:
        """Whether a window ending at ``end`` can no longer change, at ``now``."""
        return bool(end <= now - self.settle_after)

    def keep_for(self, end: pd.Timestamp, now: pd.Timestamp) -> Keep:
        """How long to keep a reply about a window ending at ``end``."""
        return Keep.FOREVER if self.settled(end, now) else Keep.FRESH

    def request(self, keep: Keep) -> RequestCaching:
        """The HTTP layer's options for a reply that is ``keep``."""
        if not self.enabled:
            expire: int | None = None
        elif keep is Keep.FRESH:
            expire = self.expire_after
        else:
            expire = NEVER_EXPIRE
        # offline, the reply cache is all there is: always consult it
        return RequestCaching(self.offline, expire, keep is not Keep.SKIP or self.offline)

    def chunk_kept(self, settled: bool) -> bool:
        """Whether a listing chunk goes in the chunk cache (when there is one)."""
        return self.enabled and (settled or self.expire_after > 0)

    @property
    def chunk_max_age(self) -> float | None:
        """The oldest a stored chunk about the recent past may be, in seconds.

        Offline, any stored chunk answers (``None``); settled chunks never expire.
        """
        return None if self.offline else float(self.expire_after)

    @staticmethod
    def page(*, settled: bool, final_known: bool, kept: bool) -> Keep:
        """What a listing page is.

        A settled chunk whose rows cannot change (``final_known``) is kept
        whole, parsed, in the chunk cache when it is ``kept`` there, so its
        pages are not stored as replies; without the chunk cache its pages
        are kept forever as replies. A chunk whose rows may still change
        keeps its pages for ``expire_after``: whether it is final is known
        only once it is all here.
        """
        if settled and final_known:
            return Keep.SKIP if kept else Keep.FOREVER
        return Keep.FRESH

    @staticmethod
    def transaction(*, completed: bool) -> Keep:
        """A transaction looked up by hash: kept forever once completed, it cannot change.

        It is asked for as :attr:`Keep.FRESH` (whether it is completed is
        known from the reply) and kept longer afterwards when this says so.
        """
        return Keep.FOREVER if completed else Keep.FRESH
