"""Actors on real CCTP messages whose integrators and relayers their sources name.

``tests/fixtures/actors/real_messages.json`` holds seven real messages copied
from ``tests/fixtures/cctp_real`` (citations there and in each entry). The
bytes go through the toolkit's own message decoder; the sources give no
block times, so the ledger built here gives each transfer a burn time an hour
apart and a mint ten minutes later (times are the only made-up field).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import cctx_research as cctx
from cctx_research import labels, schema
from cctx_research.analysis import actors, hooks, movements, volumes
from cctx_research.ingest.evm.messages import decode_message
from cctx_research.ingest.rows import Reasons

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "actors" / "real_messages.json"
ENTRIES = json.loads(FIXTURE.read_text())["entries"]


def real_ledger() -> pd.DataFrame:
    hexes = [e["message_hex"][2:] for e in ENTRIES]
    buf = np.frombuffer(b"".join(bytes.fromhex(h) for h in hexes), "u1")
    text = np.frombuffer("".join(hexes).encode(), "u1")
    lengths = np.array([len(h) // 2 for h in hexes])
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    cols = decode_message(buf, text, starts, lengths, Reasons(len(hexes)), header=True)
    n = len(hexes)
    burn = pd.Timestamp("2025-06-01", tz="UTC") + pd.to_timedelta(np.arange(n), unit="h")
    data = {
        "transfer_id": [e["id"] for e in ENTRIES],
        "source_domain": cols["source_domain"],
        "destination_domain": cols["destination_domain"],
        "amount_raw": cols["amount_raw"],
        "burn_timestamp": burn,
        "mint_timestamp": burn + pd.Timedelta(minutes=10),
        "burn_tx_hash": [e.get("source_tx_hash") for e in ENTRIES],
        "mint_tx_hash": [e.get("destination_tx_hash") for e in ENTRIES],
        "burn_block": np.arange(n) + 1,
        "mint_block": np.arange(n) + 100,
        "message_sender": cols["message_sender"],
        "mint_recipient": cols["mint_recipient"],
        "burn_token": cols["burn_token"],
        "destination_caller": cols["destination_caller"],
        "destination_token_messenger": cols["recipient"],
        "cctp_version": cols["cctp_version"],
        "nonce": cols["nonce"],
        "max_fee_raw": cols["max_fee_raw"],
        "fee_raw": cols["fee_executed_raw"],
        "min_finality_threshold": cols["min_finality_threshold"],
        "hook_data": cols["hook_data"],
        "relayer": [e.get("relayer") for e in ENTRIES],
    }
    frame = pd.DataFrame(data)
    types = schema.dtypes("ledger")
    frame = frame.astype({c: types[c] for c in frame.columns if c in types})
    return schema.validate(schema.complete(frame, "ledger")[schema.columns("ledger")], "ledger")


@pytest.fixture(scope="module")
def ledger() -> pd.DataFrame:
    return real_ledger()


def row(ledger: pd.DataFrame, entry: str) -> pd.Series:
    return ledger.set_index("transfer_id").loc[entry]


def test_labels_name_the_integrators_their_sources_name(ledger):
    labelled = labels.attach(ledger).set_index("transfer_id")
    assert labelled.loc["v2_attested_base_to_eth_19500", "message_sender_label"] == (
        "Circle Bridge Kit"
    )
    assert labelled.loc["v1_ethereum_to_base_282099", "message_sender_label"] == (
        "Hyperlane USDC CCTP route"
    )
    assert labelled.loc["v1_ethereum_to_base_282099", "message_sender_kind"] == "integrator"
    for entry in ("v2_sent_solana_to_base", "v2_sent_solana_to_arbitrum"):
        assert labelled.loc[entry, "mint_recipient_label"] == "Mayan FastMCTP"
        assert labelled.loc[entry, "destination_caller_label"] == "Mayan FastMCTP"
    # the depositor of the CCIP pool test is not in the bundled table
    assert pd.isna(labelled.loc["v1_arbitrum_to_ethereum_4730", "message_sender_label"])
    # Hyperlane's route on Ethereum is labelled on Ethereum only, not on Base
    assert labels.lookup("0xedcbaa585fd0f80f20073f9958246476466205b8", "base") is None


def test_mayan_order_hook_decodes_and_the_other_is_grouped(ledger):
    table = hooks.classify(ledger).set_axis(ledger["transfer_id"])
    assert table.loc["v2_sent_solana_to_base", "hook_format"] == "mayan_fast_mctp"
    assert table.loc["v2_sent_solana_to_arbitrum", "hook_format"] == "unknown"
    assert table.loc["v2_sent_solana_to_arbitrum", "hook_prefix"] == "0x01000000"
    assert table.loc["v2_attested_base_to_eth_19500", "hook_format"] == "empty"
    assert pd.isna(table.loc["v1_ethereum_to_base_282099", "hook_format"])  # V1: no hooks
    order = row(ledger, "v2_sent_solana_to_base")
    fields = hooks.decode(order["hook_data"], recipient=order["mint_recipient"])
    assert fields["payload_type"] == 3
    assert fields["destination_address"].endswith("cdeff8610854119222ebf4724821f369b6a5591b")
    assert fields["amount_out_min"] == 1_038_882
    assert fields["referrer"].endswith("a5aa6e2171b416e1d27ec53ca8c13db3f91a89cd")


def test_integrators_on_real_messages(ledger):
    table = actors.integrators(ledger).set_index("integrator")
    kit = table.loc["0xb3fa262d0fb521cc93be83d87b322b8a23daf3f0"]
    assert kit["integrator_label"] == "Circle Bridge Kit"
    assert kit["volume"] == pytest.approx(19_500.0)
    assert kit["v2_share"] == 1.0
    route = table.loc["0xedcbaa585fd0f80f20073f9958246476466205b8"]
    assert route["integrator_label"] == "Hyperlane USDC CCTP route"
    assert route["v2_share"] == 0.0  # a V1 route
    assert table["volume_share"].sum() == pytest.approx(1.0)
    by_caller = actors.integrators(ledger, by="destination_caller").set_index("integrator")
    # the zero caller means anyone: it counts under a null integrator
    assert by_caller.loc["0xc1062b7c5dc8e4b1df9f200fe360cdc0ed6e7741", "transfers"] == 2
    assert by_caller.loc["0xc1062b7c5dc8e4b1df9f200fe360cdc0ed6e7741", "integrator_label"] == (
        "Mayan FastMCTP"
    )
    by_label = actors.integrators(ledger, by="label").set_index("integrator")
    assert by_label.loc["Hyperlane deployer", "transfers"] == 1


def test_relayer_named_by_the_source(ledger):
    table = actors.relayers(ledger, by="route")
    arb = table[table["destination_chain"] == "arbitrum"]
    named = arb[arb["relayer"] == "0xa4ec15f2dfdf999912ff2843fb5a2e6fdc5b7b8f"]
    assert len(named) == 1
    assert named["mint_share"].iloc[0] == 1.0
    assert named["median_relay_s"].iloc[0] == 600.0


def test_wrapped_self_transfer_is_not_rebalancing(ledger):
    # Hyperlane's deployer sends to itself and relays itself: a wrapped transfer
    flagged = movements.rebalancing(ledger, rules=movements.ALL_RULES)
    assert "v2_attested_op_to_base_fast_fee1" not in set(flagged["transfer_id"])
    assert movements.rebalancing_share(ledger)["rebalancing_volume"].sum() == 0.0
    assert len(movements.dedupe(ledger)) == len(ledger)


RECEIPTS = FIXTURE.parents[1] / "cctp_real" / "logs_across_arbitrum_receipts.json"
PERIPHERY = "0xaa4958efa0cf6ddd87e354a90785f1d7291a82c7"  # Across's SponsoredCCTPSrcPeriphery
USER = "0x9a8f92a830a5cb89a3816e3d267cb7791c16b04d"  # the receipts' from
# A label of our own (labels win over the bundled table): the address is named so in
# across-protocol's indexer (SPONSORED_CCTP_SRC_PERIPHERY_ADDRESS_OVERRIDES, Arbitrum),
# whose broadcast files the receipts come from (tests/fixtures/cctp_real/README.md).
ACROSS = pd.DataFrame(
    {
        "chain": ["arbitrum"],
        "address": [PERIPHERY],
        "label": ["Across sponsored CCTP periphery"],
        "kind": ["integrator"],
        "source": ["across-protocol indexer, SPONSORED_CCTP_SRC_PERIPHERY_ADDRESS_OVERRIDES"],
    }
)


@pytest.fixture(scope="module")
def across(tmp_path_factory) -> pd.DataFrame:
    """Two real Arbitrum burns through Across's periphery, loaded from their receipts."""
    receipts = [e["receipt"] for e in json.loads(RECEIPTS.read_text())["entries"]]
    path = tmp_path_factory.mktemp("receipts") / "receipts.json"
    path.write_text(json.dumps(receipts))
    return cctx.load(path, chain="arbitrum")


