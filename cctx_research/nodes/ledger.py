"""The ledger of a sync directory: every chain's parts linked, kept beside them.

:func:`build_ledger` writes it out of core where it can: the EVM log parts are
decoded, sided, linked and written in DuckDB SQL as a partitioned ``ledger``
dataset, ``DIR/ledger/`` (``load(parts, engine="duckdb", out=...)``, see
``docs/datasets.md``), with no pandas frame of logs or of the ledger, so a
whole history builds in bounded memory. Where that path cannot serve, the
ledger is built in pandas into ``DIR/ledger.parquet``, as older versions did:

- Solana's parts (the pandas reader reads them);
- Iris's attested messages under ``DIR/iris/`` (``sync --iris`` found some:
  the burns link on them, ``load(attested=...)``);
- no DuckDB (the ``engines`` extra).

Either is written whole beside its name and swapped in (a failure or Ctrl-C
leaves the previous ledger), and then the other one is removed, so a
directory holds one ledger; readers take the newer when a stop between the
two steps left both (:func:`cctx_research.storage.sync_ledger`). A directory
synced before ``ledger/`` existed keeps its ``ledger.parquet`` until the next
build replaces it.
"""

from __future__ import annotations

import importlib.util
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import provenance, storage
from ..errors import DataError
from . import attestations
from .store import Dataset

__all__ = ["BATCH_BYTES", "BATCH_LOGS", "LEDGER_ENGINES", "build_ledger", "ledger_path",
           "read_for_iris"]  # fmt: skip

LEDGER_ENGINES = ("duckdb", "pandas")
"""How :func:`build_ledger` may build: DuckDB SQL into ``ledger/``, pandas into
``ledger.parquet``."""

DATASET, FILE = storage.SYNC_LEDGERS


def ledger_path(root: str | Path) -> Path | None:
    """Where the sync directory ``root`` keeps its ledger now, or ``None`` before any."""
    return storage.sync_ledger(root)


def _engine(dataset: Dataset, files: list[Path], engine: str | None) -> str:
    """``engine`` checked, or the one that can serve these parts when it is None."""
    if engine is not None and engine not in LEDGER_ENGINES:
        raise ValueError(f"engine must be 'duckdb', 'pandas' or None (the first that serves), "
                         f"got {engine!r}")  # fmt: skip
    eligible = (
        all(p.suffix == ".parquet" for p in files)
        and not attestations.messages_path(dataset.root).is_file()
    )
    has_duckdb = importlib.util.find_spec("duckdb") is not None
    if engine == "duckdb" and not (eligible and has_duckdb):
        why = ("DuckDB is not installed: pip install 'cctx-research[engines]'" if not has_duckdb
               else "Solana's parts and Iris's attested messages are read in pandas")
        raise ValueError(f"{dataset.root}'s ledger cannot be built in DuckDB ({why}); pass "
                         "engine='pandas' or None")  # fmt: skip
    if engine is None:
        engine = "duckdb" if eligible and has_duckdb else "pandas"
    return engine


def build_ledger(dataset: Dataset, *, engine: str | None = None,
                 progress: Any = None) -> int:  # fmt: skip
    """Load every chain's parts as one ledger beside them; returns its transfers.

    Parameters
    ----------
    dataset : Dataset
        The sync directory.
    engine : {"duckdb", "pandas"}, optional
        ``"duckdb"``: out of core into ``ledger/``; ``"pandas"``: into
        ``ledger.parquet``. By default DuckDB where it serves (see the module note).
    progress : bool or callable, optional
        ``load``'s progress: per stage (reading, decoding, sides, links, writing).
    """
    files = dataset.log_files()
    solana = dataset.root / "solana" / "transactions"
    if solana.is_dir():
        files += sorted(p for p in solana.iterdir() if p.is_file() and not p.name.startswith("."))
    chosen = _engine(dataset, files, engine)
    if not files:
        _remove(dataset, (DATASET, FILE))
        return 0
    if chosen == "duckdb":
        transfers = _in_duckdb(dataset, files, progress)
    else:
        transfers = _in_pandas(dataset, files, progress)
    _remove(dataset, (FILE if chosen == "duckdb" else DATASET,))
    return transfers


def _remove(dataset: Dataset, names: tuple[str, ...]) -> None:
    for name in names:
        path = dataset.root / name
        with dataset.writing(path):
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)


def _in_duckdb(dataset: Dataset, files: list[Path], progress: Any) -> int:
    """The parts decoded, sided, linked and written in DuckDB into ``ledger/``."""
    from ..ingest import load

    target = dataset.root / DATASET
    transfers = 0

    def write(tmp: Path) -> None:
        nonlocal transfers
        load(files, engine="duckdb", out=tmp, progress=progress)  # swapped into tmp whole
        manifest = storage.read_manifest(tmp, kinds=("ledger",), instead="build it again")
        if manifest is None:  # no transfer at all: load left tmp empty
            return
        writes = manifest.state.get("writes") or [{}]
        record = provenance.Provenance.from_dict(writes[-1])
        transfers = record.count.get("transfers", 0)
        # named by the dataset and its parts, as the pandas path names its ledger
        named = record.replace(source=str(dataset.root), files=tuple(str(p) for p in files))
        state = {**manifest.state, "writes": [*writes[:-1], named.to_dict()]}
        storage.write_manifest(tmp, storage.Manifest("ledger", state,
                                                     synthetic=manifest.synthetic))  # fmt: skip

    with dataset.writing(target):
        storage.replace_directory_atomically(target, write)
    return transfers


