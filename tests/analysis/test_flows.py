from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from cctx_research import schema
from cctx_research.analysis import flows
from cctx_research.analysis.results import result_info
from cctx_research.errors import DataError

# Expected numbers below are worked out by hand from frames.SMALL_ROWS.
TOTAL = 100 + 300 + 50 + 25 + 0.5 + 150_000


# ------------------------------------------------------------------ graph


def test_graph_edges_hold_corridor_totals(small):
    g = flows.graph(small)
    assert set(g.edges) == {
        ("ethereum", "base"),
        ("base", "ethereum"),
        ("arbitrum", "base"),
        ("ethereum", "arbitrum"),
        ("domain-42", "ethereum"),
    }
    e = g.edges["ethereum", "base"]
    assert e["volume"] == 400.0
    assert e["count"] == 2
    assert e["mean"] == 200.0
    assert e["median"] == 200.0
    assert e["share"] == pytest.approx(400 / TOTAL)
    assert e["weight"] == 400.0
    assert sum(d["share"] for *_, d in g.edges(data=True)) == pytest.approx(1.0)


def test_graph_nodes_hold_inflow_outflow_and_net(small):
    g = flows.graph(small)
    eth = g.nodes["ethereum"]
    assert eth["domain"] == 0
    assert eth["inflow"] == 150_050.0
    assert eth["outflow"] == 400.5
    assert eth["net"] == pytest.approx(149_649.5)
    assert (eth["count_in"], eth["count_out"]) == (2, 3)
    base = g.nodes["base"]
    assert (base["inflow"], base["outflow"], base["net"]) == (425.0, 50.0, 375.0)
    assert g.graph["total_volume"] == pytest.approx(TOTAL)
    assert g.graph["total_count"] == 6
    assert result_info(g).span == (
        pd.Timestamp("2024-06-01T00:30:00Z"),
        pd.Timestamp("2024-06-03T23:59:59Z"),
    )


def test_graph_carries_unknown_chain(small):
    g = flows.graph(small)
    assert g.nodes["domain-42"]["domain"] == 42
    assert g.nodes["domain-42"]["outflow"] == 150_000.0
    assert g.edges["domain-42", "ethereum"]["count"] == 1


def test_graph_weight_count(small):
    g = flows.graph(small, weight="count")
    assert g.edges["ethereum", "base"]["weight"] == 2
    assert g.graph["weight"] == "count"


def test_graph_matches_pandas_on_random(rand):
    g = flows.graph(rand)
    expected = rand.groupby(["source_chain", "destination_chain"], observed=True)["amount"].agg(
        ["sum", "count", "median"]
    )
    assert g.number_of_edges() == len(expected)
    for (s, d), row in expected.iterrows():
        edge = g.edges[str(s), str(d)]
        assert edge["volume"] == pytest.approx(row["sum"])
        assert edge["count"] == row["count"]
        assert edge["median"] == pytest.approx(row["median"])
    inflow = rand.groupby("destination_chain", observed=True)["amount"].sum()
    for chain, value in inflow.items():
        assert g.nodes[str(chain)]["inflow"] == pytest.approx(value)


def test_graph_empty(empty):
    g = flows.graph(empty)
    assert isinstance(g, nx.DiGraph)
    assert g.number_of_nodes() == 0
    assert g.graph["total_volume"] == 0.0
    assert result_info(g).span == (None, None)


@pytest.mark.parametrize("bad", ["weight", "amount", None])
def test_graph_bad_weight(small, bad):
    with pytest.raises((ValueError, TypeError), match="weight"):
        flows.graph(small, weight=bad)


@pytest.mark.parametrize("func", [flows.graph, flows.matrix, flows.net, flows.corridors])
def test_missing_column_is_named(small, func):
    with pytest.raises(DataError, match="amount"):
        func(small.drop(columns="amount"))


@pytest.mark.parametrize("func", [flows.graph, flows.matrix, flows.net, flows.corridors])
def test_not_a_frame(func):
    with pytest.raises(TypeError, match="DataFrame"):
        func([1, 2, 3])


