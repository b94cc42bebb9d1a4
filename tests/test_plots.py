from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from analysis.frames import SMALL_ROWS, make_transfers, random_transfers
from matplotlib.axes import Axes
from matplotlib.patches import FancyArrowPatch

from cctx_research import plots, schema
from cctx_research.analysis import addresses, flows, volumes

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
    assert list(eth.get_ydata()) == [400.0, 0.0, 0.5]


def test_volume_stacked_areas_with_other(rand):
    ts = volumes.timeseries(rand, by="corridor")
    ax = plots.plot_volume(ts, kind="area", top=3, value="count")
    assert ax.get_ylabel() == "Transfers (count)"
    assert len(ax.collections) == 4  # three corridors + "other"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[-1] == "other"
    assert all("→" in label for label in legend[:-1])


def test_volume_from_transfers_totals(small):
    ax = plots.plot_volume(small)
    assert len(ax.lines) == 1
    assert list(ax.lines[0].get_ydata()) == [400.0, 50.0, 150_025.5]


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


def test_seasonality(small):
    ax = plots.plot_seasonality(volumes.seasonality(small))
    assert ax.get_xlabel() == "Hour of day (UTC)"
    assert ax.get_title() == f"Activity by weekday and hour, {WINDOW}"
    grid = ax.images[0].get_array()
    assert grid.shape == (7, 24)
    assert grid[5, 12] == 1
    assert grid[0, 23] == 1
    assert grid.sum() == 6


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
