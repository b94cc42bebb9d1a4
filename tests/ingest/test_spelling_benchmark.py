"""The spelling benchmark runs (``benchmarks/spelling.py``), so it cannot rot.

Only the row's shape is checked: whether the target is met is the
benchmark's business, never a test's.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def test_a_small_run_prints_the_figure(tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "spelling.py"), "--transfers", "5000",
         "--repeat", "1"],
        cwd=tmp_path, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (row,) = [line for line in done.stdout.splitlines() if line.startswith("| 14")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1].endswith(" s")
    assert cells[2].endswith(" s")
    assert float(cells[3]) > 0
    assert "to Solana" in cells[6]
