"""Rebalancing, and volume counted once per end-user movement.

Functions take a canonical ``"ledger"`` (pandas, or Polars, DuckDB, Dask:
the columns used are collected; see :func:`.actors.ledger_columns`). On
DuckDB :func:`rebalancing_share` and :func:`dedupe` find the labelled
addresses in the engine, by an exact test of the canonical columns
(:mod:`cctx_research.schema` says how a ledger spells addresses), and bring
back no row's strings but theirs.

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
    leg strictly before it). Legs at one burn time are ordered by
    ``transfer_id`` (byte order), in every engine: of two outbound legs at
    one time the greater id is the nearer, of two return legs the smaller
    id comes first; the rows' order never matters. The end user is who signed the burn
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
   is two movements, not one;
5. ``t1``'s depositor is not its recipient: an address that sent money to
   itself (an operator moving its inventory, a user bridging to their own
   address, hook or not) made a movement of its own, and burning it again
   is another (rebalancing is real volume, see :mod:`.once`).

Each ``t1`` is continued by at most one ``t2`` (the first), each ``t2``
continues at most one ``t1`` (the latest mint before it; ties by
``transfer_id``, as :mod:`.continuations_sql` runs it on DuckDB). :func:`dedupe`
drops the continuing legs, so a movement is counted at its first burn, and
never adds a row: volume after it is never more than before.

On the synthetic sample, whose forwarder burns what some mints delivered
onward to a third chain (``sample.truth``'s ``continues``), the rule finds at
least 99 % of the planted legs, each with the transfer it continues, and at
most 2 % more (legs of other movements that happen to meet the rule; two
forwards in flight through one address at once can pair crosswise):
``tests/analysis/test_planted_truth.py``.

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
from . import (
    _ledger,
    actor_inputs,
    actors_lazy,
    continuations_sql,
    engines,
    rebalancing_sql,
    results,
    round_trip_legs,
    round_trips,
)

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


def _operators(kinds: np.ndarray) -> np.ndarray:
    """Which label kinds are an operator's (kinds: object, None where unlabelled)."""
    return np.isin(kinds, list(OPERATOR_KINDS))


