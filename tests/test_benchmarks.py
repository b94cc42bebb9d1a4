"""The benchmark suites run (``benchmarks/run.py --quick``, ``benchmarks/scale.py --sizes 5k``),
so they cannot rot.

Only the shape of the table is checked: every figure has a row with numbers.
Whether a target is met is the suite's business, never a test's (timings on
a shared machine are not assertions). What is checked beyond the shape is
the data's correctness: the whole-history benchmark's generated transfers
are all linked, by ``load`` and by its SQL floor, as planted.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
FIGURES = [
    "1a cold pull vs naive loop",
    "1b cold pull vs no-HTTP limit",
    "1c cold pull vs naive loop, 50 ms RTT",
    "1d cold pull vs ideal, 50 ms RTT",
    "2a warm pull vs Parquet read",
    "2b warm pull vs cold pull",
    "3 cold pull time per row",
    "3 warm pull time per row",
    "4a peak RSS of the 16x pull vs frame",
    "4b frame vs Arrow table",
    "5 flows.graph vs bare groupby",
    "5 volumes.timeseries vs bare groupby",
    "5 addresses.top vs bare groupby",
    "6 hash lookup p99",
    "6 received page p99",
    "6 mint page p99",
    "6 volume 30 days p99",
    "6 top senders 30 days p99",
    "6 throughput, 8 clients over loopback",
    "7 report, cold cache",
    "7 report, warm cache",
]
NUMBER = re.compile(r"^-?\d+(\.\d+)?( [a-zA-Z/]+)?$")



def _table_rows(stdout: str) -> dict[str, dict[str, str]]:
    """The rows of a benchmark's printed table by figure name, checking its header."""
    lines = [line for line in stdout.splitlines() if line.startswith("| ")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert header == ["figure", "value", "baseline", "ratio", "target", "result", "detail"]
    rows = {}
    for line in lines[1:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = dict(zip(header, cells, strict=True))
    return rows

def test_quick_run_prints_every_figure(tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = _table_rows(done.stdout)
    for figure in FIGURES:
        matches = [name for name in rows if name.startswith(figure)]
        assert matches, f"no row for {figure!r} in:\n{done.stdout}"
        row = rows[matches[0]]
        assert NUMBER.match(row["value"]), row
        assert row["result"] in ("pass", "MISS", "info"), row
        if row["result"] != "info":
            assert NUMBER.match(row["baseline"]), row
            assert NUMBER.match(row["ratio"]), row
    assert len(rows) == len(FIGURES)


SCALE_FIGURES = [
    "13a generate {n} transfers",
    "13b SQL floor (DuckDB), time, {n}",
    "13b SQL floor: transfers linked vs planted, {n}",
    "13c load vs SQL floor, time, {n}",
    "13d load vs SQL floor, peak RSS, {n}",
    "13e load: transfers linked vs planted, {n}",
    '13f load(engine="duckdb") vs SQL floor, time, {n}',
    '13g load(engine="duckdb") vs SQL floor, peak RSS, {n}',
    '13h load(engine="duckdb"): transfers linked vs planted, {n}',
    "13i report on the ledger, time, {n}",
    "13i report on the ledger, peak RSS, {n}",
    "13j whole history (12M): load, then report --data, peak RSS",
]
SCALE_FIGURES = [figure.format(n="5k") for figure in SCALE_FIGURES]
"""At 5k transfers: every step and row of the 20k ``--quick`` form, a quarter of its work."""


@pytest.mark.timeout(660)  # the subprocess's own limit, not the suite's 300 s, ends it
def test_scale_quick_run_prints_every_row(tmp_path):
    """``scale.py --sizes 5k``: 5k generated transfers, the floor, load (pandas and duckdb) and
    the report all ran; the floor and both ledgers linked every minted transfer the generator
    planted, and the duckdb ledger holds the pandas one's rows."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "scale.py"), "--sizes", "5k", "--work",
         str(tmp_path / "work")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,  # five steps in their own processes, on a shared machine
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = _table_rows(done.stdout)
    assert list(rows) == SCALE_FIGURES
    for figure in SCALE_FIGURES[:11]:
        assert NUMBER.match(rows[figure]["value"].replace(",", "")), rows[figure]
    for figure in SCALE_FIGURES[2], SCALE_FIGURES[5], SCALE_FIGURES[8]:
        assert rows[figure]["result"] == "pass", rows[figure]
        assert rows[figure]["value"] == rows[figure]["baseline"], rows[figure]
    # the lazy engine's ledger holds the pandas ledger's rows, every column
    assert "equal to load's ledger" in rows[SCALE_FIGURES[8]]["detail"], rows[SCALE_FIGURES[8]]
    assert rows[SCALE_FIGURES[3]]["result"] in ("pass", "MISS")
    assert NUMBER.match(rows[SCALE_FIGURES[3]]["ratio"]), rows[SCALE_FIGURES[3]]
    assert rows[SCALE_FIGURES[-1]]["value"] == "-"  # the 12M row runs at 12M only


STARTUP_FIGURES = [
    "1 cctx-research --help vs import argparse",
    "2a import cctx_research vs import pandas",
    "2b import cctx_research, reach cctx.connect vs import pandas",
    "3a first connect() on the cached sample vs pd.read_parquet",
    "3b first connect(), cold build",
    "3c first connect() and its first answer (volume) on the cached sample",
    "4 report on the sample, warm (target <= 5 s)",
    "4b report on the sample, warm, bytecode kept (target <= 5 s)",
    "5 dashboard first page, widgets visible (target <= 10 s)",
]


@pytest.mark.timeout(960)  # the subprocess's own limit, not the suite's 300 s, ends it
def test_startup_quick_run_prints_every_row(tmp_path):
    """``startup.py --quick``: every start-up figure measured against its baseline."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "startup.py"), "--quick"],
        cwd=ROOT / "benchmarks",
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = _table_rows(done.stdout)
    assert list(rows) == STARTUP_FIGURES
    for figure in STARTUP_FIGURES[:5]:
        assert NUMBER.match(rows[figure]["value"]), rows[figure]
        assert NUMBER.match(rows[figure]["baseline"]), rows[figure]
    for figure in (STARTUP_FIGURES[0], STARTUP_FIGURES[1], STARTUP_FIGURES[3]):
        assert rows[figure]["result"] in ("pass", "MISS"), rows[figure]
    from browser_support import CHROMIUM

    if Path(CHROMIUM).exists():  # the app's page showed its widgets, on both visits
        assert NUMBER.match(rows[STARTUP_FIGURES[-1]]["value"]), rows[STARTUP_FIGURES[-1]]


SCALE_VIEWS_FIGURES = [
    "15c load 20k (duckdb, out=)",
    "15c baseline 20k: read the ledger into pandas",
    "15c report --data 20k: peak RSS",
    "15c dashboard --data 20k: peak RSS, server and kernels",
    "15c dashboard --data 20k: first page",
    "15c dashboard --data 20k: one window change",
]


@pytest.mark.timeout(1260)  # the subprocess's own limit, not the suite's 300 s, ends it
def test_scale_views_quick_run_prints_every_row(tmp_path):
    """``scale_views.py --quick``: 20k transfers loaded as ``sync`` loads them, read into pandas
    (the baseline), reported on, and shown by the dashboard, which opened on the data's last
    week (the data ends long before today) and whose window change redrew it over two."""
    from browser_support import CHROMIUM

    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "scale_views.py"), "--quick", "--work",
         str(tmp_path / "work")],
        cwd=tmp_path, capture_output=True, text=True, timeout=1200,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = _table_rows(done.stdout)
    assert list(rows) == SCALE_VIEWS_FIGURES
    shown = Path(CHROMIUM).exists()
    for figure in SCALE_VIEWS_FIGURES[: 6 if shown else 3]:
        assert NUMBER.match(rows[figure]["value"].replace(",", "")), rows[figure]
    assert "20,000 rows" in rows[SCALE_VIEWS_FIGURES[1]]["detail"]  # the whole ledger read
    if shown:  # the first page is on the data's last week (not today's, empty), then two
        opened = rows[SCALE_VIEWS_FIGURES[4]]["detail"]
        assert re.search(r"last 7 days: '[1-9][\d,]* transfers \(all chains\)", opened), opened
        redraw = rows[SCALE_VIEWS_FIGURES[5]]["detail"]
        assert re.search(r"now: '[1-9][\d,]* transfers \(all chains\)", redraw), redraw
        counts = [int(re.search(r"'([\d,]+) transfers", t)[1].replace(",", ""))
                  for t in (opened, redraw)]  # fmt: skip
        assert counts[1] > counts[0]  # two weeks hold more than the last one


def test_scale_spill_probes_every_statement_of_the_sql_load(tmp_path, monkeypatch):
    """``scale_spill.py`` on a small generated dataset: the load's statements listed with
    their spill and RSS, the run's peaks said, its ledger file removed; no dataset refused."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    from scale_data import QUICK_DAYS, generate

    generate(tmp_path / "sync", 2_000, seed=5, part_logs=4_000, check=4, days=QUICK_DAYS)
    script = ROOT / "benchmarks" / "scale_spill.py"
    run = subprocess.run([sys.executable, str(script), str(tmp_path / "sync"), "--top", "3"],
                         capture_output=True, text=True, timeout=600)  # fmt: skip
    assert run.returncode == 0, run.stderr
    listed = [line for line in run.stdout.splitlines() if re.match(r"^ +\d+\.\d ", line)]
    assert len(listed) == 6, run.stdout  # the top 3 by spill, then by time
    peaks = re.search(r"peak spill (\d+) MiB; peak RSS (\d+) MiB; (\d+) statements", run.stdout)
    assert peaks, run.stdout
    assert int(peaks.group(2)) > 50, run.stdout  # the RSS was sampled
    assert int(peaks.group(3)) > 10, run.stdout  # every statement, not one
    assert "cx_" in run.stderr  # each statement as it ends, the load's own tables named
    assert not (tmp_path / "probe-ledger.parquet").exists()
    refused = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True,
                             text=True, timeout=120)  # fmt: skip
    assert refused.returncode == 2
    assert "no generated.json" in refused.stderr


def test_memory_stacks_names_where_a_command_took_its_memory(tmp_path):
    """``memory_stacks.py``: the command ran (its file written), then its peak and a line
    per step of RSS with the toolkit's frames taking the memory."""
    src = ROOT / "tests" / "fixtures" / "dune" / "bridges_evms_flows.csv"
    out = tmp_path / "ledger.parquet"
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "memory_stacks.py"), "--step", "1",
         "import", str(src), "--no-progress", "--out", str(out)],
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert out.is_file()
    lines = done.stdout.splitlines()
    peak = next(i for i, line in enumerate(lines) if re.search(r"s, peak RSS \d+\.\d\d GiB$", line))
    steps = lines[peak + 1 :]
    assert steps, done.stdout
    assert all(re.match(r"^ +\d+\.\d s +\d+\.\d\d GiB  ", line) for line in steps), steps
    assert any(".py:" in line for line in steps), steps  # some step named a frame of ours
    bad = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "memory_stacks.py")],
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    assert bad.returncode == 2
    assert "give the cctx-research command to run" in bad.stderr
