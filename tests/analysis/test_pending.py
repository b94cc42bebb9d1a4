"""pending.stuck and pending.in_flight against hand-worked numbers."""

from __future__ import annotations

import logging

import pandas as pd
import pytest

from analysis.frames import make_transfers
from analysis.ledgers import make_ledger, v2
from cctx_research import schema
from cctx_research.analysis import pending
from cctx_research.analysis.results import result_info
from cctx_research.errors import DataError
from cctx_research.provenance import Provenance, attach
from cctx_research.service.sample import generate

# ethereum->base standard completes in 100 s, 300 s and (after as_of) 7200 s: the
# reference is the median of every completed transfer in the data, 300 s;
# base->arbitrum fast in 10 s; polygon->avalanche never completes.
ROWS = [
    {"id": "done1", "src": "ethereum", "dst": "base", "amount": 1, "burn": "2024-07-01T00:00:00",
     "mint": "2024-07-01T00:01:40", **v2(2000)},
    {"id": "done2", "src": "ethereum", "dst": "base", "amount": 1, "burn": "2024-07-01T00:00:00",
     "mint": "2024-07-01T00:05:00", **v2(2000)},
    {"id": "fast", "src": "base", "dst": "arbitrum", "amount": 1, "burn": "2024-07-01T00:00:00",
     "mint": "2024-07-01T00:00:10", **v2(1000)},
    # pending at 01:00 (age 3600 s); minted later, at 02:00
    {"id": "late", "src": "ethereum", "dst": "base", "amount": 250, "burn": "2024-07-01T00:00:00",
     "mint": "2024-07-01T02:00:00", **v2(2000)},
    # pending, age 400 s at 01:00: 1.33x the median, not 3x
    {"id": "young", "src": "ethereum", "dst": "base", "amount": 2, "burn": "2024-07-01T00:53:20",
     **v2(2000)},
    # a fast ethereum->base: no completed fast transfer on the route, nor from ethereum;
    # the fast class (10 s) is the reference. Age 600 s.
    {"id": "fastpending", "src": "ethereum", "dst": "base", "amount": 3,
     "burn": "2024-07-01T00:50:00", **v2(1000)},
    # a route with no completion: base is the source of a fast one -> same source (10 s)
    {"id": "newroute", "src": "base", "dst": "solana", "amount": 4, "burn": "2024-07-01T00:55:00",
     **v2(1000)},
    # polygon standard: nothing from polygon completed -> standard class (300 s). Age 3000 s.
    {"id": "poly", "src": "polygon", "dst": "avalanche", "amount": 5,
     "burn": "2024-07-01T00:10:00", **v2(2000)},
    # burned after as_of: ignored
    {"id": "future", "src": "ethereum", "dst": "base", "amount": 7, "burn": "2024-07-01T01:30:00"},
]  # fmt: skip
AS_OF = "2024-07-01T01:00:00"


@pytest.fixture
def ledger() -> pd.DataFrame:
    return make_ledger(ROWS)


def test_stuck_by_hand(ledger) -> None:
    out = pending.stuck(ledger, as_of=AS_OF, factor=3)
    got = {
        r.transfer_id: (r.age_s, r.reference_s, r.reference)
        for r in out.itertuples(index=False)
    }
    assert got == {
        "late": (3600.0, 300.0, "route"),
        "fastpending": (600.0, 10.0, "class"),
        "newroute": (300.0, 10.0, "source"),
        "poly": (3000.0, 300.0, "class"),
    }
    # oldest first
    assert out["transfer_id"].tolist() == ["late", "poly", "fastpending", "newroute"]
    assert result_info(out).pending == 5
    assert result_info(out).as_of == pd.Timestamp(AS_OF, tz="UTC")
    late = out.iloc[0]
    assert late["amount"] == 250.0
    assert late["amount_raw"] == 250_000_000
    assert late["burn_tx_hash"].startswith("0x")
    assert late["source_chain"] == "ethereum"
    assert str(late["finality"]) == "standard"


