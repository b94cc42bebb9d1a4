"""WSGI wrappers that make a well-behaved service misbehave, for tests and benchmarks.

Two wrappers around any WSGI application (the local service's
:func:`~cctx_research.service.app.make_app`), served with
:func:`~cctx_research.service.server.start_in_background`:

:class:`FaultInjector`
    Random transport and protocol faults: 5xx, 429 with ``Retry-After``
    (seconds or an HTTP date), stalls past the client's timeout, truncated
    JSON, a body cut short of its ``Content-Length`` (a dropped connection),
    and error envelopes under HTTP 200. ``max_per_request`` bounds how often
    the *same* request (method, path and body) is hit, so faults are
    transient (a retrying client must end with the clean answer) or, with
    ``None`` and ``rate=1``, persistent (it must raise a typed error).

:class:`Semantics`
    A service that is correct but decides what the interface leaves open
    differently: exclusive bounds, a silent cap on ``limit``, shuffled
    records within a page.

Reuse outside the test suite (the reliability benchmark)::

    import sys; sys.path.insert(0, "tests")
    from client.faults import FaultInjector, Semantics

Examples
--------
>>> from cctx_research.service.server import start_in_background  # doctest: +SKIP
>>> faulty = FaultInjector(app, rate=0.3, seed=1)  # doctest: +SKIP
>>> handle = start_in_background(faulty)  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import email.utils
import hashlib
import io
import json
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

__all__ = ["FAULT_KINDS", "FaultInjector", "Semantics"]

WSGIApp = Callable[..., Iterable[bytes]]

FAULT_KINDS = (
    "server_error",  # HTTP 500/502/503/504 with an error envelope
    "rate_limit",  # HTTP 429 with Retry-After
    "stall",  # sleep past the client's timeout, then answer normally
    "truncate",  # HTTP 200, JSON cut in half (consistent Content-Length)
    "drop",  # HTTP 200, Content-Length promises more than is sent
    "envelope_error",  # HTTP 200 with {"status": 503, "body": {...}}
)


def _read_body(environ: dict[str, Any]) -> bytes:
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    body = environ["wsgi.input"].read(length) if length > 0 else b""
    environ["wsgi.input"] = io.BytesIO(body)
    environ["CONTENT_LENGTH"] = str(len(body))
    return body


def _call(app: WSGIApp, environ: dict[str, Any]) -> tuple[str, list[tuple[str, str]], bytes]:
    captured: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
        captured["status"], captured["headers"] = status, headers

    chunks = app(environ, start_response)
    try:
        body = b"".join(chunks)
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
    return captured["status"], captured["headers"], body


def _envelope(status: int, error: str, message: str) -> bytes:
    return json.dumps({"status": status, "body": {"error": error, "message": message}}).encode()


class FaultInjector:
    """Inject random faults into a WSGI application.

    Parameters
    ----------
    app : WSGI application
    rate : float, default 0.3
        Probability that a request gets a fault.
    kinds : sequence of str, default all of :data:`FAULT_KINDS`
        Which faults to draw from.
    max_per_request : int or None, default 2
        Faults at most this many times per distinct request; ``None``: no
        bound (with ``rate=1.0``, a persistent fault).
    seed : int, default 0
    retry_after : str, default "1"
        ``Retry-After`` value for 429s; ``"date"`` sends an HTTP date one
        second ahead.
    stall_seconds : float, default 2.0
        How long a stall sleeps; set above the client's ``timeout``.

    Attributes
    ----------
    injected : collections.Counter
        Faults injected, by kind.
    requests : int
        Requests seen.
    """

    def __init__(
        self,
        app: WSGIApp,
        *,
        rate: float = 0.3,
        kinds: Sequence[str] = FAULT_KINDS,
        max_per_request: int | None = 2,
        seed: int = 0,
        retry_after: str = "1",
        stall_seconds: float = 2.0,
    ) -> None:
        unknown = set(kinds) - set(FAULT_KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}; use {FAULT_KINDS}")
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"rate must be within [0, 1], got {rate}")
        self.app = app
        self.rate = rate
        self.kinds = tuple(kinds)
        self.max_per_request = max_per_request
        self.retry_after = retry_after
        self.stall_seconds = stall_seconds
        self.injected: Counter[str] = Counter()
        self.requests = 0
        self._random = random.Random(seed)
        self._per_request: Counter[str] = Counter()
        self._lock = threading.Lock()
        self.enabled = True

    def _draw(self, key: str) -> str | None:
        with self._lock:
            self.requests += 1
            if not self.enabled or not self.kinds:
                return None
            if self.max_per_request is not None and self._per_request[key] >= self.max_per_request:
                return None
            if self._random.random() >= self.rate:
                return None
            kind = self._random.choice(self.kinds)
            self._per_request[key] += 1
            self.injected[kind] += 1
            return kind

    def _retry_after(self) -> str:
        if self.retry_after == "date":
            return email.utils.formatdate(time.time() + 1, usegmt=True)
        return self.retry_after

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        body = _read_body(environ)
        key = hashlib.sha256(
            environ.get("REQUEST_METHOD", "").encode()
            + environ.get("PATH_INFO", "").encode()
            + body
        ).hexdigest()
        kind = self._draw(key)
        if kind == "server_error":
            code = self._random.choice([500, 502, 503, 504])
            payload = _envelope(code, "injected", "injected server error")
            start_response(f"{code} Error", [("Content-Type", "application/json")])
            return [payload]
        if kind == "rate_limit":
            payload = _envelope(429, "rate_limited", "injected rate limit")
            start_response(
                "429 Too Many Requests",
                [("Content-Type", "application/json"), ("Retry-After", self._retry_after())],
            )
            return [payload]
        if kind == "envelope_error":
            payload = _envelope(503, "unavailable", "injected error envelope under HTTP 200")
            start_response("200 OK", [("Content-Type", "application/json")])
            return [payload]
        if kind == "stall":
            time.sleep(self.stall_seconds)
        status, headers, payload = _call(self.app, environ)
        headers = [(k, v) for k, v in headers if k.lower() != "content-length"]
        if kind == "truncate":
            payload = payload[: max(1, len(payload) // 2)]
        if kind == "drop":
            headers.append(("Content-Length", str(len(payload) + 1000)))
            start_response(status, headers)
            return [payload[: len(payload) // 2]]
        headers.append(("Content-Length", str(len(payload))))
        start_response(status, headers)
        return [payload]


class Semantics:
    """Serve the same data with other answers to what the interface leaves open.

    Parameters
    ----------
    app : WSGI application
        The local service (inclusive bounds, ordered results).
    start_exclusive, end_exclusive : bool
        Make ``startDate`` / ``endDate`` exclusive (by shifting them by one
        second before the inner service, whose bounds are inclusive).
    max_limit : int, optional
        Silently cap ``limit`` (pages are cut at the capped size).
    shuffle : bool
        Shuffle groups and records within each page.
    seed : int
    """

    def __init__(
        self,
        app: WSGIApp,
        *,
        start_exclusive: bool = False,
        end_exclusive: bool = False,
        max_limit: int | None = None,
        shuffle: bool = False,
        seed: int = 0,
    ) -> None:
        self.app = app
        self.start_exclusive = start_exclusive
        self.end_exclusive = end_exclusive
        self.max_limit = max_limit
        self.shuffle = shuffle
        self._random = random.Random(seed)
        self._lock = threading.Lock()

    def _rewrite(self, request: dict[str, Any]) -> dict[str, Any]:
        request = dict(request)
        if self.start_exclusive and "startDate" in request:
            request["startDate"] = str(int(request["startDate"]) + 1)
        if self.end_exclusive and "endDate" in request:
            request["endDate"] = str(int(request["endDate"]) - 1)
        if self.max_limit is not None and "limit" in request:
            limit = int(request["limit"])
            if limit > self.max_limit:
                request["limit"] = self.max_limit
        return request

    def _shuffle(self, envelope: dict[str, Any]) -> dict[str, Any]:
        body = envelope.get("body")
        with self._lock:
            if isinstance(body, list):
                self._random.shuffle(body)
                for group in body:
                    if isinstance(group, dict) and isinstance(group.get("transactions"), list):
                        self._random.shuffle(group["transactions"])
            elif isinstance(body, dict) and isinstance(body.get("transactions"), list):
                self._random.shuffle(body["transactions"])
        return envelope

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        raw = _read_body(environ)
        try:
            request = json.loads(raw) if raw else {}
        except ValueError:
            request = None
        if isinstance(request, dict):
            rewritten = json.dumps(self._rewrite(request)).encode()
            environ["wsgi.input"] = io.BytesIO(rewritten)
            environ["CONTENT_LENGTH"] = str(len(rewritten))
        status, headers, payload = _call(self.app, environ)
        if self.shuffle and status.startswith("200"):
            with contextlib.suppress(ValueError):
                payload = json.dumps(self._shuffle(json.loads(payload))).encode()
        headers = [(k, v) for k, v in headers if k.lower() != "content-length"]
        headers.append(("Content-Length", str(len(payload))))
        start_response(status, headers)
        return [payload]
