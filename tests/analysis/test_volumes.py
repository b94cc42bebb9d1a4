from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from analysis.frames import random_transfers
from cctx_research import schema
from cctx_research.analysis import volumes
from cctx_research.errors import DataError
from cctx_research.provenance import Provenance, attach

DAYS = pd.date_range("2024-06-01", periods=3, freq="1D", tz="UTC")


# ------------------------------------------------------------- timeseries


def test_timeseries_daily_totals(small):
    t = volumes.timeseries(small)
    assert list(t.columns) == ["timestamp", "volume", "count"]
    assert list(t["timestamp"]) == list(DAYS)
    assert t["volume"].tolist() == [400.0, 50.0, 150_025.5]
    assert t["count"].tolist() == [2, 1, 3]
    assert isinstance(t["timestamp"].dtype, pd.DatetimeTZDtype)
    assert t["count"].dtype == np.dtype("int64")


def test_timeseries_records_the_span_its_transfers_cover(small):
    from cctx_research.analysis.results import result_info

    assert result_info(volumes.timeseries(small)).covered is None
    window = (pd.Timestamp("2024-06-01T09:30", tz="UTC"), pd.Timestamp("2024-06-04", tz="UTC"))
    fetched = attach(small, Provenance(source="t", window=window))
    assert result_info(volumes.timeseries(fetched)).covered == window
    held = (window[0], pd.Timestamp("2024-06-02", tz="UTC"))
    fetched = attach(small, Provenance(source="t", window=window, coverage=held))
    assert result_info(volumes.timeseries(fetched, by="corridor")).covered == held


def test_timeseries_fills_empty_buckets_with_zeros(small):
    t = volumes.timeseries(small, freq="12h")
    assert len(t) == 6
    assert t["volume"].tolist() == [100.0, 300.0, 50.0, 0.0, 150_000.5, 25.0]
    assert t["count"].tolist() == [1, 1, 1, 0, 2, 1]
    assert t["timestamp"].iloc[3] == pd.Timestamp("2024-06-02T12:00Z")


def test_timeseries_by_destination_chain(small):
    t = volumes.timeseries(small, by="destination_chain")
    assert len(t) == 3 * 3  # every day x every destination seen
    assert list(t.columns) == ["timestamp", "destination_chain", "volume", "count"]
    assert t["destination_chain"].iloc[:3].astype(str).tolist() == ["ethereum", "arbitrum", "base"]
    base = t[t["destination_chain"] == "base"]
    assert base["volume"].tolist() == [400.0, 0.0, 25.0]
    assert base["count"].tolist() == [2, 0, 1]


def test_timeseries_by_corridor_carries_unknown_chain(small):
    t = volumes.timeseries(small, by="corridor")
    assert len(t) == 3 * 5
    assert {"corridor", "source_chain", "destination_chain"} <= set(t.columns)
    unknown = t[t["corridor"] == "domain-42->ethereum"]
    assert unknown["volume"].tolist() == [0.0, 0.0, 150_000.0]
    assert set(unknown["source_chain"].astype(str)) == {"domain-42"}
    assert t["volume"].sum() == pytest.approx(150_475.5)


@pytest.mark.parametrize("by", ["source_chain", "destination_chain"])
def test_timeseries_matches_pandas_on_random(rand, by):
    t = volumes.timeseries(rand, freq="1D", by=by)
    expected = (
        rand.assign(day=rand["timestamp"].dt.floor("1D"))
        .groupby(["day", by], observed=True)["amount"]
        .agg(["sum", "count"])
    )
    got = t.set_index(["timestamp", by])
    got = got[got["count"] > 0]
    assert len(got) == len(expected)
    for (day, chain), row in expected.iterrows():
        assert got.loc[(day, chain), "volume"] == pytest.approx(row["sum"])
        assert got.loc[(day, chain), "count"] == row["count"]
    n_groups = rand[by].nunique()
    assert len(t) == 30 * n_groups