def test_factor_and_as_of(ledger) -> None:
    # with factor 1.2, "young" (400 s against 300 s) is stuck too; not with 1.5
    assert "young" in set(pending.stuck(ledger, as_of=AS_OF, factor=1.2)["transfer_id"])
    assert "young" not in set(pending.stuck(ledger, as_of=AS_OF, factor=1.5)["transfer_id"])
    # at 02:00 "late" has been minted: no longer pending
    later = pending.stuck(ledger, as_of="2024-07-01T02:00:00")
    assert "late" not in set(later["transfer_id"])
    # before anything was old enough, nothing is stuck
    assert pending.stuck(ledger, as_of="2024-07-01T00:00:05").empty


def test_default_as_of_is_the_window_end_else_the_latest_time(ledger) -> None:
    # latest time in the data: the 02:00 mint
    assert result_info(pending.stuck(ledger)).as_of == pd.Timestamp("2024-07-01T02:00", tz="UTC")
    attach(
        ledger,
        Provenance(source="test", window=("2024-06-30", AS_OF)),
    )
    assert result_info(pending.stuck(ledger)).as_of == pd.Timestamp(AS_OF, tz="UTC")


def test_all_pending_is_not_judged(caplog) -> None:
    ledger = make_ledger(
        [{"src": 0, "dst": 6, "amount": 5, "burn": "2024-07-01"}] * 3
    )
    with caplog.at_level(logging.WARNING, logger="cctx_research.analysis.pending"):
        out = pending.stuck(ledger, as_of="2024-07-05")
    assert out.empty
    assert result_info(out).unjudged == 3
    assert "not judged" in caplog.text
    flight = pending.in_flight(ledger, as_of="2024-07-05", by=None)
    assert flight["count"].tolist() == [3]
    assert flight["amount"].tolist() == [15.0]


def test_in_flight_by_hand(ledger) -> None:
    out = pending.in_flight(ledger, as_of=AS_OF)
    pairs = zip(out["source_chain"], out["destination_chain"], strict=True)
    routes = [f"{s}->{d}" for s, d in pairs]
    assert routes == ["ethereum->base", "base->solana", "polygon->avalanche"]
    eth = out.iloc[0]
    assert eth["count"] == 3
    assert eth["amount_raw"] == 255_000_000
    assert eth["amount"] == 255.0
    assert eth["oldest"] == pd.Timestamp("2024-07-01", tz="UTC")
    assert eth["max_age_s"] == 3600.0
    total = pending.in_flight(ledger, as_of=AS_OF, by=None)
    assert total["count"].iloc[0] == 5
    assert total["amount_raw"].iloc[0] == out["amount_raw"].sum()


def test_in_flight_matches_plain_pandas_on_the_sample() -> None:
    ledger = generate("2024-07-01", days=2)
    as_of = pd.Timestamp("2024-06-30T12:00", tz="UTC")
    mask = (ledger["burn_timestamp"] <= as_of) & (
        ledger["mint_timestamp"].isna() | (ledger["mint_timestamp"] > as_of)
    )
    total = pending.in_flight(ledger, as_of=as_of, by=None)
    assert total["count"].iloc[0] == mask.sum()
    assert total["amount_raw"].iloc[0] == ledger.loc[mask, "amount_raw"].sum()
    late = pending.stuck(ledger, as_of=as_of, factor=3)
    assert (late["age_s"] > 3 * late["reference_s"]).all()
    assert set(late["transfer_id"]) <= set(ledger.loc[mask, "transfer_id"])


def test_edge_cases() -> None:
    empty = schema.empty("ledger")
    assert pending.stuck(empty).empty
    total = pending.in_flight(empty, by=None)
    assert total["count"].tolist() == [0]
    assert pd.isna(total["oldest"].iloc[0])
    assert pending.in_flight(empty).empty


def test_errors(ledger) -> None:
    transfers = make_transfers([{"time": "2024-07-01", "src": 0, "dst": 6, "amount": 1}])
    with pytest.raises(DataError, match="load_sample"):
        pending.stuck(transfers)
    with pytest.raises(DataError, match="burn time"):
        pending.in_flight(transfers)
    for bad in (0, -1, float("nan")):
        with pytest.raises(ValueError, match="factor"):
            pending.stuck(ledger, factor=bad)
    with pytest.raises(TypeError, match="factor"):
        pending.stuck(ledger, factor="3")
    with pytest.raises(ValueError, match="as_of"):
        pending.stuck(ledger, as_of="not a time")
    with pytest.raises(ValueError, match="by"):
        pending.in_flight(ledger, by="chain")


