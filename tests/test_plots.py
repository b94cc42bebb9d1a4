from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from analysis.frames import SMALL_ROWS, make_transfers, random_transfers
from matplotlib.axes import Axes
from matplotlib.patches import FancyArrowPatch

from cctx_research import plots, schema
from cctx_research.analysis import addresses, flows, volumes
from cctx_research.provenance import Provenance, attach

pytestmark = pytest.mark.usefixtures("no_show_and_close")

WINDOW = "2024-06-01 – 2024-06-03 (UTC)"


@pytest.fixture
def small() -> pd.DataFrame:
    return make_transfers(SMALL_ROWS)


@pytest.fixture(scope="module")
def rand() -> pd.DataFrame:
    return random_transfers(2_000)


@pytest.fixture
def empty() -> pd.DataFrame:
    return schema.empty("transfers")


def volume_history() -> pd.DataFrame:
    start = pd.date_range("2024-06-01", periods=3, freq="1D", tz="UTC")
    raw_burn = np.array([2, 3, 1], dtype="int64") * 10**6
    raw_mint = np.array([1, 1, 4], dtype="int64") * 10**6
    return pd.DataFrame(
        {
            "timestamp": start,
            "end": start + pd.Timedelta(days=1),
            "mint_volume": raw_mint / 1e6,
            "burn_volume": raw_burn / 1e6,
            "total_volume": (raw_mint + raw_burn) / 1e6,
            "mint_volume_raw": raw_mint,
            "burn_volume_raw": raw_burn,
            "mint_count": np.ones(3, dtype="int64"),
            "burn_count": np.ones(3, dtype="int64"),
            "total_count": np.full(3, 2, dtype="int64"),
        }
    )


def texts(ax: Axes) -> list[str]:
    return [t.get_text() for t in ax.texts]


# ------------------------------------------------------------------ flows


def test_flow_graph(small):
    g = flows.graph(small)
    ax = plots.plot_flow_graph(g)
    assert isinstance(ax, Axes)
    assert ax.get_title() == f"CCTP flows between chains, {WINDOW}"
    arrows = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
    assert len(arrows) == g.number_of_edges() == 5
    widths = sorted(a.get_linewidth() for a in arrows)
    assert widths[-1] > widths[0]  # width follows volume
    assert {"Ethereum", "Arbitrum One", "Base", "domain 42"} <= set(texts(ax))
    assert any("USDC" in t for t in texts(ax))


def test_flow_graph_labels_clear_every_node_and_stay_in_the_figure(rand):
    fig, ax = plt.subplots(figsize=(8.0, 6.0), layout="constrained")
    plots.plot_flow_graph(rand, ax=ax)
    renderer = _drawn(fig)
    nodes = ax.collections[0]  # the node circles: centres in data, sizes in points squared
    centres = ax.transData.transform(nodes.get_offsets())
    radii = np.sqrt(nodes.get_sizes()) / 2 * fig.dpi / 72
    labels = [t for t in ax.texts if t.get_gid() == "chain-label"]
    assert len(labels) == len(centres) >= 4
    for label in labels:
        box = label.get_window_extent(renderer)
        assert fig.bbox.x0 <= box.x0, label.get_text()
        assert box.x1 <= fig.bbox.x1, label.get_text()
        for (cx, cy), r in zip(centres, radii, strict=True):
            # the nearest point of the label's box to the circle's centre lies outside it
            nx_, ny_ = min(max(cx, box.x0), box.x1), min(max(cy, box.y0), box.y1)
            assert np.hypot(nx_ - cx, ny_ - cy) >= r, label.get_text()


def test_flow_graph_from_transfers_on_given_axes(small):
    _fig, ax = plt.subplots()
    out = plots.plot_flow_graph(small, ax=ax, title="custom")
    assert out is ax
    assert ax.get_title() == "custom"


def test_flow_matrix(small):
    ax = plots.plot_flow_matrix(flows.matrix(small))
    assert ax.get_title() == f"CCTP flow matrix, {WINDOW}"
    assert ax.get_xlabel() == "Destination chain"
    assert ax.get_ylabel() == "Source chain"
    assert len(ax.images) == 1
    assert len(ax.texts) == 16
    assert {"400", "150k", "0.5", "25"} <= set(texts(ax))
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["Ethereum", "Arbitrum One", "Base", "domain 42"]
    colorbar_axes = [a for a in ax.figure.axes if a is not ax]
    assert colorbar_axes[0].get_ylabel() == "Volume (USDC)"


