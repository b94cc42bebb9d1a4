"""Fast to the first answer: start-up, the cached sample, the report and the app's first page.

Run::

    python benchmarks/startup.py            # the full run (a few minutes)
    python benchmarks/startup.py --quick    # a smoke run: one repeat, a 3-day report
    python benchmarks/startup.py --rows 4   # some rows alone (1-5)

Every figure is measured in fresh processes, as a user meets it, against a
baseline measured in the same run (A and B alternate, so drift of the
machine's speed falls on both; the median of the repeats is kept):

1. ``cctx-research --help`` vs ``python -c "import argparse"``: <= 3x.
2. ``import cctx_research`` vs ``import pandas``: <= 1.3x; reaching
   ``cctx.connect`` (which loads pandas and the client) is shown beside it.
3. The first ``connect()`` on the cached sample (the live 30 days, the
   default) vs ``pd.read_parquet`` of the same ledger in one Parquet file,
   each in a process that has imported pandas and pyarrow already: <= 2x.
   The cold build (an empty cache directory) is recorded, and so is the
   first ``connect()`` with its first answer (the sample's store builds its
   index on its first query).
4. ``cctx-research report`` on the sample, warm (its second run on one cache
   directory: the sample's days, the client's chunks and the report's figures
   kept), whole process: <= 5 s on this machine. ``--quick``'s first report
   uses the sample's days row 3 built (when row 3 runs too), so its baseline
   is not a cold start. 4b: the same with Python's
   bytecode kept (``PYTHONPYCACHEPREFIX`` in the run's directory), as an
   installed package runs; a machine with ``PYTHONDONTWRITEBYTECODE=1``
   compiles the toolkit's modules from source in every process otherwise.
5. The dashboard's first page: from navigation until its widgets have drawn
   (the overview's status line shows), in Debian's Chromium driven by
   Playwright, the second visit (the first one starts the server's caches):
   <= 10 s on this machine. ``--quick``'s app uses the sample's days row 3
   built (when row 3 runs too), as its report does.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from suite import Row, Suite, machine, table

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))  # browser_support, shared with the browser tests
PY = sys.executable
CLI = str(Path(PY).with_name("cctx-research"))
# a page's wait for its widgets: a dozen times the target; a page that has not shown by
# then is a failure to show, not a slow figure (the row says which visit)
VISIT_TIMEOUT_S = 120
READY = "import pandas, pyarrow.parquet, warnings; warnings.simplefilter('ignore'); import time\n"


def _env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCTX_")}
    env["CCTX_CACHE_DIR"] = str(cache)
    return env


def _wall(cmd: list[str], env: dict[str, str]) -> float:
    began = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, cwd=ROOT, capture_output=True)
    return time.perf_counter() - began


def _printed(code: str, env: dict[str, str]) -> float:
    """Seconds a snippet prints (its own timer, so its imports are not counted)."""
    done = subprocess.run([PY, "-c", code], check=True, env=env, cwd=ROOT, capture_output=True,
                          text=True)  # fmt: skip
    return float(done.stdout.strip().splitlines()[-1])


def paired(a: list[str], b: list[str], env: dict[str, str], runs: int) -> tuple[float, float]:
    """Medians of A and B, run in turn (A B A B ...) after one warm-up each.

    A single run (``--quick``) has no warm-up: it proves the row, it does not measure.
    """
    if runs > 1:
        _wall(a, env), _wall(b, env)
    times_a, times_b = [], []
    for _ in range(runs):
        times_a.append(_wall(a, env))
        times_b.append(_wall(b, env))
    return statistics.median(times_a), statistics.median(times_b)


def start_up(suite: Suite, env: dict[str, str], runs: int) -> None:
    helped, argparse_only = paired([CLI, "--help"], [PY, "-c", "import argparse"], env, runs)
    suite.add(Row("1 cctx-research --help vs import argparse", helped, argparse_only, "s",
                  "<= 3x", helped <= 3 * argparse_only,
                  f"whole processes, median of {runs}"))  # fmt: skip
    face, pandas = paired([PY, "-c", "import cctx_research"], [PY, "-c", "import pandas"], env,
                          runs)  # fmt: skip
    suite.add(Row("2a import cctx_research vs import pandas", face, pandas, "s", "<= 1.3x",
                  face <= 1.3 * pandas, f"whole processes, median of {runs}"))  # fmt: skip
    reach = [PY, "-c", "import cctx_research as c; c.connect"]
    reached, pandas = paired(reach, [PY, "-c", "import pandas"], env, runs)
    suite.add(Row("2b import cctx_research, reach cctx.connect vs import pandas", reached,
                  pandas, "s", "-", None,
                  "loads pandas, the client and its HTTP stack"))  # fmt: skip


def first_connect(suite: Suite, tmp: Path, runs: int) -> None:
    env = _env(tmp / "connect-cache")
    connect = READY + (
        "import cctx_research as cctx\nt = time.perf_counter()\n"
        "client = cctx.connect(sample=True)\nprint(time.perf_counter() - t)\n"
    )
    cold = _printed(connect, env)
    parquet = tmp / "sample.parquet"
    write = READY + (
        f"from cctx_research.service.sample import generate\n"
        f"generate().to_parquet({str(parquet)!r}, index=False)\nprint(0)\n"
    )
    _printed(write, env)
    read = READY + (
        f"t = time.perf_counter()\nframe = pandas.read_parquet({str(parquet)!r})\n"
        "print(time.perf_counter() - t)\n"
    )
    answer = connect.replace("print(time.perf_counter() - t)", "client.volume()\n"
                             "print(time.perf_counter() - t)")  # fmt: skip
    warm, baseline, answered = [], [], []
    for _ in range(runs):
        warm.append(_printed(connect, env))
        baseline.append(_printed(read, env))
        answered.append(_printed(answer, env))
    value, base = statistics.median(warm), statistics.median(baseline)
    suite.add(Row("3a first connect() on the cached sample vs pd.read_parquet", value, base,
                  "s", "<= 2x", value <= 2 * base,
                  f"30 live days, a fresh process each, median of {runs}"))  # fmt: skip
    suite.add(Row("3b first connect(), cold build", cold, base, "s", "-", None,
                  "empty cache directory: every day built and kept"))  # fmt: skip
    # the sample's index is built by its first query: connect() and one answer, together
    suite.add(Row("3c first connect() and its first answer (volume) on the cached sample",
                  statistics.median(answered), base, "s", "-", None,
                  "the service indexes the sample on its first query"))  # fmt: skip


def report(suite: Suite, tmp: Path, quick: bool) -> None:
    # --quick proves the rows: its report reuses the sample's days row 3 built, if it ran
    # (one build of 31 days fewer); the full run's cold report builds them itself
    shared = tmp / "connect-cache"
    env = _env(shared if quick and shared.is_dir() else tmp / "report-cache")
    cmd = [CLI, "--log-level", "WARNING", "report", "--no-progress",
           "--out", str(tmp / "report.html")]  # fmt: skip
    if quick:  # a 3-day window, as run.py's quick form
        import pandas as pd

        today = pd.Timestamp.now(tz="UTC").floor("D")
        cmd += ["--start", (today - pd.Timedelta(days=3)).date().isoformat(),
                "--end", today.date().isoformat()]  # fmt: skip
    kept = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    # --quick proves the rows: it reads the caller's kept bytecode when it has some (the
    # test suite's), rather than compiling pandas, matplotlib and the toolkit again
    if not (quick and env.get("PYTHONPYCACHEPREFIX")):
        kept["PYTHONPYCACHEPREFIX"] = str(tmp / "bytecode")
    # --quick proves the rows: its cold run also writes the bytecode 4b reads (one report
    # process fewer); the full run writes it in a run of its own, so its cold run is cold
    cold = _wall(cmd, kept if quick else env)
    warm = min(_wall(cmd, env) for _ in range(1 if quick else 3))
    what = "3 days" if quick else "default 30 days (to the minute: a new minute is new data)"
    first = "its first run" if env["CCTX_CACHE_DIR"] == str(shared) else "its cold run"
    suite.add(Row("4 report on the sample, warm (target <= 5 s)", warm, cold, "s", "<= 5 s",
                  warm <= 5.0, f"whole process, {what}; baseline: {first}"))  # fmt: skip
    if not quick:
        _wall(cmd, kept)  # writes the bytecode
    compiled = min(_wall(cmd, kept) for _ in range(1 if quick else 3))
    suite.add(Row("4b report on the sample, warm, bytecode kept (target <= 5 s)", compiled,
                  cold, "s", "<= 5 s", compiled <= 5.0,
                  f"as row 4, the bytecode kept as an installed package's; {what}"))  # fmt: skip


def first_page(suite: Suite, tmp: Path, quick: bool) -> None:
    name = "5 dashboard first page, widgets visible (target <= 10 s)"
    # --quick proves the row: its app uses the sample's days row 3 built, if it ran (its
    # first kernel built them cold otherwise); the full run's app starts on an empty cache
    shared = tmp / "connect-cache"
    lent = quick and shared.is_dir()
    try:
        from browser_support import CHROMIUM, launch
        from dashboard_memory import Dashboard
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        suite.add(Row(name, float("nan"), None, "s", "<= 10 s", None, f"not run: {exc}",
                      text="-"))  # fmt: skip
        return
    if not Path(CHROMIUM).exists():
        suite.add(Row(name, float("nan"), None, "s", "<= 10 s", None, "not run: no chromium",
                      text="-"))  # fmt: skip
        return
    app = Dashboard(shared if lent else tmp / "dashboard-cache")
    took: list[float] = []
    try:
        with sync_playwright() as p:
            browser = launch(p)
            try:
                for _ in range(2):
                    took.append(_visit(browser, app.url))
            finally:
                browser.close()
    except Exception as exc:  # a page that never shows is a figure too: say so, go on
        suite.add(Row(name, float("nan"), None, "s", "<= 10 s", False,
                      f"not shown: visit {len(took) + 1}, {type(exc).__name__} "
                      f"(waited up to {VISIT_TIMEOUT_S} s)", text="-"))  # fmt: skip
        return
    finally:
        app.close()
    suite.add(Row(name, took[1], took[0], "s", "<= 10 s", took[1] <= 10.0,
                  "navigation to the first widget visible; baseline: the first visit, "
                  "server just started" + (", the sample's days built" if lent else "")))


def _visit(browser, url: str) -> float:
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    try:
        page = context.new_page()
        began = time.perf_counter()
        # Voila streams the page: its first bytes are the commit
        page.goto(url, timeout=VISIT_TIMEOUT_S * 1000, wait_until="commit")
        # the overview's status line: its widgets are on the page and have drawn
        page.get_by_text("transfers (all chains)").first.wait_for(timeout=VISIT_TIMEOUT_S * 1000)
        took = time.perf_counter() - began
        page.close(run_before_unload=True)
        return took
    finally:
        context.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: fewer repeats")
    parser.add_argument("--markdown", metavar="PATH", help="also write the table to this file")
    parser.add_argument("--rows", default="1,2,3,4,5", metavar="N,N",
                        help="the rows to measure, by number (default: all of 1,2,3,4,5)")
    args = parser.parse_args(argv)
    rows = set(args.rows.split(","))
    if not rows or not rows <= {"1", "2", "3", "4", "5"}:
        parser.error(f"--rows takes numbers from 1 to 5 with commas, got {args.rows!r}")
    runs = 1 if args.quick else 9  # --quick proves the table, it does not measure
    started = time.perf_counter()
    suite = Suite(quick=args.quick)
    with tempfile.TemporaryDirectory(prefix="cctx-bench-startup-") as name:
        tmp = Path(name)
        if rows & {"1", "2"}:
            start_up(suite, _env(tmp / "cache"), runs)
        if "3" in rows:
            first_connect(suite, tmp, 1 if args.quick else 5)
        if "4" in rows:
            report(suite, tmp, args.quick)
        if "5" in rows:
            first_page(suite, tmp, args.quick)
    text = table(suite.rows)
    footer = f"{'quick' if args.quick else 'full'} run in {time.perf_counter() - started:.0f} s "
    footer += f"on {machine()}"
    print(text)
    print()
    print(footer)
    if args.markdown:
        Path(args.markdown).write_text(text + "\n\n" + footer + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
