"""Linking burns to mints in DuckDB SQL: the rules of :mod:`.linking`, out of core.

:func:`cctx_research.ingest.ledger.linking.link` links in memory with numpy;
this module states the same rules as one DuckDB query, which groups, joins and
sorts under DuckDB's ``memory_limit`` and spills what does not fit to
``temp_directory``. The query decides the links (which burn goes with which
arrival, how, in which group); the ledger's rows are then gathered from the
sides by :func:`~.rows.ledger_rows`, the numpy linker's own, so ids, tokens,
columns and order are built once for both. ``load(..., engine="duckdb")``
links here.

Why two implementations: the numpy linker serves in-memory frames and small
inputs with no optional dependency (DuckDB is the ``engines`` extra) and is
the reference; ``tests/ingest/ledger/test_sqllink.py`` holds this one equal
to it, row for row and column for column, on the fixtures, the scale
benchmark's quick dataset and generated sides full of identical transfers
and ties in time.

The rules, as :mod:`.linking` states them, each a step of the query:

1. each event once, then each nonce once (:func:`.linking.unique_sides`, shared);
2. ``exact`` (V1) / ``attested`` (V2): the nonce;
3. ``content``: a V2 burn without nonce and a free V2 arrival alone in their
   :data:`~.content.CONTENT_KEY` group, the burn not later than the mint;
4. ``content_ambiguous``: in a shared group, each mint in time order takes the
   earliest free burn not later than it. With ``B_j`` the burns up to the
   ``j``-th mint, the links so far are ``M_j = min(M_{j-1} + 1, B_j)``, that is
   ``min(j + 1, j + min_{i<=j}(B_i - i))``: two window functions;
5. the rest: ``pending`` (``unpaired`` when identical transfers are kept
   apart) and ``mint_only``.

Source-paired rows (Dune flows, XChainDataGen's cross-chain table) are not
handled here: a load that has them links with :mod:`.linking`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from .content import CONTENT_KEY
from .linking import AMBIGUOUS, pairing_counts, unique_sides
from .rows import ledger_rows

__all__ = ["SPILL_PREFIX", "connect", "link", "links_query"]

_MIN, _MAX = np.iinfo(np.int64).min, np.iinfo(np.int64).max
_SIDES = """
b AS MATERIALIZED (SELECT {narrow}, burn_ts FROM burns_in),
a AS MATERIALIZED (SELECT {narrow}, mint_ts FROM arrivals_in),
nl AS MATERIALIZED (SELECT b._p AS bp, a._p AS ap,
              CASE WHEN b.cctp_version = 2 THEN 1 ELSE 0 END AS pairing,
              NULL::BIGINT AS grp, 0 AS part
       FROM b JOIN a ON b.source_domain = a.source_domain AND b.nonce = a.nonce)"""

_CONTENT = """
cb AS (SELECT 0 AS side, _p, coalesce(burn_ts, {min}) AS t, {key} FROM b
       WHERE cctp_version = 2 AND nonce IS NULL),
ca AS (SELECT 1 AS side, _p, coalesce(mint_ts, {max}) AS t, {key} FROM a
       WHERE cctp_version = 2 AND _p NOT IN (SELECT ap FROM nl)),
cu AS (SELECT * FROM cb UNION ALL SELECT * FROM ca),
cn AS (SELECT {key}, sum(1 - side) AS nb, sum(side) AS na,
              min(side * 4611686018427387904 + _p) AS g
       FROM cu WHERE (SELECT count(*) FROM cb) > 0 AND (SELECT count(*) FROM ca) > 0
       GROUP BY {key}),
cg AS (SELECT cu.side, cu._p, cu.t, cn.nb, cn.na, cn.g FROM cu JOIN cn ON {same}),
cs AS MATERIALIZED (SELECT side, _p, t, g, greatest(nb, na) AS size,
              nb = 1 AND na = 1 AS single, nb >= 1 AND na >= 1 AS shared FROM cg),
one AS (SELECT x._p AS bp, y._p AS ap, 2 AS pairing, NULL::BIGINT AS grp, 1 AS part
        FROM cs x JOIN cs y ON x.g = y.g AND x.side = 0 AND y.side = 1
        WHERE x.single AND y.single AND x.t <= y.t),
