"""The round-trip rule's matching: each end user's legs paired across the reverse route.

:func:`round_trips` takes the rows' facts (:class:`.round_trips.Rows`, from
:func:`.round_trips.rows` or :func:`.round_trips.engine_rows`) and pairs each return
leg with the nearest outbound leg before it on the reverse route, within a window (the
rule is in :mod:`.movements`' notes): one sort by (end user, pair of chains) and running
maxima, in numpy.

Examples
--------
>>> import numpy as np
>>> stable_order(np.array([3, 1, 3, 0])).tolist()
[3, 1, 0, 2]
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from threading import Condition

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .round_trips import Rows

__all__ = ["SPLIT_FROM", "round_trips", "stable_order"]

SPLIT_FROM = 1_000_000
"""From this many legs, :func:`round_trips` matches the end users of even and of odd codes
on two threads (numpy's sorts, gathers and running maxima release the GIL)."""


def round_trips(facts: Rows, window: int, legs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of outbound legs and of the return legs that close them (see
    :func:`_matched`, the rule).

    A round trip never leaves its end user, so past :data:`SPLIT_FROM` legs the end
    users of even codes and those of odd codes are matched on two threads and the pairs
    put together: the same pairs, in no particular order. The transfer ids both halves'
    ties ask for are read in one call (:class:`_OneRead`).
    """
    if (os.cpu_count() or 1) < 2 or int(np.count_nonzero(legs)) < SPLIT_FROM:
        return _matched(facts, window, legs)
    odd = (facts.user & 1).astype(bool)
    read = _OneRead(facts.ids, 2)

    def half(party: int, users: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        try:
            return _matched(facts._replace(ids=partial(read.ask, party)), window, legs & users)
        finally:
            read.leave(party)

    with ThreadPoolExecutor(2, thread_name_prefix="cctx-round-trips") as pool:
        halves = list(pool.map(half, (0, 1), (~odd, odd)))
    return (np.concatenate([halves[0][0], halves[1][0]]),
            np.concatenate([halves[0][1], halves[1][1]]))  # fmt: skip


class _OneRead:
    """The transfer ids of several threads' rows, read in one call of ``ids``.

    Each party asks once, or leaves without asking; the last of them to do either
    reads the rows every party asked for, and each asker gets its own (a DuckDB
    ledger reads every row's id whatever is asked: one pass, not one a half). A
    party asking again reads alone; every read holds the lock (a DuckDB connection
    runs one query at a time).
    """

    def __init__(self, ids: Callable[[np.ndarray], pa.Array], parties: int) -> None:
        self._ids = ids
        self._waiting = parties  # parties that have neither asked nor left
        self._asked: dict[int, np.ndarray | None] = {}  # None: left without asking
        self._found: dict[int, pa.Array] | None = None
        self._failed: BaseException | None = None
        self._done = Condition()

    def ask(self, party: int, at: np.ndarray) -> pa.Array:
        with self._done:
            if party in self._asked:  # a second question: read alone
                return self._ids(at)
            self._asked[party] = at
            self._arrived()
            self._done.wait_for(lambda: self._found is not None or self._failed is not None)
            if self._failed is not None:
                raise self._failed
            return self._found.pop(party)

    def leave(self, party: int) -> None:
        with self._done:
            if party not in self._asked:  # the read waits for no party that has arrived
                self._asked[party] = None
                self._arrived()

    def _arrived(self) -> None:
        self._waiting -= 1
        if self._waiting:
            return
        asked = {party: at for party, at in self._asked.items() if at is not None}
        try:
            ids = self._ids(np.concatenate(list(asked.values()))) if asked else None
        except BaseException as error:
            self._failed = error
            self._done.notify_all()
            raise
        found, start = {}, 0
        for party, at in asked.items():
            found[party] = ids.slice(start, len(at))
            start += len(at)
        self._found = found
        self._done.notify_all()


def _matched(facts: Rows, window: int, legs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of outbound legs and of the return legs that close them.

    Of the rows ``legs`` marks (burned, with an end user): for each return
    leg (in burn order), the nearest outbound leg strictly before it on the
    reverse route, if within ``window``; an outbound leg is closed by the
    first return leg that finds it. Done on one sort by (end user, pair of
    chains), with running maxima: what an as-of join would do with a sort
    and a hash join per key.

    Legs at one time are ordered by ``transfer_id`` (byte order, as every
    engine compares strings), never by their position: of two outbound legs
    at one time the greater id is the nearest, of two return legs at one
    time the smaller id is the first. The rows' order (a Dask partitioning,
    the files a DuckDB relation scans) cannot change which legs pair.
    """
    sender, src, dst, stamps = facts.user, facts.src, facts.dst, facts.stamps
    pos = np.flatnonzero((sender >= 0) & (src != dst) & legs)
    # a ledger is mostly in burn order: then no leg's time is gathered to check it
    if len(pos) > 1 and not _ascending(stamps) and not _ascending(stamps[pos]):
        pos = pos[np.argsort(stamps[pos], kind="stable")]
    # 32-bit positions where they fit: at ten million rows, memory is most of the time
    index = np.int32 if len(sender) < 2**31 else np.int64
    pos = pos.astype(index)
    a, b = src[pos], dst[pos]
    forward = a < b  # which way along its pair of chains
    pairs = _pair_codes(len(facts.domains))
    # (end user, pair of chains) as one key, 32-bit where it fits: the pairs counted as
    # unordered, so the keys span half the codes a (source, destination) key would
    p = max(int(pairs.max(initial=0)) + 1, 1)
    wide = np.int32 if (int(sender.max(initial=0)) + 1) * p < 2**31 else np.int64
    group = sender[pos].astype(wide)
    group *= p
    group += pairs[a, b]
    del a, b
    # a group with legs one way only has no round trip: its legs are dropped before the sort
    both = _both_ways(group, forward)
    if both is not None:
        pos, group, forward = pos[both], group[both], forward[both]
    # by (sender, pair of chains), then time, then position: a stable sort of time order
    order = stable_order(group)
    rows, group, forward = pos[order], group[order], forward[order]
    del order, pos
    t = stamps[rows]
    _ties_by_id(rows, group, t, forward, facts.ids)
    n = len(rows)
    if not n:
        return np.zeros(0, dtype="int64"), np.zeros(0, dtype="int64")
    k = np.arange(n, dtype=index)
    new_group = np.ones(n, dtype=bool)
    np.not_equal(group[1:], group[:-1], out=new_group[1:])
    del group
    new_time = new_group.copy()
    new_time[1:] |= t[1:] != t[:-1]
    group_start = np.maximum.accumulate(np.where(new_group, k, 0))
    del new_group
    before = np.maximum.accumulate(np.where(new_time, k, 0)) - 1  # the row before its time
    del new_time
    # the latest leg each way up to each row, read just before the row's own time
    at = np.maximum(before, 0)
    last = np.maximum.accumulate(np.where(forward, -1, k))
    other = last[at]  # for a forward leg: the latest leg back
    last = np.maximum.accumulate(np.where(forward, k, -1))
    np.copyto(other, last[at], where=~forward)
    del last, at
    found = (before >= 0) & (other >= group_start)
    del before, group_start
    found[found] &= t[found] - t[other[found]] <= window
    j, i = rows[found].astype("int64"), rows[other[found]].astype("int64")
    # in (end user, pair, time, id) order: the return legs that find one outbound leg share
    # its group, so the first of them here is the first in time (ties: the smaller id)
    _, first = np.unique(i, return_index=True)
    first.sort()
    return i[first], j[first]


def _ascending(values: np.ndarray) -> bool:
    """Whether ``values`` never decrease (one comparison a pair, no difference made)."""
    return bool((values[1:] >= values[:-1]).all())


def _pair_codes(d: int) -> np.ndarray:
    """Per (source, destination) code, the code of their unordered pair of chains, in the
    order of (smaller code, greater code): keys sort as by those two codes."""
    lo, hi = np.triu_indices(d, 1)  # row by row: (0, 1), (0, 2), ..., (1, 2), ...
    table = np.zeros((d, d), dtype=np.int32)
    table[lo, hi] = table[hi, lo] = np.arange(len(lo), dtype=np.int32)
    return table


def _both_ways(group: np.ndarray, forward: np.ndarray) -> np.ndarray | None:
    """Which legs are in a group with legs both ways (None: all are).

    Counted in an array of at most about twice as many cells as legs: where the
    groups' codes are more, groups sharing a cell (codes equal modulo its size) count
    together, which can keep a leg in vain but never drops one that pairs.
    """
    size = int(group.max(initial=-1)) + 1
    if not size:
        return None
    cells = min(size, 2 * len(group) + (1 << 16))
    key = group if cells == size else group % cells
    # one count of (cell, way) pairs, not a count of each way's legs picked out
    pair = key.astype(np.intp) * 2
    pair += forward
    ways = np.bincount(pair, minlength=2 * cells).reshape(cells, 2)
    del pair
    keep = ((ways[:, 0] > 0) & (ways[:, 1] > 0))[key]
    return None if keep.all() else keep


def _ties_by_id(
    rows: np.ndarray,
    group: np.ndarray,
    t: np.ndarray,
    forward: np.ndarray,
    ids: Callable[[np.ndarray], pa.Array],
) -> None:
    """Reorder, in place, the runs of legs of one group at one time by ``transfer_id``
    (byte order): the tie order every engine shares, whatever order the rows came in."""
    tie = (group[1:] == group[:-1]) & (t[1:] == t[:-1])
    if not tie.any():
        return
    member = np.zeros(len(rows), dtype=bool)
    member[1:] |= tie
    member[:-1] |= tie
    at = np.flatnonzero(member)
    run = np.cumsum(np.concatenate([[True], ~tie]))[at]
    # only legs of one way are ever compared (the latest outbound leg, the first return
    # leg): a run with at most one leg each way keeps its order, and needs no ids
    dense = np.cumsum(np.concatenate([[0], run[1:] != run[:-1]]))
    ways = np.bincount(dense * 2 + forward[at], minlength=2 * (int(dense[-1]) + 1))
    several = (ways.reshape(-1, 2).max(axis=1) > 1)[dense]
    if not several.any():
        return
    at, run = at[several], run[several]
    rank = np.asarray(pc.rank(ids(rows[at]), sort_keys="ascending", tiebreaker="first"))
    order = np.lexsort((rank, run))
    rows[at] = rows[at][order]
    forward[at] = forward[at][order]


def stable_order(keys: np.ndarray) -> np.ndarray:
    """A stable argsort of non-negative integer ``keys``.

    Keys under 2**32 take two 16-bit passes, each a radix sort (numpy's
    stable sort of 16-bit integers): linear, where a stable sort of wider
    integers merges (n log n, several times slower at ten million rows).
    """
    if not len(keys) or keys.min() < 0 or keys.max() >= 1 << 32:
        return np.argsort(keys, kind="stable")
    low = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
    high = np.argsort((keys[low] >> 16).astype(np.uint16), kind="stable")
    return low[high]