def _drawn(fig):
    """The renderer of the figure, drawn (laid out as in the report)."""
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def test_flow_matrix_title_clear_of_the_colour_bar(rand):
    fig, ax = plt.subplots(figsize=(8.0, 6.5), layout="constrained")
    plots.plot_flow_matrix(flows.matrix(rand), ax=ax)
    renderer = _drawn(fig)
    bar = next(a for a in fig.axes if a is not ax)
    offset = bar.yaxis.get_offset_text()
    assert offset.get_text() == ""  # no "1e7" exponent above the bar
    labels = [t.get_text() for t in bar.get_yticklabels() if t.get_text()]
    assert labels
    assert all(label[-1] in "kMB0123456789" for label in labels)
    title = ax.title.get_window_extent(renderer)
    assert not title.overlaps(bar.get_tightbbox(renderer))


def test_lorenz_title_fits_the_figure(rand):
    fig, ax = plt.subplots(figsize=(6.0, 5.0), layout="constrained")
    plots.plot_lorenz(rand, ax=ax)
    renderer = _drawn(fig)
    title = ax.title.get_window_extent(renderer)
    page = fig.bbox
    assert page.x0 <= title.x0, (title, page)
    assert title.x1 <= page.x1, (title, page)
    assert title.y1 <= page.y1


def test_flow_matrix_shows_same_chain_cells_as_impossible_and_numbers_inside_cells(rand):
    matrix = flows.matrix(rand)
    fig, ax = plt.subplots(figsize=(8.0, 6.5), layout="constrained")
    plots.plot_flow_matrix(matrix, ax=ax)
    renderer = _drawn(fig)
    n = len(matrix.columns)
    diagonal = [t for t in ax.texts if round(t.get_position()[0]) == round(t.get_position()[1])]
    assert len(diagonal) == min(n, len(matrix.index))
    assert {t.get_text() for t in diagonal} == {"×"}  # a route that cannot exist, not "0"
    assert bool(ax.images[0].get_array().mask.diagonal().all())
    for text in ax.texts:  # each number clear of its cell's borders
        x, y = text.get_position()
        cell = ax.transData.transform([(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)])
        box = text.get_window_extent(renderer)
        width, height = abs(cell[1][0] - cell[0][0]), abs(cell[1][1] - cell[0][1])
        assert box.width < 0.85 * width, text.get_text()
        assert box.height < 0.85 * height, text.get_text()


def test_flow_matrix_counts_from_transfers(small):
    ax = plots.plot_flow_matrix(small, values="count", annotate=False)
    assert len(ax.texts) == 0
    colorbar_axes = [a for a in ax.figure.axes if a is not ax]
    assert colorbar_axes[0].get_ylabel() == "Transfers (count)"


def test_net_flows_bars(small):
    ax = plots.plot_net_flows(flows.net(small))
    assert ax.get_title() == f"Net flow per chain, {WINDOW}"
    assert "USDC" in ax.get_xlabel()
    bars = ax.patches
    assert len(bars) == 4
    assert sorted(b.get_width() for b in bars) == [-150_000.0, -24.5, 375.0, 149_649.5]


def test_net_flows_over_time(small):
    ax = plots.plot_net_flows(flows.net(small, freq="1D"))
    assert ax.get_ylabel() == "Cumulative net flow (USDC)"
    chain_lines = [line for line in ax.lines if not line.get_label().startswith("_")]
    assert sorted(line.get_label() for line in chain_lines) == [
        "Arbitrum One",
        "Base",
        "Ethereum",
        "domain 42",
    ]
    base = next(line for line in chain_lines if line.get_label() == "Base")
    assert list(base.get_ydata()) == [400.0, 350.0, 375.0]


# ---------------------------------------------------------------- volumes


def test_volume_lines(small):
    ax = plots.plot_volume(volumes.timeseries(small, by="source_chain"))
    assert ax.get_title() == f"CCTP transfer volume per 1D, {WINDOW}"
    assert ax.get_ylabel() == "Volume (USDC)"
    assert ax.get_xlabel() == "Time (UTC)"
    assert len(ax.lines) == 4
    eth = next(line for line in ax.lines if line.get_label() == "Ethereum")
    # a step per daily bucket, the last one to the end of its day
    assert eth.get_drawstyle() == "steps-post"
    assert list(eth.get_ydata()) == [400.0, 0.0, 0.5, 0.5]
    days = pd.date_range("2024-06-01", periods=4, freq="D")
    assert list(mdates.date2num(eth.get_xdata())) == list(mdates.date2num(days))


