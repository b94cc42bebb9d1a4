from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from analysis.frames import addr
from cctx_research import schema
from cctx_research.analysis import addresses
from cctx_research.errors import DataError

TOTAL = 150_475.5


# -------------------------------------------------------------------- top


def test_top_recipients_by_volume(small):
    t = addresses.top(small)
    assert t["address"].tolist() == [addr(4), addr(2), addr(1), addr(3)]
    assert t["volume"].tolist() == [150_000.0, 300.0, 150.5, 25.0]
    assert t["volume_raw"].tolist() == [150_000 * 10**6, 300 * 10**6, 150_500_000, 25 * 10**6]
    assert t["transaction_count"].tolist() == [1, 1, 3, 1]
    assert t["rank"].tolist() == [1, 2, 3, 4]
    assert t["share"].iloc[0] == pytest.approx(150_000 / TOTAL)
    assert list(t.columns) == [*schema.columns("top_addresses"), "share"]


def test_top_recipients_by_count_breaks_ties_by_volume(small):
    t = addresses.top(small, by="count", n=3)
    assert t["address"].tolist() == [addr(1), addr(4), addr(2)]
    assert t["share"].tolist() == [pytest.approx(3 / 6), pytest.approx(1 / 6), pytest.approx(1 / 6)]


def test_top_senders(small):
    t = addresses.top(small, role="sender", n=2)
    assert t["address"].tolist() == [addr(13), addr(10)]
    assert t["volume"].tolist() == [150_000.0, 425.0]
    assert t["transaction_count"].tolist() == [1, 3]


def test_top_ties_at_the_cut_are_ordered_by_address(make):
    rows = [
        {"time": "2024-06-01", "src": "ethereum", "dst": "base", "amount": 10.0, "recipient": r}
        for r in (5, 3, 4, 2)
    ]
    t = addresses.top(make(rows), n=2)
    assert t["address"].tolist() == [addr(2), addr(3)]


def test_top_matches_pandas_on_random(rand):
    t = addresses.top(rand, n=None)
    expected = rand.groupby("mint_recipient")["amount"].sum().sort_values(ascending=False)
    assert len(t) == len(expected)
    got = t.set_index("address")["volume"]
    pd.testing.assert_series_equal(
        got.loc[expected.index.tolist()], expected, check_names=False, check_index=False
    )
    assert t["volume"].is_monotonic_decreasing
    assert t["share"].sum() == pytest.approx(1.0)
    head = addresses.top(rand, n=20)
    pd.testing.assert_frame_equal(head, t.head(20))


def test_top_empty_and_bad_options(empty, small):
    t = addresses.top(empty)
    assert t.empty
    assert t["volume_raw"].dtype == np.dtype("int64")
    with pytest.raises(ValueError, match="role"):
        addresses.top(small, role="minter")
    with pytest.raises(ValueError, match="by"):
        addresses.top(small, by="amount")
    with pytest.raises(TypeError, match="n must"):
        addresses.top(small, n=2.5)
    with pytest.raises(DataError, match="mint_recipient"):
        addresses.top(small.drop(columns="mint_recipient"))


# ---------------------------------------------------------- concentration


def test_concentration_equal_values():
    c = addresses.concentration([5.0] * 4)
    assert c.gini == 0.0
    assert c.hhi == pytest.approx(0.25)
    assert c.top1_share == pytest.approx(0.25)
    assert c.top10_share == 1.0


def test_concentration_one_holds_all():
    c = addresses.concentration([0, 0, 0, 1])
    assert c.gini == pytest.approx(0.75)  # the maximum for n = 4: 1 - 1/n
    assert c.hhi == 1.0
    assert c.top1_share == 1.0


