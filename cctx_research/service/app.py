"""The WSGI edge of the local service: routing, authentication, the envelope.

:func:`make_app` returns a plain WSGI application (no framework) serving
``POST /rest/<project_id>/<operation>`` for the five operations of the
interface over a :class:`~cctx_research.service.store.Store`. Every reply,
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
from typing import Any

import orjson

from ..errors import NotFoundError
from ..provenance import SYNTHETIC_HEADER
from .fields import OPERATIONS, FieldError, parse_request
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
_WINDOWED = frozenset(op for op, fields in OPERATIONS.items() if "startDate" in fields)

StartResponse = Callable[..., Any]


class _Reject(Exception):
    """An error reply: HTTP status, error code and message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            shown = json.dumps(key[:40])
            raise _Reject(400, "invalid_json", f"duplicate key {shown} in the JSON body")
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise _Reject(400, "invalid_json", f"{name} is not valid JSON; send numbers as digits")


def _decode(raw: bytes) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        text = raw.decode("utf-8")
        body = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except _Reject:
        raise
    except (ValueError, RecursionError) as exc:
        reason = "not UTF-8" if isinstance(exc, UnicodeDecodeError) else "not valid JSON"
        raise _Reject(400, "invalid_json", f"the request body is {reason}") from None
    if not isinstance(body, dict):
        raise _Reject(400, "invalid_json", "the request body must be a JSON object")
    return body


def _media_type(value: str) -> None:
    media, _, params = value.partition(";")
    if media.strip().lower() != "application/json":
        raise _Reject(
            415, "unsupported_media_type", "send the body as Content-Type: application/json"
        )
    for param in params.split(";"):
        name, _, val = param.partition("=")
        if name.strip().lower() == "charset" and val.strip().strip('"').lower() not in (
            "utf-8",
            "utf8",
        ):
            raise _Reject(415, "unsupported_media_type", "JSON bodies must be UTF-8")


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
    if not isinstance(store, Store):
        raise TypeError(f"store must be a Store, got {type(store).__name__}")
    if not isinstance(api_key, str) or not api_key:
        raise ValueError("api_key must be a non-empty str")
    if not isinstance(project_id, str) or not project_id or "/" in project_id:
        raise ValueError("project_id must be a non-empty path segment")
    if isinstance(max_body, bool) or not isinstance(max_body, int) or max_body < 1:
        raise ValueError(f"max_body must be a positive int, got {max_body!r}")
    if not isinstance(synthetic, bool):
        raise TypeError(f"synthetic must be True or False, got {type(synthetic).__name__}")
    announced = [(SYNTHETIC_HEADER, "true")] if synthetic else []
    expected_key = api_key.encode("utf-8")

    def check_key(environ: dict[str, Any]) -> None:
        sent = environ.get("HTTP_X_API_KEY")
        if sent is None:
            raise _Reject(401, "unauthorized", "send your API key in the x-api-key header")
        if not hmac.compare_digest(_key_bytes(sent), expected_key):
            raise _Reject(401, "unauthorized", "the x-api-key header does not hold a valid key")

    def read_body(environ: dict[str, Any]) -> bytes:
        length_text = (environ.get("CONTENT_LENGTH") or "").strip()
        if length_text and not length_text.isdigit():
            raise _Reject(400, "invalid_json", "the Content-Length header is not a number")
        length = int(length_text) if length_text else None
        if length is not None and length > max_body:
            raise _Reject(413, "payload_too_large", f"the request body is over {max_body} bytes")
        stream = environ["wsgi.input"]
        raw = stream.read(length) if length is not None else stream.read(max_body + 1)
        if len(raw) > max_body:
            raise _Reject(413, "payload_too_large", f"the request body is over {max_body} bytes")
        return raw

    def answer(operation: str, body: dict[str, Any]) -> Any:
        try:
            args = parse_request(operation, body)
        except FieldError as exc:
            raise _Reject(400, "invalid_field", str(exc)) from None
        if operation in _WINDOWED:
            try:
                args["start"], args["end"] = store.window(args.get("start"), args.get("end"))
            except ValueError as exc:
                raise _Reject(400, "invalid_field", f"startDate/endDate: {exc}") from None
        try:
            if operation == "transactions-mint":
                return store.mints(**args)
            if operation == "transactions-txHash":
                return store.transaction(**args)
            if operation == "transactions-address-recipient":
                return store.received(**args)
            if operation == "transactions-volume":
                return store.volume(**args)
            return store.top_senders(**args)
        except NotFoundError:
            raise _Reject(404, "not_found", "no transaction with that hash") from None

    def route(environ: dict[str, Any]) -> tuple[str, Any]:
        path = environ.get("PATH_INFO") or "/"
        parts = path.split("/")
        if len(parts) < 2 or parts[1] != "rest":
            raise _Reject(404, "not_found", "no such resource; use /rest/<project_id>/<operation>")
        check_key(environ)
        if len(parts) != 4:
            raise _Reject(404, "not_found", "no such resource; use /rest/<project_id>/<operation>")
        _, _, project, operation = parts
        if project != project_id:
            raise _Reject(404, "not_found", "no such project")
        if operation not in OPERATIONS:
            raise _Reject(
                404, "not_found", f"no such operation; use one of: {', '.join(OPERATIONS)}"
            )
        if environ.get("REQUEST_METHOD") != "POST":
            raise _Reject(405, "method_not_allowed", f"{operation} takes POST only")
        _media_type(environ.get("CONTENT_TYPE") or "")
        body = _decode(read_body(environ))
        return operation, answer(operation, body)

    def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        started = time.perf_counter()
        operation = "-"
        headers = [
            ("Content-Type", "application/json"), ("Cache-Control", "no-store"), *announced
        ]  # fmt: skip
        try:
            parts = (environ.get("PATH_INFO") or "").split("/")
            if len(parts) == 4 and parts[1] == "rest":
                operation = parts[3][:64] if parts[3] in OPERATIONS else "unknown"
            operation, payload = route(environ)
            status, data = 200, _dump({"status": 200, "body": payload})
        except _Reject as exc:
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
            log_level,
            "%s %s -> %d (%.1f ms)",
            environ.get("REQUEST_METHOD", "-")[:10],
            operation,
            status,
            (time.perf_counter() - started) * 1000,
        )
        # A HEAD reply carries the headers of the reply a GET would get and no
        # body; sending one would desynchronise a keep-alive connection.
        return [b""] if environ.get("REQUEST_METHOD") == "HEAD" else [data]

    return app
