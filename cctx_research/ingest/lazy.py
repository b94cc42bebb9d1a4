"""``load``'s ledger as a dataset on disk, and an engine's lazy frame over it.

``cctx.load(..., engine="duckdb")`` (or ``"polars"``, ``"dask"``) writes the
ledger it built as a partitioned ``ledger`` dataset (``docs/datasets.md``:
by burn day and source chain, with its manifest) and returns the engine's
lazy frame over it (:func:`cctx_research.ingest.datasets.scan`), so the
analyses run in the engine and read from disk. ``out=`` says where the
dataset goes; without it, a new temporary directory (``cctx-ledger-*``
under the system's temporary directory) that stays after ``load`` returns,
since the lazy frame reads from it, and is removed when the Python process
exits (a ledger of the whole history is gigabytes: pass ``out=`` to keep it).

The dataset is written whole in a temporary directory beside ``out`` and
then takes its place (:func:`cctx_research.storage.replace_directory_atomically`):
a failure or Ctrl-C while writing leaves ``out`` as it was (absent, or the
previous ledger), never half written.
"""

from __future__ import annotations

import atexit
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from .. import storage
from ..errors import DataError
from ..scratch import scratch_directory

__all__ = ["LOAD_ENGINES", "check", "stream_and_scan", "write_and_scan"]

LOAD_ENGINES: tuple[str, ...] = ("pandas", "polars", "duckdb", "dask")
"""What ``load(engine=...)`` returns: a DataFrame (``"pandas"``) or an engine's lazy frame."""


def check(engine: Any, out: Any) -> Path | None:
    """Validate ``load``'s ``engine`` and ``out`` before anything is read; ``out`` as a Path.

    Raises
    ------
    ValueError
        If ``engine`` is not one of :data:`LOAD_ENGINES`, or ``out`` is a file.
    TypeError
        If ``out`` is not a path.
    DataError
        If ``out`` is a directory holding something other than a ledger dataset.

    Examples
    --------
    >>> check("duckdb", None) is None
    True
    >>> check("spark", None)
    Traceback (most recent call last):
    ...
    ValueError: engine must be one of 'pandas', 'polars', 'duckdb', 'dask', got 'spark'
    """
    if not isinstance(engine, str) or engine not in LOAD_ENGINES:
        raise ValueError(
            f"engine must be one of {', '.join(map(repr, LOAD_ENGINES))}, got {engine!r}"
        )
    if out is None:
        return None
    if not isinstance(out, (str, os.PathLike)):
        raise TypeError(f"out must be a directory path (str or Path), got {type(out).__name__}")
    path = Path(out).expanduser()
    if path.exists() and not path.is_dir():
        raise ValueError(f"out={str(path)!r} is a file; pass a directory for the ledger dataset")
    if path.is_dir() and any(path.iterdir()) and storage.dataset_kind(path) != "ledger":
        raise DataError(
            f"out={str(path)!r} holds files that are not a ledger dataset; "
            "load replaces the whole directory",
            hint="pass a new directory, or one a previous load(..., out=) wrote",
        )
    return path


def write_and_scan(
    ledger: pd.DataFrame, out: Path | None, engine: str, report: Callable[..., None] | None = None
) -> Any:
    """Write ``ledger`` as the dataset at ``out`` (atomically; a temporary directory when
    ``out`` is None) and return ``engine``'s lazy frame over it (``ledger`` for pandas);
    ``report`` (:class:`~cctx_research.ingest.steps.Reporter`) hears the write start and end."""
    from . import datasets  # on first use: ``import cctx_research`` loads no dataset code

    scanned = stream_and_scan(lambda tmp: datasets.write(ledger, tmp), out, engine, report)
    return ledger if engine == "pandas" else scanned


def stream_and_scan(
    write: Callable[[Path], object],
    out: Path | None,
    engine: str,
    report: Callable[..., None] | None = None,
) -> Any:
    """``write(directory)`` fills the dataset at ``out`` (atomically, as :func:`write_and_scan`
    does), and ``engine``'s lazy frame over it is returned (``None`` for pandas).

    ``write`` streams the ledger into the dataset
    (:func:`cctx_research.ingest.datasets.write_stream`): the ledger is never a whole frame.
    """
    from . import datasets

    if out is None:
        out = scratch_directory("cctx-ledger-")
        # the lazy frame reads it for as long as the process runs; no later process can
        # know the name, so nothing is left behind to fill the disk (a process killed
        # outright leaves it: the next one of its kind removes it)
        atexit.register(shutil.rmtree, out, ignore_errors=True)
    if report is not None:
        report("write")
    storage.replace_directory_atomically(out, write)
    if report is not None:
        report("write", done=1)
    if engine == "pandas":
        return None
    return datasets.scan(out, engine=engine)
