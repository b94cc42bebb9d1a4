"""Figure 15: ``cctx-research report --data`` on the lazy ledger against the pandas ledger.

Run::

    .venv/bin/python benchmarks/report_data.py --quick        # 20k transfers
    .venv/bin/python benchmarks/report_data.py --sizes 1M     # chosen sizes
    .venv/bin/python benchmarks/report_data.py --redraw LEDGER  # one redraw of the app's ledger tab

For each size, each step in a fresh subprocess, one after the other:

1. ``benchmarks/scale.py``'s generator writes N sync-shaped transfers (the
   four logs of each, eight EVM chains, 70% V2), and its ``load`` worker
   links them into ``ledger.parquet`` (pandas, as ``cctx-research import``);
   the same ledger is also written as a ``ledger`` dataset (``datasets.write``);
2. the baseline: ``report --data ledger.parquet --engine pandas``, the path
   every ``report --data`` took before: the whole ledger read into pandas,
   copied, scoped, then analysed;
3. ``report --data ledger.parquet`` (DuckDB over the file, the default) and
   ``report --data <dataset>`` (DuckDB over the partitioned dataset): the
   sections aggregate in DuckDB and bring back their results.

Time is the command's wall time, imports included; peak RSS the child's
``ru_maxrss``. Ratios are against the baseline measured in the same run.
The pages are checked to hold the same sections.

``--built-from N``: a size above N is linked at N transfers and the ledger then
written again in copies, copy k moved k hours earlier (new transfer
ids, the same routes, amounts and latencies), a row group at a time: a 4M
ledger without linking 4M transfers in pandas, which needs about 26 GiB
(``load`` at 6.5 KiB a transfer, benchmarks/README.md).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from scale import size  # noqa: E402
from scale_run import GIB, Child, memory_cap, spawn  # noqa: E402
from suite import Row, machine, table  # noqa: E402

QUICK_SIZES = [20_000]
SIZES = [1_000_000]


def label(n: int) -> str:
    return f"{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{n // 1000}k"


def _write_dataset(ledger: Path, out: Path) -> int:
    """The worker: ``ledger.parquet`` written again as a ``ledger`` dataset."""
    import cctx_research as cctx
    from cctx_research.ingest import datasets

    frame = cctx.load(str(ledger))
    datasets.write(frame, out)
    print(json.dumps({"rows": len(frame)}))
    return 0


def _replicate(source: Path, out: Path, copies: int) -> int:
    """The worker: ``source``'s ledger written ``copies`` times into ``out``, copy ``k`` moved
    ``k`` hours earlier (not into the future, nor before CCTP's launch: ``load`` refuses
    both) and its ids suffixed."""
    from datetime import timedelta

    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    file = pq.ParquetFile(source)
    shift = timedelta(hours=1)  # copies interleave: a year back leaves CCTP's era
    rows = 0
    with pq.ParquetWriter(out, file.schema_arrow) as writer:
        for k in range(copies):
            for group in range(file.num_row_groups):
                table = file.read_row_group(group)
                for column in ("burn_timestamp", "mint_timestamp"):
                    at = table.schema.get_field_index(column)
                    moved = pc.subtract(table[column], pa.scalar(shift * k, pa.duration("ns")))
                    table = table.set_column(at, column, moved.cast(table.schema.field(at).type))
                at = table.schema.get_field_index("transfer_id")
                if k:
                    kind = table.schema.field(at).type
                    ids = pc.binary_join_element_wise(table["transfer_id"], pa.scalar(str(k), kind),
                                                      pa.scalar("#", kind))  # fmt: skip
                    table = table.set_column(at, "transfer_id", ids)
                writer.write_table(table)
                rows += table.num_rows
    print(json.dumps({"rows": rows}))
    return 0


def _redraw(ledger: Path, days: int) -> int:
    """The worker: what ``dashboard --data`` does with a ledger, once: its page's kernel opens
    it in DuckDB (no pandas copy) and the "Who moves the money" tab draws the last ``days``
    days (the dashboard's window), then redraws for another role."""
    import os
    import time

    import pandas as pd

    os.environ["CCTX_LEDGER"] = str(ledger)
    from cctx_research.report.engine_ledger import events
    from cctx_research.webapp.panels import ledger_behind
    from cctx_research.widgets.actors import actors_panel

    started = time.perf_counter()
    opened = ledger_behind()
    last = events(opened.frame)[1]
    end = last.floor("D") + pd.Timedelta(days=1)
    panel = actors_panel(opened, start=end - pd.Timedelta(days=days), end=end)
    first = time.perf_counter() - started
    panel.role.value = "depositors"  # one redraw
    redraw = time.perf_counter() - started - first
    if panel.error is not None:
        raise SystemExit(f"the panel failed: {panel.error}")
    print(json.dumps({"seconds": redraw, "first": first, "status": panel.status.value[:80]}))
    return 0


def _report(data: Path, out: Path, *, cap: int, engine: str | None) -> Child:
    cmd = [sys.executable, "-m", "cctx_research.cli", "report", "--data", str(data),
           "--out", str(out), "--no-progress"]  # fmt: skip
    if engine is not None:
        cmd += ["--engine", engine]
    return spawn(cmd, cap=cap, cwd=out.parent)


def _sections(page: Path) -> list[str]:
    return re.findall(r'<section id="([^"]+)"', page.read_text()) if page.is_file() else []


def measure(n: int, work: Path, cap: int, *, dataset_form: bool = True,
            built_from: int | None = None) -> list[Row]:
    """The rows of one size: the baseline's time and memory, then each lazy form's."""
    linked = min(n, built_from) if built_from else n
    copies = -(-n // linked)
    tag, root = label(n), work / f"cctp-{label(linked)}"
    ledger, dataset = work / f"ledger-{tag}.parquet", work / f"ledger-{tag}"
    built = work / f"ledger-{label(linked)}-linked.parquet" if copies > 1 else ledger
    scale = [sys.executable, str(HERE / "scale.py")]
    this = [sys.executable, str(Path(__file__).resolve())]
    steps = [
        [*scale, "--worker", "generate", "--root", str(root), "-n", str(linked)],
        [*scale, "--worker", "load", "--root", str(root), "--out", str(built),
         "--engine", "pandas", "--check", "0"],
        *([[*this, "--replicate", str(built), str(ledger), str(copies)]] if copies > 1 else []),
        [*this, "--dataset", str(ledger), str(dataset)],
    ]  # fmt: skip
    forms = {"pandas (before)": (ledger, "pandas"), "duckdb over ledger.parquet": (ledger, None),
             "duckdb over the dataset": (dataset, None)}  # fmt: skip
    if not dataset_form:
        del forms["duckdb over the dataset"]
        steps.pop()
    for cmd in steps:
        print(f"{tag}: {' '.join(cmd[1:3])}", file=sys.stderr)
        done = spawn(cmd, cap=cap, cwd=work)
        if done.failure:
            raise SystemExit(f"{tag}: {cmd[1:3]} {done.failure}: {done.error}")
    shutil.rmtree(root, ignore_errors=True)
    runs, pages = {}, {}
    for name, (data, engine) in forms.items():
        print(f"{tag}: report, {name}", file=sys.stderr)
        page = work / f"report-{tag}-{len(runs)}.html"
        runs[name] = _report(data, page, cap=cap, engine=engine)
        pages[name] = _sections(page)
    base = runs["pandas (before)"]
    rows = []
    for name, child in runs.items():
        same = pages[name] == pages["pandas (before)"] and bool(pages[name])
        detail = (f"CPU {child.cpu:.1f} s; " + ("same sections as the baseline" if same
                  else "SECTIONS DIFFER")) if not child.failure else child.error  # fmt: skip
        rows.append(Row(f"15 report --data {tag}, {name}: time", child.wall,
                        None if child is base else base.wall, "s", "-", None, detail,
                        text=child.failure))  # fmt: skip
        rows.append(Row(f"15 report --data {tag}, {name}: peak RSS", child.peak / GIB,
                        None if child is base else base.peak / GIB, "GiB", "-", None,
                        "the command's peak RSS, imports in", text=child.failure))  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20k transfers")
    parser.add_argument("--sizes", type=lambda t: [size(x) for x in t.split(",") if x.strip()],
                        help="sizes to run, e.g. 100k,1M")  # fmt: skip
    parser.add_argument("--memory-cap", type=float, default=None, metavar="GIB")
    parser.add_argument("--work", type=Path, default=None, help="where the data goes (temporary)")
    parser.add_argument("--no-dataset", action="store_true",
                        help="leave out the report over a ledger dataset (its write takes long)")
    parser.add_argument("--built-from", type=size, default=None, metavar="N",
                        help="link at most N transfers; a larger size copies that ledger")
    parser.add_argument("--dataset", nargs=2, type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--replicate", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--redraw", type=Path, metavar="LEDGER",
                        help="only time one redraw of the app's ledger tab over LEDGER")
    parser.add_argument("--days", type=int, default=7, help="with --redraw: the app's days")
    args = parser.parse_args(argv)
    if args.redraw:
        return _redraw(args.redraw, args.days)
    if args.dataset:
        return _write_dataset(*args.dataset)
    if args.replicate:
        source, out, copies = args.replicate
        return _replicate(Path(source), Path(out), int(copies))
    sizes = args.sizes or (QUICK_SIZES if args.quick else SIZES)
    work = (args.work or Path(tempfile.mkdtemp(prefix="cctx-report-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    cap = memory_cap(args.memory_cap)
    rows = [row for n in sizes for row in measure(n, work, cap, dataset_form=not args.no_dataset,
                                                  built_from=args.built_from)]
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    print(table(rows))
    print(f"\n{machine()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
