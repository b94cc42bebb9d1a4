"""A ledger on disk opened in an engine, not read: what ``report --data`` and the app show.

A ledger dataset (``cctx_research.load(..., out=DIR)``, ``sync``) or a ledger
Parquet file is opened as an engine's lazy frame (DuckDB by default), with
the provenance a lazy frame cannot carry beside it, as an
:class:`EngineLedger`. The report (``report.build(ledger=...)``) and the
"Who moves the money" panel analyse it in the engine; no pandas copy of the
ledger is made. Other files (event logs, exports) are not ledgers yet:
:func:`open_ledger` says None, and the caller loads them.
"""

from __future__ import annotations

import atexit
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import storage
from ..provenance import Provenance
from ..scratch import scratch_directory

__all__ = ["ENGINES", "EngineLedger", "open_ledger"]

ENGINES: tuple[str, ...] = ("duckdb", "polars", "dask")
"""The engines a ledger on disk can be opened in."""


@dataclass(frozen=True)
class EngineLedger:
    """A lazy ledger and where it came from.

    Attributes
    ----------
    frame : Polars LazyFrame, DuckDB relation or Dask DataFrame
        A ``"ledger"`` frame left in its engine.
    record : Provenance or None
        Its provenance (the dataset's, the file's), which a lazy frame cannot carry.
    """

    frame: Any
    record: Provenance | None = None

    @property
    def synthetic(self) -> bool:
        """Whether its provenance flags synthetic data (the app's banner reads it)."""
        return self.record is not None and self.record.synthetic


def open_ledger(path: str | Path, engine: str = "duckdb") -> EngineLedger | None:
    """``path``'s ledger as ``engine``'s lazy frame, with its provenance.

    Parameters
    ----------
    path : str or Path
        A ledger dataset directory, a Parquet file of a ledger, or a ``sync``
        directory (its ``ledger/`` dataset, or the ``ledger.parquet`` of an older sync).
    engine : {"duckdb", "polars", "dask"}

    Returns
    -------
    EngineLedger or None
        None when ``path`` is neither (load it instead).

    Raises
    ------
    ValueError
        For an unknown ``engine``.
    ImportError
        When the engine is not installed (the ``engines`` extra).
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(map(repr, ENGINES))}, got {engine!r}")
    path = Path(path).expanduser()
    if path.is_dir() and storage.dataset_kind(path) == "sync":
        # a sync directory reads as the ledger built over its chains
        path = storage.sync_ledger(path) or path
    if path.is_dir() and storage.dataset_kind(path) == "ledger":
        from ..ingest import datasets

        manifest = storage.read_manifest(path, kinds=("ledger",), instead="pass a ledger")
        synthetic = bool(manifest is not None and manifest.synthetic)
        record = Provenance(source=f"ledger dataset {path}", synthetic=synthetic,
                            operation="load", files=(str(path),), format="dataset")  # fmt: skip
        if engine == "duckdb":
            return EngineLedger(_open(_in_one_file, path, engine), record)
        return EngineLedger(_open(datasets.scan, path, engine), record)
    if not (path.is_file() and path.suffix == ".parquet"):
        return None
    import pyarrow.parquet as pq

    try:
        file_schema = pq.read_schema(path)
    except (OSError, ValueError):
        return None  # not Parquet after all: `load` says what it is
    if not {"transfer_id", "burn_timestamp", "mint_timestamp"} <= set(file_schema.names):
        return None  # a transfers file, or an export: `load` reads it
    stored = _stored_record(file_schema.metadata or {})
    source = f"{stored.source}; {path}" if stored is not None and stored.source else str(path)
    record = (stored or Provenance(source=source)).replace(
        source=source, operation="load", files=(str(path),), format="cctx"
    )
    return EngineLedger(_open(_scan_file, path, engine), record)


def _stored_record(meta: dict) -> Provenance | None:
    """The provenance ``DataFrame.to_parquet`` kept with the ledger's ``attrs``, if any."""
    try:
        attrs = json.loads(meta[b"PANDAS_ATTRS"]) if b"PANDAS_ATTRS" in meta else None
    except ValueError:
        return None
    record = attrs.get("cctx") if isinstance(attrs, dict) else None
    return Provenance.from_dict(record) if isinstance(record, dict) and record else None


def _open(scan: Any, path: Path, engine: str) -> Any:
    """``scan(path, ...)`` in ``engine``, or the extra to install when it is missing."""
    try:
        return scan(path, **_connection(engine))
    except ImportError as exc:
        raise ImportError(
            f"opening a ledger in {engine} needs it: pip install 'cctx-research[engines]' "
            "(or read it into pandas: --engine pandas)"
        ) from exc


def _connection(engine: str) -> dict[str, Any]:
    """How to scan in ``engine``: for DuckDB, a connection of its own that keeps the files'
    metadata between the report's queries (a dataset is thousands of small files) and
    draws no progress bar of its own on the terminal."""
    if engine != "duckdb":
        return {"engine": engine}
    import duckdb

    con = duckdb.connect()
    con.execute("SET parquet_metadata_cache = true")
    con.execute("SET enable_progress_bar = false")
    return {"engine": engine, "connection": con}


REPORT_MEMORY = "2GB"
"""DuckDB's memory for a ledger dataset's copy and the report's queries on it."""


def _in_one_file(path: Path, *, engine: str, connection: Any) -> Any:
    """A ledger dataset copied once into a DuckDB database file, and that table.

    A dataset is a file a day and chain (thousands over years); a report asks
    the ledger dozens of questions, and each would open every file again. The
    copy is DuckDB's own columnar storage, on disk in a temporary directory
    (removed when the process ends): DuckDB keeps in memory only the pages a
    query needs, up to :data:`REPORT_MEMORY` (the copy of a 12 M-transfer ledger
    left 2.7 GiB of its pages resident without a limit, 1.6 GiB with one, in
    the same time): the report's own frames need the rest of a laptop's memory.
    """
    import duckdb

    from ..ingest import datasets

    where = scratch_directory("cctx-report-")
    atexit.register(shutil.rmtree, where, ignore_errors=True)
    con = duckdb.connect(str(where / "ledger.duckdb"))
    con.execute("SET enable_progress_bar = false")
    con.execute(f"SET memory_limit = '{REPORT_MEMORY}'")  # beyond it, DuckDB spills to disk
    datasets.scan(path, engine=engine, connection=con).to_table("ledger")
    return con.table("ledger")


def _scan_file(path: Path, *, engine: str, connection: Any = None) -> Any:
    """One ledger Parquet file as ``engine``'s lazy frame."""
    if engine == "duckdb":
        return connection.read_parquet(str(path))
    if engine == "polars":
        import polars as pl

        return pl.scan_parquet(path)
    import dask.dataframe as dd

    return dd.read_parquet(str(path))
