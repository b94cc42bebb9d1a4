"""The analysis functions give the same numbers on Polars, DuckDB and Dask as on pandas."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from cctx_research.analysis import addresses, engines, flows, volumes
from cctx_research.analysis.results import result_info
from cctx_research.errors import DataError

pl = pytest.importorskip("polars", reason="the engines extra is not installed")
duckdb = pytest.importorskip("duckdb", reason="the engines extra is not installed")
dd = pytest.importorskip("dask.dataframe", reason="the engines extra is not installed")

ENGINES = ["polars", "polars-lazy", "duckdb", "dask"]


def as_engine(frame: pd.DataFrame, engine: str, con=None):
    if engine == "polars":
        return pl.from_pandas(frame)
    if engine == "polars-lazy":
        return pl.from_pandas(frame).lazy()
    if engine == "duckdb":
        return con.from_df(frame)
    return dd.from_pandas(frame, npartitions=3)


@pytest.fixture(scope="module")
def con():
    connection = duckdb.connect()
    yield connection
    connection.close()


def assert_same_frame(got: pd.DataFrame, want: pd.DataFrame) -> None:
    assert list(got.columns) == list(want.columns)
    assert len(got) == len(want)
    for col in want.columns:
        a, b = got[col], want[col]
        if pd.api.types.is_float_dtype(b):
            np.testing.assert_allclose(a.to_numpy(float), b.to_numpy(float), rtol=1e-9)
        else:
            assert a.astype(str).tolist() == b.astype(str).tolist(), col
    assert result_info(got).span == result_info(want).span


_SINCE_MAY = (pd.Timestamp("2024-05-01", tz="UTC"), pd.Timestamp("2024-08-15", tz="UTC"))
CASES = {
    "flows.matrix": lambda t: flows.matrix(t),
    "flows.matrix count": lambda t: flows.matrix(t, values="count"),
    "flows.net": lambda t: flows.net(t),
    "flows.net daily": lambda t: flows.net(t, freq="1D"),
    "flows.corridors": lambda t: flows.corridors(t, n=None),
    "volumes.timeseries": lambda t: volumes.timeseries(t, freq="1D"),
    "volumes.timeseries corridor": lambda t: volumes.timeseries(t, freq="6h", by="corridor"),
    "volumes.timeseries source": lambda t: volumes.timeseries(t, freq="7D", by="source_chain"),
    "volumes.seasonality": lambda t: volumes.seasonality(t),
    "volumes.kpis": lambda t: volumes.kpis(t).reset_index(),
    # the periods end 75 days after the data's first day: an engine collects only the last
    # 60 days' rows (half the 30 days of data), the span is still all of it
    "volumes.kpis, a later now": lambda t: volumes.kpis(
        t, now="2024-08-15", coverage=_SINCE_MAY
    ).reset_index(),
    "addresses.top": lambda t: addresses.top(t, role="sender", n=15),
    "addresses.top count": lambda t: addresses.top(t, by="count", n=None),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", list(CASES))
def test_frames_equal_pandas(rand, engine, case, con):
    want = CASES[case](rand)
    got = CASES[case](as_engine(rand, engine, con))
    if case == "flows.matrix" or case == "flows.matrix count":
        pd.testing.assert_frame_equal(got, want, check_exact=False, rtol=1e-9)
    else:
        assert_same_frame(got, want)


@pytest.mark.parametrize("engine", ENGINES)
def test_graphs_sizes_and_profiles_equal_pandas(rand, engine, con):
    native = as_engine(rand, engine, con)
    g_want, g_got = flows.graph(rand), flows.graph(native)
    assert nx.utils.graphs_equal(g_got, g_want) or (
        sorted(g_got.edges) == sorted(g_want.edges)
        and all(
            g_got.edges[e]["count"] == g_want.edges[e]["count"]
            and g_got.edges[e]["volume"] == pytest.approx(g_want.edges[e]["volume"])
            and g_got.edges[e]["median"] == pytest.approx(g_want.edges[e]["median"])
            for e in g_want.edges
        )
    )
    assert result_info(g_got).span == result_info(g_want).span
    c_want = addresses.counterparty_graph(rand, min_volume=1)
    c_got = addresses.counterparty_graph(native, min_volume=1)
    assert sorted(c_got.edges) == sorted(c_want.edges)
    sizes_want, sizes_got = volumes.size_buckets(rand), volumes.size_buckets(native)
    assert_same_frame(sizes_got.classes, sizes_want.classes)
    pd.testing.assert_series_equal(sizes_got.quantiles, sizes_want.quantiles)
    who = rand["mint_recipient"].iloc[0]
    p_want, p_got = addresses.profile(who, rand), addresses.profile(who, native)
    assert (p_got.transfers, p_got.volume_raw) == (p_want.transfers, p_want.volume_raw)
    assert p_got.first_seen == p_want.first_seen


@pytest.mark.parametrize("engine", ENGINES)
def test_missing_columns_are_named(rand, engine, con):
    native = as_engine(rand.drop(columns=["amount", "source_chain"]), engine, con)
    with pytest.raises(DataError, match="missing columns: amount, source_chain"):
        flows.matrix(native)


def test_calendar_frequency_is_refused_lazily_with_the_fix(rand):
    with pytest.raises(ValueError, match="fixed one such as '1h'"):
        volumes.timeseries(pl.from_pandas(rand).lazy(), freq="MS")


def test_unknown_objects_still_get_the_pandas_message():
    with pytest.raises(TypeError, match="expected a pandas DataFrame"):
        flows.matrix([1, 2, 3])
    assert not engines.recognised({"a": [1]})


@pytest.fixture(scope="module")
def sample_ledger():
    from cctx_research import load_sample

    return load_sample(as_of="2026-11-20", days=2)


@pytest.mark.parametrize("engine", ENGINES)
def test_ledger_analyses_equal_pandas(sample_ledger, engine, con):
    from cctx_research.analysis import latency, pending, v2

    native = as_engine(sample_ledger, engine, con)
    as_of = "2026-11-19 12:00"
    for fn in (
        lambda t: latency.by_route(t),
        lambda t: latency.by_route(t, by="finality"),
        lambda t: pending.stuck(t, as_of=as_of),
        lambda t: pending.in_flight(t, as_of=as_of),
    ):
        assert_same_frame(fn(native), fn(sample_ledger))
    for fn in (v2.fast_share, v2.fees, v2.fee_caps, v2.hooks, latency.timeseries):
        assert_same_frame(fn(native), fn(sample_ledger))


def test_ledger_analyses_say_a_transfers_frame_has_no_burn_times(rand):
    from cctx_research.analysis import latency

    with pytest.raises(DataError, match="needs the burn time"):
        latency.by_route(pl.from_pandas(rand).lazy())
