"""The analyses recover what the sample generator planted (``sample.truth``).

The generator keeps, per transfer, the truth behind the derived figures
(end user, depositing contract, relayer, rebalancing, fast or standard,
never minted, fee, the transfer a forwarding leg continues) apart from the
ledger; each test here reads the ledger through an analysis and compares it
with that truth, within the tolerance the analysis' docstring states.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import cctx_research as cctx
from cctx_research import chains, provenance
from cctx_research.analysis import actors, flows, latency, movements, pending, v2, volumes
from cctx_research.service import sample, sample_forwarding

AS_OF = "2024-07-01"
DAYS = 30


@pytest.fixture(scope="module")
def ledger() -> pd.DataFrame:
    return cctx.load_sample(as_of=AS_OF, days=DAYS)


@pytest.fixture(scope="module")
def planted(ledger: pd.DataFrame) -> pd.DataFrame:
    truth = sample.truth(AS_OF, days=DAYS)
    # the same transfers, in the same order: the truth is joined by position below
    assert truth["transfer_id"].tolist() == ledger["transfer_id"].astype(str).tolist()
    return truth


def test_the_truth_is_kept_apart_and_marked_synthetic(ledger, planted):
    assert list(planted.columns) == list(sample.TRUTH_COLUMNS)
    assert provenance.is_synthetic(planted)
    # nothing of the truth is a ledger column an analysis could read
    assert not {"end_user", "integrator", "rebalancing", "fast", "never_minted"} & set(ledger)
    # a day's truth does not depend on the clock
    later = sample.truth("2024-06-20T12:00:00Z", days=1)
    again = planted.set_index("transfer_id").loc[later["transfer_id"]]
    assert (again["integrator"].fillna("-").to_numpy() == later["integrator"].fillna("-")).all()


def test_no_ordinary_user_makes_a_large_share_of_the_transfers(ledger, planted):
    """The calibration's users are spread: none near the 7% one EOA made before."""
    users = planted.loc[planted["integrator"].isna(), "end_user"]
    top = users.value_counts(normalize=False).iloc[0] / len(planted)
    assert top < 0.01, f"one user makes {top:.1%} of the transfers"
    per_day = users.value_counts().iloc[0] / DAYS
    assert per_day < 30


def test_rebalancing_share_recovers_the_planted_rebalancing(ledger, planted):
    """movements.rebalancing_share: within 1% of the planted volume, per route and in all."""
    share = movements.rebalancing_share(ledger)
    found = float(share["rebalancing_volume"].sum())
    raw = ledger["amount_raw"].to_numpy(dtype="int64")
    mask = planted["rebalancing"].to_numpy()
    want = raw[mask].sum() / 1e6
    assert mask.sum() > 100  # the rebalancer is planted, at 0.4% of EVM-to-EVM transfers
    assert found == pytest.approx(want, rel=0.01), (found, want)
    total = float(share["volume"].sum())
    assert found / total < 0.02  # not the 17.9% the heavy repeat users made before
    # per route
    route = ledger["source_domain"].astype(str) + "->" + ledger["destination_domain"].astype(str)
    want_by_route = pd.Series(raw[mask]).groupby(route[mask].to_numpy()).sum() / 1e6
    keys = [
        f"{chains.domain(str(s))}->{chains.domain(str(d))}"
        for s, d in zip(share["source_chain"], share["destination_chain"], strict=True)
    ]
    got = share.set_index(pd.Index(keys))["rebalancing_volume"]  # fmt: skip
    for key, volume in want_by_route.items():
        assert got[key] == pytest.approx(volume, rel=0.01), key
    assert got.drop(want_by_route.index).sum() <= 0.01 * want


def test_rebalancing_flags_the_planted_legs(ledger, planted):
    flagged = set(movements.rebalancing(ledger)["transfer_id"])
    legs = set(planted.loc[planted["rebalancing"], "transfer_id"])
    assert len(flagged & legs) >= 0.99 * len(legs)  # recall
    assert len(flagged - legs) <= 0.01 * len(legs)  # precision