# ----------------------------------------------------------------- matrix


def test_matrix_volume(small):
    m = flows.matrix(small)
    order = ["ethereum", "arbitrum", "base", "domain-42"]
    assert list(m.index) == order
    assert list(m.columns) == order
    assert m.index.name == "source_chain"
    assert m.columns.name == "destination_chain"
    expected = pd.DataFrame(
        [
            [0.0, 0.5, 400.0, 0.0],
            [0.0, 0.0, 25.0, 0.0],
            [50.0, 0.0, 0.0, 0.0],
            [150_000.0, 0.0, 0.0, 0.0],
        ],
        index=m.index,
        columns=m.columns,
    )
    pd.testing.assert_frame_equal(m, expected)


def test_matrix_count(small):
    m = flows.matrix(small, values="count")
    assert m.dtypes.unique().tolist() == [np.dtype("int64")]
    assert m.loc["ethereum", "base"] == 2
    assert m.to_numpy().sum() == 6


def test_matrix_matches_pandas_on_random(rand):
    m = flows.matrix(rand)
    expected = (
        rand.assign(s=rand["source_chain"].astype(str), d=rand["destination_chain"].astype(str))
        .pivot_table(index="s", columns="d", values="amount", aggfunc="sum", fill_value=0.0)
        .reindex(index=m.index, columns=m.columns, fill_value=0.0)
    )
    np.testing.assert_allclose(m.to_numpy(), expected.to_numpy())
    assert "domain-42" in m.index


def test_matrix_empty(empty):
    m = flows.matrix(empty)
    assert m.shape == (0, 0)


def test_matrix_bad_values(small):
    with pytest.raises(ValueError, match="'volume', 'count'"):
        flows.matrix(small, values="sum")


# -------------------------------------------------------------------- net


def test_net_totals(small):
    n = flows.net(small).set_index("chain")
    assert list(n.index) == ["ethereum", "base", "arbitrum", "domain-42"]  # by net, descending
    assert n.loc["base", "inflow"] == 425.0
    assert n.loc["base", "outflow"] == 50.0
    assert n.loc["base", "net"] == 375.0
    assert n.loc["domain-42", "net"] == -150_000.0
    assert n.loc["arbitrum", "count_in"] == 1
    assert n["net"].sum() == pytest.approx(0.0)


def test_net_per_day_has_every_bucket_and_cumulative(small):
    n = flows.net(small, freq="1D")
    assert len(n) == 3 * 4  # 3 days x 4 chains
    base = n[n["chain"] == "base"].set_index("timestamp")
    days = pd.date_range("2024-06-01", periods=3, freq="1D", tz="UTC")
    assert list(base.index) == list(days)
    assert base["net"].tolist() == [400.0, -50.0, 25.0]
    assert base["cumulative_net"].tolist() == [400.0, 350.0, 375.0]
    arb = n[n["chain"] == "arbitrum"]
    assert arb["net"].tolist() == [0.0, 0.0, -24.5]


def test_net_empty_is_typed(empty):
    n = flows.net(empty)
    assert n.empty
    assert list(n.columns) == ["chain", "inflow", "outflow", "net", "count_in", "count_out"]
    assert n["inflow"].dtype == np.dtype("float64")
    t = flows.net(empty, freq="1D")
    assert t.empty
    assert isinstance(t["timestamp"].dtype, pd.DatetimeTZDtype)
    assert "cumulative_net" in t.columns


@pytest.mark.parametrize(("freq", "exc"), [("bogus", ValueError), (5, TypeError)])
def test_net_bad_freq(small, freq, exc):
    with pytest.raises(exc, match="freq"):
        flows.net(small, freq=freq)


# -------------------------------------------------------------- corridors


