"""Figure 15c: ``report --data`` and one dashboard redraw on a whole-history ledger dataset.

Run::

    .venv/bin/python benchmarks/scale_views.py -n 4M             # generate, load, measure
    .venv/bin/python benchmarks/scale_views.py --ledger DIR      # a ledger dataset built before
    .venv/bin/python benchmarks/scale_views.py --quick           # 20k transfers, for the tests

The data is ``scale.py``'s sync-shaped dataset (``scale_data.py``: N CCTP
transfers as the logs Circle's contracts emit, on eight EVM chains), its
ledger built as ``sync`` builds it (``load(parts, engine="duckdb", out=)``:
a partitioned ledger dataset). Each step runs in a fresh process:

1. the load (with ``-n``; for information: figure 13 holds its targets);
2. the baseline: ``pandas.read_parquet`` of the ledger dataset, the pandas
   copy of the whole ledger that a view over it should not need;
3. ``cctx-research report --data LEDGER --out report.html``: wall time and
   peak RSS (``ru_maxrss`` from ``os.wait4``), against the baseline's;
4. ``cctx-research dashboard --data LEDGER`` driven by Playwright in Debian's
   Chromium: the server's start (until it prints its URL: its local service
   has indexed the dataset, never a frame of it), the first page (navigation
   until the overview's status line shows: the data ends before today, so the
   dashboard finds where and opens on the data's last seven days) and one
   window change (the "From" date moved a week earlier, to two weeks before
   the data's last day, until the status line says the new window); the peak
   RSS of the server and its kernels together
   (sampled every 0.2 s with psutil), against the baseline's, and the
   server's alone.

A view whose peak RSS is near or past the baseline's holds a pandas copy
of the ledger somewhere; the detail column says which process held it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests"))  # browser_support, shared with the browser tests

from scale import label, size  # noqa: E402
from scale_run import GIB, Child, memory_cap, spawn  # noqa: E402
from suite import Row, machine, stop, table  # noqa: E402

QUICK = 20_000
STATUS = re.compile(r"[\d,]+ transfers \([^)]*\) of [\d,]+ minted [^\n]*")
"""The overview's status line: what it counts, over which days."""


def limit(cap: int) -> Any:
    """What a child runs before anything else: the address-space cap ``spawn`` sets too."""
    import resource

    return lambda: resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def _gib(peak: float) -> float:
    return peak / GIB


def _worker(kind: str, ledger: Path, parts: Path | None) -> int:
    """Inside a child: load the parts into ``ledger``, or read ``ledger`` into pandas."""
    began = time.perf_counter()
    if kind == "load":
        from scale_data import dataset_files

        import cctx_research as cctx

        cctx.load(dataset_files(parts), engine="duckdb", out=ledger)
        result: dict[str, Any] = {}
    else:
        import pandas as pd

        frame = pd.read_parquet(ledger)
        result = {"rows": len(frame), "bytes": int(frame.memory_usage(deep=True).sum())}
    result["seconds"] = time.perf_counter() - began
    print(json.dumps(result))
    return 0


def _child(kind: str, ledger: Path, parts: Path | None, cap: int) -> Child:
    cmd = [sys.executable, __file__, "--worker", kind, "--ledger", str(ledger)]
    if parts is not None:
        cmd += ["--parts", str(parts)]
    return spawn(cmd, cap=cap, cwd=ROOT)


def _last_day(ledger: Path) -> str:
    """The data's last burn day: the dataset's newest ``day=`` partition."""
    days = sorted(p.name.removeprefix("day=") for p in ledger.glob("day=*"))
    return days[-1]


