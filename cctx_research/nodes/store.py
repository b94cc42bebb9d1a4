"""The sync dataset on disk, on the convention of :mod:`cctx_research.storage`.

The layout, the manifest's fields and what a crash or Ctrl-C leaves are
described in ``docs/datasets.md`` (the sync dataset). In short: each EVM
chain's logs are parts under ``<chain>/logs/`` named by their blocks
(``base__logs__blocks_<first>_to_<last>[_tip].parquet``), Solana's
transactions parts under ``solana/transactions/`` named by their program,
page and slots, and the manifest ``_cctx.json`` (kind ``sync``) keeps each
chain's checkpoint in its ``state``: ``first`` (the first block synced),
``safe`` (the last block written as final) and ``tip`` (the last block
fetched); for Solana, each program's count of ``parts``.

A part is written before the checkpoint that covers it, so a part past the
checkpoint is a leftover of a run that stopped: it is deleted
(:meth:`Dataset.drop_unsafe`, :meth:`Dataset.drop_solana_leftovers`) and
fetched again. Tip parts are deleted at the start of every run. A write that
fails raises :class:`~cctx_research.errors.DataError` naming the dataset,
the file and the system's reason; what was checkpointed before stays.

A dataset synced before the convention (``sync.json``, parts named
``<from>-<to>.parquet``) is read as it is and upgraded in place when a
sync opens it (:meth:`Dataset.state`), logged at INFO.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .. import storage
from ..errors import DataError
from ..storage import Chunk, Manifest, Part, replace_atomically

__all__ = ["LOG_SCHEMA", "Dataset"]

logger = logging.getLogger(__name__)

LOG_SCHEMA = pa.schema(
    [
        ("block_number", pa.uint64()),
        ("transaction_index", pa.uint32()),
        ("log_index", pa.uint32()),
        ("transaction_hash", pa.binary()),
        ("address", pa.binary()),
        ("topic0", pa.binary()),
        ("topic1", pa.binary()),
        ("topic2", pa.binary()),
        ("topic3", pa.binary()),
        ("data", pa.binary()),
        ("n_data_bytes", pa.uint32()),
        ("chain_id", pa.uint64()),
        ("block_timestamp", pa.uint64()),
    ]
)
"""cryo's ``logs`` columns (binary as bytes), plus the block's time."""

KIND = "sync"
"""The kind the sync dataset's manifest names."""

_INSTEAD = (
    "sync into a new directory (--out NEW/); its Parquet files stay readable with "
    "`cctx-research import`"
)

# the part names before the dataset convention (format 1): still read, renamed on upgrade
_LEGACY_PART = re.compile(r"^(tip-)?(\d+)-(\d+)\.parquet$")
_LEGACY_SOLANA_PART = re.compile(r"^([a-z0-9-]+)-(\d+)-(\d+)-(\d+)\.jsonl$")


def _log_part(chain: str, name: str) -> Part | None:
    """The part of ``chain``'s logs a file name spells (in either layout), or ``None``."""
    part = storage.parse_part(name)
    if part is not None:
        fits = (part.network, part.datatype, part.chunk.unit, part.label, part.suffix) == (
            chain, "logs", "blocks", None, "parquet")  # fmt: skip
        return part if fits else None
    found = _LEGACY_PART.match(name)
    if found is None:
        return None
    chunk = Chunk.blocks(int(found.group(2)), int(found.group(3)), tip=bool(found.group(1)))
    return Part(chain, "logs", chunk)


def _solana_part(name: str) -> Part | None:
    """The Solana part a file name spells (in either layout), or ``None``."""
    part = storage.parse_part(name)
    if part is not None:
        fits = (part.network, part.datatype, part.chunk.unit, part.suffix) == (
            "solana", "transactions", "slots", "jsonl")  # fmt: skip
        return part if fits and part.label and part.chunk.page is not None else None
    found = _LEGACY_SOLANA_PART.match(name)
    if found is None:
        return None
    chunk = Chunk.slots(int(found.group(3)), int(found.group(4)), page=int(found.group(2)))
    return Part("solana", "transactions", chunk, label=found.group(1), suffix="jsonl")