def test_volume_stacked_areas_with_other(rand):
    ts = volumes.timeseries(rand, by="corridor")
    ax = plots.plot_volume(ts, kind="area", top=3, value="count")
    assert ax.get_ylabel() == "Transfers (count)"
    assert len(ax.collections) == 4  # three corridors + "other"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[-1] == "other"
    assert all("→" in label for label in legend[:-1])


def _window(frame: pd.DataFrame, start: str, end: str) -> pd.DataFrame:
    """``frame`` as fetched for ``[start, end)``: its provenance records the window."""
    window = (pd.Timestamp(start, tz="UTC"), pd.Timestamp(end, tz="UTC"))
    return attach(frame, Provenance(source="test", operation="mints", window=window))


def _bands(ax: Axes) -> list[tuple[float, float]]:
    """The x extent of each hatched band (partial buckets), in matplotlib date numbers."""
    out = []
    for patch in ax.patches:
        if patch.get_hatch():
            xs = patch.get_patch_transform().transform(patch.get_path().vertices)[:, 0]
            out.append((float(xs.min()), float(xs.max())))
    return sorted(out)


@pytest.mark.parametrize("kind", ["line", "area"])
def test_partial_first_and_last_buckets_are_hatched_not_drawn_as_a_drop(kind):
    # a window from 09:30 on the first day to 12:00 on the last: daily buckets, the first
    # and the last only partly inside it (and lower for it, with the same activity each hour)
    hourly = tuple(f"{h:02d}:40" for h in range(24))
    transfers = _every_day("2024-06-01", "2024-06-06", times=hourly)
    stamps = transfers["timestamp"]
    keep = (stamps >= "2024-06-01 09:30Z") & (stamps < "2024-06-05 12:00Z")
    frame = _window(transfers[keep.to_numpy()].reset_index(drop=True),
                    "2024-06-01 09:30", "2024-06-05 12:00")  # fmt: skip
    ts = volumes.timeseries(frame, freq="1D")
    assert ts["count"].tolist() == [15, 24, 24, 24, 12]
    ax = plots.plot_volume(ts, value="count", kind=kind)
    x = mdates.date2num(pd.date_range("2024-06-01", periods=6, freq="D"))
    # each band covers exactly its partial day: 1 June, and 5 June (to midnight)
    assert _bands(ax) == [(x[0], x[1]), (x[4], x[5])]
    # and the drop is the partial day's own step, under its band: the step before is whole
    drawn = ax.lines[0] if kind == "line" else None
    if drawn is not None:
        assert list(drawn.get_ydata()) == [15, 24, 24, 24, 12, 12]
        assert list(mdates.date2num(drawn.get_xdata())) == list(x)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["all chains", plots.volumes.PARTIAL_LABEL]
    # whole days, or a frame that records no window: nothing is marked
    whole = _window(transfers, "2024-06-01", "2024-06-06")
    assert _bands(plots.plot_volume(volumes.timeseries(whole), kind=kind)) == []
    assert _bands(plots.plot_volume(volumes.timeseries(transfers), kind=kind)) == []


def test_volume_from_transfers_totals(small):
    ax = plots.plot_volume(small)
    assert len(ax.lines) == 1
    assert list(ax.lines[0].get_ydata()) == [400.0, 50.0, 150_025.5, 150_025.5]


def test_size_distribution_histogram(rand):
    ax = plots.plot_size_distribution(rand, bins=30)
    assert ax.get_xscale() == "log"
    assert ax.get_xlabel() == "Transfer amount (USDC, log scale)"
    bars = [p for p in ax.patches if p.get_height() > 0 or p.get_width() > 0]
    assert len(bars) == 30
    assert sum(p.get_height() for p in ax.patches) == len(rand)
    assert {" small", " whale"} <= set(texts(ax))


def test_size_distribution_classes(small):
    ax = plots.plot_size_distribution(volumes.size_buckets(small), weights="volume")
    assert ax.get_title() == f"Transfer sizes, {WINDOW}"
    assert ax.get_ylabel() == "Volume (USDC)"
    assert [p.get_height() for p in ax.patches] == [0.5, 75.0, 400.0, 0.0, 0.0, 150_000.0]


