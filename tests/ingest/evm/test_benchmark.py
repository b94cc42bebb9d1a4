"""The decode benchmark runs (``benchmarks/decode.py --quick``), so it cannot rot.

Only the table's shape and the correctness figure are checked: whether the
speed target is met is the benchmark's business, never a test's.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
NUMBER = re.compile(r"^-?\d+(\.\d+)?( [a-zA-Z/]+)?$")


def test_quick_run_prints_the_figure_and_agrees(tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "decode.py"), "--quick", "--repeat", "1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {}
    for line in done.stdout.splitlines():
        if line.startswith("| 8 "):
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows[cells[0]] = cells
    speed = rows["8 decode_logs vs per-log eth-abi loop"]
    assert NUMBER.match(speed[1])
    assert NUMBER.match(speed[2])
    assert NUMBER.match(speed[3])
    assert speed[5] in ("pass", "MISS")
    assert "x faster" in speed[6]
    assert rows["8 decoder and loop agree"][1] == "1"
