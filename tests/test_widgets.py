"""The widgets, driven programmatically: set ``.value``, check what changed.

No browser and no kernel: the panels are ipywidgets models, and what they
show is in their state (``Image.value`` PNG bytes, ``HTML.value``,
``Output.outputs``). The client is the embedded sample pinned to a clock.
"""

from __future__ import annotations

import datetime as dt
import html
import io
import warnings
from typing import Any

import matplotlib.image as mpimg
import pandas as pd
import pytest

pytest.importorskip("ipywidgets")

from cctx_research import chains, widgets
from cctx_research.analysis import addresses
from cctx_research.errors import CacheWarning, CoverageWarning

DAY1, DAY2 = dt.date(2024, 6, 29), dt.date(2024, 6, 30)
DAY3 = dt.date(2024, 7, 1)
# keywords take the half-open window [start, end); the pickers show days, both included


class Recording:
    """Wraps a client: records each call, and what ``probe()`` says during it."""

    def __init__(self, inner: Any, probe: Any = None) -> None:
        self.inner = inner
        self.calls: list[str] = []
        self.seen: list[Any] = []
        self.probe = probe

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            if self.probe is not None:
                self.seen.append(self.probe())
            return attr(*args, **kwargs)

        return call


class Failing:
    """A client whose every fetch fails unexpectedly."""

    source = "failing"

    def mints(self, *args: Any, **kwargs: Any) -> pd.DataFrame:
        raise RuntimeError("the disk is on fire")

    received = mints
    transaction = mints


@pytest.fixture(scope="module")
def client(sample_client: Any) -> Any:
    return sample_client


@pytest.fixture(scope="module")
def example(client: Any) -> dict[str, str]:
    """A recipient with transfers in the window, and one of its tx hashes."""
    frame = client.mints(pd.Timestamp(DAY1, tz="UTC"), pd.Timestamp(DAY2, tz="UTC"))
    address = addresses.top(frame, role="recipient", n=1)["address"].iloc[0]
    received = client.received(address, pd.Timestamp(DAY1, tz="UTC"), "2024-07-01")
    return {"address": address, "tx_hash": received["tx_hash"].iloc[0]}


def _png_ok(value: Any) -> bool:
    data = bytes(value)
    if not data.startswith(b"\x89PNG"):
        return False
    pixels = mpimg.imread(io.BytesIO(data), format="png")
    return pixels.ndim == 3 and pixels.shape[0] > 50 and float(pixels.std()) > 0.01


def _snapshot(panel: Any) -> dict[str, bytes]:
    return {name: bytes(image.value) for name, image in panel.images.items()}


@pytest.fixture
def dash(client: Any) -> widgets.Dashboard:
    return widgets.dashboard(client, start=DAY1, end=DAY2)


# ----------------------------------------------------------------- dashboard


def test_dashboard_draws_everything_on_open(dash: widgets.Dashboard) -> None:
    assert dash.error is None, dash.status.value
    assert dash.fetches == 1
    assert dash.draws == 1
    assert set(dash.images) == {"flow_graph", "flow_matrix", "volume"}
    assert all(_png_ok(image.value) for image in dash.images.values())
    assert "<table" in dash.top_table.value
    # headers for reading with units, numbers right-aligned, no raw twin column
    for heading in ("<th>chain</th>", '<th class="num">volume (USDC)</th>', ">transfers</th>"):
        assert heading in dash.top_table.value
    assert "volume_raw" not in dash.top_table.value
    assert "base units" not in dash.top_table.value
    assert "td.num,.cctx-panel th.num{text-align:right" in dash.style.value
    assert dash.style in dash.children
    assert dash.top_table.value.count("<a href=") == 10  # each top address, on its chain
    assert "transfers" in dash.status.value
    assert "Synthetic" in dash.banner.value  # the sample says it is synthetic
    assert len(dash.transfers) > 1000


