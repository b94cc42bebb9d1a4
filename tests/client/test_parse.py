"""JSON -> frames: exact amounts, UTC times, addresses, chains, empty frames."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cctx_research import addressing, schema
from cctx_research.client import parse
from cctx_research.errors import ResponseSchemaError

ADDR = "0x" + "Ab" * 20


def summary(**changes):
    record = {
        "id": "1_0_6",
        "amount": 1_500_000,
        "timestamp": 1719792000,
        "isCompleted": True,
        "sourceDomain": "0",
        "destinationDomain": "6",
        "mintRecipient": "0x" + "0" * 24 + ADDR[2:],
        "messageSender": ADDR,
        "burnToken": ADDR.lower(),
        "destinationCaller": "0x" + "0" * 64,
        "detinationTokenMessenger": ADDR,
    }
    record.update(changes)
    return record


def test_transfers_columns_and_values():
    df = parse.transfers([summary(), summary(id="2_0_42", destinationDomain="42")])
    schema.validate(df, "transfers", extra=False)
    row = df.iloc[0]
    assert row["amount_raw"] == 1_500_000
    assert row["amount"] == 1.5
    assert row["timestamp"] == pd.Timestamp("2024-07-01", tz="UTC")
    assert row["mint_recipient"] == ADDR.lower()
    assert row["destination_caller"] == "0x" + "0" * 40
    assert row["destination_token_messenger"] == ADDR.lower()
    assert row["source_chain"] == "ethereum"
    assert row["destination_chain"] == "base"
    assert df.iloc[1]["destination_chain"] == "domain-42"
    assert "domain-42" in df["destination_chain"].cat.categories


@pytest.mark.parametrize("value", [2**62, float(2**52), "123456789012345678", 0])
def test_amounts_are_exact_integers(value):
    df = parse.transfers([summary(amount=value)])
    assert df["amount_raw"].iloc[0] == int(value)


@pytest.mark.parametrize("value", [1.5, "1.5", None, True, float("nan"), 2.0**60])
def test_inexact_amounts_are_schema_errors(value):
    with pytest.raises(ResponseSchemaError):
        parse.transfers([summary(amount=value)])


@pytest.mark.parametrize(
    "value",
    [1719792000, 1719792000000, 1719792000.0, "1719792000", "2024-07-01T00:00:00Z"],
)
def test_timestamps_seconds_milliseconds_and_strings(value):
    ts = parse.timestamps([value])
    assert ts[0] == pd.Timestamp("2024-07-01", tz="UTC")
    assert str(ts.tz) == "UTC"


def test_mixed_seconds_and_milliseconds():
    ts = parse.timestamps([1719792000, 1719792001500])
    assert list(ts) == [
        pd.Timestamp("2024-07-01", tz="UTC"),
        pd.Timestamp("2024-07-01T00:00:01.5", tz="UTC"),
    ]


def test_missing_required_field_is_a_schema_error():
    record = summary()
    del record["amount"]
    with pytest.raises(ResponseSchemaError, match="amount"):
        parse.transfers([record])


def test_addresses():
    out = parse.addresses(
        [
            "0x" + "0" * 24 + "AB" * 20,  # bytes32-padded EVM -> 20 bytes
            "0x" + "AB" * 20,  # 20-byte, mixed case -> lower
            "0x" + "11" * 32,  # a real 32-byte value (not padded) -> kept, lower
            "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV",  # base58 -> unchanged
            None,
        ]
    )
    assert list(out[:4]) == [
        "0x" + "ab" * 20,
        "0x" + "ab" * 20,
        "0x" + "11" * 32,
        "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV",
    ]
    assert out.isna().iloc[4]
    assert out.dtype == schema.STRING


@given(st.binary(min_size=20, max_size=20), st.booleans(), st.booleans())
def test_address_normalisation_property(raw, padded, upper):
    hex20 = raw.hex()
    text = "0x" + ("0" * 24 if padded else "") + hex20
    text = text.upper().replace("0X", "0x") if upper else text
    assert addressing.normalize_address(text) == "0x" + hex20
    assert parse.addresses([text]).iloc[0] == "0x" + hex20


@given(st.lists(st.integers(min_value=0, max_value=2**62), max_size=50))
def test_amounts_property(values):
    out = parse.raw_amounts(values)
    assert out.dtype == np.int64
    assert out.tolist() == values


@given(
    st.lists(st.integers(min_value=100_000_000, max_value=4_000_000_000), min_size=1, max_size=30),
    st.booleans(),
)
def test_timestamps_property(seconds, as_ms):
    # seconds since 1973: in milliseconds they are above 1e11, so they are recognised
    values = [s * 1000 for s in seconds] if as_ms else seconds
    ts = parse.timestamps(values)
    assert (ts.asi8 // 1_000_000_000).tolist() == seconds


@pytest.mark.parametrize("kind", ["transfers", "received", "top_addresses"])
def test_empty_frames_have_the_full_schema(kind):
    fn = {
        "transfers": lambda: parse.transfers([]),
        "received": lambda: parse.received([], address=ADDR),
        "top_addresses": lambda: parse.top_addresses([]),
    }[kind]
    df = fn()
    assert df.empty
    schema.validate(df, kind, extra=False)


def test_received_uses_chain_ids():
    items = [
        {
            "id": "x",
            "amount": 10,
            "timestamp": 1719792000,
            "sourceChain": "8453",
            "destinationChain": "999999",
            "transactionType": "mint",
            "transactionHash": "0x" + "AA" * 32,
        },
    ]
    df = parse.received(items, address=ADDR.lower())
    schema.validate(df, "received", extra=False)
    assert df["source_chain"].iloc[0] == "base"
    assert df["destination_chain"].iloc[0] == "chain-999999"
    assert df["tx_hash"].iloc[0] == "0x" + "aa" * 32


def test_volume_row_and_top():
    row = parse.volume(
        {
            "mintVolume": 3_000_000,
            "burnVolume": 1_000_000,
            "mintCount": 3,
            "burnCount": 1,
            "totalVolume": 4_000_000,
            "totalCount": 4,
        },
        start=pd.Timestamp("2024-07-01", tz="UTC"),
        end=pd.Timestamp("2024-07-02", tz="UTC"),
    )
    assert row["mint_volume"] == 3.0
    assert row["total_volume"] == 4.0
    assert row["total_count"] == 4
    top = parse.top_addresses([{"address": ADDR, "totalVolume": "5000000", "transactionCount": 2}])
    schema.validate(top, "top_addresses", extra=False)
    assert top["volume"].iloc[0] == 5.0
    assert top["address"].iloc[0] == ADDR.lower()


@pytest.mark.parametrize(
    ("check", "body"),
    [
        (parse.check_mints, {"not": "a list"}),
        (parse.check_mints, [{"transactions": "nope"}]),
        (parse.check_received, []),
        (parse.check_transaction, {"transaction": None}),
        (parse.check_volume, {"mintVolume": 1}),
        (parse.check_top, {"topSenders": []}),
    ],
)
def test_shape_checks(check, body):
    with pytest.raises(ResponseSchemaError):
        check(body)


def test_transfers_parse_84k_rows():
    # the speed of this path is figure 1 of benchmarks/run.py, not a test
    records = [summary(id=f"{i}_0_6", timestamp=1719792000 + i) for i in range(84_000)]
    df = parse.transfers(records)
    assert len(df) == 84_000
    assert df["transfer_id"].is_unique
    assert df["timestamp"].is_monotonic_increasing
    assert df["timestamp"].iloc[-1] == pd.Timestamp(1719792000 + 83_999, unit="s", tz="UTC")
