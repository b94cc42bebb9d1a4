"""Rebalancing, and volume counted once per end-user movement.

Functions take a canonical ``"ledger"`` (pandas, or Polars, DuckDB, Dask:
the columns used are collected; see :func:`.actors.ledger_columns`).

Rebalancing
-----------
A transfer is *rebalancing* when an entity moves its own money. Each
flagged transfer carries the first rule, in this order, that caught it:

``same_address``
    The depositor is the mint recipient, and that address is a labelled
    operator (kind ``integrator``, ``relayer`` or ``exchange``).
``same_entity``
    Depositor and recipient are different addresses with the same label
    (an operator's contracts on two chains).
``round_trip``
    One end user burns A -> B and then B -> A within ``window`` of the
    first burn; both legs are flagged, each pointing at the other
    (``counterpart``). One return leg closes one trip (the nearest outbound
    leg strictly before it). The end user is who signed the burn
    transaction (``burn_tx_from``, where the source gives it: receipts,
    Dune's decoded tables), else the depositor (:func:`.actors.end_user`):
    two users of one integrator's contract going opposite ways are not a
    round trip of that contract. Where the depositor stands in and is a
    labelled integrator (kind ``integrator`` on the burn's chain), the row
    has no end user and is never a leg: the contract burns its users'
    transfers both ways, and without the signer nothing says whose
    (``labels=False``: every depositor stands in).
``self_transfer`` (opt-in)
    Depositor is the recipient, unlabelled: most such transfers are users
    bridging to their own address, which is why this rule is not in the
    default :data:`RULES`.

The two address rules skip *wrapped* transfers, whose receiver acts on the
mint: a hook (non-empty ``hook_data``) or a destination caller equal to the
recipient (the recipient relays itself, as Hyperlane's CCTP routes do). Those
are an integrator carrying a user's transfer, not its own inventory.

Counted once
------------
When an integrator wraps a CCTP leg, one user movement can be two CCTP
transfers: funds minted to a forwarding contract that burns them again
toward a third chain. A transfer ``t2`` *continues* ``t1`` when

1. ``t2`` burns on the chain ``t1`` minted on, from the address ``t1``
   minted to (``t2.message_sender == t1.mint_recipient``);
2. ``t2`` burns at most ``window`` after ``t1``'s mint (and not before);
3. ``t2`` carries no more than ``t1`` delivered (``amount_raw - fee_raw``);
4. the forwarding address is a labelled integrator on that chain, or
   ``t1`` is wrapped (see above): a plain user re-bridging their own money
   is two movements, not one.

Each ``t1`` is continued by at most one ``t2`` (the first), each ``t2``
continues at most one ``t1`` (the latest mint before it). :func:`dedupe`
drops the continuing legs, so a movement is counted at its first burn, and
never adds a row: volume after it is never more than before.

Examples
--------
>>> import cctx_research as cctx
>>> ledger = cctx.load_sample(as_of="2024-07-01", days=1)
>>> int(dedupe(ledger)["amount_raw"].sum()) <= int(ledger["amount_raw"].sum())
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import narwhals.stable.v2 as nw
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .. import labels as labels_
from .. import schema
from . import _common, _ledger, actor_inputs, actors, actors_lazy, engines, results

__all__ = [
    "ALL_RULES",
    "OPERATOR_KINDS",
    "RULES",
    "continuations",
    "dedupe",
    "rebalancing",
    "rebalancing_share",
]

RULES: tuple[str, ...] = ("same_address", "same_entity", "round_trip")
"""The rebalancing rules applied by default, in priority order."""

ALL_RULES: tuple[str, ...] = (*RULES, "self_transfer")
"""Every rule :func:`rebalancing` knows."""

OPERATOR_KINDS = frozenset({"integrator", "relayer", "exchange"})
"""Label kinds whose own transfers are inventory, not a user's movement."""