def test_integrators_are_the_planted_depositing_contracts(ledger, planted):
    """actors.integrators by depositor: exactly the planted contracts, with their volumes."""
    table = actors.integrators(ledger).set_index("integrator")
    raw = ledger["amount_raw"].to_numpy(dtype="int64")
    contracts = planted["integrator"].notna().to_numpy()
    want = pd.Series(raw[contracts]).groupby(planted["integrator"][contracts].to_numpy()).sum()
    assert set(table.index) == set(want.index)
    assert table.loc[want.index, "volume_raw"].tolist() == want.tolist()
    # no user signing its own burns is ranked an integrator
    own = (ledger["burn_tx_from"] == ledger["message_sender"]).fillna(False)
    alone = own.groupby(ledger["message_sender"].to_numpy()).all()
    assert alone.sum() > 1000
    assert not set(alone.index[alone.to_numpy()]) & set(table.index)


def test_relayers_recover_the_planted_relayers(ledger, planted):
    """actors.relayers: the planted relayer of every transfer minted by the clock, exactly."""
    table = actors.relayers(ledger, labels=False).set_index("relayer")["mints"]
    minted = ledger["mint_timestamp"].notna().to_numpy()
    want = planted.loc[minted, "relayer"].value_counts()
    assert table.sort_index().to_dict() == want.sort_index().to_dict()


def test_fees_recover_the_planted_fees(ledger, planted):
    """v2.fees: the fees planted on the V2 transfers minted by the clock, exactly."""
    table = v2.fees(ledger)
    minted_v2 = (ledger["cctp_version"] == 2).to_numpy() & ledger["fee_raw"].notna().to_numpy()
    assert int(table["fee_raw"].sum()) == int(planted.loc[minted_v2, "fee_raw"].sum())
    assert int(planted.loc[minted_v2, "fee_raw"].sum()) > 0


def test_finality_classes_recover_the_planted_fast_transfers(ledger, planted):
    """v2.fast_share and latency.by_route by finality: the planted fast transfers, exactly."""
    share = v2.fast_share(ledger)
    assert int(share["fast_count"].sum()) == int(planted["fast"].sum())
    table = latency.by_route(ledger, by="finality")
    done = ledger["mint_timestamp"].notna().to_numpy()
    fast = table.loc[table["finality"] == "fast", "count"].sum()
    assert int(fast) == int((planted["fast"].to_numpy() & done).sum())
    # fast transfers are attested in seconds, standard ones wait for finality
    med = table.groupby("finality", observed=True)["median_s"].median()
    assert med["fast"] < 60 < med["standard"]


def test_stuck_lists_the_planted_never_minted_burns(ledger, planted):
    """pending.stuck: every burn never minted and waiting well past its route's time,
    and nothing else (in-flight transfers are not stuck)."""
    stuck = set(pending.stuck(ledger)["transfer_id"])
    never = planted["never_minted"].to_numpy()
    assert stuck <= set(planted.loc[never, "transfer_id"])
    clock = pd.Timestamp(AS_OF, tz="UTC")
    old = never & (planted["burn_timestamp"] < clock - pd.Timedelta(days=1)).to_numpy()
    assert set(planted.loc[old, "transfer_id"]) <= stuck
    assert np.count_nonzero(old) > 100


@pytest.fixture(scope="module")
def forwarded(planted: pd.DataFrame) -> pd.DataFrame:
    """The planted forwarding legs: ``transfer_id`` and the transfer each ``continues``."""
    legs = planted.loc[planted["continues"].notna(), ["transfer_id", "continues"]]
    assert 100 < len(legs) < 0.01 * len(planted)  # planted, and well under 1 % of transfers
    return legs


def test_the_forwarder_is_planted_as_described(ledger, planted, forwarded):
    """Each leg burns on the chain its first leg minted on, from the forwarder it minted to,
    after that mint, for no more than arrived, toward a third chain."""
    rows = ledger.set_index(ledger["transfer_id"].astype(str))
    later, first = rows.loc[forwarded["transfer_id"]], rows.loc[forwarded["continues"]]
    via = sample_forwarding.forwarder()
    assert (later["message_sender"] == via).all()
    assert (first["mint_recipient"] == via).all()
    assert (first["destination_caller"] == via).all()  # wrapped: the forwarder relays its mint
    assert (later["source_domain"].to_numpy() == first["destination_domain"].to_numpy()).all()
    assert (later["destination_domain"].to_numpy() != first["source_domain"].to_numpy()).all()
    gap = later["burn_timestamp"].to_numpy() - first["mint_timestamp"].to_numpy()
    assert (gap > pd.Timedelta(0)).all()
    assert (gap <= pd.Timedelta(seconds=600)).all()
    arrived = first["amount_raw"].to_numpy() - first["fee_raw"].fillna(0).to_numpy()
    assert (later["amount_raw"].to_numpy() <= arrived).all()
    # the forwarder is who deposits the legs, signed by its keepers
    legs = planted.set_index("transfer_id").loc[forwarded["transfer_id"]]
    assert (legs["integrator"] == via).all()
    assert not legs["rebalancing"].any()


