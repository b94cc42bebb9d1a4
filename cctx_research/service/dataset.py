"""A ledger dataset served as it lies on disk: read a column at a time, never as one frame.

``serve --data DIR`` and ``dashboard --data DIR`` of a ledger dataset (what
``sync`` and ``load(..., out=DIR)`` write: a Parquet file a day and source
chain) or of a sync directory holding one would otherwise read the whole
ledger into pandas first, a Python string a hash and an address, which a
whole history does not fit. A :class:`LedgerDataset` instead hands the
store's index (:class:`~cctx_research.service.index.LedgerIndex`) one Arrow
column at a time, only the columns the interface serves; the index keeps
its compact arrays and drops each column once encoded. The index is the
same code for a frame and a dataset, so both answer alike (the tests hold
every operation's answer equal between them).

What the service does to a frame (:func:`~cctx_research.service.loading.for_service`)
is done here in Arrow: rows with neither a burn nor a mint time are left out
(with the same warning), a missing address is served as the zero address,
and a time with a fraction of a second is refused or floored.
"""

from __future__ import annotations

import hashlib
import logging
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import schema, storage
from ..errors import CctxWarning, DataError

__all__ = ["SERVED", "LedgerDataset", "ledger_dataset"]

logger = logging.getLogger(__name__)

ZERO_ADDRESS = "0x" + "0" * 40
_TIMES = ("burn_timestamp", "mint_timestamp")
_INTEGERS = ("source_domain", "destination_domain", "amount_raw", "burn_block", "mint_block")
_STRINGS = ("transfer_id", "burn_tx_hash", "mint_tx_hash", *schema.ADDRESS_COLUMNS)
SERVED: tuple[str, ...] = (*_TIMES, *_INTEGERS, *_STRINGS)
"""The ledger's columns the interface's answers are made of; the others are not read."""
_GROUPS = (
    (*_TIMES, *_INTEGERS, "transfer_id"),
    *((name,) for name in (*schema.ADDRESS_COLUMNS, "burn_tx_hash", "mint_tx_hash")),
)
"""Columns read in one pass over the files: the small ones together (a dataset is
thousands of small files, and each pass opens them all), then each address and hash
column alone, so that one wide text column at a time is in memory. A pass reads ahead
the groups not yet read while they fit :data:`PASS_BYTES`: a small dataset is read in
two passes (the first one counts the rows), a whole history a group at a time."""
PASS_BYTES = 128 * 2**20
"""What one pass over the files may bring into memory, estimated at :data:`_TEXT_BYTES`
a row and column (a 0x hash, the widest, is 66 characters and an offset)."""
_TEXT_BYTES = 80
_PATTERN = ("day=*", "source_chain=*", "*.parquet")
_NS = 1_000_000_000


def ledger_dataset(path: str | Path) -> Path | None:
    """The ledger dataset ``path`` names (itself, or a sync directory's ``ledger/``), or None.

    A file, or a directory of another kind, is None: :func:`cctx_research.load`
    reads it into a frame.
    """
    path = Path(path).expanduser()
    if path.is_dir() and storage.dataset_kind(path) == "sync":
        found = storage.sync_ledger(path)
        path = found if found is not None else path
    if path.is_dir() and storage.dataset_kind(path) == "ledger":
        return path
    return None


