"""Notebook 02 opened in JupyterLab in a real browser and run: its dashboard renders."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from browser_support import free_port, jupyter_server, launch, needs_chromium, needs_module
from sample_seed import seed

needs_module("jupyterlab")
sync_api = pytest.importorskip("playwright.sync_api")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
TOKEN = "cctx-browser-test"
pytestmark = [pytest.mark.slow, needs_chromium]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    port = free_port()
    root = tmp_path_factory.mktemp("lab")
    shutil.copy(NOTEBOOKS / "02_chain_flows.ipynb", root)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCTX_")}
    env["CCTX_CACHE_DIR"] = str(seed(root / "cache"))  # the sample, built once a session
    env["JUPYTER_CONFIG_DIR"] = str(root / "config")
    proc = subprocess.Popen(
        [*jupyter_server("jupyterlab.labapp"), "--no-browser", f"--port={port}",
         f"--ServerApp.token={TOKEN}", f"--ServerApp.root_dir={root}",
         "--LabApp.expose_app_in_browser=True", "--ServerApp.ip=127.0.0.1", "--allow-root"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(60)


def test_notebook_02_runs_in_jupyterlab_and_its_dashboard_renders(lab, tmp_path):
    with sync_api.sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{lab}/lab/tree/02_chain_flows.ipynb?token={TOKEN}", timeout=120_000)
            page.wait_for_function("() => window.jupyterapp !== undefined", timeout=120_000)
            page.locator(".jp-Notebook").first.wait_for(timeout=120_000)
            page.wait_for_function(
                "() => window.jupyterapp.commands.isEnabled('notebook:run-all-cells')",
                timeout=120_000,
            )
            # run all once the kernel is up (before that, run-all runs nothing)
            page.get_by_text("Python 3 (ipykernel) | Idle").first.wait_for(timeout=120_000)
            for _ in range(3):
                page.evaluate(
                    "() => window.jupyterapp.commands.execute('notebook:run-all-cells')"
                )
                try:
                    page.get_by_text("[1]:").first.wait_for(timeout=30_000)
                    break
                except Exception:
                    continue
            try:
                page.locator(".jp-OutputArea .widget-dropdown").first.wait_for(timeout=240_000)
                page.locator(".jp-OutputArea img").first.wait_for(timeout=60_000)
            except Exception:
                shot = tmp_path / "jupyterlab-failure.png"
                page.screenshot(path=str(shot), full_page=True)
                pytest.fail(f"the dashboard did not render in JupyterLab (screenshot: {shot})")
            assert page.get_by_text("Error displaying widget").count() == 0
        finally:
            browser.close()
