"""The parts of a dataset's days, from one Arrow table: the fast path of a first write.

:func:`cctx_research.ingest.datasets.write` merges a day already on disk with the new rows
frame by frame; a day it creates has nothing to merge, so its rows are converted to Arrow
once for all such days, ordered by day and chain, and sliced into the parts.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from urllib.parse import quote

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .. import storage
from ..storage import Chunk, Part

__all__ = ["WHEN", "NewDays", "arrow_table", "run_starts"]

WHEN = "__when"
"""The column of a keyed frame holding the time each row is filed by."""


def arrow_table(frame: pd.DataFrame, kind: str, column: str) -> pa.Table:
    """``frame`` (with its partition keys) as the Arrow table its parts hold, plus ``day``."""
    out = frame.drop(columns=[WHEN], errors="ignore")
    out.attrs = {}
    out["day"] = frame[column].dt.strftime("%Y-%m-%d")
    out["source_chain"] = out["source_chain"].astype(str)
    # Microseconds on disk: every engine reads them fully (DuckDB's support of
    # nanosecond zoned timestamps is partial), and the data has no finer times.
    for col in out.columns:
        if isinstance(out[col].dtype, pd.DatetimeTZDtype):
            out[col] = out[col].astype("datetime64[us, UTC]")
    return pa.Table.from_pandas(out, preserve_index=False)


class NewDays:
    """The rows of the days a write creates, as one Arrow table ordered by day and chain.

    Converting the frame once and slicing it is what makes a first write of a long history
    fast; the rows keep their order within a partition (the sort is stable), as the
    day-by-day path keeps it.
    """

    def __init__(self, frame: pd.DataFrame, kind: str, column: str, labels: list[str]) -> None:
        self.kind = kind
        self.runs: dict[str, list[tuple[str, pa.Table]]] = {}
        if not labels:
            return
        table = arrow_table(frame, kind, column)
        order = pc.sort_indices(table, sort_keys=[("day", "ascending"),
                                                  ("source_chain", "ascending")])  # fmt: skip
        table = table.take(order)
        keys = pa.table({"day": table.column("day"), "chain": table.column("source_chain")})
        wanted = set(labels)
        body = table.drop_columns(["day", "source_chain"])
        starts = run_starts(keys)
        for begin, end in itertools.pairwise(starts):
            day = keys.column("day")[begin].as_py()
            if day in wanted:
                chain = keys.column("chain")[begin].as_py()
                self.runs.setdefault(day, []).append((chain, body.slice(begin, end - begin)))
        self.labels = wanted

    def __contains__(self, label: str) -> bool:
        return label in self.runs or label in getattr(self, "labels", ())

    def fill(self, tmp: Path, label: str) -> None:
        """Write day ``label``'s parts, one a chain, into ``tmp``."""
        for chain, rows in self.runs.get(label, []):
            folder = tmp / f"source_chain={quote(chain, safe='')}"
            folder.mkdir()
            name = Part(storage.slug(chain), self.kind, Chunk.day(label)).name
            pq.write_table(rows, folder / name)


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