def _every_day(start: str, end: str, *, times: tuple[str, ...] = ("12:00", "12:30")):
    """The same activity each day: one 10-USDC transfer at each of ``times``, [start, end)."""
    days = pd.date_range(start, end, freq="D", inclusive="left", tz="UTC")
    rows = [
        {"time": f"{d:%Y-%m-%d} {t}", "src": "ethereum", "dst": "base", "amount": 10.0}
        for d in days
        for t in times
    ]
    return make_transfers(rows)


def test_seasonality_draws_means_per_day_not_sums():
    # 2024-06-03 (a Monday) to 2024-07-02: five Mondays, four of every other weekday,
    # and the same two transfers every day; summed, Monday would look busiest
    transfers = attach(
        _every_day("2024-06-03", "2024-07-02"),
        Provenance(source="test", window=(pd.Timestamp("2024-06-03", tz="UTC"),
                                          pd.Timestamp("2024-07-02", tz="UTC"))),
    )  # fmt: skip
    ax = plots.plot_seasonality(transfers)
    span = "2024-06-03 – 2024-07-01 (UTC)"
    assert ax.get_title() == f"Activity by weekday and hour, mean per day, {span}"
    grid = ax.images[0].get_array()
    assert grid.shape == (7, 24)
    # worked out independently: per weekday, the transfers at 12:xx over the days it holds
    stamps = transfers["timestamp"]
    totals = stamps.groupby([stamps.dt.day_of_week, stamps.dt.hour]).size()
    days = pd.date_range("2024-06-03", "2024-07-01", freq="D").day_of_week.value_counts()
    for weekday in range(7):
        assert grid[weekday, 12] == totals[(weekday, 12)] / days[weekday] == 2.0
        assert grid[weekday, 3] == 0.0
    assert totals[(0, 12)] == 10
    assert totals[(1, 12)] == 8
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["Mon (5)", "Tue (4)", "Wed (4)", "Thu (4)", "Fri (4)", "Sat (4)", "Sun (4)"]
    bar = ax.figure.axes[-1]
    assert bar.get_ylabel() == "Mean transfers per day (count)"


def test_seasonality_means_on_random_data_match_pandas(rand):
    ax = plots.plot_seasonality(rand, values="volume")
    grid = ax.images[0].get_array()
    stamps = rand["timestamp"]
    sums = rand.groupby([stamps.dt.day_of_week, stamps.dt.hour])["amount"].sum()
    # June 2024 from its first to its last hour: five Saturdays and Sundays, four of the rest
    held = pd.date_range(stamps.min().floor("D"), stamps.max().floor("D"), freq="D")
    days = held.day_of_week.value_counts()
    assert days[5] == days[6] == 5
    assert days[0] == 4
    for (weekday, hour), total in sums.items():
        assert grid[weekday, hour] == pytest.approx(total / days[weekday])
    assert ax.figure.axes[-1].get_ylabel() == "Mean volume per day (USDC)"


def test_seasonality_leaves_hours_outside_the_span_blank(small):
    ax = plots.plot_seasonality(volumes.seasonality(small))  # Sat 00:30 to Mon 23:10
    grid = ax.images[0].get_array()
    assert grid.mask[1:5].all()  # Tuesday to Friday: not in the span, not zero
    assert grid[5, 12] == 1
    assert grid[0, 23] == 1
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[:2] == ["Mon (1)", "Tue (0)"]


def test_in_flight():
    ax = plots.plot_in_flight(volume_history())
    assert ax.get_title() == "USDC in flight, 2024-06-01 – 2024-06-04 (UTC)"
    assert "USDC" in ax.get_ylabel()
    assert list(ax.lines[0].get_ydata()) == [1.0, 3.0, 0.0]


# -------------------------------------------------------------- addresses


def test_lorenz(small):
    ax = plots.plot_lorenz(small)
    # the window on a second line: the plot is narrow
    assert ax.get_title() == f"Concentration of volume per recipient\n{WINDOW}"
    assert "USDC" in ax.get_ylabel()
    assert len(ax.lines) == 2
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    gini = addresses.concentration(addresses.top(small, n=None)["volume"]).gini
    assert f"Lorenz curve (Gini {gini:.3f})" in legend


def test_lorenz_from_values_has_no_window():
    ax = plots.plot_lorenz(addresses.concentration([1, 1, 1]), role="sender")
    assert ax.get_title() == "Concentration of volume per sender"
    assert list(ax.lines[1].get_ydata()) == pytest.approx([0, 1 / 3, 2 / 3, 1])


