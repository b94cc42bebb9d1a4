"""Reading replies: the envelope decoded once and checked, its error message, the cache's filter.

Decoding a page of 1,000 records is the largest CPU cost of a pull, and
both the reply cache's filter (:func:`envelope_ok`) and the sender read
every reply: :data:`decoded` keeps the filter's decode until the sender
takes it.
"""

from __future__ import annotations

import collections
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from .. import errors
from ..provenance import SYNTHETIC_HEADER
from .statuses import error_for_status, parse_retry_after

__all__ = [
    "RETRYABLE_STATUS",
    "UNREADABLE",
    "Answer",
    "Decoded",
    "Retry",
    "decoded",
    "envelope_ok",
    "error_message",
    "read_reply",
]

RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
"""HTTP (or envelope) statuses worth another attempt."""


class Retry(Exception):
    """An attempt failed in a way worth retrying (raised inside the client package)."""

    def __init__(self, error: errors.CctxError, retry_after: float | None = None) -> None:
        super().__init__(str(error))
        self.error = error
        self.retry_after = retry_after


@dataclass(frozen=True)
class Answer:
    """The body of one successful reply and where it came from.

    ``synthetic``: the reply carried ``x-cctx-synthetic: true``
    (:data:`~cctx_research.provenance.SYNTHETIC_HEADER`): the service says
    its data is synthetic.
    """

    body: Any
    from_cache: bool
    status: int
    cache_key: str | None = None
    synthetic: bool = False


def error_message(envelope: Any) -> str | None:
    if not isinstance(envelope, dict):
        return None
    body = envelope.get("body")
    if isinstance(body, dict):
        parts = [str(body[k]) for k in ("error", "message") if body.get(k)]
        if parts:
            return ": ".join(parts)
    if isinstance(body, str) and body:
        return body[:200]
    return None


UNREADABLE = object()


class Decoded:
    """Replies decoded once: the cache filter decodes, the transport takes.

    Decoding a page of 1,000 records is the largest CPU cost of a pull, and
    both the reply cache's filter and the transport read every reply. The
    filter's decode is kept here (a few entries, guarded by a lock) until
    the transport takes it, so nothing stays alive after a request.
    """

    def __init__(self, size: int = 16) -> None:
        self._lock = threading.Lock()
        self._entries: collections.OrderedDict[bytes, Any] = collections.OrderedDict()
        self._size = size

    @staticmethod
    def _decode(content: bytes) -> Any:
        try:
            return orjson.loads(content)  # a third faster than json on a page of mints
        except ValueError:
            pass
        try:  # what orjson refuses and json reads: NaN, Infinity
            return json.loads(content)
        except (ValueError, UnicodeDecodeError):
            return UNREADABLE

    def peek(self, content: bytes) -> Any:
        """The decoded reply, kept for :meth:`take`. Callers must not modify it."""
        with self._lock:
            if content in self._entries:
                return self._entries[content]
        value = self._decode(content)
        with self._lock:
            self._entries[content] = value
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return value

    def take(self, content: bytes) -> Any:
        """The decoded reply, forgotten here."""
        with self._lock:
            if content in self._entries:
                return self._entries.pop(content)
        return self._decode(content)


decoded = Decoded()


def envelope_ok(content: bytes) -> bool:
    """True when ``content`` is a JSON envelope with a 2xx ``status`` (cache filter)."""
    envelope = decoded.peek(content)
    try:
        status = int(envelope["status"])
    except (ValueError, TypeError, KeyError):
        return False
    return 200 <= status < 300 and "body" in envelope


def read_reply(
    operation: str,
    http_status: int,
    headers: Mapping[str, str],
    content: bytes,
    from_cache: bool,
    validate: Callable[[Any], None] | None,
    *,
    enveloped: bool = True,
    scrub: Callable[[str], str],
) -> Answer:
    """The :class:`Answer` of one reply, or the error it carries.

    Both statuses are checked (HTTP and the envelope's); ``scrub`` takes any
    secret out of a message the service sends back.

    Raises
    ------
    Retry
        A failure worth another attempt (429, 5xx, an unreadable body, a body
        that fails ``validate``).
    CctxError
        Any other failure, typed (see :mod:`cctx_research.errors`).
    """
    retry_after = parse_retry_after(headers.get("Retry-After"))
    synthetic = str(headers.get(SYNTHETIC_HEADER, "")).strip().lower() == "true"
    envelope = decoded.take(content) if content else None
    if envelope is UNREADABLE:
        envelope = None
    if envelope is None:
        message = None
    else:  # a plain reply's error reads like an envelope's body
        message = error_message(envelope if enveloped else {"body": envelope})

    if not 200 <= http_status < 300:
        text = scrub(message or f"HTTP {http_status}")
        error = error_for_status(
            http_status, text, operation=operation, retry_after=retry_after
        )
        if http_status in RETRYABLE_STATUS:
            raise Retry(error, retry_after)
        raise error
    if envelope is None:
        raise Retry(
            errors.ResponseSchemaError(
                f"the reply is not valid JSON ({len(content)} bytes)",
                operation=operation,
                status=http_status,
                hint="the reply was cut off or the base URL is not the service",
            )
        )
    if not enveloped:
        _validate(operation, envelope, http_status, validate)
        return Answer(envelope, from_cache, http_status, synthetic=synthetic)
    if not isinstance(envelope, dict) or "status" not in envelope or "body" not in envelope:
        raise errors.ResponseSchemaError(
            "the reply is not the documented envelope {status, body}",
            operation=operation,
            status=http_status,
            hint="check base_url points at the service",
        )
    status = envelope["status"]
    if isinstance(status, str) and status.strip().isdigit():
        status = int(status)
    if isinstance(status, bool) or not isinstance(status, (int, float)):
        raise errors.ResponseSchemaError(
            f"the envelope status is not a number: {status!r}",
            operation=operation,
            status=http_status,
        )
    status = int(status)
    if not 200 <= status < 300:
        text = scrub(message or f"envelope status {status}")
        error = error_for_status(status, text, operation=operation, retry_after=retry_after)
        if status in RETRYABLE_STATUS:
            raise Retry(error, retry_after)
        raise error
    body = envelope["body"]
    _validate(operation, body, status, validate)
    return Answer(body, from_cache, status, synthetic=synthetic)


def _validate(
    operation: str, body: Any, status: int, validate: Callable[[Any], None] | None
) -> None:
    if validate is None:
        return
    try:
        validate(body)
    except errors.ResponseSchemaError as exc:
        exc.operation = exc.operation or operation
        exc.status = exc.status if exc.status is not None else status
        raise Retry(exc) from None
