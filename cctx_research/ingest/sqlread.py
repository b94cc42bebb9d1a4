"""``load(..., engine="duckdb")`` of cryo's log files: decoded, sided and linked in DuckDB.

For a load whose every file is cryo's ``logs`` dataset as Parquet with
``block_timestamp`` and ``chain_id`` (what ``sync`` writes), and which gives
no ``chain=``, ``blocks=`` or ``attested=``, the logs are decoded file by file
in DuckDB SQL (:mod:`.evm.sql_decode`), the burn and arrival sides built there
(:mod:`.ledger.sql_sides`) and linked there (:func:`.ledger.sqllink.link_tables`),
all under DuckDB's memory limit and spilling into a temporary directory of the
load's own: no pandas frame of logs or of events is made. The ledger's rows are
then gathered from the sides fetched to pandas.

Any other load, and a load in which the SQL finds a malformed log or something
the reader's guards refuse, is read by the pandas readers (:func:`read_and_link`
returns ``None``), which name each such log as ``errors=`` asks.
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from ..addressing import as_chain_format
from . import steps
from .evm import sql_decode
from .formats import FileRead

__all__ = ["read_and_link"]

logger = logging.getLogger(__name__)

MEMORY_LIMIT = "2GB"
"""DuckDB's memory for a load's decode, sides and links; past it, DuckDB spills to disk.
DuckDB's own default (80 % of the machine) would let its buffers grow beside the ledger's
pandas rows until the process runs out: a bound of its own keeps a whole history's load
within a laptop's memory."""


def _eligible(named: list[tuple[Path, int | None]], format: str | None) -> bool:
    """Every file cryo's Parquet logs with times and chain ids, and no ``chain=`` given."""
    return (
        bool(named)
        and format in (None, "evm-logs")
        and all(domain is None for _, domain in named)
        and all(sql_decode.readable(path) for path, _ in named)
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


Done = tuple[FileRead, pd.DataFrame, dict[str, int]]


def read_and_link(named: list[tuple[Path, int | None]], format: str | None, ambiguous: str,
                  report: steps.Reporter) -> Done | None:  # fmt: skip
    """(what was read, the ledger, the counts of its sides and links), or ``None`` when the
    load is one for the pandas readers (see the module note)."""
    if not _eligible(named, format):
        return None
    from .ledger import sql_sides, sqllink  # DuckDB is the engines extra: imported when asked for

    files = [path for path, _ in named]

    def progress(stage: str, i: int, path: Path) -> None:
        report(stage, done=i, total=len(files), path=path)

    with tempfile.TemporaryDirectory(prefix="cctx-duckdb-spill-") as spill:
        con: Any = sqllink.connect(memory_limit=MEMORY_LIMIT, temp_directory=spill)
        try:
            per_file = sql_decode.decode_files(con, files, progress)
            if per_file is None:
                logger.info("a log the SQL decoder cannot describe: the files are read by the "
                            "pandas reader, which names it")  # fmt: skip
                return None
            report("read", done=len(files), total=len(files))
            report("sides")
            counts, dropped = sql_sides.build(con)
            report("link")
            ledger, tally = sqllink.link_tables(con, *sql_sides.SIDE_TABLES, ambiguous=ambiguous,
                                                keep=False)
        finally:
            con.close()
    tally["duplicates"] += dropped["duplicates"]
    for key, value in tally.items():
        counts[key] = counts.get(key, 0) + value
    return _read(files, per_file), as_chain_format(ledger), counts
