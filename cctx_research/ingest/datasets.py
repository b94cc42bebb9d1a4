"""Partitioned Parquet datasets on disk: the shape data takes past one machine's memory.

A dataset is a directory of Parquet files partitioned hive-style by UTC day
and source chain, on the convention of :mod:`cctx_research.storage` (part
names, the ``_cctx.json`` manifest, atomic writes: see ``docs/datasets.md``)::

    transfers/
      _cctx.json
      day=2026-11-20/source_chain=base/base__transfers__day_2026-11-20.parquet
      ...

Every engine reads it as it is: ``pandas.read_parquet(dir)``,
``polars.scan_parquet(dir + "/**/*.parquet", hive_partitioning=True)``,
``duckdb.read_parquet(dir + "/**/*.parquet", hive_partitioning=true)``,
``dask.dataframe.read_parquet(dir)``; :func:`read` gives back the canonical
frame.

Writing a window that overlaps what is there replaces it: for each day the
window touches, the rows already stored inside the window are dropped, the
rows outside it (the rest of a partly covered day) are kept, and the new
rows are added; the day is rewritten in a temporary directory and swapped
in, so a failed write leaves the old day in place. A rerun never duplicates
rows. A dataset written before the convention is read as it is and upgraded
(manifest and part names) by the next write.

Examples
--------
>>> import tempfile
>>> from cctx_research import schema
>>> with tempfile.TemporaryDirectory() as tmp:
...     summary = write(schema.empty("transfers"), tmp)
...     read(tmp).shape
(0, 14)
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from .. import chains, schema, storage
from ..errors import DataError
from ..provenance import Provenance, attach, provenance
from ..storage import Chunk, Manifest, Part
from . import day_parts

__all__ = ["ENGINES", "TIME_COLUMNS", "DatasetWrite", "kind_of", "read", "scan", "untimed_error",
           "write", "write_stream"]

logger = logging.getLogger(__name__)

TIME_COLUMNS: dict[str, str] = {"transfers": "timestamp", "ledger": "burn_timestamp"}
"""The kinds a dataset holds, and the time column each is partitioned by."""

ENGINES = ("polars", "duckdb", "dask")
"""The engines :func:`scan` points at a dataset."""
_PARTITIONS = pa.schema([("day", pa.string()), ("source_chain", pa.string())])


@dataclass(frozen=True)
class DatasetWrite:
    """What :func:`write` did."""

    directory: str
    kind: str
    rows: int
    days: tuple[str, ...]
    replaced_rows: int


def kind_of(frame: pd.DataFrame) -> str:
    """``"ledger"`` or ``"transfers"``: the kind a frame follows (raises DataError otherwise)."""
    for kind in ("ledger", "transfers"):
        try:
            schema.validate(frame, kind)
        except DataError:
            continue
        return kind
    raise DataError(
        "a dataset holds 'transfers' frames (Client.mints, load(...).pipe(to_transfers)) or "
        "'ledger' frames (load, load_sample); this frame follows neither",
        hint="see cctx_research.schema.columns('transfers') and columns('ledger')",
    )


def _directory(directory: Any, *, create: bool) -> Path:
    if not isinstance(directory, (str, os.PathLike)):
        raise TypeError(f"directory must be a str or Path, got {type(directory).__name__}")
    path = Path(directory).expanduser()
    if path.exists() and not path.is_dir():
        raise ValueError(f"{str(path)!r} is a file; a dataset is a directory")
    if create:
        path.mkdir(parents=True, exist_ok=True)
    elif not path.is_dir():
        raise DataError(f"no dataset directory at {str(path)!r}")
    return path


def _window(frame: pd.DataFrame, column: str) -> tuple[pd.Timestamp, pd.Timestamp] | None:
    record = provenance(frame)
    if record is not None and record.window is not None:
        return record.window
    times = frame[column].dropna()
    if times.empty:
        return None
    return times.min(), times.max() + pd.Timedelta(1, "ns")


def _read_day(path: Path) -> pd.DataFrame | None:
    if not path.is_dir():
        return None
    dataset = ds.dataset(
        path,
        format="parquet",
        partitioning=ds.partitioning(pa.schema([("source_chain", pa.string())]), flavor="hive"),
    )
    return dataset.to_table().to_pandas()


_WHEN = day_parts.WHEN


def _keyed(frame: pd.DataFrame, kind: str) -> pd.DataFrame:
    """``frame`` with its partition keys: the time of each row, and its source chain.

    A ledger row is filed by its burn, or by its mint when the burn is not in
    the data; its ``source_chain`` comes from ``source_domain``.
    """
    out = frame.copy(deep=False)
    if kind == "ledger":
        out[_WHEN] = out["burn_timestamp"].fillna(out["mint_timestamp"])
        codes, domains = pd.factorize(out["source_domain"])  # a name per domain, not per row
        named = schema.chain_categorical([chains.chain_name(int(d)) for d in domains])
        at = np.asarray(named.codes, dtype=np.int64)  # each domain's place among the chains
        out["source_chain"] = pd.Categorical.from_codes(at[codes], dtype=named.dtype)
    else:
        out[_WHEN] = out["timestamp"]
    missing = out[_WHEN].isna()
    if missing.any():
        raise untimed_error(int(missing.sum()))
    out.attrs = dict(frame.attrs)
    return out


def untimed_error(count: int) -> DataError:
    """The error of ``count`` rows without a time: a dataset files each row by its day."""
    return DataError(
        f"{count} transfer(s) have no time; a dataset is partitioned by day",
        hint="load event logs with their block times (blocks=), or write such rows to a "
        "Parquet file instead of a dataset directory",
    )


def write(frame: pd.DataFrame, directory: str | os.PathLike[str]) -> DatasetWrite:
    """Write ``frame`` into the dataset at ``directory``, replacing the window it covers.

    Parameters
    ----------
    frame : pandas.DataFrame
        A ``"transfers"`` or a ``"ledger"`` frame. Its window is its
        provenance's (what was asked for, so days with no rows are replaced
        too), else the span of its times.
    directory : str or Path
        Created when missing. A dataset holds one kind.

    Returns
    -------
    DatasetWrite

    Raises
    ------
    DataError
        If the frame follows neither kind, or the directory holds the other kind.
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    kind = kind_of(frame)
    frame = _keyed(frame, kind)
    column = _WHEN
    root = _directory(directory, create=True)
    manifest = _opened(root, kind)
    win = _window(frame, column)
    if win is None:
        days: list[pd.Timestamp] = []
    else:
        last = (win[1] - pd.Timedelta(1, "ns")).floor("D")
        days = list(pd.date_range(win[0].floor("D"), last, freq="D"))
    rows_of_day = frame.groupby(frame[column].dt.floor("D"), sort=False).indices
    labels = [day.strftime("%Y-%m-%d") for day in days]
    created = [lb for lb in labels if not (root / f"day={lb}").is_dir()]
    new_days = day_parts.NewDays(frame, kind, column, created)
    replaced = 0
    for day, label in zip(days, labels, strict=True):
        part = root / f"day={label}"
        if label in new_days:  # nothing to merge: its rows straight from one Arrow table
            storage.replace_directory_atomically(part, lambda tmp, lb=label: new_days.fill(tmp, lb))
            continue
        old = _read_day(part)
        fresh = frame.iloc[rows_of_day.get(day, [])]
        if old is not None and len(old):
            old = _keyed(_typed(old, kind), kind)
            old_times = pd.to_datetime(old[column], utc=True)
            inside = (old_times >= win[0]) & (old_times < win[1])
            replaced += int(inside.sum())
            keep = old.loc[~inside.to_numpy()]
            keep = keep[~keep["transfer_id"].isin(fresh["transfer_id"])]
            fresh = pd.concat([_typed(keep, kind), fresh], ignore_index=True)
        _swap_day(part, fresh, kind, column, label)
    writes = [*manifest.state.get("writes", []),
              (provenance(frame) or Provenance(source="unknown")).to_dict()]  # fmt: skip
    synthetic = any(bool(w.get("synthetic")) for w in writes if isinstance(w, dict))
    state = {**manifest.state, "writes": writes}
    storage.write_manifest(root, Manifest(kind, state, synthetic=synthetic))
    summary = DatasetWrite(
        str(root), kind, len(frame), tuple(d.strftime("%Y-%m-%d") for d in days), replaced
    )
    logger.info(
        "dataset %s: wrote %d rows over %d days, replaced %d", root, len(frame), len(days), replaced
    )
    return summary


