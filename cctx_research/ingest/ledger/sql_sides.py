"""The burn and arrival sides in DuckDB SQL, from the event tables :mod:`~..evm.sql_decode` fills.

The rules of :func:`~.sides.burns`, :func:`~.sides.arrivals` and
:func:`~.linking.unique_sides`, stated once more in SQL for loads decoded in
DuckDB, so the sides of a whole history are built under DuckDB's memory limit
(spilling past it) instead of in pandas:

1. each event once across files: the same (chain, transaction, log index) in a
   later file is a duplicate;
2. a message is a token transfer when its body is a burn message and its
   header sender a TokenMessenger of its source domain (any sender where the
   registry lists none: ``sender_unverified``); others are
   ``skipped_generic_messages``;
3. a ``DepositForBurn`` takes the ``MessageSent`` of its transaction with the
   same amount, mint recipient and destination, in log order (``merged``); a
   message alone is a burn of its own;
4. a ``MessageReceived`` takes the ``MintAndWithdraw`` right before it
   (``merged``); a mint without its message is
   ``skipped_mints_without_message``;
5. each event, then each (source domain, nonce), once.

Two implementations of these rules are kept because the pandas one serves
every other input (Dune, XChainDataGen, JSON logs, frames in memory) without
DuckDB; ``tests/ingest/ledger/test_sql_sides.py`` holds them equal row for row,
column for column and in order (the order is the linker's tie order).

Out of core, on narrow rows: a whole history's events and sides do not fit in
DuckDB's memory limit, and what DuckDB spills of them (the joins' and windows'
rows, and the tables of an in-memory database) is uncompressed, so the disk a
load needs grows with the width of every row a join, window or sort carries. The
tables here are the connection's own, not temporary ones: a large load keeps them
in a database file, where DuckDB writes them compressed
(:data:`~cctx_research.ingest.sqlread.ON_DISK_FROM_BYTES`). Each join, window and
sort here therefore carries keys and a row's number only (``r``: the decoder's
order; ``_p``: the side's), and the wide columns are gathered once by that
number; no table is copied to add a column or to drop nothing (views over the
event tables, a side renamed when no row repeats). Measured at 1M and 12M in
``benchmarks/README.md`` (figure 13, "The SQL load's spill by statement"):
narrower rows shrink the sides' spill but do not bound it, since the decoded
events themselves grow with the history; a load a partition at a time is the
bound that remains.

The sides are the tables ``cx_burns`` and ``cx_arrivals``: the columns of
:data:`~.linking.BURN_COLUMNS` and :data:`~.linking.ARRIVAL_COLUMNS`, plus ``_p``,
each row's place (from 0) in the pandas sides.
"""

from __future__ import annotations

from typing import Any

from ..evm.decoder import CHUNK_LOGS
from ..evm.sql_decode import ORDER
from .linking import ARRIVAL_COLUMNS, BURN_COLUMNS

__all__ = ["SIDE_TABLES", "build"]

SIDE_TABLES = ("cx_burns", "cx_arrivals")
"""The tables :func:`build` leaves: burns, arrivals."""

_ZERO_NONCE = "0x" + "0" * 64
_KEY = ("domain", "tx", "amount", "mint_recipient", "destination_domain")
_TRANSFER = """{p}amount IS NOT NULL AND ({p}source_domain NOT IN (SELECT domain FROM cx_tm)
  OR ({p}source_domain, {p}{sender}) IN (SELECT (domain, word) FROM cx_tm WHERE NOT testnet))"""


_KEY_OF_ORDER = (f"(f::HUGEINT << 96) + ((idx // {CHUNK_LOGS})::HUGEINT << 64) "
                 "+ (ev::HUGEINT << 60) + idx")
"""The pandas decoder's order (:data:`~..evm.sql_decode.ORDER`) as one number a row: a sort
on it is a sort of 16 bytes, not of four columns (a file's place below 2**31, its rows
below 2**60, seven events)."""


def _repeated(con: Any, table: str, keys: str, where: str) -> bool:
    """Whether two rows of ``table`` (those ``where`` says) share ``keys``: most loads have
    none, and are spared the windows that drop them.

    Asked first of the keys' 64-bit hash, one narrow group-by (rows with equal keys have
    equal hashes, so no shared hash is an exact no); a shared hash is then checked on the
    keys themselves."""
    return (_shared(con, table, _HASH.format(keys=keys), where)
            and _shared(con, table, keys, where))  # fmt: skip


_HASH = "hash({keys})"
"""The 64-bit hash :func:`_repeated` groups by first (a test makes it collide)."""


def _shared(con: Any, table: str, keys: str, where: str) -> bool:
    return bool(con.execute(f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {where} "
                            f"GROUP BY {keys} HAVING count(*) > 1)").fetchone()[0])


