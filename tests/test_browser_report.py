"""The report as a person sees it: Debian's Chromium (through Playwright) at 1280 and 1024 px.

The report is the README's main job (`cctx-research report` on the embedded sample). At
each width: nothing wider than the window, no raw warning text, every image decoded, every
chain with data named. Screenshots are taken every run (the test's folder); with
``CCTX_SCREENSHOTS=docs`` they also replace ``docs/report-<width>.png``, which the README
shows.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from browser_support import launch, needs_chromium

from cctx_research.cli import main

DOCS = Path(__file__).resolve().parents[1] / "docs"
WIDTHS = (1280, 1024)
RAW_WARNING = ("Warning:", "warnings.warn", "Traceback", ".py:", "UserWarning")

pytestmark = [needs_chromium, pytest.mark.slow]


@pytest.fixture(scope="module")
def report_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "report.html"
    assert main(["report", "--out", str(out), "--no-progress"]) == 0
    return out


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_report_reads_right_at_common_widths(report_page, browser, width, tmp_path):
    page = browser.new_page(viewport={"width": width, "height": 900})
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(
        ("file:", "data:")) else None)  # fmt: skip
    page.goto(report_page.as_uri())
    page.wait_for_load_state("load")
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"{overflow}px wider than a {width}px window"
    wide = page.evaluate("""() => [...document.querySelectorAll('table, img, figure, pre')]
        .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
        .map(e => e.tagName + ' ' + (e.closest('section') || {}).id)""")
    assert wide == [], f"past the right edge at {width}px: {wide}"
    text = page.inner_text("body")
    for raw in RAW_WARNING:
        assert raw not in text, f"raw warning text {raw!r} on the page"
    broken = page.evaluate("""() => [...document.images]
        .filter(i => !i.complete || i.naturalWidth === 0).map(i => i.alt)""")
    assert broken == []
    assert page.evaluate("document.images.length") >= 10
    # every chain with data is named by its label (the sample holds EVM chains, Solana, Noble)
    held = page.inner_text("#net-flows")
    for name in ("Ethereum", "Base", "Arbitrum One", "Solana", "Noble"):
        assert name in held, f"{name} missing from the net flows"
    # each card's figure in one unit, and a headline that names its base
    cards = page.eval_on_selector_all(".card .value", "els => els.map(e => e.innerText)")
    assert cards
    assert not [c for c in cards if c.count("USDC") > 1]
    assert "volume minted in the window" in page.inner_text("#kpis")
    assert outside == []  # the report loads nothing
    shot = tmp_path / f"report-{width}.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000
    if os.environ.get("CCTX_SCREENSHOTS") == "docs":
        shutil.copyfile(shot, DOCS / f"report-{width}.png")
    page.close()
