"""The continuation rule of :mod:`.movements` in DuckDB SQL: only the pairs come back.

:func:`.movements.continuations` (and so :func:`.movements.dedupe`) on a
DuckDB relation runs here: one as-of join of the burns from forwarding
addresses to the latest eligible mint to that address on that chain, then
the first burn per mint. The tie order is the one the pandas rule
(``movements._continued``) uses, so the two agree row for row: of mints
at one time the greater ``transfer_id`` is the latest; of burns at one time
the smaller comes first. Labelled integrators are found by a membership
test of the labels' addresses in the engine (the ledger's addresses are
canonical, as the labels' are: compared as they are), then resolved
exactly, on their chain, on the few distinct (address, chain) pairs that
pass it. :func:`.movements.dedupe` is one query of the ledger anti-joined
to the continuing legs, each read of the ledger a scan of its own
(:func:`source`): about the time of the group-by a researcher writes
(``benchmarks/README.md``, figure 12).

Two forms stay because a pandas ledger has no engine to run SQL in without
a copy of it; ``tests/analysis/test_dedupe_engines.py`` holds them equal.

Examples
--------
>>> "ASOF JOIN" in pairs_sql("ledger", 60, "false")
True
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .. import schema
from . import rebalancing_sql

__all__ = ["continuation_pairs", "kept", "pairs_sql", "source"]

_NAME = "__continuations_ledger"  # not a name a connection is likely to hold already
_KEPT = "__kept"


def _integrators(rel: Any, table: Any) -> list[tuple]:
    """(address, domain) of the recipients that are labelled integrators on their chain.

    The ledger's addresses are canonical (:mod:`cctx_research.schema`: lowercase
    ``0x`` + 40 hex on EVM chains, each chain's own spelling elsewhere), as the
    labels' are: an exact membership test of the column, no ``lower()`` of every row.
    """
    if table is None:
        return []
    known = sorted(set(table.addresses()))
    if not known:
        return []
    full = ", ".join(rebalancing_sql.quoted(a) for a in known)
    found = rel.query(
        _NAME,
        f"SELECT mint_recipient, destination_domain FROM {source(rel, _NAME)}"
        f" WHERE mint_timestamp IS NOT NULL AND mint_recipient IN ({full})"
        " GROUP BY ALL",
    ).to_arrow_table()
    return [row[:2] for row in rebalancing_sql.resolved(table, found) if row[3] == "integrator"]


def source(rel: Any, name: str) -> str:
    """What SQL run by ``rel.query(name, ...)`` reads ``rel`` as: its own query as a subquery,
    so that each reference is a scan of its own, with only the columns it reads; else
    ``name``.

    A query naming ``name`` twice (the mints and the burns) makes DuckDB share one
    scan of every column between the two (a CTE), several times slower than two
    scans of the few columns each reads. The subquery is checked once (bound, no row
    read) and ``name`` stands in where the relation has no SQL of its own.
    """
    import duckdb  # the relation is DuckDB's: the module is there

    try:
        inline = f"({rel.sql_query()})"
        rel.query(name, f"SELECT * FROM {inline} LIMIT 0").fetchall()
    except duckdb.Error:
        return name
    return inline


def pairs_sql(name: str, window: int, integrators: str) -> str:
    """SQL of the continuations of the relation ``name``: ``transfer_id`` (the later leg),
    ``continues``, ``via``, ``amount_raw``, in the order of the later legs' burns.
    ``integrators``: an SQL condition on a row's ``mint_recipient`` and
    ``destination_domain``, true where the recipient is a labelled integrator."""
    wrapped, burned = rebalancing_sql.WRAPPED, rebalancing_sql.BURNED
    return f"""
