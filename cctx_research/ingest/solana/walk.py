"""The walk over Solana replies' instructions, a block of replies at a time, as whole columns.

Reading a reply one at a time (:mod:`cctx_research.ingest.solana.replies`) is
a Python loop over its account keys and instructions, most of the cost of
decoding. Here each field is gathered for a whole block of replies by the
interpreter's C loops (``map`` with ``itemgetter``, ``itertools.chain``),
and what the loop decided one instruction at a time is decided for all of
them with numpy: which account of each instruction is its program (the
static keys, then the loaded writable and readonly ones), each
instruction's position (top-level instructions in order, each followed by
its inner instructions), which instructions are events (a CCTP program,
one account, data), and which replies are failed, of other programs,
duplicates or without events.

:func:`read_block` adds to a :class:`~cctx_research.ingest.solana.replies.Flat`
exactly what the reply-at-a-time reading adds, for replies in encoding
``json`` that are whole. A block holding anything else (``jsonParsed``,
a reply without ``meta.err``, a missing or mistyped field, an instruction
naming an account it does not have) raises :class:`Unexpected` before
anything is added, and is read one reply at a time, which names what is
wrong.

The replies are dicts (as ``json.loads`` gives them), or, with
``typed=True``, the structs of :mod:`cctx_research.ingest.solana.text`,
decoded from JSON text with only the fields read here: their fields are
read as attributes, and the checks of types the decoder made already are
not made again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import chain, compress, repeat
from operator import attrgetter, itemgetter, methodcaller
from typing import Any

import msgspec
import numpy as np
from msgspec import UNSET

from .layouts import CODES

__all__ = ["Unexpected", "read_block"]

_MISSING = UNSET
"""A field a reply lacks (the typed structs' default too)."""


_ACCOUNT_LISTS = msgspec.json.Decoder(tuple[tuple[int, ...], ...])
"""The accounts of several typed instructions, from their JSON texts joined into one array."""


class Unexpected(Exception):
    """A block the columnar walk does not read as the reply-at-a-time reading would."""


def _only(values: Iterable[Any], kind: type) -> bool:
    return set(map(type, values)) <= {kind}


class _Access:
    """How the fields of a block's replies are read: dict items, or typed structs' attributes."""

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
        return self.typed or _only(values, kind)


_DICTS, _STRUCTS = _Access(False), _Access(True)


def _get(key: Any, values: list[Any]) -> list[Any]:
    return list(map(itemgetter(key), values))


def _ints(values: list[Any]) -> np.ndarray:
    found = np.array(values)
    if found.dtype.kind not in "iu" and len(values):
        raise Unexpected  # a number that is not a whole one, or no number
    return found.astype(np.int64, copy=False)


def _lengths(values: list[Any]) -> np.ndarray:
    return np.fromiter(map(len, values), dtype=np.int64, count=len(values))


def _codes(lists: list[Any], access: _Access) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(program code of every key, each list's length, each list's first key's place)."""
    if not access.only(lists, list):
        raise Unexpected
    keys = list(chain.from_iterable(lists))
    # jsonParsed spells keys as objects: unhashable, so Unexpected
    codes = np.fromiter(map(CODES.get, keys, repeat(0)), dtype=np.int8, count=len(keys))
    sizes = _lengths(lists)
    return codes, sizes, np.cumsum(sizes) - sizes


def _instructions(lists: list[Any], access: _Access) -> tuple[list[Any], np.ndarray, np.ndarray]:
    """(instructions, each list's length, their program index)."""
    if not access.only(lists, list):
        raise Unexpected
    flat = list(chain.from_iterable(lists))
    index = _ints(access.get("programIdIndex", flat))  # jsonParsed names the program instead
    return flat, _lengths(lists), index


def read_block(results: list[Any], entries: list[int], flat: Any, seen: set[str], *,
               typed: bool = False) -> None:  # fmt: skip
    """Add a block of ``getTransaction`` results to ``flat``, or raise :class:`Unexpected`.

    ``results`` are dicts, or with ``typed`` the structs of
    :mod:`~cctx_research.ingest.solana.text`; ``entries`` their entry
    numbers; ``seen`` the signatures of the transactions kept so far
    (updated).
    """
    try:
        _read(results, entries, flat, seen, _STRUCTS if typed else _DICTS)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise Unexpected from exc


def _read(results: list[Any], entries: list[int], flat: Any, seen: set[str],
          access: _Access) -> None:  # fmt: skip
    a = access
    metas, transactions = a.get("meta", results), a.get("transaction", results)
    if not (a.only(metas, dict) and a.only(transactions, dict)):
        raise Unexpected
    signatures, messages = a.get("signatures", transactions), a.get("message", transactions)
    if not (a.only(signatures, list) and a.only(messages, dict)) or 0 in map(len, signatures):
        raise Unexpected
    errors = a.optional("err", metas, _MISSING)
    if any(e is _MISSING for e in errors):
        raise Unexpected  # recorded with meta.status only
    live = [e is None for e in errors]
    failed = len(live) - sum(live)

    # the program of every account of the live replies: static keys, then loaded ones
    messages, metas = list(compress(messages, live)), list(compress(metas, live))
    results, entries = list(compress(results, live)), list(compress(entries, live))
    signatures = list(compress(signatures, live))
    statics, tops = a.get("accountKeys", messages), a.get("instructions", messages)
    loaded = a.optional("loadedAddresses", metas)
    if not a.typed and not all(x is None or type(x) is dict for x in loaded):
        raise Unexpected
    parts = [_codes(statics, a)]
    if any(loaded):
        for name in ("writable", "readonly"):
            lists = [getattr(x, name) if x else () for x in loaded] if a.typed else [
                x.get(name, []) if x else [] for x in loaded]  # fmt: skip
            parts.append(_codes(lists, a))
    m = len(messages)
    cctp = np.zeros(m, dtype=bool)
    for codes, sizes, _ in parts:
        cctp[np.repeat(np.arange(m), sizes)[codes > 0]] = True
    other = m - int(cctp.sum())

    # the instructions of the replies that call a CCTP program
    keep = cctp.tolist()
    metas, results = list(compress(metas, keep)), list(compress(results, keep))
    entries, signatures = list(compress(entries, keep)), list(compress(signatures, keep))
    tops = list(compress(tops, keep))
    where = np.flatnonzero(cctp)  # each kept reply's place among the live ones
    c = len(where)
    groups = a.optional("innerInstructions", metas)
    if not a.only(groups, list) or (a.typed and None in groups):
        raise Unexpected  # no inner instructions: the one-at-a-time reading says so
    top, n_top, top_index = _instructions(tops, a)
    all_groups = list(chain.from_iterable(groups))
    group_at = _ints(a.get("index", all_groups))
    inner, group_size, inner_index = _instructions(a.get("instructions", all_groups), a)
    n_groups = _lengths(groups)
    group_tx = np.repeat(np.arange(c), n_groups)
    first_group = np.cumsum(n_groups) - n_groups
    # groups in order of the instruction they follow, each after a top-level instruction
    same_tx = group_tx[1:] == group_tx[:-1]
    if (group_at < 0).any() or (group_at >= n_top[group_tx]).any() or (
        np.diff(group_at)[same_tx] <= 0
    ).any():
        raise Unexpected

    # positions: top-level instructions in order, each followed by its inner instructions
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

    # each instruction's program: its account among the static keys, then the loaded ones
    tx = np.concatenate([top_tx, group_tx[inner_group]])
    index = np.concatenate([top_index, inner_index])
    code = np.zeros(len(index), dtype=np.int8)
    rest = index.copy()
    if (rest < 0).any():
        raise Unexpected
    pending = np.ones(len(index), dtype=bool)
    for codes, sizes, starts in parts:
        size, start = sizes[where[tx]], starts[where[tx]]
        here = pending & (rest < size)
        code[here] = codes[start[here] + rest[here]]
        rest = np.where(pending & ~here, rest - size, rest)
        pending &= ~here
    if pending.any():
        raise Unexpected  # an account the reply does not have

    # events: an instruction of a CCTP program with one account and data
    members = np.flatnonzero(code > 0)
    objects = list(map((top + inner).__getitem__, members.tolist()))
    if a.typed:  # their JSON texts, read as one array (a list that is not of ints raises)
        texts = a.get("accounts_json", objects)
        accounts = _lengths(_ACCOUNT_LISTS.decode(b"[%b]" % b",".join(texts))) if texts else (
            np.zeros(0, dtype=np.int64))  # fmt: skip
    else:
        accounts = _lengths(a.optional("accounts", objects, ()))
    maybe = members[accounts == 1]
    data = a.optional("data", compress(objects, accounts == 1), _MISSING)
    has_data = np.fromiter((d is not _MISSING for d in data), dtype=bool, count=len(data))
    data = [d for d in data if d is not _MISSING]
    if not a.only(data, str):
        raise Unexpected
    events = maybe[has_data]
    position = np.concatenate([top_position, inner_position])
    has_events = np.bincount(tx[events], minlength=c) > 0

    # duplicates: a signature kept before (in this block or an earlier one)
    firsts = _get(0, signatures)
    if not a.only(firsts, str):
        raise Unexpected
    duplicate = np.zeros(c, dtype=bool)
    if len(set(firsts)) < c or not seen.isdisjoint(firsts):
        kept_here: set[str] = set()
        for i, signature in enumerate(firsts):
            if signature in seen or signature in kept_here:
                duplicate[i] = True
            elif has_events[i]:
                kept_here.add(signature)
    kept = ~duplicate & has_events
    rows = kept.tolist()
    if not a.typed:  # the structs' balances are structs
        kept_metas = list(compress(metas, rows))
        for name in ("preTokenBalances", "postTokenBalances"):
            found = filter(None, map(methodcaller("get", name), kept_metas))
            if not _only(chain.from_iterable(found), dict):
                raise Unexpected
    kept_results = list(compress(results, rows))
    slots = _ints(a.get("slot", kept_results))

    # the events of the kept replies, in order of reply and position
    on = kept[tx[events]]
    events, data = events[on], list(compress(data, on.tolist()))
    order = np.lexsort((position[events], tx[events]))
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
    flat.entry.extend(compress(entries, rows))
    flat.sources.extend(kept_results)
    flat.ev_tx.extend(row[tx[events]][order].tolist())
    flat.ev_position.extend(position[events][order].tolist())
    flat.ev_code.extend(code[events][order].tolist())
    flat.ev_data.extend(map(data.__getitem__, order.tolist()))
