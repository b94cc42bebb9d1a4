"""The export benchmark runs (``benchmarks/exports.py --quick``), so it cannot rot.

Only the rows' shape and the transfers loaded are checked: the figures are the
benchmark's business, never a test's.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def test_the_quick_run_prints_both_figures(tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "exports.py"), "--quick"],
        cwd=tmp_path, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith("| 16")]
    cells = [[c.strip() for c in row.strip("|").split("|")] for row in rows]
    assert [c[0].split(": ")[1] for c in cells] == [
        "load vs pandas.read_csv, time", "load vs pandas.read_csv, peak RSS"]
    assert [c[1].split()[1] for c in cells] == ["s", "GiB"]
    # of the template's three rows, two are CCTP transfers: two thirds of 20,000 load
    assert "13,334 transfers loaded" in cells[0][-1]


def test_a_count_that_is_no_count_is_refused():
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "exports.py"), "--rows", "many"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--rows must be a count such as 1M, 250k or 20000, got 'many'" in done.stderr
