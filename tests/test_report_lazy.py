"""A report on a ledger left in its engine equals the report on the same ledger in pandas.

``report.build(ledger=...)`` over a DuckDB relation (what ``report --data`` hands it
for a ledger dataset or a ledger Parquet file) scopes, counts and aggregates in the
engine; the page it draws must say what the pandas report says, figure for figure and
table for table (the time the page was made aside). The pieces the report asks of the
engine (volume per bucket, links per route) are held equal to pandas on their own,
on each engine, where a difference is easier to read than in a page.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cctx_research import provenance, report
from cctx_research.analysis import linking
from cctx_research.analysis.history import volume_history
from cctx_research.cli import main
from cctx_research.ingest import datasets
from cctx_research.report.engine_ledger import EngineLedger
from cctx_research.service.sample import generate
from cctx_research.views.markup import when

duckdb = pytest.importorskip("duckdb", reason="the engines extra is not installed")
pl = pytest.importorskip("polars", reason="the engines extra is not installed")

SAMPLE_AS_OF = "2024-07-01T12:00:00Z"


@pytest.fixture(scope="module")
def ledger() -> pd.DataFrame:
    return generate(SAMPLE_AS_OF, days=2)


@pytest.fixture(scope="module")
def parquet(ledger, tmp_path_factory):
    path = tmp_path_factory.mktemp("lazy") / "ledger.parquet"
    ledger.to_parquet(path)
    return path


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    """The module's figure cache: a picture drawn once for the same data and options.

    Its key holds a fingerprint of every value handed to the draw function, so an engine
    whose section hands over other data (a dtype, a row, an order) still draws, and differs.
    It is ``figures/`` of a cache directory, where ``cctx-research report`` keeps its own.
    """
    return tmp_path_factory.mktemp("cache") / "figures"


def _lazy(engine: str, path) -> object:
    return duckdb.read_parquet(str(path)) if engine == "duckdb" else pl.scan_parquet(path)


def _page(built: report.Report) -> str:
    """The page without the moment it was made (the only thing two builds may differ in)."""
    return built.to_html().replace(when(built.generated_at), "(made at)")


def test_the_report_on_a_duckdb_ledger_equals_the_pandas_report(ledger, parquet, figures):
    on_pandas = report.build(ledger=ledger, figure_cache=figures)
    lazy = EngineLedger(duckdb.read_parquet(str(parquet)), provenance.provenance(ledger))
    on_duckdb = report.build(ledger=lazy, figure_cache=figures)
    assert [s.id for s in on_duckdb.sections] == [s.id for s in on_pandas.sections]
    for mine, theirs in zip(on_duckdb.sections, on_pandas.sections, strict=True):
        if mine.id == "provenance":
            continue  # holds the time the page was made: compared below without it
        assert mine.to_html() == theirs.to_html(), f"section {mine.id!r} differs"
    assert _page(on_duckdb) == _page(on_pandas)
    assert on_duckdb.synthetic
    assert "synthetic" in on_duckdb.to_html().lower()


def test_a_chain_selection_is_kept_in_the_engine_as_in_pandas(ledger, parquet, figures):
    window = {"start": "2024-06-30", "end": "2024-07-01", "chains": ["base"],
              "figure_cache": figures}  # fmt: skip
    on_pandas = report.build(ledger=ledger, **window)
    lazy = EngineLedger(duckdb.read_parquet(str(parquet)), provenance.provenance(ledger))
    on_duckdb = report.build(ledger=lazy, **window)
    picked = ("kpis", "flows", "latency", "pending", "v2", "actors")
    for mine, theirs in zip(on_duckdb.sections, on_pandas.sections, strict=True):
        if mine.id in picked:
            assert mine.to_html() == theirs.to_html(), f"section {mine.id!r} differs"


@pytest.mark.parametrize("engine", ["duckdb", "polars"])
def test_volume_history_summed_in_the_engine_equals_pandas(ledger, parquet, engine):
    for freq, start, end in (("1h", "2024-06-29 07:30", "2024-06-30 02:00"),
                             ("1D", "2024-06-28", "2024-07-02")):  # fmt: skip
        mine = volume_history(_lazy(engine, parquet), start, end, freq=freq)
        theirs = volume_history(ledger, start, end, freq=freq)
        pd.testing.assert_frame_equal(mine, theirs)


@pytest.mark.parametrize("engine", ["duckdb", "polars"])
def test_links_counted_in_the_engine_equal_pandas(ledger, tmp_path, engine):
    kinds = np.array(["exact", "content", "content_ambiguous", "pending", "mint_only", None],
                     dtype=object)  # fmt: skip
    paired = ledger.assign(pairing=pd.array(kinds[np.arange(len(ledger)) % len(kinds)],
                                            dtype="string"))  # fmt: skip
    path = tmp_path / "paired.parquet"
    paired.to_parquet(path)
    for freq in (None, "1D", "1h"):
        mine = linking.quality(_lazy(engine, path), freq=freq)
        theirs = linking.quality(paired, freq=freq)
        pd.testing.assert_frame_equal(mine, theirs, check_dtype=False)
        assert int(mine["content_ambiguous"].sum()) > 0


def test_report_data_on_a_ledger_dataset_reads_no_pandas_ledger(ledger, tmp_path, monkeypatch,
                                                                figures):  # fmt: skip
    # the command must not load the ledger into pandas: `load` is not called at all
    datasets.write(ledger, tmp_path / "ledger")
    # the command's cache directory is the module's (not the user's): its figure cache
    # holds the pictures the module's builds on this ledger drew
    monkeypatch.setenv("CCTX_CACHE_DIR", str(figures.parent))

    def refused(*args, **kwargs):
        raise AssertionError("report --data read the ledger dataset into pandas")

    monkeypatch.setattr("cctx_research.ingest.load", refused)
    out = tmp_path / "report.html"
    code = main(["report", "--data", str(tmp_path / "ledger"), "--out", str(out),
                 "--no-progress"])  # fmt: skip
    assert code == 0
    page = out.read_text()
    assert "synthetic" in page.lower()  # the dataset's manifest says so
    assert "Latency" in page
    assert "Who moves the money" in page


def test_the_apps_actors_tab_on_a_ledger_file_keeps_it_in_duckdb(ledger, parquet, monkeypatch):
    from cctx_research.views.ledger_files import EngineLedger as Opened
    from cctx_research.webapp.panels import ledger_behind
    from cctx_research.widgets.actors import actors_panel

    monkeypatch.setenv("CCTX_LEDGER", str(parquet))
    opened = ledger_behind()  # what a page's kernel holds: no pandas copy of the ledger
    assert isinstance(opened, Opened)
    assert opened.synthetic
    on_pandas, on_duckdb = actors_panel(ledger), actors_panel(opened)
    for role in ("relayers", "depositors", "rebalancing"):
        on_pandas.role.value = on_duckdb.role.value = role
        assert on_duckdb.error is None
        assert on_duckdb.table.value == on_pandas.table.value, role
        assert on_duckdb.status.value == on_pandas.status.value, role
        assert "transfers" in on_duckdb.status.value  # drawn, not an empty panel
    on_pandas.chains.value = on_duckdb.chains.value = ("base",)
    assert on_duckdb.table.value == on_pandas.table.value
    assert on_duckdb.banner.value == on_pandas.banner.value
    # the app's window (the dashboard's days), filtered in the engine as in pandas
    first = ledger["burn_timestamp"].dropna().min().normalize() + pd.Timedelta(days=1)
    for panel in (on_pandas, on_duckdb):
        panel.set_window(first, first + pd.Timedelta(days=1))
    assert on_duckdb.error is None
    assert on_duckdb.table.value == on_pandas.table.value
    assert on_duckdb.status.value == on_pandas.status.value
    assert f"burned {first:%Y-%m-%d} (UTC)" in on_duckdb.status.value


def test_a_sync_directory_opens_as_its_ledger_and_other_files_are_left_to_load(
    ledger, parquet, tmp_path
):
    from cctx_research import storage
    from cctx_research.report.engine_ledger import count
    from cctx_research.views.ledger_files import open_ledger

    synced = tmp_path / "cctp"
    synced.mkdir()
    storage.write_manifest(synced, storage.Manifest(kind="sync"))
    (synced / "ledger.parquet").write_bytes(parquet.read_bytes())
    opened = open_ledger(synced)
    assert count(opened.frame) == len(ledger)
    assert opened.synthetic  # the file's own provenance, kept beside the relation
    transfers = tmp_path / "transfers.parquet"
    ledger[["transfer_id", "amount_raw"]].to_parquet(transfers)
    assert open_ledger(transfers) is None  # not a ledger: `load` reads it
    with pytest.raises(ValueError, match="engine must be one of"):
        open_ledger(parquet, engine="spark")


def _calls(as_of: str) -> dict[str, object]:
    """The analyses the latency, pending and V2 sections ask of a ledger, by name."""
    from cctx_research.analysis import latency, pending, v2

    return {
        "latency.by_route": lambda d: latency.by_route(d),
        "latency.by_route finality": lambda d: latency.by_route(d, by="finality"),
        "latency.by_route both": lambda d: latency.by_route(d, by=["cctp_version", "finality"]),
        "v2.fast_share": v2.fast_share,
        "v2.fees": lambda d: v2.fees(d, by="finality"),
        "v2.fee_caps": lambda d: v2.fee_caps(d, by="finality"),
        "v2.hooks": v2.hooks,
        "pending.in_flight": lambda d: pending.in_flight(d, as_of=as_of),
        "pending.in_flight total": lambda d: pending.in_flight(d, as_of=as_of, by=None),
        "pending.stuck": lambda d: pending.stuck(d, as_of=as_of),
        "pending.stuck 1.5x": lambda d: pending.stuck(d, as_of=as_of, factor=1.5),
        "pending.timeseries 1h": lambda d: pending.timeseries(d, freq="1h", as_of=as_of),
        "pending.timeseries 7h": lambda d: pending.timeseries(d, freq="7h", as_of=as_of),
    }


def _same(mine: pd.DataFrame, theirs: pd.DataFrame, what: str) -> None:
    # an engine may round a quantile's interpolation in the last bit (analysis.ledger_lazy)
    pd.testing.assert_frame_equal(mine, theirs, check_exact=False, rtol=1e-12, obj=what)
    assert mine.attrs == theirs.attrs, what


@pytest.mark.parametrize("engine", ["duckdb", "polars"])
def test_the_ledger_analyses_in_the_engine_equal_pandas(ledger, parquet, engine, monkeypatch):
    from cctx_research.analysis import _ledger

    def refused(*args, **kwargs):
        raise AssertionError("the analysis brought the ledger's rows into pandas")

    plain = ledger.copy()
    plain.attrs.clear()  # the lazy frame has no provenance: as_of is given
    sizes = {}
    for as_of in (SAMPLE_AS_OF, "2024-06-30T09:30:00Z", "2024-06-29T00:00:00Z"):
        for what, call in _calls(as_of).items():
            theirs = call(plain)
            with monkeypatch.context() as patched:
                patched.setattr(_ledger, "_collect", refused)
                mine = call(_lazy(engine, parquet))
            _same(mine, theirs, f"{what} at {as_of}")
            sizes[what, as_of] = len(mine)
    assert sizes["pending.stuck", SAMPLE_AS_OF] > 10  # compared on rows, not on empty tables
    assert sizes["pending.timeseries 1h", SAMPLE_AS_OF] > 24
    assert sizes["pending.stuck", "2024-06-29T00:00:00Z"] == 0  # before the first burn


def _ties(ledger: pd.DataFrame) -> pd.DataFrame:
    """The sample with every burn on one of three moments and every latency one of three:
    quantiles fall between equal values, stuck transfers are equally old."""
    out = ledger.copy()
    k = np.arange(len(out))
    burns = pd.to_datetime(["2024-06-29 10:00", "2024-06-30 10:00", "2024-06-30 11:00"], utc=True)
    out["burn_timestamp"] = burns[k % 3].astype(out["burn_timestamp"].dtype)
    minted = out["mint_timestamp"].notna()
    lag = pd.to_timedelta(np.array([8, 600, 1200])[(k // 3) % 3], unit="s")
    out.loc[minted, "mint_timestamp"] = (out["burn_timestamp"] + lag)[minted]
    return out


@pytest.mark.parametrize("case", ["no rows", "one V2 transfer", "ties", "nothing minted"])
def test_the_ledger_sections_in_duckdb_equal_pandas_on_edge_windows(ledger, tmp_path, case,
                                                                    figures):  # fmt: skip
    v2_rows = ledger.loc[(ledger["cctp_version"] == 2) & ledger["mint_timestamp"].notna()]
    frames = {
        "no rows": ledger,  # in the window below: burned the day before it
        "one V2 transfer": v2_rows.iloc[:1],
        "ties": _ties(ledger),
        "nothing minted": ledger.loc[ledger["mint_timestamp"].isna()],
    }
    frame = frames[case].reset_index(drop=True)
    frame.attrs = dict(ledger.attrs)
    path = tmp_path / "edge.parquet"
    frame.to_parquet(path)
    window = {"start": "2024-06-29", "end": "2024-07-01T12:00:00Z"}
    if case == "no rows":
        first = ledger["burn_timestamp"].min().floor("D")
        window = {"start": first - pd.Timedelta(days=1), "end": first}
    on_pandas = report.build(ledger=frame, figure_cache=figures, **window)
    lazy = EngineLedger(duckdb.read_parquet(str(path)), provenance.provenance(ledger))
    on_duckdb = report.build(ledger=lazy, figure_cache=figures, **window)
    shown = {s.id: s.to_html() for s in on_pandas.sections}
    for section in on_duckdb.sections:
        if section.id in ("latency", "pending", "v2"):
            assert section.to_html() == shown[section.id], f"{case}: section {section.id!r}"
    if case == "ties":
        assert "Never minted (the" in shown["pending"]  # the stuck table is drawn
        assert "<svg" in shown["latency"] or "<img" in shown["latency"]


def test_report_sections_over_duckdb_bring_back_no_rows_of_the_ledger(
    ledger, parquet, monkeypatch, figures
):
    # the latency, pending and V2 sections: no analysis collects the ledger's rows
    from cctx_research.analysis import _ledger

    def refused(*args, **kwargs):
        raise AssertionError("a section brought the ledger's rows into pandas")

    monkeypatch.setattr(_ledger, "_collect", refused)
    lazy = EngineLedger(duckdb.read_parquet(str(parquet)), provenance.provenance(ledger))
    built = report.build(ledger=lazy, figure_cache=figures)
    ids = {s.id: s.to_html() for s in built.sections}
    assert "Never minted (the" in ids["pending"]
    assert "Fees collected on fast transfers" in ids["v2"]
    assert "median" in ids["latency"]


def test_other_tokens_are_left_out_in_the_engine_as_in_pandas(ledger, tmp_path):
    from cctx_research.analysis import latency, pending
    from cctx_research.errors import OtherTokenWarning

    tokens = np.where(np.arange(len(ledger)) % 50 == 0, "EURC", "USDC")
    mixed = ledger.assign(token=pd.array(tokens, dtype="string"))
    mixed.attrs.clear()
    path = tmp_path / "mixed.parquet"
    mixed.to_parquet(path)
    for call in (latency.by_route, lambda d: pending.in_flight(d, as_of=SAMPLE_AS_OF)):
        with pytest.warns(OtherTokenWarning, match=r"left out 103 transfers of other tokens"):
            theirs = call(mixed)
        with pytest.warns(OtherTokenWarning, match=r"left out 103 transfers of other tokens"):
            mine = call(duckdb.read_parquet(str(path)))
        _same(mine, theirs, "USDC alone")
