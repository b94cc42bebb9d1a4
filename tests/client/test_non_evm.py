"""Solana and Noble over the interface: bytes32 on the wire, each chain's format in frames."""

from __future__ import annotations

import pandas as pd
import pytest

from cctx_research import addressing

from .conftest import AS_OF, mints_in

START, END = "2024-06-27", "2024-07-01T12:00Z"


def _minted(ledger: pd.DataFrame, domain: int, *, side: str) -> pd.DataFrame:
    rows = ledger[(ledger[side] == domain) & (ledger["mint_timestamp"] <= AS_OF)]
    assert len(rows) > 0, "the sample has no such transfer"
    return rows


@pytest.mark.parametrize(("domain", "chain"), [(5, "solana"), (4, "noble")])
def test_listing_shows_each_address_in_its_chains_format(client, ledger, domain, chain):
    truth = mints_in(ledger, START, END)
    # the other side defaults to every chain (the client names them all)
    into = truth[truth["destination_domain"] == domain]
    into = into.set_index("transfer_id").sort_index()
    frame = client.mints(START, END, destination=chain).set_index("transfer_id").sort_index()
    assert list(frame.index) == list(into.index)
    assert len(frame) > 0
    for column in ("mint_recipient", "destination_caller", "destination_token_messenger"):
        assert frame[column].tolist() == into[column].tolist(), column
    out_of = truth[truth["source_domain"] == domain]
    out_of = out_of.set_index("transfer_id").sort_index()
    frame = client.mints(START, END, source=chain).set_index("transfer_id").sort_index()
    for column in ("message_sender", "burn_token"):
        assert frame[column].tolist() == out_of[column].tolist(), column


def test_no_chain_filter_means_every_chain_not_the_interfaces_six(client, ledger):
    everything = client.mints(START, END)
    truth = mints_in(ledger, START, END)
    assert sorted(everything["transfer_id"]) == sorted(truth["transfer_id"])
    sides = set(everything["source_chain"].astype(str)) | set(
        everything["destination_chain"].astype(str))
    assert {"solana", "noble"} <= sides  # left out by the interface's own default
    six = mints_in(ledger, START, END, every_domain=False)
    assert len(everything) > len(six)
    with pytest.raises(ValueError, match="pass None for all chains"):
        client.mints(START, END, source=[])


@pytest.mark.parametrize("domain", [5, 4])
def test_received_accepts_the_chains_own_format_and_bytes32(client, ledger, domain):
    rows = _minted(ledger, domain, side="destination_domain")
    address = rows["mint_recipient"].iloc[0]
    want = ledger[(ledger["mint_recipient"] == address) & (ledger["burn_timestamp"] <= AS_OF)]
    got = client.received(address, "2024-06-20", END)
    assert sorted(got["transfer_id"]) == sorted(want["transfer_id"])
    assert (got["address"] == address).all()
    again = client.received(addressing.to_bytes32(address), "2024-06-20", END)
    assert sorted(again["transfer_id"]) == sorted(got["transfer_id"])


def test_transaction_by_solana_signature_and_noble_hash(client, ledger):
    sol = _minted(ledger, 5, side="source_domain").iloc[0]
    row = client.transaction(sol["burn_tx_hash"])
    assert row["tx_hash"] == sol["burn_tx_hash"]  # base58 keeps its case
    assert row["transfer_id"] == sol["transfer_id"]
    assert row["message_sender"] == sol["message_sender"]
    noble = _minted(ledger, 4, side="destination_domain").iloc[0]
    row = client.transaction(noble["mint_tx_hash"].lower())
    assert row["transfer_id"] == noble["transfer_id"]
    assert row["mint_recipient"] == noble["mint_recipient"]


def test_malformed_addresses_name_the_formats(client):
    with pytest.raises(ValueError, match="solana: base58"):
        client.received("noble1notanaddress", START, END)
