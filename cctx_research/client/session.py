"""The client's engine: the transport, both caches, page sizes, the clock and the call path.

A :class:`Session` is what every endpoint family of the client uses, and
all it uses: :mod:`.listing` (mints, received), :mod:`.aggregates`
(volume, volume history, top senders), :mod:`.lookup` (one transaction)
and :mod:`.coverage` ask through its public methods, never through each
other. :class:`~cctx_research.client.Client` is the typed face over it.

Every public call goes through one path, :meth:`Session.call`: it counts
the call's requests, runs the coverage check beside it, attaches the
provenance record and logs one INFO summary (rows, requests, cache hits,
seconds). Every request goes through :meth:`Session.post`, which asks
:class:`~.cache_policy.CachePolicy` what to do with the cache and sends the
operation's request (:mod:`.envelope`) through the sender's core
(:class:`~cctx_research.net.Sender`). Any failure of
any part of a call fails the call with a typed error: never a silently
partial result.

The session knows the service only through HTTP: over sockets, or over the
``transport`` seam (:mod:`cctx_research.net.transports`).

Synthetic data is marked in every frame's provenance when the client was
told so (the ``synthetic`` option, ``CCTX_SYNTHETIC``) or when the service
says so: a reply with ``x-cctx-synthetic: true``, or a cached chunk stored
from such replies (:attr:`Session.synthetic`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar

import pandas as pd
import requests

from ..config import Secret
from ..net import (
    Answer,
    BaseTransport,
    HttpCache,
    Keep,
    RequestStats,
    Sender,
    SenderOptions,
    parse_age,
    sessions_from_environment,
)
from ..times import TimeLike, from_unix_epoch, to_timestamp, window
from . import bounds, coverage, envelope
from .cache_dir import open_replies
from .cache_policy import CachePolicy
from .calls import Call, record
from .chunks import ChunkStore, directory_bytes
from .options import ClientOptions
from .planner import MEMO_FILE, PageSize

__all__ = ["LISTINGS", "Session"]

logger = logging.getLogger(__name__)

_Result = TypeVar("_Result", pd.DataFrame, pd.Series)

LISTINGS = ("transactions-mint", "transactions-address-recipient")
"""The paged operations; each learns and remembers its page size."""


class _Closeable(Protocol):
    def close(self) -> None: ...


class Session:
    """Everything a client's calls share, behind one call path.

    Parameters
    ----------
    base_url, project_id : str
        Already validated (see :mod:`cctx_research.config`).
    api_key : Secret
        Sent as the ``x-api-key`` header; never stored elsewhere, logged or shown.
    options : ClientOptions
    transport : BaseTransport, optional
        The wire under the HTTP layer (default: sockets).
    """

    def __init__(
        self,
        base_url: str,
        project_id: str,
        api_key: Secret,
        options: ClientOptions,
        *,
        transport: BaseTransport | None = None,
    ) -> None:
        self.options = options
        self.base_url = base_url
        self.project_id = project_id
        self.source = options.source or base_url
        """What the service is, for provenance and cache keys."""
        self.transport = transport
        assert options.cache_dir is not None  # resolved by ClientOptions
        self.cache_dir = options.cache_dir
        self.policy = CachePolicy(
            enabled=options.cache,
            offline=options.offline,
            expire_after=int(options.expire_after),
            settle_after=options.settle_after,
        )
        self.http_cache: HttpCache | None = None
        self.chunks: ChunkStore | None = None
        make: Callable[[], requests.Session] = requests.Session
        if options.cache:
            self.http_cache = open_replies(
                self.cache_dir, base_url=base_url, namespace=f"{self.source}|{project_id}",
                expire_after=options.expire_after,
            )  # fmt: skip
            self.chunks = ChunkStore(self.cache_dir, read_only=self.http_cache.read_only)
            make = self.http_cache.session
        self._address = f"{base_url}/rest/{project_id}/"
        self.sender = Sender(
            base_url,
            SenderOptions(
                timeout=options.timeout, retries=options.retries, backoff=options.backoff,
                secret_header=("x-api-key", api_key), transport=transport,
                session_factory=sessions_from_environment(base_url, make, transport=transport),
            ),
        )  # fmt: skip
        memo = self.cache_dir / MEMO_FILE if options.cache else None
        self._sizes = {
            op: PageSize(options.page_size, memo=memo, key=f"{self.source}|{project_id}|{op}")
            for op in LISTINGS
        }
        self._bounds: bounds.Bounds | None = None
        self._announced = threading.Event()
        self._lock = threading.Lock()
        self._owned: list[_Closeable] = []
        self.coverage = coverage.for_session(self)

    # ------------------------------------------------------------------ the clock

    def now(self) -> pd.Timestamp:
        """The client's "now" (its ``clock`` option, or the system clock)."""
        if self.options.clock is None:
            return pd.Timestamp.now(tz="UTC")
        return to_timestamp(self.options.clock(), name="clock()")

    def window(
        self, start: TimeLike | None, end: TimeLike | None
    ) -> tuple[pd.Timestamp, pd.Timestamp]:
        """The half-open window ``[start, end)`` as Timestamps (default: the last day).

        Raises
        ------
        ValueError
            If the window starts before 1970-01-01: the interface's times are
            Unix seconds from 0 (the service would answer a raw 400).
        """
        start_ts, end_ts = window(start, end, now=self.now())
        return from_unix_epoch(start_ts), end_ts

    def settled(self, end: pd.Timestamp) -> bool:
        """Whether a window ending at ``end`` can no longer change."""
        return self.policy.settled(end, self.now())

    def keep_for(self, end: pd.Timestamp) -> Keep:
        """How long to keep a reply about a window ending at ``end``."""
        return self.policy.keep_for(end, self.now())

    # ------------------------------------------------------------------ synthetic data

    @property
    def synthetic(self) -> bool:
        """Whether the data is synthetic: the client was told so, or the service said so."""
        return self.options.synthetic or self._announced.is_set()

    def note_synthetic(self) -> None:
        """The service said its data is synthetic (a reply's header, a chunk stored from one)."""
        self._announced.set()

    # ------------------------------------------------------------------ the call path

    def post(
        self,
        operation: str,
        body: Mapping[str, Any],
        *,
        stats: RequestStats,
        check: Callable[[Any], None],
        keep: Keep,
        cancel: threading.Event | None = None,
    ) -> Answer:
        """One request; the cache policy decides what the reply cache does with it."""
        caching = self.policy.request(keep)
        answer = self.sender.send(
            envelope.request(self._address, operation, body, caching=caching, check=check),
            stats=stats,
            cancel=cancel,
        )
        if answer.synthetic:
            self.note_synthetic()
        return answer

    def call(
        self,
        operation: str,
        params: dict[str, Any],
        fetch: Callable[[Call], _Result],
    ) -> _Result:
        """Run one public call: its counters, coverage check, provenance and log summary."""
        call = Call(
            operation,
            cancel=threading.Event(),
            progress=self.options.progress,
            max_workers=self.options.max_workers,
            abort=self.sender.abort,
            resume=self.sender.resume,
        )
        start, end = params.get("start"), params.get("end")
        windowed = isinstance(start, pd.Timestamp) and isinstance(end, pd.Timestamp)
        if windowed:
            # what the data covers of the window, asked beside the call's own requests
            call.beside(
                lambda stats: self.coverage.check(start, end, stats=stats, cancel=call.cancel)
            )
        result = fetch(call)
        covered = None
        if windowed:
            # warns once (here, on the calling thread) when the data does not cover it all,
            # at the user's line: above this, the endpoint function and the Client's method
            covered = self.coverage.covered(start, end, call.beside_result(), stacklevel=4)
        return record(
            call, result, params, source=self.source, synthetic=self.synthetic,
            project_id=self.project_id, coverage=covered,
        )  # fmt: skip

    # ------------------------------------------------------------------ shared state

    def page_size(self, operation: str) -> PageSize:
        """The page size of a listing operation (learned once, shared by every call)."""
        return self._sizes[operation]

    def chunk_key(self, *, settled: bool, **parts: Any) -> str | None:
        """The chunk-cache key of a listing chunk, or ``None`` when it is not to be kept."""
        if self.chunks is None or not self.policy.chunk_kept(settled):
            return None
        return ChunkStore.key(
            **parts,
            settled=settled,
            source=self.source,
            project_id=self.project_id,
            decimals=self.options.decimals,
        )

    def bounds(self, call: Call, start: pd.Timestamp, end: pd.Timestamp) -> bounds.Bounds:
        """The service's bound semantics, learned once per session."""
        with self._lock:
            if self._bounds is not None:
                return self._bounds

        def post(operation: str, body: Mapping[str, Any], **kw: Any) -> Answer:
            return self.post(operation, body, stats=call.stats, cancel=call.cancel, **kw)

        mode = bounds.learn(
            post, start, end, size=self._sizes["transactions-mint"], keep_for=self.keep_for
        )
        with self._lock:
            self._bounds = mode
        return mode

    def retain(self, answer: Answer, keep: Keep) -> None:
        """Keep a reply just fetched as ``keep`` says, once its content is known.

        Only :attr:`~cctx_research.net.Keep.FOREVER` changes anything: a reply asked
        for as fresh that turned out final (a completed transaction).
        """
        if keep is not Keep.FOREVER or answer.from_cache or not answer.cache_key:
            return
        if self.http_cache is not None:
            self.http_cache.keep_forever(answer.cache_key)

    # ------------------------------------------------------------------ cache

    def cache_info(self) -> dict[str, Any]:
        """Where the cache is and how much it holds (see ``Client.cache_info``)."""
        http_entries = self.http_cache.count() if self.http_cache is not None else 0
        chunk_entries = len(self.chunks.files()) if self.chunks is not None else 0
        return {
            "enabled": self.http_cache is not None,
            "location": str(self.cache_dir),
            "entries": http_entries + chunk_entries,
            "http_entries": http_entries,
            "chunk_entries": chunk_entries,
            "bytes": directory_bytes(self.cache_dir) if self.cache_dir.exists() else 0,
        }

    def clear_cache(self, older_than: Any = None) -> int:
        """Remove cached entries (see ``Client.clear_cache``); how many."""
        age = None if older_than is None else parse_age(older_than, name="older_than")
        if self.http_cache is None or self.chunks is None:
            return 0
        removed = self.http_cache.clear(age) + self.chunks.clear(age)
        logger.info("cache: removed %d entries from %s", removed, self.cache_dir)
        return removed

    # ------------------------------------------------------------------ lifetime

    def own(self, resource: _Closeable) -> None:
        """Close ``resource`` with the session (the local service it was joined to)."""
        self._owned.append(resource)

    def close(self) -> None:
        """Close the HTTP sessions, the cache connections, the transport and what it owns."""
        self.sender.close()
        if self.http_cache is not None:
            self.http_cache.close()
        if self.transport is not None:
            self.transport.close()
        while self._owned:
            self._owned.pop().close()