def test_concentration_known_values_and_lorenz():
    c = addresses.concentration(pd.Series([4.0, 1.0, 3.0, 2.0]))
    assert c.n == 4
    assert c.total == 10.0
    assert c.gini == pytest.approx(0.25)
    assert c.hhi == pytest.approx(0.30)
    assert c.top1_share == pytest.approx(0.4)
    assert c.lorenz["population_share"].tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert c.lorenz["value_share"].tolist() == pytest.approx([0.0, 0.1, 0.3, 0.6, 1.0])
    assert c.as_dict()["gini"] == pytest.approx(0.25)
    assert "gini=0.25" in repr(c)
    assert "<table" in c._repr_html_()


def test_concentration_top100():
    c = addresses.concentration(np.ones(150))
    assert c.top100_share == pytest.approx(100 / 150)
    assert c.top10_share == pytest.approx(10 / 150)


def test_concentration_gini_matches_mean_absolute_difference(rand):
    values = rand.groupby("mint_recipient")["amount"].sum().to_numpy()
    c = addresses.concentration(values)
    diffs = np.abs(values[:, None] - values[None, :]).sum()
    assert c.gini == pytest.approx(diffs / (2 * len(values) ** 2 * values.mean()))


def test_concentration_empty_and_zero():
    for values in ([], [0.0, 0.0]):
        c = addresses.concentration(values)
        assert np.isnan(c.gini)
        assert np.isnan(c.hhi)
        assert c.lorenz["value_share"].eq(0).all()


@pytest.mark.parametrize(
    ("values", "exc", "match"),
    [
        ([1.0, -1.0], ValueError, "non-negative"),
        ([1.0, np.nan], ValueError, "NaN"),
        (["a", "b"], TypeError, "numbers"),
        ("abc", TypeError, "array-like"),
        (3.0, TypeError, "array-like"),
        ([[1.0, 2.0]], ValueError, "one-dimensional"),
    ],
)
def test_concentration_bad_values(values, exc, match):
    with pytest.raises(exc, match=match):
        addresses.concentration(values)


def test_concentration_keeps_span_of_top_output(small):
    c = addresses.concentration(addresses.top(small, n=None)["volume"])
    assert c.span[0] == pd.Timestamp("2024-06-01T00:30Z")


# ---------------------------------------------------------------- profile


def test_profile_from_transfers(small):
    p = addresses.profile(addr(1), small)
    assert p.address == addr(1)
    assert p.transfers == 3
    assert p.volume == 150.5
    assert p.volume_raw == 150_500_000
    assert p.median_amount == 50.0
    assert p.first_seen == pd.Timestamp("2024-06-01T00:30Z")
    assert p.last_seen == pd.Timestamp("2024-06-03T01:00Z")
    assert p.source_chains["chain"].astype(str).tolist() == ["ethereum", "base"]
    assert p.source_chains["volume"].tolist() == [100.5, 50.0]
    assert p.destination_chains["chain"].astype(str).tolist() == ["base", "ethereum", "arbitrum"]
    assert p.corridors["corridor"].tolist() == [
        "ethereum->base",
        "base->ethereum",
        "ethereum->arbitrum",
    ]
    assert p.counterparties["message_sender"].tolist() == [addr(10), addr(11), addr(12)]
    assert p.counterparties["volume"].tolist() == [100.0, 50.0, 0.5]
    assert p.activity["volume"].tolist() == [100.0, 50.0, 0.5]
    assert p.activity["count"].tolist() == [1, 1, 1]
    assert p.source == "transfers"


def test_profile_reprs(small):
    p = addresses.profile(addr(1), small)
    text = repr(p)
    assert text.startswith(f"AddressProfile({addr(1)})")
    assert "150.50 USDC" in text
    assert "2024-06-01 00:30:00 UTC" in text
    page = p._repr_html_()
    assert addr(1) in page
    assert "<table" in page
    assert "ethereum-&gt;base" in page or "ethereum->base" in page
    big = addresses.profile(addr(1), small.assign(amount=small["amount"] * 1e5))
    assert "e+0" not in big._repr_html_()  # 10,000,000.00, not 1.000000e+07
    assert "10,000,000.00" in big._repr_html_()


