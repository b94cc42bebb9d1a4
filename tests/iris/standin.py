"""A local stand-in for Circle's attestation API (Iris), serving real replies.

It follows Circle's published OpenAPI document (``openapi/cctp.yaml``, as
shown on developers.circle.com's API reference pages "Get messages and
attestations" (``get-messages-v2``), "Get USDC transfer fees"
(``get-burn-usdc-fees``) and "Get USDC Fast Transfer allowance"
(``get-fast-burn-usdc-allowance``)) for three GET paths:

- ``/v2/messages/{sourceDomainId}?transactionHash=`` or ``?nonce=`` (at
  least one is required) -> ``{"messages": [...]}``, 404 for a transaction
  it does not know;
- ``/v2/burn/USDC/fees/{sourceDomainId}/{destDomainId}`` -> ``[{finalityThreshold, minimumFee}]``;
- ``/v2/fastBurn/USDC/allowance`` -> ``{allowance, lastUpdated}``.

What it serves (see ``tests/fixtures/iris/README.md``): the verbatim Iris
replies of ``tests/fixtures/cctp_real/iris_v2_replies.json`` and
``tests/fixtures/iris/replies.json``, and the attested messages of
``tests/fixtures/cctp_real/v2_messages.json`` reshaped into a reply (no
``decodedMessage``), where no recorded reply exists. The wording of its
error bodies (``{"error": ...}``) is its own: no real Iris error body was
found.

Faults: :meth:`IrisStandin.fail_next` answers the next requests with a
status (429 with ``Retry-After``, 503, ...). Every request is logged with
its arrival time (``time.monotonic()``) and headers, so tests count what
reached the server.
"""

from __future__ import annotations

import collections
import json
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CCTP_REAL = FIXTURES / "cctp_real"
IRIS = FIXTURES / "iris"

_MESSAGES = re.compile(r"/v2/messages/([^/]+)")
_FEES = re.compile(r"/v2/burn/USDC/fees/([^/]+)/([^/]+)")
_ALLOWANCE = "/v2/fastBurn/USDC/allowance"


@dataclass(frozen=True)
class Seen:
    """One request as the stand-in received it."""

    at: float
    method: str
    path: str
    query: str
    headers: dict[str, str]


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def recorded_messages() -> list[tuple[int, str | None, dict[str, Any]]]:
    """``(source_domain, tx_hash or None, reply)`` of every message reply the stand-in serves."""
    out: list[tuple[int, str | None, dict[str, Any]]] = []
    for entry in _load(CCTP_REAL / "iris_v2_replies.json")["entries"]:
        out.append((entry["source_domain"], entry.get("source_tx_hash"), entry["reply"]))
    for entry in _load(IRIS / "replies.json")["messages"]:
        out.append((entry["source_domain"], entry.get("source_tx_hash"), entry["reply"]))
    # attested messages with no recorded reply: reshaped into one
    have = {m["message"] for _, _, reply in out for m in reply["messages"]}
    for entry in _load(CCTP_REAL / "v2_messages.json")["entries"]:
        if not entry.get("form", "").startswith("attested") or not entry.get("attestation"):
            continue
        if entry["message_hex"] in have:
            continue
        decoded = entry["decoded"]
        reply = {
            "messages": [
                {
                    "attestation": entry["attestation"],
                    "message": entry["message_hex"],
                    "eventNonce": decoded["nonce"],
                    "cctpVersion": 2,
                    "status": "complete",
                }
            ]
        }
        out.append((decoded["source_domain"], entry.get("source_tx_hash"), reply))
    return out


def recorded_fees() -> dict[tuple[int, int], list[dict[str, Any]]]:
    return {
        (e["source_domain"], e["destination_domain"]): e["reply"]
        for e in _load(IRIS / "replies.json")["fees"]
    }


def recorded_allowance() -> dict[str, Any]:
    return _load(IRIS / "replies.json")["allowance"][0]["reply"]