def test_corridors_ranked_with_shares(small):
    c = flows.corridors(small, n=2)
    assert c["corridor"].tolist() == ["domain-42->ethereum", "ethereum->base"]
    assert c["rank"].tolist() == [1, 2]
    assert c["volume"].tolist() == [150_000.0, 400.0]
    assert c["count_share"].tolist() == [pytest.approx(1 / 6), pytest.approx(2 / 6)]
    assert c["volume_share"].iloc[1] == pytest.approx(400 / TOTAL)
    assert str(c["source_chain"].iloc[0]) == "domain-42"


def test_corridors_all_shares_sum_to_one(rand):
    c = flows.corridors(rand, n=None)
    assert c["volume_share"].sum() == pytest.approx(1.0)
    assert c["count"].sum() == len(rand)
    assert c["volume"].is_monotonic_decreasing


@pytest.mark.parametrize(("n", "exc"), [(0, ValueError), (-1, ValueError), ("3", TypeError)])
def test_corridors_bad_n(small, n, exc):
    with pytest.raises(exc, match="n must"):
        flows.corridors(small, n=n)


def test_corridors_empty(empty):
    c = flows.corridors(empty)
    assert c.empty
    assert c["volume"].dtype == np.dtype("float64")
    assert c["rank"].dtype == np.dtype("int64")


# ------------------------------------------------------------- centrality


def test_centrality_pagerank_on_known_graph():
    # a -> b -> c, c dangles: the rank flows downstream.
    g = nx.DiGraph()
    g.add_edge("a", "b", volume=1.0)
    g.add_edge("b", "c", volume=1.0)
    c = flows.centrality(g).set_index("chain")
    assert c["pagerank"].sum() == pytest.approx(1.0)
    assert c.loc["c", "pagerank"] > c.loc["b", "pagerank"] > c.loc["a", "pagerank"]
    # the values networkx's reference (pure Python) PageRank gives for this graph
    assert c.loc["a", "pagerank"] == pytest.approx(0.1844168, rel=1e-5)
    assert c.loc["b", "pagerank"] == pytest.approx(0.3411716, rel=1e-5)
    assert c.loc["c", "pagerank"] == pytest.approx(0.4744116, rel=1e-5)


def test_centrality_volume_weighting_matters():
    g = nx.DiGraph()
    g.add_edge("hub", "x", volume=99.0)
    g.add_edge("hub", "y", volume=1.0)
    c = flows.centrality(g).set_index("chain")
    assert c.loc["x", "pagerank"] > c.loc["y", "pagerank"]
    assert c.loc["hub", "out_strength"] == 100.0
    assert c.loc["x", "in_strength"] == 99.0
    assert c.loc["hub", "out_degree"] == 2


def test_centrality_matches_networkx_reference(rand):
    from networkx.algorithms.link_analysis.pagerank_alg import _pagerank_python

    g = flows.graph(rand)
    expected = _pagerank_python(g, weight="volume", tol=1e-12)
    got = flows.centrality(g).set_index("chain")["pagerank"]
    for chain, value in expected.items():
        assert got[chain] == pytest.approx(value, rel=1e-6)


def test_centrality_of_flow_graph(small):
    c = flows.centrality(flows.graph(small)).set_index("chain")
    assert c.loc["ethereum", "in_strength"] == 150_050.0
    assert c.loc["ethereum", "out_strength"] == 400.5
    assert c.loc["domain-42", "in_degree"] == 0
    assert c["pagerank"].sum() == pytest.approx(1.0)


def test_centrality_empty_and_bad_input(empty):
    c = flows.centrality(flows.graph(empty))
    assert c.empty
    assert list(c.columns) == [
        "chain",
        "pagerank",
        "in_strength",
        "out_strength",
        "in_degree",
        "out_degree",
    ]
    with pytest.raises(TypeError, match="DiGraph"):
        flows.centrality(schema.empty("transfers"))


def test_a_ledger_where_transfers_are_needed_names_transfers_from_ledger() -> None:
    from cctx_research.errors import DataError
    from cctx_research.service.sample import generate

    with pytest.raises(DataError, match="'ledger' frame") as info:
        flows.matrix(generate("2024-07-01", days=1))
    assert "transfers_from_ledger" in str(info.value)
