"""The synthetic sample matches the calibration targets in data/calibration.json."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cctx_research import chains, schema
from cctx_research.service import sample

AS_OF = "2026-11-01T00:00:00Z"


@pytest.fixture(scope="module")
def ledger() -> pd.DataFrame:
    return sample.generate(AS_OF)


@pytest.fixture(scope="module")
def targets() -> dict:
    return sample.calibration()["targets"]


def usd(ledger: pd.DataFrame) -> pd.Series:
    return ledger["amount_raw"] / 1_000_000


def test_ledger_follows_schema_and_says_it_is_synthetic(ledger):
    schema.validate(ledger, "ledger")
    assert ledger.attrs["cctx"]["synthetic"] is True
    assert "synthetic" in ledger.attrs["cctx"]["source"]


def test_volume_about_2800_a_day_over_30_days(ledger, targets):
    per_day = len(ledger) / 30
    assert 0.93 * targets["per_day"] <= per_day <= 1.07 * targets["per_day"]
    span = ledger["burn_timestamp"].max() - ledger["burn_timestamp"].min()
    assert pd.Timedelta(days=29.5) < span <= pd.Timedelta(days=30)
    assert ledger["burn_timestamp"].max() <= pd.Timestamp(AS_OF)


def test_only_the_six_default_domains(ledger):
    used = set(ledger["source_domain"]) | set(ledger["destination_domain"])
    assert used == set(chains.DEFAULT_DOMAINS)
    assert (ledger["source_domain"] != ledger["destination_domain"]).all()


def test_amount_quartiles_within_tolerance(ledger, targets):
    q = np.percentile(usd(ledger), [25, 50, 75])
    for got, want in zip(q, targets["quartiles_usd"], strict=True):
        assert abs(got - want) / want <= targets["quartile_tolerance"], (got, want)


def test_whales_are_few_and_carry_most_volume(ledger, targets):
    amounts = usd(ledger)
    whale = amounts >= targets["whale_usd"]
    lo, hi = targets["whale_count_share"]
    assert lo <= whale.mean() <= hi
    lo, hi = targets["whale_volume_share"]
    assert lo <= amounts[whale].sum() / amounts.sum() <= hi
    assert amounts.max() <= 1_000_000


def test_routes_touching_ethereum_carry_larger_tickets(ledger):
    amounts = usd(ledger)
    eth = (ledger["source_domain"] == 0) | (ledger["destination_domain"] == 0)
    assert amounts[eth].mean() > 3 * amounts[~eth].mean()


def test_route_shares_follow_the_published_table(ledger, targets):
    counts = sample.calibration()["routes"]["counts"]
    share_poly = sample.calibration()["routes"]["polygon_share"]
    total = sum(counts.values())
    names = (
        ledger["source_domain"].map(chains.chain_name)
        + "->"
        + ledger["destination_domain"].map(chains.chain_name)
    )
    observed = names.value_counts(normalize=True)
    for route, count in counts.items():
        expected = (1 - share_poly) * count / total
        assert abs(observed.get(route, 0) - expected) <= targets["route_share_tolerance"], route
    polygon = names.str.contains("polygon").mean()
    assert 0.03 <= polygon <= 0.07


def test_far_fewer_senders_than_recipients(ledger):
    senders = ledger["message_sender"].nunique()
    recipients = ledger["mint_recipient"].nunique()
    assert recipients > 5 * senders
    # router-like senders: the busiest senders reach many distinct recipients
    fan_out = ledger.groupby("message_sender")["mint_recipient"].nunique()
    assert fan_out.max() > 1000


def test_hour_of_day_rhythm(ledger):
    by_hour = ledger["burn_timestamp"].dt.hour.value_counts()
    assert by_hour.max() > 1.8 * by_hour.min()
    assert by_hour.idxmax() in range(12, 19)


def test_latency_near_published_medians(ledger):
    lat = (ledger["mint_timestamp"] - ledger["burn_timestamp"]).dt.total_seconds()
    routes = sample.calibration()["latency_seconds"]["routes"]
    for route, median in routes.items():
        a, b = (chains.domain(x) for x in route.split("->"))
        sel = (ledger["source_domain"] == a) & (ledger["destination_domain"] == b)
        got = lat[sel].median()
        assert abs(got - median) / median < 0.1, (route, got, median)


def test_about_two_percent_pending(ledger, targets):
    pending = ledger["mint_timestamp"].isna()
    lo, hi = targets["pending_share"]
    assert lo <= pending.mean() <= hi
    assert ledger.loc[pending, "mint_tx_hash"].isna().all()
    assert (ledger.loc[pending, "mint_block"] == -1).all()


def test_indexer_formats(ledger):
    assert ledger["burn_tx_hash"].str.fullmatch(r"0x[0-9a-f]{64}").all()
    assert ledger["message_sender"].str.fullmatch(r"0x[0-9a-f]{40}").all()
    assert ledger["mint_recipient"].str.fullmatch(r"0x[0-9a-f]{40}").all()
    parts = ledger["transfer_id"].str.split("_", expand=True)
    assert parts[1].tolist() == [chains.chain_id(d) for d in ledger["source_domain"]]
    assert parts[2].tolist() == [chains.chain_id(d) for d in ledger["destination_domain"]]
    assert ledger["transfer_id"].is_unique
    assert ledger["burn_tx_hash"].is_unique


def test_a_day_depends_only_on_seed_and_day():
    day = sample.generate_day("2026-10-15")
    ledger_a = sample.generate("2026-10-20")
    ledger_b = sample.generate("2026-11-01T13:37:00Z")
    for ledger in (ledger_a, ledger_b):
        day_of = ledger["burn_timestamp"].dt.floor("D")
        same_day = ledger[day_of == pd.Timestamp("2026-10-15", tz="UTC")]
        pd.testing.assert_frame_equal(same_day.reset_index(drop=True), day)
    other_seed = sample.generate_day("2026-10-15", seed=7)
    assert not other_seed["burn_tx_hash"].isin(day["burn_tx_hash"]).any()


def test_bad_arguments_say_what_to_pass():
    with pytest.raises(ValueError, match="per_day"):
        sample.generate_day("2026-10-15", per_day=0)
    with pytest.raises(TypeError, match="days"):
        sample.generate("2026-10-15", days="30")
    with pytest.raises(ValueError, match="not a date"):
        sample.generate("yesterday-ish")
