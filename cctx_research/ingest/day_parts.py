"""The parts of a dataset's days, from one Arrow table: the fast path of a first write.

:func:`cctx_research.ingest.datasets.write` merges a day already on disk with the new rows
frame by frame; a day it creates has nothing to merge, so its rows are converted to Arrow
once for all such days, ordered by day and chain, and sliced into the parts.
"""

from __future__ import annotations

import concurrent.futures as cf
import itertools
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .. import storage
from ..storage import Chunk, Part

__all__ = ["WHEN", "WRITERS", "NewDays", "arrow_table", "part_path", "run_starts", "write_days",
           "write_parts"]

WHEN = "__when"

BATCH_ROWS = 200_000
"""Rows converted to Arrow at a time (whole days: a batch ends at the first day past it)."""

_DAY_NS = 86_400 * 10**9
"""The column of a keyed frame holding the time each row is filed by."""

WRITERS = min(4, os.cpu_count() or 1)
"""Parquet parts written at once. pyarrow encodes and writes a file without holding the GIL,
and a day's parts (one a chain, a few hundred rows each in a large load) are many small
files: written one after the other, one core waits on each in turn."""


def part_path(day: Path, chain: str, kind: str, label: str) -> Path:
    """Where a chain's part of day ``label`` goes in the day's folder ``day``: in its chain's
    folder (made), the value spelt as pyarrow's hive partitioning spells it (percent-encoded)."""
    folder = day / f"source_chain={quote(chain, safe='')}"
    folder.mkdir()
    return folder / Part(storage.slug(chain), kind, Chunk.day(label)).name


def write_parts(parts: Sequence[tuple[pa.Table, Path]]) -> None:
    """Write each ``(table, path)`` as a Parquet file, :data:`WRITERS` at a time.

    Every write has ended when this returns or raises; the first that failed is raised
    then. Interrupted, it drops the writes not begun (the caller's temporary directory
    goes with them).
    """
    if WRITERS < 2 or len(parts) < 2:
        for table, path in parts:
            pq.write_table(table, path)
        return
    pool = cf.ThreadPoolExecutor(min(WRITERS, len(parts)), thread_name_prefix="cctx-parts")
    try:
        jobs = [pool.submit(pq.write_table, table, path) for table, path in parts]
        cf.wait(jobs)
    finally:  # stopped (Ctrl-C): the writes not begun are dropped, those under way end
        pool.shutdown(wait=True, cancel_futures=True)
    for job in jobs:
        job.result()


def _day_labels(times: pd.Series) -> pd.Series:
    """Each time's day as ``YYYY-MM-DD`` text: each distinct day formatted once (a batch
    holds a few days over hundreds of thousands of rows)."""
    codes, days = pd.factorize(times.dt.floor("D"))
    if (codes < 0).any():  # a missing time: formatted row by row, as it always was
        return times.dt.strftime("%Y-%m-%d")
    labels = pd.Series(days).dt.strftime("%Y-%m-%d")
    return pd.Series(labels.array.take(codes), index=times.index, name=times.name)


def arrow_table(frame: pd.DataFrame, kind: str, column: str) -> pa.Table:
    """``frame`` (with its partition keys) as the Arrow table its parts hold, plus ``day``."""
    out = frame.drop(columns=[WHEN], errors="ignore")
    out.attrs = {}
    out["day"] = _day_labels(frame[column])
    out["source_chain"] = out["source_chain"].astype(str)
    # Microseconds on disk: every engine reads them fully (DuckDB's support of
    # nanosecond zoned timestamps is partial), and the data has no finer times.
    for col in out.columns:
        if isinstance(out[col].dtype, pd.DatetimeTZDtype):
            out[col] = out[col].astype("datetime64[us, UTC]")
    return pa.Table.from_pandas(out, preserve_index=False)


