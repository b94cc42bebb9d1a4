"""The analyses recover what the sample generator planted (``sample.truth``).

The generator keeps, per transfer, the truth behind the derived figures
(end user, depositing contract, relayer, rebalancing, fast or standard,
never minted, fee) apart from the ledger; each test here reads the ledger
through an analysis and compares it with that truth, within the tolerance
the analysis' docstring states.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import cctx_research as cctx
from cctx_research import chains, provenance
from cctx_research.analysis import actors, latency, movements, pending, v2
from cctx_research.service import sample

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
    keys = [f"{chains.domain(str(s))}->{chains.domain(str(d))}"
            for s, d in zip(share["source_chain"], share["destination_chain"], strict=True)]
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
