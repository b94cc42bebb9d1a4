"""Rendered figures kept on disk (views/figures.py): found again only for the same figure.

A warm report draws nothing and embeds the same PNGs; a change of data, window, options,
code, library version or matplotlib settings draws again; a corrupt or foreign entry is
drawn again and replaced; what cannot be described is drawn, never kept.
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
import pytest
from sample_seed import seed

from cctx_research import report
from cctx_research.errors import CacheWarning
from cctx_research.report import registry
from cctx_research.views import figures, markup

START, END = "2024-06-28T12:00:00Z", "2024-07-01T12:00:00Z"


def draw_line(data: pd.DataFrame, *, ax: Any, color: str = "C0") -> Any:
    ax.plot(data["x"], data["y"], color=color)
    return ax


def _frame(y: tuple[int, ...] = (1, 3, 2)) -> pd.DataFrame:
    frame = pd.DataFrame({"x": [1, 2, 3], "y": list(y)})
    frame.attrs["span"] = (pd.Timestamp("2024-06-28", tz="UTC"),
                           pd.Timestamp("2024-07-01", tz="UTC"))  # fmt: skip
    return frame


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the functions render_png draws from now on."""
    names: list[str] = []
    real = markup.render_png

    def counting(draw: Any, data: Any, **options: Any) -> bytes:
        names.append(getattr(draw, "__name__", repr(draw)))
        return real(draw, data, **options)

    monkeypatch.setattr(markup, "render_png", counting)
    monkeypatch.setattr(registry, "render_png", counting)
    return names


# ---------------------------------------------------------------------- the report, warm


def test_a_warm_report_draws_nothing_and_embeds_the_same_pictures(
    sample_client: Any, tmp_path: Path, drawn: list[str]
) -> None:
    cold = report.build(sample_client, START, END, figure_cache=tmp_path)
    assert len(drawn) == len(cold.figures) >= 8
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert len(kept) == len(cold.figures)
    drawn.clear()
    warm = report.build(sample_client, START, END, figure_cache=tmp_path)
    assert drawn == []
    assert [(f.name, f.png) for f in warm.figures] == [(f.name, f.png) for f in cold.figures]
    assert warm.synthetic
    assert "Synthetic data" in warm.to_html()
    # another window: other data, other titles: drawn again, never the first window's
    other = report.build(sample_client, START, "2024-07-01T00:00:00Z", figure_cache=tmp_path)
    assert len(drawn) == len(other.figures)
    assert {f.png for f in other.figures}.isdisjoint({f.png for f in cold.figures})


def test_the_report_draws_every_figure_without_a_cache(
    sample_client: Any, drawn: list[str]
) -> None:
    built = report.build(sample_client, START, END)
    assert len(drawn) == len(built.figures)


def test_a_wrong_figure_cache_is_refused_before_any_work(sample_client: Any) -> None:
    with pytest.raises(TypeError, match="figure_cache must be True"):
        report.build(sample_client, START, END, figure_cache=3)


# ---------------------------------------------------------------------- what the key sees


def _key(**changes: Any) -> str | None:
    options: dict[str, Any] = {"draw": draw_line, "data": _frame(), "figsize": (9.0, 4.5)}
    options.update(changes)
    return figures.figure_key(options.pop("draw"), options.pop("data"), **options)


def test_the_key_changes_with_the_data_the_window_and_the_options() -> None:
    base = _key()
    assert base is not None
    assert base == _key()
    assert _key(data=_frame((1, 3, 4))) != base  # one value
    shifted = _frame()
    shifted.attrs["span"] = (pd.Timestamp("2024-06-29", tz="UTC"), shifted.attrs["span"][1])
    assert _key(data=shifted) != base  # the window the result covers
    assert _key(data=_frame().astype({"y": "float64"})) != base  # a dtype
    assert _key(data=_frame().rename(columns={"y": "z"})) is not None
    assert _key(data=_frame().set_index("x")) != base  # the index
    assert _key(figsize=(9.0, 5.0)) != base
    assert _key(dpi=120) != base
    assert _key(color="C1") != base


def test_the_key_changes_with_the_categories_of_a_chain_column() -> None:
    one = pd.DataFrame({"chain": pd.Categorical(["base", "solana"], categories=["base", "solana"])})
    two = one.copy()
    two["chain"] = pd.Categorical(["base", "solana"], categories=["solana", "base"])
    assert _key(data=one) != _key(data=two)


