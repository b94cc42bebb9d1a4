"""load() of Dune, XChainDataGen and the toolkit's own frames, from fixtures written from
each format's documented columns (tests/fixtures/dune, tests/fixtures/xchaindatagen)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import cctx_research as cctx
from cctx_research import schema
from cctx_research.provenance import Provenance, attach, provenance
from cctx_research.service.sample import generate

FIXTURES = Path(__file__).parent.parent / "fixtures"
DUNE = FIXTURES / "dune"
XCDG = FIXTURES / "xchaindatagen"
PER_CHAIN = {
    "circle_ethereum_tokenmessenger_evt_depositforburn.csv": "ethereum",
    "circle_base_messagetransmitter_evt_messagereceived.csv": "base",
    "circle_base_tokenmessenger_evt_mintandwithdraw.csv": "base",
}


def test_dune_flows_rows_are_paired_by_the_source_and_other_bridges_skipped():
    ledger = cctx.load(DUNE / "bridges_evms_flows.csv")
    assert ledger["transfer_id"].tolist() == ["1001_1_8453", "2002_43114_42161"]
    assert (ledger["pairing"] == "source").all()
    first = ledger.iloc[0]
    assert first["amount_raw"] == 123_456_789_012
    assert first["burn_timestamp"] == pd.Timestamp("2024-07-01T10:00:11Z")
    assert first["mint_block"] == 16_600_000
    assert ledger.iloc[1]["source_domain"] == 1  # Dune's "avalanche_c"
    record = provenance(ledger)
    assert record.format == "dune"
    assert record.count["skipped_other_bridges"] == 1
    assert record.count["rows_read"] == 3


def test_dune_deposits_and_withdrawals_pair_exactly_on_nonce():
    files = [DUNE / "bridges_evms_deposits.csv", DUNE / "bridges_evms_withdrawals.csv"]
    ledger = cctx.load(files)
    by_id = ledger.set_index("transfer_id")["pairing"].to_dict()
    assert by_id == {
        "3003_1_8453": "exact",
        "3004_1_42161": "pending",
        "4000_43114_8453": "mint_only",
    }
    exact = ledger.set_index("transfer_id").loc["3003_1_8453"]
    # sub-second block times are kept exactly
    assert exact["mint_timestamp"] == pd.Timestamp("2024-07-02T08:16:40.500Z")
    # amounts beyond 2**32 stay exact
    assert ledger.set_index("transfer_id").loc["3004_1_42161", "amount_raw"] == 99_999_999_999_999


def test_dune_decoded_tables_pair_mints_through_message_received():
    ledger = cctx.load([DUNE / name for name in PER_CHAIN], chain=PER_CHAIN)
    assert ledger["transfer_id"].tolist() == ["5005_1_8453"]
    row = ledger.iloc[0]
    assert row["pairing"] == "exact"
    assert row["mint_tx_hash"] == "0x" + "6" * 62 + "01"
    assert row["destination_token_messenger"] == "0x1682ae6375c4e4a97e4b583bc394c861a46d8962"
    assert row["mint_recipient"] == "0x" + f"{0xB7:040x}"  # bytes32 padding removed


def test_dune_v2_burns_without_their_mints_are_pending_with_their_v2_fields():
    ledger = cctx.load(DUNE / "circle_multichain_tokenmessengerv2_evt_depositforburn.csv")
    row = ledger.iloc[0]
    assert row["pairing"] == "pending"
    assert row["cctp_version"] == 2
    assert (row["max_fee_raw"], row["min_finality_threshold"]) == (100_000, 1000)
    assert row["burn_timestamp"] == pd.Timestamp("2025-06-01T12:00:00.250Z")
    assert pd.isna(row["nonce"])


def test_a_whole_directory_loads_with_per_file_chains():
    chain = {DUNE / name: value for name, value in PER_CHAIN.items()}
    ledger = cctx.load(DUNE, chain=chain)
    assert len(ledger) == 7
    assert provenance(ledger).count["paired"] == 4


def test_xchaindatagen_tables_with_their_transaction_times():
    ledger = cctx.load(XCDG)
    rows = ledger.set_index("transfer_id")
    assert rows.loc["61001_42161_8453", "pairing"] == "exact"
    burned = pd.Timestamp(1719828000, unit="s", tz="UTC")
    assert rows.loc["61001_42161_8453", "burn_timestamp"] == burned
    assert rows.loc["61001_42161_8453", "mint_block"] == 16_600_900
    assert rows.loc["71002_8453_10", "pairing"] == "pending"
    assert rows.loc["81003_1_8453", "pairing"] == "source"
    assert rows.loc["81003_1_8453", "amount_raw"] == 9_999_000_000
    assert provenance(ledger).format == "xchaindatagen"


def test_xchaindatagen_without_transaction_times_counts_missing_times():
    ledger = cctx.load([XCDG / "cctp_deposit_for_burn.csv"], format="xchaindatagen")
    assert provenance(ledger).count["missing_times"] == 2
    assert ledger["burn_timestamp"].isna().all()


@pytest.fixture(scope="module")
def sample() -> pd.DataFrame:
    return generate("2024-07-01", days=1, per_day=50, seed=5)


def test_own_parquet_keeps_its_provenance_and_rows(tmp_path, sample):
    path = tmp_path / "ledger.parquet"
    attach(sample.copy(), Provenance(source="synthetic sample", synthetic=True)).to_parquet(path)
    ledger = cctx.load(path)
    assert provenance(ledger).synthetic  # the sample says so, and it stays said
    assert provenance(ledger).format == "cctx"
    cols = [c for c in schema.columns("ledger") if c != "pairing"]
    pd.testing.assert_frame_equal(
        ledger[cols].sort_values("transfer_id").reset_index(drop=True),
        sample[cols].sort_values("transfer_id").reset_index(drop=True),
        check_dtype=False,
    )


def test_own_csv_reads_its_sidecar(tmp_path, sample):
    path = tmp_path / "ledger.csv"
    sample.to_csv(path, index=False)
    (tmp_path / "ledger.csv.meta.json").write_text(
        json.dumps(Provenance(source="somewhere", synthetic=True).to_dict())
    )
    assert provenance(cctx.load(path)).synthetic


def test_hive_partitioned_dataset_is_one_source(tmp_path, sample):
    frame = sample.assign(day=sample["burn_timestamp"].dt.strftime("%Y-%m-%d"))
    frame.to_parquet(tmp_path / "dataset", partition_cols=["day"])
    ledger = cctx.load(tmp_path / "dataset")
    assert len(ledger) == len(sample)
    assert provenance(ledger).files == (str(tmp_path / "dataset"),)


def test_fetch_json_loads(tmp_path):
    from cctx_research.cli import main

    out = tmp_path / "mints.json"
    code = main(
        ["fetch", "mints", "--sample", "--as-of", "2024-07-01", "--start", "2024-06-30",
         "--end", "2024-07-01", "--no-cache", "--no-progress", "--out", str(out)]
    )  # fmt: skip
    assert code == 0
    ledger = cctx.load(out)
    written = json.loads(out.read_text())
    assert len(ledger) == len(written)
    assert ledger["mint_timestamp"].notna().all()
    assert int(ledger["amount_raw"].sum()) == sum(r["amount_raw"] for r in written)


def test_transfers_from_ledger_runs_the_analysis():
    from cctx_research.analysis import addresses, flows, volumes

    ledger = cctx.load(DUNE / "bridges_evms_flows.csv")
    transfers = cctx.transfers_from_ledger(ledger)
    schema.validate(transfers, "transfers")
    assert transfers["is_completed"].all()
    assert provenance(transfers).operation == "transfers_from_ledger"
    matrix = flows.matrix(transfers)
    assert float(matrix.to_numpy().sum()) == pytest.approx(123_456.789012 + 5.0)
    series = volumes.timeseries(transfers, freq="1D")
    assert float(series.select_dtypes("number").to_numpy().sum()) > 0
    top = addresses.top(transfers, role="sender", n=5)
    assert len(top) == 2


def test_dune_message_received_alone_gives_mint_only_rows_from_its_body():
    name = "circle_base_messagetransmitter_evt_messagereceived.csv"
    ledger = cctx.load(DUNE / name, chain="base")
    row = ledger.iloc[0]
    assert (row["transfer_id"], row["pairing"]) == ("5005_1_8453", "mint_only")
    assert row["amount_raw"] == 42_000_000
    assert row["message_sender"] == "0x" + f"{0xA7:040x}"
    assert row["burn_token"] == "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"