def test_continuations_recover_the_planted_forwarding_legs(ledger, forwarded):
    """movements.continuations: at least 99 % of the planted legs, each with the transfer it
    continues, and at most 2 % more (the docstring's tolerance)."""
    found = movements.continuations(ledger)
    got = set(zip(found["transfer_id"].astype(str), found["continues"].astype(str), strict=True))
    want = set(zip(forwarded["transfer_id"], forwarded["continues"], strict=True))
    assert len(got & want) >= 0.99 * len(want)
    assert len(got - want) <= 0.02 * len(want), sorted(got - want)[:5]


def test_dedupe_never_drops_the_rebalancers_own_moves(ledger, planted):
    """The rebalancer moving its inventory A -> B, then B -> C, moved twice: both count."""
    kept = set(movements.dedupe(ledger)["transfer_id"].astype(str))
    moves = set(planted.loc[planted["rebalancing"], "transfer_id"])
    assert moves <= kept, f"{len(moves - kept)} rebalancing moves dropped"


def test_counted_once_volume_recovers_the_planted_movements(ledger, planted, forwarded):
    """volumes with dedupe=: the volume of the planted movements (every transfer but the
    forwarding legs) within 0.1 %; counted once, the forwarding legs' volume is gone."""
    transfers = cctx.transfers_from_ledger(ledger)
    every = float(volumes.timeseries(transfers)["volume"].sum())
    once_ = float(volumes.timeseries(transfers, dedupe=ledger)["volume"].sum())
    raw = ledger["amount_raw"].to_numpy(dtype="int64")
    legs = planted["continues"].notna().to_numpy()
    want = raw[~legs].sum() / 1e6
    assert every == pytest.approx(raw.sum() / 1e6, rel=1e-9)
    assert once_ == pytest.approx(want, rel=0.001), (once_, want)
    assert every - once_ == pytest.approx(raw[legs].sum() / 1e6, rel=0.02)
    kept = len(movements.dedupe(ledger))
    assert kept == pytest.approx(len(ledger) - legs.sum(), abs=0.02 * legs.sum())


def _planted_matrix(ledger: pd.DataFrame, keep: np.ndarray) -> pd.DataFrame:
    """Volume per corridor (USDC) of the ``keep`` rows, by chain name, from the truth."""
    rows = ledger.loc[keep]
    src = rows["source_domain"].map(lambda d: chains.chain_name(int(d)))
    dst = rows["destination_domain"].map(lambda d: chains.chain_name(int(d)))
    return (rows["amount_raw"] / 1e6).groupby([src.to_numpy(), dst.to_numpy()]).sum()


def test_flows_count_the_forwarded_movements_once(ledger, planted):
    """flows.matrix, flows.graph (networkx) and flows.corridors with dedupe=: every corridor
    carries the planted movements' volume within 0.5 %; without it, the protocol's volume,
    the forwarding legs included, exactly."""
    transfers = cctx.transfers_from_ledger(ledger)
    legs = planted["continues"].notna().to_numpy()
    want = _planted_matrix(ledger, ~legs)
    every = _planted_matrix(ledger, np.ones(len(ledger), dtype=bool))
    table = flows.matrix(transfers, dedupe=ledger)
    g = flows.graph(transfers, dedupe=ledger)
    top = flows.corridors(transfers, n=None, dedupe=ledger).set_index("corridor")["volume"]
    plain = flows.matrix(transfers)
    for (a, b), volume in want.items():
        assert table.loc[a, b] == pytest.approx(volume, rel=0.005), (a, b)
        assert g.edges[a, b]["volume"] == pytest.approx(volume, rel=0.005), (a, b)
        assert top[f"{a}->{b}"] == pytest.approx(volume, rel=0.005), (a, b)
        assert plain.loc[a, b] == pytest.approx(every[(a, b)], rel=1e-9), (a, b)
    # the forwarding legs are what the protocol's corridors carry more, on many corridors
    moved = _planted_matrix(ledger, legs)
    assert len(moved) >= 5
    extra = plain.to_numpy().sum() - table.to_numpy().sum()
    assert extra == pytest.approx(moved.sum(), rel=0.02)
