"""One request to a service: retries, envelope checks, typed errors.

:class:`Sender` sends ``POST {base_url}/rest/<project_id>/<operation>``
with the ``x-api-key`` header and returns the envelope's ``body``
(:meth:`Sender.post`), or ``GET {base_url}/<path>?<query>`` to an API that
answers plain JSON and returns it whole (:meth:`Sender.get`, used by the
Iris client). It owns
the retry policy (429, 5xx, timeouts, dropped connections and unreadable
replies are retried with exponential backoff and full jitter, honouring
``Retry-After`` in seconds or as an HTTP date) and maps everything else to
the exception tree of :mod:`cctx_research.errors`.

Cancelling: :meth:`Sender.post` takes a ``cancel`` event. Once it is
set, no new attempt starts, a wait between attempts ends at once, and
:meth:`Sender.abort` shuts down the sockets of requests in flight, so a
thread blocked reading a slow reply wakes up; the call then raises
:class:`Cancelled`. Every session's connections are made through
:class:`TrackingAdapter`, which is how the sender knows those sockets.

The wire under it is the default (sockets) or a
:class:`~.transports.BaseTransport` (``transport=``), mounted on every
session under the reply cache.

Both statuses are checked: the HTTP status and the envelope's ``status``,
since a reply can be HTTP 200 with an error envelope
(:func:`~.replies.read_reply` reads a reply; this module sends and retries).

The API key lives only in a :class:`~cctx_research.config.Secret` and in the
outgoing header. Error messages quote the service's own message, with the
key scrubbed out in case a service echoes it.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import queue
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlencode

import requests
from requests.adapters import BaseAdapter

from .. import errors
from ..config import Secret
from .pacing import PacedAdapter
from .replies import Answer, Retry, read_reply
from .sockets import Sockets, TrackingAdapter
from .stats import Cancelled, RequestStats
from .transports import BaseTransport, TransportAdapter

__all__ = [
    "Answer",
    "Cancelled",
    "RequestStats",
    "Sender",
]

logger = logging.getLogger(__name__)

_TRANSIENT_EXC = (
    requests.Timeout,
    requests.ConnectionError,
    requests.exceptions.ChunkedEncodingError,
    requests.exceptions.ContentDecodingError,
)


class _CacheMiss(Exception):
    """Internal: ``only_if_cached`` found nothing."""


SessionFactory = Callable[[], requests.Session]


class Sender:
    """Send interface operations with retries and typed errors.

    Parameters
    ----------
    base_url, project_id : str
        Already validated (see :mod:`cctx_research.config`).
    api_key : Secret
    session_factory : callable
        Makes a :class:`requests.Session` (plain or cached); one per worker
        thread, pooled.
    timeout : float
        Seconds per attempt (connect and read).
    retries : int
        Retries after the first attempt for transient failures.
    backoff : float
        Base of the exponential backoff in seconds (``backoff * 2**n``, full
        jitter), capped at ``max_backoff``.
    max_backoff : float
        Longest wait between attempts; a ``Retry-After`` beyond it gives up
        at once with :class:`~cctx_research.errors.RateLimitError`.
    transport : BaseTransport, optional
        The wire (default: sockets, tracked for :meth:`abort`).
    pace : callable, optional
        Called before every request that goes over the wire (not before a
        cache hit), from the thread sending it; blocks to keep a rate (see
        :class:`~.pacing.TokenBucket`).
    name : str, optional
        How logs and errors name the service (default ``base_url``). A
        ``base_url`` that carries a secret (a node's URL with its key in the
        path) is named by its host, and scrubbed from every message.
    """

    def __init__(
        self,
        base_url: str,
        project_id: str,
        api_key: Secret,
        *,
        session_factory: SessionFactory,
        timeout: float = 30.0,
        retries: int = 5,
        backoff: float = 0.5,
        max_backoff: float = 60.0,
        transport: BaseTransport | None = None,
        pace: Callable[[], Any] | None = None,
        name: str | None = None,
    ) -> None:
        self.base_url = base_url
        self.name = base_url if name is None else name
        self.project_id = project_id
        self._api_key = api_key
        self._session_factory = session_factory
        self._sessions: queue.LifoQueue[requests.Session] = queue.LifoQueue()
        self._all_sessions: list[requests.Session] = []
        self._lock = threading.Lock()
        self._socket_registry = Sockets()
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.transport = transport
        self.pace = pace
        self.sleep: Callable[[float], None] = time.sleep
        """How to wait between attempts (tests replace it)."""

    def url(self, operation: str) -> str:
        """The address of an operation (carries no secret)."""
        return f"{self.base_url}/rest/{self.project_id}/{operation}"

    @contextmanager
    def session(self) -> Iterator[requests.Session]:
        """Borrow a pooled session (one per concurrent worker)."""
        try:
            sess = self._sessions.get_nowait()
        except queue.Empty:
            sess = self._session_factory()
            adapter: BaseAdapter = (
                TrackingAdapter(self._socket_registry)
                if self.transport is None
                else TransportAdapter(self.transport)
            )
            if self.pace is not None:
                adapter = PacedAdapter(adapter, self.pace)
            sess.mount("http://", adapter)
            sess.mount("https://", adapter)
            with self._lock:
                self._all_sessions.append(sess)
        try:
            yield sess
        finally:
            self._sessions.put(sess)

    def abort(self) -> int:
        """Abandon the requests in flight: shut their sockets down; returns how many.

        Connections that finish connecting afterwards are shut down too,
        until :meth:`resume`.
        """
        return self._socket_registry.shutdown()

    def resume(self) -> None:
        """End an :meth:`abort`: new connections are kept again."""
        self._socket_registry.release()

    def close(self) -> None:
        """Close every pooled session."""
        with self._lock:
            sessions, self._all_sessions = self._all_sessions, []
        for sess in sessions:
            sess.close()
        while not self._sessions.empty():
            self._sessions.get_nowait()

    # ------------------------------------------------------------------

    def _scrub(self, text: str) -> str:
        key = self._api_key.get()
        text = text.replace(key, "***") if key else text
        return text.replace(self.base_url, self.name) if self.name != self.base_url else text

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        backoff = random.uniform(0, min(self.max_backoff, self.backoff * 2**attempt))
        return backoff if retry_after is None else max(retry_after, backoff)

    def post(
        self,
        operation: str,
        body: Mapping[str, Any],
        *,
        stats: RequestStats | None = None,
        only_if_cached: bool = False,
        expire_after: int | None = None,
        validate: Callable[[Any], None] | None = None,
        store: bool = True,
        cancel: threading.Event | None = None,
    ) -> Answer:
        """Send one operation and return the envelope's body.

        Parameters
        ----------
        operation : str
            ``"transactions-mint"`` etc.
        body : mapping
            The JSON request body.
        stats : RequestStats, optional
            Counters to update.
        only_if_cached : bool
            Answer from the HTTP cache alone (offline mode).
        expire_after : int, optional
            Seconds the cached reply stays fresh (``-1``: forever); only with
            a cached session.
        validate : callable, optional
            Checks the body's shape; raises
            :class:`~cctx_research.errors.ResponseSchemaError`. A reply that
            fails it is retried like a truncated one.
        store : bool
            ``False`` bypasses the HTTP cache for this request (neither read
            nor written).
        cancel : threading.Event, optional
            Once set, no further attempt is made and :class:`Cancelled` is raised.

        Raises
        ------
        AuthError, NotFoundError, BadRequestError
            At once: retrying cannot help.
        RateLimitError, ServerError, ResponseSchemaError
            When the failure persists past ``retries``.
        CacheMissError
            ``only_if_cached`` and the reply is not cached.
        Cancelled
            ``cancel`` was set.
        """
        payload = json.dumps(dict(body), separators=(",", ":"), sort_keys=True).encode()
        return self._send(
            operation, "POST", self.url(operation), payload, stats=stats,
            only_if_cached=only_if_cached, expire_after=expire_after, validate=validate,
            store=store, cancel=cancel, envelope=True,
        )  # fmt: skip

    def post_json(
        self,
        body: Any,
        *,
        operation: str,
        stats: RequestStats | None = None,
        validate: Callable[[Any], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> Answer:
        """``POST {base_url}`` with a JSON body, from an API that answers plain JSON.

        The JSON-RPC shape: one address, the question in the body. The same
        retries, typed errors and cancelling as :meth:`post`; never cached.
        ``operation`` names the request in logs and errors.
        """
        payload = json.dumps(body, separators=(",", ":")).encode()
        return self._send(
            operation, "POST", self.base_url, payload, stats=stats, only_if_cached=False,
            expire_after=None, validate=validate, store=False, cancel=cancel, envelope=False,
        )  # fmt: skip

    def get(
        self,
        path: str,
        params: Mapping[str, Any] | None = None,
        *,
        operation: str | None = None,
        stats: RequestStats | None = None,
        only_if_cached: bool = False,
        expire_after: int | None = None,
        validate: Callable[[Any], None] | None = None,
        store: bool = True,
        cancel: threading.Event | None = None,
    ) -> Answer:
        """``GET {base_url}/{path}?{params}`` from an API that answers plain JSON (no envelope).

        The same retries, cache options, typed errors and cancelling as
        :meth:`post`; the reply's JSON is the answer's ``body``, whole.
        ``params`` are sent sorted, so one question has one address (and
        one cache key). ``operation`` names the request in logs and errors
        (default: ``path``).
        """
        query = urlencode(sorted((str(k), str(v)) for k, v in (params or {}).items()))
        url = f"{self.base_url}/{path.lstrip('/')}" + (f"?{query}" if query else "")
        return self._send(
            operation or path, "GET", url, None, stats=stats, only_if_cached=only_if_cached,
            expire_after=expire_after, validate=validate, store=store, cancel=cancel,
            envelope=False,
        )  # fmt: skip

    def _send(
        self,
        operation: str,
        method: str,
        url: str,
        payload: bytes | None,
        *,
        stats: RequestStats | None,
        only_if_cached: bool,
        expire_after: int | None,
        validate: Callable[[Any], None] | None,
        store: bool,
        cancel: threading.Event | None,
        envelope: bool,
    ) -> Answer:
        attempt = 0
        while True:
            if cancel is not None and cancel.is_set():
                raise Cancelled
            try:
                answer = self._attempt(
                    operation, method, url, payload, stats, only_if_cached, expire_after,
                    validate, store, envelope,
                )  # fmt: skip
            except _CacheMiss:
                raise errors.CacheMissError(
                    "offline and this request is not in the cache",
                    operation=operation,
                    hint="run the same call once with offline=False to fill the cache",
                ) from None
            except Retry as exc:
                if cancel is not None and cancel.is_set():
                    raise Cancelled from None
                if exc.error.status in (429, 503) and stats is not None:
                    stats.add(throttled=1)
                if only_if_cached or attempt >= self.retries:
                    raise exc.error from None
                delay = self._delay(attempt, exc.retry_after)
                if exc.retry_after is not None and exc.retry_after > self.max_backoff:
                    raise exc.error from None
                attempt += 1
                if stats is not None:
                    stats.add(retries=1)
                logger.debug(
                    "%s: retry %d/%d in %.2fs after: %s",
                    operation,
                    attempt,
                    self.retries,
                    delay,
                    exc.error.message,
                )
                if cancel is not None and self.sleep is time.sleep:
                    cancel.wait(delay)  # a cancel ends the wait at once
                else:
                    self.sleep(delay)
                continue
            if stats is not None:
                stats.add(requests=1, cache_hits=int(answer.from_cache))
            return answer

    def _attempt(
        self,
        operation: str,
        method: str,
        url: str,
        payload: bytes | None,
        stats: RequestStats | None,
        only_if_cached: bool,
        expire_after: int | None,
        validate: Callable[[Any], None] | None,
        store: bool = True,
        envelope: bool = True,
    ) -> Answer:
        headers = {"Accept": "application/json"}
        if payload is not None:
            headers["Content-Type"] = "application/json"
        if self._api_key.get():  # an API that needs no key (Iris) is sent none
            headers["x-api-key"] = self._api_key.get()
        kwargs: dict[str, Any] = {}
        if only_if_cached:
            kwargs["only_if_cached"] = True
        if expire_after is not None:
            kwargs["expire_after"] = expire_after
        started = time.perf_counter()
        with self.session() as sess:
            try:
                if store or not hasattr(sess, "cache"):
                    resp = sess.request(
                        method,
                        url,
                        # bytes, so that http.client sends headers and body in
                        # one segment rather than two
                        data=payload,
                        headers=headers,
                        timeout=self.timeout,
                        **kwargs,
                    )
                else:
                    # a reply not to be kept (a settled chunk's page: the chunk
                    # cache keeps it parsed) skips the reply cache's machinery:
                    # sent by the plain requests path on the same connection
                    prepared = sess.prepare_request(
                        requests.Request(method, url, data=payload, headers=headers)
                    )
                    # proxies and CA bundle from the environment, as request() does
                    env = sess.merge_environment_settings(prepared.url, {}, None, None, None)
                    resp = requests.Session.send(sess, prepared, timeout=self.timeout, **env)
                content = resp.content  # reads it all: a dropped stream raises here
            except _TRANSIENT_EXC as exc:
                if stats is not None:
                    stats.add(network=1)
                kind = "timed out" if isinstance(exc, requests.Timeout) else "connection failed"
                logger.debug("%s -> %s (%s)", operation, kind, type(exc).__name__)
                raise Retry(
                    errors.ServerError(
                        f"request {kind} after {self.timeout}s timeout"
                        if kind == "timed out"
                        else f"connection to {self.name} failed ({type(exc).__name__})",
                        operation=operation,
                        hint="check the service is up, or raise timeout=",
                    )
                ) from exc
            except requests.RequestException as exc:
                raise errors.ServerError(
                    f"request failed: {type(exc).__name__}",
                    operation=operation,
                    hint="check base_url",
                ) from exc
        from_cache = bool(getattr(resp, "from_cache", False))
        if not from_cache and stats is not None:
            stats.add(network=1)
        elapsed = time.perf_counter() - started
        # requests-cache answers an only-if-cached miss with a bodiless 504 "Not Cached"
        if only_if_cached and resp.status_code == 504 and (content is None or not from_cache):
            logger.debug("%s -> cache miss (offline)", operation)
            raise _CacheMiss
        logger.debug(
            "%s -> %d%s (%.3fs)",
            operation,
            resp.status_code,
            " cache hit" if from_cache else "",
            elapsed,
        )
        if payload is not None:
            logger.debug("%s request body %s", operation, payload.decode())
        try:
            answer = read_reply(
                operation, resp.status_code, resp.headers, content, from_cache, validate,
                enveloped=envelope, scrub=self._scrub,
            )  # fmt: skip
        except Retry:
            # A cached reply that fails the checks must not be served again.
            cache = getattr(sess, "cache", None)
            key = getattr(resp, "cache_key", None)
            if from_cache and cache is not None and key:
                cache.delete(key)
            raise
        return dataclasses.replace(answer, cache_key=getattr(resp, "cache_key", None))
