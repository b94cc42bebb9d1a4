"""A local Solana JSON-RPC node for the sync tests, serving recorded ``getTransaction`` replies.

What it serves: the replies of ``tests/fixtures/solana`` (README there: four
real mainnet V1 transactions recorded by wormhole-explorer, two Wormhole
redeems that call no CCTP program, two V2 burns rebuilt from real
messages; the synthetic V2 mint is left out), as a finalized ledger whose
newest slot is :attr:`SolanaStandin.head` (a transaction above it is not
there yet: tests raise the head to let new ones arrive).

The methods the sync uses, with the semantics of Agave's RPC
(anza-xyz/agave, ``rpc/src/rpc.rs`` and ``ledger/src/blockstore.rs``
``get_confirmed_signatures_for_address2``):

- ``getSignaturesForAddress(address, {limit, before, until, commitment})``:
  the transactions whose account keys (loaded addresses too) hold
  ``address``, newest first (slot descending; within a slot, signatures in
  descending byte order, as the blockstore keeps them), each
  ``{signature, slot, err, memo, blockTime, confirmationStatus}``;
  ``before`` and ``until`` exclusive; a ``before`` the node does not know
  gives an empty list (the blockstore returns early), an unknown ``until``
  no lower bound; ``limit`` 1..1000, else ``-32602 "Invalid limit; max
  1000"``; ``commitment: processed`` is refused (``"Method does not support
  commitment below `confirmed`"``). :attr:`~SolanaStandin.max_limit` caps
  pages below the asked limit, as providers with a lower
  ``max_signatures_limit`` do.
- ``getTransaction(signature, {encoding, maxSupportedTransactionVersion})``:
  the recorded result, ``null`` for a signature it does not know; a
  version-0 transaction asked without ``maxSupportedTransactionVersion``
  gets ``-32015`` with Agave's text (``rpc-client-api/src/custom_error.rs``).
  Only ``encoding: json`` is served (the recordings are ``json``).
- ``getSlot`` (the head), ``getBlockTime(slot)`` (a recorded slot's time;
  the head's and other slots' interpolated at 400 ms a slot, as a stand-in
  for the blocks it does not hold), ``getGenesisHash`` (mainnet-beta's,
  or :attr:`~SolanaStandin.genesis`),
  ``getSignatureStatuses``.
- Slots in :attr:`~SolanaStandin.skipped` answer ``getBlockTime`` with
  Agave's ``-32007 "Slot {slot} was skipped, or missing due to ledger jump
  to recent snapshot"`` or ``-32009 "Slot {slot} was skipped, or missing in
  long-term storage"``; a slot above the head ``-32004 "Block not available
  for slot {slot}"``.

Rate limits and failures, as public nodes give them:

- :attr:`~SolanaStandin.throttle`: the next N requests (of
  :attr:`~SolanaStandin.throttle_method` only, when set: the public RPC
  limits each method on its own) get HTTP 429 with the
  body of Solana's public mainnet RPC, ``{"jsonrpc":"2.0","error":{"code":
  429,"message":"Too many requests for a specific RPC call, contact your app
  developer or support@rpcpool.com."}, "id": 1 }`` (quoted in
  solana-labs/solana-program-library#2784 and milktoastlab/SolanaNFTBot#25);
  ``Retry-After`` only when :attr:`~SolanaStandin.retry_after` is set (no
  recording shows one).
- :attr:`~SolanaStandin.fail_after`: after N requests answered, every
  request fails: ``"unhealthy"`` answers Agave's ``-32005 "Node is behind by
  {n} slots"`` (with ``data.numSlotsBehind``), ``"unavailable"`` HTTP 503.
- :attr:`~SolanaStandin.delay`: seconds each request waits before its
  answer (a distant node; the Ctrl-C test stops a sync in the middle).
- :attr:`~SolanaStandin.batches` ``False``: a JSON-RPC batch (a top-level
  array) is answered with one JSON-RPC 2.0 ``-32600 "Invalid Request"``
  object, as nodes with batching off answer (many do: solana-developers/
  solana-cookbook#535); no provider's own text for it was found.

Every call is counted (:attr:`~SolanaStandin.calls` by method,
:attr:`~SolanaStandin.fetched` by signature) so tests see what reached it.
"""

from __future__ import annotations

import bisect
import collections
import copy
import json
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from cctx_research.addressing import base58_decode

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "solana"
MAINNET_GENESIS = "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d"
PUBLIC_429 = ("Too many requests for a specific RPC call, contact your app developer or "
              "support@rpcpool.com.")  # fmt: skip
SLOT_SECONDS = 0.4


def recorded(*, synthetic: bool = False) -> list[dict[str, Any]]:
    """Every ``getTransaction`` result in ``tests/fixtures/solana`` (the synthetic one if asked)."""
    out = []
    for path in sorted(FIXTURES.glob("*.json*")):
        if path.name.endswith(".message.json") or ("synthetic" in path.name and not synthetic):
            continue
        text = path.read_text()
        docs = [json.loads(line) for line in text.splitlines() if line.strip()] if (
            path.suffix == ".jsonl") else [json.loads(text)]  # fmt: skip
        for doc in docs:
            for item in doc if isinstance(doc, list) else [doc]:
                result = item.get("result", item)
                if isinstance(result, dict) and "transaction" in result:
                    out.append(result)
    return out


