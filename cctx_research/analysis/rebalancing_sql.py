"""The rebalancing rules of :mod:`.movements` in DuckDB SQL: only the routes' sums come back.

:func:`.movements.rebalancing_share` on a DuckDB relation runs here when its
addresses cannot cross as exact hashes (see below): the labels are resolved
on the distinct (depositor, chain) pairs the engine returns, then one query
flags every burned row with the first rule that caught it and sums per
(route, rule). No row crosses into Python.

The round-trip rule is written as window aggregates over each (end user,
pair of chains), ordered by burn time, with the tie order every engine
shares (legs at one burn time ordered by ``transfer_id``, byte order; see
:func:`.round_trip_legs.round_trips`, the rule on numpy, which the tests hold
equal to this one row for row). A leg ``j`` *closes* the latest leg ``i``
the other way strictly before its time when it is the first leg ``j``'s
way after ``i`` (no leg ``j``'s way between them, none at ``j``'s time
with a smaller id) and ``j`` burns within the window of ``i``. Seen from
``i``: the first leg the other way after ``i``'s time closes it when no
leg ``i``'s way comes between (none later than ``i`` before it, none at
``i``'s time with a greater id). Both are one sort of each group and
running minima and maxima over time frames: no self-join.

Two implementations of the rule stay (this and the numpy one of
:mod:`.round_trips`), and the numpy one is the default on DuckDB too: with the
addresses crossing as integer hashes (checked exact on a second thread while
the legs are sorted), a sort in numpy is faster than DuckDB's windows over
millions of small groups (at 4M transfers, 0.9-1.3x the group-by a
researcher writes against 3.2-4.0x here; ``benchmarks/README.md``, figure
12). This one runs when the hashes are not
exact (two addresses share one), where the numpy path would collect every
row's strings, and it is the form an out-of-core ledger can use: no row
leaves the engine. ``tests/analysis/test_rebalancing_sql.py`` holds the two
equal, ties, self-sends and empty ledgers included.

Examples
--------
>>> "RANGE BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING" in round_trip_flags("legs", 60)
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .. import chains, schema
from .._codes import unique_ints
from . import _ledger, actors, results

__all__ = [
    "BURNED",
    "WRAPPED",
    "quoted",
    "resolved",
    "round_trip_flags",
    "route_rule_sums",
    "share",
    "share_frame",
    "values",
]

BURNED = (  # the burn is known (as :func:`._ledger.burn_known`)
    "coalesce(burn_timestamp IS NOT NULL AND NOT (burn_tx_hash IS NULL AND burn_block = -1), false)"
)
WRAPPED = (  # the receiver acts on the mint (as :func:`.round_trips.wrapped_of`)
    "(coalesce(length(hook_data) > 2, false)"
    " OR coalesce(destination_caller = mint_recipient, false))"
)
_OPERATORS = ("integrator", "relayer", "exchange")
_NAME = "__rebalancing_ledger"  # not a name a connection is likely to hold already


def quoted(value: Any) -> str:
    """``value`` as an SQL string literal."""
    return "'" + str(value).replace("'", "''") + "'"


def values(rows: Sequence[tuple], names: str, types: Sequence[str]) -> str:
    """A small table as SQL ``VALUES`` (the relation's connection is not ours to register on)."""
    if not rows:
        nulls = ", ".join(f"CAST(NULL AS {t})" for t in types)
        return f"(SELECT {nulls} WHERE false) AS {names}"
    body = ", ".join(
        "("
        + ", ".join(
            quoted(v) if t == "VARCHAR" else str(int(v)) for v, t in zip(row, types, strict=True)
        )
        + ")"
        for row in rows
    )
    return f"(VALUES {body}) AS {names}"


def resolved(table: Any, found: Any) -> list[tuple]:
    """(address, domain, label, kind) of the labelled pairs among ``found`` (address, domain)."""
    if not found.num_rows:
        return []
    addresses = pd.Series(pd.array(found.column(0).combine_chunks(), dtype=schema.STRING))
    domains, codes = unique_ints(found.column(1).to_numpy().astype(np.int64))
    names = np.array([_chain_name(d) for d in domains.tolist()], dtype=object)
    label, kind = table.resolve(addresses, names[codes.ravel()])
    hit = np.flatnonzero(np.not_equal(kind, None))
    at = domains[codes.ravel()[hit]]
    return [
        (addresses.iloc[k], int(d), str(label[k]), str(kind[k]))
        for k, d in zip(hit.tolist(), at.tolist(), strict=True)
    ]


def _chain_name(domain: int) -> Any:
    try:
        return chains.chain_name(domain)
    except (TypeError, ValueError):
        return None


def _labelled(rel: Any, table: Any, rules: Sequence[str]) -> tuple[list[tuple], list[tuple]]:
    """The labelled depositors (address, domain, label, kind), and the labelled operators'
    recipients of rows whose depositor is a labelled operator (only for ``same_entity``)."""
    pairs = rel.query(
        _NAME,
        f"SELECT message_sender, source_domain FROM {_NAME}"
        " WHERE message_sender IS NOT NULL GROUP BY ALL",
    ).to_arrow_table()
    senders = resolved(table, pairs)
    operators = [row for row in senders if row[3] in _OPERATORS]
    if not operators or "same_entity" not in rules:
        return senders, []
    ops = values([row[:2] for row in operators], "ops(a, d)", ("VARCHAR", "BIGINT"))
    found = rel.query(
        _NAME,
        f"SELECT mint_recipient, destination_domain FROM {_NAME} JOIN {ops}"
        " ON message_sender = ops.a AND source_domain = ops.d"
        " WHERE mint_recipient IS NOT NULL GROUP BY ALL",
    ).to_arrow_table()
    return senders, [row for row in resolved(table, found) if row[3] in _OPERATORS]


def round_trip_flags(legs: str, window: int) -> str:
    """SQL flagging the round trips' legs of the relation named ``legs``.

    ``legs`` has ``k`` (a row key), ``u`` (end user), ``lo``/``hi`` (the pair
    of chains), ``fwd`` (which way), ``t`` (burn time, ns) and ``id``
    (``transfer_id``); the result is ``k`` of every leg of a round trip
    within ``window`` nanoseconds.
    """
    w = "PARTITION BY u, lo, hi ORDER BY t"  # the string: exact where hashes collide
    before = f"({w} RANGE BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)"
    after = f"({w} RANGE BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING)"
    peers = f"({w} RANGE BETWEEN CURRENT ROW AND CURRENT ROW)"
    return f"""
SELECT k FROM (
  SELECT k, fwd, t, id,
    max(CASE WHEN fwd THEN t END) OVER {before} AS f_before,
    max(CASE WHEN NOT fwd THEN t END) OVER {before} AS b_before,
    min(CASE WHEN fwd THEN t END) OVER {after} AS f_after,
    min(CASE WHEN NOT fwd THEN t END) OVER {after} AS b_after,
    min(CASE WHEN fwd THEN id END) OVER {peers} AS f_first,
    min(CASE WHEN NOT fwd THEN id END) OVER {peers} AS b_first,
    max(CASE WHEN fwd THEN id END) OVER {peers} AS f_last,
    max(CASE WHEN NOT fwd THEN id END) OVER {peers} AS b_last
  FROM {legs}
) AS w
WHERE (
    -- closes: the latest leg the other way before it, and it is the first its way since
    CASE WHEN fwd THEN b_before ELSE f_before END IS NOT NULL
    AND t - CASE WHEN fwd THEN b_before ELSE f_before END <= {int(window)}
    AND coalesce(CASE WHEN fwd THEN f_before ELSE b_before END
                 <= CASE WHEN fwd THEN b_before ELSE f_before END, true)
    AND id = CASE WHEN fwd THEN f_first ELSE b_first END
  ) OR (
    -- is closed: the first leg the other way after it, with no leg its way between
    CASE WHEN fwd THEN b_after ELSE f_after END IS NOT NULL
    AND CASE WHEN fwd THEN b_after ELSE f_after END - t <= {int(window)}
    AND coalesce(CASE WHEN fwd THEN f_after ELSE b_after END
                 >= CASE WHEN fwd THEN b_after ELSE f_after END, true)
    AND id = CASE WHEN fwd THEN f_last ELSE b_last END
  )
"""


def _rule_case(rules: Sequence[str]) -> str:
    tests = {
        "same_address": "same AND operator AND NOT wrapped",
        "same_entity": "NOT same AND entity AND NOT wrapped",
        "self_transfer": "same AND NOT wrapped",
        "round_trip": "k IN (SELECT k FROM trips)",
    }
    whens = " ".join(f"WHEN {tests[name]} THEN {n}" for n, name in enumerate(rules))
    return f"CASE {whens} ELSE -1 END"


def route_rule_sums(
    rel: Any, window: int, rules: Sequence[str], table: Any
) -> tuple[pd.DataFrame, tuple[Any, Any]]:
    """Per (``source_domain``, ``destination_domain``, ``rule``: its index in ``rules``, -1
    for none) of a DuckDB ledger's burned rows: ``n`` and exact ``raw`` sums; and the span
    of the burns (first, last; None, None when none is burned).

    ``table``: the labels (None: none).
    """
    senders, recipients = _labelled(rel, table, rules) if table is not None else ([], [])
    types = ("VARCHAR", "BIGINT", "VARCHAR", "VARCHAR")
    s_labels = values(senders, "sl(a, d, label, kind)", types)
    r_labels = values(recipients, "rl(a, d, label, kind)", types)
    operators = ", ".join(quoted(k) for k in _OPERATORS)
    user = "coalesce(burn_tx_from, message_sender)"
    trips = f"trips AS ({round_trip_flags('legs', window)})," if "round_trip" in rules else ""
    sql = f"""
WITH base AS (
  SELECT row_number() OVER () AS k, source_domain, destination_domain, amount_raw,
    epoch_ns(burn_timestamp) AS t, transfer_id AS id, {user} AS u,
    least(source_domain, destination_domain) AS lo,
    greatest(source_domain, destination_domain) AS hi,
    source_domain < destination_domain AS fwd,
    coalesce(message_sender = mint_recipient, false) AS same,
    {WRAPPED} AS wrapped,
    coalesce(sl.kind IN ({operators}), false) AS operator,
    coalesce(sl.kind = 'integrator', false) AS integrator,
    coalesce(sl.kind IN ({operators}) AND rl.label = sl.label, false) AS entity,
    burn_tx_from IS NOT NULL AS signed
  FROM {_NAME}
  LEFT JOIN {s_labels} ON message_sender = sl.a AND source_domain = sl.d
  LEFT JOIN {r_labels} ON mint_recipient = rl.a AND destination_domain = rl.d
  WHERE {BURNED}
),
legs AS (
  SELECT k, u, lo, hi, fwd, t, id FROM base
  WHERE u IS NOT NULL AND lo <> hi AND NOT (integrator AND NOT signed)
),
{trips}
flagged AS (SELECT source_domain, destination_domain, amount_raw, t,
  {_rule_case(rules)} AS rule FROM base)
SELECT source_domain, destination_domain, rule, count(*) AS n,
  CAST(sum(amount_raw) AS BIGINT) AS raw, min(t) AS first, max(t) AS last
FROM flagged GROUP BY ALL
"""
    out = rel.query(_NAME, sql).df()
    span: tuple[Any, Any] = (None, None)
    if len(out):
        span = tuple(
            pd.Timestamp(int(v), unit="ns", tz="UTC")
            for v in (out["first"].min(), out["last"].max())
        )
    return out.drop(columns=["first", "last"]), span


def share(rel: Any, window: int, chosen: tuple[str, ...], table: Any) -> pd.DataFrame:
    """:func:`rebalancing_share` of a DuckDB relation, its rules run in SQL
    (:mod:`.rebalancing_sql`): only the per-(route, rule) sums come back."""
    cells, span = route_rule_sums(rel, window, chosen, table)
    src = cells["source_domain"].to_numpy(dtype="int64")
    dst = cells["destination_domain"].to_numpy(dtype="int64")
    domains = sorted(set(src.tolist()) | set(dst.tolist()))
    d, r = len(domains), len(chosen) + 1
    code = {v: k for k, v in enumerate(domains)}
    cell = np.array(
        [code[a] * d + code[b] for a, b in zip(src.tolist(), dst.tolist(), strict=True)], "int64"
    )
    cell = cell * r + cells["rule"].to_numpy(dtype="int64") + 1
    sums = np.zeros(d * d * r, dtype="int64")
    counts = np.zeros(d * d * r, dtype="int64")
    np.add.at(sums, cell, cells["raw"].to_numpy(dtype="int64"))
    np.add.at(counts, cell, cells["n"].to_numpy(dtype="int64"))
    return share_frame(domains, sums.reshape(d * d, r), counts.reshape(d * d, r), chosen, span)


def share_frame(
    domains: list[int], sums: np.ndarray, counts: np.ndarray, chosen: tuple[str, ...], span: Any
) -> pd.DataFrame:
    """The table of :func:`rebalancing_share` from exact sums and counts per (route, rule or
    none): ``route = source code * len(domains) + destination code``, column 0 no rule."""
    d = len(domains)
    count = counts.sum(axis=1)
    present = np.flatnonzero(count)
    names = np.asarray(domains, dtype="int64")
    out = pd.DataFrame(
        {
            "source_chain": actors._chain_categorical(names[present // d]),
            "destination_chain": actors._chain_categorical(names[present % d]),
            "count": count[present].astype("int64"),
            "volume": _ledger.amount(sums.sum(axis=1)[present]),
            "rebalancing_count": counts[:, 1:].sum(axis=1)[present].astype("int64"),
            "rebalancing_volume": _ledger.amount(sums[:, 1:].sum(axis=1)[present]),
            **{
                f"{name}_volume": _ledger.amount(sums[present, k + 1])
                for k, name in enumerate(chosen)
            },
        }
    )
    out.insert(6, "count_share", out["rebalancing_count"] / out["count"].where(out["count"] > 0))
    out.insert(
        7, "volume_share", out["rebalancing_volume"] / out["volume"].where(out["volume"] > 0)
    )
    return results.describe(
        _ledger.sort_groups(out, list(_ledger.ROUTE)), span=span, by=_ledger.ROUTE
    )
