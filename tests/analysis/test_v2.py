"""v2.fast_share, fees, fee_caps and hooks against hand-worked numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.frames import make_transfers
from analysis.ledgers import make_ledger
from analysis.ledgers import v2 as fields
from cctx_research import schema
from cctx_research.analysis import v2
from cctx_research.errors import DataError

T0, T1 = "2024-07-01T00:00:00", "2024-07-01T00:00:20"
ROWS = [
    # ethereum->base: fast 100 USDC (fee 0.01 of a 0.02 cap), standard 300 (no fee), hook on it
    {"src": 0, "dst": 6, "amount": 100, "burn": T0, "mint": T1,
     **fields(1000, max_fee=20_000, fee=10_000, hook="0x")},
    {"src": 0, "dst": 6, "amount": 300, "burn": T0, "mint": T1,
     **fields(2000, max_fee=0, fee=0, hook="0xabcd")},
    # base->solana: two fast, one at its cap
    {"src": 6, "dst": 5, "amount": 50, "burn": T0, "mint": T1,
     **fields(1000, max_fee=5_000, fee=5_000, hook="0x")},
    {"src": 6, "dst": 5, "amount": 150, "burn": T0, "mint": T1,
     **fields(1000, max_fee=45_000, fee=15_000, hook="0x")},
    # fast and pending: no fee yet
    {"src": 6, "dst": 5, "amount": 1000, "burn": T0, **fields(1000, max_fee=100_000)},
    # V1 and unknown: left out
    {"src": 6, "dst": 3, "amount": 10, "burn": T0, "mint": T1, "version": 1},
    {"src": 6, "dst": 3, "amount": 10, "burn": T0, "mint": T1, "version": 2},
]  # fmt: skip


@pytest.fixture
def ledger() -> pd.DataFrame:
    return make_ledger(ROWS)


def _by_route(frame: pd.DataFrame) -> pd.DataFrame:
    pairs = zip(frame["source_chain"], frame["destination_chain"], strict=True)
    index = [f"{s}->{d}" for s, d in pairs]
    return frame.set_axis(index)


def test_fast_share_by_hand(ledger) -> None:
    out = _by_route(v2.fast_share(ledger))
    assert set(out.index) == {"ethereum->base", "base->solana"}  # V1 and unknown left out
    eth = out.loc["ethereum->base"]
    assert (eth["count"], eth["fast_count"]) == (2, 1)
    assert eth["fast_count_share"] == 0.5
    assert eth["volume"] == 400.0
    assert eth["fast_volume"] == 100.0
    assert eth["fast_volume_share"] == 0.25
    sol = out.loc["base->solana"]
    assert (sol["count"], sol["fast_count"], sol["fast_count_share"]) == (3, 3, 1.0)
    assert isinstance(out["destination_chain"].dtype, pd.CategoricalDtype)
    # registry order: ethereum (0) before base (6)
    assert out.index.tolist() == ["ethereum->base", "base->solana"]


def test_fees_by_hand(ledger) -> None:
    out = _by_route(v2.fees(ledger))
    eth = out.loc["ethereum->base"]
    assert eth["count"] == 2
    assert eth["volume"] == 400.0
    assert eth["fee_raw"] == 10_000
    assert eth["fee"] == pytest.approx(0.01)
    assert eth["fee_bps"] == pytest.approx(0.25)  # 0.01 / 400 * 1e4
    assert eth["median_fee_bps"] == pytest.approx(0.5)  # median of 1 bp and 0 bp
    sol = out.loc["base->solana"]
    assert sol["count"] == 2  # the pending one has no fee yet
    assert sol["fee_raw"] == 20_000
    assert sol["fee_bps"] == pytest.approx(1.0)
    split = v2.fees(ledger, by="finality")
    assert split["finality"].astype(str).tolist() == ["fast", "standard", "fast"]
    assert split["fee_raw"].dtype == np.int64


def test_fee_caps_by_hand(ledger) -> None:
    out = _by_route(v2.fee_caps(ledger))
    eth = out.loc["ethereum->base"]
    assert eth["count"] == 1  # the zero cap is left out
    assert eth["median_fee_ratio"] == 0.5
    assert eth["at_cap_count"] == 0
    assert eth["median_max_fee_bps"] == pytest.approx(2.0)
    sol = out.loc["base->solana"]
    # ratios 1.0 and 1/3
    assert sol["median_fee_ratio"] == pytest.approx((1 + 1 / 3) / 2)
    assert sol["p90_fee_ratio"] == pytest.approx(1 / 3 + 0.9 * (2 / 3))
    assert (sol["at_cap_count"], sol["at_cap_share"]) == (1, 0.5)
    assert sol["median_max_fee_bps"] == pytest.approx(2.0)  # caps 1 bp and 3 bp


def test_hooks_by_hand(ledger) -> None:
    out = _by_route(v2.hooks(ledger))
    eth = out.loc["ethereum->base"]
    assert (eth["count"], eth["hook_count"], eth["hook_share"]) == (2, 1, 0.5)
    assert eth["hook_volume_share"] == 0.75
    sol = out.loc["base->solana"]
    assert (sol["count"], sol["hook_count"]) == (2, 0)  # the null hook is unknown


def test_v1_only_and_empty_give_empty_results() -> None:
    v1 = make_ledger([{"src": 0, "dst": 6, "amount": 1, "burn": T0, "mint": T1, "version": 1}])
    for fn in (v2.fast_share, v2.fees, v2.fee_caps, v2.hooks):
        for data in (v1, schema.empty("ledger")):
            out = fn(data)
            assert out.empty, fn.__name__
            assert "source_chain" in out.columns, fn.__name__


def test_errors(ledger) -> None:
    transfers = make_transfers([{"time": "2024-07-01", "src": 0, "dst": 6, "amount": 1}])
    for fn in (v2.fast_share, v2.fees, v2.fee_caps, v2.hooks):
        with pytest.raises(DataError, match="burn time"):
            fn(transfers)
        with pytest.raises(TypeError, match="ledger"):
            fn("ledger.parquet")
    with pytest.raises(ValueError, match="by"):
        v2.fees(ledger, by="cctp_version")
    with pytest.raises(ValueError, match="by"):
        v2.fee_caps(ledger, by="route")