def test_kept_figures_are_read_back_the_same_and_new_data_is_drawn(
    client: Any, dash: widgets.Dashboard, tmp_path: Any
) -> None:
    # the app's pages open on the same days: the first page's figures serve the next ones
    first = widgets.dashboard(client, start=DAY1, end=DAY2, figures=tmp_path)
    assert (first.figures.drawn, first.figures.hits) == (3, 0)
    again = widgets.dashboard(client, start=DAY1, end=DAY2, figures=tmp_path)
    assert (again.figures.drawn, again.figures.hits) == (0, 3)
    assert _snapshot(again) == _snapshot(first) == _snapshot(dash)  # dash: drawn, no cache
    again.metric.value = "count"  # other data: drawn, not served from the volume's
    assert again.figures.drawn == 3
    assert all(_snapshot(again)[k] != _snapshot(first)[k] for k in first.images)
    with pytest.raises(TypeError, match="figures must be True"):
        widgets.dashboard(client, start=DAY1, end=DAY2, figures=3)


@pytest.mark.parametrize(
    ("control", "value", "changed"),
    [
        ("metric", "count", {"flow_graph", "flow_matrix", "volume"}),
        ("chains", ("base",), {"flow_graph", "flow_matrix", "volume"}),
        ("freq", "1h", {"volume"}),
    ],
)
def test_view_controls_redraw_without_fetching(
    dash: widgets.Dashboard, control: str, value: Any, changed: set[str]
) -> None:
    before, table = _snapshot(dash), dash.top_table.value
    getattr(dash, control).value = value
    assert dash.error is None, dash.status.value
    assert dash.fetches == 1  # only the date range fetches
    assert dash.draws == 2
    after = _snapshot(dash)
    assert {k for k in after if after[k] != before[k]} == changed
    assert all(_png_ok(v) for v in after.values())
    if control != "freq":
        assert dash.top_table.value != table


