"""The continuation rule of :mod:`.movements` in DuckDB SQL: only the pairs come back.

:func:`.movements.continuations` (and so :func:`.movements.dedupe`) on a
DuckDB relation runs here: one as-of join of the burns from forwarding
addresses to the latest eligible mint to that address on that chain, then
the first burn per mint. The tie order is the one the pandas rule
(``movements._continued``) uses, so the two agree row for row: of mints
at one time the greater ``transfer_id`` is the latest; of burns at one time
the smaller comes first. Labelled integrators are found by a membership
test of the labels' addresses in the engine (any case, bytes32-padded), then
resolved exactly, on their chain, on the few distinct (address, chain)
pairs that pass it.

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

__all__ = ["continuation_pairs", "kept", "pairs_sql"]

_NAME = "__continuations_ledger"  # not a name a connection is likely to hold already


def _integrators(rel: Any, table: Any) -> list[tuple]:
    """(address, domain) of the recipients that are labelled integrators on their chain."""
    if table is None:
        return []
    known = sorted({a.lower() for a in table.addresses()})
    if not known:
        return []
    full = ", ".join(rebalancing_sql.quoted(a) for a in known)
    tails = ", ".join(rebalancing_sql.quoted(a[2:]) for a in known if len(a) == 42) or "NULL"
    found = rel.query(
        _NAME,
        f"SELECT mint_recipient, destination_domain FROM {_NAME}"
        " WHERE mint_timestamp IS NOT NULL AND mint_recipient IS NOT NULL"
        f" AND (lower(mint_recipient) IN ({full})"
        f" OR (length(mint_recipient) = 66 AND substr(lower(mint_recipient), 27) IN ({tails})))"
        " GROUP BY ALL",
    ).to_arrow_table()
    return [row[:2] for row in rebalancing_sql.resolved(table, found) if row[3] == "integrator"]


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
    return rel.query(_NAME, pairs_sql(_NAME, window, _condition(_integrators(rel, table))))


def kept(ledger: Any, rel: Any, window: int, table: Any) -> Any:
    """The relation of ``ledger``'s rows that continue no earlier one (nothing run yet but
    the labels' query): ``rel`` is ``ledger`` with the columns the rule reads."""
    later = _pairs(rel, window, table).project("transfer_id AS __later").set_alias("__later")
    return ledger.set_alias("__kept").join(later, "transfer_id = __later", how="anti")


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
