"""Every method against the real local service, cross-checked with the sample's ledger."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cctx_research import chains, schema
from cctx_research.client import Client
from cctx_research.client.parse import addresses
from cctx_research.errors import ConfigError, NotFoundError

from .conftest import (
    API_KEY,
    AS_OF,
    PROJECT_ID,
    burns_in,
    ids,
    mints_in,
    raw_sum,
    received_in,
)

START, END = "2024-06-27T06:30:00Z", "2024-07-01T09:15:00Z"


def test_mints_match_the_ledger_exactly(client, ledger):
    df = client.mints(START, END)
    truth = mints_in(ledger, START, END)
    schema.validate(df, "transfers", extra=False)
    assert len(df) == len(truth) > 500
    assert ids(df) == ids(truth)
    assert raw_sum(df) == raw_sum(truth)
    assert df["transfer_id"].is_unique
    keys = list(zip(df["timestamp"], df["transfer_id"], strict=True))
    assert keys == sorted(keys)
    assert (df["amount"] == df["amount_raw"] / 1e6).all()
    assert df["is_completed"].all()
    assert str(df["timestamp"].dt.tz) == "UTC"
    assert df["timestamp"].min() >= pd.Timestamp(START)
    assert df["timestamp"].max() < pd.Timestamp(END)


def test_mints_rows_carry_the_ledger_values(client, ledger):
    df = client.mints(START, END).set_index("transfer_id")
    truth = mints_in(ledger, START, END).set_index("transfer_id").loc[df.index]
    assert (df["timestamp"] == truth["mint_timestamp"]).all()
    assert (df["amount_raw"].to_numpy() == truth["amount_raw"].to_numpy()).all()
    assert (df["source_domain"].to_numpy() == truth["source_domain"].to_numpy()).all()
    evm = {d for d in chains.all_domains() if chains.address_format(d) == "evm"}
    for col in ("mint_recipient", "message_sender", "burn_token", "destination_token_messenger"):
        want = addresses(truth[col]).to_numpy()
        assert (df[col].to_numpy() == want).all(), col
        side = "source_domain" if col in ("message_sender", "burn_token") else "destination_domain"
        on_evm = df[side].isin(evm)
        assert 0 < on_evm.sum() < len(df)  # every chain is listed, EVM and other
        assert df.loc[on_evm, col].str.fullmatch(r"0x[0-9a-f]{40}").all(), col


def test_mints_filter_by_chain_names_ids_and_lists(client, ledger):
    df = client.mints(START, END, source="base", destination=["arbitrum", 0])
    truth = mints_in(ledger, START, END)
    truth = truth[(truth.source_domain == 6) & truth.destination_domain.isin([3, 0])]
    assert ids(df) == ids(truth)
    assert set(df["source_chain"].astype(str)) == {"base"}
    assert isinstance(df["source_chain"].dtype, pd.CategoricalDtype)
    assert list(df["source_chain"].cat.categories[:4]) == [
        "ethereum",
        "avalanche",
        "optimism",
        "arbitrum",
    ]


def test_unknown_chain_lists_valid_names(client):
    with pytest.raises(ValueError, match=r"ethereum.*base"):
        client.mints(START, END, source="narnia")
    with pytest.raises(TypeError):
        client.mints(START, END, destination=1.5)


def test_mints_page_size_and_workers_do_not_change_the_result(make_client, service):
    a = make_client(service.url, cache=False, page_size=37, max_workers=3).mints(START, END)
    b = make_client(service.url, cache=False, page_size=1000, max_workers=1, chunk="6h").mints(
        START, END
    )
    pd.testing.assert_frame_equal(a, b)


def test_default_window_is_the_last_day(client, ledger):
    df = client.mints()
    truth = mints_in(ledger, AS_OF - pd.Timedelta(days=1), AS_OF)
    assert ids(df) == ids(truth)
    p = df.attrs["cctx"]["parameters"]
    assert p["end"] == AS_OF.isoformat()


def test_empty_window_has_the_full_schema(client):
    df = client.mints("2020-01-01", "2020-01-02")
    assert df.empty
    schema.validate(df, "transfers", extra=False)
    assert list(df.columns) == schema.columns("transfers")
    assert df.attrs["cctx"]["operation"] == "mints"


def test_provenance(client, service):
    df = client.mints(START, END)
    p = df.attrs["cctx"]
    assert p["source"] == service.url
    assert p["operation"] == "mints"
    assert p["parameters"]["start"] == pd.Timestamp(START).isoformat()
    assert p["requests"] >= 5
    assert p["cache_hits"] == 0
    assert pd.Timestamp(p["fetched_at"]).tz is not None
    assert API_KEY not in repr(p)


def test_transaction_lookup_mint_and_burn(client, ledger):
    row = ledger[ledger["mint_timestamp"] <= AS_OF].iloc[10]
    mint = client.transaction(row["mint_tx_hash"].upper().replace("0X", "0x"))
    assert isinstance(mint, pd.Series)
    assert list(mint.index) == schema.columns("transaction")
    assert mint["transaction_type"] == "mint"
    assert mint["transfer_id"] == row["transfer_id"]
    assert mint["amount_raw"] == row["amount_raw"]
    assert mint["timestamp"] == row["mint_timestamp"]
    assert mint["tx_hash"] == row["mint_tx_hash"].lower()
    assert mint["is_completed"]
    assert mint["source_chain"] == schema.chains.chain_name(int(row["source_domain"]))
    burn = client.transaction(row["burn_tx_hash"])
    assert burn["transaction_type"] == "burn"
    assert burn["timestamp"] == row["burn_timestamp"]
    assert burn.attrs["cctx"]["operation"] == "transaction"


def test_transaction_unknown_hash_is_not_found(client):
    with pytest.raises(NotFoundError) as info:
        client.transaction("0x" + "ab" * 32)
    assert info.value.status == 404
    assert info.value.operation == "transactions-txHash"
    assert info.value.hint


@pytest.mark.parametrize("bad", ["", "0x123", "not a hash", "0x" + "zz" * 32])
def test_transaction_rejects_bad_hashes(client, bad):
    with pytest.raises(ValueError, match="0x"):
        client.transaction(bad)


def test_received_matches_the_ledger(client, ledger):
    recipients = addresses(ledger["mint_recipient"])
    address = recipients.value_counts().index[0]
    df = client.received(address.upper().replace("0X", "0x"), START, END)
    truth = received_in(ledger, address, START, END)
    schema.validate(df, "received", extra=False)
    assert len(df) == len(truth) > 3
    assert ids(df) == ids(truth)
    assert raw_sum(df) == raw_sum(truth)
    assert (df["address"] == address).all()
    assert set(df["transaction_type"]) <= {"mint", "burn"}


def test_received_accepts_bytes32_padded_address(client, ledger):
    address = addresses(ledger["mint_recipient"]).value_counts().index[0]
    padded = "0x" + "0" * 24 + address[2:]
    a = client.received(address, START, END)
    b = client.received(padded, START, END)
    pd.testing.assert_frame_equal(a, b, check_like=False)


def test_received_rejects_bad_address(client):
    with pytest.raises(ValueError, match="40 hex"):
        client.received("0x1234", START, END)
    with pytest.raises(TypeError):
        client.received(1234, START, END)


def test_volume_matches_the_ledger(client, ledger):
    v = client.volume(START, END)
    mints = mints_in(ledger, START, END, every_domain=True)  # the report covers every chain
    burns = burns_in(ledger, START, END)
    assert isinstance(v, pd.Series)
    assert list(v.index) == schema.columns("volume")
    assert v["mint_count"] == len(mints)
    assert v["burn_count"] == len(burns)
    assert v["mint_volume_raw"] == raw_sum(mints)
    assert v["burn_volume_raw"] == raw_sum(burns)
    assert v["total_count"] == len(mints) + len(burns)
    assert v["mint_volume"] == pytest.approx(raw_sum(mints) / 1e6)
    assert v["timestamp"] == pd.Timestamp(START)
    assert v["end"] == pd.Timestamp(END)


def test_volume_history_one_row_per_bucket(client, ledger):
    vh = client.volume_history("2024-06-27", "2024-07-01T12:00Z", freq="1D")
    schema.validate(vh, "volume", extra=False)
    assert len(vh) == 5
    assert vh["timestamp"].iloc[-1] == pd.Timestamp("2024-07-01", tz="UTC")
    assert vh["end"].iloc[-1] == pd.Timestamp("2024-07-01T12:00Z")
    for _, row in vh.iterrows():
        assert row["mint_count"] == len(
            mints_in(ledger, row["timestamp"], row["end"], every_domain=True)
        )
        assert row["burn_volume_raw"] == raw_sum(burns_in(ledger, row["timestamp"], row["end"]))
    total = client.volume("2024-06-27", "2024-07-01T12:00Z")
    assert vh["mint_count"].sum() == total["mint_count"]
    assert vh["burn_volume_raw"].sum() == total["burn_volume_raw"]


def test_volume_history_hourly(client, ledger):
    vh = client.volume_history("2024-06-30T00:00Z", "2024-06-30T06:00Z", freq="1h")
    assert len(vh) == 6
    assert (vh["end"] - vh["timestamp"] == pd.Timedelta("1h")).all()
    truth = mints_in(ledger, "2024-06-30", "2024-06-30T06:00Z", every_domain=True)
    assert vh["mint_count"].sum() == len(truth)


def test_top_senders_match_the_ledger(client, ledger):
    top = client.top_senders(START, END, limit=5)
    burns = burns_in(ledger, START, END)
    senders = addresses(burns["message_sender"])
    sums = (
        pd.DataFrame({"a": senders.to_numpy(), "v": burns["amount_raw"].to_numpy()})
        .groupby("a")["v"]
        .agg(["sum", "count"])
        .sort_values("sum", ascending=False)
    )
    schema.validate(top, "top_addresses", extra=False)
    assert list(top["rank"]) == [1, 2, 3, 4, 5]
    assert list(top["address"]) == list(sums.index[:5])
    assert list(top["volume_raw"]) == list(sums["sum"].iloc[:5])
    assert list(top["transaction_count"]) == list(sums["count"].iloc[:5])
    assert top["volume"].is_monotonic_decreasing


def test_every_method_validates_windows(client):
    with pytest.raises(ValueError, match="before end"):
        client.mints("2024-06-02", "2024-06-01")
    with pytest.raises(ValueError, match="before end"):
        client.volume("2024-06-01", "2024-06-01")
    with pytest.raises(TypeError):
        client.top_senders([2024], None)
    with pytest.raises(ValueError, match="limit"):
        client.top_senders(START, END, limit=0)
    with pytest.raises(ValueError, match="start and end"):
        client.volume_history(None, END)
    with pytest.raises(ValueError, match="freq"):
        client.volume_history(START, END, freq="often")


def test_times_accept_every_form(client):
    a = client.volume(pd.Timestamp("2024-06-30"), "2024-06-30T06:00")
    b = client.volume(1719705600, 1719727200)
    c = client.volume(1719705600000, pd.Timestamp("2024-06-30T08:00+02:00").to_pydatetime())
    assert a["mint_count"] == b["mint_count"] == c["mint_count"]


def test_constructor_validation_and_repr(service, tmp_path):
    c = Client(service.url, PROJECT_ID, API_KEY, cache_dir=tmp_path)
    assert API_KEY not in repr(c)
    assert API_KEY not in str(vars(c))
    assert service.url in repr(c)
    assert PROJECT_ID in repr(c)
    c.close()
    with pytest.raises(ConfigError):
        Client("ftp://x", PROJECT_ID, API_KEY)
    with pytest.raises(ConfigError):
        Client(service.url, "a/b", API_KEY)
    with pytest.raises(TypeError):
        Client(service.url, PROJECT_ID, 123)
    with pytest.raises(ValueError, match="page_size"):
        Client(service.url, PROJECT_ID, API_KEY, page_size=0)
    with pytest.raises(TypeError, match="max_workers"):
        Client(service.url, PROJECT_ID, API_KEY, max_workers="4")
    with pytest.raises(ValueError, match="cache=True"):
        Client(service.url, PROJECT_ID, API_KEY, cache=False, offline=True)
    with pytest.raises(ValueError, match="expire_after"):
        Client(service.url, PROJECT_ID, API_KEY, expire_after="soon")


def test_decimals(make_client, service):
    df = make_client(service.url, decimals=2).mints(START, "2024-06-28")
    assert np.allclose(df["amount"], df["amount_raw"] / 100)
