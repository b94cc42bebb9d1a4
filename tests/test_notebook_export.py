"""Exported notebooks show their widgets in a browser with the network blocked."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from browser_support import launch, needs_chromium

from cctx_research.cli import main
from cctx_research.export import export_notebook

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def test_bad_arguments_say_what_to_pass(tmp_path, capsys):
    with pytest.raises(ValueError, match=r"\.ipynb"):
        export_notebook(tmp_path / "x.txt", tmp_path / "x.html")
    with pytest.raises(ValueError, match=r"\.html"):
        export_notebook(NOTEBOOKS / "02_chain_flows.ipynb", tmp_path / "x.pdf")
    with pytest.raises(FileNotFoundError, match="no such notebook"):
        export_notebook(tmp_path / "missing.ipynb", tmp_path / "x.html")
    with pytest.raises(TypeError, match="execute must be True or False"):
        export_notebook(NOTEBOOKS / "02_chain_flows.ipynb", tmp_path / "x.html", execute="yes")
    assert main(["export-notebook", str(tmp_path / "missing.ipynb"), "--out", "x.html"]) != 0
    assert "no such notebook" in capsys.readouterr().err
    assert not list(tmp_path.glob("*.html"))


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export") / "02.html"
    notebook = NOTEBOOKS / "02_chain_flows.ipynb"
    assert main(["export-notebook", str(notebook), "--out", str(out)]) == 0
    return out


@pytest.mark.slow
def test_the_file_loads_nothing_from_the_network(exported):
    html = exported.read_text(encoding="utf-8")
    assert 'id="cctx-widget-manager" src="data:text/javascript;base64,' in html
    assert "application/vnd.jupyter.widget-state+json" in html
    assert 'src="http' not in html
    assert "cdn.jsdelivr" not in html


@pytest.mark.slow
def test_warnings_are_status_lines_not_python_text(exported):
    """The notebook's synthetic-data notice and the dashboard's partial-data note, in the
    export: each a status line, never Python's ``file.py:152: CoverageWarning:`` text."""
    html = exported.read_text(encoding="utf-8")
    assert re.findall(r"\.py:\d+: \w+Warning", html) == []
    # bounded and anchored at a word's start: the page holds runs of 100k word characters
    # (images, scripts), on which an open "\w+Warning" backtracks for minutes
    assert re.findall(r"\b\w{1,80}Warning: ", html) == []
    assert 'data-mime-type="application/vnd.jupyter.stderr"' not in html  # no pink box
    assert 'role="status"' in html  # connect() said it uses the sample: a status line
    assert "Synthetic data: " in html


@pytest.mark.slow
@needs_chromium
def test_widgets_render_with_the_network_blocked(exported, tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    requested: list[str] = []
    errors: list[str] = []
    console: list[str] = []

    def only_files(route):
        if route.request.url.startswith(("file:", "data:")):
            route.continue_()
        else:
            requested.append(route.request.url)
            route.abort()

    with sync_api.sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.route("**/*", only_files)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
            page.goto(exported.as_uri())
            try:
                page.locator(".widget-dropdown").first.wait_for(timeout=30_000)
            except Exception:
                shot = tmp_path / "export-failure.png"
                page.screenshot(path=str(shot), full_page=True)
                pytest.fail(f"widgets did not render (screenshot: {shot}); errors: {errors}")
            assert page.locator("img.widget-image, .widget-image img").count() >= 1
            assert page.get_by_text("Loading widget").count() == 0
            page.wait_for_timeout(500)  # the views' "displayed" handlers have run
        finally:
            browser.close()
    assert requested == []
    assert errors == []
    assert console == []  # nothing thrown and caught either (a view that syncs without a comm)
