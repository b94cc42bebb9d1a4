"""The linking benchmark runs (``benchmarks/linking.py``), so it cannot rot.

Only the table's shape and what the run linked are checked: whether the time
and memory targets are met is the benchmark's business, never a test's.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
NUMBER = re.compile(r"^-?\d+(\.\d+)?(e[+-]\d+)?( [a-zA-Z/]+)?$")


def test_a_small_run_prints_both_figures_and_links_every_transfer(tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "linking.py"), "--transfers", "20000",
         "--repeat", "1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {}
    for line in done.stdout.splitlines():
        if line.startswith("| 10"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows[cells[0][:3]] = cells
    assert set(rows) == {"10a", "10b"}
    for cells in rows.values():
        assert NUMBER.match(cells[1]), cells
        assert NUMBER.match(cells[2]), cells
        assert cells[5] in ("pass", "MISS")
    assert "20,000 transfers; 20,000 linked" in rows["10a"][6]