_COLUMNS = [
    "transfer_id",
    "source_domain",
    "destination_domain",
    "amount_raw",
    "burn_timestamp",
    "burn_tx_hash",
    "burn_block",
    "mint_timestamp",
    "message_sender",
    "mint_recipient",
    "destination_caller",
    "hook_data",
    "fee_raw",
    "burn_tx_from",
]


def _window_ns(window: Any, name: str = "window") -> int:
    try:
        delta = pd.Timedelta(window)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a duration such as '1h' or '1D', got {window!r}") from exc
    if pd.isna(delta) or delta <= pd.Timedelta(0):
        raise ValueError(f"{name} must be a positive duration, got {window!r}")
    return int(delta.value)


def _rules(rules: Any) -> tuple[str, ...]:
    items = (rules,) if isinstance(rules, str) else tuple(rules)
    bad = [r for r in items if r not in ALL_RULES]
    if bad or not items:
        raise ValueError(f"rules must name some of {list(ALL_RULES)}, got {list(items)}")
    return tuple(r for r in ALL_RULES if r in items)


def _arrow(frame: pd.DataFrame, column: str) -> pa.ChunkedArray:
    """A string column as Arrow (no copy for the ledger's own Arrow-backed strings)."""
    return pa.chunked_array(pa.array(frame[column].astype(schema.STRING).array))


def _true(values: Any) -> np.ndarray:
    """An Arrow boolean result as numpy, null as False."""
    return np.asarray(pc.fill_null(values, False), dtype=bool)


def _wrapped(frame: pd.DataFrame) -> np.ndarray:
    # ledger addresses are canonical (lowercase, 20-byte EVM): compared as they are
    has_hook = _true(pc.greater(pc.utf8_length(_arrow(frame, "hook_data")), 2))
    recipient = _arrow(frame, "mint_recipient")
    self_relay = _true(pc.equal(_arrow(frame, "destination_caller"), recipient))
    return has_hook | self_relay


def _codes(values: pd.Series) -> np.ndarray:
    return pd.factorize(values, use_na_sentinel=True)[0]


