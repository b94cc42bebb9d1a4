"""latency.by_route and latency.timeseries against hand-worked numbers and plain pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.frames import make_transfers
from analysis.ledgers import make_ledger, v2
from cctx_research import schema
from cctx_research.analysis import latency
from cctx_research.analysis.results import result_info
from cctx_research.errors import DataError
from cctx_research.service.loading import to_ledger
from cctx_research.service.sample import generate

# ethereum->base: latencies 100, 200, 300, 400 s (and one pending); base->arbitrum: 10 s
ROWS = [
    {"src": "ethereum", "dst": "base", "amount": 1, "burn": "2024-07-01T00:00:00",
     "mint": "2024-07-01T00:01:40", "version": 1},
    {"src": "ethereum", "dst": "base", "amount": 1, "burn": "2024-07-01T00:00:00",
     "mint": "2024-07-01T00:03:20", "version": 1},
    {"src": "ethereum", "dst": "base", "amount": 1, "burn": "2024-07-02T00:00:00",
     "mint": "2024-07-02T00:05:00", **v2(2000)},
    {"src": "ethereum", "dst": "base", "amount": 1, "burn": "2024-07-02T00:00:00",
     "mint": "2024-07-02T00:06:40", **v2(1000)},
    {"src": "ethereum", "dst": "base", "amount": 1, "burn": "2024-07-02T00:00:00"},
    {"src": "base", "dst": "arbitrum", "amount": 1, "burn": "2024-07-01T12:00:00",
     "mint": "2024-07-01T12:00:10", **v2(1000)},
]  # fmt: skip


@pytest.fixture
def ledger() -> pd.DataFrame:
    return make_ledger(ROWS)


def test_by_route_by_hand(ledger) -> None:
    out = latency.by_route(ledger)
    assert list(out.columns) == [
        "source_chain", "destination_chain", "count", "median_s", "p10_s", "p90_s", "ambiguous"
    ]  # fmt: skip
    assert out["ambiguous"].tolist() == [0, 0]
    assert out["source_chain"].astype(str).tolist() == ["ethereum", "base"]
    eth = out.iloc[0]
    assert eth["count"] == 4
    assert eth["median_s"] == 250.0
    # linear interpolation over 100, 200, 300, 400: 10% -> 130, 90% -> 370
    assert eth["p10_s"] == pytest.approx(130.0)
    assert eth["p90_s"] == pytest.approx(370.0)
    assert out.iloc[1][["count", "median_s"]].tolist() == [1, 10.0]
    assert isinstance(out["source_chain"].dtype, pd.CategoricalDtype)
    assert out["count"].dtype == np.int64
    assert result_info(out).span == (
        pd.Timestamp("2024-07-01", tz="UTC"),
        pd.Timestamp("2024-07-02", tz="UTC"),
    )


def test_by_finality_and_version(ledger) -> None:
    out = latency.by_route(ledger, by=["finality", "cctp_version"])
    # columns in the canonical order whatever the order asked
    assert list(out.columns[:4]) == [
        "source_chain", "destination_chain", "cctp_version", "finality"
    ]  # fmt: skip
    eth = out[out["source_chain"] == "ethereum"]
    got = {
        (int(v), str(f)): (c, m)
        for v, f, c, m in eth[["cctp_version", "finality", "count", "median_s"]].itertuples(
            index=False
        )
    }
    # V1 is standard: attestation always waits for finality
    assert got == {
        (1, "standard"): (2, 150.0),
        (2, "standard"): (1, 300.0),
        (2, "fast"): (1, 400.0),
    }


def test_unknown_finality_when_version_and_threshold_are_missing() -> None:
    ledger = make_ledger(
        [{"src": 0, "dst": 6, "amount": 1, "burn": "2024-07-01", "mint": "2024-07-01T00:01:00"}],
        v2_columns=False,
    )
    assert "cctp_version" not in ledger.columns
    out = latency.by_route(ledger, by="finality")
    assert out["finality"].astype(str).tolist() == ["unknown"]
    assert "cctp_version" not in ledger.columns  # the caller's frame is left alone


def test_matches_plain_pandas_on_the_sample() -> None:
    ledger = generate("2024-07-01", days=2)
    out = latency.by_route(ledger).set_index(["source_chain", "destination_chain"])
    done = ledger.dropna(subset=["mint_timestamp"])
    seconds = (done["mint_timestamp"] - done["burn_timestamp"]).dt.total_seconds()
    expected = seconds.groupby([done["source_domain"], done["destination_domain"]])
    assert len(out) == expected.ngroups
    for (src, dst), values in expected:
        from cctx_research import chains

        row = out.loc[(chains.chain_name(src), chains.chain_name(dst))]
        assert row["count"] == len(values)
        assert row["median_s"] == pytest.approx(values.median())
        assert row["p90_s"] == pytest.approx(values.quantile(0.9))


def test_edge_cases(ledger) -> None:
    empty = latency.by_route(schema.empty("ledger"))
    assert empty.empty
    assert list(empty.columns)[-2:] == ["p90_s", "ambiguous"]
    assert result_info(empty).span == (None, None)
    all_pending = make_ledger([{"src": 0, "dst": 6, "amount": 5, "burn": "2024-07-01"}])
    assert latency.by_route(all_pending).empty
    one = latency.by_route(ledger[ledger["source_domain"] == 6])
    assert len(one) == 1
    assert one["median_s"].iloc[0] == 10.0


def test_no_burn_times_is_a_clear_error() -> None:
    transfers = make_transfers([{"time": "2024-07-01", "src": 0, "dst": 6, "amount": 1}])
    for data in (transfers, to_ledger(transfers)):
        with pytest.raises(DataError) as info:
            latency.by_route(data)
        message = str(info.value)
        assert "burn time" in message
        assert "cctx_research.load(" in message
        assert "load_sample()" in message
        assert "report --data" in message


def test_bad_arguments(ledger) -> None:
    with pytest.raises(ValueError, match="by='route'"):
        latency.by_route(ledger, by="route")
    with pytest.raises(TypeError, match="by must"):
        latency.by_route(ledger, by=3)
    with pytest.raises(TypeError, match="ledger must be a pandas DataFrame"):
        latency.by_route([1, 2])
    with pytest.raises(DataError, match="missing columns"):
        latency.by_route(pd.DataFrame({"burn_timestamp": []}))
    with pytest.raises(ValueError, match="freq"):
        latency.timeseries(ledger, freq="often")


def test_timeseries_by_hand(ledger) -> None:
    out = latency.timeseries(ledger, freq="1D")
    assert list(out.columns) == [
        "timestamp", "source_chain", "destination_chain", "count", "median_s"
    ]  # fmt: skip
    # two days x two routes, every cell present
    assert len(out) == 4
    cells = {
        (ts.day, str(s)): (c, m)
        for ts, s, c, m in out[["timestamp", "source_chain", "count", "median_s"]].itertuples(
            index=False
        )
    }
    assert cells[(1, "ethereum")] == (2, 150.0)
    assert cells[(2, "ethereum")] == (2, 350.0)
    assert cells[(1, "base")] == (1, 10.0)
    count, median = cells[(2, "base")]
    assert count == 0
    assert np.isnan(median)
    assert out["timestamp"].is_monotonic_increasing
    assert result_info(out).freq == "1D"


def test_timeseries_by_finality_and_empty(ledger) -> None:
    out = latency.timeseries(ledger, freq="1D", by="finality")
    fast = out[(out["source_chain"] == "ethereum") & (out["finality"] == "fast")]
    assert fast["count"].tolist() == [0, 1]
    assert latency.timeseries(schema.empty("ledger")).empty


def test_identical_transfers_are_counted_as_ambiguous(ledger) -> None:
    """Transfers linked among identical ones are counted per route: their latency is uncertain."""
    marked = ledger.copy()
    eth = (marked["source_domain"] == 0) & marked["mint_timestamp"].notna()
    chosen = np.flatnonzero(eth.to_numpy())[:2]
    pairing = np.full(len(marked), "exact", dtype=object)
    pairing[chosen] = "content_ambiguous"
    marked["pairing"] = pd.array(pairing, dtype="string[pyarrow]")
    out = latency.by_route(marked)
    assert out["ambiguous"].tolist() == [2, 0]  # ethereum -> base, then base -> ethereum
    assert out["count"].tolist() == latency.by_route(ledger)["count"].tolist()