def test_timeseries_empty(empty):
    for by in (None, "source_chain", "corridor"):
        t = volumes.timeseries(empty, by=by)
        assert t.empty
        assert isinstance(t["timestamp"].dtype, pd.DatetimeTZDtype)
        assert t["volume"].dtype == np.dtype("float64")


def test_timeseries_bad_options(small):
    with pytest.raises(ValueError, match="by="):
        volumes.timeseries(small, by="chain")
    with pytest.raises(ValueError, match="freq"):
        volumes.timeseries(small, freq="daily")
    with pytest.raises(TypeError, match="freq"):
        volumes.timeseries(small, freq=86400)


def test_timeseries_missing_column(small):
    with pytest.raises(DataError, match="timestamp"):
        volumes.timeseries(small.drop(columns="timestamp"))


# ----------------------------------------------------------- size buckets


def test_size_buckets_by_hand(small):
    s = volumes.size_buckets(small)
    c = s.classes
    assert c["size_class"].astype(str).tolist() == [
        "dust",
        "small",
        "retail",
        "mid",
        "large",
        "whale",
    ]
    assert c["count"].tolist() == [1, 2, 2, 0, 0, 1]
    assert c["volume"].tolist() == [0.5, 75.0, 400.0, 0.0, 0.0, 150_000.0]
    assert c["count_share"].sum() == pytest.approx(1.0)
    assert s.count == 6
    assert s.volume == 150_475.5
    assert s.quantiles[0.5] == 75.0  # median of 0.5, 25, 50, 100, 300, 150000


def test_size_bucket_edges_are_lower_inclusive(make):
    amounts = [0.999999, 1, 99.99, 100, 999.99, 1_000, 9_999.99, 10_000, 99_999.99, 100_000]
    frame = make(
        {"time": "2024-06-01", "src": "ethereum", "dst": "base", "amount": a} for a in amounts
    )
    assert volumes.size_buckets(frame).classes["count"].tolist() == [1, 2, 2, 2, 2, 1]


def test_size_buckets_quantiles_match_numpy(rand):
    s = volumes.size_buckets(rand)
    np.testing.assert_allclose(
        s.quantiles.to_numpy(), np.quantile(rand["amount"], list(s.quantiles.index))
    )
    assert s.classes["volume"].sum() == pytest.approx(rand["amount"].sum())
    assert "SizeDistribution" in repr(s)
    assert "<table" in s._repr_html_()


def test_size_buckets_empty(empty):
    s = volumes.size_buckets(empty)
    assert s.count == 0
    assert s.classes["count"].tolist() == [0] * 6
    assert s.quantiles.isna().all()
    assert np.isnan(s.mean)


# ------------------------------------------------------------ seasonality


def test_seasonality_by_hand(small):
    s = volumes.seasonality(small)
    assert len(s) == 168
    nonzero = s[s["count"] > 0].set_index(["weekday", "hour"])
    assert nonzero["volume"].to_dict() == {
        (0, 1): 0.5,  # Monday 01:00
        (0, 5): 150_000.0,
        (0, 23): 25.0,
        (5, 0): 100.0,  # Saturday 00:30
        (5, 12): 300.0,
        (6, 8): 50.0,  # Sunday
    }
    assert s.loc[s["weekday"] == 5, "day"].iloc[0] == "Sat"
    assert s["count"].sum() == 6


def test_seasonality_matches_pandas_on_random(rand):
    s = volumes.seasonality(rand).set_index(["weekday", "hour"])
    expected = rand.groupby([rand["timestamp"].dt.day_of_week, rand["timestamp"].dt.hour])[
        "amount"
    ].agg(["sum", "count"])
    for key, row in expected.iterrows():
        assert s.loc[key, "count"] == row["count"]
        assert s.loc[key, "volume"] == pytest.approx(row["sum"])