def test_a_control_draws_again_only_the_figures_it_changes(
    dash: widgets.Dashboard, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cctx_research.views import markup
    from cctx_research.widgets import _panel

    drawn: list[str] = []

    def counting(draw: Any, data: Any, **options: Any) -> bytes:
        drawn.append(draw.__name__)
        return markup.render_png(draw, data, **options)

    monkeypatch.setattr(_panel, "render_png", counting)
    table = dash.top_table.value
    dash.role.value = "sender"  # the table's alone
    dash.top_n.value = 5
    assert dash.error is None, dash.status.value
    assert drawn == []
    assert dash.top_table.value != table
    assert dash.draws == 3
    dash.freq.value = "1h"  # the volume's alone
    assert drawn == ["plot_volume"]
    dash.metric.value = "count"  # every figure's
    assert sorted(drawn[1:]) == ["plot_flow_graph", "plot_flow_matrix", "plot_volume"]
    volume = bytes(dash.images["volume"].value)
    dash.start.value = dash.start.value - dt.timedelta(days=1)  # new transfers: all again
    assert dash.error is None, dash.status.value
    assert len(drawn) == 7
    assert dash.fetches == 2
    assert bytes(dash.images["volume"].value) != volume
    dash.redraw()  # asked for: every figure, as after a change of matplotlib's style
    assert len(drawn) == 10


def test_chain_filter_keeps_transfers_touching_the_chain(dash: widgets.Dashboard) -> None:
    dash.chains.value = ("polygon",)
    text = dash.status.value
    assert "(polygon)" in text
    shown = int(text.split(">", 1)[1].split(" transfers", 1)[0].replace(",", ""))
    t = dash.transfers
    touching = (t["source_chain"] == "polygon") | (t["destination_chain"] == "polygon")
    assert shown == int(touching.sum()) < len(t)


def test_the_chain_picker_offers_every_chain_with_data_evm_first(dash: widgets.Dashboard) -> None:
    t = dash.transfers
    held = set(t["source_chain"].astype(str)) | set(t["destination_chain"].astype(str))
    offered = [value for _, value in dash.chains.options]
    assert set(offered) == held
    assert {"solana", "noble"} <= held  # no chain filter means every chain, not six
    labels = [label for label, _ in dash.chains.options]
    groups = [label.split(" · ")[0] for label in labels]
    assert groups == sorted(groups, key=lambda g: g != "EVM")  # EVM, then the others
    assert "other · Solana" in labels
    dash.chains.value = ("solana",)
    assert "(solana)" in dash.status.value


def test_role_and_top_n_change_the_table(dash: widgets.Dashboard) -> None:
    dash.role.value = "sender"
    assert "Top 10 senders" in dash.top_table.value
    dash.top_n.value = 5
    assert dash.top_table.value.count("<tr>") == 1 + 5  # header + rows
    assert dash.top_n.continuous_update is False


def test_date_change_fetches_once_and_repeats_come_from_the_cache(client: Any) -> None:
    rec = Recording(client)
    dash = widgets.dashboard(rec, start=DAY1, end=DAY2)
    dash.end.value = DAY2
    assert rec.calls == ["mints", "mints"]
    assert dash.fetches == 2
    first = bytes(dash.images["volume"].value)
    dash.end.value = DAY1  # back to the first window: answered by the cache
    assert rec.calls == ["mints"] * 3
    record = dash.transfers.attrs["cctx"]
    assert record["network_requests"] == 0
    assert record["cache_hits"] > 0
    assert "0 requests sent" in dash.status.value
    assert bytes(dash.images["volume"].value) != first


def test_busy_indicator_while_fetching(client: Any) -> None:
    holder: dict[str, Any] = {}

    def probe() -> tuple[str, bool]:
        d = holder["dash"]
        return d.status.value, d.start.disabled

    rec = Recording(client, probe=None)
    dash = widgets.dashboard(rec, start=DAY1, end=DAY2)
    holder["dash"] = dash
    rec.probe = probe
    dash.end.value = DAY2
    status, disabled = rec.seen[-1]
    assert "fetching" in status
    assert disabled is True
    assert dash.busy is False
    assert dash.start.disabled is False
    assert "fetching" not in dash.status.value


def test_bad_date_range_shows_an_error_and_keeps_the_figures(dash: widgets.Dashboard) -> None:
    before = _snapshot(dash)
    dash.start.value = DAY2  # after the end (DAY1)
    assert isinstance(dash.error, ValueError)
    assert "after the end date" in dash.status.value
    assert "cf222e" in dash.status.value  # shown in red
    assert dash.fetches == 1
    assert _snapshot(dash) == before


def test_unexpected_errors_are_shown_not_swallowed() -> None:
    dash = widgets.dashboard(Failing(), start=DAY1, end=DAY2)
    assert isinstance(dash.error, RuntimeError)
    assert "RuntimeError" in dash.status.value
    assert "the disk is on fire" in dash.status.value
    (out,) = dash.output.outputs
    assert out["output_type"] == "error"
    assert out["ename"] == "RuntimeError"
    assert any("the disk is on fire" in line for line in out["traceback"])
    assert dash.busy is False
    assert not any(image.value for image in dash.images.values())
    # redrawing with nothing fetched says so, too
    dash.metric.value = "count"
    assert "nothing fetched" in dash.status.value


def test_callbacks_on_two_threads_keep_their_warnings_apart() -> None:
    """The app's first draw runs on a thread while a click may start another panel's
    callback; each records warnings by swapping process-wide state, so the second waits
    for the first. Were both let in, the first to finish would restore the state from
    before both, the second then the first's recorder: its warning in the wrong panel,
    and Python's ``showwarning`` left pointing at a finished callback's list."""
    import threading

    from cctx_research.errors import CctxWarning

    first = widgets.dashboard(Failing(), start=DAY1, end=DAY2)
    second = widgets.dashboard(Failing(), start=DAY1, end=DAY2)
    shown_before = warnings.showwarning
    inside, entered, done = threading.Event(), threading.Event(), threading.Event()

    def slow() -> None:
        inside.set()
        entered.wait(2.0)  # the other callback, if it is let in meanwhile
        warnings.warn(CoverageWarning("the first panel's window is partly covered"), stacklevel=1)
        first._say_result("first done")

    def quick() -> None:
        entered.set()
        done.wait(2.0)  # the first callback, if it ran meanwhile, has finished
        warnings.warn(CacheWarning("the second panel's cache is read-only"), stacklevel=1)
        second._say_result("second done")

    def run_first() -> None:
        first._run(slow)
        done.set()

    thread = threading.Thread(target=run_first)
    thread.start()
    assert inside.wait(10)
    second._run(quick)
    thread.join(10)
    assert warnings.showwarning is shown_before
    assert any("partly covered" in note for note in first.notes), first.notes
    assert not any("read-only" in note for note in first.notes), first.notes
    assert any("read-only" in note for note in second.notes), second.notes
    with warnings.catch_warnings(record=True) as caught:  # Python's machinery still works
        warnings.simplefilter("always")
        warnings.warn(CctxWarning("after both"), stacklevel=1)
    assert [str(c.message) for c in caught] == ["after both"]


# ----------------------------------------------------------- address explorer


def test_address_explorer_rejects_malformed_addresses_without_fetching(client: Any) -> None:
    rec = Recording(client)
    ex = widgets.address_explorer(rec, start=DAY1, end=DAY3)
    assert ex.address.continuous_update is False
    ex.address.value = "0x1234"
    assert rec.calls == []
    assert isinstance(ex.error, ValueError)
    assert "40 hex digits" in ex.status.value
    assert ex.profile is None


def test_address_explorer_shows_profile_and_activity(client: Any, example: dict) -> None:
    ex = widgets.address_explorer(client, start=DAY1, end=DAY3)
    # an image with nothing to show takes no room (a browser draws an empty one as broken)
    assert ex.images["activity"].layout.display == "none"
    ex.address.value = example["address"].upper().replace("0X", "0x")
    assert ex.error is None, ex.status.value
    assert ex.profile is not None
    assert ex.profile.transfers > 0
    assert ex.profile.address == example["address"]
    assert example["address"] in ex.summary.value
    assert "On the block explorers" in ex.summary.value
    assert _png_ok(ex.images["activity"].value)
    assert ex.images["activity"].layout.display is None
    assert "transfers received" in ex.status.value
    # the corridors as a formatted table: headers with units, no 6.561854e+06
    assert '<th class="num">volume (USDC)</th>' in ex.summary.value
    assert "e+0" not in ex.summary.value
    assert "source_chain" not in ex.summary.value
    assert "Synthetic" in ex.banner.value
    # a malformed one next clears the old result and says why
    ex.address.value = "not an address"
    assert ex.profile is None
    assert ex.summary.value == ""
    assert bytes(ex.images["activity"].value) == b""
    assert ex.images["activity"].layout.display == "none"
    assert "40 hex digits" in ex.status.value
    assert "base58" in ex.status.value  # every accepted format is named


@pytest.mark.parametrize("chain", ["solana", "noble"])
def test_address_explorer_takes_a_non_evm_chains_own_format(client: Any, chain: str) -> None:
    start, end = pd.Timestamp(DAY1, tz="UTC"), pd.Timestamp(DAY3, tz="UTC")
    frame = client.mints(start, end, destination=chain)
    address = frame["mint_recipient"].iloc[0]
    assert not address.startswith("0x")  # base58 / noble1...
    ex = widgets.address_explorer(client, start=DAY1, end=DAY3)
    ex.address.value = address
    assert ex.error is None, ex.status.value
    assert ex.profile.address == address
    assert ex.profile.transfers >= 1


def test_address_explorer_unknown_address(client: Any) -> None:
    ex = widgets.address_explorer(client, address="0x" + "00" * 19 + "01", start=DAY1, end=DAY2)
    assert ex.error is None, ex.status.value
    assert ex.profile is not None
    assert ex.profile.transfers == 0
    assert "received nothing" in ex.status.value


# --------------------------------------------------------- transaction lookup


def test_transaction_lookup(client: Any, example: dict) -> None:
    tx = widgets.transaction_lookup(client)
    assert tx.tx_hash.continuous_update is False
    tx.tx_hash.value = example["tx_hash"]
    assert tx.error is None, tx.status.value
    assert tx.transaction is not None
    assert example["tx_hash"] in tx.details.value
    assert "found" in tx.status.value
    # the service's bookkeeping stays out of what a reader sees; headers are words
    assert {"record_id", "entity_id", "instance_id"} <= set(tx.transaction.index)
    for internal in ("record_id", "entity_id", "instance_id", "TransactionsTable"):
        assert internal not in tx.details.value
    assert "<th>transaction</th>" in tx.details.value
    assert "<th>amount (USDC)</th>" in tx.details.value
    assert "tx_hash" not in tx.details.value
    # the hash links to the explorer of the chain it ran on: a mint's is its destination
    row = tx.transaction
    side = "destination_chain" if row["transaction_type"] == "mint" else "source_chain"
    url = chains.info(str(row[side])).tx_url(example["tx_hash"])
    assert f'href="{url}"' in tx.details.value
    tx.tx_hash.value = "0xnope"
    assert isinstance(tx.error, ValueError)
    assert "64 hex digits" in tx.status.value
    assert tx.transaction is None
    assert tx.details.value == ""
    tx.tx_hash.value = "0x" + "ab" * 32
    assert "no transaction has the hash" in tx.status.value


def test_widgets_module_lists_its_public_names() -> None:
    assert sorted(widgets.__all__) == widgets.__all__
    for name in widgets.__all__:
        assert hasattr(widgets, name)


def test_dashboard_preselects_chains_by_any_name(client: Any) -> None:
    dash = widgets.dashboard(client, start=DAY1, end=DAY2, chains=["Base", 3])
    assert dash.chains.value == ("arbitrum", "base")
    assert "(arbitrum, base)" in dash.status.value
    with pytest.raises(ValueError, match="unknown chain"):
        widgets.dashboard(client, start=DAY1, end=DAY2, chains=["atlantis"])


def test_keyword_end_is_excluded_like_everywhere_else(client):
    dash = widgets.dashboard(client, start="2024-06-29", end="2024-06-30")
    assert (dash.start.value, dash.end.value) == (DAY1, DAY1)
    dash = widgets.dashboard(client, start="2024-06-29", end="2024-06-30T06:00Z")
    assert dash.end.value == DAY2


def test_a_window_past_the_data_is_not_a_green_zero(client: Any) -> None:
    with warnings.catch_warnings(record=True) as passed_on:
        warnings.simplefilter("always")
        panel = widgets.dashboard(client, start="2024-07-02", end="2024-07-05")
    assert panel.error is None, panel.status.value
    status = panel.status.value
    assert "Partial data" in status
    assert "past the service&#x27;s clock" in status or "past the service's clock" in status
    assert "#1a7f37" not in status  # not the green "all good" style
    assert panel.coverage_note is not None
    assert panel.notes
    assert panel.notes[0].startswith("Partial data: ")
    # said once, on the status line: not printed raw into the panel, not passed on
    assert panel.output.outputs == ()
    assert not [w for w in passed_on if issubclass(w.category, CoverageWarning)]
    # a redraw from the same fetch still says it
    panel.metric.value = "count"
    assert "Partial data" in panel.status.value


def test_a_dashboard_opens_on_the_last_days_the_data_holds(client: Any) -> None:
    """The pinned sample ends at its clock (2024-07-01 12:00), long before the default days
    (the last seven before today): the first fetch finds none of them covered, asks where
    the data ends and shows its last seven days instead, saying so."""
    recording = Recording(client)
    panel = widgets.dashboard(recording)
    assert panel.error is None, panel.status.value
    last = client.last_record()
    assert last.date() == DAY3
    assert (panel.start.value, panel.end.value) == (DAY3 - dt.timedelta(days=6), DAY3)
    assert recording.calls == ["mints", "last_record", "mints"]
    start, end = panel.window
    assert (start, end) == (pd.Timestamp(panel.start.value, tz="UTC"),
                            pd.Timestamp(DAY3 + dt.timedelta(days=1), tz="UTC"))  # fmt: skip
    shown = client.mints(start, end)
    assert len(shown)
    assert list(panel.transfers["transfer_id"]) == list(shown["transfer_id"])
    status = html.unescape(panel.status.value)
    opened = widgets.overview.default_dates(7)
    assert (f"no data from {opened[0]:%Y-%m-%d} to {opened[1]:%Y-%m-%d}: the data ends "
            "2024-07-01 11:5") in status  # fmt: skip
    assert "so these are its last 7 days" in status
    assert "none of it is covered" not in status  # the opening days' warning is answered
    assert "past the service's clock" in status  # the last day's afternoon is not there yet
    assert f"{len(shown):,} transfers (all chains)" in status
    assert panel.fetches == 2
    # then a day picked moves the window, and nothing more is asked
    panel.start.value = DAY2
    assert recording.calls[3:] == ["mints"]
    assert panel.notes[0].startswith("Partial data")


class NoEnd(Recording):
    """The sample client, whose ``last_record`` fails as a service past its retries does."""

    def last_record(self, **kwargs: Any) -> Any:
        from cctx_research.errors import ServerError

        self.calls.append("last_record")
        raise ServerError("the service answered 503 five times")


def test_where_the_data_ends_unknown_keeps_the_opening_days(client: Any, caplog) -> None:
    caplog.set_level("INFO", logger="cctx_research.widgets.overview")
    panel = widgets.dashboard(recording := NoEnd(client))
    assert recording.calls == ["mints", "last_record"]
    assert panel.error is None
    assert (panel.start.value, panel.end.value) == widgets.overview.default_dates(7)
    assert "none of it is covered" in html.unescape(panel.status.value)  # said, not an error
    assert "could not ask where the data ends: the service answered 503" in caplog.text


def test_days_picked_or_covered_are_never_moved(client: Any, monkeypatch) -> None:
    recording = Recording(client)
    panel = widgets.dashboard(recording, start="2026-01-01", end="2026-01-08")
    assert (panel.start.value, panel.end.value) == (dt.date(2026, 1, 1), dt.date(2026, 1, 7))
    assert recording.calls == ["mints"]
    assert len(panel.transfers) == 0
    from cctx_research.widgets import overview

    monkeypatch.setattr(overview, "default_dates", lambda days: (DAY1, DAY2))
    recording = Recording(client)
    panel = widgets.dashboard(recording)  # opening days the data holds: nothing more asked
    assert (panel.start.value, panel.end.value) == (DAY1, DAY2)
    assert recording.calls == ["mints"]
    assert len(panel.transfers)
    assert "no data from" not in panel.status.value


class Noisy:
    """A client whose fetch warns, once as the toolkit and once as a library would."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.source = inner.source

    def mints(self, *args: Any, **kwargs: Any) -> pd.DataFrame:
        warnings.warn(CacheWarning("the cache directory is read-only"), stacklevel=2)
        warnings.warn("a library's own deprecation", FutureWarning, stacklevel=2)
        return self.inner.mints(*args, **kwargs)


def test_toolkit_warnings_go_to_the_status_line_others_pass_on(client: Any) -> None:
    with warnings.catch_warnings(record=True) as passed_on:
        warnings.simplefilter("always")
        panel = widgets.dashboard(Noisy(client), start=DAY1, end=DAY2)
    assert panel.error is None, panel.status.value
    assert "Cache read-only: the cache directory is read-only" in panel.status.value
    assert panel.output.outputs == ()  # nothing raw inside the panel
    assert [w.category for w in passed_on] == [FutureWarning]


def test_a_covered_window_has_no_note(dash: widgets.Dashboard) -> None:
    assert dash.coverage_note is None
    assert "Partial data" not in dash.status.value


def test_panels_open_on_complete_days_only() -> None:
    from cctx_research.widgets import _panel

    start, end = _panel.default_dates(7)
    today = pd.Timestamp.now(tz="UTC").date()
    assert end == today - dt.timedelta(days=1)  # today is partial: no warning on opening
    assert (end - start).days == 6


def test_the_actors_panel_ranks_relayers_depositors_and_rebalancing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import cctx_research as cctx
    from cctx_research import plots
    from cctx_research.analysis import actors, movements

    drawn: list[list[str]] = []
    real = plots.plot_relayer_shares

    def recorded(*args: Any, **kwargs: Any) -> Any:
        ax = real(*args, **kwargs)
        drawn.append([t.get_text() for t in ax.get_legend().get_texts()])
        return ax

    monkeypatch.setattr(plots, "plot_relayer_shares", recorded)
    ledger = cctx.load_sample(as_of="2024-07-01", days=2)
    panel = widgets.actors_panel(ledger)
    relayers = actors.relayers(ledger)
    minted = int(ledger["mint_timestamp"].notna().sum())
    assert minted < len(ledger)  # some in flight: the line must not say all were minted
    assert (f"{len(relayers):,} relayers minted {minted:,} of these {len(ledger):,} "
            "transfers") in panel.status.value  # fmt: skip
    # the chart names as many relayers as the table lists (and the rest as others)
    rows = panel.table.value.count("<tr>") - 1
    assert rows == panel.top_n.value == 10
    assert len([t for t in drawn[-1] if t != "others"]) == min(rows, len(relayers))
    # the chart says in words under it what it names, as its legend does
    assert panel.chart_note.value == (
        '<p class="cctx-chart-note">Relayers named in the chart: '
        + html.escape(", ".join(drawn[-1])) + "</p>"
    )
    # its addresses wrap to fit the panel
    assert panel.table.value.startswith('<div class="cctx-fit"><table')
    assert panel.images["shares"].value  # the relayers' shares per day
    panel.role.value = "depositors"
    assert "Mayan FastMCTP" in panel.table.value
    listed = actors.integrators(ledger)
    assert (f"{len(listed):,} integrators deposited {int(listed['transfers'].sum()):,} of "
            f"these {len(ledger):,} transfers") in panel.status.value  # fmt: skip
    assert panel.chart_note.value == ""  # no chart, no words for one
    assert panel.table.value.count("<tr>") == 1 + 10
    panel.chains.value = ("solana",)
    assert "(solana)" in panel.status.value
    panel.role.value = "rebalancing"
    assert panel.error is None
    sol = chains.domain("solana")
    solana = ledger[(ledger["source_domain"] == sol) | (ledger["destination_domain"] == sol)]
    flagged = int(movements.rebalancing_share(solana)["rebalancing_count"].sum())
    assert f"{flagged:,} of {len(solana):,} transfers are rebalancing" in panel.status.value
    empty = widgets.actors_panel(None)
    assert "needs a ledger" in empty.status.value
    with pytest.raises(TypeError, match="ledger must be a pandas DataFrame"):
        widgets.actors_panel("ledger.parquet")


def _keep_axes(monkeypatch: pytest.MonkeyPatch, module: Any) -> dict[str, Any]:
    """The axes each figure ``module`` renders from now on, by its plot function's name."""
    from cctx_research.views import markup

    drawn: dict[str, Any] = {}

    def keeping(draw: Any, data: Any, **options: Any) -> bytes:
        def draw_and_keep(d: Any, *, ax: Any, **kw: Any) -> Any:
            drawn[draw.__name__] = ax
            return draw(d, ax=ax, **kw)

        return markup.render_png(draw_and_keep, data, **options)

    monkeypatch.setattr(module, "render_png", keeping)
    return drawn


def _hatched(ax: Any) -> list[tuple[pd.Timestamp, pd.Timestamp]]:
    """The x extent of each hatched patch of ``ax``, as UTC times."""
    import matplotlib.dates as mdates

    out = []
    for patch in ax.patches:
        if patch.get_hatch():
            xs = patch.get_patch_transform().transform(patch.get_path().vertices)[:, 0]
            lo, hi = (pd.Timestamp(mdates.num2date(v)).round("s") for v in (xs.min(), xs.max()))
            out.append((lo, hi))
    return out


def test_the_partial_day_and_only_it_is_hatched_in_both_views(
    client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the sample's clock is 1 July, 12:00 UTC: a window to 1 July included holds half of it
    today = pd.Timestamp(DAY3, tz="UTC")
    partial_day = [(today, today + pd.Timedelta(days=1))]
    from cctx_research.widgets import _panel, explorer

    drawn = _keep_axes(monkeypatch, _panel)
    dash = widgets.dashboard(client, start=DAY1, end="2024-07-02")
    assert dash.error is None, dash.status.value
    assert _hatched(drawn["plot_volume"]) == partial_day
    dash.end.value = DAY2  # whole days: nothing hatched
    assert _hatched(drawn["plot_volume"]) == []

    drawn = _keep_axes(monkeypatch, explorer)
    busy = client.mints(today, today + pd.Timedelta(hours=12))
    address = addresses.top(busy, role="recipient", n=1)["address"].iloc[0]
    ex = widgets.address_explorer(client, address=address, start=DAY1, end="2024-07-02")
    assert ex.error is None, ex.status.value
    assert ex.profile.activity["timestamp"].iloc[-1] == today  # it received on the partial day
    ax = drawn["plot_address_activity"]
    assert _hatched(ax) == partial_day
    bars = [p for p in ax.patches if not p.get_hatch()]
    assert len(bars) == len(ex.profile.activity)
    ex.end.value = DAY2
    assert _hatched(drawn["plot_address_activity"]) == []
