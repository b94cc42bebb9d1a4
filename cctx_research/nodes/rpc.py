"""JSON-RPC to a node (EVM or Solana), on the toolkit's network floor.

:class:`Rpc` sends single calls and batches as JSON POSTs
(:func:`~cctx_research.net.json_post`) over the
:class:`~cctx_research.net.Sender` every request of the toolkit goes
through: pooled sessions, retries with backoff that honour ``Retry-After``,
typed errors, cancelling, and the ``transport`` seam. A node's URL often carries its key
(``https://base-mainnet.g.alchemy.com/v2/<key>``): it is never logged,
printed, stored or put in an error; the node is named by its host
(:func:`host_of`).

A JSON-RPC error (``{"error": {"code", "message"}}``, whatever the HTTP
status) becomes :class:`RpcError`, with the node's code and text, so that
the caller can recognise a provider's "range too large" (see
:mod:`cctx_research.nodes.ranges`).

Examples
--------
>>> host_of("https://base-mainnet.g.alchemy.com/v2/SECRETKEY")
'base-mainnet.g.alchemy.com'
>>> Rpc("ftp://node")
Traceback (most recent call last):
ValueError: a node URL must start with http:// or https://; got a URL with scheme 'ftp'
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from .. import errors
from ..net import BaseTransport, RequestStats, Sender, SenderOptions, json_post

__all__ = ["Rpc", "RpcError", "host_of"]

logger = logging.getLogger(__name__)



def _check_port(url: str) -> None:
    """A port that is not a number is refused in words, not urllib's."""
    try:
        if urlsplit(url).port == 0:
            raise ValueError("port 0")
    except ValueError:
        port = urlsplit(url).netloc.rpartition("@")[2].rpartition(":")[2]
        raise ValueError(
            f"a node URL's port must be a number from 1 to 65535; got {port!r} "
            "(write http://HOST:PORT/PATH, a '/' before any path)"
        ) from None


class RpcError(errors.ApiError):
    """A JSON-RPC error object from the node: its ``code`` and message."""

    def __init__(
        self, message: str, *, code: int | None, method: str, status: int | None = None
    ) -> None:
        super().__init__(message, operation=method, status=status)
        self.code = code


def host_of(url: str) -> str:
    """The host (and port) of a node URL: what may be shown of it."""
    parts = urlsplit(url)
    return parts.hostname + (f":{parts.port}" if parts.port else "") if parts.hostname else "?"


class _Redact(logging.Filter):
    """Takes the secret parts of node URLs out of the HTTP library's own log lines.

    urllib3 logs each request's path at DEBUG (``"POST /v2/<key> HTTP/1.1"``);
    a key in a node's path would show there.
    """

    def __init__(self) -> None:
        super().__init__()
        self.secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            text = record.getMessage()
            if any(secret in text for secret in self.secrets):
                for secret in self.secrets:
                    text = text.replace(secret, "/***")
                record.msg, record.args = text, ()
        return True


_REDACT = _Redact()
logging.getLogger("urllib3.connectionpool").addFilter(_REDACT)


def _secret_parts(url: str) -> list[str]:
    """What of a node URL may hold a key: its path and query, and its user info."""
    parts = urlsplit(url)
    found = []
    tail = parts.path + (f"?{parts.query}" if parts.query else "")
    if len(tail.strip("/")) > 0:
        found.append(tail)
    if parts.username or parts.password:
        found.append(parts.netloc.rsplit("@", 1)[0])
    return found


def _error_text(error: Any) -> tuple[int | None, str]:
    if not isinstance(error, dict):
        return None, str(error)[:300]
    code = error.get("code")
    message = str(error.get("message", ""))
    data = error.get("data")
    if isinstance(data, dict | str) and data:
        message = f"{message} ({data})"  # some nodes put the detail in data
    return (code if isinstance(code, int) else None), message[:600]


