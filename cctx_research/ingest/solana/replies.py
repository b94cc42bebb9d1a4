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

Replies are read in blocks by :mod:`cctx_research.ingest.solana.walk`
(the walk over instructions as whole columns); a block with anything that
columnar reading does not expect (``jsonParsed``, a missing field, a
reply without ``meta.err``) is read here one reply at a time, with the same
result. What only a few rows need (token balances, the MessageTransmitter's
accounts) is read later from :attr:`Flat.sources`, for those rows only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain, compress, repeat
from operator import add, attrgetter, getitem, itemgetter, methodcaller
from pathlib import Path
from typing import Any

import orjson

from .layouts import CODES, MESSAGE_TRANSMITTERS, PROGRAMS
from .walk import Unexpected, read_block

__all__ = ["Flat", "Reader", "balances", "flatten", "flatten_documents", "line_documents",
           "read_documents", "text_documents", "transmitter_calls"]  # fmt: skip

BLOCK = 8192
"""Replies read together by the columnar walk."""


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
    ev_code: list[int] = field(default_factory=list)
    """The program of each event instruction, as its index in ``CODES`` plus one."""
    ev_data: list[str] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)
    """The reply of each transaction row (token balances and accounts are read from it later)."""
    accounts: list[tuple[int, str, str, str]] = field(default_factory=list)
    """``MessageSent`` candidates: (entry, pubkey, owner program, base64 data)."""
    skipped: dict[str, int] = field(default_factory=dict)
    problems: list[dict[str, Any]] = field(default_factory=list)
    duplicates: int = 0
    entries: int = 0

    def skip(self, reason: str, count: int = 1) -> None:
        if count:
            self.skipped[reason] = self.skipped.get(reason, 0) + count

    def bad(self, entry: int, reason: str) -> None:
        self.problems.append({"source_file": self.source_file, "index": entry, "reason": reason})


def _loads(text: bytes | str) -> Any:
    """``json.loads``, by orjson where it can (a third of the time); json's error otherwise."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)  # what only json reads (NaN, huge ints), or json's own error


def read_documents(path: Path) -> list[tuple[Any, str | None]]:
    """The JSON values of a file (whole, or one per line): (value, None) or (None, why not)."""
    return text_documents(path.read_text(encoding="utf-8-sig"))


def text_documents(text: str) -> list[tuple[Any, str | None]]:
    """The JSON values of a file's text (whole, or one per line), as :func:`read_documents`."""
    try:
        return [(_loads(text), None)]
    except json.JSONDecodeError:
        pass
    return line_documents(text.splitlines())


def line_documents(lines: Iterable[str], first: int = 1) -> list[tuple[Any, str | None]]:
    """One JSON value a line, the first numbered ``first``; blank lines are no entry."""
    out: list[tuple[Any, str | None]] = []
    for number, line in enumerate(lines, start=first):
        if not line.strip():
            continue
        try:
            out.append((_loads(line), None))
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
    loaded = meta.get("loadedAddresses")
    if not loaded:
        return keys
    return [*keys, *loaded.get("writable", ()), *loaded.get("readonly", ())]


def _failed(meta: dict[str, Any]) -> bool:
    if "err" in meta:
        return meta["err"] is not None
    status = meta.get("status")
    if isinstance(status, dict) and ("Ok" in status or "Err" in status):
        return "Err" in status
    raise _Bad("meta has neither err nor status: a truncated reply?")


def _members(result: dict[str, Any], keys: list[str]) -> Iterator[tuple[int, dict[str, Any], str]]:
    """``(position, instruction, program)`` of each instruction of a CCTP program that has data."""
    message, meta = result["transaction"]["message"], result["meta"]
    top = message["instructions"]
    indexed = not top or "programIdIndex" in top[0]  # encoding json; else jsonParsed
    cctp = {i for i, k in enumerate(keys) if k in PROGRAMS} if indexed else PROGRAMS.keys()
    inner = {g["index"]: g["instructions"] for g in meta["innerInstructions"]}
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
            if "data" in ix:
                yield at, ix, program