class NewDays:
    """The rows of the days a write creates, ordered by day and chain, a batch at a time.

    The rows are sorted once (numpy, stable: rows keep their order within a partition, as
    the day-by-day path keeps them) and converted to Arrow in batches of whole days of about
    :data:`BATCH_ROWS` rows, each sliced into its parts: few conversions, and memory for one
    batch, not a second copy of the frame.
    """

    def __init__(self, frame: pd.DataFrame, kind: str, column: str, labels: list[str]) -> None:
        self.frame, self.kind, self.column = frame, kind, column
        self.labels = set(labels)
        self.batches: list[tuple[set[str], np.ndarray]] = []
        self.current: tuple[int, dict[str, list[tuple[str, pa.Table]]]] | None = None
        if not labels:
            return
        day = frame[column].array.asi8 // _DAY_NS
        chain = pd.factorize(frame["source_chain"])[0]  # the order of parts in a day is free
        label_of = {d: pd.Timestamp(d * _DAY_NS, tz="UTC").strftime("%Y-%m-%d")
                    for d in np.unique(day).tolist()}  # fmt: skip
        rows = np.flatnonzero(np.isin(day, [d for d, lb in label_of.items() if lb in self.labels]))
        order = rows[np.lexsort((chain[rows], day[rows]))]
        days = day[order]
        ends = [*np.flatnonzero(days[1:] != days[:-1]).__add__(1).tolist(), len(order)]
        begin = 0
        for end in ends:  # each day's end: a batch closes at the first past BATCH_ROWS
            if end - begin >= BATCH_ROWS or end == len(order):
                covered = {label_of[d] for d in np.unique(days[begin:end]).tolist()}
                self.batches.append((covered, order[begin:end]))
                begin = end

    def __contains__(self, label: str) -> bool:
        return label in self.labels

    def _runs(self, label: str) -> list[tuple[str, pa.Table]]:
        for b, (covered, rows) in enumerate(self.batches):
            if label not in covered:
                continue
            if self.current is None or self.current[0] != b:
                table = arrow_table(self.frame.iloc[rows], self.kind, self.column)
                keys = pa.table({"day": table.column("day"), "chain": table.column("source_chain")})
                body = table.drop_columns(["day", "source_chain"])
                runs: dict[str, list[tuple[str, pa.Table]]] = {}
                for begin, end in itertools.pairwise(run_starts(keys)):
                    runs.setdefault(keys.column("day")[begin].as_py(), []).append(
                        (keys.column("chain")[begin].as_py(), body.slice(begin, end - begin)))
                self.current = (b, runs)
            return self.current[1].get(label, [])
        return []

    def parts(self, tmp: Path, label: str) -> list[tuple[pa.Table, Path]]:
        """Day ``label``'s parts, one a chain, and their paths in ``tmp`` (folders made)."""
        return [(rows, part_path(tmp, chain, self.kind, label))
                for chain, rows in self._runs(label)]

    def fill(self, tmp: Path, label: str) -> None:
        """Write day ``label``'s parts, one a chain, into ``tmp``."""
        write_parts(self.parts(tmp, label))


def run_starts(keys: pa.Table) -> list[int]:
    """Where each run of equal rows of the sorted ``keys`` begins, and the end."""
    n = keys.num_rows
    if n == 0:
        return [0]
    changed = None
    for name in keys.column_names:
        col = keys.column(name).combine_chunks()
        diff = pc.not_equal(col.slice(1), col.slice(0, n - 1))
        changed = diff if changed is None else pc.or_(changed, diff)
    where = pc.indices_nonzero(changed).to_numpy() + 1
    return [0, *where.tolist(), n]


def write_days(frames: Iterable[pd.DataFrame], root: Path, kind: str) -> tuple[int, list[str]]:
    """Write keyed ``frames`` (a :data:`WHEN` column, in time order) as new days under ``root``.

    Rows are held until whole days of about :data:`BATCH_ROWS` rows have come (a day
    ends when a row of a later day arrives), then written as :class:`NewDays` writes them
    (one part a chain, rows in the order they came): memory for a batch, not the
    dataset. Returns the rows written and the days' labels.

    Raises
    ------
    ValueError
        If a row comes before the day already written (the frames are not in time order).
    """
    held: list[pd.DataFrame] = []
    held_rows, last_day = 0, None
    labels: list[str] = []

    def flush() -> None:
        frame = held[0] if len(held) == 1 else pd.concat(held, ignore_index=True)
        days = np.unique(frame[WHEN].array.asi8 // _DAY_NS).tolist()
        names = [pd.Timestamp(d * _DAY_NS, tz="UTC").strftime("%Y-%m-%d") for d in days]
        parts = NewDays(frame, kind, WHEN, names)
        files = []
        for label in names:  # the batch's days written at once: no wait at each day's end
            (root / f"day={label}").mkdir()
            files += parts.parts(root / f"day={label}", label)
        write_parts(files)
        labels.extend(names)
        held.clear()

    rows = 0
    for frame in frames:
        if not len(frame):
            continue
        day = frame[WHEN].array.asi8 // _DAY_NS
        if (day[1:] < day[:-1]).any() or (last_day is not None and day[0] < last_day):
            raise ValueError("write_days needs its rows in time order; sort them by "
                             f"{WHEN!r} first")  # fmt: skip
        starts = [0, *(np.flatnonzero(day[1:] != day[:-1]) + 1).tolist(), len(frame)]
        for begin, end in itertools.pairwise(starts):
            if held_rows >= BATCH_ROWS and day[begin] != last_day:  # a batch of whole days
                flush()
                held_rows = 0
            held.append(frame.iloc[begin:end])
            held_rows += end - begin
            last_day = int(day[begin])
        rows += len(frame)
    if held:
        flush()
    return rows, labels
