"""What one request is, and the request paths of the plain JSON protocols.

An :class:`Outgoing` is everything the sender needs to send one request and
read its reply: its address and body, the protocol's reply reader, the
reply check and what the reply cache does with it. Each protocol is one
function that builds it, over the one core (:meth:`.sender.Sender.send`:
attempts, backoff, ``Retry-After``, cancelling, pacing, counters):

- :func:`rest_get`: a REST API that answers plain JSON (Circle's Iris);
- :func:`json_post`: one address, the question in a JSON body (JSON-RPC);
- the analytics interface's envelope POST is the client's
  (:func:`cctx_research.client.envelope.request`).

Examples
--------
>>> rest_get("https://iris.example", "v2/messages/6", {"transactionHash": "0xab"}).url
'https://iris.example/v2/messages/6?transactionHash=0xab'
>>> json_post("http://node", {"method": "eth_blockNumber"}, operation="head").payload
b'{"method":"eth_blockNumber"}'
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from .policy import DEFAULT_CACHING, NO_CACHING, RequestCaching
from .replies import PLAIN, JsonReader

__all__ = ["Outgoing", "json_post", "rest_get"]


@dataclass(frozen=True)
class Outgoing:
    """One request as the sender sends it, retries it and reads its reply."""

    operation: str
    """How logs and errors name the request."""
    method: str
    url: str
    payload: bytes | None = None
    """The body, already serialised (bytes: headers and body go out in one segment)."""
    reader: JsonReader = PLAIN
    """The protocol's reply reader."""
    validate: Callable[[Any], None] | None = None
    """Checks the answer's shape; raises ``ResponseSchemaError``, and the reply is
    retried like a truncated one."""
    caching: RequestCaching = DEFAULT_CACHING


def rest_get(
    base_url: str,
    path: str,
    params: Mapping[str, Any] | None = None,
    *,
    operation: str | None = None,
    caching: RequestCaching = DEFAULT_CACHING,
    validate: Callable[[Any], None] | None = None,
) -> Outgoing:
    """``GET {base_url}/{path}?{params}`` from an API that answers plain JSON (no envelope).

    ``params`` are sent sorted, so one question has one address (and one
    cache key); the reply's JSON is the answer's ``body``, whole.
    ``operation`` names the request in logs and errors (default: ``path``).
    """
    query = urlencode(sorted((str(k), str(v)) for k, v in (params or {}).items()))
    url = f"{base_url}/{path.lstrip('/')}" + (f"?{query}" if query else "")
    return Outgoing(operation or path, "GET", url, None, PLAIN, validate, caching)


def json_post(
    url: str,
    body: Any,
    *,
    operation: str,
    validate: Callable[[Any], None] | None = None,
) -> Outgoing:
    """``POST {url}`` with a JSON body, to an API that answers plain JSON; never cached.

    The JSON-RPC shape: one address, the question in the body.
    ``operation`` names the request in logs and errors.
    """
    payload = json.dumps(body, separators=(",", ":")).encode()
    return Outgoing(operation, "POST", url, payload, PLAIN, validate, NO_CACHING)
