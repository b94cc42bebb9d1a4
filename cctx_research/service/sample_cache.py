"""The synthetic sample, built once: whole UTC days kept in the cache directory.

:func:`~.sample.generate` asks this module for the days its window touches.
The transfers of a UTC day depend only on the generator, ``per_day``, the
seed and the day (see :mod:`.sample`), never on the clock, so each day is
built once and kept; later starts read it back (memory-mapped):

::

    <cache_dir>/sample/v<GENERATOR_VERSION>-<key>/
        _cctx.json                                  manifest, kind "sample"
        sample__ledger__day_2026-11-20.arrow        one UTC day's transfers

``<cache_dir>`` is ``CCTX_CACHE_DIR``, else the platform's user cache
directory (:func:`cctx_research.config.cache_dir`). ``<key>`` hashes
everything that shapes a day: :data:`~.sample.GENERATOR_VERSION`, ``per_day``,
the seed, the calibration table and the text of the generator's modules (so
a changed generator never reads an old day, even before its version is
bumped). The manifest names the same; a directory whose manifest names
anything else is emptied and rebuilt.

The live sample (no ``as_of``) is reused across processes and days: its
window ``(now - days, now]`` is cut by :func:`~.sample.generate` from whole
days, today's included (today's file holds the whole day's burns, those after
``now`` too, and is cut again on every start). Only a day never built before
costs a build.

Each day is a sealed Arrow IPC file (:mod:`cctx_research._sealed`: a
checksum and a length after the Arrow bytes) whose metadata names its
parameters and day: a damaged, truncated or foreign file is removed and the
day built again, never trusted. A cache directory that cannot be written
gives a :class:`~cctx_research.errors.CacheWarning` and the days are built in
memory (read from it when it holds them). A build of more than two days shows
a progress bar (tqdm: a terminal's or a notebook's).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import warnings
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from .. import storage
from .._sealed import seal, unseal
from ..config import cache_dir
from ..errors import CacheWarning, DataError, LargeResultWarning

__all__ = ["LARGE_ROWS", "ROW_BYTES", "ledger_days", "sample_directory"]

logger = logging.getLogger(__name__)

KIND = "sample"
LARGE_ROWS = 1_000_000
"""Above this many transfers (about a year at the default rate) a request is warned about
before it is built, with its size."""
ROW_BYTES = 750
"""Memory of one ledger row in pandas (measured on the default sample: about 750 bytes, deep)."""
_META = b"cctx.sample"
_GENERATOR_MODULES = ("sample.py", "sample_actors.py", "sample_tables.py")


def sample_directory(per_day: int, seed: int, root: Path | None = None) -> Path:
    """Where the days of the sample of ``per_day`` and ``seed`` are kept."""
    from .sample import GENERATOR_VERSION

    identity = _identity(per_day, seed)
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]
    return (cache_dir() if root is None else root) / KIND / f"v{GENERATOR_VERSION}-{digest}"


def ledger_days(
    days: Iterable[pd.Timestamp],
    build: Callable[[pd.Timestamp], pd.DataFrame],
    *,
    per_day: int,
    seed: int,
    what: str = "the synthetic sample",
    progress: bool | None = None,
) -> pd.DataFrame:
    """The transfers of each UTC day in ``days`` (in order), read from the cache or built.

    Parameters
    ----------
    days : iterable of Timestamp
        Midnights (UTC).
    build : callable
        Builds one day's ledger frame (:func:`~.sample.generate_day`).
    per_day, seed : int
        The parameters ``build`` uses, resolved (they key the cache).
    what : str
        The request, for the warning about a large one and the progress bar.
    progress : bool, optional
        Show a bar while more than two days are built. Default: when stderr
        is a terminal or in a notebook, never in CI (:func:`~cctx_research.net.progress.wanted`).

    Warns
    -----
    LargeResultWarning
        Before building more than :data:`LARGE_ROWS` transfers: their number and memory.
    CacheWarning
        The cache directory cannot be used: days are built in memory.
    """
    days = list(days)
    if not days:
        raise ValueError("ledger_days needs at least one day")
    directory = sample_directory(per_day, seed)
    writable = _prepare(directory, per_day, seed)
    readable = writable or directory.is_dir()  # a read-only cache still serves its days
    tables: list[pa.Table | None] = _read_days(directory, days) if readable else [None] * len(days)
    missing = [i for i, t in enumerate(tables) if t is None]
    _warn_if_large(len(days) * per_day, len(missing), what)
    if missing:
        for i in _progress(missing, what, kept=writable, progress=progress):
            frame = build(days[i])
            table = pa.Table.from_pandas(frame, preserve_index=False)
            table = table.replace_schema_metadata(
                {**(table.schema.metadata or {}), _META: _stamp(days[i]).encode()}
            )
            if writable:
                writable = _write(directory / _name(days[i]), table)
            tables[i] = table
    return pa.concat_tables(tables).to_pandas()


# --------------------------------------------------------------------------
# the directory and its manifest


def _identity(per_day: int, seed: int) -> dict[str, Any]:
    from .sample import GENERATOR_VERSION
    from .sample_tables import calibration

    here = Path(__file__).parent
    source = hashlib.sha256()
    for name in _GENERATOR_MODULES:
        with contextlib.suppress(OSError):
            source.update((here / name).read_bytes())
    return {
        "generator_version": GENERATOR_VERSION,
        "per_day": int(per_day),
        "seed": int(seed),
        "calibration": hashlib.sha256(
            json.dumps(calibration(), sort_keys=True, default=str).encode()
        ).hexdigest()[:16],
        "generator": source.hexdigest()[:16],
    }


def _prepare(directory: Path, per_day: int, seed: int) -> bool:
    """Make ``directory`` hold this sample's days; ``False`` when it cannot be written."""
    identity = _identity(per_day, seed)
    try:
        manifest = storage.read_manifest(directory, kinds=(KIND,), instead="rebuilding it")
    except DataError as exc:
        logger.warning("the cached sample at %s is rebuilt: %s", directory, exc)
        manifest = None
        _empty(directory)
    if manifest is not None and manifest.state == identity:
        return _can_write(directory)
    if manifest is not None:
        logger.warning("the cached sample at %s was built by another generator: rebuilt", directory)
        _empty(directory)
    try:
        storage.write_manifest(directory, storage.Manifest(KIND, identity, synthetic=True))
    except OSError as exc:
        _cannot_cache(directory, exc)
        return False
    return True


