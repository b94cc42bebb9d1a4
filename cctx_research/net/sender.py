"""One request to a service: attempts, backoff, typed errors, cancelling.

:class:`Sender` is the one core every request of the toolkit goes through:
:meth:`Sender.send` takes an :class:`~.protocols.Outgoing` (what to send,
how to read its reply, what the reply cache does with it) and returns the
:class:`~.replies.Answer`. Each protocol builds its requests on it: the
analytics interface's envelope POST
(:func:`cctx_research.client.envelope.request`), a REST GET
(:func:`~.protocols.rest_get`, Iris), a JSON POST
(:func:`~.protocols.json_post`, JSON-RPC).

The core owns the retry policy: 429, 5xx, timeouts, dropped connections
and unreadable replies are retried with exponential backoff and full
jitter, honouring ``Retry-After`` in seconds or as an HTTP date; everything
else is mapped to the exception tree of :mod:`cctx_research.errors`. It
counts what it does (:class:`~.stats.RequestStats`), keeps a rate when
told to (``pace``, paid only by requests that go over the wire), and
scrubs every secret out of the messages it raises.

Cancelling: :meth:`Sender.send` takes a ``cancel`` event. Once it is set,
no new attempt starts, a wait between attempts ends at once, and
:meth:`Sender.abort` shuts down the sockets of requests in flight, so a
thread blocked reading a slow reply wakes up; the call then raises
:class:`~.stats.Cancelled`. Every session's connections are made through
:class:`~.sockets.TrackingAdapter`, which is how the sender knows those
sockets.

The wire under it is the default (sockets) or a
:class:`~.transports.BaseTransport` (``SenderOptions.transport``), mounted
on every session under the reply cache.
"""

from __future__ import annotations

import logging
import os
import queue
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import requests
from requests.adapters import BaseAdapter

from .. import errors
from .options import SenderOptions
from .pacing import PacedAdapter
from .protocols import Outgoing
from .replies import Answer, Retry, read_reply
from .sockets import Sockets, TrackingAdapter
from .stats import Cancelled, RequestStats
from .transports import BaseTransport, TransportAdapter

__all__ = ["Sender", "sessions_from_environment"]

logger = logging.getLogger(__name__)

_TRANSIENT_EXC = (
    requests.Timeout,
    requests.ConnectionError,
    requests.exceptions.ChunkedEncodingError,
    requests.exceptions.ContentDecodingError,
)

SessionFactory = Callable[[], requests.Session]


def sessions_from_environment(
    base_url: str, make: SessionFactory, *, transport: BaseTransport | None
) -> SessionFactory:
    """Sessions made by ``make`` with the environment's proxies and CA bundle, read once.

    requests re-reads the proxy variables of the environment on every
    request (a third of the client's CPU in a cold pull): they are read
    here, once, and the sessions do not read the environment again. (They
    configure the HTTP stack, not the toolkit.) Over a transport there is
    no proxy.
    """
    proxies = requests.utils.get_environ_proxies(base_url) if transport is None else {}
    ca_bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")

    def session_factory() -> requests.Session:
        session = make()
        session.trust_env = False
        session.proxies.update(proxies)
        if ca_bundle:
            session.verify = ca_bundle
        return session

    return session_factory


