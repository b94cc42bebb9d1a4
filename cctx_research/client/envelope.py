"""The interface's request path: a JSON POST per operation, a ``{status, body}`` reply.

Every operation of the analytics interface is ``POST
{base_url}/rest/<project_id>/<operation>`` with a JSON body and the
``x-api-key`` header, answered by an envelope ``{"status": <int>, "body":
...}``. :func:`request` builds the one request of an operation for the
sender's core (:meth:`cctx_research.net.Sender.send`: retries, typed
errors, cancelling); :data:`ENVELOPE` reads its reply. Both statuses are
checked, the HTTP one and the envelope's, since a reply can be HTTP 200
with an error envelope. :func:`cacheable` is the reply cache's filter: only
HTTP 200 replies with a 2xx envelope are kept.

Examples
--------
>>> envelope_ok(b'{"status": 200, "body": []}'), envelope_ok(b'{"status": 503, "body": {}}')
(True, False)
>>> from cctx_research.net import DEFAULT_CACHING
>>> request("http://svc/rest/p/", "stats-volume", {"to": 2, "from": 1},
...         caching=DEFAULT_CACHING, check=None).payload
b'{"from":1,"to":2}'
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import requests

from .. import errors
from ..net import JsonReader, Outgoing, RequestCaching, decoded, error_message

__all__ = ["ENVELOPE", "EnvelopeReader", "cacheable", "envelope_ok", "request"]


class EnvelopeReader(JsonReader):
    """Reads the interface's replies: the answer is the envelope's ``body``."""

    status_label = "envelope status"

    def error_message(self, document: Any) -> str | None:
        """What an error envelope's body says."""
        return error_message(document.get("body")) if isinstance(document, dict) else None

    def unwrap(self, document: Any, http_status: int, operation: str) -> tuple[Any, int]:
        """The envelope's body and status.

        Raises
        ------
        ResponseSchemaError
            The reply is not the documented envelope, or its status is not a number.
        """
        if not isinstance(document, dict) or "status" not in document or "body" not in document:
            raise errors.ResponseSchemaError(
                "the reply is not the documented envelope {status, body}",
                operation=operation,
                status=http_status,
                hint="check base_url points at the service",
            )
        status = document["status"]
        if isinstance(status, str) and status.strip().isdigit():
            status = int(status)
        if isinstance(status, bool) or not isinstance(status, (int, float)):
            raise errors.ResponseSchemaError(
                f"the envelope status is not a number: {status!r}",
                operation=operation,
                status=http_status,
            )
        return document["body"], int(status)


ENVELOPE = EnvelopeReader()
"""The reader of the interface's replies."""


def request(
    address: str,
    operation: str,
    body: Mapping[str, Any],
    *,
    caching: RequestCaching,
    check: Callable[[Any], None] | None,
) -> Outgoing:
    """The request of one operation: ``POST {address}{operation}`` with ``body``.

    ``address`` is ``{base_url}/rest/{project_id}/``. The body is serialised
    canonically (sorted keys, no spaces), so one question is one cache key.
    """
    payload = json.dumps(dict(body), separators=(",", ":"), sort_keys=True).encode()
    return Outgoing(operation, "POST", address + operation, payload, ENVELOPE, check, caching)


def envelope_ok(content: bytes) -> bool:
    """True when ``content`` is a JSON envelope with a 2xx ``status``."""
    envelope = decoded.peek(content)
    try:
        status = int(envelope["status"])
    except (ValueError, TypeError, KeyError):
        return False
    return 200 <= status < 300 and "body" in envelope


def cacheable(response: requests.Response) -> bool:
    """The reply cache's filter: HTTP 200 with a 2xx envelope."""
    return response.status_code == 200 and envelope_ok(response.content)
