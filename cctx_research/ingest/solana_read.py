"""Solana ``getTransaction`` replies, flattened into the columns the CCTP decoder needs.

A file holds one reply, a list of them, JSON-RPC responses (``{"jsonrpc",
"id", "result"}``, alone or in a list), or JSON Lines of any of these; the
encoding is ``json`` (instructions name their program by ``programIdIndex``
into ``accountKeys`` + ``meta.loadedAddresses``) or ``jsonParsed``
(``programId`` and account keys spelled out). The same file may hold the
``MessageSent`` accounts a ``getProgramAccounts`` call returned (entries
``{"pubkey", "account": {"data": [base64, "base64"], "owner"}}``).

Every instruction of a transaction gets a position: the top-level
instructions in order, each followed by its inner instructions
(``meta.innerInstructions``). That position is the event's ``log_index``.
Only what a CCTP decoder needs is kept: the instructions of Circle's
programs with one account (an event's self-CPI has only the event
authority), the instructions of the MessageTransmitter with their accounts
(a ``MessageSent`` account is one of them), and the token balances (who owns
a token account).

Nothing here raises for a bad entry: a failed transaction (``meta.err``), a
transaction that calls no CCTP program, and a reply that is cut short or
malformed each get a reason, counted by the caller.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .solana_layouts import MESSAGE_TRANSMITTERS, PROGRAMS

__all__ = ["Flat", "flatten", "flatten_documents", "read_documents"]


class _Bad(Exception):
    """An entry that is not a usable reply; the message says why."""


@dataclass
class Flat:
    """The columns of every transaction and candidate event of one file."""

    source_file: str
    # one row per transaction kept (not failed, calls a CCTP program)
    signature: list[str] = field(default_factory=list)
    slot: list[int] = field(default_factory=list)
    block_time: list[Any] = field(default_factory=list)
    entry: list[int] = field(default_factory=list)
    # one row per candidate event instruction
    ev_tx: list[int] = field(default_factory=list)
    ev_position: list[int] = field(default_factory=list)
    ev_program: list[str] = field(default_factory=list)
    ev_data: list[str] = field(default_factory=list)
    # MessageTransmitter calls: (tx row, position, accounts, the tx's account keys)
    transmitter_calls: list[tuple[int, int, list[Any], list[str]]] = field(default_factory=list)
    # token balances: (tx row, the tx's account keys, the balance entry)
    balances: list[tuple[int, list[str], dict[str, Any]]] = field(default_factory=list)
    accounts: list[tuple[int, str, str, str]] = field(default_factory=list)
    """``MessageSent`` candidates: (entry, pubkey, owner program, base64 data)."""
    skipped: dict[str, int] = field(default_factory=dict)
    problems: list[dict[str, Any]] = field(default_factory=list)
    duplicates: int = 0
    entries: int = 0

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def bad(self, entry: int, reason: str) -> None:
        self.problems.append({"source_file": self.source_file, "index": entry, "reason": reason})


def read_documents(path: Path) -> list[tuple[Any, str | None]]:
    """The JSON values of a file (whole, or one per line): (value, None) or (None, why not)."""
    text = path.read_text(encoding="utf-8-sig")
    try:
        return [(json.loads(text), None)]
    except json.JSONDecodeError:
        pass
    out: list[tuple[Any, str | None]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append((json.loads(line), None))
        except json.JSONDecodeError as exc:
            out.append((None, f"line {number}: not JSON ({exc.msg}): a truncated reply?"))
    return out


def _entries(doc: Any) -> list[tuple[Any, str | None]]:
    """The replies and accounts in one JSON value: (entry, None) or (None, why not)."""
    if isinstance(doc, list):
        out = []
        for item in doc:
            out.extend(_entries(item) if isinstance(item, (list, dict)) and _nested(item)
                       else [(item, None)])
        return out
    if isinstance(doc, dict) and ("jsonrpc" in doc or "error" in doc) and "transaction" not in doc:
        if doc.get("error") is not None:
            err = doc["error"]
            detail = err.get("message", err) if isinstance(err, dict) else err
            return [(None, f"JSON-RPC error response: {str(detail)[:200]}")]
        if "result" not in doc:
            return [(None, "JSON-RPC response without a result")]
        result = doc["result"]
        if result is None:
            return [(None, "JSON-RPC result is null (the node has no such transaction)")]
        return _entries(result) if isinstance(result, list) else [(result, None)]
    return [(doc, None)]


def _nested(item: Any) -> bool:
    return isinstance(item, list) or ("jsonrpc" in item and "transaction" not in item)


def _keys(message: dict[str, Any], meta: dict[str, Any]) -> list[str]:
    keys = message["accountKeys"]
    if keys and isinstance(keys[0], dict):  # jsonParsed: loaded addresses are listed already
        return [k["pubkey"] for k in keys]
    loaded = meta.get("loadedAddresses") or {}
    return [*keys, *loaded.get("writable", ()), *loaded.get("readonly", ())]


def _failed(meta: dict[str, Any]) -> bool:
    if "err" in meta:
        return meta["err"] is not None
    status = meta.get("status")
    if isinstance(status, dict) and ("Ok" in status or "Err" in status):
        return "Err" in status
    raise _Bad("meta has neither err nor status: a truncated reply?")


def _flatten_tx(result: dict[str, Any], entry: int, flat: Flat, seen: set[str]) -> None:
    transaction, meta = result.get("transaction"), result.get("meta")
    if not isinstance(transaction, dict) or not isinstance(meta, dict):
        raise _Bad("reply lacks transaction or meta: a truncated reply?")
    signatures = transaction.get("signatures")
    message = transaction.get("message")
    if not isinstance(signatures, list) or not signatures or not isinstance(message, dict):
        raise _Bad("transaction lacks signatures or message: a truncated reply?")
    if _failed(meta):
        flat.skip("failed_transactions")
        return
    keys = _keys(message, meta)
    top = message["instructions"]
    inner_groups = meta.get("innerInstructions")
    if PROGRAMS.keys().isdisjoint(keys):
        flat.skip("other_programs")
        return
    if inner_groups is None:
        raise _Bad("meta.innerInstructions is missing: the events are in inner instructions")
    signature = signatures[0]
    if signature in seen:
        flat.duplicates += 1
        return
    row = len(flat.signature)
    indexed = not top or "programIdIndex" in top[0]  # encoding json; else jsonParsed
    cctp = {i for i, k in enumerate(keys) if k in PROGRAMS} if indexed else PROGRAMS.keys()
    found: list[tuple[int, str, str]] = []  # kept only once the whole reply has been read
    calls: list[tuple[int, int, list[Any], list[str]]] = []
    inner = {g["index"]: g["instructions"] for g in inner_groups}
    position = 0
    for i, instruction in enumerate(top):
        group = (instruction, *inner.get(i, ()))
        if indexed:
            members = [(position + j, ix, keys[ix["programIdIndex"]]) for j, ix in
                       enumerate(group) if ix["programIdIndex"] in cctp]
        else:
            members = [(position + j, ix, ix["programId"]) for j, ix in enumerate(group)
                       if ix.get("programId") in cctp]
        position += len(group)
        for at, ix, program in members:
            accounts = ix.get("accounts", ())
            if "data" not in ix:
                continue
            if len(accounts) == 1:
                found.append((at, program, ix["data"]))
            elif program in MESSAGE_TRANSMITTERS:
                calls.append((row, at, accounts, keys))
    if not found:
        flat.skip("no_cctp_events")
        return
    balances = [(row, keys, b) for name in ("preTokenBalances", "postTokenBalances")
                for b in meta.get(name) or () if b.get("owner")]
    slot = int(result["slot"])
    seen.add(signature)
    flat.signature.append(signature)
    flat.slot.append(slot)
    flat.block_time.append(result.get("blockTime"))
    flat.entry.append(entry)
    for position, program, data in found:
        flat.ev_tx.append(row)
        flat.ev_position.append(position)
        flat.ev_program.append(program)
        flat.ev_data.append(data)
    flat.transmitter_calls.extend(calls)
    flat.balances.extend(balances)


def flatten_documents(documents: Iterable[tuple[Any, str | None]], source_file: str) -> Flat:
    """A :class:`Flat` of parsed JSON values: (value, None) or (None, why it is unreadable)."""
    flat = Flat(source_file)
    seen: set[str] = set()
    entry = 0
    for doc, why in documents:
        for item, problem in ([(None, why)] if why else _entries(doc)):
            here, entry = entry, entry + 1
            if problem is not None:
                flat.bad(here, problem)
                continue
            try:
                if isinstance(item, dict) and "pubkey" in item and "account" in item:
                    account = item["account"]
                    data = account["data"]
                    flat.accounts.append((here, item["pubkey"], account["owner"],
                                          data[0] if isinstance(data, list) else data))
                elif isinstance(item, dict):
                    _flatten_tx(item, here, flat, seen)
                else:
                    raise _Bad(f"a {type(item).__name__}, not a getTransaction reply")
            except _Bad as exc:
                flat.bad(here, str(exc))
            except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
                flat.bad(here, f"malformed getTransaction reply ({type(exc).__name__}: "
                               f"{str(exc)[:80]}): a truncated reply?")
    flat.entries = entry
    return flat


def flatten(path: Path) -> Flat:
    """Read one file of replies into a :class:`Flat`; bad entries become problems."""
    return flatten_documents(read_documents(path), str(path))
