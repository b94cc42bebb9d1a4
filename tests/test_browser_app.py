"""`cctx-research dashboard` in a real browser: Playwright driving Debian's Chromium.

One dashboard process and one browser serve the whole module. Each step
checks that the page shows the new state after a change (titles, counts,
figures). On failure a screenshot is written and its path is in the message.
With ``CCTX_UPDATE_SCREENSHOT=1`` the run also refreshes ``docs/dashboard.png``,
the README's picture of the app.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from browser_support import free_port, launch, needs_chromium

pytest.importorskip("voila")
sync_api = pytest.importorskip("playwright.sync_api")

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.slow, needs_chromium]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCTX_")}
    env["CCTX_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "cctx_research.cli", "dashboard", "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
        start_new_session=True,
    )  # fmt: skip
    try:
        assert f"127.0.0.1:{port}" in proc.stdout.readline()
        yield f"http://127.0.0.1:{port}/"
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(60)


@pytest.fixture(scope="module")
def page(app, tmp_path_factory):
    shots = tmp_path_factory.mktemp("screenshots")
    with sync_api.sync_playwright() as p:
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(app, timeout=180_000)
        page.locator(".widget-dropdown").first.wait_for(timeout=180_000)
        page.shots = shots  # type: ignore[attr-defined]
        yield page
        browser.close()


def _fail(page, what: str) -> None:
    shot = page.shots / f"{what.replace(' ', '-')}.png"
    page.screenshot(path=str(shot), full_page=True)
    pytest.fail(f"{what} (screenshot: {shot})")


def _wait(page, check, what: str, timeout_ms: int = 90_000) -> None:
    """Poll ``check()`` until it is true; fail with a screenshot when it never is."""
    waited = 0
    while not check():
        if waited >= timeout_ms:
            _fail(page, what)
        page.wait_for_timeout(250)
        waited += 250


def _status(page) -> str:
    texts = page.locator(".widget-html").all_inner_texts()
    return next((t for t in texts if "transfers (" in t), "")


def _images(page) -> list[str]:
    return [img.get_attribute("src") or "" for img in page.locator("img").all()]


def test_every_widget_renders(page):
    _wait(page, lambda: _status(page) != "", "the dashboard's status line never showed")
    for broken in ("Loading widget", "Error displaying widget"):
        assert page.get_by_text(broken).count() == 0, broken
    tabs = page.locator(".lm-TabBar-tab").all_inner_texts()
    assert tabs == ["Dashboard", "Address explorer", "Transaction lookup"]
    assert len([s for s in _images(page) if s.startswith("blob:") or s.startswith("data:")]) >= 3
    assert page.get_by_text("Synthetic data").count() >= 1
    if os.environ.get("CCTX_UPDATE_SCREENSHOT") == "1":
        page.screenshot(path=str(ROOT / "docs" / "dashboard.png"))


def test_bucket_metric_top_n_and_chains_redraw(page):
    _wait(page, lambda: _status(page) != "", "no status line")
    before = _images(page)
    page.locator(".widget-dropdown select").select_option(label="hour")
    _wait(page, lambda: _images(page) != before, "changing the bucket redrew no figure")

    page.get_by_role("button", name="count", exact=True).click()
    _wait(page, lambda: page.get_by_text("recipients by count").count() > 0,
          "the top table did not switch to counts")  # fmt: skip
    page.get_by_role("button", name="sender", exact=True).click()
    _wait(page, lambda: page.get_by_text("senders by count").count() > 0,
          "the top table did not switch to senders")  # fmt: skip

    slider = page.locator(".widget-slider .slider").first
    slider.click()
    page.keyboard.press("End")  # the slider's largest top-N
    _wait(page, lambda: page.get_by_text("Top 10 senders").count() == 0,
          "moving the top-N slider did not change the table")  # fmt: skip

    status = _status(page)
    page.locator(".widget-select-multiple select").select_option(label="Base")
    _wait(page, lambda: "base" in _status(page) and _status(page) != status,
          "picking a chain did not redraw with it")  # fmt: skip


def test_address_and_transaction_lookups(page):
    import cctx_research as cctx

    ledger = cctx.load_sample(days=3)
    done = ledger[
        ledger["mint_timestamp"].notna()
        & (ledger["mint_timestamp"] < pd.Timestamp.now(tz="UTC") - pd.Timedelta(hours=2))
        & ledger["burn_tx_hash"].str.startswith("0x")
        & ledger["mint_recipient"].str.startswith("0x")
    ].iloc[0]

    page.locator(".lm-TabBar-tab", has_text="Address explorer").click()
    box = page.locator(".widget-text", has_text="Address").locator("input")
    box.fill(done["mint_recipient"])
    box.press("Enter")
    _wait(page, lambda: page.get_by_text(done["mint_recipient"][:10]).count() > 0
          and page.get_by_text("Enter an address").count() == 0,
          "the address explorer did not show the address")  # fmt: skip

    page.locator(".lm-TabBar-tab", has_text="Transaction lookup").click()
    box = page.locator(".widget-text", has_text="Tx hash").locator("input")
    box.fill(done["burn_tx_hash"])
    box.press("Enter")
    _wait(page, lambda: page.locator(f"a[href*='{done['burn_tx_hash']}']").count() > 0,
          "the transaction lookup did not show the transaction")  # fmt: skip