def test_seasonality_empty(empty):
    s = volumes.seasonality(empty)
    assert len(s) == 168
    assert s["count"].sum() == 0
    assert s["days"].sum() == 0
    assert s["count_per_day"].isna().all()


def test_seasonality_means_per_day_over_the_window_the_frame_records(small):
    # small runs Saturday 2024-06-01 00:30 to Monday 06-03 23:xx; fetched for a window
    # from Thursday 2024-05-30 12:00 to Tuesday 06-11 (end excluded)
    own = volumes.seasonality(small).set_index(["weekday", "hour"])
    window = (pd.Timestamp("2024-05-30T12:00", tz="UTC"), pd.Timestamp("2024-06-11", tz="UTC"))
    s = volumes.seasonality(attach(small, Provenance(source="t", window=window)))
    cells = s.set_index(["weekday", "hour"])
    # held by hand: Mondays 06-03 and 06-10; Thursday 05-30 from 12:00 and 06-06
    assert cells.loc[(0, 5), "days"] == 2
    assert cells.loc[(3, 11), "days"] == 1
    assert cells.loc[(3, 12), "days"] == 2
    assert cells.loc[(1, 0), "days"] == 1  # Tuesday 06-04 only: 06-11 is the excluded end
    assert cells.loc[(0, 5), "count_per_day"] == 0.5  # one transfer over two Mondays
    assert cells.loc[(0, 5), "volume_per_day"] == 75_000.0
    assert cells["count"].sum() == 6  # the totals are still the totals
    assert not cells["count_per_day"].isna().any()
    # without a recorded window: the data's own first to last hour
    assert own.loc[(0, 5), "days"] == 1
    assert own.loc[(2, 12), "days"] == 0
    assert np.isnan(own.loc[(2, 12), "count_per_day"])


# ------------------------------------------------------------------- kpis


def test_kpis_default_now_is_after_latest_transfer(small):
    k = volumes.kpis(small)
    assert k.loc[("24h", "volume"), "end"] == pd.Timestamp("2024-06-04T00:00Z")
    assert k.loc[("24h", "volume"), "current"] == 150_025.5
    assert k.loc[("24h", "volume"), "previous"] == 50.0
    assert k.loc[("24h", "volume"), "change"] == pytest.approx(150_025.5 / 50 - 1)
    assert k.loc[("24h", "transfers"), "current"] == 3
    assert k.loc[("24h", "senders"), "current"] == 3  # 10, 12, 13
    assert k.loc[("24h", "recipients"), "current"] == 3  # 1, 3, 4
    # three days of transfers and no recorded span: the week is not covered
    assert not k.loc[("7d", "transfers"), "current_covered"]
    assert np.isnan(k.loc[("7d", "transfers"), "current"])
    # the same rows from a source that says it holds the whole week
    week = (pd.Timestamp("2024-05-28T00:00Z"), pd.Timestamp("2024-06-04T00:00Z"))
    k = volumes.kpis(attach(small, Provenance(source="test", window=week)))
    assert k.loc[("7d", "transfers"), "current"] == 6
    assert k.loc[("7d", "senders"), "current"] == 4
    assert not k.loc[("7d", "volume"), "previous_covered"]  # the week before is not held
    assert np.isnan(k.loc[("7d", "volume"), "change"])


def test_kpis_explicit_now(small):
    k = volumes.kpis(small, now="2024-06-03")
    assert k.loc[("24h", "volume"), "current"] == 50.0
    assert k.loc[("24h", "volume"), "previous"] == 400.0
    assert k.loc[("24h", "volume"), "change"] == pytest.approx(-0.875)
    assert k.loc[("24h", "volume"), "start"] == pd.Timestamp("2024-06-02T00:00Z")
    assert k.index.get_level_values("period").unique().tolist() == ["24h", "7d", "30d"]


def test_kpis_empty(empty):
    k = volumes.kpis(empty)
    assert len(k) == 12
    assert (k["current"] == 0).all()
    assert k["start"].isna().all()
    assert isinstance(k["start"].dtype, pd.DatetimeTZDtype)