@pytest.mark.parametrize(
    "spelling",
    [
        addr(1).upper().replace("0X", "0x"),
        "0x" + "0" * 24 + addr(1)[2:],
        ("0x" + "0" * 24 + addr(1)[2:]).upper().replace("0X", "0x"),
        "  " + addr(1) + " ",
    ],
)
def test_profile_accepts_address_spellings(small, spelling):
    p = addresses.profile(spelling, small)
    assert p.address == addr(1)
    assert p.transfers == 3


@pytest.mark.parametrize("bad", ["0x123", "hello", "0x" + "g" * 40, "0x" + "1" * 50, ""])
def test_profile_malformed_address(small, bad):
    with pytest.raises(ValueError, match="40 hex digits"):
        addresses.profile(bad, small)


def test_profile_address_type(small):
    with pytest.raises(TypeError, match="address must be a str"):
        addresses.profile(0x1234, small)


def test_profile_window(small):
    p = addresses.profile(addr(1), small, start="2024-06-02", end="2024-06-03T01:00:00Z")
    assert p.transfers == 1  # the 01:00 transfer is outside the half-open window
    assert p.volume == 50.0
    with pytest.raises(ValueError, match="before end"):
        addresses.profile(addr(1), small, start="2024-06-03", end="2024-06-02")


def test_profile_unknown_address_is_empty(small):
    p = addresses.profile(addr(999), small)
    assert p.transfers == 0
    assert p.first_seen is None
    assert np.isnan(p.median_amount)
    assert p.activity.empty
    assert "transfers" in repr(p)


def test_profile_needs_exactly_one_source(small):
    with pytest.raises(ValueError, match="exactly one"):
        addresses.profile(addr(1))
    with pytest.raises(ValueError, match="exactly one"):
        addresses.profile(addr(1), small, client=object())