def write_stream(
    frames: Iterable[pd.DataFrame], directory: str | os.PathLike[str], *, record: Provenance
) -> DatasetWrite:
    """Write ``ledger`` frames that come in time order into a new dataset at ``directory``.

    The same files, parts and manifest as :func:`write` gives the frames stacked (its
    provenance ``record``), a day at a time (:func:`~.day_parts.write_days`): the ledger
    never has to fit in memory. ``directory`` must be new or empty (a dataset is
    replaced whole by writing it in a temporary directory, as ``load`` does).

    Raises
    ------
    DataError
        If a row has no time, or a frame does not follow the ledger schema.
    ValueError
        If ``directory`` holds files, or the rows are not in time order.
    """
    root = _directory(directory, create=True)
    if any(root.iterdir()):
        raise ValueError(f"write_stream writes a new dataset; {str(root)!r} holds files")
    kind = "ledger"

    def keyed() -> Iterator[pd.DataFrame]:
        for frame in frames:
            yield _keyed(schema.validate(frame, kind), kind)

    rows, labels = day_parts.write_days(keyed(), root, kind)
    writes = [record.to_dict()]
    storage.write_manifest(root, Manifest(kind, {"writes": writes}, synthetic=record.synthetic))
    days = () if not labels else tuple(d.strftime("%Y-%m-%d") for d in pd.date_range(
        labels[0], labels[-1], freq="D"))  # fmt: skip
    logger.info("dataset %s: wrote %d rows over %d days", root, rows, len(days))
    return DatasetWrite(str(root), kind, rows, days, 0)