def test_kpis_bad_now(small):
    with pytest.raises(ValueError, match="now"):
        volumes.kpis(small, now="yesterday-ish")
    with pytest.raises(TypeError, match="now"):
        volumes.kpis(small, now=[2024])


# -------------------------------------------------------------- in flight


def volume_frame(burn, mint):
    n = len(burn)
    start = pd.date_range("2024-06-01", periods=n, freq="1D", tz="UTC")
    burn_raw = np.array([round(b * 10**6) for b in burn], dtype="int64")
    mint_raw = np.array([round(m * 10**6) for m in mint], dtype="int64")
    frame = pd.DataFrame(
        {
            "timestamp": start,
            "end": start + pd.Timedelta(days=1),
            "mint_volume": mint_raw / 10**6,
            "burn_volume": burn_raw / 10**6,
            "total_volume": (mint_raw + burn_raw) / 10**6,
            "mint_volume_raw": mint_raw,
            "burn_volume_raw": burn_raw,
            "mint_count": np.ones(n, dtype="int64"),
            "burn_count": np.ones(n, dtype="int64"),
            "total_count": np.full(n, 2, dtype="int64"),
        }
    )
    return schema.validate(frame, "volume")


def test_in_flight_by_hand():
    frame = volume_frame([2, 3, 3, 5, 4], [1, 2, 3, 4, 5])
    f = volumes.in_flight(frame.iloc[::-1])  # order of rows does not matter
    assert f["in_flight"].tolist() == [1.0, 2.0, 2.0, 3.0, 2.0]
    assert f["in_flight_raw"].tolist() == [10**6, 2 * 10**6, 2 * 10**6, 3 * 10**6, 2 * 10**6]
    assert f["cumulative_burn"].tolist() == [2.0, 5.0, 8.0, 13.0, 17.0]
    assert f["timestamp"].is_monotonic_increasing


def test_in_flight_empty_and_wrong_kind(small):
    f = volumes.in_flight(schema.empty("volume"))
    assert f.empty
    assert f["in_flight_raw"].dtype == np.dtype("int64")
    with pytest.raises(DataError, match="mint_volume"):
        volumes.in_flight(small)


@pytest.mark.parametrize("freq", ["7D", "2D", "6h"])
def test_fixed_length_buckets_line_up_with_the_clients_chunks(rand, freq):
    from cctx_research.times import chunk_window

    ts = volumes.timeseries(rand, freq=freq)
    step = pd.Timedelta(freq)
    assert (ts["timestamp"].astype("int64") % step.value == 0).all()
    start, end = rand["timestamp"].min(), rand["timestamp"].max()
    client_edges = [a for a, _ in chunk_window(start.floor(step), end, step)]
    assert list(ts["timestamp"]) == client_edges
    assert ts["count"].sum() == len(rand)


def test_kpis_over_periods_the_data_does_not_cover_are_nan_not_zero():
    from analysis.frames import random_transfers

    frame = random_transfers(400, days=7)
    lo = frame["timestamp"].min().floor("D")
    hi = lo + pd.Timedelta(days=7)
    attach(frame, Provenance(source="test", window=(lo, hi)))
    k = volumes.kpis(frame, now=hi)
    # 24h: both periods inside the 7 days; 7d: the previous week is not held
    assert k.loc[("24h", "volume"), "previous_covered"]
    assert k.loc[("7d", "volume"), "current_covered"]
    assert not k.loc[("7d", "volume"), "previous_covered"]
    assert np.isnan(k.loc[("7d", "volume"), "previous"])
    assert np.isnan(k.loc[("7d", "volume"), "change"])
    # 30d is not held at all: no value rather than the 7-day one again
    assert not k.loc[("30d", "transfers"), "current_covered"]
    assert np.isnan(k.loc[("30d", "transfers"), "current"])
    assert k.loc[("7d", "transfers"), "current"] == len(frame)


