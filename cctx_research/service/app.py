"""The WSGI edge of the local service: routing, authentication, the envelope.

:func:`make_app` returns a plain WSGI application (no framework) serving
``POST /rest/<project_id>/<operation>`` for the five operations of the
interface over a :class:`~cctx_research.service.store.Store`: it checks the
path, the key, the method and the body, then dispatches the parsed request
to its operation's handler (:data:`~cctx_research.service.handlers.HANDLERS`).
Every reply,
errors included, is the envelope ``{"status": <HTTP status>, "body": ...}``;
error bodies are ``{"error": code, "message": text}`` (see
:mod:`cctx_research.service` for the codes and the order of the checks).
A service of synthetic data says so on every reply, in the header
:data:`~cctx_research.provenance.SYNTHETIC_HEADER` (``x-cctx-synthetic:
true``), an extension to the interface that clients may ignore.

No client input can produce a 5xx: a 500 envelope is only the catch-all for
a bug, logged with its traceback but never with the API key, which is only
ever compared (:func:`hmac.compare_digest`), never logged or echoed.
"""

from __future__ import annotations

import hmac
import json
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import orjson

from ..provenance import SYNTHETIC_HEADER
from .fields import OPERATIONS
from .handlers import Reject, Request, handle, parse
from .store import Store

__all__ = ["make_app"]

logger = logging.getLogger(__name__)

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    413: "Payload Too Large",
    415: "Unsupported Media Type",
    500: "Internal Server Error",
}
_NO_SUCH_RESOURCE = "no such resource; use /rest/<project_id>/<operation>"

StartResponse = Callable[..., Any]


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            shown = json.dumps(key[:40])
            raise Reject(400, "invalid_json", f"duplicate key {shown} in the JSON body")
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise Reject(400, "invalid_json", f"{name} is not valid JSON; send numbers as digits")


def _decode(raw: bytes) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        text = raw.decode("utf-8")
        body = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except Reject:
        raise
    except (ValueError, RecursionError) as exc:
        reason = "not UTF-8" if isinstance(exc, UnicodeDecodeError) else "not valid JSON"
        raise Reject(400, "invalid_json", f"the request body is {reason}") from None
    if not isinstance(body, dict):
        raise Reject(400, "invalid_json", "the request body must be a JSON object")
    return body


def _media_type(value: str) -> None:
    media, _, params = value.partition(";")
    if media.strip().lower() != "application/json":
        raise Reject(
            415, "unsupported_media_type", "send the body as Content-Type: application/json"
        )
    for param in params.split(";"):
        name, _, val = param.partition("=")
        if name.strip().lower() == "charset" and val.strip().strip('"').lower() not in (
            "utf-8",
            "utf8",
        ):
            raise Reject(415, "unsupported_media_type", "JSON bodies must be UTF-8")


def _dump(envelope: dict[str, Any]) -> bytes:
    # orjson: about six times faster than json on a page of 1,000 mints, the
    # larger part of the service's own CPU in a pull; json stays for what it
    # refuses (integers past 64 bits)
    try:
        return orjson.dumps(envelope)
    except TypeError:
        return json.dumps(envelope, separators=(",", ":"), allow_nan=False).encode("utf-8")


def _key_bytes(value: str) -> bytes:
    # WSGI header values are latin-1 decoded text: this restores the raw bytes
    return value.encode("latin-1", errors="replace")


@dataclass(frozen=True)
class _Service:
    """What :func:`make_app` was given, checked: the store, the credentials, the limits."""

    store: Store
    api_key: str = field(repr=False)
    project_id: str
    max_body: int
    log_level: int
    synthetic: bool

    def __post_init__(self) -> None:
        if not isinstance(self.store, Store):
            raise TypeError(f"store must be a Store, got {type(self.store).__name__}")
        if not isinstance(self.api_key, str) or not self.api_key:
            raise ValueError("api_key must be a non-empty str")
        project_id = self.project_id
        if not isinstance(project_id, str) or not project_id or "/" in project_id:
            raise ValueError("project_id must be a non-empty path segment")
        max_body = self.max_body
        if isinstance(max_body, bool) or not isinstance(max_body, int) or max_body < 1:
            raise ValueError(f"max_body must be a positive int, got {max_body!r}")
        if not isinstance(self.synthetic, bool):
            raise TypeError(
                f"synthetic must be True or False, got {type(self.synthetic).__name__}"
            )

    @property
    def headers(self) -> list[tuple[str, str]]:
        """The headers of every reply (a service of synthetic data says so on each)."""
        announced = [(SYNTHETIC_HEADER, "true")] if self.synthetic else []
        return [("Content-Type", "application/json"), ("Cache-Control", "no-store"), *announced]


