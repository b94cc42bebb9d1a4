"""Solana ``getTransaction`` replies, read into the columns the CCTP decoder needs.

A file holds one reply, a list of them, JSON-RPC responses (``{"jsonrpc",
"id", "result"}``, alone or in a list), or JSON Lines of any of these; the
encoding is ``json`` (instructions name their program by ``programIdIndex``
into ``accountKeys`` + ``meta.loadedAddresses``) or ``jsonParsed``
(``programId`` and account keys spelled out). The same file may hold the
``MessageSent`` accounts a ``getProgramAccounts`` call returned (entries
``{"pubkey", "account": {"data": [base64, "base64"], "owner"}}``).

One reader serves every entry point: a :class:`Reader` takes the entries of
parsed JSON values (dicts, as ``json.loads`` gives them or an RPC client
holds them) or typed replies (:mod:`cctx_research.ingest.solana.text`, read
straight from JSON text), and reads them a block at a time by the walk of
:mod:`cctx_research.ingest.solana.walk`, the one definition of which
instruction is a CCTP event and which accounts it names. Only what a
decoder needs is kept: the events (their transaction, position, program and
data), and each kept transaction's reply, from which what only a few rows
need (token balances: :func:`balances`; the MessageTransmitter's accounts:
:func:`transmitter_calls`) is read later, for those rows only.

A block the walk does not read as it is (a reply in ``jsonParsed``,
recorded with ``meta.status``, cut short or malformed) is read again with
each reply put in the walk's shape first (:func:`shaped`), with the same
result. Nothing here raises for a bad entry: a failed transaction
(``meta.err``), a transaction that calls no CCTP program, and a reply that
is cut short or malformed each get a reason, counted by the caller.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain, compress, repeat
from operator import add, getitem, itemgetter
from typing import Any

import numpy as np

from .layouts import MESSAGE_TRANSMITTERS, PROGRAMS
from .walk import DICTS, STRUCTS, Access, Unexpected, calls, read_block

__all__ = ["BLOCK", "Bad", "Flat", "Reader", "balances", "flatten_documents", "read_shaped",
           "shaped", "transmitter_calls"]  # fmt: skip

BLOCK = 8192
"""Replies read together by the walk."""

_MALFORMED = (KeyError, IndexError, TypeError, ValueError, AttributeError)
_TRANSMITTERS = np.array([i + 1 for i, p in enumerate(PROGRAMS) if p in MESSAGE_TRANSMITTERS])


class Bad(Exception):
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
    sources: list[Any] = field(default_factory=list)
    """The reply of each transaction row, as the walk read it (token balances and accounts
    are read from it later)."""
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


def _malformed(exc: BaseException) -> str:
    what = f"{type(exc).__name__}: {str(exc)[:80]}" if not isinstance(exc, Unexpected) else exc
    return f"malformed getTransaction reply ({what}): a truncated reply?"


# ---------------------------------------------------------------------------
# a reply in the walk's shape


def _failed(meta: dict[str, Any]) -> bool:
    if "err" in meta:
        return meta["err"] is not None
    status = meta.get("status")
    if isinstance(status, dict) and ("Ok" in status or "Err" in status):
        return "Err" in status
    raise Bad("meta has neither err nor status: a truncated reply?")


def _keys(message: dict[str, Any], meta: dict[str, Any]) -> list[str]:
    keys = message["accountKeys"]
    if keys and isinstance(keys[0], dict):  # jsonParsed: loaded addresses are listed already
        return [k["pubkey"] for k in keys]
    loaded = meta.get("loadedAddresses")
    if not loaded:
        return list(keys)
    return [*keys, *loaded.get("writable", ()), *loaded.get("readonly", ())]


def _instruction(ix: dict[str, Any], where: dict[Any, int], keys: list[str],
                 indexed: bool) -> dict[str, Any]:  # fmt: skip
    """One instruction in encoding ``json``: an index naming no account names no program, and
    the walk reads its accounts only where it has data."""
    if indexed:
        index = where.get(ix["programIdIndex"], -1)
    else:  # jsonParsed names its program
        program = ix.get("programId")
        index = where.get(program, -1)
        if index < 0 and program in PROGRAMS:  # a CCTP program not among the keys
            index = where[program] = len(keys)
            keys.append(program)
    out = {"programIdIndex": index}
    if "data" in ix:
        out["data"] = ix["data"]
        if "accounts" in ix:
            out["accounts"] = ix["accounts"]
    return out


def _instructions(top: Any, meta: dict[str, Any], keys: list[str]) -> tuple[list, list]:
    """Top-level instructions, and one group of inner instructions (in order) after those that
    have one, in encoding ``json``."""
    indexed = not top or "programIdIndex" in top[0]
    where = {i: i for i in range(len(keys))} if indexed else {
        k: i for i, k in enumerate(keys)}  # fmt: skip
    inner = {g["index"]: g["instructions"] for g in meta["innerInstructions"]}
    tops, groups = [], []
    for i, ix in enumerate(top):
        group = [_instruction(x, where, keys, indexed) for x in (ix, *inner.get(i, ()))]
        tops.append(group[0])
        if i in inner:
            groups.append({"index": i, "instructions": group[1:]})
    return tops, groups


def _reply(result: dict[str, Any], signatures: list[Any], meta: dict[str, Any], keys: list[Any],
           tops: list[Any], groups: list[Any]) -> dict[str, Any]:  # fmt: skip
    shaped_meta = {"err": None, "innerInstructions": groups}
    shaped_meta.update((k, meta[k]) for k in ("preTokenBalances", "postTokenBalances") if k in meta)
    out = {k: result[k] for k in ("slot", "blockTime") if k in result}
    out["meta"] = shaped_meta
    out["transaction"] = {"signatures": signatures,
                          "message": {"accountKeys": keys, "instructions": tops}}
    return out


def shaped(result: dict[str, Any], seen: set[str]) -> dict[str, Any]:
    """``result`` as the walk reads it: a reply in encoding ``json`` that says ``meta.err``.

    Read in the order a reader meets its fields, so that what decides first
    decides: a failed transaction is failed however the rest is spelled,
    one of other programs is that, a transaction kept before (``seen``) is
    a duplicate; only then are its instructions read (those of
    ``jsonParsed`` to program indexes; all account keys, loaded ones too,
    in ``accountKeys``).

    Raises
    ------
    Bad
        With the reason, where the reply is cut short.
    KeyError, IndexError, TypeError, ValueError, AttributeError
        Where a field is missing or of another type.
    """
    transaction, meta = result.get("transaction"), result.get("meta")
    if not isinstance(transaction, dict) or not isinstance(meta, dict):
        raise Bad("reply lacks transaction or meta: a truncated reply?")
    signatures = transaction.get("signatures")
    message = transaction.get("message")
    if not isinstance(signatures, list) or not signatures or not isinstance(message, dict):
        raise Bad("transaction lacks signatures or message: a truncated reply?")
    if _failed(meta):
        return {"meta": {"err": True}, "transaction": {"signatures": signatures, "message": {}}}
    keys = _keys(message, meta)
    top = message["instructions"]
    if PROGRAMS.keys().isdisjoint(keys):
        return _reply(result, signatures, meta, keys, [], [])
    if meta.get("innerInstructions") is None:
        raise Bad("meta.innerInstructions is missing: the events are in inner instructions")
    if signatures[0] in seen:
        return _reply(result, signatures, meta, keys, [], [])
    return _reply(result, signatures, meta, keys, *_instructions(top, meta, keys))


def _read_one(reply: dict[str, Any], here: int, flat: Flat, seen: set[str]) -> None:
    try:
        read_block([shaped(reply, seen)], [here], flat, seen)
    except Bad as exc:
        flat.bad(here, str(exc))
    except Unexpected as exc:
        flat.bad(here, _malformed(exc.__cause__ or exc))
    except _MALFORMED as exc:
        flat.bad(here, _malformed(exc))


def read_shaped(replies: list[Any], numbers: list[int], flat: Flat, seen: set[str]) -> None:
    """Replies the walk did not read as they are: runs of them shaped, then read as a block;
    one at a time where that does not do (which names what is wrong)."""
    start = 0
    while start < len(replies):
        run: list[dict[str, Any]] = []
        for reply in replies[start:]:
            try:
                run.append(shaped(reply, seen))
            except (Bad, *_MALFORMED):
                break
        stop = start + len(run)
        try:
            if run:
                read_block(run, numbers[start:stop], flat, seen)
        except Unexpected:
            for reply, here in zip(replies[start:stop], numbers[start:stop], strict=True):
                _read_one(reply, here, flat, seen)
        if stop < len(replies):
            _read_one(replies[stop], numbers[stop], flat, seen)
        start = stop + 1


# ---------------------------------------------------------------------------
# entries


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


def _account(flat: Flat, here: int, item: dict[str, Any]) -> None:
    """A ``MessageSent`` account of ``getProgramAccounts``, kept for the decoder."""
    try:
        account = item["account"]
        data = account["data"]
        flat.accounts.append((here, item["pubkey"], account["owner"],
                              data[0] if isinstance(data, list) else data))  # fmt: skip
    except _MALFORMED as exc:
        flat.bad(here, _malformed(exc))


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
                    _account(flat, here, item)
                elif isinstance(item, dict):
                    replies.append(item)
                    numbers.append(here)
                else:
                    flat.bad(here, f"a {type(item).__name__}, not a getTransaction reply")
        self.entry = entry

    def typed(self, replies: list[Any]) -> bool:
        """Add typed replies, one entry each, as one block; False (nothing added) if the walk
        does not read them: then add them as parsed values instead."""
        self._read()
        try:
            read_block(replies, range(self.entry, self.entry + len(replies)), self.flat,
                       self.seen, STRUCTS)  # fmt: skip
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
                read_shaped(block, numbers, flat, seen)
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


# ---------------------------------------------------------------------------
# what a few rows need, read from their replies


def _access(replies: list[Any]) -> Access:
    # typed replies answer as dicts do, but their attributes are read faster
    return STRUCTS if dict not in set(map(type, replies)) else DICTS


def _account_keys(replies: list[Any], metas: list[Any], access: Access) -> list[Any]:
    """Each reply's account keys: the static ones, then the loaded writable and readonly."""
    statics = map(itemgetter("accountKeys"), map(itemgetter("message"),
                                                 map(itemgetter("transaction"), replies)))
    if access.typed:  # keys are strings, fields are attributes (None where missing)
        loaded = access.get("loadedAddresses", metas)
        return [k if a is None or not (a.writable or a.readonly) else (*k, *a.writable,
                                                                       *a.readonly)
                for k, a in zip(statics, loaded, strict=True)]  # fmt: skip
    loaded = [m.get("loadedAddresses") for m in metas]
    return [k if not a else [*k, *a.get("writable", ()), *a.get("readonly", ())]
            for k, a in zip(statics, loaded, strict=True)]  # fmt: skip