# ------------------------------------------------------------------ timeseries


def test_timeseries_by_hand(ledger) -> None:
    # every 10 minutes from 00:00 to 01:00 (as_of), judged as stuck judges them
    out = pending.timeseries(ledger, freq="10min", as_of=AS_OF)
    assert out["timestamp"].tolist() == list(
        pd.date_range("2024-07-01", AS_OF, freq="10min", tz="UTC")
    )
    at = out.set_index(out["timestamp"].dt.strftime("%H:%M"))
    # 00:00: the four burns of 00:00 are pending (done1/done2/fast/late), none old enough
    assert at.loc["00:00", ["pending_count", "never_minted_count"]].tolist() == [4, 0]
    # 00:10: done1, done2 and fast minted; "late" (600 s) is not yet 3x 300 s; poly burned
    assert at.loc["00:10", ["pending_count", "never_minted_count"]].tolist() == [2, 0]
    # 00:20: "late" (1200 s > 900 s) is never minted; poly (600 s) not yet
    assert at.loc["00:20", ["pending_count", "never_minted_count"]].tolist() == [1, 1]
    assert at.loc["00:20", "never_minted_raw"] == 250_000_000
    # 01:00: what stuck and in_flight say at that moment
    last = at.loc["01:00"]
    late = pending.stuck(ledger, as_of=AS_OF)
    total = pending.in_flight(ledger, as_of=AS_OF, by=None).iloc[0]
    assert last["never_minted_count"] == len(late) == 4
    assert last["never_minted_raw"] == late["amount_raw"].sum()
    assert last["pending_count"] + last["never_minted_count"] == total["count"]
    assert last["in_flight_raw"] == total["amount_raw"]
    assert last["pending"] == pytest.approx(2.0)  # "young" alone
    info = result_info(out)
    assert (info.freq, info.as_of, info.factor) == ("10min", pd.Timestamp(AS_OF, tz="UTC"), 3.0)


def test_timeseries_equals_stuck_and_in_flight_at_every_moment_of_the_sample() -> None:
    ledger = generate("2024-07-01", days=2)
    as_of = pd.Timestamp("2024-06-30T17:45", tz="UTC")
    out = pending.timeseries(ledger, freq="6h", as_of=as_of)
    assert out["timestamp"].iloc[-1] == as_of  # the last moment: as_of itself
    assert (out["timestamp"].diff().dropna() <= pd.Timedelta(hours=6)).all()
    for row in out.iloc[1::2].itertuples(index=False):
        late = pending.stuck(ledger, as_of=row.timestamp)
        total = pending.in_flight(ledger, as_of=row.timestamp, by=None).iloc[0]
        assert row.never_minted_count == len(late)
        assert row.never_minted_raw == late["amount_raw"].sum()
        assert row.in_flight_raw == total["amount_raw"]
        assert row.pending_count + row.never_minted_count == total["count"]
    # never-minted transfers pile up; what is pending stays what is on its way
    assert out["never_minted_count"].iloc[-1] > out["pending_count"].iloc[-1]


def test_timeseries_edges_and_errors(ledger) -> None:
    empty = pending.timeseries(schema.empty("ledger"))
    assert empty.empty
    assert "never_minted" in empty.columns
    with pytest.raises(ValueError, match="fixed length"):
        pending.timeseries(ledger, freq="MS")
    with pytest.raises(ValueError, match="freq"):
        pending.timeseries(ledger, freq="often")
    with pytest.raises(ValueError, match="factor"):
        pending.timeseries(ledger, factor=0)
    transfers = make_transfers([{"time": "2024-07-01", "src": 0, "dst": 6, "amount": 1}])
    with pytest.raises(DataError, match="burn time"):
        pending.timeseries(transfers)