def make_app(
    store: Store,
    *,
    api_key: str,
    project_id: str,
    max_body: int = 65536,
    log_level: int = logging.INFO,
    synthetic: bool = False,
) -> Callable[[dict[str, Any], StartResponse], Iterable[bytes]]:
    """Build the WSGI application of the local service.

    Parameters
    ----------
    store : Store
        What the operations query.
    api_key : str
        The key every request must send as ``x-api-key``.
    project_id : str
        The project path segment (``/rest/<project_id>/<operation>``).
    log_level : int
        Level of the one line logged per request (the embedded service logs
        at DEBUG: the client in the same process already logs each request).
    max_body : int, default 65536
        Largest accepted request body in bytes; larger ones get a 413.
    synthetic : bool, default False
        The store holds synthetic data: every reply carries the header
        ``x-cctx-synthetic: true``, so that any client marks what it fetches.

    Returns
    -------
    callable
        A WSGI application (PEP 3333).

    Raises
    ------
    TypeError, ValueError
        If ``api_key`` or ``project_id`` is empty or not a str.
    """
    service = _Service(store, api_key, project_id, max_body, log_level, synthetic)
    return partial(_serve, service)


def _check_key(service: _Service, environ: dict[str, Any]) -> None:
    sent = environ.get("HTTP_X_API_KEY")
    if sent is None:
        raise Reject(401, "unauthorized", "send your API key in the x-api-key header")
    if not hmac.compare_digest(_key_bytes(sent), service.api_key.encode("utf-8")):
        raise Reject(401, "unauthorized", "the x-api-key header does not hold a valid key")


def _read_body(service: _Service, environ: dict[str, Any]) -> bytes:
    max_body = service.max_body
    length_text = (environ.get("CONTENT_LENGTH") or "").strip()
    if length_text and not length_text.isdigit():
        raise Reject(400, "invalid_json", "the Content-Length header is not a number")
    length = int(length_text) if length_text else None
    if length is not None and length > max_body:
        raise Reject(413, "payload_too_large", f"the request body is over {max_body} bytes")
    stream = environ["wsgi.input"]
    raw = stream.read(length) if length is not None else stream.read(max_body + 1)
    if len(raw) > max_body:
        raise Reject(413, "payload_too_large", f"the request body is over {max_body} bytes")
    return raw


def _route(service: _Service, environ: dict[str, Any]) -> Request:
    """The parsed request ``environ`` makes, checked in the order the service documents."""
    path = environ.get("PATH_INFO") or "/"
    parts = path.split("/")
    if len(parts) < 2 or parts[1] != "rest":
        raise Reject(404, "not_found", _NO_SUCH_RESOURCE)
    _check_key(service, environ)
    if len(parts) != 4:
        raise Reject(404, "not_found", _NO_SUCH_RESOURCE)
    _, _, project, operation = parts
    if project != service.project_id:
        raise Reject(404, "not_found", "no such project")
    if operation not in OPERATIONS:
        raise Reject(404, "not_found", f"no such operation; use one of: {', '.join(OPERATIONS)}")
    if environ.get("REQUEST_METHOD") != "POST":
        raise Reject(405, "method_not_allowed", f"{operation} takes POST only")
    _media_type(environ.get("CONTENT_TYPE") or "")
    body = _decode(_read_body(service, environ))
    return parse(service.store, operation, body)


def _operation_named(environ: dict[str, Any]) -> str:
    """The operation the path names, for the log line (``unknown``, or ``-`` for no operation)."""
    parts = (environ.get("PATH_INFO") or "").split("/")
    if len(parts) == 4 and parts[1] == "rest":
        return parts[3][:64] if parts[3] in OPERATIONS else "unknown"
    return "-"


def _serve(
    service: _Service, environ: dict[str, Any], start_response: StartResponse
) -> Iterable[bytes]:
    """The WSGI application: route, dispatch to the operation's handler, send the envelope."""
    started = time.perf_counter()
    operation = "-"
    headers = service.headers
    try:
        operation = _operation_named(environ)
        request = _route(service, environ)
        operation = request.operation
        status, data = 200, _dump({"status": 200, "body": handle(service.store, request)})
    except Reject as exc:
        status = exc.status
        data = _dump({"status": status, "body": {"error": exc.code, "message": exc.message}})
        if status == 405:
            headers.append(("Allow", "POST"))
    except Exception:
        # a bug, not the client's doing: the traceback goes to the log, the
        # environ (which holds the key) does not
        logger.exception("internal error while serving %s", operation)
        status = 500
        data = _dump(
            {"status": 500, "body": {"error": "internal_error", "message": "internal error"}}
        )
    headers.append(("Content-Length", str(len(data))))
    start_response(f"{status} {_REASONS[status]}", headers)
    logger.log(
        service.log_level,
        "%s %s -> %d (%.1f ms)",
        environ.get("REQUEST_METHOD", "-")[:10],
        operation,
        status,
        (time.perf_counter() - started) * 1000,
    )
    # A HEAD reply carries the headers of the reply a GET would get and no
    # body; sending one would desynchronise a keep-alive connection.
    return [b""] if environ.get("REQUEST_METHOD") == "HEAD" else [data]
