"""A JSON-RPC proxy in front of anvil that behaves like a provider: range caps, 429s, drops.

``eth_getLogs`` over ``max_blocks`` is refused with the provider's own error
(code, text and HTTP status as published; sources in
``cctx_research/nodes/ranges.py``). Everything else passes through. Switches:
``throttle`` (the next N requests get 429 with ``Retry-After``), ``drop``
(the next N connections are closed without a reply), ``fail_after`` (after
N ``eth_getLogs`` answered, every connection is closed: a node that died) and
``fail_when`` (the same, once a condition holds: e.g. once the client has
checkpointed something, whatever order its workers ran in), ``stall_when``
(once a condition holds, every ``eth_getLogs`` is held unanswered until the
proxy closes: a node that stopped answering, so that a client is certainly
mid-run when it is interrupted; :attr:`stalled` counts the calls held) and
``on_logs`` (called with each ``eth_getLogs`` count as it is counted, by the
thread answering that call: a switch thrown at that point of the run, not by a
watcher that a fast client outruns).
:attr:`calls` counts the requests that reached it by method (a batch as
``"batch of <method>"``).
"""

from __future__ import annotations

import collections
import contextlib
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import requests

__all__ = ["PROVIDERS", "RangeLimited"]

# provider -> (HTTP status, JSON-RPC code, message with {limit} and {asked})
PROVIDERS: dict[str, tuple[int, int, str]] = {
    "alchemy": (400, -32600, "You can make eth_getLogs requests with up to a {limit} block range. "
                "Based on your parameters, this block range should work: [{lo}, {hi}]"),
    "infura": (200, -32602, "range {asked} exceeds limit of {limit}"),
    "quicknode": (413, -32614, "eth_getLogs is limited to a {limit:,} range"),
    "reth": (200, -32602, "query exceeds max block range {limit}"),
    "erigon": (200, -32000, "query block range exceeds server limit, narrow your filter: {limit}."),
    "geth": (200, -32005, "query returned more than 10000 results"),
}  # fmt: skip


class RangeLimited:
    """The proxy; a context manager with :attr:`url`."""

    def __init__(self, upstream: str, provider: str = "alchemy", max_blocks: int = 500) -> None:
        if provider not in PROVIDERS:
            raise ValueError(f"provider must be one of {sorted(PROVIDERS)}")
        self.upstream, self.provider, self.max_blocks = upstream, provider, max_blocks
        self.throttle = 0  # the next N requests answer 429
        self.drop = 0  # the next N requests close the connection unanswered
        self.strip_times = False  # answer eth_getLogs without blockTimestamp, as many nodes do
        self.fail_after: int | None = None  # after N eth_getLogs answered, the node is gone
        self.fail_when: Callable[[], bool] | None = None  # once this holds, the node is gone
        self.stall_when: Callable[[], bool] | None = None  # once this holds, getLogs is held
        # a getLogs range ending at this block waits until stall_when holds (then is held): a
        # run cannot end before its stall, however its ranges are timed
        self.last_waits: int | None = None
        self.on_logs: Callable[[int], None] | None = None  # told each getLogs count answered
        self.stalled = 0
        self._closing = threading.Event()
        self.refused = 0
        self.requests = 0
        self.calls: collections.Counter[str] = collections.Counter()  # method, "batch of" method
        self.logs_answered = 0
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                status, reply, headers = proxy.answer(body)
                if status is None:
                    self.close_connection = True
                    self.connection.close()
                    return
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                # the client may have given up on this request (Ctrl-C, a timeout)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(reply)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v2/SECRET-KEY-123"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def __enter__(self) -> RangeLimited:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._closing.set()  # the calls held by stall_when end, unanswered
        self.server.shutdown()
        self.server.server_close()

    def _refusal(self, call: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        if call.get("method") != "eth_getLogs":
            return None
        query = call["params"][0]
        lo, hi = int(query["fromBlock"], 16), int(query["toBlock"], 16)
        asked = hi - lo + 1
        if asked <= self.max_blocks:
            return None
        status, code, text = PROVIDERS[self.provider]
        message = text.format(limit=self.max_blocks, asked=asked, lo=hex(lo),
                              hi=hex(lo + self.max_blocks - 1))  # fmt: skip
        with self.lock:
            self.refused += 1
        return status, {"jsonrpc": "2.0", "id": call.get("id"),
                        "error": {"code": code, "message": message}}  # fmt: skip

    def answer(self, body: bytes) -> tuple[int | None, bytes, dict[str, str]]:
        with self.lock:
            self.requests += 1
            gone = (self.fail_after is not None and self.logs_answered >= self.fail_after) or (
                self.fail_when is not None and self.fail_when()
            )
            if self.drop or gone:
                self.drop = max(0, self.drop - 1)
                return None, b"", {}
            if self.throttle:
                self.throttle -= 1
                reply = {"jsonrpc": "2.0", "id": None,
                         "error": {"code": 429, "message": "Too Many Requests"}}  # fmt: skip
                return 429, json.dumps(reply).encode(), {"Retry-After": "1"}
        call = json.loads(body)
        with self.lock:
            if isinstance(call, dict):
                self.calls[str(call.get("method"))] += 1
            elif isinstance(call, list) and call:
                self.calls[f"batch of {call[0].get('method')}"] += 1
        if isinstance(call, dict):
            refusal = self._refusal(call)
            if refusal is not None:
                status, reply = refusal
                return status, json.dumps(reply).encode(), {}
        if isinstance(call, dict) and call.get("method") == "eth_getLogs":
            if self.last_waits is not None and self.stall_when is not None:
                while _range_end(call) == self.last_waits and not self.stall_when():
                    if self._closing.wait(timeout=0.01):
                        break
            if self.stall_when is not None and self.stall_when():
                with self.lock:
                    self.stalled += 1
                self._closing.wait(timeout=300)
                return None, b"", {}
            with self.lock:
                self.logs_answered += 1
                answered = self.logs_answered
            if self.on_logs is not None:
                self.on_logs(answered)
        forwarded = requests.post(self.upstream, data=body, timeout=60,
                                  headers={"Content-Type": "application/json"})  # fmt: skip
        content = forwarded.content
        if self.strip_times and isinstance(call, dict) and call.get("method") == "eth_getLogs":
            reply = json.loads(content)
            for log in reply.get("result") or []:
                log.pop("blockTimestamp", None)
            content = json.dumps(reply).encode()
        return forwarded.status_code, content, {}


def _range_end(call: dict[str, Any]) -> int | None:
    """The last block an ``eth_getLogs`` call asks for, if it names one."""
    try:
        return int(call["params"][0]["toBlock"], 16)
    except (KeyError, IndexError, TypeError, ValueError):
        return None
