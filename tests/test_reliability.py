"""The reliability figures in quick mode: ``benchmarks/reliability.py --quick``.

The correctness figures are asserted (rows lost and duplicated 0, frames
identical, 0 responses with a 5xx, every error an envelope naming the
problem, typed errors for persistent faults, no lock errors, damaged cache
files caught, the key found 0 times); timings are reported, never asserted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.evm_node import anvil_path

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_quick_reliability_figures(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "reliability.py"),
            "--quick",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=540,
        cwd=ROOT,
        check=False,
    )
    assert out.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    rows = json.loads(out.read_text())
    figures = {(r["section"], r["name"]): r for r in rows}
    missed = [
        f"{r['section']}: {r['name']} = {r['value']}"
        for r in rows
        if r["correctness"] and not r["ok"]
    ]
    assert missed == [], done.stdout[-3000:]
    assert done.returncode == 0, done.stderr[-3000:]
    for key, value in [
        (("faults", "rows lost"), "0"),
        (("faults", "rows duplicated"), "0"),
        (("faults", "persistent faults: results returned (partial)"), "0"),
        (("faults", "persistent faults: cache entries left"), "0"),
        (("bad input", "responses with a 5xx"), "0"),
        (("cache", "lock errors / other errors"), "0 / 0"),
    ]:
        assert figures[key]["value"] == value, (key, figures[key])
    assert figures[("faults", "persistent faults: calls ending in the typed error")][
        "value"
    ].endswith("(100%)")
    assert figures[("bad input", "JSON envelopes naming the problem")]["value"].endswith("(100%)")
    synced = [r for r in rows if r["section"] == "sync" and r["correctness"]]
    if anvil_path() is not None:  # sync against a real node: every fault, each one checked
        assert len(synced) >= 20, [r["name"] for r in synced]
        assert figures[("sync", "node gone mid-sync: error")]["value"] == "ServerError"
        assert figures[("sync", "disk full: partial files left")]["value"] == "0"
    secrets = [
        r for r in rows if r["section"] == "secrets" and r["name"].startswith("key occurrences")
    ]
    assert len(secrets) >= 6
    assert all(r["value"].startswith("0 in ") for r in secrets), secrets


def test_the_ctrl_c_checks_hear_sigint_in_a_run_started_with_it_ignored() -> None:
    """Started in the background, a run has SIGINT ignored: the sync section's Ctrl-C checks
    take Python's handler for their time (else they wait on a stalled node), then give it back."""
    import os
    import signal
    import time

    if str(ROOT / "benchmarks") not in sys.path:
        sys.path.insert(0, str(ROOT / "benchmarks"))
    import sync_faults

    before = signal.getsignal(signal.SIGINT)
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)

        def ctrl_c() -> None:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)  # the handler raises at once; the sleep only bounds a failure

        with sync_faults._ctrl_c_heard():
            assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
            with pytest.raises(KeyboardInterrupt):
                ctrl_c()
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN

        def own(signum: int, frame: object) -> None:
            pass

        signal.signal(signal.SIGINT, own)
        with sync_faults._ctrl_c_heard():  # a handler already there is left alone
            assert signal.getsignal(signal.SIGINT) is own
        assert signal.getsignal(signal.SIGINT) is own
    finally:
        signal.signal(signal.SIGINT, before)