_INSTEAD = "write into a new directory"


def _manifest(root: Path) -> Manifest | None:
    """The dataset's manifest (refusing another format or kind), or ``None`` without one."""
    return storage.read_manifest(root, kinds=tuple(TIME_COLUMNS), instead=_INSTEAD)


def _required(root: Path) -> Manifest:
    manifest = _manifest(root)
    if manifest is None:
        raise DataError(f"{str(root)!r} is not a cctx_research dataset (no {storage.MANIFEST})")
    return manifest


def _opened(root: Path, kind: str) -> Manifest:
    """The manifest to write ``kind`` frames under; a dataset of the old layout is upgraded."""
    manifest = _manifest(root) or Manifest(kind, {"writes": []})
    if manifest.kind != kind:
        raise DataError(
            f"{str(root)!r} holds {manifest.kind!r} frames, not {kind!r}; "
            "write this one to another directory"
        )
    if manifest.format < storage.FORMAT:
        renamed = _rename_old_parts(root, kind)
        storage.write_manifest(root, Manifest(kind, manifest.state, synthetic=manifest.synthetic))
        logger.info("upgraded the dataset %s to the dataset format %d (%d parts renamed)",
                    root, storage.FORMAT, renamed)  # fmt: skip
    return manifest


def _rename_old_parts(root: Path, kind: str) -> int:
    """Name each partition's one part of the old layout (``part-<id>-0.parquet``) by what it
    covers; a partition holding several files keeps them as they are (any name reads)."""
    renamed = 0
    for folder in sorted(root.glob("day=*/source_chain=*")):
        files = sorted(folder.glob("*.parquet"))
        if len(files) != 1 or storage.parse_part(files[0].name) is not None:
            continue
        day = folder.parent.name.removeprefix("day=")
        chain = unquote(folder.name.removeprefix("source_chain="))
        part = Part(storage.slug(chain), kind, Chunk.day(day))
        os.replace(files[0], folder / part.name)
        renamed += 1
    return renamed


def _swap_day(part: Path, rows: pd.DataFrame, kind: str, column: str, day: str) -> None:
    """Rewrite one day's partition: its chains' parts in a temporary directory, swapped in."""

    def fill(tmp: Path) -> None:
        if not len(rows):
            return  # an empty day: the partition goes
        table = day_parts.arrow_table(rows, kind, column).drop_columns(["day"])
        chain_column = table.column("source_chain")
        day_parts.write_parts([
            (table.filter(pc.equal(chain_column, chain)).drop_columns(["source_chain"]),
             day_parts.part_path(tmp, chain, kind, day))
            for chain in pc.unique(chain_column).to_pylist()])  # fmt: skip

    storage.replace_directory_atomically(part, fill)


def _typed(frame: pd.DataFrame, kind: str) -> pd.DataFrame:
    out = frame.drop(columns=[c for c in ("day",) if c in frame.columns])
    spec = schema.dtypes(kind)
    for col, dtype in spec.items():
        if col not in out.columns:
            continue
        if isinstance(dtype, pd.CategoricalDtype):
            out[col] = schema.chain_categorical(out[col].astype(str).astype(object))
        elif isinstance(dtype, pd.DatetimeTZDtype):
            out[col] = pd.to_datetime(out[col], utc=True).astype(schema.TIMESTAMP)
        else:
            out[col] = out[col].astype(dtype)
    ordered = [c for c in spec if c in out.columns]
    return out[ordered + [c for c in out.columns if c not in spec]]


