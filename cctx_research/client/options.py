"""The client's options: one frozen, validated record.

:class:`ClientOptions` holds everything that shapes how a :class:`~cctx_research.client.Client`
talks to the service, checked once when it is built. A ``Client`` takes
either these keywords (``Client(url, project, key, page_size=500)``), which
build the record, or a record (``Client(url, project, key, options=opts)``);
keywords given with ``options=`` replace those fields of it.

Nothing here reads the environment: a client built from explicit arguments
behaves the same whatever ``CCTX_*`` variables are set.
:func:`cctx_research.connect` is the one place that reads them (and passes
``cache_dir`` on).

Examples
--------
>>> opts = ClientOptions(page_size=500, max_workers=4)
>>> opts.page_size, opts.max_workers
(500, 4)
>>> opts.replace(max_workers=2).max_workers
2
>>> ClientOptions(page_size=0)
Traceback (most recent call last):
ValueError: page_size must be a positive int, got 0
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from .. import arguments
from ..arguments import check_type
from ..net import default_cache_dir, parse_age
from ..net.options import check_backoff, check_retries, check_timeout

__all__ = ["MAX_WORKERS", "ClientOptions"]

MAX_WORKERS = 64
"""The highest concurrency a client may be given."""


@dataclass(frozen=True)
class ClientOptions:
    """How a client talks to the service (every field has a default).

    Parameters
    ----------
    cache : bool, default True
        Keep replies on disk (requests-cache, SQLite) and settled chunks as
        Arrow IPC files. ``False`` sends every request.
    cache_dir : str or Path, optional
        Default: the platform user cache directory (``connect()`` passes
        ``CCTX_CACHE_DIR`` when it is set). Resolved to a ``Path``.
    expire_after : duration, default 300 s
        How long replies about the recent past stay fresh. Resolved to seconds.
    page_size : int, optional
        Records per request (the interface's ``limit``). Default ``None``:
        learn the largest page the service accepts (probing upward from the
        interface's default of 100; a ``400`` and a silent cap are both
        handled) and remember it per service in the cache.
    max_workers : int, default 4
        The most requests in flight at once (the cap). Concurrency starts at
        up to 4, grows towards the cap while latency stays flat and halves on
        429 and 503. Each request in flight holds its chunk's records, so
        memory grows with it; 8 was slower than 4 on two busy cores.
    timeout : float, default 30
        Seconds per request attempt.
    retries : int, default 5
        Retries of 429, 5xx, timeouts, dropped connections and unreadable replies.
    progress : bool, optional
        A progress bar over chunks; ``None`` decides by where output goes.
    decimals : int, default 6
        Token decimals: ``amount = amount_raw / 10**decimals``.
    offline : bool, default False
        Answer from the cache alone.
    settle_after : duration, default "1h"
        Windows that ended longer ago than this are final and cached forever.
    chunk : duration, default "1D"
        Length of the chunks long windows are split into.
    backoff : float, default 0.5
        Base of the exponential backoff, in seconds.
    source : str, optional
        What the service is, for provenance and cache keys (default: the base URL).
    synthetic : bool, default False
        Mark every frame synthetic in its provenance (``CCTX_SYNTHETIC``;
        ``connect()`` sets it for the embedded sample). A service that says
        so itself (the ``x-cctx-synthetic`` reply header) is marked without it.
    clock : callable, optional
        Returns "now" as a tz-aware Timestamp (default: the system clock).
    domains : tuple of int, optional
        The CCTP domains the service's data holds, when known (``connect()``
        sets it for local data and the sample): a listing asking for others
        warns that they are not in the data, rather than returning 0 rows
        without a word. Default ``None``: unknown (a remote service).
    """

    cache: bool = True
    cache_dir: Path | None = None
    expire_after: Any = 300
    page_size: int | None = None
    max_workers: int = 4
    timeout: float = 30.0
    retries: int = 5
    progress: bool | None = None
    decimals: int = 6
    offline: bool = False
    settle_after: Any = "1h"
    chunk: Any = "1D"
    backoff: float = 0.5
    source: str | None = None
    synthetic: bool = False
    clock: Callable[[], pd.Timestamp] | None = None
    domains: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        put = object.__setattr__  # frozen: normalise fields in place, once
        for name in ("cache", "offline", "synthetic"):
            check_type(getattr(self, name), bool, name, "True or False")
        if self.progress is not None:
            check_type(self.progress, bool, "progress", "True, False or None")
        if self.offline and not self.cache:
            raise ValueError("offline=True answers from the cache: it needs cache=True")
        if self.cache_dir is None:
            put(self, "cache_dir", default_cache_dir())
        else:
            check_type(self.cache_dir, (str, Path), "cache_dir", "a str or Path")
            put(self, "cache_dir", Path(self.cache_dir).expanduser())
        if self.page_size is not None:
            put(self, "page_size", arguments.integer(self.page_size, "page_size", low=1))
        put(
            self,
            "max_workers",
            arguments.integer(self.max_workers, "max_workers", low=1, high=MAX_WORKERS),
        )
        put(self, "retries", check_retries(self.retries))
        put(self, "decimals", arguments.integer(self.decimals, "decimals", low=0, high=30))
        put(self, "timeout", check_timeout(self.timeout))
        put(self, "backoff", check_backoff(self.backoff))
        age = parse_age(self.expire_after, name="expire_after")
        put(self, "expire_after", int(age.total_seconds()))
        put(self, "settle_after", parse_age(self.settle_after, name="settle_after"))
        put(self, "chunk", parse_age(self.chunk, name="chunk"))
        if self.chunk <= pd.Timedelta(0):
            raise ValueError(f"chunk must be a positive duration, got {self.chunk!r}")
        if self.source is not None:
            check_type(self.source, str, "source", "a str")
        if self.clock is not None and not callable(self.clock):
            raise TypeError("clock must be a callable returning a tz-aware pandas.Timestamp")
        if self.domains is not None:
            check_type(self.domains, (tuple, list, frozenset, set), "domains", "a tuple of ints")
            put(self, "domains", tuple(sorted(arguments.integer(d, "domains", low=0)
                                              for d in self.domains)))  # fmt: skip

    def replace(self, **changes: Any) -> ClientOptions:
        """A copy with some fields changed (validated again)."""
        unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise TypeError(
                f"unknown client option(s) {', '.join(unknown)}; the options are "
                + ", ".join(f.name for f in dataclasses.fields(self))
            )
        return dataclasses.replace(self, **changes)
