"""The sync benchmark runs (``benchmarks/sync.py --quick``), so it cannot rot.

Only the table's shape and what the run synced are checked (the script
itself stops when sync and the naive loop got different logs): whether the
targets are met is the benchmark's business, never a test's.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import _need_anvil

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
NUMBER = re.compile(r"^-?\d+(\.\d+)?( [a-zA-Z/]+)?$")


def test_quick_run_prints_every_figure(tmp_path):
    _need_anvil()
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "sync.py"), "--quick", "--rtt-ms", "50"],
        cwd=tmp_path, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {}
    for line in done.stdout.splitlines():
        if line.startswith("| 11"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows[cells[0][:3]] = cells
    assert set(rows) == {"11a", "11b", "11c", "11d"}, done.stdout
    for cells in rows.values():
        assert NUMBER.match(cells[1]), cells
        assert NUMBER.match(cells[2]), cells
        assert NUMBER.match(cells[3]), cells
        assert cells[5] in ("pass", "MISS"), cells
    assert rows["11a"][6].startswith("800 logs"), rows["11a"]
    assert "100 eth_getBlockByNumber" in rows["11a"][6]
    assert rows["11c"][6].startswith("800 logs"), rows["11c"]
    assert "range now 2,000" in rows["11c"][6]