class Dataset:
    """A sync output directory."""

    def __init__(self, out: str | os.PathLike[str]) -> None:
        if not isinstance(out, str | os.PathLike) or not str(out).strip():
            raise ValueError("out must be a directory path, e.g. 'cctp/'")
        self.root = Path(out).expanduser()
        if self.root.exists() and not self.root.is_dir():
            raise ValueError(f"out must be a directory; {self.root} is a file")

    # ------------------------------------------------------------------ state

    @property
    def state_path(self) -> Path:
        """The manifest, or the state file of a dataset still in the old layout."""
        return storage.manifest_path(self.root)

    def state(self) -> dict[str, Any]:
        """The checkpoints, to sync on: a fresh state, or the manifest's (upgraded in place).

        Refuses a dataset of another format or kind. A dataset in the old
        layout (``sync.json``) has its parts renamed and its manifest written.
        """
        manifest = self._manifest()
        if manifest is None:
            return {"chains": {}}
        if manifest.format < storage.FORMAT:
            self._upgrade(manifest)
        return manifest.state

    def _manifest(self) -> Manifest | None:
        manifest = storage.read_manifest(self.root, kinds=(KIND,), instead=_INSTEAD)
        if manifest is not None and not isinstance(manifest.state.get("chains"), dict):
            raise DataError(
                f"{self.state_path} holds no chains (it was not written by a sync, or was "
                "edited): restore it, or sync into a new directory"
            )
        return manifest

    def _upgrade(self, manifest: Manifest) -> None:
        """Rename the parts of the old layout, then write the manifest (removing ``sync.json``).

        Each rename is atomic and both names are read, so a stop part way
        leaves a dataset that reads the same and is upgraded on the next open.
        """
        renamed = 0
        with self.writing(self.root / storage.MANIFEST):
            olds = [(p, _log_part(c, p.name)) for c, p, *_ in self.parts()]
            olds += [(p, _solana_part(p.name)) for *_, p in self.solana_parts()]
            for path, part in olds:
                if part is not None and part.name != path.name:
                    os.replace(path, path.with_name(part.name))
                    renamed += 1
        self.save_state(manifest.state)
        logger.info("upgraded the sync dataset %s to the dataset format %d (%d parts renamed)",
                    self.root, storage.FORMAT, renamed)  # fmt: skip

    def save_state(self, state: dict[str, Any]) -> None:
        """Write the manifest, with ``state`` (the checkpoints), atomically."""
        with self.writing(self.root / storage.MANIFEST):
            storage.write_manifest(self.root, Manifest(KIND, state))

    @contextlib.contextmanager
    def writing(self, path: Path) -> Iterator[None]:
        """Turn a failed write of ``path`` (disk full, size limit, read-only) into a DataError.

        The first line says it all (the CLI shows no more): the dataset, the
        file, the system's reason, and that running the sync again goes on.
        """
        try:
            yield
        except OSError as exc:
            reason = os.strerror(exc.errno) if exc.errno else (str(exc) or type(exc).__name__)
            try:
                name = str(path.relative_to(self.root))
            except ValueError:
                name = str(path)
            raise DataError(
                f"cannot write the sync dataset {self.root} ({reason}, writing {name}); "
                "what was checkpointed before is kept: make room (or lift the limit) and run "
                "the same sync again to go on from there",
            ) from exc

    # ------------------------------------------------------------------ parts

    def logs_dir(self, chain: str) -> Path:
        return self.root / chain / "logs"

    def parts(self, chain: str | None = None) -> Iterator[tuple[str, Path, int, int, bool]]:
        """``(chain, path, first, last, tip)`` of every part (of one chain)."""
        names = [chain] if chain else sorted(
            p.name for p in self.root.iterdir() if (p / "logs").is_dir()
        ) if self.root.is_dir() else []  # fmt: skip
        for name in names:
            folder = self.logs_dir(name)
            if not folder.is_dir():
                continue
            for path in sorted(folder.iterdir()):
                part = _log_part(name, path.name)
                if part is not None:
                    c = part.chunk
                    yield name, path, int(c.first or 0), int(c.last or 0), c.tip

    def drop_unsafe(self, chain: str, safe: int | None) -> int:
        """Delete tip parts and final parts past ``safe`` (left by a run that stopped)."""
        dropped = 0
        for _, path, first, _, tip in list(self.parts(chain)):
            if tip or safe is None or first > safe:
                path.unlink()
                dropped += 1
        return dropped

    def write_part(self, chain: str, first: int, last: int, table: pa.Table, *, tip: bool) -> Path:
        """Write the logs of blocks ``first..last`` (possibly none) as one part."""
        path = self.logs_dir(chain) / Part(chain, "logs", Chunk.blocks(first, last, tip=tip)).name
        with self.writing(path):
            replace_atomically(path, lambda tmp: pq.write_table(table, tmp, compression="zstd"))
        return path

    # ------------------------------------------------------------ Solana parts

    @property
    def solana_dir(self) -> Path:
        return self.root / "solana" / "transactions"

    def solana_parts(self, program: str | None = None) -> list[tuple[str, int, int, int, Path]]:
        """``(program, seq, low slot, high slot, path)`` of every Solana part (of one program)."""
        if not self.solana_dir.is_dir():
            return []
        out = []
        for path in sorted(self.solana_dir.iterdir()):
            part = _solana_part(path.name)
            if part is not None and (program is None or part.label == program):
                c = part.chunk
                out.append((str(part.label), int(c.page or 0), int(c.first or 0),
                            int(c.last or 0), path))  # fmt: skip
        return out

    def write_solana_part(self, program: str, seq: int, low: int, high: int,
                          lines: list[bytes]) -> Path:  # fmt: skip
        """Write one page's transactions (JSON Lines, possibly none) as part ``seq``."""
        chunk = Chunk.slots(low, high, page=seq)
        path = self.solana_dir / Part("solana", "transactions", chunk, label=program,
                                      suffix="jsonl").name  # fmt: skip
        data = b"".join(x + b"\n" for x in lines)
        with self.writing(path):
            replace_atomically(path, lambda tmp: tmp.write_bytes(data))
        return path

    def drop_solana_leftovers(self, program: str, parts: int) -> int:
        """Delete the parts of ``program`` numbered ``parts`` or later (left by a stopped run)."""
        dropped = 0
        for _, seq, _, _, path in self.solana_parts(program):
            if seq >= parts:
                path.unlink()
                dropped += 1
        return dropped

    def solana_signatures(self, low: int) -> set[str]:
        """The signatures held by the Solana parts that reach slot ``low`` or later."""
        found: set[str] = set()
        for _, _, _, high, path in self.solana_parts():
            if high < low:
                continue
            for line in path.read_bytes().splitlines():
                if line.strip():
                    found.add(orjson.loads(line)["transaction"]["signatures"][0])
        return found

    def log_files(self) -> list[Path]:
        """Every part that holds logs, all chains."""
        return [path for _, path, *_ in self.parts() if pq.read_metadata(path).num_rows]

    def coverage(self) -> pd.DataFrame:
        """Per chain: the blocks and times synced, the confirmation depth, the parts.

        Solana's row counts slots as blocks and transactions as logs; it is
        synced finalized (its safe slot is its last), and each of its
        programs whose run was stopped part way is one gap.
        """
        manifest = self._manifest()  # read as it is: status never writes
        state = manifest.state if manifest is not None else {"chains": {}}
        rows = []
        for name, entry in sorted(state["chains"].items()):
            if name == "solana":
                rows.append(self._solana_coverage(name, entry))
                continue
            parts = [p for p in self.parts(name)]
            rows.append({
                "chain": name,
                "node": entry.get("host"),
                "first_block": entry.get("first"),
                "safe_block": entry.get("safe"),
                "last_block": entry.get("tip"),
                "first_time": _ts(entry.get("first_time")),
                "last_time": _ts(entry.get("tip_time")),
                "confirmations": entry.get("confirmations"),
                "gaps": len(_gaps(parts)),
                "parts": len(parts),
                "logs": sum(pq.read_metadata(p[1]).num_rows for p in parts),
                "range": entry.get("range"),
                "synced_at": _ts(entry.get("synced_at")),
            })  # fmt: skip
        frame = pd.DataFrame(rows, columns=[
            "chain", "node", "first_block", "safe_block", "last_block", "first_time", "last_time",
            "confirmations", "gaps", "parts", "logs", "range", "synced_at",
        ])  # fmt: skip
        for col in ("first_block", "safe_block", "last_block", "confirmations", "gaps", "parts",
                    "logs", "range"):  # fmt: skip
            frame[col] = frame[col].astype("Int64")
        for col in ("first_time", "last_time", "synced_at"):
            frame[col] = pd.to_datetime(frame[col], utc=True)
        return frame

    def _solana_coverage(self, name: str, entry: dict[str, Any]) -> dict[str, Any]:
        programs = entry.get("programs", {}).values()
        return {
            "chain": name, "node": entry.get("host"), "first_block": entry.get("first"),
            "safe_block": entry.get("tip"), "last_block": entry.get("tip"),
            "first_time": _ts(entry.get("first_time")), "last_time": _ts(entry.get("tip_time")),
            "confirmations": None, "gaps": sum(1 for p in programs if p.get("run")),
            "parts": len(self.solana_parts()),
            "logs": sum(int(p.get("transactions", 0)) for p in programs), "range": None,
            "synced_at": _ts(entry.get("synced_at")),
        }  # fmt: skip


def _ts(value: Any) -> pd.Timestamp | None:
    return None if value is None else pd.Timestamp(int(value), unit="s", tz="UTC")


def _gaps(parts: list[tuple[str, Path, int, int, bool]]) -> list[tuple[int, int]]:
    """Block ranges between consecutive parts that no part covers."""
    spans = sorted((first, last) for _, _, first, last, _ in parts)
    gaps = []
    for (_, last), (first, _) in itertools.pairwise(spans):
        if first > last + 1:
            gaps.append((last + 1, first - 1))
    return gaps
