"""Level 2 of the cache: parsed, settled chunks as sealed Arrow IPC files.

The files follow the dataset convention of :mod:`cctx_research.storage`
(``docs/datasets.md``): each is a part named by its key,
``interface__<kind>__key_<hash>.arrow``, written to a temporary file beside
it and renamed. They are a cache, not a dataset: they have no manifest, and
a change of their format changes every key, so old files are never read
again (``clear_cache`` removes them). See :mod:`.cache_dir` for both levels, how
damage is told apart from faults of the directory, and read-only
directories.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from .. import storage
from .._sealed import seal, unseal
from .._version import __version__
from ..errors import CacheError
from ..net.cache import fault, move_aside
from ..storage import Chunk, Part
from .cache_dir import CHUNK_DIR

__all__ = ["ChunkStore", "directory_bytes"]

# part of every chunk key; 2: Arrow IPC + checksum trailer, 3: the synthetic mark,
# 4: named by the dataset convention
_CHUNK_FORMAT = 4
_NETWORK = "interface"  # the chunks hold the interface's replies, every chain's
_SYNTHETIC = b"cctx.synthetic"


class ChunkStore:
    """Level 2: parsed, settled chunks as Arrow IPC files."""

    def __init__(self, directory: Path, *, read_only: bool = False) -> None:
        self.directory = Path(directory) / CHUNK_DIR
        self.read_only = read_only
        if not read_only:
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise fault(self.directory.parent, exc, "creating chunks/") from exc

    @staticmethod
    def key(*, kind: str, **parts: Any) -> str:
        """A file name from everything that shapes a chunk (plus the library version).

        The name is a part of the dataset convention: the ``kind`` of frame it
        holds, and a hash of everything else as its key.
        """
        parts = {**parts, "kind": kind, "library_version": __version__,
                 "chunk_format": _CHUNK_FORMAT}  # fmt: skip
        text = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
        digest = hashlib.sha256(text.encode()).hexdigest()[:32]
        return Part(_NETWORK, storage.slug(kind), Chunk.key(digest), suffix="arrow").name

    def _path(self, key: str) -> Path:
        return self.directory / key

    def get(self, key: str, *, max_age: float | None = None) -> pa.Table | None:
        """The stored table, or ``None``.

        ``max_age`` (seconds) bounds the age of entries about the recent
        past; an unreadable file is dropped.
        """
        path = self._path(key)
        try:
            if max_age is not None and _wall() - path.stat().st_mtime > max_age:
                return None
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise fault(self.directory.parent, exc, f"reading {path.name}") from exc
        try:
            return unseal(data)
        except (ValueError, OSError, pa.ArrowException) as exc:
            # moved aside, not deleted: a damaged file is evidence worth keeping
            with contextlib.suppress(OSError):
                move_aside(path, str(exc)[:200])
            return None

    @staticmethod
    def marked_synthetic(table: pa.Table) -> bool:
        """Whether a stored table was marked as synthetic data when it was put."""
        return (table.schema.metadata or {}).get(_SYNTHETIC) == b"true"

    def put(self, key: str, table: pa.Table, *, synthetic: bool = False) -> None:
        """Store a table atomically (temporary file, then rename).

        ``synthetic`` marks it (in its schema's metadata) as parsed from
        replies of a service of synthetic data, so that a pull answered from
        the cache alone is marked as the first one was.

        Raises :class:`CacheError` when the directory cannot take it (full,
        read-only, another user's); no partial file is left behind.
        """
        if self.read_only:
            return
        if synthetic:
            table = table.replace_schema_metadata(
                {**(table.schema.metadata or {}), _SYNTHETIC: b"true"}
            )
        path = self._path(key)
        data = seal(table)
        try:
            storage.replace_atomically(path, lambda tmp: tmp.write_bytes(data))
        except OSError as exc:
            raise fault(self.directory.parent, exc, f"storing {path.name}") from exc

    def files(self) -> list[Path]:
        return sorted(self.directory.glob("*.arrow"))

    def clear(self, older_than: pd.Timedelta | None) -> int:
        if self.read_only:
            raise CacheError(
                f"the cache directory {self.directory.parent} is read-only: nothing can "
                "be removed from it",
                directory=self.directory.parent,
            )
        cutoff = None if older_than is None else time.time() - older_than.total_seconds()
        removed = 0
        for path in [*self.files(), *self.directory.glob(".*.tmp")]:
            try:
                if cutoff is None or path.stat().st_mtime < cutoff:
                    path.unlink()
                    removed += path.suffix == ".arrow"
            except FileNotFoundError:
                pass
        return removed


def _wall() -> float:
    """Wall-clock seconds for the age of chunk entries (tests freeze it)."""
    return time.time()


def directory_bytes(directory: Path) -> int:
    """Bytes of every file under ``directory``."""
    total = 0
    for root, _dirs, files in os.walk(directory):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.path.getsize(os.path.join(root, name))
    return total
