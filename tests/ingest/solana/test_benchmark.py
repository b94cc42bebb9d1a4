"""The Solana decode benchmark runs (``benchmarks/solana_decode.py``), so it cannot rot.

Only that it runs, prints its figure and that both decoders agree (the run
asserts it) are checked: whether the speed target is met is the benchmark's
business, never a test's.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]


def test_small_run_prints_the_figure_and_agrees(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "solana_decode.py"), "-n", "2000",
         "--repeat", "1", "--sample", "10"],
        cwd=tmp_path, capture_output=True, text=True, timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "solana decode_replies vs per-transaction loop" in done.stdout
    assert "2,000 transactions" in done.stdout