def _once(con: Any, table: str, into: str) -> int:
    """``table``'s events (``_flag`` 0) less those an earlier file had, ``r`` a number in the
    pandas decoder's order; how many were dropped."""
    if not _repeated(con, table, "domain, tx, log_index", "_flag = 0"):
        # a view, not a copy: the event table is not held twice (it is dropped with the view)
        con.execute(f"CREATE OR REPLACE TEMP VIEW {into} AS SELECT * EXCLUDE (_flag), "
                    f"{_KEY_OF_ORDER} AS r FROM {table} WHERE _flag = 0")
        return 0
    con.execute(f"""
      CREATE OR REPLACE TABLE {into} AS
      SELECT * EXCLUDE (k) FROM (
        SELECT * EXCLUDE (_flag), {_KEY_OF_ORDER} AS r,
               row_number() OVER (PARTITION BY domain, tx, log_index ORDER BY {ORDER}) AS k
        FROM {table} WHERE _flag = 0) WHERE k = 1""")
    dropped = _count(con, table, "_flag = 0") - _count(con, into)
    con.execute(f"DROP TABLE {table}")
    return dropped


def _drop(con: Any, name: str) -> None:
    """Drop the view or table ``name``, if there is one."""
    for kind in ("view", "table"):
        if con.execute(f"SELECT count(*) FROM duckdb_{kind}s() WHERE {kind}_name = ? "
                       "AND temporary", [name]).fetchone()[0]:  # fmt: skip
            con.execute(f"DROP {kind.upper()} {name}")


def _count(con: Any, table: str, where: str = "true") -> int:
    return int(con.execute(f"SELECT count(*) FROM {table} WHERE {where}").fetchone()[0])


def _hx(expr: str) -> str:
    return f"'0x' || lower(hex({expr}))"


def _burn_columns(merged: bool) -> dict[str, str]:
    """Each burn column over deposits ``d`` and messages ``s`` (either absent in a row)."""
    if merged:
        def own(d: str, s: str) -> str:
            return f"CASE WHEN d.r IS NOT NULL THEN d.{d} ELSE s.{s} END"

        def fill(d: str | None, s: str) -> str:
            return f"s.{s}" if d is None else f"coalesce(d.{d}, s.{s})"
    else:
        def own(d: str, s: str) -> str:
            return f"x.{d}" if d else f"x.{s}"

        fill = own
    nonce = f"nullif(s.nonce, '{_ZERO_NONCE}')"
    return {
        "source_domain": own("domain", "domain"),
        "burn_tx_hash": _hx(own("tx", "tx")),
        "burn_log_index": own("log_index", "log_index"),
        "burn_block": own("block", "block"),
        "burn_timestamp": f"to_timestamp({own('ts', 'ts')})",
        "cctp_version": own("version", "version"),
        "nonce": f"coalesce(CAST(d.nonce AS VARCHAR), {nonce})" if merged else "x.nonce",
        "amount_raw": own("amount", "amount"),
        "message_sender": _hx(fill("sender", "message_sender")),
        "mint_recipient": _hx(own("mint_recipient", "mint_recipient")),
        "burn_token": _hx(fill("burn_token", "burn_token")),
        "destination_caller": _hx(fill("dcaller", "dcaller")),
        "destination_token_messenger": _hx(fill("dtm", "recipient")),
        "destination_domain": own("destination_domain", "destination_domain"),
        "max_fee_raw": fill("max_fee", "max_fee"),
        "min_finality_threshold": fill("min_finality", "min_finality"),
        "hook_data": _hx(fill("hook", "hook")),
        "burn_tx_from": _hx(fill("txfrom", "txfrom")),
    }


def _one_side_burns(source: str, deposits: bool) -> str:
    """Burns of deposits alone or messages alone, in their events' order."""
    cols = _burn_columns(False)
    if deposits:
        cols["nonce"] = "CAST(x.nonce AS VARCHAR)"
        for name, field in (("message_sender", "sender"), ("destination_token_messenger", "dtm"),
                            ("burn_tx_from", "txfrom")):  # fmt: skip
            cols[name] = _hx(f"x.{field}")
    else:
        cols["nonce"] = f"nullif(x.nonce, '{_ZERO_NONCE}')"
        cols["destination_token_messenger"] = _hx("x.recipient")
        cols["message_sender"] = _hx("x.message_sender")
    select = ", ".join(f"{cols[c]} AS {c}" for c in BURN_COLUMNS)
    return f"SELECT {select}, row_number() OVER (ORDER BY x.r) - 1 AS _p FROM {source} x"