def _can_write(directory: Path) -> bool:
    try:
        probe = storage.replace_atomically(directory / ".probe", lambda tmp: tmp.write_bytes(b""))
        probe.unlink()
    except OSError as exc:
        _cannot_cache(directory, exc)
        return False
    return True


def _cannot_cache(directory: Path, exc: OSError) -> None:
    message = (
        f"the cache directory {directory} cannot be written ({exc.strerror or exc}): the "
        "synthetic sample is built in memory and built again on the next start. To keep it, "
        "point CCTX_CACHE_DIR at a writable directory"
    )
    warnings.warn(CacheWarning(message), stacklevel=4)


def _empty(directory: Path) -> None:
    for path in directory.glob("*.arrow"):
        with contextlib.suppress(OSError):
            path.unlink()


# --------------------------------------------------------------------------
# the days


def _name(day: pd.Timestamp) -> str:
    chunk = storage.Chunk.day(day.strftime("%Y-%m-%d"))
    return storage.Part(KIND, "ledger", chunk, suffix="arrow").name


def _stamp(day: pd.Timestamp) -> str:
    return day.strftime("%Y-%m-%d")


def _read_days(directory: Path, days: list[pd.Timestamp]) -> list[pa.Table | None]:
    """Each day's table (``None`` where absent or not trusted), read on a thread a core.

    Checking a day's checksum and mapping its Arrow file release the GIL, so
    the days of a window are read side by side.
    """
    paths = [directory / _name(day) for day in days]
    workers = min(len(days), os.cpu_count() or 1, 8)
    if workers < 2:
        return [_read(path, day) for path, day in zip(paths, days, strict=True)]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="cctx-sample") as pool:
        return list(pool.map(_read, paths, days))


def _read(path: Path, day: pd.Timestamp) -> pa.Table | None:
    """The day's table, memory-mapped; ``None`` when absent, or damaged or foreign (removed)."""
    try:
        source = pa.memory_map(str(path))
    except FileNotFoundError:
        return None
    except OSError as exc:
        logger.warning("cached sample day %s cannot be read (%s): built again", path.name, exc)
        return None
    try:
        table = unseal(source.read_buffer())
        if (table.schema.metadata or {}).get(_META) != _stamp(day).encode():
            raise ValueError("it holds another day or was not written for this sample")
    except (ValueError, OSError, pa.ArrowException) as exc:
        logger.warning("cached sample day %s is not trusted (%s): built again", path.name, exc)
        with contextlib.suppress(OSError):
            path.unlink()
        return None
    return table


def _write(path: Path, table: pa.Table) -> bool:
    data = seal(table)
    try:
        storage.replace_atomically(path, lambda tmp: tmp.write_bytes(data))
    except OSError as exc:
        _cannot_cache(path.parent, exc)
        return False
    return True


def _warn_if_large(rows: int, to_build: int, what: str) -> None:
    if rows <= LARGE_ROWS:
        return
    gigabytes = rows * ROW_BYTES / 1e9
    message = (
        f"{what} holds about {rows:,} transfers (about {gigabytes:.1f} GB in memory); "
        f"{to_build:,} of its days are not cached yet and are built first (about "
        f"{to_build * 0.15:.0f} s on one core; once: later starts read them). Pass fewer "
        "days= for less"
    )
    logger.warning(message)
    warnings.warn(LargeResultWarning(message), stacklevel=4)


def _progress(items: list[int], what: str, *, kept: bool, progress: bool | None) -> Iterable[int]:
    from ..net.progress import wanted

    if len(items) <= 2 or not wanted(progress):
        return items
    from tqdm.auto import tqdm

    once = " (once: kept for later starts)" if kept else ""
    return tqdm(items, desc=f"building {what}{once}", unit="day", leave=False)