def _keys(result: dict[str, Any]) -> list[str]:
    message = result["transaction"]["message"]
    loaded = result["meta"].get("loadedAddresses") or {}
    return [*message["accountKeys"], *loaded.get("writable", ()), *loaded.get("readonly", ())]


def _err(result: dict[str, Any]) -> Any:
    meta = result["meta"]
    if "err" in meta:
        return meta["err"]
    return (meta.get("status") or {}).get("Err")  # recordings that kept the status only


class SolanaStandin:
    """A WSGI application answering Solana JSON-RPC from recorded transactions.

    Parameters
    ----------
    transactions : iterable of dict, optional
        ``getTransaction`` results; default :func:`recorded`.
    head : int, optional
        The newest finalized slot (default: the newest transaction's).
    max_limit : int
        The most signatures a page holds, whatever ``limit`` asks.
    """

    def __init__(self, transactions: Iterable[dict[str, Any]] | None = None, *,
                 head: int | None = None, max_limit: int = 1000) -> None:  # fmt: skip
        self.transactions: dict[str, dict[str, Any]] = {}
        self.by_address: dict[str, list[str]] = collections.defaultdict(list)
        for result in recorded() if transactions is None else transactions:
            self.add(result)
        self.head = head if head is not None else max(r["slot"] for r in self.transactions.values())
        self.max_limit = max_limit
        self.genesis = MAINNET_GENESIS
        self.batches = True
        self.delay = 0.0
        self.throttle = 0
        self.throttle_method: str | None = None
        self.retry_after: str | None = None
        self.fail_after: int | None = None
        self.failure = "unhealthy"
        self.skipped: dict[int, int] = {}
        self.calls: collections.Counter[str] = collections.Counter()
        self.fetched: collections.Counter[str] = collections.Counter()
        self.requests = 0
        self.answered = 0
        self._lock = threading.Lock()

    def add(self, result: dict[str, Any]) -> None:
        """Hold one more transaction (it is listed once the head reaches its slot)."""
        signature = result["transaction"]["signatures"][0]
        self.transactions[signature] = result
        for key in dict.fromkeys(_keys(result)):
            self.by_address[key].append(signature)

    # ------------------------------------------------------------------ ledger

    def _key(self, signature: str) -> tuple[int, bytes]:
        return self.transactions[signature]["slot"], base58_decode(signature) or b""

    def _visible(self, signature: str) -> bool:
        found = self.transactions.get(signature)
        return found is not None and found["slot"] <= self.head

    def time_of(self, slot: int) -> int:
        """A slot's time: recorded, or interpolated from the nearest recorded slot."""
        known = sorted({(r["slot"], r["blockTime"]) for r in self.transactions.values()})
        slots = [s for s, _ in known]
        at = bisect.bisect_left(slots, slot)
        if at < len(slots) and slots[at] == slot:
            return known[at][1]
        near = known[max(0, at - 1)] if at else known[0]
        return int(near[1] + (slot - near[0]) * SLOT_SECONDS)

    # ------------------------------------------------------------------ methods

    def _signatures(self, params: list[Any]) -> Any:
        if not params or not isinstance(params[0], str) or len(base58_decode(params[0]) or
                                                                   b"") != 32:  # fmt: skip
            return _error(-32602, "Invalid param: Invalid")
        config = params[1] if len(params) > 1 and isinstance(params[1], dict) else {}
        limit = config.get("limit", 1000)
        if not isinstance(limit, int) or not 1 <= limit <= 1000:
            return _error(-32602, "Invalid limit; max 1000")
        if config.get("commitment") == "processed":
            return _error(-32602, "Method does not support commitment below `confirmed`")
        listed = sorted((s for s in self.by_address.get(params[0], ()) if self._visible(s)),
                        key=self._key, reverse=True)  # fmt: skip
        before, until = config.get("before"), config.get("until")
        if before is not None:
            if not self._visible(before):
                return []
            listed = [s for s in listed if self._key(s) < self._key(before)]
        if until is not None and self._visible(until):
            listed = [s for s in listed if self._key(s) > self._key(until)]
        out = []
        for signature in listed[: min(limit, self.max_limit)]:
            result = self.transactions[signature]
            out.append({"signature": signature, "slot": result["slot"], "err": _err(result),
                        "memo": None, "blockTime": result.get("blockTime"),
                        "confirmationStatus": "finalized"})  # fmt: skip
        return out

    def _transaction(self, params: list[Any]) -> Any:
        config = params[1] if len(params) > 1 and isinstance(params[1], dict) else {}
        if config.get("encoding", "json") != "json":
            return _error(-32602, "this stand-in serves encoding json only")
        signature = params[0] if params else None
        with self._lock:
            self.fetched[signature] += 1
        if not isinstance(signature, str) or not self._visible(signature):
            return None
        result = self.transactions[signature]
        version = result.get("version", "legacy")
        if version != "legacy" and config.get("maxSupportedTransactionVersion") is None:
            return _error(-32015, f"Transaction version ({version}) is not supported by the "
                          "requesting client. Please try the request again with the following "
                          f'configuration parameter: "maxSupportedTransactionVersion": {version}')
        return copy.deepcopy(result)

    def _block_time(self, params: list[Any]) -> Any:
        slot = params[0] if params else None
        if not isinstance(slot, int):
            return _error(-32602, "Invalid params: invalid type: expected u64.")
        if slot in self.skipped:
            code = self.skipped[slot]
            where = ("due to ledger jump to recent snapshot" if code == -32007
                     else "in long-term storage")  # fmt: skip
            return _error(code, f"Slot {slot} was skipped, or missing {where}")
        if slot > self.head:
            return _error(-32004, f"Block not available for slot {slot}")
        return self.time_of(slot)

    def _statuses(self, params: list[Any]) -> Any:
        value = []
        for signature in params[0] if params else []:
            if not self._visible(signature):
                value.append(None)
                continue
            result = self.transactions[signature]
            value.append({"slot": result["slot"], "confirmations": None, "err": _err(result),
                          "confirmationStatus": "finalized"})  # fmt: skip
        return {"context": {"slot": self.head}, "value": value}

    def _method(self, method: str) -> Callable[[list[Any]], Any] | None:
        return {
            "getSignaturesForAddress": self._signatures, "getTransaction": self._transaction,
            "getBlockTime": self._block_time, "getSignatureStatuses": self._statuses,
            "getSlot": lambda params: self.head, "getGenesisHash": lambda params: self.genesis,
        }.get(method)  # fmt: skip

    def answer(self, call: Any) -> dict[str, Any]:
        """One JSON-RPC call's reply object."""
        if not isinstance(call, dict) or not isinstance(call.get("method"), str):
            return {"jsonrpc": "2.0", "id": None, **_error(-32600, "Invalid Request")}
        with self._lock:
            self.calls[call["method"]] += 1
        handler = self._method(call["method"])
        if handler is None:
            return {"jsonrpc": "2.0", "id": call.get("id"), **_error(-32601, "Method not found")}
        value = handler(list(call.get("params") or []))
        if isinstance(value, dict) and "error" in value and set(value) == {"error"}:
            return {"jsonrpc": "2.0", "id": call.get("id"), **value}
        return {"jsonrpc": "2.0", "id": call.get("id"), "result": value}

    # ------------------------------------------------------------------ WSGI

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        size = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(size) if size else b""
        try:
            call = json.loads(body)
        except ValueError:
            return _reply(start_response, 200, {"jsonrpc": "2.0", "id": None,
                                                **_error(-32700, "Parse error")})  # fmt: skip
        head_call = call[0] if isinstance(call, list) and call else call
        first_id = head_call.get("id") if isinstance(head_call, dict) else None
        method = head_call.get("method") if isinstance(head_call, dict) else None
        if self.delay:
            time.sleep(self.delay)
        with self._lock:
            self.requests += 1
            failing = self.fail_after is not None and self.answered >= self.fail_after
            throttled = not failing and self.throttle > 0 and self.throttle_method in (
                None, method)
            if throttled:
                self.throttle -= 1
        if failing:
            if self.failure == "unavailable":
                return _reply(start_response, 503, {"jsonrpc": "2.0", "id": first_id,
                              **_error(-32005, "Node is unhealthy")})  # fmt: skip
            behind = {"code": -32005, "message": "Node is behind by 150 slots",
                      "data": {"numSlotsBehind": 150}}  # fmt: skip
            return _reply(start_response, 200, {"jsonrpc": "2.0", "id": first_id,
                                                "error": behind})  # fmt: skip
        if throttled:
            extra = {"Retry-After": self.retry_after} if self.retry_after else {}
            return _reply(start_response, 429, {"jsonrpc": "2.0", "id": first_id,
                          **_error(429, PUBLIC_429)}, extra)  # fmt: skip
        if isinstance(call, list):
            if not self.batches or not call:
                reply: Any = {"jsonrpc": "2.0", "id": None, **_error(-32600, "Invalid Request")}
            else:
                reply = [self.answer(c) for c in call]
        else:
            reply = self.answer(call)
        with self._lock:
            self.answered += 1
        return _reply(start_response, 200, reply)


def _error(code: int, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


def _reply(start_response: Callable[..., Any], status: int, body: Any,
           extra: dict[str, str] | None = None) -> list[bytes]:  # fmt: skip
    content = json.dumps(body).encode()
    reasons = {200: "OK", 429: "Too Many Requests", 503: "Service Unavailable"}
    headers = [("Content-Type", "application/json"), ("Content-Length", str(len(content)))]
    headers += list((extra or {}).items())
    start_response(f"{status} {reasons.get(status, 'Error')}", headers)
    return [content]
