"""`cctx-research dashboard` in a real browser: Playwright driving Debian's Chromium.

One dashboard process and one browser serve the whole module. Each step
checks that the page shows the new state after a change (titles, counts,
figures). On failure a screenshot is written and its path is in the message.
With ``CCTX_SCREENSHOTS=docs`` the run also refreshes ``docs/dashboard-1280.png``
and ``docs/dashboard-1024.png`` (and the actors tab's), the README's pictures of the app.

Every request a page makes is recorded: none may leave the app (no CDN
stylesheet or font). The page never shows a raw Python warning (a file
path, a ``...Warning:`` line) or a broken image. Pages opened and closed
leave no kernel behind: closed politely (the browser tells Voila, and
Voila accepts it) or abruptly (it cannot), the dashboard's kernel count
comes back down.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pandas as pd
import pytest
from browser_support import free_port, launch, needs_chromium, needs_module
from sample_seed import seed

needs_module("voila")
psutil = pytest.importorskip("psutil")
sync_api = pytest.importorskip("playwright.sync_api")

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.slow, needs_chromium]

KERNEL_TIMEOUT = 5
"""--kernel-timeout of the app under test: kernels of pages gone are culled after 5 s idle."""
RAW_WARNING = re.compile(r"\w+Warning: |\.py:\d+")
"""What Python's own warning text looks like: ``CoverageWarning: ...``, ``overview.py:152``."""
DURATION = re.compile(r"^(\d+(\.\d)? s|\d+ min \d\d s|\d+ h \d\d min|\d+ d \d+ h|-)$")
"""How a duration reads in the app's tables: "8.2 s", "15 min 25 s", "3 h 05 min", "2 d 4 h"."""
CLIPPED = """() => {
  // each visible table: past the edge of a box that does not show what overflows it (hidden,
  // or scrolled out of sight: a table must fit its panel), or past the window's edge
  const out = [];
  for (const table of document.querySelectorAll("table")) {
    if (!table.checkVisibility()) continue;
    const right = table.getBoundingClientRect().right;
    for (let box = table.parentElement; box; box = box.parentElement) {
      if (getComputedStyle(box).overflowX === "visible") continue;
      const edge = box.getBoundingClientRect().right;
      if (right > edge + 1) out.push(`${Math.round(right - edge)}px of a table cut off by `
        + `<${box.tagName.toLowerCase()} class="${box.className}">`);
    }
    if (right > innerWidth + 1) out.push(`a table past the window by ${right - innerWidth}px`);
  }
  return out;
}"""
"""JavaScript: what of the page's tables cannot be seen, even by scrolling inside its panel."""
NO_GOODBYE = "Object.defineProperty(Navigator.prototype, 'sendBeacon', {value: () => true});"
"""A page that cannot tell Voila it closes (a crash, a lost network): its beacon goes nowhere."""
NO_STATUS = "the dashboard's status line never showed"
FIRST_ANSWER_MS = 180_000
"""How long a new page may take to its first status line (a busy machine: the kernel starts,
fetches and draws)."""
RUN: dict[str, Path] = {}
"""The app under test's log (a failure quotes its end) and the folder of failures' screenshots."""


@dataclass
class App:
    url: str
    pid: int
    log: Path
    """The dashboard's stderr: its warnings (a refused request is one)."""

    def kernels(self) -> int:
        """The kernels the dashboard runs now (one per open page)."""
        children = psutil.Process(self.pid).children(recursive=True)
        return sum("ipykernel_launcher" in " ".join(_cmdline(c)) for c in children)