def test_the_end_user_behind_an_integrators_contract_on_real_receipts(across):
    # the depositor is Across's contract; the receipts' from is the person behind it
    assert set(actors.end_user(across)) == {USER}
    table = actors.integrators(across, labels=ACROSS).set_index("integrator")
    row = table.loc[PERIPHERY]
    assert row["integrator_label"] == "Across sponsored CCTP periphery"
    assert (row["transfers"], row["end_users"]) == (2, 1)
    assert row["volume"] == pytest.approx(10.0)  # 5 USDC each, as the logs say


def test_a_wrapped_leg_on_real_receipts_is_counted_once(across):
    # each burn is wrapped: hook data for the destination, and the recipient (Across's
    # destination periphery on Ethereum) is the only one that may relay it
    assert (across["hook_data"].str.len() > 2).all()
    assert (across["destination_caller"] == across["mint_recipient"]).all()
    # nothing continues it (the source has no second leg): counted once, not dropped,
    # not doubled, with or without dedupe
    assert movements.continuations(across, labels=ACROSS).empty
    transfers = cctx.transfers_from_ledger(across)
    every = volumes.timeseries(transfers, freq="1h")
    once = volumes.timeseries(transfers, freq="1h", dedupe=across)
    assert once["volume"].sum() == every["volume"].sum() == pytest.approx(10.0)
    assert once["count"].sum() == 2
    assert len(movements.dedupe(across, labels=ACROSS)) == 2