fe AS (SELECT g, side, _p, t, size, sum(1 - side) OVER (PARTITION BY g ORDER BY t, side, _p
              ROWS UNBOUNDED PRECEDING) AS nbefore
       FROM cs WHERE shared AND NOT single AND {link_ambiguous}),
fm AS (SELECT g, _p, size, nbefore,
              row_number() OVER (PARTITION BY g ORDER BY t, _p) - 1 AS j FROM fe WHERE side = 1),
fmm AS (SELECT *, least(j + 1, j + min(nbefore - j) OVER (PARTITION BY g ORDER BY j
                   ROWS UNBOUNDED PRECEDING)) AS m FROM fm),
fl AS (SELECT g, _p AS ap, m, size FROM fmm
       QUALIFY m > coalesce(lag(m) OVER (PARTITION BY g ORDER BY j), 0)),
fb AS (SELECT g, _p AS bp, row_number() OVER (PARTITION BY g ORDER BY t, _p) AS r
       FROM fe WHERE side = 0),
amb AS (SELECT fb.bp, fl.ap, 3 AS pairing, fl.size AS grp, 1 AS part
        FROM fl JOIN fb ON fl.g = fb.g AND fb.r = fl.m),
linked AS MATERIALIZED (SELECT * FROM nl UNION ALL SELECT * FROM one UNION ALL SELECT * FROM amb),
gb AS (SELECT _p, CASE WHEN size > 1 THEN size END AS grp FROM cs WHERE side = 0),
ga AS (SELECT _p, CASE WHEN size > 1 THEN size END AS grp FROM cs WHERE side = 1),
rest AS (
  SELECT b._p AS bp, NULL::BIGINT AS ap,
         CASE WHEN gb.grp IS NOT NULL AND {keep} THEN 5 ELSE 4 END AS pairing,
         gb.grp, 2 AS part
  FROM b LEFT JOIN gb USING (_p) WHERE b._p NOT IN (SELECT bp FROM linked)
  UNION ALL
  SELECT NULL, a._p, 6, ga.grp, 3
  FROM a LEFT JOIN ga USING (_p) WHERE a._p NOT IN (SELECT ap FROM linked)),
