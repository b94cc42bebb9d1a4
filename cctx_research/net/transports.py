"""The transport seam: what carries one HTTP request to the service and its reply back.

By default a sender talks to its service over real sockets. A
:class:`BaseTransport` passed as ``transport=`` (``Client(...,
transport=...)``, ``IrisClient(..., transport=...)``, ``sync(...,
transport=...)``) replaces that wire, and only that: retries, the reply
cache, reply checks and typed errors work the same over any transport,
since the sender still speaks HTTP (method, address, headers, body; status,
headers, body). :class:`WSGITransport` calls a WSGI application in this
process, with no socket: how :func:`cctx_research.connect` serves local
data and the embedded sample. :class:`MockTransport` answers with a
function, for tests. Tests and in-process services plug in here (as with
httpx's ``BaseTransport.handle_request``).

Examples
--------
>>> def app(environ, start_response):
...     start_response("200 OK", [("Content-Type", "application/json")])
...     return [b'{"status": 200, "body": {}}']
>>> reply = WSGITransport(app).handle_request(
...     Request("POST", "http://local.invalid/rest/p/op", {}, b"{}"))
>>> reply.status_code, reply.content
(200, b'{"status": 200, "body": {}}')
>>> echo = MockTransport(lambda request: Response(200, {}, request.content))
>>> echo.handle_request(Request("POST", "http://x.invalid/", {}, b"[1]")).content
b'[1]'
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3 import HTTPResponse

from .bodies import WholeBody

__all__ = [
    "BaseTransport", "MockTransport", "Request", "Response", "TransportAdapter", "WSGITransport",
]


@dataclass(frozen=True)
class Request:
    """One HTTP request as the sender sends it."""

    method: str
    url: str
    headers: Mapping[str, str]
    content: bytes = b""
    timeout: float | None = None


@dataclass(frozen=True)
class Response:
    """One HTTP reply: status, headers and the whole body."""

    status_code: int
    headers: Mapping[str, str] = field(default_factory=dict)
    content: bytes = b""
    reason: str = ""


class BaseTransport:
    """Carries one request to the service and returns its reply.

    Subclasses implement :meth:`handle_request`; it is called from the
    sender's worker threads, so it must be safe to call concurrently. A
    transport raises :class:`requests.ConnectionError` (or
    :class:`requests.Timeout`) for a failure worth retrying, like a
    dropped connection.
    """

    def handle_request(self, request: Request) -> Response:
        """The reply to ``request``."""
        raise NotImplementedError

    def close(self) -> None:
        """Release what the transport holds (nothing by default)."""


WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class WSGITransport(BaseTransport):
    """Serve requests by calling a WSGI application in this process (no socket, no server).

    Parameters
    ----------
    app : callable
        A WSGI application, such as the local service's.
    on_close : callable, optional
        Called once by :meth:`close` (to release what serves the app).
    """

    def __init__(self, app: WSGIApp, *, on_close: Callable[[], Any] | None = None) -> None:
        if not callable(app):
            raise TypeError(
                f"app must be a WSGI application (a callable), got {type(app).__name__}"
            )
        self.app = app
        self._on_close = on_close

    def handle_request(self, request: Request) -> Response:
        """Call the application with the request's WSGI environment; its reply."""
        parts = urlsplit(request.url)
        environ: dict[str, Any] = {
            "REQUEST_METHOD": request.method.upper(),
            "SCRIPT_NAME": "",
            "PATH_INFO": unquote(parts.path) or "/",
            "QUERY_STRING": parts.query,
            "SERVER_NAME": parts.hostname or "localhost",
            "SERVER_PORT": str(parts.port or (443 if parts.scheme == "https" else 80)),
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": "127.0.0.1",
            "CONTENT_LENGTH": str(len(request.content)),
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": parts.scheme or "http",
            "wsgi.input": io.BytesIO(request.content),
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": True,
            "wsgi.multiprocess": False,
            "wsgi.run_once": False,
        }
        for name, value in request.headers.items():
            key = name.upper().replace("-", "_")
            if key == "CONTENT_TYPE":
                environ["CONTENT_TYPE"] = value
            elif key != "CONTENT_LENGTH":
                environ["HTTP_" + key] = value
        started: list[Any] = []

        def start_response(
            status: str, headers: list[tuple[str, str]], exc_info: Any = None
        ) -> Any:
            started[:] = [status, headers]
            return lambda data: None  # the legacy write(): unused by the service

        chunks = self.app(environ, start_response)
        try:
            body = b"".join(chunks)
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()
        status, headers = started
        code, _, reason = status.partition(" ")
        return Response(int(code), dict(headers), body, reason)

    def close(self) -> None:
        """Call ``on_close`` once."""
        on_close, self._on_close = self._on_close, None
        if on_close is not None:
            on_close()

    def __repr__(self) -> str:
        return f"WSGITransport({getattr(self.app, '__name__', type(self.app).__name__)})"


class MockTransport(BaseTransport):
    """Answer every request with ``handler(request)``: a service as a function, for tests.

    As httpx's ``MockTransport``: the handler gets each :class:`Request` and
    returns a :class:`Response`, or raises :class:`requests.ConnectionError`
    (or :class:`requests.Timeout`) for a fault worth retrying. It is called
    from the sender's worker threads.

    Parameters
    ----------
    handler : callable
        ``handler(request) -> Response``.
    """

    def __init__(self, handler: Callable[[Request], Response]) -> None:
        if not callable(handler):
            raise TypeError(
                f"handler must be a callable taking a Request, got {type(handler).__name__}"
            )
        self.handler = handler

    def handle_request(self, request: Request) -> Response:
        """The handler's reply to ``request``."""
        return self.handler(request)

    def __repr__(self) -> str:
        return f"MockTransport({getattr(self.handler, '__name__', type(self.handler).__name__)})"


class TransportAdapter(HTTPAdapter):
    """A requests adapter that sends through a :class:`BaseTransport`.

    Mounted on every session of a sender built with ``transport=``, under
    the reply cache, so that cached sessions work unchanged. The reply is
    handed to requests as an HTTP response over its body, which requests
    reads whole (:class:`~.bodies.WholeBody`), as it is: the transport's
    reply is already what the application sent.
    """

    def __init__(self, transport: BaseTransport) -> None:
        super().__init__(pool_connections=1, pool_maxsize=1)
        self.transport = transport

    def send(  # type: ignore[override]
        self, request: requests.PreparedRequest, stream: bool = False,
        timeout: Any = None, **kwargs: Any,
    ) -> requests.Response:  # fmt: skip
        body = request.body or b""
        if isinstance(body, str):
            body = body.encode()
        reply = self.transport.handle_request(
            Request(
                str(request.method), str(request.url), dict(request.headers), bytes(body),
                timeout if isinstance(timeout, (int, float)) else None,
            )
        )  # fmt: skip
        raw = HTTPResponse(
            body=io.BytesIO(reply.content),
            headers=dict(reply.headers),
            status=reply.status_code,
            reason=reply.reason,
            preload_content=False,
            decode_content=False,
            request_url=request.url,
        )
        return self.build_response(request, WholeBody(raw, decode=False))