def test_kpis_of_a_frame_without_a_recorded_span_cover_its_own_times_only():
    """A ledger read from files records no window: its own first and last times bound it."""
    from analysis.frames import random_transfers

    frame = random_transfers(4000, days=10)  # 2024-06-01 to 2024-06-11, every few minutes
    attach(frame, Provenance(source="eth.json, base.json", operation="load", format="evm-logs"))
    k = volumes.kpis(frame)
    end = frame["timestamp"].max().floor("s") + pd.Timedelta(seconds=1)
    ts = frame["timestamp"]
    day, week = pd.Timedelta(days=1), pd.Timedelta(days=7)
    # both 24h periods and the last week lie inside the data: values, flagged covered
    assert k.loc[("24h", "transfers"), "current"] == ((ts >= end - day) & (ts < end)).sum()
    assert k.loc[("24h", "transfers"), "previous"] == (
        (ts >= end - 2 * day) & (ts < end - day)
    ).sum()
    assert k.loc[("24h", "volume"), "previous_covered"]
    assert k.loc[("7d", "transfers"), "current"] == ((ts >= end - week) & (ts < end)).sum()
    # the week before starts before the first transfer: no value, flagged, never 0
    for metric in ("volume", "transfers", "senders", "recipients"):
        row = k.loc[("7d", metric)]
        assert not row["previous_covered"]
        assert np.isnan(row["previous"])
        assert np.isnan(row["change"])
        assert not k.loc[("30d", metric), "current_covered"]
        assert np.isnan(k.loc[("30d", metric), "current"])
    # nowhere a value of 0 claimed for a period the data does not cover
    for flag, column in (("current_covered", "current"), ("previous_covered", "previous")):
        assert k.loc[~k[flag], column].isna().all()
        assert k.loc[k[flag], column].notna().all()


def test_kpis_of_an_empty_frame_at_a_given_time_cover_nothing(empty):
    k = volumes.kpis(empty, now="2024-06-03")
    assert not k["current_covered"].any()
    assert k["current"].isna().all()


# Calendar frequencies and the pandas period each must bucket by (to_period's alias).
CALENDAR = {
    "ME": "M",
    "1ME": "M",
    "MS": "M",
    "QE": "Q",
    "QS": "Q",
    "QE-MAR": "Q-MAR",
    "YE": "Y",
    "YS": "Y",
    "YS-JUL": "Y-JUN",
    "W": "W",
    "W-MON": "W-MON",
}


@pytest.mark.parametrize("freq", sorted(CALENDAR))
def test_timeseries_calendar_buckets_match_to_period(freq):
    # 400 days that include every month's last day and its final second
    rand = random_transfers(3_000, seed=3, days=400)
    ends = pd.date_range("2024-06-01", periods=13, freq="ME", tz="UTC") + pd.Timedelta(
        hours=23, minutes=59, seconds=59
    )
    extra = rand.iloc[: len(ends)].copy()
    extra["timestamp"] = ends.astype(schema.TIMESTAMP)
    frame = pd.concat([rand, extra], ignore_index=True)
    t = volumes.timeseries(frame, freq=freq)
    periods = frame["timestamp"].dt.tz_convert(None).dt.to_period(CALENDAR[freq])
    expected = frame.groupby(periods)["amount"].agg(["sum", "count"])
    expected.index = expected.index.start_time.tz_localize("UTC")
    got = t.set_index("timestamp")
    got = got[got["count"] > 0]
    assert got.index.tolist() == expected.index.tolist()
    assert got["count"].tolist() == expected["count"].tolist()
    assert got["volume"].to_numpy() == pytest.approx(expected["sum"].to_numpy())


@pytest.mark.parametrize("freq", ["B", "BME", "SME"])
def test_timeseries_refuses_frequencies_without_calendar_periods(small, freq):
    with pytest.raises(ValueError, match="no calendar period"):
        volumes.timeseries(small, freq=freq)