def _cmdline(process) -> list[str]:
    try:
        return process.cmdline()
    except psutil.Error:  # it ended meanwhile
        return []


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCTX_")}
    env["CCTX_CACHE_DIR"] = str(seed(tmp_path_factory.mktemp("cache")))  # built once a session
    log = tmp_path_factory.mktemp("log") / "dashboard.log"
    RUN.update(log=log, shots=tmp_path_factory.mktemp("screenshots"))
    with log.open("w") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cctx_research.cli", "dashboard", "--port", str(port),
             "--kernel-timeout", str(KERNEL_TIMEOUT)],
            stdout=subprocess.PIPE, stderr=stderr, text=True, env=env,
            start_new_session=True,
        )  # fmt: skip
    try:
        assert f"127.0.0.1:{port}" in proc.stdout.readline()
        yield App(f"http://127.0.0.1:{port}/", proc.pid, log)
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(60)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        browser = launch(p)
        yield browser
        browser.close()


def _open(browser_or_context, url: str, requests: list[str] | None = None, **options):
    """A new page of the app, its widgets shown."""
    page = browser_or_context.new_page(**options)
    if requests is not None:
        page.on("request", lambda request: requests.append(request.url))
    page.goto(url, timeout=180_000)
    page.locator(".widget-dropdown").first.wait_for(timeout=180_000)
    return page


@pytest.fixture(scope="module")
def page(app, browser, tmp_path_factory):
    requests: list[str] = []
    page = _open(browser, app.url, requests, viewport={"width": 1400, "height": 1000})
    page.requests = requests  # type: ignore[attr-defined]
    yield page
    page.close()


def _fail(page, what: str) -> None:
    """Fail with a screenshot, and with what the page and the dashboard's log said last."""
    shot = RUN["shots"] / f"{what.replace(' ', '-')}.png"
    page.screenshot(path=str(shot), full_page=True)
    shown = page.inner_text("body")[-1500:]
    log = RUN["log"].read_text()[-3000:]
    pytest.fail(
        f"{what} (screenshot: {shot})\nthe page ends:\n{shown}\nthe dashboard's log ends:\n{log}"
    )


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


def _broken_images(page) -> list[str]:
    """Images on screen that did not load: what a browser draws as a broken-image icon."""
    return page.evaluate(
        """Array.from(document.images)
             .filter(i => i.checkVisibility() && i.complete && i.naturalWidth === 0)
             .map(i => i.outerHTML.slice(0, 120))"""
    )


def _raw_warnings(page) -> list[str]:
    """Text on the page that looks like Python's own warning output."""
    text = page.inner_text("body")
    return [line for line in text.splitlines() if RAW_WARNING.search(line)]


def _left_the_app(requests: list[str]) -> list[str]:
    """The requests that went anywhere but the app on 127.0.0.1 (data: and blob: stay put)."""
    return [
        url
        for url in requests
        if urlsplit(url).scheme not in ("data", "blob") and urlsplit(url).hostname != "127.0.0.1"
    ]


def _wait_for(check, what: str, timeout_s: float = 120) -> None:
    """Poll ``check()`` until it is true; fail saying what never happened."""
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(what)
        time.sleep(0.25)


def test_every_widget_renders(page):
    _wait(page, lambda: _status(page) != "", NO_STATUS, FIRST_ANSWER_MS)
    for broken in ("Loading widget", "Error displaying widget"):
        assert page.get_by_text(broken).count() == 0, broken
    tabs = page.locator(".lm-TabBar-tab").all_inner_texts()
    assert tabs == ["Dashboard", "Address explorer", "Transaction lookup", "Who moves the money"]
    assert len([s for s in _images(page) if s.startswith("blob:") or s.startswith("data:")]) >= 3
    assert page.get_by_text("Synthetic data").count() >= 1
    # the toolkit's own status line, never Python's warning text; nothing broken
    assert _raw_warnings(page) == []
    assert page.locator("[data-mime-type='application/vnd.jupyter.stderr']").count() == 0
    assert _broken_images(page) == []
    # every tab before any input: no broken-image icon where a figure will go
    for tab in ("Address explorer", "Transaction lookup", "Who moves the money", "Dashboard"):
        page.locator(".lm-TabBar-tab", has_text=tab).click()
        page.wait_for_timeout(300)
        assert _broken_images(page) == [], tab
    assert page.requests, "no request was recorded"
    assert _left_the_app(page.requests) == []  # no CDN stylesheet or font