class LedgerDataset:
    """The served columns of a ledger dataset, read one at a time, in one fixed row order.

    Parameters
    ----------
    path : str or Path
        A ledger dataset directory (see :func:`ledger_dataset`).
    fractions : {"refuse", "floor"}
        Times with a fraction of a second: an error naming them, or served
        to the second with a warning (as :func:`~.loading.for_service`).

    Attributes
    ----------
    files : tuple of Path
        The dataset's Parquet files, in the order their rows are read.
    synthetic : bool
        Its manifest says it is synthetic.
    counts : dict of str to int
        Its served transfers ``paired`` (burned and minted), ``pending``
        (burned, not minted) and ``mint_only`` (a mint whose burn is not in it).

    Raises
    ------
    DataError
        If it is not a ledger dataset, lacks a served column, or a time has
        a fraction of a second (``fractions="refuse"``).
    """

    def __init__(self, path: str | Path, *, fractions: str = "refuse") -> None:
        if fractions not in ("refuse", "floor"):
            raise ValueError(f"fractions must be 'refuse' or 'floor', got {fractions!r}")
        self.path = Path(path).expanduser()
        manifest = storage.read_manifest(self.path, kinds=("ledger",), instead="pass a ledger")
        self.synthetic = bool(manifest is not None and manifest.synthetic)
        self.files = tuple(sorted(self.path.glob("/".join(_PATTERN))))
        self._check_columns()
        self._fractions = fractions
        self._keep: pa.Array | None = None
        self._held: dict[str, pa.ChunkedArray] = {}
        self._unread = list(_GROUPS)
        self._rows: int | None = None
        times = {name: self._read(name) for name in _TIMES}
        self._held.update(times)
        self._check_fractions(times)
        burned, minted = (pc.is_valid(times[name]) for name in _TIMES)
        self.counts = {
            "paired": _count(pc.and_(burned, minted)),
            "pending": _count(pc.and_not(burned, minted)),
            "mint_only": _count(pc.and_not(minted, burned)),
        }
        timeless = pc.and_(pc.is_null(times[_TIMES[0]]), pc.is_null(times[_TIMES[1]]))
        dropped = _count(timeless)
        if dropped:
            logger.warning(
                "%d transfers have no burn or mint time and are not served; load event logs "
                "with a blocks file (blocks=) or with blockTimestamp to serve them",
                dropped,
            )
            self._keep = pc.invert(timeless.combine_chunks())
        self._n = len(times[_TIMES[0]]) - dropped
        logger.info(
            "ledger dataset %s: %d transfers in %d files, indexed a column at a time",
            self.path, self._n, len(self.files),
        )  # fmt: skip

    def __len__(self) -> int:
        return self._n

    def __repr__(self) -> str:
        return f"<LedgerDataset {self.path} ({self._n} transfers, {len(self.files)} files)>"

    def __getitem__(self, name: str) -> pa.ChunkedArray:
        """One served column of every served row, as the service serves it."""
        if name not in SERVED:
            raise KeyError(f"{name!r} is not a column the service reads; it reads {SERVED}")
        column = self._read(name)
        if self._keep is not None:
            column = column.filter(self._keep)
        if name in schema.ADDRESS_COLUMNS and column.null_count:
            column = pc.fill_null(column, pa.scalar(ZERO_ADDRESS, column.type))
        if name in _TIMES and self._fractions == "floor":
            column = pc.floor_temporal(column, unit="second")
        return column

    def digest(self) -> str:
        """A digest of the files' names, sizes and modification times: it changes with the data."""
        h = hashlib.sha256()
        for path in (storage.manifest_path(self.path), *self.files):
            stat = path.stat()
            h.update(
                f"{path.relative_to(self.path)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode()
            )
        return h.hexdigest()[:16]

    def _read(self, name: str) -> pa.ChunkedArray:
        """``name`` of every row, file after file (the one row order every column shares).

        The columns of ``name``'s group are read with it and held until asked for
        (each is given once, then dropped: the index keeps its own arrays)."""
        if name not in self._held:
            # what earlier columns left in Arrow's pool goes back before the next pass
            pa.default_memory_pool().release_unused()
            columns = self._pass(next(g for g in _GROUPS if name in g))
            read = self._dataset.to_table(columns=columns)  # in file order
            self._held.update({c: read.column(c) for c in columns})
            self._rows = read.num_rows
            del read
        return self._held.pop(name)

    def _pass(self, group: tuple[str, ...]) -> list[str]:
        """``group``, then the groups never read yet while the pass fits :data:`PASS_BYTES`
        (a column asked for again is read again, alone)."""
        if group not in self._unread:
            return list(group)
        self._unread.remove(group)
        columns = list(group)
        while self._rows is not None and self._unread:
            more = columns + list(self._unread[0])
            if len(more) * self._rows * _TEXT_BYTES > PASS_BYTES:
                break
            columns = more
            self._unread.pop(0)
        return columns

    def _check_columns(self) -> None:
        # here, not at the top: the in-process sample's service never opens a dataset
        import pyarrow.dataset as ds
        import pyarrow.parquet as pq

        if not self.files:
            raise DataError(
                f"the ledger dataset {str(self.path)!r} holds no Parquet files",
                hint="build it again (cctx-research sync, or load(..., out=DIR))",
            )
        held = pq.read_schema(self.files[0])
        missing = [c for c in SERVED if c not in held.names]
        if missing:
            raise DataError(
                f"the ledger dataset {str(self.path)!r} lacks the column(s) {missing}",
                hint="build it again with this version (cctx-research sync, or load(..., out=DIR))",
            )
        served = pa.schema([held.field(c) for c in SERVED])
        self._dataset = ds.dataset([str(f) for f in self.files], schema=served, format="parquet")

    def _check_fractions(self, times: dict[str, pa.ChunkedArray]) -> None:
        """The interface carries whole seconds: refuse a finer time, or say how many are cut."""
        cut = 0
        for name, column in times.items():
            seconds = pc.floor_temporal(column, unit="second")
            finer = pc.fill_null(pc.not_equal(column, seconds), False)
            count = int(pc.sum(finer).as_py() or 0)
            if count and self._fractions == "refuse":
                rows = (np.flatnonzero(finer.to_numpy(zero_copy_only=False)) + 1)[:5]
                raise DataError(
                    f"column {name!r} has {count} time(s) with a fraction of a second "
                    f"(row {', row '.join(map(str, rows))}); the interface carries whole "
                    "seconds, so serving them would cut them",
                    hint="analyse the dataset directly with cctx_research.load(DIR, "
                    "engine='duckdb'), which keeps them exactly",
                )
            cut += count
        if cut:
            warnings.warn(
                CctxWarning(
                    f"{cut} time(s) with a fraction of a second are served to the second "
                    "(the interface carries whole seconds); the ledger itself keeps them exactly"
                ),
                stacklevel=4,
            )


def _count(mask: pa.ChunkedArray) -> int:
    return int(pc.sum(mask).as_py() or 0)
