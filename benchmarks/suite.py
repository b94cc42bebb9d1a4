"""The shared pieces of the benchmark scripts: the table, its rows, the pinned service.

``run.py`` (the whole suite), ``service_latency.py`` and ``decode.py`` all
import from here and never from each other's ``main``: no script imports a
script that imports it back.
"""

from __future__ import annotations

import contextlib
import math
import os
import platform
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

AS_OF = pd.Timestamp("2024-07-01", tz="UTC")
BASE_PER_DAY = 2_800  # the sample's default
MILLION_PER_DAY = 33_334
PAGE_SIZE = 100
WARM_PULLS = 4
NS = 1_000_000_000


# ---------------------------------------------------------------------------
# the table


@dataclass
class Row:
    """One figure: ``ratio = value / baseline``, met when ``ok``."""

    figure: str
    value: float
    baseline: float | None
    unit: str
    target: str
    ok: bool | None  # None: for information, no target
    detail: str = ""
    text: str | None = None  # shown instead of the value where there is none ("out of memory")

    @property
    def ratio(self) -> float | None:
        if self.baseline is None or self.baseline == 0:
            return None
        return self.value / self.baseline


@dataclass
class Suite:
    quick: bool
    rows: list[Row] = field(default_factory=list)

    def add(self, row: Row) -> None:
        self.rows.append(row)
        print(f"  {row.figure}: {fmt(row.value, row.unit)} ({row.detail})", file=sys.stderr)


def fmt(value: float | None, unit: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if unit == "s":
        return f"{value:.3f} s"
    if unit == "ms":
        return f"{value:.2f} ms"
    if unit == "us/row":
        return f"{value:.2f} us/row"
    if unit == "MB":
        return f"{value:.1f} MB"
    if unit == "req/s":
        return f"{value:.0f} req/s"
    if unit == "n":
        return f"{value:,.0f}"
    return f"{value:.3g} {unit}".strip()


def table(rows: list[Row]) -> str:
    """The rows as a Markdown table (readable in a terminal too)."""
    head = ["figure", "value", "baseline", "ratio", "target", "result", "detail"]
    body = []
    for r in rows:
        ratio = r.ratio
        body.append(
            [
                r.figure,
                r.text if r.text is not None else fmt(r.value, r.unit),
                fmt(r.baseline, r.unit) if r.baseline is not None else "-",
                "-" if ratio is None else f"{ratio:.2f}",
                r.target,
                "info" if r.ok is None else ("pass" if r.ok else "MISS"),
                r.detail,
            ]
        )
    widths = [max(len(x) for x in col) for col in zip(head, *body, strict=True)]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    out = [line(head), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [line(b) for b in body]
    return "\n".join(out)


def best(fn: Callable[[], Any], repeat: int) -> float:
    """Fastest of ``repeat`` calls, in seconds."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for text in Path("/proc/cpuinfo").read_text().splitlines():
            if text.startswith("model name"):
                cpu = text.split(":", 1)[1].strip()
                break
    mem = ""
    with contextlib.suppress(OSError, ValueError, IndexError):
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 2**20:.0f} GiB"
    return (
        f"{platform.system()} {platform.release()}, {cpu}, {os.cpu_count()} cores{mem}; "
        f"Python {platform.python_version()}, pandas {pd.__version__}, numpy {np.__version__}"
    )


# ---------------------------------------------------------------------------
# the service in its own process


def stop(proc: subprocess.Popen, grace: float = 10.0) -> None:
    """End a child process: asked to stop, then killed if it has not within ``grace`` seconds."""
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def served(per_day: int, *, timeout: float = 600) -> Iterator[str]:
    """``cctx-research serve`` of the pinned sample in a subprocess; yields its URL."""
    import requests

    port = _free_port()
    cmd = [
        sys.executable, "-m", "cctx_research.cli", "--log-level", "WARNING", "serve",
        "--as-of", AS_OF.isoformat(), "--port", str(port), "--per-day", str(per_day),
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=ROOT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the service exited with {proc.returncode}: {cmd}")
            try:
                requests.post(f"{url}/rest", timeout=2)
                break
            except requests.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield url
    finally:
        stop(proc)


@contextlib.contextmanager
def delayed(url: str, rtt_ms: float) -> Iterator[str]:
    """The delaying proxy (``delay_proxy.py``) in its own process, in front of ``url``."""
    cmd = [sys.executable, str(HERE / "delay_proxy.py"), url, "--rtt-ms", str(rtt_ms)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        stop(proc)


# ---------------------------------------------------------------------------
# a local EVM node with real CCTP logs (figure 11 and the sync faults)

CCTP_TRANSFERS = [  # (fixture entry, burn or mint on Base); sources in tests/fixtures/cctp_real
    ("v2_attested_base_to_eth_19500", "burn"),
    ("v1_base_to_ethereum_761503", "burn"),
    ("v2_attested_op_to_base_fast_fee1", "mint"),
    ("v1_ethereum_to_base_282099", "mint"),
]


def cctp_logs() -> list[dict[str, Any]]:
    """The logs of four real transfers as Base's CCTP contracts emit them (8 logs).

    Rebuilt from real messages by ``tests/ingest/real.py``; a V2 and a V1
    burn, a V2 and a V1 mint.
    """
    if str(ROOT / "tests") not in sys.path:
        sys.path.insert(0, str(ROOT / "tests"))
    from ingest import real

    out: list[dict[str, Any]] = []
    for entry, side in CCTP_TRANSFERS:
        make = real.burn_logs if side == "burn" else real.mint_logs
        out += make(real.message(entry), block=1, tx_hash=real.tx(entry), index=0, time=0)
    return out


def window_s(days: int) -> tuple[int, int]:
    """``[start, end)`` of the last ``days`` days before AS_OF, in Unix seconds."""
    end = AS_OF.value // NS
    return end - days * 86_400, end