class Sender:
    """Send requests to one service with retries, typed errors and cancelling.

    Parameters
    ----------
    base_url : str
        The service's address, already validated; how logs and errors name
        it unless ``options.name`` says otherwise.
    options : SenderOptions, optional
        Timeout, retries, backoff, the secret header, the wire and the pace
        (see :class:`~.options.SenderOptions`).

    Attributes
    ----------
    pace : callable or None
        ``options.pace``; read when a session is made.
    sleep : callable
        How to wait between attempts (tests replace it).
    """

    def __init__(self, base_url: str, options: SenderOptions | None = None) -> None:
        options = SenderOptions() if options is None else options
        self.base_url = base_url
        self.options = options
        self.name = base_url if options.name is None else options.name
        self.transport = options.transport
        self.pace = options.pace
        self.sleep: Callable[[float], None] = time.sleep
        self._sessions: queue.LifoQueue[requests.Session] = queue.LifoQueue()
        self._all_sessions: list[requests.Session] = []
        self._lock = threading.Lock()
        self._socket_registry = Sockets()

    # ------------------------------------------------------------------ sessions

    @contextmanager
    def session(self) -> Iterator[requests.Session]:
        """Borrow a pooled session (one per concurrent worker)."""
        try:
            sess = self._sessions.get_nowait()
        except queue.Empty:
            sess = self._new_session()
        try:
            yield sess
        finally:
            self._sessions.put(sess)

    def _new_session(self) -> requests.Session:
        sess = self.options.session_factory()
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
        return sess

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

    # ------------------------------------------------------------------ the core

    def send(
        self,
        request: Outgoing,
        *,
        stats: RequestStats | None = None,
        cancel: threading.Event | None = None,
    ) -> Answer:
        """Send one request, retrying what is worth it, and return its answer.

        Parameters
        ----------
        request : Outgoing
            What to send and how to read its reply (built by a protocol's
            request path).
        stats : RequestStats, optional
            Counters to update.
        cancel : threading.Event, optional
            Once set, no further attempt is made and :class:`Cancelled` is raised.

        Raises
        ------
        AuthError, NotFoundError, BadRequestError
            At once: retrying cannot help.
        RateLimitError, ServerError, ResponseSchemaError
            When the failure persists past ``retries``.
        CacheMissError
            ``request.caching.only_if_cached`` and the reply is not cached.
        Cancelled
            ``cancel`` was set.
        """
        attempt = 0
        while True:
            if cancel is not None and cancel.is_set():
                raise Cancelled
            try:
                answer = self._attempt(request, stats)
            except Retry as exc:
                attempt = self._wait_to_retry(request, exc, attempt, stats, cancel)
                continue
            if stats is not None:
                stats.add(requests=1, cache_hits=int(answer.from_cache))
            return answer

    def _wait_to_retry(
        self,
        request: Outgoing,
        failure: Retry,
        attempt: int,
        stats: RequestStats | None,
        cancel: threading.Event | None,
    ) -> int:
        """Wait before the next attempt and return its number; raise when there is none."""
        if cancel is not None and cancel.is_set():
            raise Cancelled from None
        error, retry_after = failure.error, failure.retry_after
        if error.status in (429, 503) and stats is not None:
            stats.add(throttled=1)
        if request.caching.only_if_cached or attempt >= self.options.retries:
            raise error from None
        delay = self._delay(attempt, retry_after)
        if retry_after is not None and retry_after > self.options.max_backoff:
            raise error from None
        attempt += 1
        if stats is not None:
            stats.add(retries=1)
        logger.debug(
            "%s: retry %d/%d in %.2fs after: %s",
            request.operation, attempt, self.options.retries, delay, error.message,
        )  # fmt: skip
        if cancel is not None and self.sleep is time.sleep:
            cancel.wait(delay)  # a cancel ends the wait at once
        else:
            self.sleep(delay)
        return attempt

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        ceiling = min(self.options.max_backoff, self.options.backoff * 2**attempt)
        backoff = random.uniform(0, ceiling)
        return backoff if retry_after is None else max(retry_after, backoff)

    def _attempt(self, request: Outgoing, stats: RequestStats | None) -> Answer:
        """One attempt: its reply read, or :class:`Retry` for a failure worth another."""
        started = time.perf_counter()
        with self.session() as sess:
            response = self._exchange(sess, request, stats)
        from_cache = bool(getattr(response, "from_cache", False))
        if not from_cache and stats is not None:
            stats.add(network=1)
        # requests-cache answers an only-if-cached miss with a bodiless 504 "Not Cached"
        if (
            request.caching.only_if_cached
            and response.status_code == 504
            and (response.content is None or not from_cache)
        ):
            logger.debug("%s -> cache miss (offline)", request.operation)
            raise errors.CacheMissError(
                "offline and this request is not in the cache",
                operation=request.operation,
                hint="run the same call once with offline=False to fill the cache",
            ) from None
        if logger.isEnabledFor(logging.DEBUG):
            self._log(request, response, from_cache, time.perf_counter() - started)
        try:
            return read_reply(
                request.operation, response, reader=request.reader, validate=request.validate,
                from_cache=from_cache, scrub=self._scrub,
            )
        except Retry:
            if from_cache:  # a cached reply that fails the checks must not be served again
                _forget(sess, response)
            raise

    def _exchange(
        self, sess: requests.Session, request: Outgoing, stats: RequestStats | None
    ) -> requests.Response:
        """The reply to ``request``, read whole; faults of the wire mapped to typed errors."""
        headers = self._headers(request)
        caching = request.caching
        try:
            if caching.store or not hasattr(sess, "cache"):
                kwargs: dict[str, Any] = {}
                if caching.only_if_cached:
                    kwargs["only_if_cached"] = True
                if caching.expire_after is not None:
                    kwargs["expire_after"] = caching.expire_after
                response = sess.request(
                    request.method,
                    request.url,
                    # bytes, so that http.client sends headers and body in one segment
                    data=request.payload,
                    headers=headers,
                    timeout=self.options.timeout,
                    **kwargs,
                )
            else:
                response = self._past_the_cache(sess, request, headers)
            _ = response.content  # reads it all: a dropped stream raises here
        except _TRANSIENT_EXC as exc:
            raise self._transient(request, exc, stats) from exc
        except requests.RequestException as exc:
            raise errors.ServerError(
                f"request failed: {type(exc).__name__}",
                operation=request.operation,
                hint="check base_url",
            ) from exc
        return response

    def _past_the_cache(
        self, sess: requests.Session, request: Outgoing, headers: dict[str, str]
    ) -> requests.Response:
        # a reply not to be kept (a settled chunk's page: the chunk cache keeps
        # it parsed) skips the reply cache's machinery: sent by the plain
        # requests path on the same connection
        prepared = sess.prepare_request(
            requests.Request(request.method, request.url, data=request.payload, headers=headers)
        )
        # proxies and CA bundle as the session has them, as request() does
        env = sess.merge_environment_settings(prepared.url, {}, None, None, None)
        return requests.Session.send(sess, prepared, timeout=self.options.timeout, **env)

    def _headers(self, request: Outgoing) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        if request.payload is not None:
            headers["Content-Type"] = "application/json"
        if self.options.secret_header is not None:
            name, secret = self.options.secret_header
            value = secret.get()
            if value:  # an API that needs no key is sent none
                headers[name] = value
        return headers

    def _transient(
        self, request: Outgoing, exc: BaseException, stats: RequestStats | None
    ) -> Retry:
        """A timeout or a dropped connection, as a failure worth another attempt."""
        if stats is not None:
            stats.add(network=1)
        timed_out = isinstance(exc, requests.Timeout)
        logger.debug(
            "%s -> %s (%s)", request.operation,
            "timed out" if timed_out else "connection failed", type(exc).__name__,
        )  # fmt: skip
        message = (
            f"request timed out after {self.options.timeout}s timeout"
            if timed_out
            else f"connection to {self.name} failed ({type(exc).__name__})"
        )
        hint = "check the service is up, or raise timeout="
        return Retry(errors.ServerError(message, operation=request.operation, hint=hint))

    def _log(
        self, request: Outgoing, response: requests.Response, from_cache: bool, elapsed: float
    ) -> None:
        logger.debug(
            "%s -> %d%s (%.3fs)",
            request.operation,
            response.status_code,
            " cache hit" if from_cache else "",
            elapsed,
        )
        if request.payload is not None:
            logger.debug("%s request body %s", request.operation, request.payload.decode())

    def _scrub(self, text: str) -> str:
        """``text`` without the secret header's value, and the base URL told by its name."""
        if self.options.secret_header is not None:
            key = self.options.secret_header[1].get()
            text = text.replace(key, "***") if key else text
        return text.replace(self.base_url, self.name) if self.name != self.base_url else text

    def __repr__(self) -> str:
        return f"Sender({self.name!r})"


def _forget(sess: requests.Session, response: requests.Response) -> None:
    """Delete a stored reply from the session's cache (a cached session only)."""
    cache = getattr(sess, "cache", None)
    key = getattr(response, "cache_key", None)
    if cache is not None and key:
        cache.delete(key)
