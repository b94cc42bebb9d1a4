"""plot_latency, plot_stuck and plot_fast_share: Axes with the expected artists."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from analysis.ledgers import make_ledger, v2
from matplotlib.axes import Axes
from matplotlib.patches import Rectangle

from cctx_research import plots, schema
from cctx_research.analysis import flows, latency, pending, volumes
from cctx_research.analysis import v2 as v2_analysis
from cctx_research.errors import DataError

pytestmark = pytest.mark.usefixtures("no_show_and_close")

ROWS = [
    {"src": 0, "dst": 6, "amount": 100, "burn": "2024-07-01T00:00:00",
     "mint": "2024-07-01T00:00:20", **v2(1000)},
    {"src": 0, "dst": 6, "amount": 300, "burn": "2024-07-01T00:00:00",
     "mint": "2024-07-01T00:20:00", **v2(2000)},
    {"src": 6, "dst": 5, "amount": 50, "burn": "2024-07-01T00:00:00",
     "mint": "2024-07-01T00:00:08", **v2(1000)},
    {"src": 0, "dst": 6, "amount": 7, "burn": "2024-07-01T01:00:00", **v2(2000)},
    {"src": 6, "dst": 5, "amount": 9, "burn": "2024-07-01T02:00:00", **v2(1000)},
]  # fmt: skip
AS_OF = "2024-07-02"


@pytest.fixture
def ledger() -> pd.DataFrame:
    return make_ledger(ROWS)


def _bars(ax: Axes) -> list[Rectangle]:
    return [p for p in ax.patches if isinstance(p, Rectangle)]


def test_every_plot_family_is_reexported_from_plots() -> None:
    import importlib

    assert plots.__all__ == sorted(plots.__all__)
    for family in ("addresses", "flows", "ledger", "volumes"):
        module = importlib.import_module(f"cctx_research.plots.{family}")
        for name in module.__all__:
            assert getattr(plots, name) is getattr(module, name)
            assert name in plots.__all__


def test_latency_bars(ledger) -> None:
    ax = plots.plot_latency(latency.by_route(ledger))
    assert isinstance(ax, Axes)
    bars = _bars(ax)
    assert len(bars) == 2
    # the first route is drawn at the top: ethereum->base (median of 20 s and 1200 s)
    widths = sorted(b.get_width() for b in bars)
    assert widths == [8.0, 610.0]
    assert ax.get_xscale() == "log"
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["Base → Solana", "Ethereum → Base"]
    assert "2024-07-01" in ax.get_title()


def test_latency_by_finality_with_reference(ledger) -> None:
    ax = plots.plot_latency(ledger, by="finality", reference={"ethereum->base": 1064}, log=False)
    assert len(_bars(ax)) == 3
    assert ax.get_xscale() == "linear"
    # the published median is marked on the standard bar only
    (marker,) = ax.collections[-1:]
    assert marker.get_offsets().shape == (1, 2)
    assert marker.get_offsets()[0][0] == 1064
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["fast", "standard", "published median"]


def test_a_reference_in_any_chain_spelling_marks_its_route(ledger) -> None:
    ax = plots.plot_latency(ledger, reference={"eth->Base": 1064}, log=False)
    (marker,) = ax.collections[-1:]
    assert marker.get_offsets()[0][0] == 1064
    assert "published median" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_a_reference_to_no_route_shown_draws_no_marker_and_no_error(ledger) -> None:
    ax = plots.plot_latency(ledger, reference={"avalanche->polygon": 60}, log=False)
    assert not any(c.get_label() == "published median" for c in ax.collections)
    with pytest.raises(ValueError, match=r"reference key 'nowhere->base'.*unknown chain"):
        plots.plot_latency(ledger, reference={"nowhere->base": 60})


def test_latency_lines(ledger) -> None:
    series = latency.timeseries(ledger, freq="1h")
    ax = plots.plot_latency(series, top=1)
    assert len(ax.get_lines()) == 1
    assert "Median" in ax.get_title()


def test_stuck(ledger) -> None:
    late = pending.stuck(ledger, as_of=AS_OF, factor=3)
    assert len(late) == 2
    ax = plots.plot_stuck(late)
    # one collection per source chain, one point per stuck transfer
    points = sum(len(c.get_offsets()) for c in ax.collections)
    assert len(ax.collections) == 2
    assert points == 2
    assert "Stuck transfers: 2 as of 2024-07-02 00:00 UTC" in ax.get_title()
    ages = np.concatenate([c.get_offsets()[:, 0] for c in ax.collections])
    assert sorted(ages) == [22.0, 23.0]
    assert ax.get_yscale() == "log"


def test_stuck_from_a_ledger_on_given_axes(ledger) -> None:
    _, given = plt.subplots()
    ax = plots.plot_stuck(ledger, ax=given, factor=1000)
    assert ax is given
    assert len(ax.collections) == 0
    assert any(t.get_text() == "no data" for t in ax.texts)


def test_fast_share(ledger) -> None:
    ax = plots.plot_fast_share(v2_analysis.fast_share(ledger), value="volume")
    bars = _bars(ax)
    assert len(bars) == 4  # fast and standard, two routes
    # ethereum->base (top): 100 of 407 USDC fast; base->solana all fast
    fast = sorted(round(b.get_width(), 4) for b in bars if b.get_x() == 0)
    assert fast == [round(100 / 407, 4), 1.0]
    assert "share of V2 volume" in ax.get_title()


def test_empty_draws_no_data() -> None:
    empty = schema.empty("ledger")
    for plot in (plots.plot_latency, plots.plot_stuck, plots.plot_fast_share):
        ax = plot(empty)
        assert any(t.get_text() == "no data" for t in ax.texts), plot.__name__


def test_bad_input(ledger) -> None:
    with pytest.raises(TypeError, match="plot_latency expects"):
        plots.plot_latency(42)
    with pytest.raises(ValueError, match="plot_stuck expects"):
        plots.plot_stuck(pd.DataFrame({"x": [1]}))
    with pytest.raises(ValueError, match="value"):
        plots.plot_fast_share(ledger, value="fees")
    with pytest.raises(TypeError, match="reference"):
        plots.plot_latency(ledger, reference=[1064])
    with pytest.raises(ValueError, match="reference keys"):
        plots.plot_latency(ledger, reference={"ethereum": 1064})
    transfers = schema.empty("transfers")
    for plot in (plots.plot_latency, plots.plot_stuck, plots.plot_fast_share):
        with pytest.raises(DataError, match="burn time"):
            plot(transfers)


def test_a_new_figure_grows_with_the_routes() -> None:
    import cctx_research as cctx

    ledger = cctx.load_sample(as_of="2026-11-01", days=1)
    share = v2_analysis.fast_share(ledger)
    assert len(share) > 20
    ax = plots.plot_fast_share(share)
    assert len(_bars(ax)) == 2 * len(share)
    assert ax.figure.get_size_inches()[1] == pytest.approx(0.3 * len(share) + 1.5)


def test_in_flight_from_a_ledger_draws_pending_apart_from_never_minted() -> None:
    from cctx_research.service.sample import generate

    ledger = generate("2024-07-01", days=3)
    series = pending.timeseries(ledger, freq="2h", as_of="2024-07-01")
    ax = plots.plot_in_flight(series)
    pending_line, never_line = ax.get_lines()
    assert pending_line.get_label().startswith("pending: younger than 3x")
    assert never_line.get_label() == "never minted: older than that"
    assert list(pending_line.get_ydata()) == series["pending"].tolist()
    assert list(never_line.get_ydata()) == series["never_minted"].tolist()
    assert ax.get_ylabel() == "Burned, not yet minted (USDC)"
    # the two lines add up to all in flight; the pile-up is on the never-minted one
    total = series["pending_raw"] + series["never_minted_raw"]
    assert total.tolist() == series["in_flight_raw"].tolist()
    assert (series["never_minted"].diff().dropna() >= 0).all()  # nothing in it is minted later
    assert series["never_minted"].iloc[-1] > series["never_minted"].iloc[len(series) // 2] > 0
    # a ledger is drawn the same way (its default as_of and hourly moments)
    from_ledger = plots.plot_in_flight(ledger)
    assert len(from_ledger.get_lines()) == 2
    assert any("never minted" in t.get_text() for t in from_ledger.get_legend().get_texts())


def _drawn_legends(ax: Axes) -> list:
    """``(legend box, axes box)`` in display pixels, after the figure is laid out and drawn."""
    ax.figure.canvas.draw()
    legend = ax.get_legend()
    assert legend is not None, ax.get_title()
    return [legend.get_window_extent(), ax.get_window_extent()]


LEGENDS = {
    "volume by chain": lambda led, t: plots.plot_volume(volumes.timeseries(t, by="source_chain")),
    "net flows over time": lambda led, t: plots.plot_net_flows(flows.net(t, freq="1D")),
    "lorenz": lambda led, t: plots.plot_lorenz(t),
    "latency bars": lambda led, t: plots.plot_latency(
        led, by="finality", reference={"ethereum->base": 1064}
    ),
    "latency lines": lambda led, t: plots.plot_latency(latency.timeseries(led, freq="6h")),
    "stuck": lambda led, t: plots.plot_stuck(led),
    "fast share": lambda led, t: plots.plot_fast_share(led),
    "in flight": lambda led, t: plots.plot_in_flight(led),
}


@pytest.fixture(scope="module")
def frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    """A sample ledger with V1 and V2, fast and standard, stuck transfers; random mints."""
    from analysis.frames import random_transfers

    from cctx_research.service.sample import generate

    return generate("2024-07-01", days=2), random_transfers(500)


@pytest.mark.parametrize("name", list(LEGENDS))
def test_legends_sit_beside_the_axes_never_over_the_data(name: str, frames) -> None:
    ax = LEGENDS[name](*frames)
    legend, axes = _drawn_legends(ax)
    # no overlap with the data area: the legend starts right of the axes' right edge
    assert legend.x0 >= axes.x1, (name, legend, axes)
    assert not legend.overlaps(axes), name
    # and inside the figure: not cut off when saved
    figure = ax.figure.bbox
    assert legend.x1 <= figure.x1, name
    assert legend.y0 >= figure.y0, name