class FakeClient:
    """Stands in for Client: returns a fixed "received" frame and records calls."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        self.calls: list[tuple] = []

    def received(self, address, start=None, end=None):
        self.calls.append((address, start, end))
        return self.frame


def received_frame():
    stamps = pd.to_datetime(
        ["2024-06-01T10:00Z", "2024-06-01T09:59Z", "2024-06-02T10:00Z"], utc=True
    )
    return schema.validate(
        pd.DataFrame(
            {
                "transfer_id": pd.array(["a", "c", "b"], dtype=schema.STRING),
                "tx_hash": pd.array(["0x01", "0x02", "0x03"], dtype=schema.STRING),
                "transaction_type": pd.array(["mint", "burn", "mint"], dtype=schema.STRING),
                "timestamp": stamps.astype(schema.TIMESTAMP),
                "amount": [10.0, 10.0, 5.0],
                "amount_raw": np.array([10, 10, 5], dtype="int64") * 10**6,
                "source_chain": schema.chain_categorical(["ethereum", "ethereum", "domain-42"]),
                "destination_chain": schema.chain_categorical(["base", "base", "base"]),
                "address": pd.array([addr(1)] * 3, dtype=schema.STRING),
            }
        ),
        "received",
    )


def test_profile_from_client():
    client = FakeClient(received_frame())
    p = addresses.profile(
        "0x" + "0" * 24 + addr(1)[2:].upper(), client=client, start="2024-06-01", end="2024-06-03"
    )
    assert client.calls == [(addr(1), "2024-06-01", "2024-06-03")]
    assert p.source == "client"
    # "c" is still pending (listed by its burn): USDC on its way, counted too
    assert p.transfers == 3
    assert p.volume == 25.0
    assert p.counterparties.empty
    assert p.counterparties["volume"].dtype == np.dtype("float64")
    assert p.source_chains["chain"].astype(str).tolist() == ["ethereum", "domain-42"]
    assert "unknown" in repr(p)


def test_profile_client_frame_is_validated():
    with pytest.raises(DataError, match="address"):
        addresses.profile(addr(1), client=FakeClient(received_frame().drop(columns="address")))


# ----------------------------------------------------- counterparty graph


def test_counterparty_graph_by_hand(small):
    g = addresses.counterparty_graph(small)
    assert g.number_of_nodes() == 8
    assert g.number_of_edges() == 6
    assert g.edges[("sender", addr(10)), ("recipient", addr(2))]["volume"] == 300.0
    node = g.nodes[("sender", addr(10))]
    assert node == {
        "bipartite": 0,
        "role": "sender",
        "address": addr(10),
        "volume": 425.0,
        "count": 3,
    }
    assert g.nodes[("recipient", addr(1))]["bipartite"] == 1
    assert all(g.nodes[u]["bipartite"] == 0 and g.nodes[v]["bipartite"] == 1 for u, v in g.edges)


def test_counterparty_graph_min_volume(small):
    g = addresses.counterparty_graph(small, min_volume=50)
    assert g.number_of_edges() == 4
    assert ("sender", addr(12)) not in g
    assert ("recipient", addr(3)) not in g
    assert g.nodes[("sender", addr(10))]["volume"] == 400.0


def test_counterparty_graph_self_transfer_stays_bipartite(make):
    rows = [{"time": "2024-06-01", "src": 0, "dst": 6, "amount": 5.0, "sender": 7, "recipient": 7}]
    g = addresses.counterparty_graph(make(rows))
    assert set(g) == {("sender", addr(7)), ("recipient", addr(7))}
    assert nx.is_bipartite(g)


def test_counterparty_graph_bad_min_volume(small):
    with pytest.raises(ValueError, match="min_volume"):
        addresses.counterparty_graph(small, min_volume=-1)
    with pytest.raises(TypeError, match="min_volume"):
        addresses.counterparty_graph(small, min_volume="10")


def test_hubs_by_hand(small):
    h = addresses.hubs(addresses.counterparty_graph(small), n=4)
    assert h["address"].tolist() == [addr(10), addr(1), addr(4), addr(13)]
    assert h["role"].tolist() == ["sender", "recipient", "recipient", "sender"]
    assert h["counterparties"].tolist() == [3, 3, 1, 1]
    assert h["volume"].tolist() == [425.0, 150.5, 150_000.0, 150_000.0]
    assert h["count"].tolist() == [3, 3, 1, 1]
    assert h["mean_per_counterparty"].iloc[0] == pytest.approx(425 / 3)


def test_hubs_finds_router(make):
    # sender 100 routes for five users; the others send once to themselves
    rows = [
        {"time": "2024-06-01", "src": 0, "dst": 6, "amount": 1.0, "sender": 100, "recipient": r}
        for r in range(1, 6)
    ] + [
        {"time": "2024-06-01", "src": 0, "dst": 6, "amount": 500.0, "sender": r, "recipient": r}
        for r in range(6, 9)
    ]
    h = addresses.hubs(addresses.counterparty_graph(make(rows)), n=1)
    assert h[["address", "role", "counterparties", "volume"]].iloc[0].tolist() == [
        addr(100),
        "sender",
        5,
        5.0,
    ]


def test_hubs_match_pandas_on_random(rand):
    h = addresses.hubs(addresses.counterparty_graph(rand), n=None)
    per_sender = rand.groupby("message_sender")["mint_recipient"].nunique()
    per_recipient = rand.groupby("mint_recipient")["message_sender"].nunique()
    assert len(h) == len(per_sender) + len(per_recipient)
    senders = h[h["role"] == "sender"].set_index("address")["counterparties"]
    pd.testing.assert_series_equal(
        senders.sort_index(), per_sender.sort_index(), check_names=False, check_index_type=False
    )
    assert h["counterparties"].iloc[0] == max(per_sender.max(), per_recipient.max())
    assert h["counterparties"].is_monotonic_decreasing


def test_hubs_empty_and_bad(empty):
    h = addresses.hubs(addresses.counterparty_graph(empty))
    assert h.empty
    assert h["counterparties"].dtype == np.dtype("int64")
    with pytest.raises(TypeError, match="networkx graph"):
        addresses.hubs(empty)
    with pytest.raises(ValueError, match="n must"):
        addresses.hubs(nx.DiGraph(), n=0)


def test_one_address_in_both_forms_and_cases_is_one_address(make):
    short = "0x" + "ab" * 20
    padded = "0x" + "00" * 12 + "AB" * 20
    frame = make(
        [
            {"time": "2024-06-01T00:00Z", "src": "base", "dst": "arbitrum", "amount": 80.0,
             "sender": 1, "recipient": padded},
            {"time": "2024-06-01T01:00Z", "src": "base", "dst": "arbitrum", "amount": 10.0,
             "sender": 1, "recipient": short},
            {"time": "2024-06-01T02:00Z", "src": "base", "dst": "arbitrum", "amount": 5.0,
             "sender": 2, "recipient": short.upper().replace("0X", "0x")},
        ]
    )  # fmt: skip
    ranked = addresses.top(frame, role="recipient")
    assert ranked["address"].tolist() == [short]
    assert ranked["volume"].tolist() == [95.0]
    assert ranked["transaction_count"].tolist() == [3]
    g = addresses.counterparty_graph(frame)
    assert g.has_edge(("sender", addr(1)), ("recipient", short))
    assert g.edges[("sender", addr(1)), ("recipient", short)]["volume"] == 90.0
    assert sum(1 for n in g if n[0] == "recipient") == 1
    assert addresses.profile(short, frame).transfers == 3


# ------------------------------------------------------- Solana token accounts


def _solana_mints() -> pd.DataFrame:
    """Transfers of the real Arbitrum -> Solana mint (tests/fixtures/solana, README there):
    USDC minted to the token account f4c8..., owned by 74e7... (the reply's token balances),
    and a second mint of the same owner into another of its token accounts (filled in)."""
    from pathlib import Path

    import cctx_research as cctx

    fixture = Path(__file__).parents[1] / "fixtures" / "solana" / "v1_receive_from_arbitrum.json"
    ledger = cctx.load(fixture, format="solana")
    mint = ledger[ledger["destination_domain"] == 5]
    assert len(mint) == 1
    other = mint.assign(transfer_id="other-account", mint_recipient=OTHER_ACCOUNT,
                        amount_raw=mint["amount_raw"] * 2)  # fmt: skip
    return cctx.transfers_from_ledger(pd.concat([mint, other], ignore_index=True))


# Solana's own spelling, as load writes it (base58 of 0xf4c8..., 0x74e7... and 0x5a..5a)
ACCOUNT = "HUXc7MBf55vWrrkevVbmJN8HAyfFtjLcPLBt9yWngKzm"
OWNER = "8sLeDrpnUfSv69KXzKMKMVTpxP7D8iPue5QrHJgyu5XP"
OTHER_ACCOUNT = "75hbt6uvDqjPZ9WgFtMhBnTeyHw7cinoHiz4FD2vEz2d"


def test_a_token_account_recipient_counts_as_its_owner():
    t = _solana_mints()
    assert t["mint_recipient"].tolist().count(ACCOUNT) == 1  # as written, kept
    assert set(t["mint_recipient_owner"]) == {OWNER}
    top = addresses.top(t)
    assert top["address"].tolist() == [OWNER]  # both accounts' mints, one owner
    assert top["transaction_count"].tolist() == [2]
    assert top["volume_raw"].tolist() == [int(t["amount_raw"].sum())]
    graph = addresses.counterparty_graph(t)
    assert {a for role, a in graph.nodes if role == "recipient"} == {OWNER}
    # a profile finds the owner's transfers, and the account's own by the account
    assert addresses.profile(OWNER, t).transfers == 2
    assert addresses.profile(ACCOUNT, t).transfers == 1


def test_owners_are_counted_alike_on_polars():
    pl = pytest.importorskip("polars")
    t = _solana_mints()
    chains = {c: t[c].astype(str) for c in ("source_chain", "destination_chain")}
    frame = pl.from_pandas(t.assign(**chains))
    got = addresses.top(frame)
    assert got["address"].tolist() == [OWNER]
    assert got["volume_raw"].tolist() == addresses.top(t)["volume_raw"].tolist()
    assert addresses.profile(OWNER, frame).transfers == 2