def _round_trips(
    frame: pd.DataFrame, window: int, legs: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Positions of outbound legs and of the return legs that close them.

    Of the rows ``legs`` marks (burned, with an end user): for each return
    leg (in burn order), the nearest outbound leg strictly before it on the
    reverse route, if within ``window``; an outbound leg is closed by the
    first return leg that finds it. Done on one sort by (sender, pair of
    chains), with running maxima: what an as-of join would do with a sort
    and a hash join per key.
    """
    sender = _codes(actor_inputs.end_user(frame))
    src, dst, domains = actor_inputs.route_codes(frame)
    d = len(domains)
    stamps = frame["burn_timestamp"].to_numpy(dtype="datetime64[ns]").view("int64")
    pos = np.flatnonzero((sender >= 0) & (src != dst) & legs)
    if len(pos) > 1 and (np.diff(stamps[pos]) < 0).any():  # a ledger is mostly in burn order
        pos = pos[np.argsort(stamps[pos], kind="stable")]
    # 32-bit positions where they fit: at ten million rows, memory is most of the time
    index = np.int32 if len(frame) < 2**31 else np.int64
    pos = pos.astype(index)
    a, b = src[pos], dst[pos]
    forward = a < b  # which way along its pair of chains
    group = sender[pos] * (d * d) + np.minimum(a, b) * d + np.maximum(a, b)
    del a, b
    # by (sender, pair of chains), then time, then position: a stable sort of time order
    order = _stable_order(group)
    rows, group, forward = pos[order], group[order], forward[order]
    del order, pos
    t = stamps[rows]
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
    # in burn order of the return legs; an outbound leg is closed by the first of them
    by_return = np.lexsort((j, stamps[j]))
    i, j = i[by_return], j[by_return]
    _, first = np.unique(i, return_index=True)
    first.sort()
    return i[first], j[first]


def _stable_order(keys: np.ndarray) -> np.ndarray:
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


def _operators(kinds: np.ndarray) -> np.ndarray:
    """Which rows' label kind is an operator's (kinds: object, None where unlabelled)."""
    out = np.zeros(len(kinds), dtype=bool)
    labelled = np.flatnonzero(np.not_equal(kinds, None))
    out[labelled] = [k in OPERATOR_KINDS for k in kinds[labelled]]
    return out


def _flags(
    frame: pd.DataFrame,
    window: int,
    rules: tuple[str, ...],
    table: Any,
    *,
    burned: np.ndarray | None = None,
    wrapped: np.ndarray | None = None,
) -> tuple:
    """Per row: the index in ``rules`` of the first rule that caught it (-1: none), and the
    position of the round trip's other leg (-1: none).

    ``burned`` and ``wrapped`` (per row) are computed from ``frame`` unless an
    engine has already computed them (its frame then lacks the columns they read).
    """
    n = len(frame)
    rule = np.full(n, -1, dtype="int8")
    counterpart = np.full(n, -1, dtype="int64")
    burned = _ledger.burn_known(frame) if burned is None else burned
    same = _true(pc.equal(_arrow(frame, "message_sender"), _arrow(frame, "mint_recipient")))
    plain = ~(_wrapped(frame) if wrapped is None else wrapped)
    s_label = r_label = np.full(n, None, dtype=object)
    operator = r_operator = integrator = np.zeros(n, dtype=bool)
    if table is not None and ({"same_address", "same_entity", "round_trip"} & set(rules)):
        sender = frame["message_sender"].astype(schema.STRING)
        s_label, s_kind = table.resolve(sender, labels_.chains_of(frame, "message_sender"))
        operator = _operators(s_kind)
        integrator = np.equal(s_kind, "integrator")
        # both address rules need a labelled operator as depositor: only those rows'
        # recipients are looked up
        rows = np.flatnonzero(operator)
        if len(rows):
            recipient = frame["mint_recipient"].astype(schema.STRING).iloc[rows]
            chains_ = labels_.chains_of(frame, "mint_recipient")
            label, kind = table.resolve(recipient, None if chains_ is None else chains_[rows])
            r_label = np.full(n, None, dtype=object)
            r_label[rows] = label
            r_operator = np.zeros(n, dtype=bool)
            r_operator[rows] = _operators(kind)
    for k, name in enumerate(rules):
        todo = rule < 0
        if name == "same_address":
            hit = same & operator & plain
        elif name == "same_entity":
            both = operator & r_operator
            labelled = np.zeros(n, dtype=bool)
            labelled[both] = s_label[both] == r_label[both]
            hit = ~same & labelled & plain
        elif name == "self_transfer":
            hit = same & plain
        else:
            # an integrator's contract standing in for its unknown signers is no end user
            stand_in = integrator & frame["burn_tx_from"].isna().to_numpy()
            out_i, back_j = _round_trips(frame, window, burned & ~stand_in)
            hit = np.zeros(n, dtype=bool)
            hit[out_i] = hit[back_j] = True
            take_i, take_j = todo[out_i], todo[back_j]
            counterpart[out_i[take_i]] = back_j[take_i]
            counterpart[back_j[take_j]] = out_i[take_j]
        rule[hit & todo] = k
    return rule, counterpart


def rebalancing(
    ledger: Any, *, window: Any = "1D", rules: Sequence[str] = RULES, labels: Any = True
) -> pd.DataFrame:
    """The transfers that are rebalancing, each with the rule that caught it.

    Parameters
    ----------
    ledger : DataFrame (pandas, Polars, DuckDB, Dask)
        A canonical ledger.
    window : str or Timedelta, default "1D"
        The longest time between the two burns of a round trip.
    rules : sequence of str, default :data:`RULES`
        Which rules to apply (see the module notes); ``"self_transfer"`` is opt-in.
    labels : bool, path or DataFrame, default True
        The labels the address rules read, and which depositors are
        integrators' contracts, no end user of a round trip (``False``:
        none, so only round trips and self transfers can match, and every
        depositor standing in is an end user).

    Returns
    -------
    pandas.DataFrame
        ``transfer_id``, ``source_chain``, ``destination_chain``,
        ``burn_timestamp``, ``amount``, ``amount_raw``, ``message_sender``,
        ``mint_recipient``, ``end_user`` (:func:`.actors.end_user`), ``rule``
        and ``counterpart`` (the other leg's ``transfer_id`` for round
        trips). In burn order.

    Examples
    --------
    >>> from cctx_research import schema
    >>> list(rebalancing(schema.empty("ledger"))["rule"])
    []
    """
    window_ns, chosen = _window_ns(window), _rules(rules)
    frame = actor_inputs.ledger_columns(ledger, _COLUMNS, what="movements.rebalancing")
    rule, counterpart = _flags(frame, window_ns, chosen, actor_inputs.labels_of(labels))
    keep = np.flatnonzero(rule >= 0)
    rows = frame.iloc[keep]
    out = pd.DataFrame(_ledger.routes(rows)).assign(transfer_id=rows["transfer_id"].to_numpy())
    out = out[["transfer_id", "source_chain", "destination_chain"]]
    out["burn_timestamp"] = rows["burn_timestamp"].to_numpy()
    out["burn_timestamp"] = out["burn_timestamp"].astype(schema.TIMESTAMP)
    out["amount"] = _ledger.amount(rows["amount_raw"])
    out["amount_raw"] = rows["amount_raw"].to_numpy(dtype="int64")
    for col in ("message_sender", "mint_recipient"):
        out[col] = rows[col].astype(schema.STRING).to_numpy()
    out["end_user"] = pd.array(actor_inputs.end_user(rows).to_numpy(), dtype=schema.STRING)
    out["rule"] = pd.array(np.array(chosen, dtype=object)[rule[keep]], dtype=schema.STRING)
    ids = frame["transfer_id"].astype(schema.STRING).to_numpy(dtype=object)
    other = counterpart[keep]
    out["counterpart"] = pd.array(
        np.where(other >= 0, ids[np.maximum(other, 0)], None), dtype=schema.STRING
    )
    out = out.sort_values("burn_timestamp", kind="stable").reset_index(drop=True)
    return results.describe(out, span=_ledger.span(frame))


def _facts(lf: Any) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """What :func:`rebalancing_share` reads of a Polars or DuckDB ledger, with ``burned``
    and ``wrapped`` worked out in the engine: two string columns cross, not six."""
    hook = nw.col("hook_data").str.len_chars() > 2
    self_relay = nw.col("destination_caller") == nw.col("mint_recipient")
    burned = ~nw.col("burn_timestamp").is_null() & ~(
        nw.col("burn_tx_hash").is_null() & (nw.col("burn_block") == -1)
    )
    frame = engines.collect(
        lf.select(
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
    return (
        frame,
        frame.pop("__burned").to_numpy(dtype=bool),
        frame.pop("__wrapped").to_numpy(dtype=bool),
    )


def rebalancing_share(
    ledger: Any, *, window: Any = "1D", rules: Sequence[str] = RULES, labels: Any = True
) -> pd.DataFrame:
    """Per route: transfers and volume, and the share that is rebalancing.

    Parameters are those of :func:`rebalancing`.

    Returns
    -------
    pandas.DataFrame
        ``source_chain``, ``destination_chain``, ``count``, ``volume``,
        ``rebalancing_count``, ``rebalancing_volume``, ``count_share``,
        ``volume_share``; one column per rule, ``<rule>_volume``. By route.
        Volumes are sums of exact base units, in USDC.
    """
    window_ns, chosen = _window_ns(window), _rules(rules)
    what = "movements.rebalancing_share"
    if actors_lazy.reduces(ledger):
        frame, burned, wrapped = _facts(actor_inputs.ledger_lazy(ledger, _COLUMNS, what=what))
    else:
        frame = actor_inputs.ledger_columns(ledger, _COLUMNS, what=what)
        burned, wrapped = _ledger.burn_known(frame), None
    # flags on every row (the rules only ever pair burned rows); burned rows counted below:
    # filtering the frame first would copy every string column
    table = actor_inputs.labels_of(labels)
    rule, _ = _flags(frame, window_ns, chosen, table, burned=burned, wrapped=wrapped)
    src, dst, domains = actor_inputs.route_codes(frame)
    d = len(domains)
    route = (src * d + dst)[burned]
    raw = frame["amount_raw"].to_numpy(dtype="int64")[burned]
    rule = rule[burned]

    def total(values: np.ndarray) -> np.ndarray:
        out = np.zeros(d * d, dtype="int64")
        np.add.at(out, route, values)
        return out

    zero = np.zeros_like(raw)
    flagged = rule >= 0
    count = np.bincount(route, minlength=d * d)
    present = np.flatnonzero(count)
    names = np.asarray(domains, dtype="int64")
    out = pd.DataFrame(
        {
            "source_chain": actors._chain_categorical(names[present // d]),
            "destination_chain": actors._chain_categorical(names[present % d]),
            "count": count[present].astype("int64"),
            "volume": _ledger.amount(total(raw)[present]),
            "rebalancing_count": np.bincount(route[flagged], minlength=d * d)[present].astype(
                "int64"
            ),
            "rebalancing_volume": _ledger.amount(total(np.where(flagged, raw, zero))[present]),
            **{
                f"{r}_volume": _ledger.amount(total(np.where(rule == k, raw, zero))[present])
                for k, r in enumerate(chosen)
            },
        }
    )
    out.insert(6, "count_share", out["rebalancing_count"] / out["count"].where(out["count"] > 0))
    out.insert(
        7, "volume_share", out["rebalancing_volume"] / out["volume"].where(out["volume"] > 0)
    )
    span = results.span_of(frame["burn_timestamp"][burned].dropna())
    return results.describe(
        _ledger.sort_groups(out, list(_ledger.ROUTE)), span=span, by=_ledger.ROUTE
    )


def _continued(frame: pd.DataFrame, window: int, table: Any) -> tuple[np.ndarray, np.ndarray]:
    """Positions of continuing legs and of the legs they continue."""
    minted = frame["mint_timestamp"].notna().to_numpy()
    eligible = minted & _wrapped(frame)
    if table is not None:
        _, kind = table.resolve(frame["mint_recipient"], labels_.chains_of(frame, "mint_recipient"))
        eligible |= minted & (kind == "integrator")
    if not eligible.any():
        return np.zeros(0, dtype="int64"), np.zeros(0, dtype="int64")
    # Arrow all the way: no Python string per row
    recipient, sender = _arrow(frame, "mint_recipient"), _arrow(frame, "message_sender")
    forwarders = pc.unique(recipient.filter(pa.array(eligible)))
    candidate = _true(pc.is_in(sender, forwarders)) & _ledger.burn_known(frame)
    if not candidate.any():
        return np.zeros(0, dtype="int64"), np.zeros(0, dtype="int64")
    first, then = np.flatnonzero(eligible), np.flatnonzero(candidate)
    both = pa.chunked_array(recipient.take(first).chunks + sender.take(then).chunks)
    codes = both.combine_chunks().dictionary_encode().indices  # null: the code -1, as one
    codes = np.asarray(pc.fill_null(codes, -1), dtype="int64")
    a_code, b_code = codes[: len(first)], codes[len(first) :]
    dst = frame["destination_domain"].to_numpy(dtype="int64")
    src = frame["source_domain"].to_numpy(dtype="int64")
    mint_t = frame["mint_timestamp"].to_numpy(dtype="datetime64[ns]").view("int64")
    burn_t = frame["burn_timestamp"].to_numpy(dtype="datetime64[ns]").view("int64")
    fee = frame["fee_raw"].to_numpy(dtype="float64", na_value=0.0)
    delivered = frame["amount_raw"].to_numpy(dtype="int64") - fee.astype("int64")
    scale = 1 << 20  # domains are small; one integer key of (address, chain)
    right = pd.DataFrame({"t": mint_t[first], "key": a_code * scale + dst[first], "i": first})
    left = pd.DataFrame({"t": burn_t[then], "key": b_code * scale + src[then], "j": then})
    hit = pd.merge_asof(
        left.sort_values("t", kind="stable"),
        right.sort_values("t", kind="stable"),
        on="t",
        by="key",
        direction="backward",
        tolerance=window,
    )
    hit = hit.dropna(subset=["i"])
    i, j = hit["i"].to_numpy(dtype="int64"), hit["j"].to_numpy(dtype="int64")
    keep = (i != j) & (frame["amount_raw"].to_numpy(dtype="int64")[j] <= delivered[i])
    pairs = pd.DataFrame({"i": i[keep], "j": j[keep], "t": burn_t[j[keep]]})
    pairs = pairs.sort_values("t", kind="stable").drop_duplicates(subset="i", keep="first")
    return pairs["j"].to_numpy(dtype="int64"), pairs["i"].to_numpy(dtype="int64")


def continuations(ledger: Any, *, window: Any = "1h", labels: Any = True) -> pd.DataFrame:
    """The transfers that continue an earlier one (the module's rule), with the one they continue.

    Returns
    -------
    pandas.DataFrame
        ``transfer_id``, ``continues`` (the earlier transfer's id), ``via``
        (the forwarding address), ``amount_raw``.
    """
    window_ns = _window_ns(window)
    frame = actor_inputs.ledger_columns(ledger, _COLUMNS, what="movements.continuations")
    later, earlier = _continued(frame, window_ns, actor_inputs.labels_of(labels))
    ids = frame["transfer_id"].astype(schema.STRING).to_numpy(dtype=object)
    out = pd.DataFrame(
        {
            "transfer_id": pd.array(ids[later], dtype=schema.STRING),
            "continues": pd.array(ids[earlier], dtype=schema.STRING),
            "via": pd.array(
                frame["message_sender"].to_numpy(dtype=object)[later], dtype=schema.STRING
            ),
            "amount_raw": frame["amount_raw"].to_numpy(dtype="int64")[later],
        }
    )
    return results.describe(out, span=_ledger.span(frame))


def dedupe(ledger: pd.DataFrame, *, window: Any = "1h", labels: Any = True) -> pd.DataFrame:
    """``ledger`` without the transfers that continue an earlier one: each movement once.

    Parameters
    ----------
    ledger : pandas.DataFrame
        A canonical ledger.
    window : str or Timedelta, default "1h"
        The longest time from a leg's mint to the burn that forwards it.
    labels : bool, path or DataFrame, default True
        Which addresses are integrators' forwarding contracts.

    Returns
    -------
    pandas.DataFrame
        A subset of ``ledger``'s rows, in order (never more rows, never more volume).
    """
    if not isinstance(ledger, pd.DataFrame):
        raise TypeError(f"dedupe() takes a pandas ledger, got {type(ledger).__name__}")
    window_ns = _window_ns(window)
    frame = actor_inputs.ledger_columns(ledger, _COLUMNS, what="movements.dedupe")
    later, _ = _continued(frame, window_ns, actor_inputs.labels_of(labels))
    keep = np.ones(len(ledger), dtype=bool)
    keep[later] = False
    return ledger.iloc[np.flatnonzero(keep)]
