"""Cryo's log files as one DuckDB relation, for :mod:`.sql_decode`: which files it reads,
all their logs together, each file's chains, and the logs a file holds twice.

The input is cryo's ``logs`` dataset as Parquet, binary columns as bytes, with
``block_timestamp`` and ``chain_id`` (what ``sync`` writes); :func:`readable` says whether a
file is one. :func:`sources` is the SQL of every log of a load's files (each row keeping its
file's place and its row in the file), :func:`domains` each file's CCTP domains by its logs'
chain ids, :func:`duplicates` the logs read again in their file (the pandas reader's rule: the
same chain, transaction and log index after its first row).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ... import chains

__all__ = ["domains", "duplicates", "quote", "readable", "rows", "sources"]

_BINARY = ("transaction_hash", "address", "topic0", "topic1", "topic2", "topic3", "data")
_NEEDED = (*_BINARY, "block_number", "log_index", "block_timestamp", "chain_id")


def quote(text: str) -> str:
    """``text`` as an SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def readable(path: Path) -> bool:
    """Whether ``path`` is a Parquet file of cryo's logs, binary columns as bytes, with
    ``block_timestamp`` and ``chain_id``: the input :mod:`.sql_decode` decodes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if path.suffix.lower() != ".parquet" or not path.is_file():
        return False
    try:
        found = pq.read_schema(path)
    except (OSError, ValueError):
        return False
    names = set(found.names)
    if not set(_NEEDED) <= names or "removed" in names:
        return False
    binary = (pa.types.is_binary, pa.types.is_large_binary, pa.types.is_fixed_size_binary)
    return all(any(t(found.field(n).type) for t in binary) for n in _BINARY) and all(
        pa.types.is_integer(found.field(n).type)
        for n in ("block_number", "log_index", "block_timestamp", "chain_id")
    )


def sources(files: Sequence[Path]) -> str:
    """Every log of ``files`` as one relation: ``f`` the file's place in ``files``, ``idx`` the
    log's row in its file, ``txfrom`` the sender of its transaction when the file has it.

    Files are read together (one ``read_parquet`` for the files that name the sender alike),
    so each event family is decoded in one pass over the whole load."""
    import pyarrow.parquet as pq

    groups: dict[str | None, list[int]] = {}
    for f, path in enumerate(files):
        names = set(pq.read_schema(path).names)
        txfrom = next((n for n in ("transaction_from", "from_address") if n in names), None)
        groups.setdefault(txfrom, []).append(f)
    reads = []
    for txfrom, places in groups.items():
        paths = ", ".join(quote(str(files[f])) for f in places)
        reads.append(f"""SELECT {places}[file_index::BIGINT + 1]::INT AS f, file_row_number AS idx,
          chain_id, block_number::BIGINT AS block, log_index::BIGINT AS log_index,
          transaction_hash AS tx, address, topic0, topic1, topic2, topic3, data,
          block_timestamp::BIGINT AS ts, {"NULL::BLOB" if txfrom is None else txfrom} AS txfrom
          FROM read_parquet([{paths}], file_row_number = true, union_by_name = true)""")
    return "(" + " UNION ALL ".join(reads) + ")"


def domains(con: Any, logs: str) -> tuple[dict[int, set[int]], str] | None:
    """Each file's domains (by its logs' chain ids) and the SQL of a log's domain; None when
    a chain id is unknown."""
    found: dict[int, set[int]] = {}
    of_id: dict[int, int] = {}
    for f, chain_id in con.execute(f"SELECT DISTINCT f, chain_id FROM {logs}").fetchall():
        domain = None if chain_id is None else chains.domain_from_chain_id(str(chain_id))
        if domain is None:
            return None
        of_id[int(chain_id)] = int(domain)
        found.setdefault(f, set()).add(int(domain))
    whens = " ".join(f"WHEN {i} THEN {d}" for i, d in sorted(of_id.items()))
    return found, f"CASE chain_id {whens} END" if whens else "NULL::BIGINT"


_LOG_HASH = "hash(f, chain_id, tx, log_index)"
"""The 64-bit hash of a log's place :func:`duplicates` groups by first (a test makes it
collide)."""


def duplicates(con: Any, logs: str) -> dict[int, int]:
    """The logs read again in their file (the same chain, transaction and log index, after its
    first row) as the table ``cx_dup`` (``f``, ``idx``); how many each file has.

    The keys' 64-bit hash is grouped first, a narrow group-by over every log (equal keys have
    equal hashes, so no shared hash is an exact none); the keys themselves are grouped only
    for the logs whose hash another log shares."""
    con.execute("CREATE OR REPLACE TABLE cx_dup (f INT, idx BIGINT)")
    key = _LOG_HASH
    con.execute(f"""CREATE OR REPLACE TABLE cx_duphash AS
      SELECT {key} AS h FROM {logs} GROUP BY h HAVING count(*) > 1""")
    if con.execute("SELECT count(*) FROM cx_duphash").fetchone()[0]:
        con.execute(f"""CREATE OR REPLACE TABLE cx_dupkey AS
          SELECT f, chain_id, tx, log_index, min(idx) AS first
          FROM (SELECT f, idx, chain_id, tx, log_index FROM {logs}
                WHERE {key} IN (SELECT h FROM cx_duphash))
          GROUP BY f, chain_id, tx, log_index HAVING count(*) > 1""")
        con.execute(f"""INSERT INTO cx_dup
          SELECT l.f, l.idx FROM {logs} l JOIN cx_dupkey d
            ON d.f = l.f AND d.chain_id IS NOT DISTINCT FROM l.chain_id
            AND d.tx IS NOT DISTINCT FROM l.tx AND d.log_index IS NOT DISTINCT FROM l.log_index
          WHERE l.idx > d.first""")
        con.execute("DROP TABLE cx_dupkey")
    con.execute("DROP TABLE cx_duphash")
    return dict(con.execute("SELECT f, count(*) FROM cx_dup GROUP BY f").fetchall())


def rows(path: Path) -> int:
    """The rows of a Parquet file, from its footer."""
    import pyarrow.parquet as pq

    return int(pq.ParquetFile(path).metadata.num_rows)
