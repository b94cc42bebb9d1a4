"""The Iris client's options: one frozen, validated record.

:class:`IrisOptions` holds everything that shapes how an
:class:`~cctx_research.iris.IrisClient` talks to Iris, checked once when it
is built: the rate, the reply cache, the retry policy and the clock. An
``IrisClient`` takes either these keywords (``IrisClient(rate=10)``), which
build the record, or a record (``IrisClient(options=opts)``); keywords given
with ``options=`` replace those fields of it.

Examples
--------
>>> opts = IrisOptions(rate=10, cache=False)
>>> opts.rate, opts.replace(rate=20).rate
(10.0, 20.0)
>>> IrisOptions(rate=40)  # doctest: +ELLIPSIS
Traceback (most recent call last):
ValueError: rate must be above 0 and at most 35 requests a second (Iris blocks ...), got 40
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..arguments import check_type
from ..net import default_cache_dir
from ..net.options import check_backoff, check_max_backoff, check_retries, check_timeout

__all__ = ["DEFAULT_RATE", "IRIS_LIMIT", "IrisOptions"]

DEFAULT_RATE = 30.0
"""Requests a second: below Iris's limit of 35, with room for another client's requests."""
IRIS_LIMIT = 35.0
"""Requests a second Iris allows; above it, it blocks a client for five minutes."""


@dataclass(frozen=True)
class IrisOptions:
    """How an Iris client talks to Iris (every field has a default).

    Parameters
    ----------
    rate : float, default 30
        Requests a second over the wire, across threads (at most 35: Iris
        blocks a client above that for five minutes).
    cache : bool, default True
        Keep completed messages on disk (forever: they cannot change).
    cache_dir : str or Path, optional
        Default: the toolkit's cache directory; Iris's replies go in its
        ``iris`` subdirectory. Resolved to a ``Path``.
    timeout : float, default 30
        Seconds per request attempt.
    retries : int, default 5
        Retries of 429, 5xx, timeouts, dropped connections and unreadable replies.
    backoff : float, default 0.5
        Base of the exponential backoff, in seconds.
    max_backoff : float, default 60
        Longest wait between attempts; a ``Retry-After`` beyond it is raised.
    clock : callable, optional
        Returns "now" (``as_of``) as a tz-aware Timestamp.
    """

    rate: float = DEFAULT_RATE
    cache: bool = True
    cache_dir: Path | None = None
    timeout: float = 30.0
    retries: int = 5
    backoff: float = 0.5
    max_backoff: float = 60.0
    clock: Callable[[], pd.Timestamp] | None = None

    def __post_init__(self) -> None:
        put = object.__setattr__  # frozen: normalise fields in place, once
        rate = self.rate
        if isinstance(rate, bool) or not isinstance(rate, (int, float)):
            raise TypeError(f"rate must be a number of requests per second, got {rate!r}")
        if not 0 < rate <= IRIS_LIMIT:
            raise ValueError(
                f"rate must be above 0 and at most {IRIS_LIMIT:g} requests a second (Iris blocks "
                f"a client above that for five minutes), got {rate}"
            )
        put(self, "rate", float(rate))
        put(self, "max_backoff", check_max_backoff(self.max_backoff))
        check_type(self.cache, bool, "cache", "True or False")
        if self.cache_dir is None:
            put(self, "cache_dir", default_cache_dir())
        else:
            check_type(self.cache_dir, (str, Path), "cache_dir", "a str or Path")
            put(self, "cache_dir", Path(self.cache_dir).expanduser())
        put(self, "retries", check_retries(self.retries))
        put(self, "timeout", check_timeout(self.timeout))
        put(self, "backoff", check_backoff(self.backoff))
        if self.clock is not None and not callable(self.clock):
            raise TypeError("clock must be a callable returning a tz-aware pandas.Timestamp")

    def replace(self, **changes: Any) -> IrisOptions:
        """A copy with some fields changed (validated again)."""
        unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise TypeError(
                f"unknown Iris option(s) {', '.join(unknown)}; the options are "
                + ", ".join(f.name for f in dataclasses.fields(self))
            )
        return dataclasses.replace(self, **changes)
