"""The ledger's rows in DuckDB SQL, streamed a record batch at a time: never a whole frame.

:func:`~.rows.ledger_rows` gathers the ledger of an in-memory link with numpy; this
module states the same columns as one DuckDB query over the side tables and the links
(:func:`.sqllink.links_query`), in the ledger's order (burn time, else mint time, unknown
last; then transfer id), and hands them out as pandas frames of at most ``batch_rows``
rows. What SQL does not do, spelling each address as its chain spells it (base58 on
Solana, bech32 on Noble), is done per batch (:func:`~cctx_research.addressing.as_chain_format`),
so memory holds one batch, not the ledger. The provenance counts and the dataset's span are
SQL aggregates. ``load(..., engine="duckdb")`` writes its dataset from here
(:func:`cctx_research.ingest.datasets.write_stream`).

The tables, on one DuckDB connection:

``burns_in`` / ``arrivals_in``
    The sides: the ledger's columns each side carries, ``_p`` a row's number, the side's
    time as nanoseconds since the epoch (``burn_ts`` / ``mint_ts``: DuckDB's timestamps
    hold microseconds) in place of ``burn_timestamp`` / ``mint_timestamp``; each event and
    each nonce once (:func:`.linking.unique_sides`).
``links``
    The rows of :func:`.sqllink.links_query`: ``bp``, ``ap``, ``pairing`` (a code of
    :data:`PAIRINGS`), ``grp``.

:func:`from_sides` makes them from pandas sides, as :func:`.sqllink.link` takes them;
:func:`from_tables` from side tables already on the connection (:mod:`.sql_sides`).

Why two implementations of the ledger's columns: :func:`~.rows.ledger_rows` serves the
in-memory linkers (pandas loads, the numpy linker without DuckDB, the ``engines`` extra)
and is the reference; ``tests/ingest/ledger/test_sqlrows.py`` holds the datasets both
write equal, file by file, row for row, column for column and dtype by dtype.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ... import chains, schema
from ...addressing import as_chain_format
from ...scratch import Scratch
from . import sqllink
from .linking import pairing_counts, unique_sides

__all__ = ["MEMORY_LIMIT", "PAIRINGS", "SqlLedger", "Summary", "from_sides", "from_tables"]

PAIRINGS: tuple[str, ...] = ("exact", "attested", "content", "content_ambiguous", "pending",
                             "unpaired", "mint_only")  # fmt: skip
"""The pairings, by the code :func:`.sqllink.links_query` gives each."""

MEMORY_LIMIT = "2GB"
"""DuckDB's buffers for a load's ledger: past it, tables, joins and sorts spill to disk."""

_PART = ("CASE WHEN l.pairing <= 1 THEN 0 WHEN l.pairing <= 3 THEN 1 "
         "WHEN l.pairing <= 5 THEN 2 ELSE 3 END")
"""The links query's own order (nonce links, content links, pending burns, lone mints): the
last tie-break, as the numpy linker keeps it."""

_TIMES = {"burn_timestamp": "burn_ts", "mint_timestamp": "mint_ts"}
_ARRIVAL_FIRST = ("nonce", "cctp_version")  # the attested nonce and version are the mint's
_BUILT = ("transfer_id", "pairing", "link_group_size", "token")


@dataclass(frozen=True)
class Summary:
    """SQL aggregates of a ledger: its provenance counts, and its rows without any time (a
    dataset, partitioned by day, refuses them)."""

    counts: dict[str, int]
    transfers: int
    missing_times: int
    untimed: int


def _side_expr(column: str, burns: set[str], arrivals: set[str], *, fill: bool = False) -> str:
    """The SQL of one side column: the burn's where the row has a burn, else the arrival's
    (the arrival's first for the nonce and version); null where neither side carries it."""
    name = _TIMES.get(column, column)
    in_b, in_a = name in burns, name in arrivals
    if in_b and in_a:
        first, second = ("a", "b") if column in _ARRIVAL_FIRST else ("b", "a")
        rows = {"a": "l.ap", "b": "l.bp"}
        expr = f"CASE WHEN {rows[first]} IS NOT NULL THEN {first}.{name} ELSE {second}.{name} END"
    elif in_b or in_a:
        expr = f"{'b' if in_b else 'a'}.{name}"
    else:
        expr = "NULL"
    if fill:
        expr = f"coalesce({expr}, -1)"  # an absent side's block: -1, as the numpy gather fills
    return f"{expr} AS {column}"


def _filled(column: str) -> bool:
    """Whether ``column`` is a ledger integer that is never null (-1 for an absent side)."""
    kind = schema.dtypes("ledger").get(column)
    return isinstance(kind, np.dtype) and kind.kind == "i"


@dataclass
class SqlLedger:
    """The ledger of the side tables and links on ``connection``, read in SQL."""

    connection: Any
    counted: dict[str, int] = field(default_factory=dict)
    spill: Any = None
    _summary: Summary | None = field(default=None, init=False, repr=False)

    def _columns(self, table: str) -> set[str]:
        return {row[0] for row in self.connection.execute(f"DESCRIBE {table}").fetchall()}

    def _lookups(self) -> None:
        """Small tables of what the registry says: chain ids of domains, token symbols."""
        con = self.connection
        domains = sorted({r[0] for r in con.execute(
            "SELECT source_domain FROM burns_in UNION SELECT destination_domain FROM burns_in "
            "UNION SELECT source_domain FROM arrivals_in "
            "UNION SELECT destination_domain FROM arrivals_in").fetchall() if r[0] is not None})
        ids = pa.table({"domain": pa.array(domains, pa.int64()),
                        "chain_id": [chains.chain_id(int(d)) for d in domains]})  # fmt: skip
        pairs = [tuple(r) for r in con.execute(
            "SELECT DISTINCT source_domain, burn_token FROM (SELECT source_domain, burn_token "
            "FROM burns_in UNION ALL SELECT source_domain, burn_token FROM arrivals_in) "
            "WHERE burn_token IS NOT NULL").fetchall()]  # fmt: skip
        tokens = pa.table({
            "domain": pa.array([p[0] for p in pairs], pa.int64()),
            "token": pa.array([p[1] for p in pairs], pa.string()),
            "symbol": pa.array([chains.token_symbol(int(d), t) for d, t in pairs], pa.string()),
        })  # fmt: skip
        names = pa.table({"code": pa.array(range(len(PAIRINGS)), pa.int64()),
                          "name": pa.array(PAIRINGS, pa.string())})  # fmt: skip
        for name, table in (("_chain_ids", ids), ("_tokens", tokens), ("_pairings", names)):
            con.register(f"{name}_arrow", table)
            con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT * FROM {name}_arrow")
            con.unregister(f"{name}_arrow")

    def _rows_sql(self) -> str:
        """The ledger's columns, one row a link, in no order (with the keys of the order)."""
        burns, arrivals = self._columns("burns_in"), self._columns("arrivals_in")
        sides = ",\n  ".join(_side_expr(c, burns, arrivals, fill=_filled(c))
                             for c in (*schema.columns("ledger"), "burn_log_index")
                             if c not in _BUILT)  # fmt: skip
        return f"""
SELECT {sides},
  l.pairing AS _code, CASE WHEN l.grp = 0 THEN NULL ELSE l.grp END AS link_group_size,
  {_PART} AS _part, l.bp AS _bp, l.ap AS _ap
FROM links l LEFT JOIN burns_in b ON b._p = l.bp LEFT JOIN arrivals_in a ON a._p = l.ap"""

    def _create_view(self) -> None:
        self._lookups()
        self.connection.execute(f"""
CREATE OR REPLACE TEMP VIEW ledger_rows AS
SELECT r.*,
  CASE WHEN r.nonce IS NOT NULL THEN r.nonce || '_' || s.chain_id || '_' || d.chain_id
       ELSE r.burn_tx_hash || '_' || coalesce(CAST(r.burn_log_index AS VARCHAR), '') END
    AS transfer_id,
  p.name AS pairing, t.symbol AS token, coalesce(r.burn_timestamp, r.mint_timestamp) AS _when
FROM ({self._rows_sql()}) r
LEFT JOIN _chain_ids s ON s.domain = r.source_domain
LEFT JOIN _chain_ids d ON d.domain = r.destination_domain
LEFT JOIN _pairings p ON p.code = r._code
LEFT JOIN _tokens t ON t.domain = r.source_domain AND t.token = r.burn_token""")

    def summary(self) -> Summary:
        """The provenance counts (one per pairing, ``paired``, ``duplicates``), the transfers,
        the sides without a time, and the rows with neither time (counted once)."""
        if self._summary is not None:
            return self._summary
        self._create_view()
        con = self.connection
        counts = pairing_counts(schema.empty("ledger"))
        tally = con.execute("SELECT pairing, count(*) FROM links GROUP BY pairing").fetchall()
        for code, n in tally:
            counts[PAIRINGS[int(code)]] += int(n)
        counts["paired"] = sum(counts[k] for k in schema.LINKED)
        counts.update(self.counted)
        total, missing, untimed = con.execute(
            "SELECT count(*), "
            "count(*) FILTER (WHERE burn_tx_hash IS NOT NULL AND burn_timestamp IS NULL) + "
            "count(*) FILTER (WHERE mint_tx_hash IS NOT NULL AND mint_timestamp IS NULL), "
            "count(*) FILTER (WHERE _when IS NULL) FROM ledger_rows"
        ).fetchall()[0]
        self._summary = Summary(counts, int(total), int(missing), int(untimed))
        return self._summary

    def batches(self, batch_rows: int = 65_536) -> Iterator[pd.DataFrame]:
        """The ledger's rows in its order, ``batch_rows`` at a time, as canonical frames
        (addresses in their chains' formats, validated against the ledger schema)."""
        if not isinstance(batch_rows, int) or batch_rows < 1:
            raise ValueError(f"batch_rows must be a positive integer, got {batch_rows!r}")
        for batch in self._rows().to_arrow_reader(batch_rows):
            yield _frame(pa.Table.from_batches([batch]))

    def frame(self) -> pd.DataFrame:
        """The whole ledger in its order as one canonical frame (what :meth:`batches` gives,
        stacked): read from DuckDB as one Arrow table, made a frame once."""
        return _frame(self._rows().to_arrow_table())

    def _rows(self) -> Any:
        self.summary()  # the view and its lookup tables
        columns = ", ".join(schema.columns("ledger"))
        return self.connection.sql(
            f"SELECT {columns} FROM ledger_rows "
            "ORDER BY _when IS NULL, _when, transfer_id, _part, _bp, _ap"
        )

    def close(self) -> None:
        """Close the connection and remove its spill directory."""
        self.connection.close()
        if self.spill is not None:
            self.spill.cleanup()


def _strings(kind: pa.DataType) -> Any:
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return schema.STRING
    if pa.types.is_integer(kind):
        return schema.NULLABLE_INT
    return None


def _frame(table: pa.Table) -> pd.DataFrame:
    """Rows of ``ledger_rows`` as ledger rows: canonical dtypes, times exact to the
    nanosecond, addresses spelled by their chains."""
    for name in _TIMES:
        at = table.schema.get_field_index(name)
        values = table.column(at).cast(pa.int64()).cast(pa.timestamp("ns", "UTC"))
        table = table.set_column(at, name, values)
    frame = table.to_pandas(types_mapper=_strings)
    types = schema.dtypes("ledger")
    frame = frame.astype({c: t for c, t in types.items() if frame[c].dtype != t})
    return schema.validate(as_chain_format(frame), "ledger", extra=False)


def _register(con: Any, name: str, side: pd.DataFrame, time: str) -> None:
    """``side`` as the table ``name``: ``_p`` its row numbers, its time as nanoseconds."""
    stamp = side[time]
    nanos = pd.arrays.IntegerArray(stamp.array.asi8.copy(), stamp.isna().to_numpy())
    frame = side.drop(columns=[time]).assign(**{_TIMES[time]: nanos})
    frame["_p"] = range(len(side))
    table = pa.Table.from_pandas(frame, preserve_index=False)
    con.register(f"{name}_arrow", table)
    con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT * FROM {name}_arrow")
    con.unregister(f"{name}_arrow")


def from_sides(
    burns: Sequence[pd.DataFrame],
    arrivals: Sequence[pd.DataFrame],
    *,
    ambiguous: str = "link",
    connection: Any = None,
    memory_limit: str | None = None,
) -> SqlLedger:
    """The side tables and the links of pandas sides, on ``connection``, as a :class:`SqlLedger`.

    Each event and each nonce is taken once (the repeats counted as ``duplicates``); the
    links are :func:`.sqllink.links_query`'s. ``connection``: a DuckDB connection
    (:func:`.sqllink.connect`); by default a new one spilling to a temporary directory of its
    own, closed with the ledger, whose DuckDB buffers (the side tables, the links, the
    sort of the rows) stay under ``memory_limit`` (DuckDB's spelling, ``"2GB"``; default
    :data:`MEMORY_LIMIT`) and spill past it.
    """
    query = sqllink.links_query(ambiguous=ambiguous)
    b, a, duplicates = unique_sides(burns, arrivals)
    spill = None
    if connection is None:
        spill = Scratch(sqllink.SPILL_PREFIX)
        connection = sqllink.connect(temp_directory=spill.name,
                                     memory_limit=memory_limit or MEMORY_LIMIT)
    ledger = SqlLedger(connection, {"duplicates": duplicates}, spill)
    try:
        _register(connection, "burns_in", b, "burn_timestamp")
        _register(connection, "arrivals_in", a, "mint_timestamp")
        del b, a
        connection.execute(f"CREATE OR REPLACE TEMP TABLE links AS {query}")
    except BaseException:
        ledger.close()
        raise
    return ledger


def from_tables(connection: Any, burns: str, arrivals: str, *, ambiguous: str = "link",
                counted: dict[str, int] | None = None, spill: Any = None) -> SqlLedger:  # fmt: skip
    """The :class:`SqlLedger` of side tables already on ``connection``, linked there.

    ``burns`` and ``arrivals`` name tables with the side columns (times as
    ``burn_timestamp`` / ``mint_timestamp``), each event and nonce once, and ``_p`` each
    row's place from 0 (:func:`.sql_sides.build` leaves them). The ledger takes
    ``connection`` and ``spill`` (a :class:`tempfile.TemporaryDirectory`, or ``None``): its
    :meth:`~SqlLedger.close` closes and removes them. ``counted``: counts of the steps before.
    """
    for name in (burns, arrivals):
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"side tables are named by an SQL identifier, got {name!r}")
    ledger = SqlLedger(connection, dict(counted or {}), spill)
    try:
        for view, table, time in (("burns_in", burns, "burn"), ("arrivals_in", arrivals, "mint")):
            connection.execute(
                f"CREATE OR REPLACE TEMP VIEW {view} AS SELECT * EXCLUDE ({time}_timestamp), "
                f"epoch_ns({time}_timestamp) AS {time}_ts FROM {table}"
            )
        query = sqllink.links_query(ambiguous=ambiguous)
        connection.execute(f"CREATE OR REPLACE TEMP TABLE links AS {query}")
    except BaseException:
        ledger.close()
        raise
    return ledger