pairs AS MATERIALIZED (SELECT * FROM linked UNION ALL SELECT * FROM rest)"""


_NAMES: tuple[str, ...] = ("exact", "attested", "content", "content_ambiguous", "pending",
                          "unpaired", "mint_only")  # fmt: skip
"""The pairings, by the code the query gives each."""


def links_query(*, ambiguous: str = "link") -> str:
    """The query over ``burns_in`` and ``arrivals_in`` (the sides' key columns, each row's
    place in ``_p``, times as nanoseconds in ``burn_ts`` / ``mint_ts``): one row a ledger
    row, its burn row ``bp`` and arrival row ``ap`` (null: that side is absent), its pairing
    (a code of :data:`_NAMES`) and ``link_group_size`` (``grp``), rule by rule.

    Examples
    --------
    >>> "ORDER BY part, bp, ap" in links_query()
    True
    """
    if ambiguous not in AMBIGUOUS:
        raise ValueError(f"ambiguous must be 'link' or 'keep', got {ambiguous!r}")
    content = _CONTENT.format(
        key=", ".join(CONTENT_KEY), min=_MIN, max=_MAX,
        same=" AND ".join(f"cu.{k} IS NOT DISTINCT FROM cn.{k}" for k in CONTENT_KEY),
        link_ambiguous="true" if ambiguous == "link" else "false",
        keep="true" if ambiguous == "keep" else "false",
    )  # fmt: skip
    # the sides' key columns alone: the links are decided on narrow rows, whatever the
    # side tables carry (the ledger's wide columns are gathered once, when its rows are read)
    sides = _SIDES.format(narrow=", ".join(dict.fromkeys(("_p", *_KEYS))))
    return f"WITH {sides},{content}\nSELECT bp, ap, pairing, grp FROM pairs ORDER BY part, bp, ap"


SPILL_PREFIX = "cctx-duckdb-spill-"
"""How the name of every load's and link's spill directory starts: one prefix for all of
them, so a load finds and removes those a killed process left
(:class:`~cctx_research.scratch.Scratch`)."""


def connect(*, memory_limit: str | None = None, temp_directory: str | None = None,
            threads: int | None = None,
            database: str | os.PathLike[str] | None = None) -> Any:  # fmt: skip
    """A DuckDB connection that spills joins and sorts to ``temp_directory`` past
    ``memory_limit`` (DuckDB's spellings: ``"2GB"``); DuckDB's defaults where not given.

    ``database``: a database file its tables are kept in (DuckDB compresses the blocks it
    writes there; an in-memory database spills its tables' blocks uncompressed). Default:
    in memory."""
    import duckdb

    if database is not None and (not isinstance(database, (str, os.PathLike)) or not str(database)):
        raise ValueError(f"database must be a file's path, got {database!r}")
    con = duckdb.connect(":memory:" if database is None else str(database))
    con.execute("SET enable_progress_bar = false")
    for name, value in (("memory_limit", memory_limit), ("temp_directory", temp_directory)):
        if value is not None:
            if not isinstance(value, str) or "'" in value:
                raise ValueError(f"{name} must be text such as '2GB' or a directory, got {value!r}")
            con.execute(f"SET {name} = '{value}'")
    if threads is not None:
        con.execute(f"SET threads = {int(threads)}")
    return con


_KEYS = ("source_domain", "destination_domain", "nonce", "cctp_version", *CONTENT_KEY)


def _side_table(frame: pd.DataFrame, time: str) -> pa.Table:
    """The key columns of a side as an Arrow table, its time ``time`` as nanoseconds
    (``burn_ts`` / ``mint_ts``), ``_p`` each row's place."""
    stamp = frame[time]
    nanos = stamp.array.asi8 if len(stamp) else np.zeros(0, np.int64)
    columns = {k: frame[k] for k in dict.fromkeys(_KEYS)}
    columns[time.replace("timestamp", "ts")] = pd.arrays.IntegerArray(
        nanos.copy(), stamp.isna().to_numpy()
    )
    columns["_p"] = np.arange(len(frame), dtype=np.int64)
    return pa.Table.from_pandas(pd.DataFrame(columns, copy=False), preserve_index=False)


def link(
    burns: Sequence[pd.DataFrame],
    arrivals: Sequence[pd.DataFrame],
    *,
    ambiguous: str = "link",
    connection: Any = None,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """The ledger of ``burns`` and ``arrivals``, linked in DuckDB; what was counted.

    The same result as :func:`cctx_research.ingest.ledger.linking.link` without source-paired
    rows. ``connection``: a DuckDB connection (:func:`connect`, to set its memory limit and
    spill directory); a new one by default.

    Examples
    --------
    >>> burn = pd.DataFrame({"source_domain": [0], "nonce": ["7"], "cctp_version": [1],
    ...     "burn_tx_hash": ["0x" + "a" * 64], "destination_domain": [6], "amount_raw": [5]})
    >>> mint = pd.DataFrame({"destination_domain": [6], "source_domain": [0], "nonce": ["7"],
    ...     "cctp_version": [1], "mint_tx_hash": ["0x" + "b" * 64]})
    >>> ledger, counts = link([burn], [mint])  # doctest: +SKIP
    >>> ledger[["transfer_id", "pairing", "amount_raw"]].values.tolist()  # doctest: +SKIP
    [['7_1_8453', 'exact', 5]]
    """
    query = links_query(ambiguous=ambiguous)
    b, a, duplicates = unique_sides(burns, arrivals)
    con = connection if connection is not None else connect()
    try:
        con.register("burns_in", _side_table(b, "burn_timestamp"))
        con.register("arrivals_in", _side_table(a, "mint_timestamp"))
        found = con.sql(query).to_arrow_table()
        con.unregister("burns_in")
        con.unregister("arrivals_in")
    finally:
        if connection is None:
            con.close()
    rows = [found.column(c).to_numpy(zero_copy_only=False) for c in ("bp", "ap")]
    bi, ai = (np.nan_to_num(r.astype("float64"), nan=-1).astype(np.int64) for r in rows)
    kinds = found.column("pairing").to_numpy().astype(np.int64)
    group = np.nan_to_num(found.column("grp").to_numpy(zero_copy_only=False).astype("float64"),
                          nan=0).astype(np.int64)  # fmt: skip
    del found
    ledger = ledger_rows(b, a, bi, ai, (kinds, _NAMES), group, sort=True)
    counts = pairing_counts(ledger)
    counts["duplicates"] = duplicates
    return ledger, counts

