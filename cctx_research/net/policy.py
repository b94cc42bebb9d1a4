"""Reply-cache policy: what the HTTP layer does with each request's reply, decided here.

Every request names what its reply is (:class:`Keep`): data that can no
longer change, data about the recent past, or a reply not to be stored.
:class:`ReplyPolicy`, one small frozen record built from a caller's cache
options, turns that into what the HTTP layer needs (:class:`RequestCaching`).
What a reply *is* is the caller's to say (the analytics client decides it
from windows, :mod:`cctx_research.client.cache_policy`; Iris from what it
asks); no other module of this package decides any of it.

Examples
--------
>>> policy = ReplyPolicy(enabled=True, offline=False, expire_after=300)
>>> policy.request(Keep.FRESH)
RequestCaching(only_if_cached=False, expire_after=300, store=True)
>>> policy.request(Keep.SKIP)
RequestCaching(only_if_cached=False, expire_after=-1, store=False)
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["DEFAULT_CACHING", "NEVER_EXPIRE", "NO_CACHING", "Keep", "ReplyPolicy", "RequestCaching"]

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
    """How the HTTP layer treats one request (see :class:`~.protocols.Outgoing`)."""

    only_if_cached: bool
    """Answer from the cache alone (offline)."""
    expire_after: int | None
    """Seconds the stored reply stays fresh (``-1``: forever); ``None``: the cache's default."""
    store: bool
    """Consult and fill the reply cache; ``False`` sends the request past it."""


DEFAULT_CACHING = RequestCaching(only_if_cached=False, expire_after=None, store=True)
"""A request a cached session treats as its defaults say (a plain session: no cache)."""
NO_CACHING = RequestCaching(only_if_cached=False, expire_after=None, store=False)
"""A request sent past any reply cache (JSON-RPC: the chain's head moves)."""


@dataclass(frozen=True)
class ReplyPolicy:
    """The reply cache's decisions, from a caller's options (one record, decided once).

    Parameters
    ----------
    enabled : bool
        Replies are cached on disk.
    offline : bool
        Answer from the cache alone.
    expire_after : int
        Seconds replies about the recent past stay fresh.
    """

    enabled: bool
    offline: bool
    expire_after: int

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
