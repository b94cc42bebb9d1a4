"""The store's answers against direct pandas computations over the same ledger."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cctx_research import chains
from cctx_research.errors import DataError, NotFoundError
from cctx_research.service.store import Store

from .conftest import CLOCK, CLOCK_S, addr, make_ledger

NS = 1_000_000_000


def seconds(series: pd.Series) -> pd.Series:
    return series.dt.as_unit("ns").astype("int64") // NS


def visible(ledger: pd.DataFrame, clock=CLOCK) -> pd.DataFrame:
    """Burns by the clock, with mint columns blanked where the mint is after it."""
    out = ledger[ledger["burn_timestamp"] <= clock].copy()
    late = out["mint_timestamp"].isna() | (out["mint_timestamp"] > clock)
    out.loc[late, "mint_timestamp"] = pd.NaT
    out["done"] = ~late
    return out


def within(series: pd.Series, start: int, end: int) -> pd.Series:
    s = seconds(series.fillna(pd.Timestamp(0, tz="UTC")))
    return series.notna() & (s >= start) & (s <= end)


WINDOWS = [
    (CLOCK_S - 86_400, CLOCK_S),
    (CLOCK_S - 3 * 86_400, CLOCK_S + 10_000),
    (CLOCK_S - 7_200, CLOCK_S - 3_600),
    (CLOCK_S - 100, CLOCK_S - 100),
    (0, 10),
]


@pytest.mark.parametrize(("start", "end"), WINDOWS)
def test_volume_matches_pandas_inclusive_bounds(store, ledger, start, end):
    v = visible(ledger)
    burns = v[within(v["burn_timestamp"], start, end)]
    mints = v[within(v["mint_timestamp"], start, end)]
    assert store.volume(start, end) == {
        "startDate": start,
        "endDate": end,
        "mintVolume": int(mints["amount_raw"].sum()),
        "burnVolume": int(burns["amount_raw"].sum()),
        "totalVolume": int(mints["amount_raw"].sum() + burns["amount_raw"].sum()),
        "mintCount": len(mints),
        "burnCount": len(burns),
        "totalCount": len(mints) + len(burns),
    }


def test_volume_bounds_are_inclusive_at_both_ends(store, ledger):
    burn_s = seconds(ledger["burn_timestamp"])
    shared = burn_s[burn_s <= CLOCK_S - 10].value_counts()
    t = int(shared.index[0])  # a second holding several burns
    assert shared.iloc[0] >= 2
    assert store.volume(t, t)["burnCount"] == shared.iloc[0]
    assert store.volume(t - 1, t)["burnCount"] == int(((burn_s >= t - 1) & (burn_s <= t)).sum())
    assert store.volume(t + 1, t + 1)["burnCount"] == int((burn_s == t + 1).sum())


def test_default_window_is_the_day_before_the_clock(store):
    assert store.window() == (CLOCK_S - 86_400, CLOCK_S)
    assert store.volume() == store.volume(CLOCK_S - 86_400, CLOCK_S)
    with pytest.raises(ValueError, match="must not be after"):
        store.window(CLOCK_S + 1, CLOCK_S)


def expected_mints(ledger, start, end, sources, destinations) -> pd.DataFrame:
    v = visible(ledger)
    m = v[
        within(v["mint_timestamp"], start, end)
        & v["source_domain"].isin(sources)
        & v["destination_domain"].isin(destinations)
    ]
    return m.sort_values(["mint_timestamp", "transfer_id"])


def flatten(groups: list[dict]) -> list[dict]:
    return [t for g in groups for t in g["transactions"]]


@pytest.mark.parametrize(
    ("sources", "destinations"),
    [(None, None), ([3], [0, 6]), ([5], [0, 1, 2, 3, 5, 6, 7]), ([42], [0])],
)
def test_mint_pages_concatenate_to_the_pandas_listing(store, ledger, sources, destinations):
    start, end = CLOCK_S - 2 * 86_400, CLOCK_S
    want = expected_mints(
        ledger,
        start,
        end,
        sources or chains.DEFAULT_DOMAINS,
        destinations or chains.DEFAULT_DOMAINS,
    )
    got: list[dict] = []
    page = 1
    while True:
        groups = store.mints(start, end, sources, destinations, page=page, limit=37)
        items = flatten(groups)
        # each page: ordered by (timestamp, id) once regrouped
        keys = sorted((t["timestamp"], t["id"]) for t in items)
        got.extend(sorted(items, key=lambda t: (t["timestamp"], t["id"])))
        assert len(keys) <= 37
        if len(items) < 37:
            break
        page += 1
    assert [t["id"] for t in got] == want["transfer_id"].tolist()
    assert [t["amount"] for t in got] == want["amount_raw"].tolist()
    assert [t["timestamp"] for t in got] == seconds(want["mint_timestamp"]).tolist()
    assert all(t["isCompleted"] is True for t in got)


def test_mint_groups_are_by_pair_with_page_totals(store):
    groups = store.mints(CLOCK_S - 86_400, CLOCK_S, limit=200)
    pairs = [
        (int(g["transactions"][0]["sourceDomain"]), int(g["transactions"][0]["destinationDomain"]))
        for g in groups
    ]
    assert pairs == sorted(set(pairs))
    for g in groups:
        src, dst = (
            int(g["transactions"][0]["sourceDomain"]),
            int(g["transactions"][0]["destinationDomain"]),
        )
        assert g["sourceChain"] == chains.chain_id(src)
        assert g["destinationChain"] == chains.chain_id(dst)
        assert g["chain"] == chains.chain_id(dst)
        assert g["totalAmount"] == sum(t["amount"] for t in g["transactions"])
        assert all(
            (t["sourceDomain"], t["destinationDomain"]) == (str(src), str(dst))
            for t in g["transactions"]
        )
        order = [(t["timestamp"], t["id"]) for t in g["transactions"]]
        assert order == sorted(order)
    assert sum(len(g["transactions"]) for g in groups) == 200


def test_mint_page_past_the_end_is_empty(store):
    assert store.mints(CLOCK_S - 86_400, CLOCK_S, page=10**6, limit=1000) == []


def test_hash_lookup_finds_burns_and_mints_by_the_clock(store, ledger):
    row = ledger[ledger["mint_timestamp"] < CLOCK - pd.Timedelta(hours=1)].iloc[0]
    burn = store.transaction(row["burn_tx_hash"].upper().replace("0X", "0x"))
    assert burn["transactionType"] == "burn"
    t = burn["transaction"]
    assert t["id"] == row["transfer_id"]
    assert t["timestamp"] == row["burn_timestamp"].value // NS
    assert t["blockNumber"] == row["burn_block"]
    assert t["chainId"] == chains.chain_id(int(row["source_domain"]))
    assert t["entityId"] == "burnTransactionsTable"
    assert t["isCompleted"] is True
    assert t["transactionHash"] == row["burn_tx_hash"]
    mint = store.transaction(row["mint_tx_hash"])
    assert mint["transactionType"] == "mint"
    m = mint["transaction"]
    assert m["timestamp"] == row["mint_timestamp"].value // NS
    assert m["blockNumber"] == row["mint_block"]
    assert m["chainId"] == chains.chain_id(int(row["destination_domain"]))
    assert m["entityId"] == "mintTransactionsTable"
    assert m["_id"] != t["_id"]


def test_hash_lookup_hides_what_happened_after_the_clock(store, ledger):
    late_mint = ledger[
        (ledger["burn_timestamp"] <= CLOCK) & (ledger["mint_timestamp"] > CLOCK)
    ].iloc[0]
    with pytest.raises(NotFoundError):
        store.transaction(late_mint["mint_tx_hash"])
    burn = store.transaction(late_mint["burn_tx_hash"])
    assert burn["transaction"]["isCompleted"] is False
    late_burn = ledger[ledger["burn_timestamp"] > CLOCK].iloc[0]
    with pytest.raises(NotFoundError):
        store.transaction(late_burn["burn_tx_hash"])
    later = Store(ledger, clock=CLOCK + pd.Timedelta(days=1))
    assert later.transaction(late_mint["mint_tx_hash"])["transactionType"] == "mint"


def test_hash_lookup_verifies_the_whole_hash(store, ledger):
    h = ledger["burn_tx_hash"].iloc[0]
    other = h[:-1] + ("0" if h[-1] != "0" else "1")  # same 8-byte prefix, other hash
    with pytest.raises(NotFoundError):
        store.transaction(other)
    with pytest.raises(ValueError, match="64 hex"):
        store.transaction(h[:-1])


def test_received_matches_pandas(store, ledger):
    start, end = CLOCK_S - 2 * 86_400, CLOCK_S
    for k in (0, 1, 17):
        who = addr(0xB000 + k)
        v = visible(ledger)
        v = v[v["mint_recipient"] == who].copy()
        v["t"] = v["mint_timestamp"].where(v["done"], v["burn_timestamp"])
        v = v[within(v["t"], start, end)].sort_values(["t", "transfer_id"])
        full = store.received(who, start, end, page=1, limit=1000)
        assert full["address"] == who
        assert full["totalTransactions"] == len(v)
        items = full["transactions"]
        assert [i["id"] for i in items] == v["transfer_id"].tolist()
        assert [i["timestamp"] for i in items] == seconds(v["t"]).tolist()
        assert [i["transactionType"] for i in items] == np.where(v["done"], "mint", "burn").tolist()
        assert [i["transactionHash"] for i in items] == np.where(
            v["done"], v["mint_tx_hash"], v["burn_tx_hash"]
        ).tolist()
        page2 = store.received(who.upper().replace("0X", "0x"), start, end, page=2, limit=5)
        assert page2["transactions"] == items[5:10]
        padded = "0x" + "0" * 24 + who[2:]
        assert store.received(padded, start, end, limit=1000) == full


def test_received_of_an_unknown_address_is_empty(store):
    assert store.received(addr(0xFFFF)) == {
        "address": addr(0xFFFF),
        "totalTransactions": 0,
        "transactions": [],
    }


def test_top_senders_match_pandas(store, ledger):
    start, end = CLOCK_S - 3 * 86_400, CLOCK_S
    v = visible(ledger)
    burns = v[within(v["burn_timestamp"], start, end)]
    agg = burns.groupby("message_sender")["amount_raw"].agg(["sum", "count"]).reset_index()
    agg["neg"] = -agg["sum"]
    agg = agg.sort_values(["neg", "message_sender"]).head(25)
    got = store.top_senders(start, end, limit=25)
    assert (got["startDate"], got["endDate"]) == (start, end)
    assert got["topRecipients"] == [
        {"address": a, "totalVolume": int(s), "transactionCount": int(c)}
        for a, s, c in zip(agg["message_sender"], agg["sum"], agg["count"], strict=True)
    ]


def test_top_senders_break_ties_by_address():
    ledger = make_ledger(200)
    ledger["amount_raw"] = 5
    ledger["message_sender"] = [addr(0xA000 + (i % 4)) for i in range(len(ledger))]
    store = Store(ledger.astype({"message_sender": "string[pyarrow]"}), clock=CLOCK)
    top = store.top_senders(CLOCK_S - 10**6, CLOCK_S, limit=4)["topRecipients"]
    counts = [t["transactionCount"] for t in top]
    by_volume = sorted(top, key=lambda t: (-t["totalVolume"], t["address"]))
    assert top == by_volume
    assert sum(counts) == int((ledger["burn_timestamp"] <= CLOCK).sum())


def test_top_senders_sums_are_exact_beyond_float_precision():
    ledger = make_ledger(50)
    ledger["amount_raw"] = 2**53 + 1  # float64 cannot hold the sums
    store = Store(ledger, clock=CLOCK + pd.Timedelta(days=1))
    top = store.top_senders(0, CLOCK_S + 86_400, limit=1000)["topRecipients"]
    assert {t["totalVolume"] for t in top} == {(2**53 + 1) * t["transactionCount"] for t in top}


def test_live_clock_is_read_per_call(ledger):
    store = Store(ledger)  # clock: now, i.e. long after every transfer
    assert store.clock is None
    end = store.window()[1]
    assert abs(end - pd.Timestamp.now(tz="UTC").value // NS) <= 2
    assert store.volume(0, end)["burnCount"] == len(ledger)


def test_bad_ledgers_raise_data_error(ledger):
    with pytest.raises(DataError, match="missing columns: mint_recipient"):
        Store(ledger.drop(columns="mint_recipient"))
    bad = ledger.copy()
    bad.loc[3, "burn_tx_hash"] = "0x1234"
    with pytest.raises(DataError, match="burn_tx_hash"):
        Store(bad)
    bad = ledger.copy()
    bad.loc[5, "message_sender"] = "alice"
    with pytest.raises(DataError, match=r"message_sender.*'alice'"):
        Store(bad)


def test_store_accepts_padded_and_uppercase_addresses(ledger):
    odd = ledger.copy()
    odd["mint_recipient"] = (
        ("0x" + "0" * 24 + odd["mint_recipient"].str[2:]).str.upper().str.replace("0X", "0x")
    )
    store = Store(odd, clock=CLOCK)
    plain = Store(ledger, clock=CLOCK)
    who = addr(0xB000 + 3)
    assert store.received(who) == plain.received(who)
    assert store.mints(limit=5) == plain.mints(limit=5)


def test_ties_in_time_are_ordered_by_id_not_by_burn_order():
    ledger = make_ledger(6, seed=11)
    t0 = CLOCK_S - 5_000
    ledger["transfer_id"] = ["3_1_8453", "2_1_8453", "1_1_8453", "6_1_8453", "5_1_8453", "4_1_8453"]
    ledger["burn_timestamp"] = pd.to_datetime(
        [t0, t0 + 10, t0 + 20, t0 + 30, t0 + 40, t0 + 50], unit="s", utc=True
    )
    ledger["mint_timestamp"] = pd.to_datetime(
        [t0 + 900] * 3 + [CLOCK_S + 60] * 3, unit="s", utc=True
    )
    ledger["mint_recipient"] = addr(0xB000)
    ledger["source_domain"], ledger["destination_domain"] = 1, 6
    store = Store(ledger.astype({"transfer_id": "string[pyarrow]"}), clock=CLOCK)
    items = store.received(addr(0xB000), t0, CLOCK_S)["transactions"]
    # pending ones at their burn time (t0+30..), completed ones at the shared mint second
    pending, completed = ["6_1_8453", "5_1_8453", "4_1_8453"], ["1_1_8453", "2_1_8453", "3_1_8453"]
    assert [i["id"] for i in items] == [*pending, *completed]
    assert [i["transactionType"] for i in items] == ["burn"] * 3 + ["mint"] * 3
    mints = flatten(store.mints(t0, CLOCK_S))
    assert [t["id"] for t in mints] == ["1_1_8453", "2_1_8453", "3_1_8453"]


# --------------------------------------------------------------------------
# non-EVM chains: addresses in any chain's format, hashes that are not 0x hex


@pytest.fixture(scope="module")
def mixed_store():
    from cctx_research.service.sample import generate

    ledger = generate("2024-07-01", days=3, per_day=400, seed=5)
    return ledger, Store(ledger, clock="2024-07-01")


def test_recipients_in_their_chains_format_or_bytes32(mixed_store):
    from cctx_research import addressing
    from cctx_research.service.fields import parse_request

    ledger, store = mixed_store
    for domain in (5, 4):
        address = ledger.loc[ledger["destination_domain"] == domain, "mint_recipient"].iloc[0]
        want = ledger[ledger["mint_recipient"] == address]
        got = store.received(address, 0, 2**40, limit=1000)
        assert got["totalTransactions"] == len(want) > 0
        assert got["address"] == addressing.from_bytes32(addressing.to_bytes32(address), None)
        assert store.received(addressing.to_bytes32(address), 0, 2**40, limit=1000) == got
        # the interface's field check accepts the chain's own format too
        assert parse_request("transactions-address-recipient", {"address": address})
    with pytest.raises(ValueError, match="noble: bech32"):
        store.received("noble1qqqq", 0, 2**40)


def test_hashes_that_are_not_hex_are_found(mixed_store):
    ledger, store = mixed_store
    sol = ledger[(ledger["source_domain"] == 5) & ledger["mint_timestamp"].notna()].iloc[0]
    found = store.transaction(sol["burn_tx_hash"])
    assert found["transactionType"] == "burn"
    assert found["transaction"]["transactionHash"] == sol["burn_tx_hash"]
    assert found["transaction"]["id"] == sol["transfer_id"]
    noble = ledger[(ledger["destination_domain"] == 4) & ledger["mint_timestamp"].notna()]
    row = noble[noble["mint_timestamp"] <= pd.Timestamp("2024-07-01", tz="UTC")].iloc[0]
    for spelling in (row["mint_tx_hash"], row["mint_tx_hash"].lower()):
        found = store.transaction(spelling)
        assert found["transactionType"] == "mint"
        assert found["transaction"]["transactionHash"] == row["mint_tx_hash"]
    with pytest.raises(NotFoundError):
        store.transaction(sol["burn_tx_hash"][:-2] + "11")


def test_a_ledger_with_a_malformed_hash_is_refused(mixed_store):
    ledger, _ = mixed_store
    bad = ledger.copy()
    bad.loc[bad.index[0], "burn_tx_hash"] = "not-a-hash"
    with pytest.raises(DataError, match="not a transaction hash"):
        Store(bad)


def _count_index_builds(monkeypatch) -> list[int]:
    """The rows of every ledger index built from now on (``LedgerIndex`` counted)."""
    from cctx_research.service import store as store_module

    built: list[int] = []
    index_class = store_module.LedgerIndex

    def counted(frame):
        built.append(len(frame))
        return index_class(frame)

    monkeypatch.setattr(store_module, "LedgerIndex", counted)
    return built


def test_a_trusted_ledger_is_indexed_on_first_use_once_and_answers_the_same(ledger, monkeypatch):
    """The sample's store is ready at once: its index is built by the first operation, once,
    even when several threads ask at the same time."""
    from concurrent.futures import ThreadPoolExecutor

    built = _count_index_builds(monkeypatch)
    eager = Store(ledger, clock=CLOCK)
    assert built == [len(ledger)]
    lazy = Store(ledger, clock=CLOCK, trusted=True)
    assert built == [len(ledger)]  # not built yet
    assert len(lazy) == len(ledger)
    assert repr(lazy) == repr(eager)
    window = (CLOCK_S - 86_400, CLOCK_S)
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda _: lazy.top_senders(*window), range(8)))
    assert built == [len(ledger)] * 2
    assert answers == [eager.top_senders(*window)] * 8
    assert lazy.volume(*window) == eager.volume(*window)


def test_the_volume_needs_no_index_and_answers_as_the_index_does(ledger, monkeypatch):
    """A warm client's first request is a volume (the service's clock): it is answered from
    the times and amounts alone, the same as from the whole index, before and after it."""
    built = _count_index_builds(monkeypatch)
    eager = Store(ledger, clock=CLOCK)
    lazy = Store(ledger, clock=CLOCK, trusted=True)
    windows = [*WINDOWS, (None, None), (CLOCK_S - 5, None)]
    before = [lazy.volume(*w) for w in windows]
    assert len(built) == 1  # the eager store's alone
    assert before == [eager.volume(*w) for w in windows]
    assert any(v["mintCount"] and v["burnCount"] for v in before)
    lazy.top_senders()  # builds the index
    assert len(built) == 2
    assert [lazy.volume(*w) for w in windows] == before


def test_an_untrusted_ledger_is_checked_when_the_store_is_made(ledger):
    bad = ledger.copy()
    bad.loc[3, "mint_recipient"] = "not an address"
    with pytest.raises(DataError, match="not an address"):
        Store(bad, clock=CLOCK)
