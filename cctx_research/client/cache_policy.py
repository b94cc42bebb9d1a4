"""The client's cache policy: which windows have settled, and what of a listing is kept.

:class:`CachePolicy` is the reply cache's record
(:class:`~cctx_research.net.ReplyPolicy`) with the one setting the analytics
interface adds, ``settle_after``: a window that ended longer ago than that
can no longer change. From it, every request of the client names what its
reply is (:class:`~cctx_research.net.Keep`), and the listing chunks are kept
or not. No other module of the client decides any of it.

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

from dataclasses import dataclass

import pandas as pd

from ..net import Keep, ReplyPolicy

__all__ = ["CachePolicy"]


@dataclass(frozen=True)
class CachePolicy(ReplyPolicy):
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

    settle_after: pd.Timedelta

    def settled(self, end: pd.Timestamp, now: pd.Timestamp) -> bool:
        """Whether a window ending at ``end`` can no longer change, at ``now``."""
        return bool(end <= now - self.settle_after)

    def keep_for(self, end: pd.Timestamp, now: pd.Timestamp) -> Keep:
        """How long to keep a reply about a window ending at ``end``."""
        return Keep.FOREVER if self.settled(end, now) else Keep.FRESH

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
