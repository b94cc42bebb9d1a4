"""A panel's value set while a Voila page makes its widgets reaches the page.

Voila serving a notebook (``fixtures/widgets/load_race.ipynb``) whose panel sets
its status line on a thread the moment the kernel has answered the page's request
for the widgets' state: the update reaches the page while it is still making its
models from the answer, and the page drops it. The panel is sent again when the
page displays it (``cctx_research/widgets/_states.py``), so the page ends on the
kernel's value; without that, on the answer's ("fetching"), every time.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
from browser_support import free_port, jupyter_server, launch, needs_chromium, needs_module

needs_module("voila")
sync_api = pytest.importorskip("playwright.sync_api")

NOTEBOOK = Path(__file__).parent / "fixtures" / "widgets" / "load_race.ipynb"
pytestmark = [pytest.mark.slow, needs_chromium]


def _listening(port: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.25)
    return False


def test_a_value_set_while_the_page_makes_its_widgets_is_shown(tmp_path):
    port = free_port()
    log = tmp_path / "voila.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCTX_")}
    with log.open("w") as stderr:
        proc = subprocess.Popen(
            [*jupyter_server("voila.app"), str(NOTEBOOK), "--no-browser", f"--port={port}",
             "--Voila.ip=127.0.0.1"],
            stdout=subprocess.DEVNULL, stderr=stderr, env=env, start_new_session=True,
        )  # fmt: skip
    try:
        assert _listening(port, 120), f"Voila did not start: {log.read_text()[-2000:]}"
        with sync_api.sync_playwright() as p:
            browser = launch(p)
            try:
                page = browser.new_page()
                page.goto(f"http://127.0.0.1:{port}/", timeout=120_000)
                status = page.locator(".widget-html").first
                status.wait_for(timeout=120_000)
                shown = ""
                for _ in range(240):  # a minute: the page has its models within seconds
                    shown = status.inner_text()
                    if shown == "drawn after the answer":
                        break
                    page.wait_for_timeout(250)
                assert shown == "drawn after the answer", (
                    f"the page shows {shown!r}; Voila's log ends:\n{log.read_text()[-2000:]}"
                )
            finally:
                browser.close()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(60)