def _flatten_tx(result: dict[str, Any], entry: int, flat: Flat, seen: set[str]) -> None:
    """One reply into ``flat`` (the reference for :mod:`~cctx_research.ingest.solana.walk`)."""
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
    message["instructions"]  # a reply without them is malformed, whatever programs it calls
    if PROGRAMS.keys().isdisjoint(keys):
        flat.skip("other_programs")
        return
    if meta.get("innerInstructions") is None:
        raise _Bad("meta.innerInstructions is missing: the events are in inner instructions")
    signature = signatures[0]
    if signature in seen:
        flat.duplicates += 1
        return
    # kept only once the whole reply has been read
    found = [(at, program, ix["data"]) for at, ix, program in _members(result, keys)
             if len(ix.get("accounts", ())) == 1]  # fmt: skip
    if not found:
        flat.skip("no_cctp_events")
        return
    for name in ("preTokenBalances", "postTokenBalances"):
        for b in meta.get(name) or ():
            b.get("owner")  # a balance that is not an object makes the reply malformed
    row = len(flat.signature)
    slot = int(result["slot"])
    seen.add(signature)
    flat.signature.append(signature)
    flat.slot.append(slot)
    flat.block_time.append(result.get("blockTime"))
    flat.entry.append(entry)
    flat.sources.append(result)
    for position, program, data in found:
        flat.ev_tx.append(row)
        flat.ev_position.append(position)
        flat.ev_code.append(CODES[program])
        flat.ev_data.append(data)


def transmitter_calls(flat: Flat) -> Iterator[tuple[int, int, str]]:
    """``(row, position, account)`` of each account of each MessageTransmitter call with several.

    A ``MessageSent`` account is one of the accounts of the transmitter's
    ``send_message``; rows and positions come in order.
    """
    for row, result in enumerate(flat.sources):
        keys = _keys(result["transaction"]["message"], result["meta"])
        for position, ix, program in _members(result, keys):
            accounts = ix.get("accounts", ())
            if len(accounts) != 1 and program in MESSAGE_TRANSMITTERS:
                for account in accounts:
                    yield row, position, keys[account] if isinstance(account, int) else account


def balances(flat: Flat, rows: Iterable[int]) -> tuple[list[int], list[str], list[str], list[str]]:
    """Rows, token accounts, mints and owners of the token balances of ``rows`` naming an owner.

    In order of row, then the balances before the transaction, then after.
    """
    rows = sorted(set(rows))
    sources = list(map(flat.sources.__getitem__, rows))
    # typed replies (solana_json) answer as dicts do, but their attributes are read faster
    typed = dict not in set(map(type, sources))
    get = attrgetter if typed else itemgetter
    metas = list(map(get("meta"), sources))
    if typed:  # keys are strings, fields are attributes (None where missing)
        statics = map(get("transaction.message.accountKeys"), sources)
        loaded = map(get("loadedAddresses"), metas)
        keys = [k if a is None or not (a.writable or a.readonly) else (*k, *a.writable, *a.readonly)
                for k, a in zip(statics, loaded, strict=True)]  # fmt: skip
        pairs = zip(map(get("preTokenBalances"), metas), map(get("postTokenBalances"), metas),
                    strict=True)  # fmt: skip
    else:
        keys = list(map(_keys, map(_message, sources), metas))
        pairs = zip([m.get("preTokenBalances") for m in metas],
                    [m.get("postTokenBalances") for m in metas], strict=True)  # fmt: skip
    lists = [found or () for found in chain.from_iterable(pairs)]
    sizes = list(map(len, lists))
    per_row = list(map(add, sizes[::2], sizes[1::2]))
    entries = list(chain.from_iterable(lists))
    owners = list(map(get("owner") if typed else methodcaller("get", "owner"), entries))
    named = list(map(bool, owners))
    entries = list(compress(entries, named))
    at = list(compress(chain.from_iterable(map(repeat, rows, per_row)), named))
    row_keys = compress(chain.from_iterable(map(repeat, keys, per_row)), named)
    account = list(map(getitem, row_keys, map(get("accountIndex"), entries)))
    return at, account, list(map(get("mint"), entries)), list(compress(owners, named))


