"""load() on real CCTP events recorded by two public indexers (Across's, Wormhole's explorer).

The values are in ``tests/fixtures/cctp_real/public_indexers.json``, each
entry citing its repository, path and commit. Wormhole's entry is a whole
Ethereum receipt; Across's give an event's decoded fields, which are encoded
here into the log Circle's contract emits (eth-abi, by the event's
declaration). What a log had to fill in, the sources not giving it: block
numbers and times (each test says which), and log indexes where the source
has none. Every expected value below is the source's own, not the package's.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import pytest

import cctx_research as cctx
from cctx_research import chains
from cctx_research.provenance import provenance

from .logs import SIGNATURES, encode_event
from .real import REAL, V1, V2_MESSENGER, V2_TRANSMITTER, write

T_FILLED = 1_765_000_000  # 2025-12-06: a time where the source gives none (filled in)
_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def _entries() -> dict[str, dict[str, Any]]:
    doc = json.loads((REAL / "public_indexers.json").read_text())
    return {e["id"]: e for e in doc["entries"]}


def _base58_bytes(text: str) -> bytes:
    """Bitcoin-alphabet base58 (Solana's), decoded here apart from the package's codec."""
    number = 0
    for char in text:
        number = number * 58 + _ALPHABET.index(char)
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    return b"\0" * (len(text) - len(text.lstrip("1"))) + raw


def _base58(raw: bytes) -> str:
    number, out = int.from_bytes(raw, "big"), ""
    while number:
        number, digit = divmod(number, 58)
        out = _ALPHABET[digit] + out
    return "1" * (len(raw) - len(raw.lstrip(b"\0"))) + out


def _word(address: str) -> bytes:
    return bytes.fromhex(address[2:].rjust(64, "0"))


def _log(event: str, version: int, values: dict[str, Any], *, address: str, entry: dict,
         index: int, block: int, time: int = T_FILLED) -> dict[str, Any]:  # fmt: skip
    topics, data = encode_event(SIGNATURES[(event, version)], values)
    return {
        "address": address.lower(),
        "topics": topics,
        "data": data,
        "blockNumber": hex(block),
        "blockTimestamp": hex(time),
        "transactionHash": entry["transactionHash"],
        "transactionIndex": hex(entry.get("transactionIndex", 0)),
        "logIndex": hex(index),
        "removed": False,
    }


def _deposit_log(entry: dict, *, index: int, block: int) -> dict[str, Any]:
    d = entry["deposit_for_burn"]
    values = {
        "burnToken": d["burnToken"],
        "amount": d["amount"],
        "depositor": d["depositor"],
        "mintRecipient": _word(d["mintRecipient"]),
        "destinationDomain": d["destinationDomain"],
        "destinationTokenMessenger": _word(d["destinationTokenMessenger"]),
        "destinationCaller": _word(d["destinationCaller"]),
        "maxFee": d["maxFee"],
        "minFinalityThreshold": d["minFinalityThreshold"],
        "hookData": bytes.fromhex(d["hookData"][2:]),
    }
    return _log("DepositForBurn", 2, values, address=V2_MESSENGER, entry=entry, index=index,
                block=block)  # fmt: skip


def _counts(ledger: pd.DataFrame) -> dict[str, int]:
    return provenance(ledger).count


def test_a_real_burn_toward_hyperevm_reads_as_the_indexer_stored_it(tmp_path):
    """Arbitrum -> HyperEVM (domain 19), V2: the MessageSent message is the real bytes; the
    DepositForBurn is encoded from the fields Across's indexer stored (block filled in)."""
    entry = _entries()["across_v2_sent_arbitrum_to_hyperevm"]
    sent = entry["message_sent"]
    message = bytes.fromhex(sent["message"][2:])
    logs = [
        _log(
            "MessageSent",
            2,
            {"message": message},
            address=V2_TRANSMITTER,
            entry=entry,
            index=sent["logIndex"],
            block=400_000_000,
        ),
        _deposit_log(entry, index=entry["deposit_for_burn"]["logIndex"], block=400_000_000),
    ]
    ledger = cctx.load(write(tmp_path / "arbitrum.json", logs), chain="arbitrum")
    assert len(ledger) == 1
    row = ledger.iloc[0]
    d = entry["deposit_for_burn"]
    assert (row["source_domain"], row["destination_domain"]) == (3, 19)
    assert chains.chain_name(int(row["destination_domain"])) == "hyperevm"
    assert row["amount_raw"] == d["amount"] == int.from_bytes(message[148 + 68 : 148 + 100], "big")
    assert row["message_sender"] == d["depositor"].lower()
    assert row["mint_recipient"] == d["mintRecipient"].lower()
    assert row["destination_caller"] == d["destinationCaller"].lower()
    assert row["max_fee_raw"] == d["maxFee"]
    assert row["min_finality_threshold"] == d["minFinalityThreshold"]
    assert row["hook_data"] == d["hookData"].lower()
    assert row["cctp_version"] == 2
    assert row["burn_tx_hash"] == entry["transactionHash"]
    assert pd.isna(row["mint_timestamp"])  # the mint on HyperEVM is not in the source
    assert _counts(ledger)["merged"] == 1


def test_a_real_v2_mint_from_solana_reads_as_the_indexer_stored_it(tmp_path):
    """Solana -> Arbitrum, V2 MessageReceived encoded from the stored fields (block filled
    in): a mint of the body's 15,000 USDC less its 1.5 USDC fee, nonce and relayer kept."""
    entry = _entries()["across_v2_received_solana_to_arbitrum"]
    r = entry["message_received"]
    body = bytes.fromhex(r["messageBody"][2:])
    values = {
        "caller": r["caller"],
        "sourceDomain": r["sourceDomain"],
        "nonce": bytes.fromhex(r["nonce"][2:]),
        "sender": _base58_bytes(r["sender_base58"]),
        "finalityThresholdExecuted": r["finalityThresholdExecuted"],
        "messageBody": body,
    }
    logs = [_log("MessageReceived", 2, values, address=V2_TRANSMITTER, entry=entry,
                 index=r["logIndex"], block=400_000_000)]  # fmt: skip
    ledger = cctx.load(write(tmp_path / "arbitrum.json", logs), chain="arbitrum")
    assert len(ledger) == 1
    row = ledger.iloc[0]
    assert (row["source_domain"], row["destination_domain"]) == (5, 3)
    assert row["nonce"] == r["nonce"]
    assert row["amount_raw"] == 15_000_000_000 == int.from_bytes(body[68:100], "big")
    assert row["fee_raw"] == 1_500_000
    assert row["finality_threshold_executed"] == 1000
    assert row["mint_recipient"] == "0x" + body[36 + 12 : 68].hex()
    assert row["message_sender"] == _base58(body[100:132])  # a Solana account, in base58
    assert row["relayer"] == r["caller"].lower()
    assert row["mint_tx_hash"] == entry["transactionHash"]
    assert pd.isna(row["burn_timestamp"])  # the burn on Solana is not in the source


@pytest.mark.parametrize(
    ("entry_id", "chain"),
    [("across_v2_deposit_ethereum_to_arbitrum", "ethereum"),
     ("across_v2_deposit_optimism_to_arbitrum", "optimism")],
)  # fmt: skip
def test_real_v2_deposits_read_as_the_indexer_stored_them(tmp_path, entry_id, chain):
    """A DepositForBurn alone (the source has no MessageSent), log index and block filled in."""
    entry = _entries()[entry_id]
    d = entry["deposit_for_burn"]
    logs = [_deposit_log(entry, index=5, block=20_000_000)]
    ledger = cctx.load(write(tmp_path / f"{chain}.json", logs), chain=chain)
    assert len(ledger) == 1
    row = ledger.iloc[0]
    assert chains.chain_name(int(row["source_domain"])) == chain
    assert row["destination_domain"] == d["destinationDomain"] == 3
    assert row["amount_raw"] == d["amount"]
    assert row["message_sender"] == row["mint_recipient"] == d["depositor"].lower()
    assert row["destination_caller"] == d["destinationCaller"].lower()
    assert row["max_fee_raw"] == d["maxFee"]
    assert row["burn_tx_hash"] == entry["transactionHash"]


def _wormhole_receipt() -> dict[str, Any]:
    """Wormhole explorer's transaction as an eth_getTransactionReceipt result: the hash and
    block moved to where a receipt has them, each log given its place (filled in: log index
    by order, the block's number, the source's ``timestamp``)."""
    tx = _entries()["wormhole_explorer_v1_receipt_ethereum_to_optimism"]["transaction"]
    logs = [
        {
            **lg,
            "blockNumber": hex(tx["blockNumber"]),
            "blockHash": tx["blockHash"],
            "blockTimestamp": hex(tx["timestamp"]),
            "transactionHash": tx["hash"],
            "transactionIndex": tx["transactionIndex"],
            "logIndex": hex(k),
            "removed": False,
        }
        for k, lg in enumerate(tx["logs"])
    ]
    return {
        "transactionHash": tx["hash"],
        "blockNumber": hex(tx["blockNumber"]),
        "blockHash": tx["blockHash"],
        "from": tx["from"],
        "to": tx["to"],
        "status": tx["status"],
        "logs": logs,
    }


def test_wormhole_explorers_real_ethereum_receipt_gives_its_v1_burn(tmp_path):
    """Ethereum -> OP Mainnet, V1, from Circle's V1 contracts: nonce 89050 and 7,372.849782
    USDC, the amount USDC's own Transfer log moves (read here apart from the package)."""
    receipt = _wormhole_receipt()
    ledger = cctx.load(write(tmp_path / "ethereum.json", [receipt]), chain="ethereum")
    assert len(ledger) == 1
    row = ledger.iloc[0]
    transfer = next(lg for lg in receipt["logs"] if lg["topics"][0].startswith("0xddf252ad"))
    assert row["amount_raw"] == int(transfer["data"], 16) == 7_372_849_782
    assert (row["source_domain"], row["destination_domain"]) == (0, 2)
    assert row["nonce"] == "89050"
    assert row["cctp_version"] == 1
    depositor = receipt["from"]
    assert row["message_sender"] == row["mint_recipient"] == depositor
    assert row["burn_tx_from"] == depositor
    assert row["burn_block"] == 18_521_386
    assert row["burn_tx_hash"] == receipt["transactionHash"]
    assert {lg["address"] for lg in receipt["logs"]} >= set(V1[0])  # Circle's V1 pair emitted
    counts = _counts(ledger)
    assert counts["merged"] == 1
    assert counts["skipped_other_events"] == 3  # USDC's Transfer, Burn, Transfer


def test_every_public_indexer_entry_cites_its_source():
    for entry_id, entry in _entries().items():
        source = entry["source"]
        assert source["repo"], entry_id
        assert source["path"], entry_id
        assert len(source["commit"]) == 40, entry_id
        assert entry["note"], entry_id
        assert entry["network"] == "mainnet", entry_id


def test_wormhole_explorers_real_solana_message_mints_on_arbitrum(tmp_path):
    """Solana -> Arbitrum, V1: the real message's body and header fields in the
    MessageReceived Arbitrum's V1 transmitter emits (filled in: caller, transaction, block,
    time); the row carries the values the explorer's test checks, Solana's in base58."""
    entry = _entries()["wormhole_explorer_v1_message_solana_to_arbitrum"]
    raw = bytes.fromhex(entry["message_hex"][2:])
    published = entry["published"]
    assert raw[20:52].hex() == published["sender"][2:]  # the source's own decode
    values = {
        "caller": "0x" + "5e" * 20,
        "sourceDomain": int.from_bytes(raw[4:8], "big"),
        "nonce": int.from_bytes(raw[12:20], "big"),
        "sender": raw[20:52],
        "messageBody": raw[116:],
    }
    receipt = {"transactionHash": "0x" + "ab" * 32}
    logs = [_log("MessageReceived", 1, values, address=V1[3][1], entry=receipt, index=7,
                 block=250_000_000, time=entry["source_block_time"] + 1_200)]  # fmt: skip
    ledger = cctx.load(write(tmp_path / "arbitrum.json", logs), chain="arbitrum")
    assert len(ledger) == 1
    row = ledger.iloc[0]
    assert chains.chain_name(int(row["source_domain"])) == "solana"
    assert chains.chain_name(int(row["destination_domain"])) == "arbitrum"
    assert row["nonce"] == "67833"
    assert row["amount_raw"] == 690_000_000
    assert row["message_sender"] == _base58(bytes.fromhex(published["messageSender"][2:]))
    assert row["mint_recipient"] == "0x" + raw[116 + 36 + 12 : 116 + 68].hex()
    assert row["cctp_version"] == 1
    assert _counts(ledger)["skipped_generic_messages"] == 0