def test_both_tabs_count_the_days_shown_as_the_sample_holds_them(page):
    """The dashboard's and the actors tab's counts, as the page shows them, against the
    sample's own days (each UTC day's transfers depend only on that day), on one window."""
    from cctx_research.service.sample import generate

    _wait(page, lambda: _status(page) != "", NO_STATUS, FIRST_ANSWER_MS)
    shown = re.search(r"([\d,]+) transfers \(all chains\) of ([\d,]+) minted "
                      r"(\d{4}-\d\d-\d\d) to (\d{4}-\d\d-\d\d) \(UTC\)", _status(page))  # fmt: skip
    assert shown, _status(page)
    first = pd.Timestamp(shown.group(3), tz="UTC")
    end = pd.Timestamp(shown.group(4), tz="UTC") + pd.Timedelta(days=1)
    # two days more before the first: the burns minted on it
    ledger = generate(end, days=(end - first).days + 2)
    minted = ledger["mint_timestamp"].between(first, end, inclusive="left")
    assert int(shown.group(2).replace(",", "")) == int(minted.sum())
    page.locator(".lm-TabBar-tab", has_text="Who moves the money").click()
    try:
        _wait(page, lambda: page.get_by_text("relayers minted").count() > 0,
              "the actors tab shows no relayers")  # fmt: skip
        text = page.get_by_text("relayers minted").first.inner_text()
        said = re.search(r"of these ([\d,]+) transfers, burned (\S+) to (\S+) \(UTC\)", text)
        assert said, text
        assert (said.group(2), said.group(3)) == (shown.group(3), shown.group(4))
        burned = ledger["burn_timestamp"].between(first, end, inclusive="left")
        assert int(said.group(1).replace(",", "")) == int(burned.sum())
    finally:
        page.locator(".lm-TabBar-tab", has_text="Dashboard").click()


@pytest.mark.parametrize("width", [1280, 1024])
def test_the_app_reads_right_at_common_widths(app, browser, width, tmp_path):
    """Nothing past the window's edge, every chain with data offered, the actors tab filled."""
    requests: list[str] = []
    kernels = app.kernels()
    page = _open(browser, app.url, requests, viewport={"width": width, "height": 900})
    try:
        _wait(page, lambda: _status(page) != "", NO_STATUS, FIRST_ANSWER_MS)
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{overflow}px wider than a {width}px window"
        picker = page.locator(".widget-select-multiple select").first
        offered = [o.replace("\xa0", " ") for o in picker.locator("option").all_inner_texts()]
        for chain in ("EVM · Ethereum", "EVM · Base", "other · Solana", "other · Noble"):
            assert chain in offered, f"{chain} not offered"
        assert _raw_warnings(page) == []
        assert _broken_images(page) == []
        # the default window ends at the last complete day: nothing partial to warn of
        assert "Partial data" not in page.inner_text("body")
        shot = tmp_path / f"dashboard-{width}.png"
        page.screenshot(path=str(shot))
        assert page.evaluate(CLIPPED) == []
        page.locator(".lm-TabBar-tab", has_text="Who moves the money").click()
        _wait(page, lambda: page.get_by_text("relayers minted").count() > 0,
              "the actors tab shows no relayers")  # fmt: skip
        _check_relayers(page)
        assert page.evaluate(CLIPPED) == []
        page.get_by_role("button", name="depositors", exact=True).click()
        _wait(page, lambda: page.get_by_text("Mayan FastMCTP").count() > 0,
              "the depositors show no labelled integrator")  # fmt: skip
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"the actors tab is {overflow}px wider than {width}px"
        assert page.evaluate(CLIPPED) == []
        assert _raw_warnings(page) == []
        assert _left_the_app(requests) == []
        if os.environ.get("CCTX_SCREENSHOTS") == "docs":
            shutil.copyfile(shot, ROOT / "docs" / f"dashboard-{width}.png")
            page.screenshot(path=str(ROOT / "docs" / f"dashboard-actors-{width}.png"))
    finally:
        page.close()
    # closed politely: its kernel goes at once (and the kernel count of the tests after is true)
    _wait_for(lambda: app.kernels() <= kernels, "the closed page's kernel is still running")


