"""The whole-history benchmark's processes: each step in a fresh child, capped, measured.

:func:`spawn` runs a command under ``RLIMIT_AS`` and returns its
:class:`Child`: the worker's own figures (the last line of its output, JSON),
the wall time, the peak RSS (``ru_maxrss`` of the child, from ``os.wait4``)
and, when it failed, why ("out of memory" when the cap or the kernel stopped
it). :func:`worker` is what runs inside: generate, floor or load.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["GIB", "Child", "load_engines", "memory_cap", "spawn", "worker"]

GIB = 2**30
DEFAULT_CAP = 20 * GIB

_OUT_OF_MEMORY = re.compile(
    r"MemoryError|bad_alloc|Out of Memory|Cannot allocate memory|Unable to allocate|"
    r"can't start new thread|OutOfMemory",
    re.IGNORECASE,
)


@dataclass
class Child:
    """One finished child: its figures, or why it has none."""

    wall: float
    cpu: float
    """User and system seconds of the whole child (its share of a shared machine's cores)."""
    peak: int
    """Peak RSS in bytes (``ru_maxrss``), imports included."""
    result: dict[str, Any] = field(default_factory=dict)
    failure: str | None = None
    """None, "out of memory" or "failed"."""
    error: str = ""
    """The last line of its error output, when it failed."""

    @property
    def seconds(self) -> float:
        """The worker's own time where it gives one, else the wall time of the command."""
        return float(self.result.get("seconds", self.wall))


def memory_cap(requested_gib: float | None) -> int:
    """Bytes of address space a child may take: as asked, else 20 GiB or free memory less 2 GiB."""
    if requested_gib is not None:
        return int(requested_gib * GIB)
    available = DEFAULT_CAP
    with contextlib.suppress(OSError, ValueError, StopIteration):
        lines = Path("/proc/meminfo").read_text().splitlines()
        kib = int(next(x for x in lines if x.startswith("MemAvailable")).split()[1])
        available = kib * 1024 - 2 * GIB
    return max(min(DEFAULT_CAP, available), GIB)


def _limit(cap: int) -> Callable[[], None]:
    def apply() -> None:  # in the child, before it runs anything
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    return apply


_RAISED = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit)\b")


def _last_error(errors: str, code: int) -> str:
    """The line naming what was raised (DuckDB's messages end in advice), else the last line."""
    lines = [x.strip() for x in errors.splitlines() if x.strip()]
    raised = [x for x in lines if _RAISED.match(x)]
    return (raised or lines or [f"exit {code}"])[-1][:160]


def _why(code: int, errors: str) -> str:
    if code == -signal.SIGKILL or _OUT_OF_MEMORY.search(errors):
        return "out of memory"
    return "failed"


def spawn(cmd: list[str], *, cap: int, cwd: Path) -> Child:
    """Run ``cmd`` in a child under the cap; wait for it; its figures or its failure."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=cwd, preexec_fn=_limit(cap))
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = code = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    child = Child(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024)  # RSS in KiB
    if code != 0:
        child.failure = _why(code, stderr)
        child.error = _last_error(stderr, code)
        print(f"  {' '.join(cmd[1:4])}: {child.failure}\n{stderr[-2000:]}", file=sys.stderr)
        return child
    lines = [x for x in stdout.splitlines() if x.startswith("{")]
    child.result = json.loads(lines[-1]) if lines else {}
    return child


def load_engines() -> list[str]:
    """"pandas" (``load`` as it is), and "duckdb" once ``load`` takes ``engine=``."""
    import cctx_research as cctx

    has = "engine" in inspect.signature(cctx.load).parameters
    return ["pandas", "duckdb"] if has else ["pandas"]


# ---------------------------------------------------------------- inside the child


def _rss_now() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _write_ledger(ledger: Any, out: Path) -> None:
    """Write what ``load`` returned as Parquet (a frame today; a table or relation later)."""
    if hasattr(ledger, "write_parquet"):  # a DuckDB relation, a Polars frame
        ledger.write_parquet(str(out))
    elif hasattr(ledger, "to_parquet"):
        ledger.to_parquet(out, index=False)
    else:
        import pyarrow.parquet as pq

        pq.write_table(ledger, out)


def _pairings(out: Path) -> dict[str, int]:
    """Rows, linked, pending and mint-only transfers of a written ledger."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    pairing = pq.read_table(out, columns=["pairing"]).column("pairing")
    counts = {str(v["values"]): int(v["counts"]) for v in pc.value_counts(pairing).to_pylist()}
    pending, mint_only = counts.get("pending", 0), counts.get("mint_only", 0)
    rows = len(pairing)
    return {"rows": rows, "pending": pending, "mint_only": mint_only,
            "linked": rows - pending - mint_only - counts.get("unpaired", 0)}  # fmt: skip


def _load(root: Path, out: Path, engine: str) -> dict[str, Any]:
    from scale_data import dataset_files

    import cctx_research as cctx

    files = dataset_files(root)
    imports = _rss_now()
    started = time.perf_counter()
    ledger = cctx.load(files) if engine == "pandas" else cctx.load(files, engine=engine)
    _write_ledger(ledger, out)
    seconds = time.perf_counter() - started
    del ledger
    return {"seconds": seconds, "imports": imports, "files": len(files), **_pairings(out)}


def _floor(root: Path, out: Path, memory_limit: str | None) -> dict[str, Any]:
    from scale_data import dataset_files
    from scale_sql import floor

    files = dataset_files(root)
    imports = _rss_now()
    return {**floor(files, out, memory_limit=memory_limit, temp=out.parent), "imports": imports}


def _generate(root: Path, n: int, seed: int, part_logs: int, check: int,
              days: int | None) -> dict[str, Any]:  # fmt: skip
    from scale_data import generate

    planted = generate(root, n, seed=seed, part_logs=part_logs, check=check, days=days)
    planted["disk_mb"] = round(sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
                               / 2**20, 1)  # fmt: skip
    return planted


def worker(args: Any) -> int:
    """Run one step (``args.worker``) and print its figures as one JSON line."""
    root, out = Path(args.root), Path(args.out) if args.out else None
    if args.worker == "generate":
        result = _generate(root, args.transfers, args.seed, args.part_logs, args.check, args.days)
    elif args.worker == "floor":
        assert out is not None
        result = _floor(root, out, args.memory_limit)
    else:
        assert out is not None
        result = _load(root, out, args.engine)
    print(json.dumps(result))
    return 0