WITH mints AS (
  SELECT transfer_id AS id, mint_recipient AS a, destination_domain AS c,
    epoch_ns(mint_timestamp) AS t, amount_raw - coalesce(fee_raw, 0) AS delivered
  FROM {name}
  WHERE mint_timestamp IS NOT NULL AND mint_recipient IS NOT NULL
    AND ({wrapped} OR {integrators})
    AND NOT coalesce(message_sender = mint_recipient, false)
),
latest AS (  -- of mints at one time to one address, the greatest id is the latest
  SELECT a, c, t, max(id) AS id, arg_max(delivered, id) AS delivered FROM mints GROUP BY a, c, t
),
burns AS (
  SELECT transfer_id AS id, message_sender AS a, source_domain AS c,
    epoch_ns(burn_timestamp) AS t, amount_raw
  FROM {name}
  WHERE {burned} AND message_sender IN (SELECT a FROM latest)
),
hit AS (
  SELECT burns.id AS j, latest.id AS i, burns.a AS via, burns.amount_raw, burns.t,
    burns.t - latest.t AS gap, latest.delivered
  FROM burns ASOF JOIN latest
    ON burns.a = latest.a AND burns.c = latest.c AND burns.t >= latest.t
)
SELECT j AS transfer_id, i AS continues, via, amount_raw, t FROM hit
WHERE gap <= {int(window)} AND i <> j AND amount_raw <= delivered
QUALIFY row_number() OVER (PARTITION BY i ORDER BY t, j) = 1
ORDER BY t, j
"""


def _condition(rows: list[tuple]) -> str:
    """SQL true where (``mint_recipient``, ``destination_domain``) is one of ``rows``."""
    if not rows:
        return "false"
    addresses = ", ".join(sorted({rebalancing_sql.quoted(a) for a, _ in rows}))
    pairs = ", ".join(sorted({rebalancing_sql.quoted(f"{a}:{int(d)}") for a, d in rows}))
    # the address test first: the pair's string is made only for the few rows that pass it
    return (
        f"(mint_recipient IN ({addresses})"
        f" AND mint_recipient || ':' || destination_domain::VARCHAR IN ({pairs}))"
    )


def _pairs(rel: Any, window: int, table: Any) -> Any:
    """The relation of :func:`pairs_sql` over ``rel`` (only the labels are asked now)."""
    condition = _condition(_integrators(rel, table))
    return rel.query(_NAME, pairs_sql(source(rel, _NAME), window, condition))


def kept(ledger: Any, rel: Any, window: int, table: Any) -> Any:
    """The relation of ``ledger``'s rows that continue no earlier one (nothing run yet but
    the labels' query): ``rel`` is ``ledger`` with the columns the rule reads.

    One query: the ledger anti-joined to the continuing legs' ids (a small table), each
    of its three reads a scan of its own (see :func:`source`)."""
    outer, inner = source(ledger, _KEPT), source(rel, _NAME)
    if outer == _KEPT or inner == _NAME:  # no SQL of their own: two relations joined
        later = _pairs(rel, window, table).project("transfer_id AS __later")
        return ledger.set_alias(_KEPT).join(
            later.set_alias("__later"), "transfer_id = __later", how="anti"
        )
    pairs = pairs_sql(inner, window, _condition(_integrators(rel, table)))
    return ledger.query(
        _KEPT,
        f"SELECT {_KEPT}.* FROM {outer} AS {_KEPT}"
        f" ANTI JOIN (SELECT transfer_id AS __later FROM ({pairs})) AS __p"
        f" ON {_KEPT}.transfer_id = __p.__later",
    )


def continuation_pairs(rel: Any, window: int, table: Any) -> pd.DataFrame:
    """:func:`.movements.continuations`' columns for a DuckDB ledger ``rel`` (with the
    columns the rule reads); ``table``: the labels (None: none)."""
    got = _pairs(rel, window, table).to_arrow_table()
    out = pd.DataFrame(
        {
            col: pd.array(got[col].combine_chunks(), dtype=schema.STRING)
            for col in ("transfer_id", "continues", "via")
        }
    )
    out["amount_raw"] = np.asarray(got["amount_raw"].to_numpy(), dtype="int64")
    return out