class IrisStandin:
    """A WSGI application answering as Iris does, from recorded replies.

    Parameters
    ----------
    messages : iterable of (source_domain, tx_hash or None, reply), optional
        Default :func:`recorded_messages`. Each reply is also found by the
        ``eventNonce`` of each of its messages.
    fees : mapping, optional
        ``{(src, dst): reply}``; default :func:`recorded_fees`.
    allowance : dict, optional
        Default :func:`recorded_allowance`.
    """

    def __init__(
        self,
        messages: Iterable[tuple[int, str | None, dict[str, Any]]] | None = None,
        *,
        fees: dict[tuple[int, int], list[dict[str, Any]]] | None = None,
        allowance: dict[str, Any] | None = None,
    ) -> None:
        self.by_tx: dict[tuple[int, str], dict[str, Any]] = {}
        self.by_nonce: dict[tuple[int, str], dict[str, Any]] = {}
        for domain, tx_hash, reply in recorded_messages() if messages is None else messages:
            if tx_hash:
                self.by_tx[(domain, _spelled(tx_hash))] = reply
            for message in reply["messages"]:
                if message.get("eventNonce"):
                    self.by_nonce[(domain, str(message["eventNonce"]).lower())] = reply
        self.fees = recorded_fees() if fees is None else dict(fees)
        self.allowance = recorded_allowance() if allowance is None else allowance
        self.seen: list[Seen] = []
        self._faults: collections.deque[tuple[int, dict[str, str]]] = collections.deque()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ faults

    def fail_next(self, status: int, *, times: int = 1, retry_after: str | None = None) -> None:
        """Answer the next ``times`` requests with ``status`` (and ``Retry-After``)."""
        headers = {} if retry_after is None else {"Retry-After": retry_after}
        with self._lock:
            self._faults.extend([(status, headers)] * times)

    def requests_to(self, path: str) -> list[Seen]:
        """The requests that reached ``path`` (its start)."""
        with self._lock:
            return [s for s in self.seen if s.path.startswith(path)]

    # ------------------------------------------------------------------ WSGI

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        path = environ.get("PATH_INFO", "")
        query = environ.get("QUERY_STRING", "")
        headers = {
            k[5:].replace("_", "-").lower(): v for k, v in environ.items() if k.startswith("HTTP_")
        }
        with self._lock:
            seen = Seen(time.monotonic(), environ["REQUEST_METHOD"], path, query, headers)
            self.seen.append(seen)
            fault = self._faults.popleft() if self._faults else None
        if fault is not None:
            status, extra = fault
            return self._reply(start_response, status, {"error": "injected fault"}, extra)
        if environ["REQUEST_METHOD"] != "GET":
            return self._reply(start_response, 405, {"error": "Method not allowed"})
        status, body = self._route(path, parse_qs(query))
        return self._reply(start_response, status, body)

    def _route(self, path: str, query: dict[str, list[str]]) -> tuple[int, Any]:
        if match := _MESSAGES.fullmatch(path):
            domain = _domain(match.group(1))
            if domain is None:
                return 400, {"error": "sourceDomainId must be a non-negative integer"}
            tx_hash = (query.get("transactionHash") or [None])[0]
            nonce = (query.get("nonce") or [None])[0]
            if tx_hash is None and nonce is None:
                return 400, {"error": "At least one of transactionHash or nonce is required"}
            reply = None
            if tx_hash is not None:
                reply = self.by_tx.get((domain, _spelled(tx_hash)))
            if reply is None and nonce is not None:
                reply = self.by_nonce.get((domain, nonce.lower()))
            if reply is None:
                return 404, {"error": "Message not found"}
            return 200, reply
        if match := _FEES.fullmatch(path):
            src, dst = _domain(match.group(1)), _domain(match.group(2))
            if src is None or dst is None:
                return 400, {"error": "domain ids must be non-negative integers"}
            if (src, dst) not in self.fees:
                return 404, {"error": "Route not found"}
            return 200, self.fees[(src, dst)]
        if path == _ALLOWANCE:
            return 200, self.allowance
        return 404, {"error": "Not found"}

    @staticmethod
    def _reply(
        start_response: Callable[..., Any],
        status: int,
        body: Any,
        extra: dict[str, str] | None = None,
    ) -> list[bytes]:
        content = json.dumps(body).encode()
        reasons = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
                   429: "Too Many Requests", 503: "Service Unavailable"}  # fmt: skip
        headers = [("Content-Type", "application/json"), ("Content-Length", str(len(content)))]
        headers += list((extra or {}).items())
        start_response(f"{status} {reasons.get(status, 'Error')}", headers)
        return [content]


def _spelled(tx_hash: str) -> str:
    """A hash as Iris matches it: EVM hex in any case, a Solana signature (base58) exactly."""
    return tx_hash.lower() if re.fullmatch(r"0[xX][0-9a-fA-F]+", tx_hash) else tx_hash


def _domain(text: str) -> int | None:
    return int(text) if text.isdigit() else None