class _Peak(threading.Thread):
    """The largest RSS of a process and its descendants together, sampled."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        import psutil

        self.root = psutil.Process(pid)
        self.peak = 0
        self.server = 0  # the root alone: the server and its local service
        self.stop = threading.Event()

    def run(self) -> None:
        import psutil

        while not self.stop.wait(0.2):
            total = 0
            try:
                for proc in [self.root, *self.root.children(recursive=True)]:
                    with contextlib.suppress(psutil.Error):
                        rss = proc.memory_info().rss
                        total += rss
                        if proc is self.root:
                            self.server = max(self.server, rss)
            except psutil.Error:
                return
            self.peak = max(self.peak, total)


def _dashboard(ledger: Path, cache: Path, cap: int) -> dict[str, Any]:
    """Start ``dashboard --data ledger``, open its first page, change its window; figures."""
    from browser_support import CHROMIUM, free_port, launch
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        raise RuntimeError("no chromium")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCTX_")}
    env["CCTX_CACHE_DIR"] = str(cache)
    began = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "cctx_research.cli", "dashboard", "--data", str(ledger),
         "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
        start_new_session=True, preexec_fn=limit(cap),  # each process under the cap
    )  # fmt: skip
    peak = _Peak(proc.pid)
    peak.start()
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        url = f"http://127.0.0.1:{port}/"
        if url.rstrip("/") not in line:
            raise RuntimeError(f"the dashboard did not start: {line!r}")
        figures = {"start": time.perf_counter() - began}
        with sync_playwright() as p:
            browser = launch(p)
            try:
                figures.update(_drive(browser, url, _last_day(ledger)))
            finally:
                browser.close()
    finally:
        stop(proc, 60)
        peak.stop.set()
        peak.join()
    figures["peak"] = peak.peak
    figures["server"] = peak.server
    return figures


def _drive(browser: Any, url: str, last_day: str) -> dict[str, Any]:
    import pandas as pd

    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()

    def status() -> str:  # the status line alone, without a warning beside it
        texts = page.locator(".widget-html").all_inner_texts()
        found = [m.group(0) for t in texts if (m := STATUS.search(t))]
        return found[0] if found else ""

    def wait(check: Any, what: str, seconds: float = 1800) -> None:
        deadline = time.monotonic() + seconds
        while not check():
            if time.monotonic() > deadline:
                raise RuntimeError(what)
            page.wait_for_timeout(200)

    began = time.perf_counter()
    page.goto(url, timeout=1_800_000, wait_until="commit")  # Voila streams the page
    wait(lambda: status() != "", "the first page never showed its status line")
    first = time.perf_counter() - began
    before = status()
    shown = page.locator("input[type=date]").nth(1).input_value()  # the "To" day
    if before.startswith("0 transfers") or shown < last_day:
        raise RuntimeError(f"the first page is not on the data's last days: {before!r}")
    start = (pd.Timestamp(shown) - pd.Timedelta(days=13)).strftime("%Y-%m-%d")
    began = time.perf_counter()
    picker = page.locator("input[type=date]").first
    picker.fill(start)
    picker.dispatch_event("change")
    wait(lambda: status() not in ("", before), "the window change redrew nothing")
    redraw = time.perf_counter() - began
    said = status()
    context.close()
    return {"first_page": first, "redraw": redraw, "status": said[:160], "opened": before[:160]}


JUDGED = 1_000_000
"""Below this many transfers the imports outweigh the ledger: the peaks are for information."""


def _rows(n: int | None, loaded: Child | None, read: Child, report: Child,
          dash: dict[str, Any] | None, why: str) -> list[Row]:  # fmt: skip
    tag = label(n) if n else "given"
    rows_read = read.result.get("rows", 0)
    judged = rows_read >= JUDGED
    rows = []
    if loaded is not None:
        rows.append(Row(f"15c load {tag} (duckdb, out=)", loaded.seconds, None, "s", "-", None,
                        f"peak RSS {_gib(loaded.peak):.2f} GiB; figure 13 holds its targets",
                        text=loaded.failure))  # fmt: skip
    base = read.peak if not read.failure else None
    rows.append(Row(f"15c baseline {tag}: read the ledger into pandas", _gib(read.peak), None,
                    "GiB", "-", None,
                    f"{read.seconds:.1f} s, {read.result.get('rows', 0):,} rows, frame "
                    f"{read.result.get('bytes', 0) / GIB:.2f} GiB",
                    text=read.failure))  # fmt: skip
    rows.append(Row(f"15c report --data {tag}: peak RSS", _gib(report.peak),
                    None if base is None else _gib(base), "GiB", "< baseline",
                    None if base is None or report.failure or not judged else report.peak < base,
                    f"{report.wall:.1f} s wall, whole command" + (
                        f"; {report.error}" if report.failure else ""),
                    text=report.failure))  # fmt: skip
    if dash is None:
        rows.append(Row(f"15c dashboard --data {tag}", float("nan"), None, "s", "-", None,
                        f"not run: {why}", text="-"))  # fmt: skip
        return rows
    rows.append(Row(f"15c dashboard --data {tag}: peak RSS, server and kernels", _gib(dash["peak"]),
                    None if base is None else _gib(base), "GiB", "< baseline",
                    None if base is None or not judged else dash["peak"] < base,
                    f"server up in {dash['start']:.1f} s; the server alone (its local service "
                    f"indexing the dataset, never a frame of it) {_gib(dash['server']):.2f} GiB, "
                    "the rest its page's kernel"))  # fmt: skip
    rows.append(Row(f"15c dashboard --data {tag}: first page", dash["first_page"], None, "s",
                    "-", None, "navigation until the overview's status line, on the data's "
                    f"last 7 days: {dash['opened']!r}"))  # fmt: skip
    rows.append(Row(f"15c dashboard --data {tag}: one window change", dash["redraw"], None, "s",
                    "-", None, "'From' a week earlier, two weeks before the last day; now: "
                    f"{dash['status']!r}"))  # fmt: skip
    return rows


def measure(args: argparse.Namespace, work: Path) -> list[Row]:
    cap = memory_cap(args.memory_cap)
    n = QUICK if args.quick else args.transfers
    loaded = None
    ledger = args.ledger
    if ledger is None:
        from scale_data import QUICK_DAYS, generate

        parts = work / "sync"
        generate(parts, n, seed=args.seed, part_logs=args.part_logs,
                 days=QUICK_DAYS if args.quick else None)  # fmt: skip
        ledger = work / "ledger"
        loaded = _child("load", ledger, parts, cap)
        if loaded.failure:
            raise SystemExit(f"the load failed: {loaded.error}")
    read = _child("read", ledger, None, cap)
    report_cmd = [sys.executable, "-m", "cctx_research.cli", "report", "--data", str(ledger),
                  "--no-progress", "--out", str(work / "report.html")]  # fmt: skip
    env_cache = work / "cache"
    os.environ["CCTX_CACHE_DIR"] = str(env_cache)
    report = spawn(report_cmd, cap=cap, cwd=ROOT)
    dash, why = None, ""
    if not args.no_dashboard:
        try:
            dash = _dashboard(ledger, env_cache, cap)
        except (ImportError, RuntimeError) as exc:
            why = f"{type(exc).__name__}: {exc}"
    return _rows(None if args.ledger else n, loaded, read, report, dash, why)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK:,} transfers")
    parser.add_argument("-n", "--transfers", type=size, default=4_000_000)
    parser.add_argument("--ledger", type=Path, help="measure this ledger dataset (no load)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--part-logs", type=int, default=1_000_000)
    parser.add_argument("--memory-cap", type=float, default=None, metavar="GIB")
    parser.add_argument("--work", type=Path, help="where the data goes (temporary)")
    parser.add_argument("--no-dashboard", action="store_true", help="the report only")
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    parser.add_argument("--worker", choices=["load", "read"], help=argparse.SUPPRESS)
    parser.add_argument("--parts", type=Path, help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.worker:
        return _worker(args.worker, args.ledger, args.parts)
    if args.ledger is not None and not (args.ledger / "_cctx.json").is_file():
        raise SystemExit(f"--ledger {args.ledger}: not a ledger dataset (no _cctx.json)")
    work = args.work or Path(tempfile.mkdtemp(prefix="cctx-scale-views-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        rows = measure(args, work)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    text = f"{machine()}; load average {os.getloadavg()[0]:.1f}\n\n{table(rows)}"
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
