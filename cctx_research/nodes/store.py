"""The synced dataset on disk: its state file and its Parquet parts, written atomically.

Layout under ``out``::

    sync.json                         format, and per chain: its checkpoint (below)
    <chain>/logs/<from>-<to>.parquet  final logs (cryo's columns), blocks from..to
    <chain>/logs/tip-<from>-<to>.parquet  logs within the confirmation depth
    solana/transactions/<program>-<seq>-<low>-<high>.jsonl
                                      Solana: ``getTransaction`` results (JSON Lines), one
                                      part per page of a program's signatures, slots low..high
    ledger.parquet                    the ledger of every chain (``cctx_research.ingest.load``)
    coverage.parquet                  per chain: blocks and times covered

A chain's checkpoint holds ``first`` (the first block synced), ``safe`` (the
last block written as final) and ``tip`` (the last block fetched). The
rules that make a crash or Ctrl-C lose and duplicate nothing:

- every file is written to a temporary name in its directory, then renamed;
- a final part is written before the checkpoint that covers it, so a part
  past ``safe`` can only be the leftover of a run that stopped: the next
  run deletes it (:meth:`Dataset.drop_unsafe`) and fetches its blocks again;
- tip parts (within the confirmation depth, which a reorg may still change)
  are deleted at the start of every run and fetched again.

Solana's parts follow the same rule by number: a program's checkpoint
counts the parts written under it (``parts``), so a part numbered past it
is the leftover of a stopped run and is deleted (:meth:`Dataset.drop_solana_leftovers`).
Only finalized transactions are synced, so there is no tip.

A write that fails (a full disk, a file size limit, a read-only directory)
raises :class:`~cctx_research.errors.DataError` naming the dataset, the
file and the system's reason; what was checkpointed before stays, and the
same sync run again goes on from there.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import DataError
from ..storage import replace_atomically

__all__ = ["FORMAT", "LOG_SCHEMA", "Dataset"]

FORMAT = 1
"""The version of the layout; a dataset written by another version is refused, not guessed."""

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

_PART = re.compile(r"^(tip-)?(\d+)-(\d+)\.parquet$")
_SOLANA_PART = re.compile(r"^([a-z0-9-]+)-(\d+)-(\d+)-(\d+)\.jsonl$")


class Dataset:
    """A sync output directory."""

    def __init__(self, out: str | os.PathLike[str]) -> None:
        if not isinstance(out, str | os.PathLike) or not str(out).strip():
            raise ValueError("out must be a directory path, e.g. 'cctp/'")
        self.root = Path(out).expanduser()
        if self.root.exists() and not self.root.is_dir():
            raise ValueError(f"out must be a directory; {self.root} is a file")
        self.state_path = self.root / "sync.json"

    # ------------------------------------------------------------------ state

    def state(self) -> dict[str, Any]:
        """The state file, or a fresh one; refuses a dataset of another format."""
        if not self.state_path.exists():
            return {"format": FORMAT, "chains": {}}
        try:
            state = json.loads(self.state_path.read_text())
        except (OSError, ValueError) as exc:
            raise DataError(
                f"{self.state_path} cannot be read ({type(exc).__name__}): restore it, or sync "
                "into a new directory"
            ) from None
        found = state.get("format") if isinstance(state, dict) else None
        if found != FORMAT or isinstance(found, bool):
            raise DataError(self._format_message(found))
        if not isinstance(state.get("chains"), dict):
            raise DataError(
                f"{self.state_path} holds no chains (it was not written by a sync, or was "
                "edited): restore it, or sync into a new directory"
            )
        return state

    def _format_message(self, found: Any) -> str:
        """What a dataset of another format is, and what to do (in one line: the CLI shows one)."""
        if isinstance(found, int) and not isinstance(found, bool) and found > FORMAT:
            return (
                f"{self.root} was written by a newer cctx-research (sync format {found}; this "
                f"version reads format {FORMAT}): upgrade (pip install -U cctx-research) to "
                "sync into it, or sync into a new directory"
            )
        what = (
            f"an older cctx-research (sync format {found})"
            if isinstance(found, int) and not isinstance(found, bool)
            else f"no version this one knows (sync format {found!r})"
        )
        return (
            f"{self.root} was written by {what}; this version reads format {FORMAT} and does not "
            "convert it: sync into a new directory (--out NEW/); its Parquet files stay readable "
            "with `cctx-research import`"
        )

    def save_state(self, state: dict[str, Any]) -> None:
        """Write the state file atomically."""
        text = json.dumps(state, indent=2, sort_keys=True)
        with self.writing(self.state_path):
            replace_atomically(self.state_path, lambda tmp: tmp.write_text(text + "\n"))

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
                found = _PART.match(path.name)
                if found:
                    yield name, path, int(found.group(2)), int(found.group(3)), bool(found.group(1))

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
        path = self.logs_dir(chain) / f"{'tip-' if tip else ''}{first}-{last}.parquet"
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
            found = _SOLANA_PART.match(path.name)
            if found and (program is None or found.group(1) == program):
                out.append((found.group(1), int(found.group(2)), int(found.group(3)),
                            int(found.group(4)), path))  # fmt: skip
        return out

    def write_solana_part(self, program: str, seq: int, low: int, high: int,
                          lines: list[bytes]) -> Path:  # fmt: skip
        """Write one page's transactions (JSON Lines, possibly none) as part ``seq``."""
        path = self.solana_dir / f"{program}-{seq:06d}-{low}-{high}.jsonl"
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
        state = self.state()
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
