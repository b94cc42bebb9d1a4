"""The report, the dashboard and notebook 07 agree with each other and with the analysis.

Numbers are read back out of what a reader sees (the report's HTML cards and
tables, the dashboard's status lines and tables, the notebook's outputs) and
compared with what the analysis functions compute from the same client and
ledger, independently of each view's own data, on one window of the sample.
A figure on another base (minted against burned, counted once) says its base.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from cctx_research import plots, report
from cctx_research.analysis import actors, flows, movements, volumes
from cctx_research.report import ledger_sections
from cctx_research.service.sample import load_sample

SAMPLE_AS_OF = "2024-07-01T12:00:00Z"
START, END = "2024-06-29T00:00:00Z", "2024-07-01T00:00:00Z"


@pytest.fixture(scope="module")
def ledger() -> pd.DataFrame:
    # the ledger as it stood at the sample client's clock (what the client serves)
    return load_sample(as_of=SAMPLE_AS_OF, days=3)


@pytest.fixture(scope="module")
def built(sample_client: Any, ledger: pd.DataFrame) -> tuple[report.Report, str]:
    page = report.build(sample_client, START, END, ledger=ledger)
    return page, page.to_html()


@pytest.fixture(scope="module")
def mints(sample_client: Any) -> pd.DataFrame:
    return sample_client.mints(START, END)


def _cards(text: str) -> dict[str, str]:
    pairs = re.findall(
        r'<div class="value"[^>]*>([^<]*)</div><div class="label"[^>]*>([^<]*)</div>', text
    )
    return {html.unescape(label): html.unescape(value) for value, label in pairs}


def _number(text: str) -> float:
    match = re.search(r"-?[\d,]+(?:\.\d+)?", text)
    assert match, f"no number in {text!r}"
    return float(match.group().replace(",", ""))


def _usdc(value: float) -> float:
    """A USDC figure as the report rounds it (whole units from 100 up)."""
    return float(round(value)) if abs(value) >= 100 else round(value, 2)


def test_headline_cards_agree_with_the_analysis_and_name_their_base(
    built: tuple[report.Report, str], mints: pd.DataFrame
) -> None:
    cards = _cards(built[1])
    sizes = volumes.size_buckets(mints)
    assert _number(cards["transfers minted in the window"]) == sizes.count
    assert _number(cards["volume minted in the window"]) == _usdc(sizes.volume)
    for label, value in cards.items():
        assert "USDC USDC" not in value, label
        assert "USDC" not in label.replace("USDC)", ""), label  # one unit per card


def test_burn_based_figures_say_they_count_burns(
    built: tuple[report.Report, str], ledger: pd.DataFrame
) -> None:
    cards = _cards(built[1])
    scoped = ledger_sections.scope_ledger(ledger, pd.Timestamp(START), pd.Timestamp(END), None)
    once = float(movements.dedupe(scoped)["amount_raw"].sum()) / 1e6
    label = "volume burned in the window, counted once per movement"
    assert _number(cards[label]) == _usdc(once)
    minted = _number(cards["volume minted in the window"])
    assert once != pytest.approx(minted)  # two bases, two figures: each card says which
    text = html.unescape(re.sub(r"<[^>]+>", " ", built[0].section("actors").to_html()))
    assert "burned (USDC)" in text
    assert "minted or not" in text


def test_corridor_table_agrees_with_the_matrix_and_the_headline(
    built: tuple[report.Report, str], mints: pd.DataFrame
) -> None:
    section = built[0].section("flows").to_html()
    rows = re.findall(r"<tr>(.*?)</tr>", section.split("Top corridors")[1])
    table = flows.corridors(mints, n=None)
    matrix = flows.matrix(mints)
    assert len(rows) >= 2
    for row in rows[1:]:
        cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>([^<]*)</td>", row)]
        route = next(c for c in cells if "→" in c)
        source, destination = route.split(" → ")
        found = table[
            (table["source_chain"].map(_label) == source)
            & (table["destination_chain"].map(_label) == destination)
        ]
        assert len(found) == 1, route
        volume = float(found["volume"].iloc[0])
        assert _usdc(volume) in {_number(c) for c in cells if re.search(r"\d", c)}
        cell = matrix.loc[found["source_chain"].iloc[0], found["destination_chain"].iloc[0]]
        assert float(cell) == pytest.approx(volume)
    assert float(table["volume"].sum()) == pytest.approx(volumes.size_buckets(mints).volume)


def test_actor_totals_agree_with_the_analysis(
    built: tuple[report.Report, str], ledger: pd.DataFrame
) -> None:
    scoped = ledger_sections.scope_ledger(ledger, pd.Timestamp(START), pd.Timestamp(END), None)
    relayed = actors.relayers(scoped)
    cards = _cards(built[1])
    assert _number(cards["relayers"]) == float(actors.hhi(relayed).iloc[0]["actors"])


def _label(chain: Any) -> str:
    from cctx_research.views import values

    return values.chain_text(chain)


def test_ticket_sizes_say_where_the_amounts_end(
    built: tuple[report.Report, str], mints: pd.DataFrame
) -> None:
    text = html.unescape(re.sub(r"<[^>]+>", " ", built[0].section("sizes").to_html()))
    largest = re.search(r"The largest ticket in the window: ([\d,.]+) USDC", text)
    assert largest, text[-400:]
    assert _number(largest.group(1)) == _usdc(float(mints["amount"].max()))
    assert "draws no ticket above 1,000,000 USDC" in text  # the sample's cap, said


# the dashboard ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dashboard(sample_client: Any) -> Any:
    widgets = pytest.importorskip("cctx_research.widgets")
    # the pickers show days, both included: [START, END) is 2024-06-29 and 2024-06-30
    return widgets.dashboard(sample_client, start=START, end=END)


@pytest.fixture(scope="module")
def actors_tab(ledger: pd.DataFrame) -> Any:
    widgets = pytest.importorskip("cctx_research.widgets")
    return widgets.actors_panel(ledger, start=START, end=END)


@pytest.fixture(scope="module")
def scoped(ledger: pd.DataFrame) -> pd.DataFrame:
    return ledger_sections.scope_ledger(ledger, pd.Timestamp(START), pd.Timestamp(END), None)


def _text(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", markup))


def _counts(markup: str) -> list[float]:
    return [float(n.replace(",", "")) for n in re.findall(r"\d[\d,]*", _text(markup))]


def test_dashboard_counts_what_the_report_headline_counts(
    dashboard: Any, built: tuple[report.Report, str], mints: pd.DataFrame
) -> None:
    assert dashboard.error is None, dashboard.error
    cards = _cards(built[1])
    status = _text(dashboard.status.value)
    shown = _counts(dashboard.status.value)[0]
    assert shown == _number(cards["transfers minted in the window"]) == len(mints)
    # the base, said: the transfers minted on the days shown
    assert "minted 2024-06-29 to 2024-06-30 (UTC)" in status, status
    volume = float(dashboard.transfers["amount"].sum())
    assert _usdc(volume) == _number(cards["volume minted in the window"])


def test_dashboard_flow_matrix_agrees_with_top_corridors(
    dashboard: Any, built: tuple[report.Report, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn: list[pd.DataFrame] = []
    real = plots.plot_flow_matrix

    def recorded(matrix: pd.DataFrame, **options: Any) -> Any:
        drawn.append(matrix)
        return real(matrix, **options)

    monkeypatch.setattr(plots, "plot_flow_matrix", recorded)
    dashboard.redraw()
    assert dashboard.error is None, dashboard.error
    matrix = drawn[-1]
    cards = _cards(built[1])
    assert _usdc(float(matrix.to_numpy().sum())) == _number(cards["volume minted in the window"])
    section = built[0].section("flows").to_html()
    rows = re.findall(r"<tr>(.*?)</tr>", section.split("Top corridors")[1])[1:]
    assert rows
    for row in rows:
        cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>([^<]*)</td>", row)]
        source, destination = next(c for c in cells if "→" in c).split(" → ")
        labels = {_label(c): c for c in matrix.index.union(matrix.columns)}
        cell = float(matrix.loc[labels[source], labels[destination]])
        assert _usdc(cell) in {_number(c) for c in cells if re.search(r"\d", c)}, cells


def test_the_actors_tab_agrees_with_the_report_and_says_its_base(
    actors_tab: Any, built: tuple[report.Report, str], scoped: pd.DataFrame
) -> None:
    assert actors_tab.error is None, actors_tab.error
    cards = _cards(built[1])
    relayed = actors.relayers(scoped)
    minted = int(scoped["mint_timestamp"].notna().sum())
    status = _text(actors_tab.status.value)
    # "791 relayers minted 4,834 of these 4,915 transfers, burned ... minted or not"
    relayers, said_minted, burned = _counts(actors_tab.status.value)[:3]
    assert relayers == _number(cards["relayers"]) == float(actors.hhi(relayed).iloc[0]["actors"])
    assert said_minted == minted == int(relayed["mints"].sum())
    assert burned == len(scoped)
    assert "burned 2024-06-29 to 2024-06-30 (UTC), minted or not" in status, status


def test_the_actors_tab_lists_the_report_integrators_and_rebalancing(
    actors_tab: Any, built: tuple[report.Report, str], scoped: pd.DataFrame
) -> None:
    integrated = actors.integrators(scoped)
    flagged = movements.rebalancing_share(scoped)
    try:
        actors_tab.role.value = "depositors"
        integrators, carried, burned = _counts(actors_tab.status.value)[:3]
        assert (integrators, carried, burned) == (
            len(integrated), int(integrated["transfers"].sum()), len(scoped)
        )
        cards = _cards(built[1])
        labelled = integrated["integrator_label"].notna()
        share = float(integrated.loc[labelled, "volume_share"].sum()) * 100
        assert _number(cards["volume through labelled integrators"]) == round(share, 1)
        actors_tab.role.value = "rebalancing"
        count = _counts(actors_tab.status.value)[0]
        assert count == int(flagged["rebalancing_count"].sum())
        rows = re.findall(r"<tr>(.*?)</tr>", actors_tab.table.value)[1:]
        section = built[0].section("actors").to_html().split("Rebalancing per route")[1]
        report_rows = re.findall(r"<tr>(.*?)</tr>", section)[1:]
        shown = [_counts(r) for r in rows if _counts(r)[2:3] != [0.0]]
        assert report_rows
        assert len(shown) >= len(report_rows)
        # the report's routes with rebalancing, as the tab lists them (same counts, volumes)
        for row in report_rows:
            assert _counts(row)[:3] in [r[:3] for r in shown], _text(row)
    finally:
        actors_tab.role.value = "relayers"


def test_the_app_counts_one_window_on_both_tabs(
    sample_client: Any, ledger: pd.DataFrame
) -> None:
    pytest.importorskip("ipywidgets")
    from cctx_research.webapp.panels import AppPanels

    app = AppPanels(sample_client, days=2, ledger=ledger)
    assert app.actors.window == app.dashboard.window  # on opening, the last 2 complete days
    # the end first (a start after it is refused, and both tabs keep their days), then the start
    app.dashboard.end.value = pd.Timestamp(END).date() - pd.Timedelta(days=1)
    assert app.actors.window == app.dashboard.window
    app.dashboard.start.value = pd.Timestamp(START).date()
    assert app.actors.window == (pd.Timestamp(START), pd.Timestamp(END))
    assert app.dashboard.window == app.actors.window
    assert "burned 2024-06-29 to 2024-06-30 (UTC)" in _text(app.actors.status.value)
    assert "minted 2024-06-29 to 2024-06-30 (UTC)" in _text(app.dashboard.status.value)


def test_the_app_builds_a_tab_when_it_is_first_opened_on_the_days_shown(
    sample_client: Any, ledger: pd.DataFrame
) -> None:
    pytest.importorskip("ipywidgets")
    from cctx_research.webapp.panels import AppPanels

    loads: list[int] = []

    def load() -> pd.DataFrame:
        loads.append(1)
        return ledger

    app = AppPanels(sample_client, days=2, ledger=load)
    # the first page is the dashboard alone: no other panel built, no ledger loaded
    assert app.built == ("Dashboard",)
    assert loads == []
    assert "opening" in app.tabs.children[3].children[0].value  # a note, until it opens
    # days picked before the actors tab opens: it opens on them
    app.dashboard.start.value = pd.Timestamp(START).date()
    app.dashboard.end.value = pd.Timestamp(END).date() - pd.Timedelta(days=1)
    assert app.built == ("Dashboard",)
    app.tabs.selected_index = 3  # as a click on the tab does
    assert app.built == ("Dashboard", "Who moves the money")
    assert loads == [1]
    assert app.tabs.children[3].children == (app.actors,)
    assert app.actors.window == app.dashboard.window == (pd.Timestamp(START), pd.Timestamp(END))
    assert "burned 2024-06-29 to 2024-06-30 (UTC)" in _text(app.actors.status.value)
    app.tabs.selected_index = 1
    assert app.tabs.children[1].children == (app.explorer,)
    assert app.built == ("Dashboard", "Address explorer", "Who moves the money")
    assert loads == [1]  # built once
    # the explorer's 30 days end where the dashboard's do (not today, which the data is far from)
    last = pd.Timestamp(END).date() - pd.Timedelta(days=1)
    assert (app.explorer.start.value, app.explorer.end.value) == (last - pd.Timedelta(days=29),
                                                                  last)  # fmt: skip


class _HeldClient:
    """The sample client, whose ``mints`` waits until the test lets it answer."""

    def __init__(self, inner: Any) -> None:
        import threading

        self.inner = inner
        self.asked = threading.Event()
        self.go = threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def mints(self, *args: Any, **kwargs: Any) -> pd.DataFrame:
        self.asked.set()
        assert self.go.wait(120), "the test never let mints answer"
        return self.inner.mints(*args, **kwargs)


def test_the_app_shows_its_page_before_the_dashboard_draws(sample_client: Any) -> None:
    pytest.importorskip("ipywidgets")
    from cctx_research.webapp.panels import AppPanels

    held = _HeldClient(sample_client)
    app = AppPanels(held, days=2, later=True)  # returns while its fetch waits
    assert not app.ready.is_set()
    assert app.dashboard.window is None
    assert app.dashboard.draws == 0
    assert not app.wait(0.05)
    held.go.set()
    assert app.wait(120)
    assert app.dashboard.error is None, app.dashboard.error
    assert app.dashboard.draws == 1
    assert app.dashboard.window is not None
    assert "transfers (all chains)" in _text(app.dashboard.status.value)
    with pytest.raises(ValueError, match="timeout must be"):
        app.wait(-1)


def test_the_page_asked_for_in_the_cell_that_made_it_draws_there(
    sample_client: Any, ledger: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    # in a kernel the first draw begins after the cell: `page = app(c); page.wait()` (or
    # `page.actors`) in that same cell must draw at once, not wait for a cell that never ends
    pytest.importorskip("ipywidgets")
    from cctx_research.webapp import panels

    deferred: list[Any] = []
    monkeypatch.setattr(panels, "_after_this_cell", deferred.append)  # the cell still runs
    page = panels.AppPanels(sample_client, days=2, ledger=ledger, later=True)
    assert len(deferred) == 1
    assert page.dashboard.draws == 0
    assert page.wait(120)
    assert page.dashboard.draws == 1
    assert page.dashboard.error is None
    assert page.actors.window == page.dashboard.window
    deferred[0]()  # the cell ends: the first draw is not begun again
    assert page.dashboard.draws == 1
    later = panels.AppPanels(sample_client, days=2, ledger=ledger, later=True)
    assert later.actors.window == later.dashboard.window  # the actors tab first, same cell
    assert later.dashboard.draws == 1
    with pytest.raises(TypeError, match=r"later must be True \(draw after the page shows\)"):
        panels.app(sample_client, later="yes")


def test_a_click_during_the_first_draw_waits_for_it_then_draws_what_it_picked(
    sample_client: Any,
) -> None:
    pytest.importorskip("ipywidgets")
    import threading

    from cctx_research.webapp.panels import AppPanels

    held = _HeldClient(sample_client)
    app = AppPanels(held, days=2, later=True)
    assert held.asked.wait(120)  # the first draw is under way
    # the click, from another thread (the kernel's), while the first draw waits on its fetch
    click = threading.Thread(target=lambda: setattr(app.dashboard.metric, "value", "count"))
    click.start()
    held.go.set()
    click.join(120)
    assert app.wait(120)
    assert not click.is_alive()
    assert app.dashboard.error is None, app.dashboard.error
    # both ran, one after the other; the last one drew the count
    assert app.dashboard.draws == 2
    assert "by count" in _text(app.dashboard.top_table.value)


# notebook 07 -----------------------------------------------------------------------------

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "07_actors.ipynb"


@pytest.fixture(scope="module")
def notebook(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Notebook 07 run in a real kernel on the sample pinned at the client's clock, over the
    report's window: the last 2 complete days before it."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    tagged = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    tagged.source += f"\nas_of = {SAMPLE_AS_OF!r}\nwindow_days = 2\nsource = 'sample'\n"
    with pytest.MonkeyPatch.context() as patch:
        for variable in ("CCTX_API_KEY", "CCTX_PROJECT_ID", "CCTX_BASE_URL"):
            patch.delenv(variable, raising=False)
        here = tmp_path_factory.mktemp("notebook")
        patch.setenv("CCTX_CACHE_DIR", str(here / "cache"))
        client = nbclient.NotebookClient(
            nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(here)}}
        )
        client.execute()
    return nb


def _printed(nb: Any) -> str:
    return "".join(
        out.get("text", "")
        for cell in nb.cells
        for out in cell.get("outputs", [])
        if out.get("output_type") == "stream"
    )


def _html_of(nb: Any, starts: str) -> str:
    cell = next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith(starts))
    return "".join(out.get("data", {}).get("text/html", "") for out in cell.outputs)


@pytest.mark.slow
def test_notebook_07_counts_the_report_window_and_says_its_base(
    notebook: Any, scoped: pd.DataFrame, actors_tab: Any
) -> None:
    printed = _printed(notebook)
    found = re.search(r"([\d,]+) transfers burned 2024-06-29 00:00 to 2024-07-01 00:00 UTC "
                      r"\(minted or not\)", printed)  # fmt: skip
    assert found, printed[:400]
    assert _number(found.group(1)) == len(scoped) == _counts(actors_tab.status.value)[2]


@pytest.mark.slow
def test_notebook_07_agrees_with_the_report_and_the_analysis(
    notebook: Any, built: tuple[report.Report, str], scoped: pd.DataFrame
) -> None:
    printed = _printed(notebook)
    cards = _cards(built[1])
    relayed = actors.relayers(scoped)
    hhi = re.search(r"HHI of volume: ([\d.]+) over ([\d,]+) relayers", printed)
    assert hhi, printed[:400]
    assert _number(hhi.group(2)) == _number(cards["relayers"]) == relayed["relayer"].nunique()
    assert float(hhi.group(1)) == _number(cards["relayer concentration (HHI)"])
    share = re.search(r"rebalancing: ([\d.]+)% of the volume burned", printed)
    assert share, printed[:400]
    assert float(share.group(1)) == _number(cards["rebalancing share of volume"])
    once = re.search(r"counted once: ([\d,]+) USDC of ([\d,]+) USDC burned \(gross\)", printed)
    assert once, printed[:400]
    label = "volume burned in the window, counted once per movement"
    assert _number(once.group(1)) == _number(cards[label])
    assert _number(once.group(2)) == round(float(scoped["amount_raw"].sum()) / 1e6)
    # the report's section as the notebook shows it: the report's own cards
    section = _cards(_html_of(notebook, "built = report.build("))
    assert section
    for name, value in section.items():
        assert cards[name] == value, name


@pytest.mark.slow
def test_notebook_07_ranks_the_integrators_the_analysis_ranks(
    notebook: Any, scoped: pd.DataFrame
) -> None:
    page = _html_of(notebook, "integrated = actors.integrators(")
    rows = re.findall(r"<tr>(.*?)</tr>", page.split("<tbody>")[1], flags=re.S)
    integrated = actors.integrators(scoped).head(len(rows))
    assert rows
    for row, (_, expected) in zip(rows, integrated.iterrows(), strict=True):
        cells = [html.unescape(c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        assert str(expected["integrator"]) in cells, cells
        assert f"{int(expected['transfers']):,}" in cells, cells
        assert f"{float(expected['volume']):,.0f}" in cells, cells
