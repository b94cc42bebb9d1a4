"""Linking burns to mints in DuckDB SQL: the rules of :mod:`.linking`, out of core.

:func:`cctx_research.ingest.ledger.linking.link` links in memory with numpy;
this module states the same rules as one DuckDB query, so the sides and the
ledger of the whole history need not fit in memory: DuckDB sorts, groups and
joins under ``memory_limit`` and spills what does not fit to
``temp_directory``. ``load(..., engine="duckdb")`` links here.

Why two implementations: the numpy linker serves in-memory frames and small
inputs with no optional dependency (DuckDB is the ``engines`` extra) and is
the reference; ``tests/ingest/ledger/test_sqllink.py`` holds this one equal
to it, row for row and column for column, on the fixtures, the scale
benchmark's quick dataset and generated sides full of identical transfers
and ties in time.

The rules, as :mod:`.linking` states them, each a step of the query:

1. each event once (``source_domain, burn_tx_hash, burn_log_index`` and
   ``destination_domain, mint_tx_hash, mint_log_index``), then each nonce once
   (``source_domain, nonce``), the first row kept;
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

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ... import chains, schema
from .content import CONTENT_KEY
from .linking import AMBIGUOUS, ARRIVAL_COLUMNS, BURN_COLUMNS, pairing_counts, typed
from .rows import token_symbols

__all__ = ["connect", "frame", "ledger_query", "link", "register"]

_MIN, _MAX = np.iinfo(np.int64).min, np.iinfo(np.int64).max
_BOTH = [c for c in BURN_COLUMNS if c in ARRIVAL_COLUMNS]
_WITH_ARRIVAL = ("exact", "attested", "content", "content_ambiguous", "mint_only")
_ARRIVAL_FIRST = ("nonce", "cctp_version")  # the attested nonce and version are the arrival's

_SIDES = """
b1 AS (SELECT * FROM burns_in WHERE burn_tx_hash IS NULL OR burn_log_index IS NULL
       OR _p IN (SELECT min(_p) FROM burns_in
                 GROUP BY source_domain, burn_tx_hash, burn_log_index)),
b AS MATERIALIZED (SELECT * FROM b1 WHERE nonce IS NULL
       OR _p IN (SELECT min(_p) FROM b1 GROUP BY source_domain, nonce)),
a1 AS (SELECT * FROM arrivals_in WHERE mint_tx_hash IS NULL OR mint_log_index IS NULL
       OR _p IN (SELECT min(_p) FROM arrivals_in
                 GROUP BY destination_domain, mint_tx_hash, mint_log_index)),
a AS MATERIALIZED (SELECT * FROM a1 WHERE nonce IS NULL
       OR _p IN (SELECT min(_p) FROM a1 GROUP BY source_domain, nonce)),