def _ranked(con: Any, source: str, keys: str) -> str:
    """``r``, the key and ``k``, the row's rank by log index among the rows of ``source``
    sharing its key: a window of these narrow rows only, and none when no key repeats."""
    if not _repeated(con, source, keys, "true"):
        return f"SELECT r, {keys}, 1 AS k FROM {source}"
    return (f"SELECT r, {keys}, row_number() OVER (PARTITION BY {keys} ORDER BY log_index) AS k "
            f"FROM {source}")


def _merged_burns(con: Any) -> str:
    """Deposits joined to their messages by key and rank in the transaction, ordered as the
    pandas outer join orders them: by key and rank, the messages alone last.

    The join and its order are of narrow rows (the keys and ``r``, in ``cx_pairs``); the
    burn columns are gathered after, by ``r``: no window or sort carries the wide rows."""
    keys = ", ".join(_KEY)
    on = " AND ".join(f"d.{k} = s.{k}" for k in (*_KEY, "k"))
    cols = _burn_columns(True)
    select = ", ".join(f"{cols[c]} AS {c}" for c in BURN_COLUMNS)
    key = ", ".join(f"coalesce(d.{k}, s.{k})" for k in (*_KEY, "k"))
    con.execute("CREATE OR REPLACE TEMP VIEW cx_sx AS SELECT * FROM cx_st WHERE transfer")
    con.execute(f"""CREATE OR REPLACE TABLE cx_pairs AS
      WITH d AS ({_ranked(con, "cx_dep", keys)}), s AS ({_ranked(con, "cx_sx", keys)})
      SELECT d.r AS dr, s.r AS sr, row_number() OVER (ORDER BY d.r IS NULL, {key}) - 1 AS _p
      FROM d FULL JOIN s ON {on}""")
    return f"""
      SELECT {select}, p._p FROM cx_pairs p LEFT JOIN cx_dep d ON d.r = p.dr
      LEFT JOIN cx_sx s ON s.r = p.sr"""


def _burns(con: Any) -> dict[str, int]:
    con.execute(f"""CREATE OR REPLACE TEMP VIEW cx_st AS
      SELECT *, {_TRANSFER.format(p='', sender='hsender')} AS transfer,
             source_domain NOT IN (SELECT domain FROM cx_tm) AS unverified FROM cx_se""")
    n_dep, n_sent = _count(con, "cx_dep"), _count(con, "cx_se")
    n_transfer = _count(con, "cx_st", "transfer")
    counts = {"merged": 0, "skipped_generic_messages": n_sent - n_transfer,
              "sender_unverified": _count(con, "cx_st", "transfer AND unverified")}  # fmt: skip
    if not n_dep and not n_sent:
        counts = {}
    if n_transfer and n_dep:
        query = _merged_burns(con)
    elif n_transfer:
        query = _one_side_burns("(SELECT * FROM cx_st WHERE transfer)", deposits=False)
    else:
        query = _one_side_burns("cx_dep", deposits=True)
    con.execute(f"CREATE OR REPLACE TABLE cx_burns_all AS {query}")
    if n_transfer and n_dep:
        counts["merged"] = n_dep + n_transfer - _count(con, "cx_burns_all")
        con.execute("DROP VIEW cx_sx")
        con.execute("DROP TABLE cx_pairs")
    return counts


_ARRIVALS = {
    "destination_domain": "r.domain",
    "mint_tx_hash": _hx("r.tx"),
    "mint_log_index": "r.log_index",
    "mint_block": "r.block",
    "mint_timestamp": "to_timestamp(r.ts)",
    "cctp_version": "r.version",
    "source_domain": "r.source_domain",
    "nonce": "r.nonce",
    "amount_raw": "r.amount",
    "message_sender": _hx("r.message_sender"),
    "mint_recipient": _hx("r.mint_recipient"),
    "burn_token": _hx("r.burn_token"),
    "destination_caller": "NULL::VARCHAR",
    "destination_token_messenger": _hx("m.address"),
    "fee_raw": "coalesce(m.fee, r.fee_executed)",
    "finality_threshold_executed": "r.executed",
    "max_fee_raw": "r.max_fee",
    "min_finality_threshold": "NULL::BIGINT",
    "hook_data": _hx("r.hook"),
    "relayer": _hx("r.caller"),
    "mint_recipient_owner": "NULL::VARCHAR",
}


