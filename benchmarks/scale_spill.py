"""What each statement of the SQL load spills and holds: a probe for the whole-history load.

    .venv/bin/python benchmarks/scale_spill.py DIR [--out ledger.parquet] [--top 15]

``DIR`` is a sync-shaped dataset (``benchmarks/scale.py --generate DIR -n 1M``). The load
(``cctx.load(files, engine="duckdb")``, then its write) runs with every SQL statement on
its DuckDB connection timed; a thread samples, every 0.2 s, the size of the load's spill
directory, DuckDB's own count of its buffers (``duckdb_memory()``) and the process's RSS,
and keeps each statement's peaks. Prints the statements with the largest spill, then the
run's peaks. The figures of ``benchmarks/README.md`` figure 13 ("The SQL load's spill by
statement") come from here.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

MIB = 2**20


def _dir_size(path: str) -> int:
    total = 0
    for base, _, names in os.walk(path):
        for name in names:
            with contextlib.suppress(OSError):  # a spill file removed meanwhile
                total += os.stat(os.path.join(base, name)).st_size
    return total


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class Probe:
    """A DuckDB connection whose every ``execute``/``sql`` is a stage with its peaks."""

    def __init__(self, con: Any, spill: str) -> None:
        self._con, self._spill = con, spill
        self.stages: list[dict[str, Any]] = []
        self._now: dict[str, Any] | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _begin(self, query: str) -> None:
        text = " ".join(str(query).split())[:90]
        if self._now is not None:  # each statement as it ends: a run stopped midway says how far
            done = self._now
            print(f"{time.perf_counter() - done['start']:7.1f} s {done['spill'] / MIB:7.0f} MiB "
                  f"spill {done['rss'] / MIB:6.0f} MiB RSS  {done['sql']}", file=sys.stderr,
                  flush=True)  # fmt: skip
        self._now = {"sql": text, "start": time.perf_counter(), "spill": 0, "rss": 0}
        self.stages.append(self._now)

    def _sample(self) -> None:
        while not self._stop.is_set():
            now = self._now
            if now is not None:
                now["spill"] = max(now["spill"], _dir_size(self._spill))
                now["rss"] = max(now["rss"], _rss())
            time.sleep(0.2)

    def execute(self, query: str, *args: Any) -> Any:
        self._begin(query)
        return self._con.execute(query, *args)

    def sql(self, query: str, *args: Any) -> Any:
        self._begin(query)
        return self._con.sql(query, *args)

    def close(self) -> None:
        self._stop.set()
        self._con.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._con, name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args(argv)
    from scale_data import dataset_files

    if not (args.root / "generated.json").is_file():
        parser.error(f"{args.root} is not a dataset of benchmarks/scale.py (no generated.json): "
                     "make one with benchmarks/scale.py --generate DIR -n 1M")  # fmt: skip
    if args.top < 1:
        parser.error(f"--top must be 1 or more, got {args.top}")
    from scale_run import _write_ledger

    import cctx_research as cctx
    from cctx_research.ingest.ledger import sqllink

    probes: list[Probe] = []
    connect = sqllink.connect

    def probed(**kw: Any) -> Probe:
        probe = Probe(connect(**kw), kw["temp_directory"])
        probes.append(probe)
        return probe

    sqllink.connect = probed  # type: ignore[assignment]
    out = args.out or args.root.parent / "probe-ledger.parquet"
    started = time.perf_counter()
    ledger = cctx.load(dataset_files(args.root), engine="duckdb")
    _write_ledger(ledger, out)
    total = time.perf_counter() - started
    stages = probes[0].stages
    for here, after in zip(stages, [*stages[1:], {"start": started + total}], strict=True):
        here["seconds"] = after["start"] - here["start"]
    for by in ("spill", "seconds"):
        print(f"the {args.top} statements of most {by}, in the load's order")
        print(f"{'s':>6} {'spill MiB':>9} {'RSS MiB':>8}  statement")
        top = sorted(stages, key=lambda s: -s[by])[: args.top]
        for s in sorted(top, key=lambda s: s["start"]):
            print(f"{s['seconds']:6.1f} {s['spill'] / MIB:9.0f} {s['rss'] / MIB:8.0f}  {s['sql']}")
    print(
        f"total {total:.1f} s; peak spill {max(s['spill'] for s in stages) / MIB:.0f} MiB; "
        f"peak RSS {max(s['rss'] for s in stages) / MIB:.0f} MiB; {len(stages)} statements"
    )
    out.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