def test_address_activity(small):
    profile = addresses.profile("0x" + "0" * 39 + "1", small)
    ax = plots.plot_address_activity(profile)
    assert ax.get_title().startswith("Received by 0x0000…0001, ")
    assert ax.get_ylabel() == "Volume received (USDC)"
    assert [p.get_height() for p in ax.patches] == [100.0, 50.0, 0.5]
    ax = plots.plot_address_activity(profile.activity, value="count")
    assert [p.get_height() for p in ax.patches] == [1, 1, 1]


# -------------------------------------------------------- empty and errors


@pytest.mark.parametrize(
    "plot",
    [
        plots.plot_flow_graph,
        plots.plot_flow_matrix,
        plots.plot_net_flows,
        plots.plot_volume,
        plots.plot_size_distribution,
        plots.plot_seasonality,
        plots.plot_lorenz,
    ],
)
def test_empty_transfers_draw_no_data(plot, empty):
    ax = plot(empty)
    assert isinstance(ax, Axes)
    assert "no data" in texts(ax)
    assert ax.get_title()  # still titled, without a window


def test_empty_other_inputs_draw_no_data(empty):
    ax = plots.plot_in_flight(schema.empty("volume"))
    assert "no data" in texts(ax)
    ax = plots.plot_address_activity(addresses.profile("0x" + "1" * 40, empty))
    assert "no data" in texts(ax)
    ax = plots.plot_net_flows(flows.net(empty, freq="1D"))
    assert "no data" in texts(ax)
    ax = plots.plot_size_distribution(volumes.size_buckets(empty))
    assert "no data" in texts(ax)


def test_bad_options(small):
    with pytest.raises(ValueError, match="kind"):
        plots.plot_volume(small, kind="bars")
    with pytest.raises(ValueError, match="weights"):
        plots.plot_size_distribution(small, weights="amount")
    with pytest.raises(ValueError, match="values"):
        plots.plot_seasonality(small, values="sum")
    with pytest.raises(TypeError, match="ax must be"):
        plots.plot_net_flows(small, ax="left")
    with pytest.raises(TypeError, match="plot_flow_graph expects"):
        plots.plot_flow_graph([1, 2])
    with pytest.raises(ValueError, match="lacks column"):
        plots.plot_volume(pd.DataFrame({"x": [1]}))


def test_a_polars_frame_gets_the_to_pandas_hint() -> None:
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame({"source_chain": ["base"], "destination_chain": ["ethereum"]})
    with pytest.raises(TypeError, match=r"pass data\.to_pandas\(\) \(a polars frame\)"):
        plots.plot_flow_matrix(frame)


def test_one_compact_number_format_for_every_amount_axis():
    from cctx_research.plots._axes import CompactFormatter, compact

    assert [compact(v) for v in (12_345_678, 950_000, 999_950, 0.5, 2e-6, 0)] == [
        "12.3M", "950k", "1M", "0.5", "0.000002", "0",
    ]  # fmt: skip
    formatter = CompactFormatter()
    assert formatter.format_ticks([-2.5e6, 0, 2.5e6]) == ["−2.5M", "0", "2.5M"]
    # a narrow range of large values: each label gets the digits it needs, never an offset
    assert formatter.format_ticks([1_000_000, 1_000_500, 1_001_000]) == [
        "1M", "1.0005M", "1.001M",
    ]  # fmt: skip
    assert formatter.get_offset() == ""


def test_relayer_shares_stack_to_one_hundred_with_the_legend_outside():
    import cctx_research as cctx
    from cctx_research.analysis import actors

    ledger = cctx.load_sample(as_of="2024-07-01", days=3)
    table = actors.relayers(ledger, freq="1D")
    ax = plots.plot_relayer_shares(table, top=3)
    ax.figure.canvas.draw()
    stacks = ax.collections
    assert len(stacks) == 4  # three relayers by name, and the others
    tops = stacks[-1].get_paths()[0].vertices[:, 1].max()
    assert tops == pytest.approx(100.0)
    legend = ax.get_legend().get_window_extent()
    assert legend.x0 >= ax.get_window_extent().x1  # beside the data, not over it
    with pytest.raises(ValueError, match="value"):
        plots.plot_relayer_shares(table, value="volume")
    plt.close(ax.figure)