def _arrivals(con: Any) -> dict[str, int]:
    n_received, n_mints = _count(con, "cx_rc"), _count(con, "cx_mn")
    transfer = _TRANSFER.format(p="r.", sender="sender")
    select = ", ".join(f"{_ARRIVALS[c]} AS {c}" for c in ARRIVAL_COLUMNS)
    # the rows' places are numbered on the narrow rows, then the wide ones gathered by ``r``
    con.execute(f"""CREATE OR REPLACE TABLE cx_rp AS
      SELECT r.r, row_number() OVER (ORDER BY r.r) - 1 AS _p FROM cx_rc r WHERE {transfer}""")
    con.execute(f"""CREATE OR REPLACE TABLE cx_arrivals_all AS
      SELECT {select}, p._p, m.r IS NOT NULL AS _mint
      FROM cx_rp p JOIN cx_rc r ON r.r = p.r LEFT JOIN cx_mn m
        ON m.domain = r.domain AND m.tx = r.tx AND m.log_index + 1 = r.log_index""")
    con.execute("DROP TABLE cx_rp")
    if not n_received and not n_mints:
        return {}
    merged = _count(con, "cx_arrivals_all", "_mint")
    transfers = _count(con, "cx_arrivals_all")
    unverified = _count(con, "cx_arrivals_all",
                        "source_domain NOT IN (SELECT domain FROM cx_tm)")
    return {"merged": merged, "skipped_mints_without_message": n_mints - merged,
            "skipped_generic_messages": n_received - transfers,
            "sender_unverified": unverified}  # fmt: skip


def _unique(con: Any, table: str, into: str, event: tuple[str, str, str]) -> int:
    """``table`` with each event, then each (source domain, nonce), once (the first by
    ``_p``), renumbered; how many rows were dropped.

    The windows that choose the rows run on narrow rows (``_p`` and the keys); the wide
    rows are gathered once, by ``_p``. When nothing repeats, ``table`` is renamed, not
    copied: a whole history's side is never held twice."""
    columns = BURN_COLUMNS if into == "cx_burns" else ARRIVAL_COLUMNS
    keys = ", ".join(event)
    known = " AND ".join(f"{k} IS NOT NULL" for k in event)
    if not (_repeated(con, table, keys, known)
            or _repeated(con, table, "source_domain, nonce", "nonce IS NOT NULL")):
        for extra in sorted(set(_columns(con, table)) - {*columns, "_p"}):
            con.execute(f"ALTER TABLE {table} DROP COLUMN {extra}")
        con.execute(f"ALTER TABLE {table} RENAME TO {into}")
        return 0
    con.execute(f"""
      CREATE OR REPLACE TABLE cx_keep AS
      WITH e AS (SELECT _p, source_domain, nonce FROM {table} QUALIFY NOT ({known}) OR
                 row_number() OVER (PARTITION BY {keys} ORDER BY _p) = 1),
      n AS (SELECT _p FROM e QUALIFY nonce IS NULL OR
            row_number() OVER (PARTITION BY source_domain, nonce ORDER BY _p) = 1)
      SELECT _p AS old, row_number() OVER (ORDER BY _p) - 1 AS new FROM n""")
    con.execute(f"""CREATE OR REPLACE TABLE {into} AS
      SELECT {", ".join(f"t.{c}" for c in columns)}, k.new AS _p
      FROM cx_keep k JOIN {table} t ON t._p = k.old""")
    dropped = _count(con, table) - _count(con, into)
    con.execute(f"DROP TABLE {table}")
    con.execute("DROP TABLE cx_keep")
    return dropped


def _columns(con: Any, table: str) -> list[str]:
    return [row[0] for row in con.execute(f"DESCRIBE {table}").fetchall()]


def build(con: Any) -> tuple[dict[str, int], dict[str, int]]:
    """The side tables ``cx_burns`` and ``cx_arrivals`` from the event tables of ``con``.

    Returns
    -------
    (counts, link_counts)
        ``counts``: what ``load`` tallies of the sides (``duplicates`` across files,
        ``merged``, ``skipped_generic_messages``, ``skipped_mints_without_message``,
        ``sender_unverified``), each added as the pandas sides add them;
        ``link_counts``: ``{"duplicates": n}``, the events and nonces
        :func:`~.linking.unique_sides` would drop.
    """
    duplicates = 0
    events = (("cx_deposits", "cx_dep"), ("cx_sent", "cx_se"), ("cx_received", "cx_rc"),
              ("cx_mints", "cx_mn"))  # fmt: skip
    for table, into in events:
        duplicates += _once(con, table, into)
    counts: dict[str, int] = {"duplicates": duplicates}
    for made in (_burns(con), _arrivals(con)):
        for key, value in made.items():
            counts[key] = counts.get(key, 0) + value
    con.execute("DROP VIEW cx_st")
    for table, into in events:  # a view, and the table under it, or the table alone
        _drop(con, into)
        _drop(con, table)
    dropped = _unique(con, "cx_burns_all", "cx_burns",
                      ("source_domain", "burn_tx_hash", "burn_log_index"))
    dropped += _unique(con, "cx_arrivals_all", "cx_arrivals",
                       ("destination_domain", "mint_tx_hash", "mint_log_index"))
    return counts, {"duplicates": dropped}