class Rpc:
    """A node's JSON-RPC endpoint.

    Parameters
    ----------
    url : str
        ``http(s)://...``; may hold a key (never shown).
    timeout : float
        Seconds per attempt.
    retries : int
        Retries of transient failures (429, 5xx, dropped connections).
    transport : BaseTransport, optional
        The wire (tests plug a WSGI app in).
    """

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 30.0,
        retries: int = 5,
        backoff: float = 0.5,
        max_backoff: float = 60.0,
        transport: BaseTransport | None = None,
    ) -> None:
        if not isinstance(url, str) or not url.strip():
            raise ValueError("a node URL is needed, e.g. https://mainnet.base.org")
        scheme = urlsplit(url.strip()).scheme
        if scheme not in ("http", "https"):
            raise ValueError(
                f"a node URL must start with http:// or https://; got a URL with scheme "
                f"{scheme!r}"
            )
        _check_port(url.strip())
        self.host = host_of(url)
        self.takes_batches: bool | None = None
        """Whether the node answers JSON-RPC batches (``None`` until a batch is sent)."""
        _REDACT.secrets.update(_secret_parts(url.strip()))
        self._next_id = 1
        self._lock = threading.Lock()
        self.sender = Sender(
            url.strip(),
            SenderOptions(
                timeout=timeout, retries=retries, backoff=backoff, max_backoff=max_backoff,
                transport=transport, name=self.host,
            ),
        )  # fmt: skip

    def __repr__(self) -> str:
        return f"Rpc({self.host!r})"

    def _ids_for(self, n: int = 1) -> int:
        """The first of ``n`` request ids no other call of this endpoint uses."""
        with self._lock:
            first = self._next_id
            self._next_id += n
            return first

    def call(
        self,
        method: str,
        params: Sequence[Any] = (),
        *,
        stats: RequestStats | None = None,
        cancel: threading.Event | None = None,
    ) -> Any:
        """One call's ``result``; :class:`RpcError` when the node answers an error."""
        body = {"jsonrpc": "2.0", "id": self._ids_for(), "method": method, "params": list(params)}
        try:
            answer = self.sender.send(
                json_post(self.sender.base_url, body, operation=method), stats=stats, cancel=cancel
            )
        except errors.ApiError as exc:  # an HTTP error status whose body says why
            raise self._from_http(exc, method) from None
        reply = answer.body
        if not isinstance(reply, dict):
            raise errors.ResponseSchemaError(
                f"{self.host} answered {method} with {type(reply).__name__}, not a JSON-RPC "
                "object", operation=method, hint="check the URL is the node's JSON-RPC endpoint",
            )  # fmt: skip
        if reply.get("error") is not None:
            code, text = _error_text(reply["error"])
            raise RpcError(f"{self.host}: {text}", code=code, method=method)
        if "result" not in reply:
            raise errors.ResponseSchemaError(
                f"{self.host} answered {method} without a result", operation=method
            )
        return reply["result"]

    def batch(
        self,
        calls: Sequence[tuple[str, Sequence[Any]]],
        *,
        stats: RequestStats | None = None,
        cancel: threading.Event | None = None,
        errors_as_results: bool = False,
    ) -> list[Any]:
        """Many calls in one request (a JSON-RPC batch); results in the order asked.

        A node that does not take batches (an error object or a non-list
        reply) is asked one call at a time instead, and so are later batches
        (:attr:`takes_batches` remembers it). A member the node answers with
        an error is asked again alone; if it fails again its :class:`RpcError`
        is raised, or, with ``errors_as_results``, put in its place among the
        results.
        """
        if not calls:
            return []
        if self.takes_batches is False:
            return [self.call(m, p, stats=stats, cancel=cancel) for m, p in calls]
        first = self._ids_for(len(calls))
        body = [
            {"jsonrpc": "2.0", "id": first + i, "method": m, "params": list(p)}
            for i, (m, p) in enumerate(calls)
        ]
        operation = f"batch of {len(calls)} {calls[0][0]}"
        try:
            request = json_post(self.sender.base_url, body, operation=operation)
            answer = self.sender.send(request, stats=stats, cancel=cancel)
        except errors.ApiError as exc:
            raise self._from_http(exc, calls[0][0]) from None
        replies = answer.body

        def alone(method: str, params: Sequence[Any]) -> Any:
            try:
                return self.call(method, params, stats=stats, cancel=cancel)
            except RpcError as exc:
                if errors_as_results:
                    return exc
                raise

        if not isinstance(replies, list):
            logger.debug("%s does not take batches; asking one call at a time", self.host)
            self.takes_batches = False
            return [alone(m, p) for m, p in calls]
        self.takes_batches = True
        by_id = {r.get("id"): r for r in replies if isinstance(r, dict)}
        out = []
        for i, (method, params) in enumerate(calls):
            reply = by_id.get(first + i)
            if reply is None or reply.get("error") is not None:
                # a batch member refused (rate limits answer per member): ask it alone
                out.append(alone(method, params))
            else:
                out.append(reply.get("result"))
        return out

    def _from_http(self, exc: errors.ApiError, method: str) -> errors.CctxError:
        """An HTTP error status, re-typed as the node's JSON-RPC error when it carries one."""
        if isinstance(exc, errors.RateLimitError | errors.ServerError | errors.AuthError):
            return exc
        return RpcError(f"{self.host}: {exc.message}", code=None, method=method, status=exc.status)

    def close(self) -> None:
        """Close the pooled connections."""
        self.sender.close()
