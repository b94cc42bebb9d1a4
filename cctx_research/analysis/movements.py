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
    One address (the depositor) burns A -> B and then B -> A within
    ``window`` of the first burn; both legs are flagged, each pointing at
    the other (``counterpart``). One return leg closes one trip (the
    nearest outbound leg before it).
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

import numpy as np
import pandas as pd

from .. import labels as labels_
from .. import schema
from . import _ledger, actors, results

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


def _wrapped(frame: pd.DataFrame) -> np.ndarray:
    # ledger addresses are canonical (lowercase, 20-byte EVM): compared as they are
    hook = frame["hook_data"].astype(schema.STRING)
    has_hook = (hook.str.len() > 2).to_numpy(dtype=bool, na_value=False)
    caller = frame["destination_caller"].astype(schema.STRING)
    recipient = frame["mint_recipient"].astype(schema.STRING)
    self_relay = (caller == recipient).to_numpy(dtype=bool, na_value=False)
    return has_hook | self_relay


def _codes(values: pd.Series) -> np.ndarray:
    return pd.factorize(values, use_na_sentinel=True)[0]


def _round_trips(frame: pd.DataFrame, window: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions of outbound legs and of the return legs that close them."""
    sender = _codes(frame["message_sender"])
    src, dst, domains = actors._route_codes(frame)
    d = len(domains)
    stamps = frame["burn_timestamp"].to_numpy(dtype="datetime64[ns]").view("int64")
    ok = (sender >= 0) & (src != dst) & _ledger.burn_known(frame)
    pos = np.flatnonzero(ok)
    base = sender[pos].astype("int64") * d * d
    order = np.argsort(stamps[pos], kind="stable")
    pos, base = pos[order], base[order]
    t = stamps[pos]
    outbound = pd.DataFrame({"t": t, "key": base + src[pos] * d + dst[pos], "i": pos})
    inbound = pd.DataFrame({"t": t, "key": base + dst[pos] * d + src[pos], "j": pos})
    # for each return leg, the nearest outbound leg before it on the reverse route
    hit = pd.merge_asof(
        inbound,
        outbound,
        on="t",
        by="key",
        direction="backward",
        tolerance=window,
        allow_exact_matches=False,
    )
    hit = hit.dropna(subset=["i"])
    hit = hit.drop_duplicates(subset="i", keep="first")
    return hit["i"].to_numpy(dtype="int64"), hit["j"].to_numpy(dtype="int64")


def _flags(frame: pd.DataFrame, window: int, rules: tuple[str, ...], table: Any) -> tuple:
    """Per row: the index in ``rules`` of the first rule that caught it (-1: none), and the
    position of the round trip's other leg (-1: none)."""
    n = len(frame)
    rule = np.full(n, -1, dtype="int8")
    counterpart = np.full(n, -1, dtype="int64")
    sender = frame["message_sender"].astype(schema.STRING)
    recipient = frame["mint_recipient"].astype(schema.STRING)
    same = (sender == recipient).to_numpy(dtype=bool, na_value=False)
    plain = ~_wrapped(frame)
    s_label = r_label = np.full(n, None, dtype=object)
    operator = r_operator = np.zeros(n, dtype=bool)
    if table is not None and ({"same_address", "same_entity"} & set(rules)):
        s_label, s_kind = table.resolve(sender, labels_.chains_of(frame, "message_sender"))
        r_label, r_kind = table.resolve(recipient, labels_.chains_of(frame, "mint_recipient"))
        operator = pd.Series(s_kind).isin(list(OPERATOR_KINDS)).to_numpy()
        r_operator = pd.Series(r_kind).isin(list(OPERATOR_KINDS)).to_numpy()
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
            out_i, back_j = _round_trips(frame, window)
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
        The labels the address rules read (``False``: none, so only
        round trips and self transfers can match).

    Returns
    -------
    pandas.DataFrame
        ``transfer_id``, ``source_chain``, ``destination_chain``,
        ``burn_timestamp``, ``amount``, ``amount_raw``, ``message_sender``,
        ``mint_recipient``, ``rule`` and ``counterpart`` (the other leg's
        ``transfer_id`` for round trips). In burn order.

    Examples
    --------
    >>> from cctx_research import schema
    >>> list(rebalancing(schema.empty("ledger"))["rule"])
    []
    """
    window_ns, chosen = _window_ns(window), _rules(rules)
    frame = actors.ledger_columns(ledger, _COLUMNS, what="movements.rebalancing")
    rule, counterpart = _flags(frame, window_ns, chosen, actors._labels_of(labels))
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
    """
    window_ns, chosen = _window_ns(window), _rules(rules)
    frame = actors.ledger_columns(ledger, _COLUMNS, what="movements.rebalancing_share")
    frame = frame.loc[_ledger.burn_known(frame)]
    rule, _ = _flags(frame, window_ns, chosen, actors._labels_of(labels))
    amount = _ledger.amount(frame["amount_raw"])
    table = pd.DataFrame(_ledger.routes(frame))
    table["amount"] = amount
    flagged = rule >= 0
    table["rebalancing"] = np.where(flagged, amount, 0.0)
    table["flagged"] = flagged.astype("int64")
    for k, name in enumerate(chosen):
        table[f"{name}_volume"] = np.where(rule == k, amount, 0.0)
    grouped = table.groupby(list(_ledger.ROUTE), observed=True, sort=True)
    out = grouped.agg(
        count=("amount", "size"),
        volume=("amount", "sum"),
        rebalancing_count=("flagged", "sum"),
        rebalancing_volume=("rebalancing", "sum"),
        **{f"{r}_volume": (f"{r}_volume", "sum") for r in chosen},
    ).reset_index()
    out["count"] = out["count"].astype("int64")
    out["rebalancing_count"] = out["rebalancing_count"].astype("int64")
    out.insert(6, "count_share", out["rebalancing_count"] / out["count"].where(out["count"] > 0))
    out.insert(
        7, "volume_share", out["rebalancing_volume"] / out["volume"].where(out["volume"] > 0)
    )
    return results.describe(
        _ledger.sort_groups(out, list(_ledger.ROUTE)), span=_ledger.span(frame), by=_ledger.ROUTE
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
    recipient = frame["mint_recipient"].astype(schema.STRING)
    sender = frame["message_sender"].astype(schema.STRING)
    forwarders = pd.unique(recipient.to_numpy()[eligible])
    candidate = sender.isin(forwarders).to_numpy(dtype=bool, na_value=False)
    candidate = candidate & _ledger.burn_known(frame)
    if not candidate.any():
        return np.zeros(0, dtype="int64"), np.zeros(0, dtype="int64")
    first, then = np.flatnonzero(eligible), np.flatnonzero(candidate)
    codes, _ = pd.factorize(np.concatenate([recipient.to_numpy()[first], sender.to_numpy()[then]]))
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
    frame = actors.ledger_columns(ledger, _COLUMNS, what="movements.continuations")
    later, earlier = _continued(frame, window_ns, actors._labels_of(labels))
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
    frame = actors.ledger_columns(ledger, _COLUMNS, what="movements.dedupe")
    later, _ = _continued(frame, window_ns, actors._labels_of(labels))
    keep = np.ones(len(ledger), dtype=bool)
    keep[later] = False
    return ledger.iloc[np.flatnonzero(keep)]