def _message(result: Any) -> Any:
    return result["transaction"]["message"]


class Reader:
    """The entries of one file into a :class:`Flat`, in order: parsed JSON values, or typed
    replies (:mod:`cctx_research.ingest.solana.text`) a block at a time."""

    def __init__(self, source_file: str) -> None:
        self.flat = Flat(source_file)
        self.seen: set[str] = set()
        self.replies: list[Any] = []  # replies (dicts) waiting to be read as a block
        self.numbers: list[int] = []
        self.entry = 0

    def documents(self, documents: Iterable[tuple[Any, str | None]]) -> None:
        """Add parsed JSON values: (value, None) or (None, why it is unreadable)."""
        flat, replies, numbers = self.flat, self.replies, self.numbers
        entry = self.entry
        for doc, why in documents:
            if why is None and type(doc) is dict and "transaction" in doc:
                replies.append(doc)  # a bare result, the common case: one entry
                numbers.append(entry)
                entry += 1
                continue
            for item, problem in ([(None, why)] if why else _entries(doc)):
                here, entry = entry, entry + 1
                if problem is not None:
                    flat.bad(here, problem)
                elif isinstance(item, dict) and "pubkey" in item and "account" in item:
                    try:
                        account = item["account"]
                        data = account["data"]
                        flat.accounts.append((here, item["pubkey"], account["owner"],
                                              data[0] if isinstance(data, list) else data))
                    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
                        flat.bad(here, f"malformed getTransaction reply ({type(exc).__name__}: "
                                       f"{str(exc)[:80]}): a truncated reply?")
                elif isinstance(item, dict):
                    replies.append(item)
                    numbers.append(here)
                else:
                    flat.bad(here, f"a {type(item).__name__}, not a getTransaction reply")
        self.entry = entry

    def typed(self, replies: list[Any]) -> bool:
        """Add typed replies, one entry each, as one block; False (nothing added) if the
        columnar walk does not read them: then add them as parsed values instead."""
        self._read()
        try:
            read_block(replies, range(self.entry, self.entry + len(replies)), self.flat,
                       self.seen, typed=True)  # fmt: skip
        except Unexpected:
            return False
        self.entry += len(replies)
        return True

    def _read(self) -> None:
        flat, seen = self.flat, self.seen
        for lo in range(0, len(self.replies), BLOCK):
            block, numbers = self.replies[lo : lo + BLOCK], self.numbers[lo : lo + BLOCK]
            try:
                read_block(block, numbers, flat, seen)
            except Unexpected:
                for reply, here in zip(block, numbers, strict=True):
                    _read_one(reply, here, flat, seen)
        self.replies, self.numbers = [], []

    def finish(self) -> Flat:
        """The :class:`Flat` of everything added."""
        self._read()
        flat = self.flat
        flat.problems.sort(key=lambda problem: problem["index"])  # in entry order, as read
        flat.entries = self.entry
        return flat


def flatten_documents(documents: Iterable[tuple[Any, str | None]], source_file: str) -> Flat:
    """A :class:`Flat` of parsed JSON values: (value, None) or (None, why it is unreadable)."""
    reader = Reader(source_file)
    reader.documents(documents)
    return reader.finish()


def _read_one(item: dict[str, Any], here: int, flat: Flat, seen: set[str]) -> None:
    try:
        _flatten_tx(item, here, flat, seen)
    except _Bad as exc:
        flat.bad(here, str(exc))
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        flat.bad(here, f"malformed getTransaction reply ({type(exc).__name__}: "
                       f"{str(exc)[:80]}): a truncated reply?")


def flatten(path: Path) -> Flat:
    """Read one file of replies into a :class:`Flat`; bad entries become problems."""
    return flatten_documents(read_documents(path), str(path))
