"""Reading replies: JSON decoded once, both statuses checked, typed errors.

:func:`read_reply` does what every protocol shares: the HTTP status,
``Retry-After``, the synthetic-data header, the JSON decode and the reply
check. The protocol's :class:`JsonReader` says what the document means:
where an error reply says why, and which part is the answer (a plain JSON
API answers its whole document; the analytics interface wraps it in an
envelope, read by :mod:`cctx_research.client.envelope`).

Decoding a page of 1,000 records is the largest CPU cost of a pull, and
both a reply cache's filter and the reader read every reply:
:data:`decoded` keeps the filter's decode until the reader takes it.
"""

from __future__ import annotations

import collections
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

import orjson

from .. import errors
from ..provenance import SYNTHETIC_HEADER
from .statuses import error_for_status, parse_retry_after

if TYPE_CHECKING:
    import requests

__all__ = [
    "PLAIN",
    "RETRYABLE_STATUS",
    "UNREADABLE",
    "Answer",
    "Decoded",
    "JsonReader",
    "Retry",
    "decoded",
    "error_message",
    "read_reply",
]

RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
"""HTTP (or protocol) statuses worth another attempt."""


class Retry(Exception):
    """An attempt failed in a way worth retrying (raised and caught inside this package)."""

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


def error_message(value: Any) -> str | None:
    """What an error reply says: its ``error`` and ``message`` fields, or its text.

    Examples
    --------
    >>> error_message({"error": "invalid_field", "message": "limit must be positive"})
    'invalid_field: limit must be positive'
    >>> error_message([1, 2]) is None
    True
    """
    if isinstance(value, dict):
        parts = [str(value[k]) for k in ("error", "message") if value.get(k)]
        if parts:
            return ": ".join(parts)
    if isinstance(value, str) and value:
        return value[:200]
    return None


UNREADABLE = object()


class Decoded:
    """Replies decoded once: the cache filter decodes, the reader takes.

    Decoding a page of 1,000 records is the largest CPU cost of a pull, and
    both a reply cache's filter and the reader read every reply. The
    filter's decode is kept here (a few entries, guarded by a lock) until
    the reader takes it, so nothing stays alive after a request.
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


class JsonReader:
    """How a protocol's replies are read: a plain JSON API's, whose whole document is the answer.

    A protocol that wraps its answers (the analytics interface's envelope,
    :mod:`cctx_research.client.envelope`) subclasses it: where an error reply
    says why (:meth:`error_message`), which part of the document is the
    answer and what status it carries (:meth:`unwrap`).
    """

    status_label = "status"
    """How a failing status of the protocol is named when its reply says nothing else."""

    def error_message(self, document: Any) -> str | None:
        """What an error reply says, if anything (quoted in the error raised)."""
        return error_message(document)

    def unwrap(self, document: Any, http_status: int, operation: str) -> tuple[Any, int]:
        """The answer's body and the protocol's status (for plain JSON, the HTTP status).

        Raises
        ------
        ResponseSchemaError
            The document is not the protocol's shape.
        """
        return document, http_status


PLAIN = JsonReader()
"""The reader of plain JSON replies (Circle's Iris, JSON-RPC nodes)."""


def read_reply(
    operation: str,
    response: requests.Response,
    *,
    reader: JsonReader,
    validate: Callable[[Any], None] | None,
    from_cache: bool,
    scrub: Callable[[str], str],
) -> Answer:
    """The :class:`Answer` of one reply to ``operation``, or the error it carries.

    Both statuses are checked (HTTP and the protocol's, read by ``reader``);
    ``validate`` checks the answer's shape; ``scrub`` takes any secret out of
    a message the service sends back.

    Raises
    ------
    Retry
        A failure worth another attempt (429, 5xx, an unreadable body, a body
        that fails ``validate``).
    CctxError
        Any other failure, typed (see :mod:`cctx_research.errors`).
    """
    headers, http_status, content = response.headers, response.status_code, response.content
    retry_after = parse_retry_after(headers.get("Retry-After"))
    synthetic = str(headers.get(SYNTHETIC_HEADER, "")).strip().lower() == "true"
    document = decoded.take(content) if content else None
    if document is UNREADABLE:
        document = None
    message = None if document is None else reader.error_message(document)
    if not 200 <= http_status < 300:
        _fail(http_status, scrub(message or f"HTTP {http_status}"), operation, retry_after)
    if document is None:
        raise Retry(
            errors.ResponseSchemaError(
                f"the reply is not valid JSON ({len(content)} bytes)",
                operation=operation,
                status=http_status,
                hint="the reply was cut off or the base URL is not the service",
            )
        )
    body, status = reader.unwrap(document, http_status, operation)
    if not 200 <= status < 300:
        text = scrub(message or f"{reader.status_label} {status}")
        _fail(status, text, operation, retry_after)
    _validate(operation, body, status, validate)
    return Answer(body, from_cache, status, getattr(response, "cache_key", None), synthetic)


def _fail(status: int, text: str, operation: str, retry_after: float | None) -> NoReturn:
    error = error_for_status(status, text, operation=operation, retry_after=retry_after)
    if status in RETRYABLE_STATUS:
        raise Retry(error, retry_after)
    raise error


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
