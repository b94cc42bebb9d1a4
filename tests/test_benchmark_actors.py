"""``benchmarks/actors.py`` runs (a small form), so figure 12 cannot rot.

Only the table's shape is checked, with every analysis on both engines
(``dedupe`` on DuckDB included, which returns a relation); whether a
target is met is the benchmark's business, not a test's.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
NAMES = [
    "actors.relayers by route",
    "actors.integrators",
    "movements.rebalancing_share",
    "movements.dedupe",
]
NUMBER = re.compile(r"^-?\d+(\.\d+)?( [a-zA-Z/]+)?$")


def test_actors_benchmark_prints_every_analysis_on_both_engines(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "actors.py"),
            "--rows",
            "20000",
            "--repeat",
            "1",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line for line in done.stdout.splitlines() if line.startswith("| 12 ")]
    rows = {
        line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]] for line in lines
    }
    want = [
        f"12 {name} vs group-by ({engine})" for engine in ("pandas", "duckdb") for name in NAMES
    ]
    assert sorted(rows) == sorted(want)
    for figure, (value, baseline, ratio, _target, result, detail) in rows.items():
        for cell in (value, baseline, ratio):
            assert NUMBER.match(cell), (figure, cell)
        assert result in ("pass", "MISS"), figure
        assert re.search(r"CPU [\d.]+ s vs [\d.]+ s \([\d.]+x\)", detail), figure