def read(
    directory: str | os.PathLike[str], *, columns: Sequence[str] | None = None
) -> pd.DataFrame:
    """Read a dataset back as one canonical frame (for data that fits in memory).

    For data that does not, point an engine at the directory instead (see
    the module docstring); the analysis functions take its frames as they are.

    Parameters
    ----------
    directory : str or Path
    columns : sequence of str, optional
        Read only these.

    Returns
    -------
    pandas.DataFrame
        Of the dataset's kind, sorted by time, with provenance naming the
        directory (synthetic when any write was).
    """
    root = _directory(directory, create=False)
    manifest = _required(root)  # a dataset of the old layout is read as it is
    kind = manifest.kind
    files = sorted(p for p in root.glob("day=*/**/*.parquet") if p.is_file())
    if files:
        dataset = ds.dataset(
            [str(p) for p in files],
            format="parquet",
            partitioning=ds.partitioning(_PARTITIONS, flavor="hive"),
            partition_base_dir=str(root),
        )
        table = dataset.to_table(columns=list(columns) if columns is not None else None)
        frame = _typed(table.to_pandas(), kind)
    else:
        frame = schema.empty(kind)
        if columns is not None:
            frame = frame[list(columns)]
    if kind == "ledger":  # a partition key only: the ledger has source_domain
        frame = frame.drop(columns=["source_chain"], errors="ignore")
    time_column = TIME_COLUMNS[kind]
    if time_column in frame.columns:
        frame = frame.sort_values(time_column, kind="stable").reset_index(drop=True)
    attach(
        frame,
        Provenance(
            source=f"dataset {root}",
            synthetic=manifest.synthetic,
            operation="read",
            files=(str(root),),
            format="cctx-dataset",
            counts={"files": len(files), "rows": len(frame)},
        ),
    )
    return frame


def _day_files(root: Path) -> list[list[str]]:
    return [
        sorted(str(p) for p in day.glob("source_chain=*/*.parquet"))
        for day in sorted(root.glob("day=*"))
        if day.is_dir()
    ]


def _read_day_files(
    files: list[str], *, kind: str, root: str, columns: list[str] | None = None
) -> pd.DataFrame:
    # ``columns``: Dask pushes the analysis's column selection down to here
    dataset = ds.dataset(
        files,
        format="parquet",
        partitioning=ds.partitioning(_PARTITIONS, flavor="hive"),
        partition_base_dir=root,
    )
    frame = _typed(dataset.to_table(columns=columns).to_pandas(), kind)
    # Chains as plain strings: a Dask categorical whose categories differ by
    # partition is "unknown", and grouping by it computes everything first.
    for col in ("source_chain", "destination_chain"):
        if col in frame.columns:
            frame[col] = frame[col].astype(str).astype(schema.STRING)
    return frame


def scan(directory: str | os.PathLike[str], *, engine: str, connection: Any = None) -> Any:
    """A lazy frame of ``engine`` over the dataset, for the analysis functions.

    Parameters
    ----------
    directory : str or Path
    engine : {"polars", "duckdb", "dask"}
        ``"polars"``: a ``LazyFrame`` (``scan_parquet``); ``"duckdb"``: a
        relation of ``connection`` (default: DuckDB's default connection);
        ``"dask"``: a ``DataFrame`` with one partition per day, computed on
        the active ``dask.distributed`` client if there is one.

    Returns
    -------
    The engine's lazy frame; nothing is read until the analysis asks.

    Examples
    --------
    >>> lazy = scan("transfers/", engine="polars")  # doctest: +SKIP
    >>> flows.matrix(lazy)  # doctest: +SKIP
    """
    if not isinstance(engine, str) or engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(map(repr, ENGINES))}, got {engine!r}")
    root = _directory(directory, create=False)
    kind = _required(root).kind
    pattern = str(root / "day=*" / "source_chain=*" / "*.parquet")
    try:
        if engine == "polars":
            import polars as pl

            return pl.scan_parquet(pattern, hive_partitioning=True).drop("day")
        if engine == "duckdb":
            import duckdb

            con = connection if connection is not None else duckdb.default_connection()
            return con.read_parquet(pattern, hive_partitioning=True)
        import dask.dataframe as dd
    except ImportError as exc:
        raise ImportError(
            f"scan(engine={engine!r}) needs {engine}: pip install 'cctx-research[engines]'"
        ) from exc
    groups = _day_files(root)
    meta = schema.empty(kind) if not groups else _read_day_files(groups[0], kind=kind,
                                                                 root=str(root)).iloc[:0]
    if not groups:
        return dd.from_pandas(meta, npartitions=1)
    return dd.from_map(_read_day_files, groups, kind=kind, root=str(root), meta=meta)
