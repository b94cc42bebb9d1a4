"""The walk over Solana replies' instructions: which instruction is a CCTP event, and its accounts.

The one definition the decoder reads replies by, a block of replies at a
time, as whole columns: a Python loop over each reply's account keys and
instructions would be most of the cost of decoding, so each field is
gathered for a whole block by the interpreter's C loops (``map`` with
``itemgetter``, ``itertools.chain``), and what a loop would decide one
instruction at a time is decided for all of them with numpy:

- which replies failed (``meta.err``) and which call no CCTP program (none
  of their account keys, the static ones then the loaded writable and
  readonly ones, is one of Circle's programs);
- each instruction's position: the top-level instructions in order, each
  followed by its inner instructions (``meta.innerInstructions``); that
  position is the event's ``log_index``;
- each instruction's program: the account its ``programIdIndex`` names (an
  index naming no account names no program);
- the *calls* (:class:`Calls`): the instructions of Circle's programs, with
  the accounts they list. An *event* is a call with one account (the
  event authority of an Anchor self-CPI) and data; a MessageTransmitter call
  with several accounts names the ``MessageSent`` account a burn writes
  (:func:`~cctx_research.ingest.solana.replies.transmitter_calls`);
- which replies repeat a transaction already kept, and which hold no event.

Replies are dicts in encoding ``json`` (as ``json.loads`` gives them, or
put in that shape by :func:`~cctx_research.ingest.solana.replies.shaped`),
or the typed structs of :mod:`cctx_research.ingest.solana.text`: how their
fields are read is an :class:`Access`. A block holding anything the walk
does not read as it is raises :class:`Unexpected` before anything is added;
the reader then shapes its replies one at a time, which names what is
wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import chain, compress, repeat
from operator import attrgetter, itemgetter, methodcaller
from typing import Any

import msgspec
import numpy as np
from msgspec import UNSET

from .layouts import CODES

__all__ = ["DICTS", "MISSING", "STRUCTS", "Access", "Calls", "Unexpected", "calls", "read_block"]

MISSING = UNSET
"""A field a reply lacks (the typed structs' default too)."""

_ACCOUNT_LISTS = msgspec.json.Decoder(tuple[tuple[int, ...], ...])
"""The accounts of several typed instructions, from their JSON texts joined into one array."""

_MALFORMED = (KeyError, IndexError, TypeError, ValueError, AttributeError)


class Unexpected(Exception):
    """A block the walk does not read as it is: the message, or the error it comes from, says
    what."""


class Access:
    """How the fields of replies are read: dict items, or typed structs' attributes."""

    def __init__(self, typed: bool) -> None:
        self.typed = typed

    def get(self, key: str, values: Iterable[Any]) -> list[Any]:
        return list(map((attrgetter if self.typed else itemgetter)(key), values))

    def optional(self, key: str, values: Iterable[Any], default: Any = None) -> list[Any]:
        """The field of each, ``default`` where it is missing (the structs' defaults are so)."""
        read: Callable[[Any], Any] = attrgetter(key) if self.typed else methodcaller(
            "get", key, default)  # fmt: skip
        return list(map(read, values))

    def only(self, values: Iterable[Any], kind: type) -> bool:
        """Whether all are of ``kind`` (always, for structs: the decoder checked)."""
        return self.typed or set(map(type, values)) <= {kind}


DICTS, STRUCTS = Access(False), Access(True)


@dataclass
class Calls:
    """The calls of Circle's programs in a block of replies, in order of reply and position."""

    reply: np.ndarray
    """Each call's reply, as its place in the block."""
    position: np.ndarray
    """Each call's position in its transaction (top-level instructions, each then its inner
    ones)."""
    code: np.ndarray
    """Each call's program, as its index in ``CODES`` plus one."""
    instructions: list[Any]
    accounts: list[Sequence[Any]]
    """The accounts each call lists: indexes into its transaction's keys (names, in
    ``jsonParsed``)."""
    counts: np.ndarray
    """How many accounts each call lists."""

    def data(self, rows: np.ndarray, access: Access) -> tuple[np.ndarray, list[Any]]:
        """The calls among ``rows`` that carry data, and their data: base58 text (data that is
        not text is kept too: base58 decoding finds it no event)."""
        found = access.optional("data", map(self.instructions.__getitem__, rows.tolist()),
                                MISSING)  # fmt: skip
        has = np.fromiter((d is not MISSING for d in found), dtype=bool, count=len(found))
        return rows[has], [d for d in found if d is not MISSING]

    def events(self, access: Access) -> tuple[np.ndarray, list[Any]]:
        """The events (calls with one account and data), as rows of these calls, and their
        data."""
        return self.data(np.flatnonzero(self.counts == 1), access)


def _ints(values: list[Any]) -> np.ndarray:
    found = np.array(values)
    if (found.dtype.kind not in "iu" or found.ndim != 1) and len(values):
        raise Unexpected("a number that is not a whole one")
    return found.astype(np.int64, copy=False)


def _lengths(values: Sequence[Any]) -> np.ndarray:
    return np.fromiter(map(len, values), dtype=np.int64, count=len(values))


def _codes(lists: list[Any], access: Access) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(program code of every key, each list's length, each list's first key's place)."""
    if not access.only(lists, list):
        raise Unexpected("account keys that are not a list")
    keys = list(chain.from_iterable(lists))
    # jsonParsed spells keys as objects: unhashable, so a TypeError
    codes = np.fromiter(map(CODES.get, keys, repeat(0)), dtype=np.int8, count=len(keys))
    sizes = _lengths(lists)
    return codes, sizes, np.cumsum(sizes) - sizes


KeyCodes = list[tuple[np.ndarray, np.ndarray, np.ndarray]]
"""The program codes of each reply's account keys: static, then loaded writable and readonly
ones, each as :func:`_codes` gives them."""


def _key_codes(messages: list[Any], metas: list[Any], access: Access) -> KeyCodes:
    loaded = access.optional("loadedAddresses", metas)
    if not access.typed and not all(x is None or type(x) is dict for x in loaded):
        raise Unexpected("loaded addresses that are not an object")
    parts = [_codes(access.get("accountKeys", messages), access)]
    if any(loaded):
        for name in ("writable", "readonly"):
            lists = [getattr(x, name) if x else () for x in loaded] if access.typed else [
                x.get(name, []) if x else [] for x in loaded]  # fmt: skip
            parts.append(_codes(lists, access))
    return parts


def _calling(parts: KeyCodes, m: int) -> np.ndarray:
    """Whether each of ``m`` replies has a CCTP program among its keys."""
    cctp = np.zeros(m, dtype=bool)
    for codes, sizes, _ in parts:
        cctp[np.repeat(np.arange(m), sizes)[codes > 0]] = True
    return cctp


def _instructions(lists: list[Any], access: Access) -> tuple[list[Any], np.ndarray, np.ndarray]:
    """(instructions, each list's length, their program index)."""
    if not access.only(lists, list):
        raise Unexpected("instructions that are not a list")
    flat = list(chain.from_iterable(lists))
    index = _ints(access.get("programIdIndex", flat))  # jsonParsed names the program instead
    return flat, _lengths(lists), index


@dataclass
class _Walk:
    """Every instruction of a block: its reply, position and program index."""

    instructions: list[Any]
    reply: np.ndarray
    position: np.ndarray
    index: np.ndarray


def _walk(tops: list[Any], groups: list[Any], access: Access) -> _Walk:
    """Each instruction's reply and position: top-level ones in order, each followed by its
    inner instructions (one group at most, in order of the instruction it follows)."""
    c = len(tops)
    top, n_top, top_index = _instructions(tops, access)
    all_groups = list(chain.from_iterable(groups))
    group_at = _ints(access.get("index", all_groups))
    inner, group_size, inner_index = _instructions(access.get("instructions", all_groups), access)
    n_groups = _lengths(groups)
    group_tx = np.repeat(np.arange(c), n_groups)
    first_group = np.cumsum(n_groups) - n_groups
    same_tx = group_tx[1:] == group_tx[:-1]
    if (group_at < 0).any() or (group_at >= n_top[group_tx]).any() or (
        np.diff(group_at)[same_tx] <= 0
    ).any():
        raise Unexpected("inner instructions out of order")
    before = np.concatenate([[0], np.cumsum(group_size)])  # inner instructions before a group
    top_tx = np.repeat(np.arange(c), n_top)
    top_i = np.arange(len(top)) - np.repeat(np.cumsum(n_top) - n_top, n_top)
    key = group_tx * (1 << 32) + group_at
    nth = np.searchsorted(key, top_tx * (1 << 32) + top_i)
    top_position = top_i + before[nth] - before[first_group[top_tx]]
    inner_group = np.repeat(np.arange(len(all_groups)), group_size)
    inner_j = np.arange(len(inner)) - before[inner_group]
    inner_position = (group_at[inner_group] + before[inner_group]
                      - before[first_group[group_tx[inner_group]]] + 1 + inner_j)  # fmt: skip
    return _Walk(top + inner, np.concatenate([top_tx, group_tx[inner_group]]),
                 np.concatenate([top_position, inner_position]),
                 np.concatenate([top_index, inner_index]))  # fmt: skip


def _programs(walk: _Walk, parts: KeyCodes, where: np.ndarray) -> np.ndarray:
    """Each instruction's program code: its account among the static keys, then the loaded
    ones; 0 where it names another program, or no account of its reply."""
    index = walk.index
    code = np.zeros(len(index), dtype=np.int8)
    rest = index.copy()
    pending = rest >= 0
    for codes, sizes, starts in parts:
        size, start = sizes[where[walk.reply]], starts[where[walk.reply]]
        here = pending & (rest < size)
        code[here] = codes[start[here] + rest[here]]
        rest = np.where(pending & ~here, rest - size, rest)
        pending &= ~here
    return code


def _accounts(instructions: list[Any], access: Access) -> list[Sequence[Any]]:
    if not access.typed:
        return access.optional("accounts", instructions, ())
    # their JSON texts, read as one array (a list that is not of ints raises)
    texts = access.get("accounts_json", instructions)
    return list(_ACCOUNT_LISTS.decode(b"[%b]" % b",".join(texts))) if texts else []


def _calls(tops: list[Any], groups: list[Any], parts: KeyCodes, where: np.ndarray,
           access: Access) -> Calls:  # fmt: skip
    walk = _walk(tops, groups, access)
    code = _programs(walk, parts, where)
    members = np.flatnonzero(code > 0)
    found = list(map(walk.instructions.__getitem__, members.tolist()))
    accounts = _accounts(found, access)
    return Calls(walk.reply[members], walk.position[members], code[members], found, accounts,
                 _lengths(accounts))  # fmt: skip


def calls(replies: list[Any], access: Access) -> Calls:
    """The calls of Circle's programs in ``replies`` (each read by the walk before).

    Raises
    ------
    Unexpected
        If a reply is not one the walk reads.
    """
    try:
        messages = access.get("message", access.get("transaction", replies))
        metas = access.get("meta", replies)
        parts = _key_codes(messages, metas, access)
        return _calls(access.get("instructions", messages),
                      access.optional("innerInstructions", metas), parts,
                      np.arange(len(replies)), access)  # fmt: skip
    except _MALFORMED as exc:
        raise Unexpected from exc


@dataclass
class _Block:
    """The replies of a block still in play, and what has been read of them."""

    results: list[Any]
    entries: list[int]
    metas: list[Any]
    messages: list[Any]
    signatures: list[Any]
    tops: list[Any]
    """Each reply's top-level instructions (a reply without them is malformed, whatever
    programs it calls)."""

    def keep(self, which: list[bool]) -> None:
        for name in ("results", "entries", "metas", "messages", "signatures", "tops"):
            setattr(self, name, list(compress(getattr(self, name), which)))


def _live(results: list[Any], entries: list[int], access: Access) -> tuple[_Block, int]:
    """The replies that did not fail, and how many did."""
    a = access
    metas, transactions = a.get("meta", results), a.get("transaction", results)
    if not (a.only(metas, dict) and a.only(transactions, dict)):
        raise Unexpected("a reply whose meta or transaction is not an object")
    signatures, messages = a.get("signatures", transactions), a.get("message", transactions)
    if not (a.only(signatures, list) and a.only(messages, dict)) or 0 in map(len, signatures):
        raise Unexpected("a transaction without signatures or message")
    errors = a.optional("err", metas, MISSING)
    if any(e is MISSING for e in errors):
        raise Unexpected("a reply without meta.err")  # recorded with meta.status only
    live = [e is None for e in errors]
    block = _Block(list(results), list(entries), metas, messages, signatures, [])
    block.keep(live)
    block.tops = a.get("instructions", block.messages)
    return block, len(live) - sum(live)


def _duplicates(firsts: list[Any], has_events: np.ndarray, seen: set[str]) -> np.ndarray:
    """Which replies repeat a signature kept before (in this block or an earlier one)."""
    duplicate = np.zeros(len(firsts), dtype=bool)
    if len(set(firsts)) < len(firsts) or not seen.isdisjoint(firsts):
        kept_here: set[str] = set()
        for i, signature in enumerate(firsts):
            if signature in seen or signature in kept_here:
                duplicate[i] = True
            elif has_events[i]:
                kept_here.add(signature)
    return duplicate


def _slots(results: list[Any], access: Access) -> np.ndarray:
    """Each reply's slot (a number spelled otherwise is read as ``int`` reads it)."""
    values = access.get("slot", results)
    try:
        return _ints(values)
    except Unexpected:
        return np.array([int(v) for v in values], dtype=np.int64)


def _check_balances(metas: list[Any], access: Access) -> None:
    """Raise where a token balance is not an object (the structs' balances are structs)."""
    if access.typed:
        return
    for name in ("preTokenBalances", "postTokenBalances"):
        found = filter(None, map(methodcaller("get", name), metas))
        list(map(methodcaller("get", "owner"), chain.from_iterable(found)))


def read_block(results: list[Any], entries: Sequence[int], flat: Any, seen: set[str],
               access: Access = DICTS) -> None:  # fmt: skip
    """Add a block of ``getTransaction`` results to ``flat``, or raise :class:`Unexpected`.

    ``results`` are dicts, or with ``access=STRUCTS`` the structs of
    :mod:`~cctx_research.ingest.solana.text`; ``entries`` their entry
    numbers; ``flat`` a :class:`~cctx_research.ingest.solana.replies.Flat`;
    ``seen`` the signatures of the transactions kept so far (updated).
    """
    try:
        _read(results, entries, flat, seen, access)
    except _MALFORMED as exc:
        raise Unexpected from exc


def _read(results: list[Any], entries: Sequence[int], flat: Any, seen: set[str],
          access: Access) -> None:  # fmt: skip
    a = access
    block, failed = _live(results, entries, a)
    parts = _key_codes(block.messages, block.metas, a)
    cctp = _calling(parts, len(block.messages))
    other = len(block.messages) - int(cctp.sum())
    block.keep(cctp.tolist())
    groups = a.optional("innerInstructions", block.metas)
    if not a.only(groups, list) or (a.typed and None in groups):
        raise Unexpected("a reply without meta.innerInstructions")
    found = _calls(block.tops, groups, parts, np.flatnonzero(cctp), a)
    events, data = found.events(a)
    c = len(block.results)
    has_events = np.bincount(found.reply[events], minlength=c) > 0
    firsts = list(map(itemgetter(0), block.signatures))
    duplicate = _duplicates(firsts, has_events, seen)
    kept = ~duplicate & has_events
    rows = kept.tolist()
    _check_balances(list(compress(block.metas, rows)), a)
    kept_results = list(compress(block.results, rows))
    slots = _slots(kept_results, a)
    # the events of the kept replies, in order of reply and position
    on = kept[found.reply[events]]
    events, data = events[on], list(compress(data, on.tolist()))
    tx, position = found.reply[events], found.position[events]
    order = np.lexsort((position, tx))
    row = np.cumsum(kept) - 1 + len(flat.signature)
    # nothing was added before here: a block that raised is read again one reply at a time
    flat.skip("failed_transactions", failed)
    flat.skip("other_programs", other)
    flat.skip("no_cctp_events", int((~duplicate & ~has_events).sum()))
    flat.duplicates += int(duplicate.sum())
    kept_signatures = list(compress(firsts, rows))
    seen.update(kept_signatures)
    flat.signature.extend(kept_signatures)
    flat.slot.extend(slots.tolist())
    flat.block_time.extend(a.optional("blockTime", kept_results))
    flat.entry.extend(compress(block.entries, rows))
    flat.sources.extend(kept_results)
    flat.ev_tx.extend(row[tx][order].tolist())
    flat.ev_position.extend(position[order].tolist())
    flat.ev_code.extend(found.code[events][order].tolist())
    flat.ev_data.extend(map(data.__getitem__, order.tolist()))