def _flags(
    frame: pd.DataFrame, facts: round_trips.Rows, window: int, rules: tuple[str, ...], table: Any
) -> tuple:
    """Per row: the index in ``rules`` of the first rule that caught it (-1: none), and the
    position of the round trip's other leg (-1: none).

    ``frame`` gives the domains and, where the depositor is a labelled
    operator, the recipient (an engine may leave the other rows' null).
    """
    n = len(facts.sender)
    rule = np.full(n, -1, dtype="int8")
    counterpart = np.full(n, -1, dtype="int64")
    burned, same, plain = facts.burned, facts.same, ~facts.wrapped
    operator, integrator, entity = (np.zeros(n, dtype=bool) for _ in range(3))
    if table is not None and ({"same_address", "same_entity", "round_trip"} & set(rules)):
        rows, s_label, s_kind = round_trips.sender_labels(table, frame, facts)
        is_operator = _operators(s_kind)
        operator[rows[is_operator]] = True
        integrator[rows[s_kind == "integrator"]] = True
        # same_entity needs a labelled operator on both sides: only the recipients of
        # rows with an operator as depositor are looked up
        rows, s_label = rows[is_operator], s_label[is_operator]
        if len(rows) and "same_entity" in rules:
            recipient = frame["mint_recipient"].astype(schema.STRING).iloc[rows]
            chains_ = labels_.chains_of(frame, "mint_recipient", rows)
            r_label, r_kind = table.resolve(recipient, chains_)
            both = _operators(r_kind)
            entity[rows[both]] = s_label[both] == r_label[both]
    for k, name in enumerate(rules):
        todo = rule < 0
        if name == "same_address":
            hit = same & operator & plain
        elif name == "same_entity":
            hit = ~same & entity & plain
        elif name == "self_transfer":
            hit = same & plain
        else:
            # an integrator's contract standing in for its unknown signers is no end user
            legs = burned & ~(integrator & ~facts.signed)
            out_i, back_j = round_trip_legs.round_trips(facts, window, legs)
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
    table = actor_inputs.labels_of(labels)
    rule, counterpart = _flags(frame, round_trips.rows(frame), window_ns, chosen, table)
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

    Notes
    -----
    On the bundled synthetic sample (:func:`cctx_research.load_sample`), the
    rebalancing volume found is the rebalancing the generator planted (the
    rebalancer's moves, :func:`cctx_research.service.sample.truth`) within
    1% of it, on every route and in total: no ordinary user's transfer is
    flagged. ``tests/analysis/test_planted_truth.py`` checks it.
    """
    window_ns, chosen = _window_ns(window), _rules(rules)
    what = "movements.rebalancing_share"
    table = actor_inputs.labels_of(labels)
    if actors_lazy.reduces(ledger):
        lazy = actor_inputs.ledger_lazy(ledger, _COLUMNS, what=what)
        frame, facts, exact = round_trips.engine_rows(lazy, table)
    else:
        frame = actor_inputs.ledger_columns(ledger, _COLUMNS, what=what)
        facts, exact = round_trips.rows(frame), None
    # flags on every row (the rules only ever pair burned rows); burned rows counted below:
    # filtering the frame first would copy every string column
    try:
        rule, _ = _flags(frame, facts, window_ns, chosen, table)
    finally:  # DuckDB: whether the codes are exact, asked on a thread; it ends before we do
        exact = exact is None or exact()
    if not exact:  # DuckDB, two addresses share a hash: the rules in SQL, exact
        return rebalancing_sql.share(lazy.to_native(), window_ns, chosen, table)
    burned, domains = facts.burned, facts.domains
    d, r = len(domains), len(chosen) + 1
    route = (facts.src.astype(np.int64) * d + facts.dst)[burned]
    raw = frame["amount_raw"].to_numpy(dtype="int64")[burned]
    # one pass of exact sums per (route, rule or none): every total below is a sum of them
    cell = route * r + (rule[burned].astype(np.int64) + 1)
    sums = np.zeros(d * d * r, dtype="int64")
    np.add.at(sums, cell, raw)
    counts = np.bincount(cell, minlength=d * d * r)
    stamps = facts.stamps[burned]
    span = (None, None)
    if len(stamps):
        span = tuple(pd.Timestamp(int(f(stamps)), unit="ns", tz="UTC") for f in (np.min, np.max))
    return rebalancing_sql.share_frame(
        domains, sums.reshape(d * d, r), counts.reshape(d * d, r), chosen, span
    )


def _continued(frame: pd.DataFrame, window: int, table: Any) -> tuple[np.ndarray, np.ndarray]:
    """Positions of continuing legs and of the legs they continue."""
    minted = frame["mint_timestamp"].notna().to_numpy()
    eligible = minted & round_trips.wrapped_of(frame)
    if table is not None:
        _, kind = table.resolve(frame["mint_recipient"], labels_.chains_of(frame, "mint_recipient"))
        eligible |= minted & (kind == "integrator")
    recipient = round_trips.arrow(frame, "mint_recipient")
    sender = round_trips.arrow(frame, "message_sender")
    eligible &= ~round_trips.true(pc.equal(sender, recipient))  # its own money: rule 5
    eligible &= round_trips.true(pc.is_valid(recipient))
    if not eligible.any():
        return np.zeros(0, dtype="int64"), np.zeros(0, dtype="int64")
    # Arrow all the way: no Python string per row
    forwarders = pc.unique(recipient.filter(pa.array(eligible)))
    candidate = round_trips.true(pc.is_in(sender, forwarders)) & _ledger.burn_known(frame)
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
    ids = round_trips.arrow(frame, "transfer_id")
    # ties by transfer_id, as in SQL (:mod:`.continuations_sql`): of mints at one time the
    # greater id is the latest (merge_asof takes the last), of burns the smaller is first
    right = pd.DataFrame({"t": mint_t[first], "id": ids.take(first), "i": first})
    right["key"] = a_code * scale + dst[first]
    left = pd.DataFrame({"t": burn_t[then], "id": ids.take(then), "j": then})
    left["key"] = b_code * scale + src[then]
    hit = pd.merge_asof(
        left.sort_values(["t", "id"], kind="stable").drop(columns="id"),
        right.sort_values(["t", "id"], kind="stable").drop(columns="id"),
        on="t",
        by="key",
        direction="backward",
        tolerance=window,
    )
    hit = hit.dropna(subset=["i"])
    i, j = hit["i"].to_numpy(dtype="int64"), hit["j"].to_numpy(dtype="int64")
    keep = (i != j) & (frame["amount_raw"].to_numpy(dtype="int64")[j] <= delivered[i])
    # in (burn time, id) order already: the first burn per mint
    pairs = pd.DataFrame({"i": i[keep], "j": j[keep]}).drop_duplicates(subset="i", keep="first")
    return pairs["j"].to_numpy(dtype="int64"), pairs["i"].to_numpy(dtype="int64")


def _is_duckdb(ledger: Any) -> bool:
    """Whether ``ledger`` is a DuckDB relation (whose rules can run in SQL)."""
    if not actors_lazy.reduces(ledger):
        return False
    return nw.from_native(ledger).implementation is nw.Implementation.DUCKDB


def continuations(ledger: Any, *, window: Any = "1h", labels: Any = True) -> pd.DataFrame:
    """The transfers that continue an earlier one (the module's rule), with the one they continue.

    Returns
    -------
    pandas.DataFrame
        ``transfer_id``, ``continues`` (the earlier transfer's id), ``via``
        (the forwarding address), ``amount_raw``.
    """
    window_ns = _window_ns(window)
    what = "movements.continuations"
    if _is_duckdb(ledger):
        lazy = actor_inputs.ledger_lazy(ledger, _COLUMNS, what=what)
        table = actor_inputs.labels_of(labels)
        out = continuations_sql.continuation_pairs(lazy.to_native(), window_ns, table)
        return results.describe(out, span=engines.span(lazy, "burn_timestamp"))
    frame = actor_inputs.ledger_columns(ledger, _COLUMNS, what=what)
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


def dedupe(ledger: Any, *, window: Any = "1h", labels: Any = True) -> Any:
    """``ledger`` without the transfers that continue an earlier one: each movement once.

    Parameters
    ----------
    ledger : DataFrame (pandas, Polars, DuckDB, Dask)
        A canonical ledger.
    window : str or Timedelta, default "1h"
        The longest time from a leg's mint to the burn that forwards it.
    labels : bool, path or DataFrame, default True
        Which addresses are integrators' forwarding contracts.

    Returns
    -------
    pandas.DataFrame, or the engine's lazy frame
        A subset of ``ledger``'s rows, in order (never more rows, never more volume).
        For pandas: when no transfer continues another, a shallow copy of
        ``ledger`` (no column copied; copy-on-write keeps ``ledger`` as it is).
        For Polars, DuckDB or Dask: the engine's lazy frame (``LazyFrame``,
        relation, Dask DataFrame); on DuckDB the rule runs in SQL too.

    Raises
    ------
    TypeError
        For anything that is not a frame of one of those engines.

    Examples
    --------
    >>> import cctx_research as cctx
    >>> ledger = cctx.load_sample(as_of="2024-07-01", days=1)
    >>> import duckdb
    >>> kept = dedupe(duckdb.from_df(ledger))
    >>> kept.aggregate("count(*)").fetchall()[0][0] == len(dedupe(ledger))
    True
    """
    if not isinstance(ledger, pd.DataFrame):
        if not engines.recognised(ledger):
            raise TypeError(
                "dedupe() takes a ledger (pandas, Polars, DuckDB or Dask), "
                f"got {type(ledger).__name__}"
            )
        lf = engines.lazy(ledger, "ledger", columns=["transfer_id"])
        if _is_duckdb(ledger):  # the rule and the filter in SQL: a relation, nothing run
            rule = actor_inputs.ledger_lazy(ledger, _COLUMNS, what="movements.dedupe")
            table = actor_inputs.labels_of(labels)
            native = lf.to_native()
            return continuations_sql.kept(native, rule.to_native(), _window_ns(window), table)
        later = continuations(ledger, window=window, labels=labels)["transfer_id"]
        if len(later):
            lf = lf.filter(~nw.col("transfer_id").is_in(later.tolist()))
        return lf.to_native()
    window_ns = _window_ns(window)
    frame = actor_inputs.ledger_columns(ledger, _COLUMNS, what="movements.dedupe")
    later, _ = _continued(frame, window_ns, actor_inputs.labels_of(labels))
    if not len(later):
        return ledger.copy(deep=False)
    keep = np.ones(len(ledger), dtype=bool)
    keep[later] = False
    return ledger.iloc[np.flatnonzero(keep)]