nl AS MATERIALIZED (SELECT b._p AS bp, a._p AS ap,
              CASE WHEN b.cctp_version = 2 THEN 'attested' ELSE 'exact' END AS pairing,
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
one AS (SELECT x._p AS bp, y._p AS ap, 'content' AS pairing, NULL::BIGINT AS grp, 1 AS part
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
amb AS (SELECT fb.bp, fl.ap, 'content_ambiguous' AS pairing, fl.size AS grp, 1 AS part
        FROM fl JOIN fb ON fl.g = fb.g AND fb.r = fl.m),
linked AS MATERIALIZED (SELECT * FROM nl UNION ALL SELECT * FROM one UNION ALL SELECT * FROM amb),
gb AS (SELECT _p, CASE WHEN size > 1 THEN size END AS grp FROM cs WHERE side = 0),
ga AS (SELECT _p, CASE WHEN size > 1 THEN size END AS grp FROM cs WHERE side = 1),
rest AS (
  SELECT b._p AS bp, NULL::BIGINT AS ap,
         CASE WHEN gb.grp IS NOT NULL AND {keep} THEN 'unpaired' ELSE 'pending' END AS pairing,
         gb.grp, 2 AS part
  FROM b LEFT JOIN gb USING (_p) WHERE b._p NOT IN (SELECT bp FROM linked)
  UNION ALL
  SELECT NULL, a._p, 'mint_only', ga.grp, 3
  FROM a LEFT JOIN ga USING (_p) WHERE a._p NOT IN (SELECT ap FROM linked)),
pairs AS MATERIALIZED (SELECT * FROM linked UNION ALL SELECT * FROM rest)"""


def _column(name: str) -> str:
    """The ledger column ``name`` from the side a row takes it from (as :mod:`.rows` does)."""
    if name in _ARRIVAL_FIRST:
        return f"CASE WHEN p.ap IS NOT NULL THEN a.{name} ELSE b.{name} END AS {name}"
    if name in _BOTH:
        return f"CASE WHEN p.bp IS NOT NULL THEN b.{name} ELSE a.{name} END AS {name}"
    if name in ("burn_block", "mint_block"):
        return f"coalesce({'b' if name == 'burn_block' else 'a'}.{name}, -1) AS {name}"
    if name in BURN_COLUMNS:
        return f"b.{name}"
    return f"a.{name}"


def ledger_query(*, ambiguous: str = "link") -> str:
    """The query over ``burns_in`` and ``arrivals_in`` (the sides, each row's place in ``_p``,
    times as nanoseconds in ``burn_ts`` / ``mint_ts``) and ``chain_ids``, ``tokens`` (lookups),
    giving the ledger's rows in its order (time, then id).

    Examples
    --------
    >>> "content_ambiguous" in ledger_query()
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
    names = [c for c in schema.columns("ledger") if c not in ("burn_timestamp", "mint_timestamp")
             and (c in BURN_COLUMNS or c in ARRIVAL_COLUMNS)]  # fmt: skip
    selected = ",\n       ".join(_column(c) for c in names)
    return f"""
WITH {_SIDES},{content},
rows AS (
SELECT {selected},
       b.burn_ts, a.mint_ts, b.burn_log_index, p.pairing, p.grp AS link_group_size,
       p.part, p.bp, p.ap
FROM pairs p LEFT JOIN b ON b._p = p.bp LEFT JOIN a ON a._p = p.ap),
named AS (
SELECT r.*, CASE WHEN r.nonce IS NOT NULL
                 THEN r.nonce || '_' || s.chain_id || '_' || d.chain_id
                 ELSE r.burn_tx_hash || '_' || coalesce(CAST(r.burn_log_index AS VARCHAR), '')
            END AS transfer_id,
       k.token, coalesce(r.burn_ts, r.mint_ts) AS _when
FROM rows r JOIN chain_ids s ON s.domain = r.source_domain
     JOIN chain_ids d ON d.domain = r.destination_domain
     LEFT JOIN tokens k ON k.domain = r.source_domain
                       AND k.burn_token IS NOT DISTINCT FROM r.burn_token)
SELECT * EXCLUDE (_when, part, bp, ap, burn_log_index) FROM named
ORDER BY _when NULLS LAST, transfer_id NULLS LAST, part, bp, ap"""


def connect(*, memory_limit: str | None = None, temp_directory: str | None = None,
            threads: int | None = None) -> Any:  # fmt: skip
    """A DuckDB connection that spills joins and sorts to ``temp_directory`` past
    ``memory_limit`` (DuckDB's spellings: ``"2GB"``); DuckDB's defaults where not given."""
    import duckdb

    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    for name, value in (("memory_limit", memory_limit), ("temp_directory", temp_directory)):
        if value is not None:
            if not isinstance(value, str) or "'" in value:
                raise ValueError(f"{name} must be text such as '2GB' or a directory, got {value!r}")
            con.execute(f"SET {name} = '{value}'")
    if threads is not None:
        con.execute(f"SET threads = {int(threads)}")
    return con


def _side_table(frames: Sequence[pd.DataFrame], spec: dict[str, object], time: str) -> pa.Table:
    """The frames as one Arrow table of ``spec``'s columns, the time ``time`` as nanoseconds
    (``burn_ts`` / ``mint_ts``), ``_p`` each row's place."""
    parts = [typed(f, spec) for f in frames if len(f)]
    frame = pd.concat(parts, ignore_index=True) if parts else typed(pd.DataFrame(), spec)
    stamp = frame.pop(time)
    nanos = stamp.array.asi8 if len(stamp) else np.zeros(0, np.int64)
    frame[time.replace("timestamp", "ts")] = pd.arrays.IntegerArray(
        nanos.copy(), stamp.isna().to_numpy()
    )
    frame["_p"] = np.arange(len(frame), dtype=np.int64)
    return pa.Table.from_pandas(frame, preserve_index=False)


def _lookups(con: Any) -> None:
    """``chain_ids`` (domain, the id a transfer id spells) and ``tokens`` (domain, burn token,
    symbol) for the domains and tokens of the sides registered on ``con``."""
    domains = [int(d) for (d,) in con.execute(
        "SELECT source_domain FROM burns_in UNION SELECT destination_domain FROM burns_in "
        "UNION SELECT source_domain FROM arrivals_in "
        "UNION SELECT destination_domain FROM arrivals_in").fetchall()]  # fmt: skip
    con.register("chain_ids", pa.table({
        "domain": pa.array(domains, pa.int64()),
        "chain_id": pa.array([chains.chain_id(d) for d in domains], pa.string()),
    }))  # fmt: skip
    pairs = con.execute(
        "SELECT DISTINCT source_domain, burn_token FROM burns_in UNION "
        "SELECT DISTINCT source_domain, burn_token FROM arrivals_in"
    ).fetchall()
    frame = pd.DataFrame(pairs, columns=["domain", "burn_token"])
    symbols = token_symbols(frame["domain"].astype("int64"),
                            frame["burn_token"].astype(schema.STRING))  # fmt: skip
    con.register("tokens", pa.table({
        "domain": pa.array(frame["domain"].to_numpy(dtype=np.int64)),
        "burn_token": pa.array(frame["burn_token"].tolist(), pa.string()),
        "token": pa.Array.from_pandas(symbols).cast(pa.string()),
    }))  # fmt: skip


def register(con: Any, burns: Sequence[pd.DataFrame], arrivals: Sequence[pd.DataFrame]) -> None:
    """Register the sides (the *burns* and *arrivals* tables of :mod:`.linking`) on ``con`` as
    ``burns_in`` and ``arrivals_in``, with the lookups :func:`ledger_query` reads."""
    con.register("burns_in", _side_table(burns, BURN_COLUMNS, "burn_timestamp"))
    con.register("arrivals_in", _side_table(arrivals, ARRIVAL_COLUMNS, "mint_timestamp"))
    _lookups(con)


def frame(table: pa.Table) -> pd.DataFrame:
    """The query's Arrow result as a ledger DataFrame at the schema's dtypes."""
    types = schema.dtypes("ledger")
    out: dict[str, object] = {}
    for column in schema.columns("ledger"):
        if column in ("burn_timestamp", "mint_timestamp"):
            nanos = table.column(column.replace("timestamp", "ts")).to_pandas(
                types_mapper={pa.int64(): pd.Int64Dtype()}.get)
            values = nanos.to_numpy(dtype=np.int64, na_value=_MIN).view("M8[ns]")
            out[column] = pd.DatetimeIndex(values).tz_localize("UTC").array
        else:
            values = table.column(column).to_pandas(
                types_mapper={pa.int64(): pd.Int64Dtype(), pa.string(): schema.STRING,
                              pa.large_string(): schema.STRING}.get)  # fmt: skip
            out[column] = values.astype(types[column]).array
    return pd.DataFrame(out)


def link(
    burns: Sequence[pd.DataFrame],
    arrivals: Sequence[pd.DataFrame],
    *,
    ambiguous: str = "link",
    connection: Any = None,
    consume: bool = False,
) -> tuple[pd.DataFrame, dict[str, int]]:
    """The ledger of ``burns`` and ``arrivals``, linked in DuckDB; what was counted.

    The same result as :func:`cctx_research.ingest.ledger.linking.link` without source-paired
    rows. ``connection``: a DuckDB connection (:func:`connect`, to set its memory limit and
    spill directory); a new one by default. ``consume``: empty the lists ``burns`` and
    ``arrivals`` once their rows are in Arrow, so their frames are freed before the query runs.

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
    query = ledger_query(ambiguous=ambiguous)
    con = connection if connection is not None else connect()
    try:
        register(con, burns, arrivals)
        if consume:
            burns.clear()  # type: ignore[attr-defined]
            arrivals.clear()  # type: ignore[attr-defined]
        kept = con.execute(
            "SELECT (SELECT count(*) FROM burns_in) + (SELECT count(*) FROM arrivals_in)"
        ).fetchall()[0][0]
        ledger = frame(con.sql(query).to_arrow_table())
    finally:
        if connection is None:
            con.close()
    counts = pairing_counts(ledger)
    pairing = ledger["pairing"]
    sides = int((pairing != "mint_only").sum()) + int(pairing.isin(_WITH_ARRIVAL).sum())
    counts["duplicates"] = int(kept - sides)
    return ledger, counts
