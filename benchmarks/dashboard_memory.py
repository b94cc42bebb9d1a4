"""The dashboard's memory over many visits: a section of ``reliability.py`` (the command is there).

``cctx-research dashboard`` runs as a subprocess on loopback (the bundled
sample, ``--kernel-timeout 2``); Debian's Chromium, driven by Playwright
(``tests/browser_support.py``), opens the app, waits until the dashboard has
drawn its figures and status line, and closes the page. Half the pages are
closed as a tab is closed (the browser tells Voila); the other half cannot
say goodbye (their beacon is muted, as when a browser crashes or loses the
network), so only the culling of idle kernels can end theirs.

After each close the section waits (at most a minute) until no kernel is
left, then reads the memory: the server process's RSS plus the RSS of every
kernel it still runs. The figure is that memory after the last visit over
the memory after the first; a page's kernel (read while its page is open,
once the dashboard has drawn) is some hundreds of MB, so one kernel left
behind per visit would show as a ratio far above the target.

Run alone (the app's section only)::

    python benchmarks/dashboard_memory.py --quick    # 2 visits; 20 without --quick
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

VISITS_FULL = 20
VISITS_QUICK = 2  # one page closed as a tab is, one that cannot say goodbye
TARGET = 1.2
KERNEL_TIMEOUT_S = 10
"""Idle seconds before the app culls a page's kernel: long enough that a kernel still
starting is never culled (at 2 s it was, before it answered, on a busy machine)."""
NO_GOODBYE = "Object.defineProperty(Navigator.prototype, 'sendBeacon', {value: () => true});"


class Dashboard:
    """``cctx-research dashboard`` in a subprocess; its memory and its kernels."""

    def __init__(self, cache_dir: Path) -> None:
        import psutil
        from browser_support import free_port  # tests/browser_support.py, reused

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        env = {k: v for k, v in os.environ.items() if not k.startswith("CCTX_")}
        env["CCTX_CACHE_DIR"] = str(cache_dir)
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "cctx_research.cli",
                "dashboard",
                "--port",
                str(self.port),
                "--kernel-timeout",
                str(KERNEL_TIMEOUT_S),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
            start_new_session=True,
        )
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        if self.url.rstrip("/") not in line:
            self.close()
            raise RuntimeError(f"the dashboard did not start: {line!r}")
        self.server = psutil.Process(self.proc.pid)

    def kernels(self) -> list[Any]:
        import psutil

        found = []
        for child in self.server.children(recursive=True):
            with contextlib.suppress(psutil.Error):  # it ended meanwhile
                if "ipykernel_launcher" in " ".join(child.cmdline()):
                    found.append(child)
        return found

    def memory(self) -> int:
        """RSS of the server process plus that of every kernel it runs, in bytes."""
        import psutil

        total = self.server.memory_info().rss
        for kernel in self.kernels():
            with contextlib.suppress(psutil.Error):  # it ended meanwhile
                total += kernel.memory_info().rss
        return total

    def wait_for_no_kernel(self, seconds: float = 60) -> bool:
        deadline = time.monotonic() + seconds
        while self.kernels():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.25)
        return True

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def _visit(browser: Any, app: Dashboard, *, goodbye: bool) -> int:
    """Open the app, wait until the dashboard has drawn, close the page.

    Returns the page's kernel memory (RSS, bytes) once the dashboard has drawn.
    """
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    try:
        if not goodbye:
            context.add_init_script(NO_GOODBYE)
        page = context.new_page()
        page.goto(app.url, timeout=180_000)
        page.get_by_text("transfers (all chains)").first.wait_for(timeout=180_000)
        kernel = app.memory() - app.server.memory_info().rss
        page.close(run_before_unload=True)
        return kernel
    finally:
        context.close()


def section_dashboard(t: Any, tmp: Path, quick: bool) -> None:
    """Visit and close the dashboard N times; its memory after N over after one."""
    visits = VISITS_QUICK if quick else VISITS_FULL
    name = f"dashboard memory after {visits} page visits and closes / after one"
    target = f"<= {TARGET}x (20 visits full)"
    try:
        import voila  # noqa: F401
        from browser_support import CHROMIUM, launch  # tests/browser_support.py, reused
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        t.add("dashboard", name, f"not run: {exc.name} missing", target, None, correctness=False)
        return
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        t.add("dashboard", name, "not run: no chromium", target, None, correctness=False)
        return

    from sample_seed import seed  # tests/sample_seed.py: the sample's days, built once

    # the figure is memory over visits, not the sample's cold build: the days are lent
    app = Dashboard(seed(tmp / "dashboard-cache"))
    memory: list[int] = []
    left: list[int] = []
    took: list[float] = []
    kernel: list[int] = []
    try:
        with sync_playwright() as p:
            browser = launch(p)
            try:
                for i in range(visits):
                    began = time.perf_counter()
                    kernel.append(_visit(browser, app, goodbye=i % 2 == 0))
                    took.append(time.perf_counter() - began)
                    app.wait_for_no_kernel()
                    left.append(len(app.kernels()))
                    memory.append(app.memory())
            finally:
                browser.close()
    finally:
        app.close()

    ratio = memory[-1] / memory[0]
    mib = 1024 * 1024
    t.add(
        "dashboard",
        name,
        f"{ratio:.2f}x ({memory[0] / mib:.0f} -> {memory[-1] / mib:.0f} MiB)",
        target,
        ratio <= TARGET and visits >= (VISITS_QUICK if quick else VISITS_FULL),
    )
    t.add(
        "dashboard",
        "kernels left after the closes (most at any close)",
        max(left),
        "0",
        max(left) == 0,
    )
    t.add(
        "dashboard",
        "a page's kernel once drawn (RSS): median, most",
        f"{sorted(kernel)[len(kernel) // 2] / mib:.0f} MiB, {max(kernel) / mib:.0f} MiB",
        "-",
        None,
        correctness=False,
    )
    t.add(
        "dashboard",
        "seconds a visit (open, dashboard drawn, close): median",
        f"{sorted(took)[len(took) // 2]:.1f} s",
        "-",
        None,
        correctness=False,
    )


def main(argv: list[str] | None = None) -> int:
    import argparse
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from reliability import Table

    parser = argparse.ArgumentParser(description="The dashboard's memory over many visits")
    parser.add_argument("--quick", action="store_true", help=f"{VISITS_QUICK} visits, not "
                        f"{VISITS_FULL}")  # fmt: skip
    args = parser.parse_args(argv)
    table = Table()
    with tempfile.TemporaryDirectory(prefix="cctx-bench-dashboard-") as tmp:
        section_dashboard(table, Path(tmp), args.quick)
    print()
    print(table.render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
