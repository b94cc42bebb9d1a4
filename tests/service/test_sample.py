"""The synthetic sample matches the calibration targets in data/calibration.json."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import cctx_research as cctx
from cctx_research import addressing, chains, schema
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


def test_the_six_default_domains_solana_and_noble(ledger):
    used = set(ledger["source_domain"]) | set(ledger["destination_domain"])
    assert used == {*chains.DEFAULT_DOMAINS, 4, 5}
    assert (ledger["source_domain"] != ledger["destination_domain"]).all()


def evm_only(ledger: pd.DataFrame) -> pd.DataFrame:
    """The transfers between the six EVM chains the published V1 figures cover."""
    default = list(chains.DEFAULT_DOMAINS)
    keep = ledger["source_domain"].isin(default) & ledger["destination_domain"].isin(default)
    return ledger[keep]


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
    ledger = evm_only(ledger)
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
    # the published medians are V1's; V2 standard transfers wait for the same finality
    ledger = ledger[ledger["min_finality_threshold"].fillna(2000) == 2000]
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
    evm = evm_only(ledger)
    assert evm["burn_tx_hash"].str.fullmatch(r"0x[0-9a-f]{64}").all()
    assert evm["message_sender"].str.fullmatch(r"0x[0-9a-f]{40}").all()
    assert evm["mint_recipient"].str.fullmatch(r"0x[0-9a-f]{40}").all()
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


# --------------------------------------------------------------------------
# Solana and Noble legs, in each chain's own formats


def test_solana_and_noble_legs_at_their_share(ledger, targets):
    solana = (ledger["source_domain"] == 5) | (ledger["destination_domain"] == 5)
    noble = (ledger["source_domain"] == 4) | (ledger["destination_domain"] == 4)
    lo, hi = targets["non_evm_share"]
    assert lo <= (solana | noble).mean() <= hi
    lo, hi = targets["solana_to_noble"]
    assert lo <= solana.sum() / noble.sum() <= hi


def test_addresses_and_hashes_in_each_chains_format(ledger):
    by_src = ledger.groupby("source_domain")
    by_dst = ledger.groupby("destination_domain")
    base58 = r"[1-9A-HJ-NP-Za-km-z]{32,44}"
    assert by_src.get_group(5)["message_sender"].str.fullmatch(base58).all()
    assert (
        by_src.get_group(5)["burn_token"] == "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
    ).all()
    assert by_src.get_group(5)["burn_tx_hash"].str.fullmatch(r"[1-9A-HJ-NP-Za-km-z]{80,90}").all()
    assert by_dst.get_group(5)["mint_recipient"].str.fullmatch(base58).all()
    assert by_src.get_group(4)["message_sender"].str.fullmatch(r"noble1[02-9ac-hj-np-z]{38}").all()
    assert by_src.get_group(4)["burn_tx_hash"].str.fullmatch(r"[0-9A-F]{64}").all()
    noble_in = by_dst.get_group(4)
    assert noble_in["mint_recipient"].str.fullmatch(r"noble1[02-9ac-hj-np-z]{38}").all()
    # Noble's CCTP module account, as documented
    assert (
        noble_in["destination_token_messenger"] == "noble12l2w4ugfz4m6dd73yysz477jszqnfughxvkss5"
    ).all()
    # every address round-trips through the interface's bytes32
    for column in ("message_sender", "mint_recipient", "destination_caller"):
        side = "source_domain" if column == "message_sender" else "destination_domain"
        sample_rows = ledger.groupby(side).head(50)
        for value, domain in zip(sample_rows[column], sample_rows[side], strict=True):
            wire = addressing.to_bytes32(value, domain)
            assert addressing.from_bytes32(wire, domain) == value


# --------------------------------------------------------------------------
# CCTP V2


def v2(ledger: pd.DataFrame) -> pd.DataFrame:
    return ledger[ledger["cctp_version"] == 2]


def test_v2_columns_are_filled_by_version(ledger):
    v1 = ledger[ledger["cctp_version"] == 1]
    assert set(ledger["cctp_version"].unique()) == {1, 2}
    for column in schema.LEDGER_V2[2:]:
        assert v1[column].isna().all(), column
    assert v1["nonce"].str.fullmatch(r"\d+").all()
    assert v2(ledger)["nonce"].str.fullmatch(r"0x[0-9a-f]{64}").all()
    assert v2(ledger)["nonce"].is_unique
    minted = v2(ledger)[v2(ledger)["mint_timestamp"].notna()]
    pending = v2(ledger)[v2(ledger)["mint_timestamp"].isna()]
    for column in ("max_fee_raw", "min_finality_threshold", "hook_data"):
        assert v2(ledger)[column].notna().all(), column
    for column in ("fee_raw", "finality_threshold_executed"):
        assert minted[column].notna().all(), column
        assert pending[column].isna().all(), column
    assert set(v2(ledger)["min_finality_threshold"]) == {1000, 2000}
    assert (minted["finality_threshold_executed"] == minted["min_finality_threshold"]).all()
    # Noble has no V2 contracts
    assert not (v2(ledger)[["source_domain", "destination_domain"]] == 4).any().any()


def test_v2_and_fast_shares(ledger, targets):
    eligible = ~((ledger["source_domain"] == 4) | (ledger["destination_domain"] == 4))
    lo, hi = targets["v2_share"]
    assert lo <= (ledger.loc[eligible, "cctp_version"] == 2).mean() <= hi
    fast_sources = chains.fast_source_domains()
    v2_fast_src = v2(ledger)[v2(ledger)["source_domain"].isin(fast_sources)]
    lo, hi = targets["fast_share_of_v2_fast_sources"]
    assert lo <= (v2_fast_src["min_finality_threshold"] == 1000).mean() <= hi
    # chains whose standard attestation is already fast never send fast transfers
    slow = v2(ledger)[~v2(ledger)["source_domain"].isin(fast_sources)]
    assert len(slow) > 0
    assert (slow["min_finality_threshold"] == 2000).all()


def test_fast_transfers_attested_in_seconds(ledger, targets):
    fast = v2(ledger)[v2(ledger)["min_finality_threshold"] == 1000]
    lat = (fast["mint_timestamp"] - fast["burn_timestamp"]).dt.total_seconds()
    tol = targets["fast_median_tolerance"]
    for name, want in targets["fast_median_seconds"].items():
        got = lat[fast["source_domain"] == chains.domain(name)].median()
        assert abs(got - want) / want <= tol, (name, got, want)
    standard = v2(ledger)[v2(ledger)["min_finality_threshold"] == 2000]
    slow = (standard["mint_timestamp"] - standard["burn_timestamp"]).dt.total_seconds()
    assert lat.median() * 20 < slow.median()


def test_fast_fees_at_the_published_basis_points(ledger, targets):
    minted = v2(ledger)[v2(ledger)["mint_timestamp"].notna()]
    fast = minted[minted["min_finality_threshold"] == 1000]
    standard = minted[minted["min_finality_threshold"] == 2000]
    assert (standard["fee_raw"] == 0).all()
    assert (fast["fee_raw"] >= 1).all()
    assert (fast["fee_raw"] <= fast["max_fee_raw"]).all()
    for name, want in targets["fast_fee_bps"].items():
        rows = fast[fast["source_domain"] == chains.domain(name)]
        bps = rows["fee_raw"].sum() / rows["amount_raw"].sum() * 10_000
        assert abs(bps - want) / want <= targets["fast_fee_bps_tolerance"], (name, bps)
    # maxFee carries a 1 bp buffer over the fee, rounded up to a whole unit
    buffer = fast["max_fee_raw"] - fast["fee_raw"]
    assert (buffer <= fast["amount_raw"] // 10_000 + 1).all()


def test_hooks_on_a_small_share_of_v2(ledger, targets):
    hooks = v2(ledger)["hook_data"]
    with_hook = hooks != "0x"
    lo, hi = targets["hook_share_of_v2"]
    assert lo <= with_hook.mean() <= hi
    assert hooks[with_hook].str.fullmatch(r"0x(?:[0-9a-f]{2}){32,128}").all()


def test_stuck_transfers_are_old_and_few(ledger, targets):
    lat = (ledger["mint_timestamp"] - ledger["burn_timestamp"]).dt.total_seconds()
    route = [ledger["source_domain"], ledger["destination_domain"]]
    median = lat.groupby(route).transform("median")
    age = (pd.Timestamp(AS_OF) - ledger["burn_timestamp"]).dt.total_seconds()
    stuck = ledger["mint_timestamp"].isna() & (age > targets["stuck_factor"] * median)
    assert 0 < stuck.mean() <= targets["pending_share"][1]
    # in flight at the clock: minted after it (the service shows them as pending)
    in_flight = ledger["mint_timestamp"] > pd.Timestamp(AS_OF)
    assert in_flight.sum() > 0


def test_load_sample_at_the_package_face(ledger):
    import cctx_research as cctx
    from cctx_research.provenance import provenance

    loaded = cctx.load_sample(as_of=AS_OF)
    pd.testing.assert_frame_equal(loaded, sample.in_flight_at(ledger))
    record = provenance(loaded)
    assert record.synthetic is True
    assert record.window == (pd.Timestamp(AS_OF) - pd.Timedelta(days=30), pd.Timestamp(AS_OF))
    week = cctx.load_sample(as_of=AS_OF, days=7)
    assert week["burn_timestamp"].min() > pd.Timestamp(AS_OF) - pd.Timedelta(days=7)
    with pytest.raises(ValueError, match="days"):
        cctx.load_sample(days=0)
    with pytest.raises(TypeError):
        cctx.load_sample("2026-11-01")  # keyword-only


def test_a_caller_cannot_change_the_sample_for_everyone():
    """Cached tables are copies or read-only: changing one changes no later sample."""
    before = sample.generate("2024-07-01", days=1, per_day=50, seed=3)
    cal = sample.calibration()
    cal["amounts"]["knots"] = [[0.0, 1.0], [1.0, 1.0]]
    cal["routes"]["counts"].clear()
    assert sample.calibration()["routes"]["counts"]
    after = sample.generate("2024-07-01", days=1, per_day=50, seed=3)
    pd.testing.assert_frame_equal(before, after)


def test_the_samples_actors_are_the_labelled_cast_with_its_own_shares():
    """Relayers, integrators and the rebalancer of the sample (shares: data/calibration.json)."""
    from cctx_research import labels
    from cctx_research.analysis import movements
    from cctx_research.provenance import provenance

    ledger = cctx.load_sample(as_of="2024-07-01", days=3)
    assert provenance(ledger).synthetic
    minted = ledger["mint_timestamp"].notna()
    assert ledger.loc[minted, "relayer"].notna().all()
    assert ledger.loc[~minted, "relayer"].isna().all()
    zero = "0x" + "00" * 20
    called = minted & ledger["destination_caller"].notna() & (ledger["destination_caller"] != zero)
    evm_called = called & ledger["destination_caller"].str.startswith("0x")
    assert evm_called.any()
    assert (ledger.loc[evm_called, "relayer"] == ledger.loc[evm_called, "destination_caller"]).all()
    named = labels.attach(ledger[["message_sender", "source_domain", "destination_domain"]])
    integrator = (named["message_sender_kind"] == "integrator").fillna(False)
    share = float(integrator.mean())
    assert 0.15 < share < 0.5  # half of the routed transfers, where the chain has an integrator
    rebalancer = labels.bundled().query("label == 'Hyperlane rebalancer'")["address"].iloc[0]
    own = ledger[(ledger["message_sender"] == rebalancer)
                 & (ledger["mint_recipient"] == rebalancer)]
    assert len(own) > 0
    caught = movements.rebalancing(ledger, rules=["same_address"])
    assert set(own["transfer_id"]) <= set(caught["transfer_id"])


def test_the_samples_burns_name_their_signers():
    """burn_tx_from: the depositor sending for itself, a user behind a contract."""
    from cctx_research import labels
    from cctx_research.analysis import actors

    ledger = cctx.load_sample(as_of="2024-07-01", days=3)
    assert ledger["burn_tx_from"].notna().all()
    named = labels.attach(ledger[["message_sender", "source_domain", "destination_domain"]])
    contract = (named["message_sender_kind"] == "integrator").fillna(False).to_numpy()
    signed = ledger["burn_tx_from"].to_numpy()
    sender = ledger["message_sender"].to_numpy()
    assert (signed[contract] != sender[contract]).all()  # never the contract itself
    own = ~contract & (signed == sender)
    assert own.mean() > 0.3  # most direct senders sign for themselves
    # the integrators' end users are many: the analysis counts them
    table = actors.integrators(ledger)
    mayan = table[table["integrator_label"].fillna("").str.startswith("Mayan")]
    assert (mayan["end_users"] > 100).all()
    # drawn from the seed: the same sample twice, the same signers
    again = cctx.load_sample(as_of="2024-07-01", days=3)
    pd.testing.assert_series_equal(ledger["burn_tx_from"], again["burn_tx_from"])


@pytest.mark.parametrize("as_of", [AS_OF, "2026-11-01T13:27:05Z"])
def test_nothing_in_the_sample_is_later_than_its_clock(ledger, as_of):
    clock = pd.Timestamp(as_of)
    whole = sample.generate(as_of, days=7)
    later = whole["mint_timestamp"] > clock
    assert later.sum() > 10  # the generator does mint after the clock: these were in flight
    week = cctx.load_sample(as_of=as_of, days=7)
    assert week["burn_timestamp"].max() <= clock
    assert week["mint_timestamp"].max() <= clock
    assert len(week) == len(whole)
    in_flight = week[later.to_numpy()]
    assert in_flight["mint_timestamp"].isna().all()
    assert in_flight["mint_tx_hash"].isna().all()
    assert (in_flight["mint_block"] == -1).all()
    assert in_flight["relayer"].isna().all()
    assert in_flight["fee_raw"].isna().all()
    untouched = week[~later.to_numpy()]
    pd.testing.assert_frame_equal(untouched, whole[~later])
