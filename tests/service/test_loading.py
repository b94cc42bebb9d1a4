"""Loading --data files: ledger and transfers kinds, Parquet and CSV, and bad files."""

from __future__ import annotations

import pandas as pd
import pytest

from cctx_research.errors import DataError
from cctx_research.service.loading import load_ledger, to_ledger
from cctx_research.service.store import Store

from .conftest import CLOCK, CLOCK_S, make_ledger


@pytest.fixture(scope="module")
def small() -> pd.DataFrame:
    return make_ledger(300, seed=3)


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".csv.gz"])
def test_ledger_files_round_trip(tmp_path, small, suffix):
    path = tmp_path / f"ledger{suffix}"
    if suffix == ".parquet":
        small.to_parquet(path)
    else:
        small.to_csv(path, index=False)
    loaded = load_ledger(path)
    assert loaded.attrs["cctx"]["source"] == str(path)
    a, b = Store(loaded, clock=CLOCK), Store(small, clock=CLOCK)
    window = (CLOCK_S - 3 * 86_400, CLOCK_S)
    assert a.volume(*window) == b.volume(*window)
    assert a.mints(*window, limit=1000) == b.mints(*window, limit=1000)
    h = small["mint_tx_hash"].dropna().iloc[0]
    assert a.transaction(h) == b.transaction(h)


def transfers_from(ledger: pd.DataFrame) -> pd.DataFrame:
    done = ledger["mint_timestamp"].notna()
    return pd.DataFrame(
        {
            "transfer_id": ledger["transfer_id"],
            "timestamp": ledger["mint_timestamp"].where(done, ledger["burn_timestamp"]),
            "amount": ledger["amount_raw"] / 1e6,
            "amount_raw": ledger["amount_raw"],
            "is_completed": done,
            "source_domain": ledger["source_domain"],
            "destination_domain": ledger["destination_domain"],
            "mint_recipient": ledger["mint_recipient"],
            "message_sender": ledger["message_sender"],
            "burn_token": ledger["burn_token"],
            "destination_caller": ledger["destination_caller"],
            "destination_token_messenger": ledger["destination_token_messenger"],
        }
    )


def test_transfers_files_become_ledgers_without_hashes(tmp_path, small):
    frame = transfers_from(small)
    path = tmp_path / "transfers.csv"
    frame.to_csv(path, index=False)
    ledger = load_ledger(path)
    assert ledger["burn_tx_hash"].isna().all()
    done = frame["is_completed"].to_numpy()
    assert (ledger["mint_timestamp"].notna().to_numpy() == done).all()
    assert (ledger.loc[done, "burn_timestamp"] == ledger.loc[done, "mint_timestamp"]).all()
    store = Store(ledger, clock=CLOCK + pd.Timedelta(days=1))
    v = store.volume(0, CLOCK_S + 86_400)
    assert v["burnCount"] == len(frame)
    assert v["mintCount"] == int(done.sum())
    assert v["mintVolume"] == int(frame.loc[done, "amount_raw"].sum())
    with pytest.raises(Exception, match="no transaction"):
        store.transaction(small["burn_tx_hash"].iloc[0])
    who = frame["mint_recipient"].iloc[0]
    items = store.received(who, 0, CLOCK_S + 86_400, limit=1000)["transactions"]
    assert items
    assert all(i["transactionHash"] == "" for i in items)


def test_transfers_with_amount_only(small):
    frame = transfers_from(small).drop(columns="amount_raw")
    assert (to_ledger(frame)["amount_raw"].to_numpy() == small["amount_raw"].to_numpy()).all()


def test_missing_columns_are_named(tmp_path, small):
    path = tmp_path / "bad.parquet"
    small.drop(columns=["burn_block", "message_sender"]).to_parquet(path)
    with pytest.raises(DataError) as info:
        load_ledger(path)
    text = str(info.value)
    assert "burn_block" in text
    assert "message_sender" in text
    assert "the closest is cctx's 'ledger' table" in text  # one line: the closest table


@pytest.mark.parametrize(
    ("column", "value", "what"),
    [
        ("amount_raw", "lots", "not an integer"),
        ("burn_timestamp", "yesterday-ish", "ISO 8601"),
        ("source_domain", "1.5", "not an integer"),
        ("burn_tx_hash", "0xzz", "transaction hash"),
        ("mint_recipient", "bob", "not an address"),
    ],
)
def test_unparsable_values_are_named(tmp_path, small, column, value, what):
    """The error names the column, the value and (for coerced columns) its line."""
    frame = small.astype({column: object})
    frame.loc[7, column] = value
    path = tmp_path / "bad.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(DataError, match=what) as info:
        Store.from_file(path)
    assert column in str(info.value)
    assert value in str(info.value)


def test_missing_and_unknown_files(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        load_ledger(tmp_path / "nope.parquet")
    other = tmp_path / "data.json"
    other.write_text('{"x": 1}')
    with pytest.raises(DataError, match="matches no known format"):
        load_ledger(other)
    unknown = tmp_path / "data.txt"
    unknown.write_text("x")
    with pytest.raises(DataError, match=r"name it \.csv, \.parquet or \.json"):
        load_ledger(unknown)
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"not parquet at all")
    with pytest.raises(DataError, match="cannot read"):
        load_ledger(broken)