def _sums_in_two_orders() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Volumes (USDC, six decimals) summed forward and backward: the same up to last bits."""
    rng = np.random.default_rng(7)
    amounts = np.round(rng.lognormal(6, 3, size=(40, 300)), 6)
    forward = [float(sum(row)) for row in amounts]
    backward = [float(sum(row[::-1])) for row in amounts]
    lows = [float(np.quantile(row, 0.1)) for row in amounts]
    return (pd.DataFrame({"x": range(40), "y": forward, "p10": lows}),
            pd.DataFrame({"x": range(40), "y": backward, "p10": lows}))  # fmt: skip


def test_the_key_leaves_out_the_last_bits_two_engines_sum_differently() -> None:
    forward, backward = _sums_in_two_orders()
    assert not forward["y"].equals(backward["y"])  # the bits differ: the order of summation
    assert _key(data=forward) == _key(data=backward)
    assert figures.fingerprint({"total": 0.1 + 0.2}) == figures.fingerprint({"total": 0.3})
    # what a figure could show still counts: a millionth of a value, a value ten times
    nudged = forward.copy()
    nudged.loc[3, "y"] *= 1 + 1e-6
    assert _key(data=nudged) != _key(data=forward)
    assert _key(data=forward.assign(y=forward["y"] * 2)) != _key(data=forward)
    assert figures.fingerprint(650.63) != figures.fingerprint(650.64)
    with_na = forward.astype({"y": "Float64"})
    assert _key(data=with_na) == _key(data=backward.astype({"y": "Float64"}))
    with_na.loc[5, "y"] = pd.NA
    assert _key(data=with_na) != _key(data=backward.astype({"y": "Float64"}))


def test_the_key_changes_with_the_code_the_libraries_and_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = _key()
    source = "def draw(data, *, ax):\n    ax.plot(data['x'], data['y'])\n"
    module = tmp_path / "figure_cache_probe.py"
    module.write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    probe = importlib.import_module("figure_cache_probe")
    before = _key(draw=probe.draw)
    module.write_text(source.replace("ax.plot", "ax.scatter"))
    figures._source_digest.cache_clear()
    assert _key(draw=probe.draw) != before  # the plotting code changed
    figures._source_digest.cache_clear()
    with matplotlib.rc_context({"font.size": 17}):
        assert _key() != base  # a setting changed in the process (a style)
    assert _key() == base
    rc = tmp_path / "matplotlibrc"
    rc.write_text("font.size: 17\n")
    monkeypatch.setenv("MATPLOTLIBRC", str(rc))
    assert _key() != base  # a matplotlibrc, read before matplotlib is
    monkeypatch.delenv("MATPLOTLIBRC")
    real = figures.metadata.version
    monkeypatch.setattr(figures.metadata, "version",
                        lambda name: "0.0" if name == "matplotlib" else real(name))  # fmt: skip
    figures._versions.cache_clear()  # read once a process
    try:
        assert _key() != base
    finally:
        figures._versions.cache_clear()


def test_a_plot_named_and_the_plot_itself_share_one_key() -> None:
    from cctx_research import plots

    data = pd.DataFrame({"chain": ["base"], "net": [1.0]})
    assert figures.figure_key("plot_net_flows", data) == figures.figure_key(
        plots.plot_net_flows, data
    )
    assert figures.figure_key("plot_net_flows", data) != figures.figure_key("plot_volume", data)


def test_what_the_key_cannot_describe_is_drawn_and_not_kept(
    tmp_path: Path, drawn: list[str]
) -> None:
    cache = figures.FigureCache(tmp_path)
    mixed = _frame().assign(note=[1, "1", None])  # 1 and "1" hash alike in pandas
    assert figures.fingerprint(mixed) is None
    cache.png(lambda d, *, ax: ax.plot([1, 2]), _frame())
    cache.png(draw_line, mixed)
    assert len(drawn) == 2
    assert not list(tmp_path.iterdir())


# ---------------------------------------------------------------------- entries on disk


def test_a_corrupt_or_foreign_entry_is_drawn_again_and_replaced(
    tmp_path: Path, drawn: list[str]
) -> None:
    cache = figures.FigureCache(tmp_path)
    first = cache.png(draw_line, _frame())
    other = cache.png(draw_line, _frame((3, 2, 1)))
    assert len(drawn) == 2
    assert first != other
    entry = tmp_path / f"{_key(figsize=(9.0, 4.5))}.fig"
    good = entry.read_bytes()
    for bad in (good[:-40], good[:-1] + bytes([good[-1] ^ 1]), b"not an entry",
                (tmp_path / f"{_key(data=_frame((3, 2, 1)))}.fig").read_bytes()):  # fmt: skip
        entry.write_bytes(bad)
        drawn.clear()
        assert cache.png(draw_line, _frame()) == first
        assert drawn == ["draw_line"]
        assert entry.read_bytes() == good
    drawn.clear()
    assert cache.png(draw_line, _frame()) == first
    assert drawn == []


def test_the_directory_keeps_under_its_bound_dropping_the_figures_used_longest_ago(
    tmp_path: Path, drawn: list[str]
) -> None:
    datas = [_frame((1, 2, k)) for k in range(3, 7)]
    keys = [_key(data=d) for d in datas]
    probe = figures.FigureCache(tmp_path / "probe")
    for data in datas:
        probe.png(draw_line, data)
    sizes = [(tmp_path / "probe" / f"{key}.fig").stat().st_size for key in keys]
    # three entries and a half: the fourth passes it
    cache = figures.FigureCache(tmp_path / "figures", max_bytes=sum(sizes[:3]) + sizes[3] // 2)
    drawn.clear()
    for data in datas[:3]:
        cache.png(draw_line, data)
    cache.png(draw_line, datas[0])  # a hit: used now, so not the first to go
    assert drawn.count("draw_line") == 3
    cache.png(draw_line, datas[3])  # the fourth passes the bound: down to 3/4 of it
    kept = {p.stem for p in (tmp_path / "figures").iterdir()}
    assert kept == {keys[0], keys[3]}, "the two used longest ago are removed"
    assert sum(p.stat().st_size for p in (tmp_path / "figures").iterdir()) <= cache.max_bytes
    drawn.clear()
    cache.png(draw_line, datas[0])
    assert drawn == []
    cache.png(draw_line, datas[1])
    assert drawn == ["draw_line"]


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "256M"])
def test_a_bound_that_is_no_size_is_refused(tmp_path: Path, bad: object) -> None:
    with pytest.raises(ValueError, match="max_bytes must be a positive number of bytes"):
        figures.FigureCache(tmp_path, max_bytes=bad)  # type: ignore[arg-type]


def test_a_file_in_place_of_the_directory_warns_and_draws(tmp_path: Path) -> None:
    (tmp_path / "figures").write_text("a file")
    cache = figures.FigureCache(tmp_path / "figures")
    with pytest.warns(CacheWarning, match="cannot be written"):
        png = cache.png(draw_line, _frame())
    assert png.startswith(b"\x89PNG")


# ---------------------------------------------------------------------- the command


def test_the_command_keeps_figures_in_the_cache_directory_unless_told_not_to(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCTX_")}
    env["CCTX_CACHE_DIR"] = str(seed(tmp_path / "cache"))
    # the live sample mints pending transfers as the clock moves (burn to mint at most
    # about 72 minutes): a window ending 3 hours ago holds data no later run can change
    end = pd.Timestamp.now(tz="UTC").floor("h") - pd.Timedelta(hours=3)
    window = ["--start", (end - pd.Timedelta(hours=6)).isoformat(), "--end", end.isoformat()]
    probe = textwrap.dedent(
        """
        import logging, sys
        from cctx_research.cli import main
        drawn = logging.getLogger("cctx_research.views.figures")  # which figures were drawn
        drawn.setLevel(logging.DEBUG)
        drawn.addHandler(logging.StreamHandler(sys.stderr))
        assert main(sys.argv[1:]) == 0
        watched = ("matplotlib", "cctx_research.ingest")
        print(sorted(m for m in sys.modules if m.startswith(watched)))
        """
    )

    def run(*options: str) -> str:
        argv = ["--log-level", "WARNING", "report", "--no-progress", *window, *options]
        done = subprocess.run([sys.executable, "-c", probe, *argv], check=True, env=env,
                              capture_output=True, text=True)  # fmt: skip
        return done.stdout.splitlines()[-1] + "\n" + done.stderr

    figures_dir = tmp_path / "cache" / "figures"
    run("--no-figure-cache", "--out", str(tmp_path / "a.html"))
    assert not figures_dir.exists()
    cold = run("--out", str(tmp_path / "b.html"))
    assert len(list(figures_dir.glob("*.fig"))) >= 9
    assert "matplotlib.figure" in cold
    assert cold.count("figure cache: drew") >= 9, cold
    warm = run("--out", str(tmp_path / "c.html"))
    # every figure kept: matplotlib's drawing machinery is never imported
    assert "figure cache: drew" not in warm, warm
    assert "matplotlib.figure" not in warm, warm
    # fed by a client, the report never needs the readers of the formats
    assert "cctx_research.ingest" not in cold + warm, cold + warm
    pages = [(tmp_path / f"{name}.html").read_text() for name in "abc"]
    pictures = [re.findall(r"data:image/png;base64,([^\"]+)", page) for page in pages]
    assert len(pictures[0]) >= 9
    assert pictures[0] == pictures[1] == pictures[2]