def _in_pandas(dataset: Dataset, files: list[Path], progress: Any) -> int:
    """The parts read and linked in pandas, written to ``ledger.parquet``."""
    from ..ingest import load

    messages = attestations.messages_path(dataset.root)
    path = dataset.root / FILE
    with tempfile.TemporaryDirectory(prefix=".ledger-", dir=dataset.root) as work:
        # few files a chain: the decoders' cost is per file as much as per log (a year
        # synced is hundreds of parts; Solana's are a page of transactions each), so a
        # chain's parts are read in batches, never its whole history as one table
        joined = _one_file_a_chain(files, Path(work))
        ledger = load(joined, attested=messages if messages.is_file() else None,
                      progress=progress)  # fmt: skip
    record = provenance.provenance(ledger)
    if record is not None:  # named by the dataset and its parts, not the joined files
        provenance.attach(ledger, record.replace(
            source=str(dataset.root), files=tuple(str(p) for p in files)))  # fmt: skip
    with dataset.writing(path):
        storage.write_atomically(ledger, path)
    return len(ledger)


IRIS_COLUMNS = ("cctp_version", "pairing", "source_domain", "destination_domain",
                "burn_tx_hash")  # fmt: skip
"""What :func:`~.attestations.ask` reads of the ledger: the V2 burns' routes and pairings."""


def read_for_iris(root: Path) -> Any:
    """The ledger's V2 rows, only the columns Iris is asked about, as a frame.

    A ledger dataset is read with its V2 rows filtered in the scan, so the
    frame is the V2 burns' few columns, never the whole ledger."""
    import pandas as pd

    path = ledger_path(root)
    if path is None:
        raise DataError(f"{root} has no ledger to ask Iris about",
                        hint="run the sync to the end once")  # fmt: skip
    columns = list(IRIS_COLUMNS)
    if path.is_dir():
        import pyarrow.dataset as ds

        files = sorted(str(p) for p in path.glob("day=*/source_chain=*/*.parquet"))
        scanned = ds.dataset(files, format="parquet")
        table = scanned.to_table(columns=columns, filter=ds.field("cctp_version") == 2)
        return table.to_pandas()
    return pd.read_parquet(path, columns=columns)


BATCH_LOGS = 1_000_000
"""The most logs a chain's Parquet parts are joined into for one read (the pandas path):
the decoder's cost is per file as much as per log, its memory per file (a chain's whole
history is never one table)."""

BATCH_BYTES = 256 * 2**20
"""The most bytes of Solana's JSON Lines parts (a page of transactions each) joined."""


def _batches(parts: list[Path], size: Callable[[Path], int], limit: int) -> list[list[Path]]:
    """Consecutive ``parts`` in groups of at most ``limit`` (by ``size``; a larger part alone)."""
    out: list[list[Path]] = []
    total = 0
    for part in parts:
        n = size(part)
        if not out or total + n > limit:
            out.append([])
            total = 0
        out[-1].append(part)
        total += n
    return out


def _one_file_a_chain(files: list[Path], work: Path) -> list[Path]:
    """The parts of each folder joined into few files under ``work``: Parquet log parts in
    batches of at most :data:`BATCH_LOGS` logs, Solana's JSON Lines parts in batches of at
    most :data:`BATCH_BYTES`."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    by_folder: dict[Path, list[Path]] = {}
    for path in files:
        by_folder.setdefault(path.parent, []).append(path)
    out: list[Path] = []
    for folder, parts in by_folder.items():
        suffixes = {p.suffix for p in parts}
        if len(parts) < 2 or len(suffixes) > 1 or suffixes - {".parquet", ".jsonl"}:
            out += parts
            continue
        name = f"{folder.parent.name}-{folder.name}"
        if suffixes == {".jsonl"}:
            for i, batch in enumerate(_batches(parts, lambda p: p.stat().st_size, BATCH_BYTES)):
                joined = work / f"{name}-{i:06d}.jsonl"
                with joined.open("wb") as sink:
                    for part in batch:
                        data = part.read_bytes()
                        sink.write(data if not data or data.endswith(b"\n") else data + b"\n")
                out.append(joined)
            continue
        rows = lambda p: pq.read_metadata(p).num_rows  # noqa: E731
        for i, batch in enumerate(_batches(parts, rows, BATCH_LOGS)):
            if len(batch) == 1:
                out += batch
                continue
            joined = work / f"{name}-{i:06d}.parquet"
            table = pa.concat_tables([pq.read_table(p) for p in batch], promote_options="default")
            pq.write_table(table, joined)
            del table
            out.append(joined)
    return out