def transmitter_calls(flat: Flat) -> Iterator[tuple[int, int, str]]:
    """``(row, position, account)`` of each account of each MessageTransmitter call with several.

    A ``MessageSent`` account is one of the accounts of the transmitter's
    ``send_message``; rows and positions come in order.
    """
    found: list[tuple[int, int, str]] = []
    for typed in (True, False):
        rows = [i for i, s in enumerate(flat.sources) if (type(s) is not dict) is typed]
        if not rows:
            continue
        access = STRUCTS if typed else DICTS
        replies = list(map(flat.sources.__getitem__, rows))
        of = calls(replies, access)
        several = np.flatnonzero(np.isin(of.code, _TRANSMITTERS) & (of.counts != 1))
        several, _ = of.data(several, access)
        keys = _account_keys(replies, access.get("meta", replies), access)
        for at in several.tolist():
            reply, position = int(of.reply[at]), int(of.position[at])
            found.extend((rows[reply], position, keys[reply][a] if isinstance(a, int) else a)
                         for a in of.accounts[at])  # fmt: skip
    found.sort(key=itemgetter(0, 1))
    return iter(found)


def balances(flat: Flat, rows: Iterable[int]) -> tuple[list[int], list[str], list[str], list[str]]:
    """Rows, token accounts, mints and owners of the token balances of ``rows`` naming an owner.

    In order of row, then the balances before the transaction, then after.
    """
    rows = sorted(set(rows))
    sources = list(map(flat.sources.__getitem__, rows))
    access = _access(sources)
    metas = access.get("meta", sources)
    keys = _account_keys(sources, metas, access)
    pairs = zip(access.optional("preTokenBalances", metas),
                access.optional("postTokenBalances", metas), strict=True)  # fmt: skip
    lists = [found or () for found in chain.from_iterable(pairs)]
    sizes = list(map(len, lists))
    per_row = list(map(add, sizes[::2], sizes[1::2]))
    entries = list(chain.from_iterable(lists))
    owners = access.optional("owner", entries)
    mints = access.optional("mint", entries)
    indexes = access.optional("accountIndex", entries)
    row_keys = list(chain.from_iterable(map(repeat, keys, per_row)))
    # a balance that names its owner, its mint and one of its transaction's accounts; a
    # damaged one (a field lost or renamed, an index past the accounts) names no owner
    named = [bool(o) and isinstance(m, str) and type(i) is int and 0 <= i < len(k)
             for o, m, i, k in zip(owners, mints, indexes, row_keys, strict=True)]  # fmt: skip
    at = list(compress(chain.from_iterable(map(repeat, rows, per_row)), named))
    account = list(map(getitem, compress(row_keys, named), compress(indexes, named)))
    return at, account, list(compress(mints, named)), list(compress(owners, named))
