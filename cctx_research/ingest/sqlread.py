"""``load`` of cryo's log files in DuckDB: decoded, sided and linked there.

For a load whose every file is cryo's ``logs`` dataset as Parquet with
``block_timestamp`` and ``chain_id`` (what ``sync`` writes), and which gives
no ``chain=``, ``blocks=`` or ``attested=``, with ``engine="duckdb"`` or, for any
engine, past :data:`SQL_FROM_BYTES` of files, the logs of all files are decoded
together in DuckDB SQL (:mod:`.evm.sql_decode`), the burn and arrival sides built there
(:mod:`.ledger.sql_sides`) and linked there (:func:`.ledger.sqlrows.from_tables`),
all under DuckDB's memory limit (:data:`.ledger.sqlrows.MEMORY_LIMIT`: its own
default, 80 % of the machine, would let its buffers crowd out the rest) and
spilling into a temporary directory of the load's own (a large load keeps its tables
in a database file there, compressed: :data:`ON_DISK_FROM_BYTES`): no pandas frame of logs,
of events or of the ledger is made. The ledger's rows are streamed from SQL
into the dataset a batch at a time (:class:`.ledger.sqlrows.SqlLedger`), or, for
``engine="pandas"``, made one frame at the end.

Any other load, and a load in which the SQL finds a malformed log or something
the reader's guards refuse, is read by the pandas readers (:func:`read_and_link`
returns ``None``), which name each such log as ``errors=`` asks.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..scratch import Scratch
from . import steps
from .evm import sql_decode, sql_logs
from .formats import FileRead

__all__ = ["ON_DISK_FROM_BYTES", "SQL_FROM_BYTES", "read_and_link", "wanted"]

logger = logging.getLogger(__name__)

SQL_FROM_BYTES = 32 * 2**20
"""From this many bytes of files, every engine reads cryo's Parquet logs here when DuckDB
is installed (the ``engines`` extra), as ``engine="duckdb"`` always does. DuckDB's fixed
cost (a connection, its tables, a dozen statements) is paid back by then: at 100k
transfers (28 MiB) both readers take the same time; at 1M this one takes a quarter less
time and a third less memory, on both cores (``benchmarks/README.md``, figure 13). Below
it, and without DuckDB, the pandas readers read them; a test holds both ledgers equal,
row for row, with their provenance (``tests/ingest/ledger/test_sql_sides.py``)."""

ON_DISK_FROM_BYTES = 2**30
"""From this many bytes of files (about 3.6 M transfers of ``sync``'s shape), the load keeps
its tables (the decoded events, the sides) in a database file in its spill directory, where
DuckDB writes them compressed; below it they are in memory, and what passes DuckDB's memory
limit is spilled uncompressed. Measured on ``benchmarks/scale.py``'s datasets (figure 13,
"The load's tables in a database file"): at 4M (1.1 GiB of logs) the peak disk falls from
12.3 to 7.1 GiB in the same time (181 s, the ledger written as a dataset; 11 % more time
when it is made a pandas frame); at 1M from 1.5 to 0.6 GiB for 15-25 % more time, a disk
no machine lacks, so below it the load stays in memory."""


def wanted(engine: str, named: list[tuple[Path, int | None]]) -> bool:
    """Whether ``load`` tries this reader first (it takes only what it can read, see
    :func:`read_and_link`): always for ``engine="duckdb"``; for the others, with DuckDB
    installed, from :data:`SQL_FROM_BYTES` of files."""
    if engine == "duckdb":
        return True
    if importlib.util.find_spec("duckdb") is None:
        return False
    return _bytes(path for path, _ in named) >= SQL_FROM_BYTES


def _bytes(paths: Iterable[Path]) -> int:
    """The size of the files among ``paths``."""
    return sum(path.stat().st_size for path in paths if path.is_file())


def _eligible(named: list[tuple[Path, int | None]], format: str | None) -> bool:
    """Every file cryo's Parquet logs with times and chain ids, and no ``chain=`` given."""
    return (
        bool(named)
        and format in (None, "evm-logs")
        and all(domain is None for _, domain in named)
        and all(sql_logs.readable(path) for path, _ in named)
    )


def _read(files: list[Path], per_file: list[dict[str, int]]) -> FileRead:
    """What the files' reads counted, as the pandas log reader counts it."""
    read = FileRead(format="evm-logs")
    for counts in per_file:
        for key in ("rows_read", "decoded", "duplicates"):
            read.add(key, counts[key])
        read.skip("other_events", counts["other_events"])
        read.skip("unknown_emitter", counts["unknown_emitter"])
    return read


Done = tuple[FileRead, Any, dict[str, int]]


def read_and_link(named: list[tuple[Path, int | None]], format: str | None, ambiguous: str,
                  report: steps.Reporter) -> Done | None:  # fmt: skip
    """(what was read, the ledger, the counts of its sides and links), or ``None`` when the
    load is one for the pandas readers (see the module note)."""
    if not _eligible(named, format):
        return None
    # DuckDB is the engines extra: imported when asked for
    from .ledger import sql_sides, sqllink, sqlrows

    files = [path for path, _ in named]

    def progress(stage: str, done: int, total: int) -> None:
        report(stage, done=done, total=total)

    spill = Scratch(sqllink.SPILL_PREFIX)
    large = _bytes(files) >= ON_DISK_FROM_BYTES
    database = str(Path(spill.name) / "load.duckdb") if large else None
    con: Any = sqllink.connect(memory_limit=sqlrows.MEMORY_LIMIT, temp_directory=spill.name,
                               database=database)  # fmt: skip
    try:
        per_file = sql_decode.decode_files(con, files, progress)
        if per_file is None:
            logger.info("a log the SQL decoder cannot describe: the files are read by the "
                        "pandas reader, which names it")  # fmt: skip
            con.close()
            spill.cleanup()
            return None
        report("read", done=len(files), total=len(files))
        report("sides")
        counts, dropped = sql_sides.build(con)
        report("link")
    except BaseException:
        con.close()
        spill.cleanup()
        raise
    # from here the ledger owns the connection and its spill directory: load closes them
    ledger = sqlrows.from_tables(con, *sql_sides.SIDE_TABLES, ambiguous=ambiguous,
                                 counted={"duplicates": dropped["duplicates"]}, spill=spill)
    try:
        tally = ledger.summary().counts
    except BaseException:
        ledger.close()
        raise
    for key, value in tally.items():
        counts[key] = counts.get(key, 0) + value
    return _read(files, per_file), ledger, counts