def _table(page, header: str) -> tuple[list[str], list[list[str]]]:
    """The headers and rows (cell texts) of the visible table with this column header."""
    return page.evaluate(
        """header => {
             const table = Array.from(document.querySelectorAll("table")).find(t =>
               t.checkVisibility() && Array.from(t.querySelectorAll("th"))
                 .some(th => th.innerText.trim() === header));
             if (!table) return [[], []];
             const cells = row => Array.from(row.children).map(c => c.innerText.trim());
             return [cells(table.querySelector("tr")),
                     Array.from(table.querySelectorAll("tr")).slice(1).map(cells)];
           }""",
        header,
    )


def _check_relayers(page) -> None:
    """The relayers' table reads durations as durations; its chart names the same relayers."""
    headers, rows = _table(page, "median burn to mint")
    assert rows, "no relayers' table"
    latency = [row[headers.index("median burn to mint")] for row in rows]
    assert [t for t in latency if not DURATION.match(t)] == [], latency  # never "925.00"
    note = page.locator(".cctx-chart-note")
    note.wait_for(timeout=60_000)
    named = note.inner_text().split(": ", 1)[1].split(", ")

    def name(row: list[str]) -> str:
        label, address = row[headers.index("relayer")], row[headers.index("address")]
        return label if label != "unlabelled" else f"{address[:6]}…{address[-4:]}"

    assert [n for n in named if n != "others"] == [name(row) for row in rows]


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
    base = "EVM\xa0·\xa0Base"  # ipywidgets writes option labels with no-break spaces
    page.locator(".widget-select-multiple select").first.select_option(label=base)
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

    # the lookup shows what happened, not where the service keeps it
    link = page.locator(f"a[href*='{done['burn_tx_hash']}']")
    details = page.locator(".widget-html", has=link).last.inner_text()
    assert "amount (USDC)" in details
    for internal in ("record_id", "entity_id", "instance_id"):
        assert internal not in details
    # a link looks like one: underlined, not the text's colour
    look = link.first.evaluate(
        "a => { const s = getComputedStyle(a), p = getComputedStyle(a.parentElement);"
        " return [s.textDecorationLine, s.color, p.color]; }"
    )
    assert "underline" in look[0]
    assert look[1] != look[2]
    assert _raw_warnings(page) == []
    assert _broken_images(page) == []
    assert _left_the_app(page.requests) == []


def test_closed_pages_leave_no_kernel_behind(app, browser):
    before = app.kernels()
    context = browser.new_context()
    requests: list[str] = []
    polite = _open(context, app.url, requests)
    context.add_init_script(NO_GOODBYE)
    abrupt = _open(context, app.url, requests)
    assert app.kernels() == before + 2  # a kernel for each page
    assert "native code" not in abrupt.evaluate("String(navigator.sendBeacon)")  # mute

    # the page's goodbye (a POST on `beforeunload`) needs the _xsrf cookie
    assert "_xsrf" in {c["name"] for c in context.cookies()}
    polite.close(run_before_unload=True)  # the browser tells Voila (its beacon)
    _wait_for(lambda: app.kernels() == before + 1, "the closed page's kernel kept running")
    refused = [line for line in app.log.read_text().splitlines() if "api/shutdown" in line]
    assert refused == []  # Voila took the goodbye (it used to answer 403: no _xsrf)
    abrupt.close(run_before_unload=True)  # gone without a word: culled
    _wait_for(
        lambda: app.kernels() == before,
        f"a page gone without a goodbye kept its kernel past --kernel-timeout {KERNEL_TIMEOUT}",
    )
    context.close()
    assert requests
    assert _left_the_app(requests) == []
