"""What the rebalancing rules read of each row, and the round-trip rule's matching.

:func:`rows` gives the per-row facts of a pandas ledger; :func:`engine_rows`
those of a Polars or DuckDB ledger, worked out in the engine where it can
(on DuckDB no string per row crosses: the addresses come as integer hashes,
checked exact on a thread while the rules run, see
:func:`.actors_lazy.round_trip_rows`; the transfer ids only when legs tie
on time). :func:`.round_trip_legs.round_trips` pairs the legs (the rule is in
:mod:`.movements`' notes).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

import narwhals.stable.v2 as nw
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .. import labels as labels_
from .. import schema
from . import _common, _ledger, actor_inputs, actors_lazy, engines

__all__ = [
    "Rows",
    "arrow",
    "engine_rows",
    "rows",
    "sender_labels",
    "true",
    "wrapped_of",
]


def arrow(frame: pd.DataFrame, column: str) -> pa.ChunkedArray:
    """A string column as Arrow (no copy for the ledger's own Arrow-backed strings)."""
    return pa.chunked_array(pa.array(frame[column].astype(schema.STRING).array))


def true(values: Any) -> np.ndarray:
    """An Arrow boolean result as numpy, null as False."""
    return np.asarray(pc.fill_null(values, False), dtype=bool)


def wrapped_of(frame: pd.DataFrame) -> np.ndarray:
    """Rows whose receiver acts on the mint: a hook, or the recipient relaying itself."""
    # ledger addresses are canonical (lowercase, 20-byte EVM): compared as they are
    has_hook = true(pc.greater(pc.utf8_length(arrow(frame, "hook_data")), 2))
    recipient = arrow(frame, "mint_recipient")
    self_relay = true(pc.equal(arrow(frame, "destination_caller"), recipient))
    return has_hook | self_relay


class Rows(NamedTuple):
    """Per row, what the rules read besides the recipients' labels."""

    burned: np.ndarray  # the burn's time is known
    wrapped: np.ndarray  # the receiver acts on the mint (:func:`wrapped_of`)
    same: np.ndarray  # the depositor is the recipient
    sender: np.ndarray  # the depositor's code into ``senders`` (-1: none)
    senders: pa.Array | None  # the distinct depositors
    user: np.ndarray  # the end user's code (-1: none); ``sender`` where no signer is known
    signed: np.ndarray  # the burn's signer is known (the depositor does not stand in)
    src: np.ndarray  # source and destination codes into ``domains``
    dst: np.ndarray
    domains: list[int]
    stamps: np.ndarray  # the burn's time, ns since the epoch (meaningless where not burned)
    ids: Callable[[np.ndarray], pa.Array]  # the ``transfer_id`` of rows at these positions
    # DuckDB: the depositor where it is a labelled address, null elsewhere (``senders`` None)
    labelled: pa.ChunkedArray | None = None


_PART = 1 << 21  # rows below which one thread encodes


def _encoded(values: pa.ChunkedArray) -> tuple[np.ndarray, pa.Array]:
    """Per value its code into the distinct values (-1: null), and those values, in order
    of first appearance (as one ``dictionary_encode``).

    A long column is encoded in parts on threads (Arrow's hashing releases the
    GIL; a hash of ten million addresses is the longest step of the round
    trips), then the parts' dictionaries are merged: the same codes as one pass.
    """
    whole = values.chunk(0) if values.num_chunks == 1 else values.combine_chunks()
    k = min(os.cpu_count() or 1, 4, len(whole) // _PART)
    if k < 2:
        encoded = whole.dictionary_encode()
        return np.asarray(pc.fill_null(encoded.indices, -1)), encoded.dictionary
    step = -(-len(whole) // k)
    starts = range(0, len(whole), step)
    with ThreadPoolExecutor(k) as pool:
        parts = list(pool.map(lambda at: whole.slice(at, step).dictionary_encode(), starts))
    distinct = pc.unique(pa.concat_arrays([part.dictionary for part in parts]))
    codes = np.empty(len(whole), dtype=np.int32)
    at = 0
    for part in parts:
        lookup = np.asarray(pc.index_in(part.dictionary, value_set=distinct), dtype=np.int32)
        local = np.asarray(pc.fill_null(part.indices, -1))
        codes[at : at + len(local)] = np.append(lookup, np.int32(-1))[local]
        at += len(local)
    return codes, distinct


def _hash_codes(hashes: pa.ChunkedArray) -> np.ndarray:
    """Per row, a code of its 64-bit hash (-1: null), in order of first appearance.

    pandas' hash table of integers, not Arrow's ``dictionary_encode``: at ten
    million rows of two hundred thousand addresses it takes about three
    quarters of the CPU time, and one thread where Arrow's took two.
    """
    whole = hashes.chunk(0) if hashes.num_chunks == 1 else hashes.combine_chunks()
    if not len(whole):
        return np.zeros(0, dtype=np.int32)
    small = np.int32 if len(whole) < 2**31 else np.int64
    if not whole.null_count:
        return pd.factorize(np.asarray(whole).view(np.int64))[0].astype(small)
    valid = np.asarray(whole.is_valid())
    codes = np.full(len(whole), -1, dtype=small)
    codes[valid] = pd.factorize(np.asarray(whole.drop_null()).view(np.int64))[0]
    return codes


def _route_codes(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """:func:`.actor_inputs.route_codes`, as the smallest integers that hold them: the
    round trips gather them per row, twice."""
    src = frame["source_domain"].to_numpy(dtype="int64")
    dst = frame["destination_domain"].to_numpy(dtype="int64")
    if not len(src) or min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= 1 << 16:
        src, dst, domains = actor_inputs.route_codes(frame)
        small = np.min_scalar_type(max(len(domains) - 1, 0))
        return src.astype(small), dst.astype(small), domains
    # domains are small: a table of codes, gathered straight into the small type
    present = np.bincount(src, minlength=1).astype(bool)
    present = np.pad(present, (0, max(0, int(dst.max()) + 1 - len(present))))
    present[np.flatnonzero(np.bincount(dst))] = True
    domains = np.flatnonzero(present)
    small = np.min_scalar_type(max(len(domains) - 1, 0))
    table = (np.cumsum(present) - 1).astype(small)
    return table[src], table[dst], domains.tolist()


def rows(
    frame: pd.DataFrame, *, burned: np.ndarray | None = None, wrapped: np.ndarray | None = None
) -> Rows:
    """The rows' facts of a pandas ``frame``; ``burned`` and ``wrapped`` unless an engine has
    computed them (its frame then lacks the columns they read)."""
    senders = arrow(frame, "message_sender")
    sender, distinct = _encoded(senders)
    same = true(pc.equal(senders, arrow(frame, "mint_recipient")))
    signed = frame["burn_tx_from"].notna().to_numpy()
    # the end user is the depositor unless a signer is known: one hash of the strings
    user = _encoded(arrow(frame, "burn_tx_from").fill_null(senders))[0] if signed.any() else sender
    src, dst, domains = _route_codes(frame)
    return Rows(
        burned=_ledger.burn_known(frame) if burned is None else burned,
        wrapped=wrapped_of(frame) if wrapped is None else wrapped,
        same=same,
        sender=sender,
        senders=distinct,
        user=user,
        signed=signed,
        src=src,
        dst=dst,
        domains=domains,
        stamps=frame["burn_timestamp"].to_numpy(dtype="datetime64[ns]").view("int64"),
        ids=lambda at: arrow(frame, "transfer_id").take(pa.array(at, pa.int64())),
    )


def sender_labels(table: Any, frame: pd.DataFrame, facts: Rows) -> tuple:
    """The rows whose depositor is labelled, with its ``label`` and ``kind`` there (the
    labels ``table`` of :func:`.movements.rebalancing`'s address rules).

    Only the rows whose depositor is a labelled address on some chain are
    resolved, on their own chain: the distinct depositors are looked at, not
    every row's (on DuckDB, the engine marked those rows: ``facts.labelled``).
    """
    if facts.labelled is not None:  # the engine marked the labelled depositors' rows
        rows = np.flatnonzero(true(pc.is_valid(facts.labelled)))
        addresses = pd.Series(pd.array(facts.labelled.take(rows), dtype=schema.STRING))
    else:
        distinct = pd.Series(pd.array(facts.senders, dtype=schema.STRING))
        known = np.not_equal(table.resolve(distinct, None)[1], None)
        rows = np.flatnonzero(np.append(known, False)[facts.sender])
        at = facts.sender[rows]
        addresses = pd.Series(pd.array(facts.senders.take(at), dtype=schema.STRING))
    if not len(rows):
        return rows, np.zeros(0, dtype=object), np.zeros(0, dtype=object)
    chains_ = labels_.chains_of(frame, "message_sender", rows)
    label, kind = table.resolve(addresses, chains_)
    found = np.not_equal(kind, None)
    return rows[found], label[found], kind[found]


def _duckdb_rows(lf: Any, table: Any) -> tuple[pd.DataFrame, Rows, Callable[[], bool]]:
    """:func:`engine_rows` of a DuckDB ledger with no string per row crossing: the addresses
    come as their hashes, the labelled depositors' strings on their rows alone.

    Whether the hashes are exact (no two addresses share one) is asked on a thread while
    the rules run on the rows (one core for the sort in numpy, the other for DuckDB's
    group-by of the addresses): the third value waits for the answer. The connection
    runs one query at a time: the transfer ids, asked only when legs tie, wait for it.
    """
    users = actors_lazy.signers(lf) > 0
    labelled = [] if table is None else sorted(set(table.addresses()))
    got = actors_lazy.round_trip_rows(lf, labelled, users=users)
    pool = ThreadPoolExecutor(1)
    checked = pool.submit(_exact, lf, users)
    pool.shutdown(wait=False)  # returns at once: the check runs on
    stamps = np.asarray(pc.fill_null(got["stamp"], 0), dtype=np.int64)
    aligned = [True]

    def ids(at: np.ndarray) -> pa.Array:
        checked.result()  # one query at a time on the relation's connection
        found, aligned[0] = _duckdb_ids(lf, stamps, at)
        return found

    sender = _hash_codes(got["sender"])
    # a block each, no copy (a column set into a frame would be copied)
    columns = {
        col: got[col].to_numpy().astype(np.int64, copy=False)
        for col in ("source_domain", "destination_domain", "amount_raw")
    }
    recipients = got["mint_recipient"].combine_chunks()
    columns["mint_recipient"] = pd.array(recipients, dtype=schema.STRING)
    frame = pd.DataFrame(columns, index=pd.RangeIndex(got.num_rows), copy=False)
    src, dst, domains = _route_codes(frame)
    facts = Rows(
        burned=true(got["burned"]),
        wrapped=true(got["wrapped"]),
        same=true(got["same"]),
        sender=sender,
        senders=None,
        user=_hash_codes(got["user"]) if users else sender,
        signed=true(got["signed"]),
        src=src,
        dst=dst,
        domains=domains,
        stamps=stamps,
        ids=ids,
        labelled=got["labelled_sender"],
    )
    return frame, facts, lambda: checked.result() and aligned[0]


def _exact(lf: Any, users: bool) -> bool:
    """Whether no two depositors (nor, with ``users``, end users) share a hash."""
    if actors_lazy.hashed_values(lf, "message_sender") is None:
        return False
    return not users or actors_lazy.hashed_values(lf, actors_lazy.END_USER) is not None


def _duckdb_ids(lf: Any, stamps: np.ndarray, at: np.ndarray) -> tuple[pa.Array, bool]:
    """The ``transfer_id`` of a DuckDB ledger's rows at positions ``at`` of
    :func:`.actors_lazy.round_trip_rows` (whose burn times are ``stamps``, ns, 0 where
    none), and whether they are those rows'.

    Asked only when legs of one way tie on time. The rows are matched by position (a
    projection of the same relation: DuckDB keeps a scan's order), checked by their burn
    times: if the engine gave them in another order (a connection set not to keep it),
    the answer is False and the caller runs the rules in SQL. Every row's id is read, a
    batch at a time, and only the asked ones kept: a filter of the tied burn times (a
    bit of a constant bit string) took three times as long at ten million rows, and all
    the ids at once held a gigabyte.
    """
    stamp = "coalesce(epoch_ns(burn_timestamp), 0)"
    rel = lf.to_native().project(f"transfer_id, {stamp} AS stamp")
    order = np.argsort(at, kind="stable")
    wanted = np.asarray(at, dtype=np.int64)[order]
    kept, done = [], 0
    for batch in rel.to_arrow_reader():
        n = batch.num_rows
        if not np.array_equal(np.asarray(batch.column("stamp")), stamps[done : done + n]):
            return pa.nulls(len(at), pa.string()), False
        lo, hi = np.searchsorted(wanted, [done, done + n])
        kept.append(batch.column("transfer_id").take(pa.array(wanted[lo:hi] - done)))
        done += n
    if done != len(stamps):
        return pa.nulls(len(at), pa.string()), False
    back = np.empty(len(order), dtype=np.int64)
    back[order] = np.arange(len(order))
    ids = pa.concat_arrays(kept) if kept else pa.array([], pa.string())
    return ids.take(pa.array(back)), True


def engine_rows(lf: Any, table: Any) -> tuple[pd.DataFrame, Rows, Callable[[], bool]]:
    """The frame and :class:`Rows` that :func:`.movements.rebalancing_share` reads of a
    Polars or DuckDB ledger, with ``burned`` and ``wrapped`` worked out in the engine:
    three string columns cross, not six (none on DuckDB: see
    :func:`.actors_lazy.round_trip_rows`). ``table``: the labels (None: none), whose
    depositors' recipients DuckDB returns.

    The third value answers whether the rows' codes are exact: False for a DuckDB
    ledger whose addresses cannot cross as exact hashes (two share one), where the
    caller runs the rules in SQL (:mod:`.rebalancing_sql`) rather than collect every
    row's strings."""
    if lf.implementation is nw.Implementation.DUCKDB:
        return _duckdb_rows(lf, table)
    hook = nw.col("hook_data").str.len_chars() > 2
    self_relay = nw.col("destination_caller") == nw.col("mint_recipient")
    burned = ~nw.col("burn_timestamp").is_null() & ~(
        nw.col("burn_tx_hash").is_null() & (nw.col("burn_block") == -1)
    )
    frame = engines.collect(
        lf.select(
            "transfer_id",
            "source_domain",
            "destination_domain",
            "amount_raw",
            "burn_timestamp",
            "message_sender",
            "mint_recipient",
            "burn_tx_from",
            burned.fill_null(False).alias("__burned"),
            (hook.fill_null(False) | self_relay.fill_null(False)).alias("__wrapped"),
        )
    )
    frame = _common.typed(frame, "ledger")
    burned_, wrapped = (frame.pop(c).to_numpy(dtype=bool) for c in ("__burned", "__wrapped"))
    return frame, rows(frame, burned=burned_, wrapped=wrapped), lambda: True
