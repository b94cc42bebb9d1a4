"""Solana getTransaction replies: decoded, linked with their EVM sides, bad input counted.

Fixtures: tests/fixtures/solana (README.md there cites each file and says
what was filled in). The V1 replies are real mainnet transactions recorded
by wormhole-foundation/wormhole-explorer; the V2 burns are rebuilt from real
messages; the V2 mint is synthetic.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import cctx_research as cctx
from cctx_research.addressing import base58_decode, base58_encode, to_bytes32
from cctx_research.errors import DataError
from cctx_research.ingest import solana
from cctx_research.ingest.solana.base58 import ALPHABET, decode_many
from cctx_research.provenance import provenance

from ..real import Message, burn_logs, message, mint_logs, tx, write

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "solana"
V1_BURN = FIX / "v1_burn_solana_to_ethereum.json"
V1_RECEIVE = FIX / "v1_receive_from_arbitrum.json"
V2_BURN_ETH = FIX / "v2_burn_solana_to_ethereum.json"
V2_BURN_BASE = FIX / "v2_burn_solana_to_base_with_message_account.json"
V2_MINT = FIX / "v2_synthetic_mint_base_to_solana.json"
OTHERS = FIX / "v1_mayan_burn_and_other_programs.jsonl"


def _hex(pubkey: str) -> str:
    return to_bytes32(pubkey)


def _reply(path: Path) -> dict[str, Any]:
    doc = json.loads(path.read_text())
    return doc["result"] if "jsonrpc" in doc else doc


def _adds_up(ledger: pd.DataFrame) -> dict[str, int]:
    counts = provenance(ledger).count
    total = counts["decoded"] + counts["skipped"] + counts["duplicates"] + counts["bad"]
    assert total == counts["rows_read"], counts
    return counts


def _arbitrum_to_solana_message() -> Message:
    """The real V1 message the Solana receive carries: its receive instruction's argument.

    The transaction's first instruction (Wormhole's prepare_order_response_cctp)
    takes the CCTP message as a Borsh ``Vec<u8>`` after its 8-byte discriminator.
    """
    top = _reply(V1_RECEIVE)["transaction"]["message"]["instructions"][0]["data"]
    raw = _b58(top)
    size = int.from_bytes(raw[8:12], "little")
    return Message(raw[12 : 12 + size], {})


def _b58(text: str) -> bytes:
    number = 0
    for ch in text:
        number = number * 58 + ALPHABET.index(ch)
    body = number.to_bytes((number.bit_length() + 7) // 8, "big")
    return b"\x00" * (len(text) - len(text.lstrip("1"))) + body


# ---------------------------------------------------------------------------
# decoding


def test_v1_burn_decodes_the_real_deposit_for_burn() -> None:
    decoded = solana.decode(V1_BURN)
    (burn,) = decoded.burns.to_dict("records")
    reply = _reply(V1_BURN)
    assert burn["tx_hash"] == reply["transaction"]["signatures"][0]
    assert burn["block_number"] == 285963118
    assert burn["timestamp"] == pd.Timestamp(1724682919, unit="s", tz="UTC")
    assert (burn["domain"], burn["chain_id"], burn["cctp_version"]) == (5, "solana", 1)
    assert burn["nonce"] == "67707"
    assert burn["amount_raw"] == 30_000_000_000  # the 30,000 USDC the token balances lose
    pre = int(reply["meta"]["preTokenBalances"][0]["uiTokenAmount"]["amount"])
    post = int(reply["meta"]["postTokenBalances"][0]["uiTokenAmount"]["amount"])
    assert pre - post == burn["amount_raw"]
    assert burn["message_sender"] == _hex("3DBoK4xXbff387iNkVmJt18ZXbQHjaBUXR9Xwy7KJdPM")
    assert burn["burn_token"] == _hex("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
    assert burn["destination_domain"] == 0
    assert burn["destination_token_messenger"] == "0xbd3fa81b58ba92a82136038b25adec7066af3155"
    assert burn["contract"] == _hex("CCTPiPYPc6AsJuwueEnWgSgucamXDZwBd53dQ11YiKX3")
    assert burn["log_index"] == 4  # instruction 0, then inner instructions 1..4


def test_v1_receive_gives_mint_message_and_owner() -> None:
    decoded = solana.decode(V1_RECEIVE)
    (mint,) = decoded.mints.to_dict("records")
    (got,) = decoded.received.to_dict("records")
    assert (got["source_domain"], got["nonce"], got["cctp_version"]) == (3, "290001", 1)
    assert got["sender"] == "0x19330d10d9cc8751218eaf51e8885d058642e08a"  # Arbitrum's V1 messenger
    assert got["burn_token"] == "0xaf88d065e77c8cc2239327c5edb3a432268e5831"  # Arbitrum USDC
    assert got["mint_recipient"] == mint["mint_recipient"]
    assert mint["amount_raw"] == got["amount_raw"] == 100_500_000
    assert mint["log_index"] + 1 == got["log_index"]
    keys = _reply(V1_RECEIVE)["transaction"]["message"]["accountKeys"]
    loaded = _reply(V1_RECEIVE)["meta"]["loadedAddresses"]
    keys = keys + loaded["writable"] + loaded["readonly"]
    owners = {_hex(keys[b["accountIndex"]]): _hex(b["owner"])
              for b in _reply(V1_RECEIVE)["meta"]["postTokenBalances"]}
    assert mint["mint_recipient_owner"] == owners[mint["mint_recipient"]]
    assert mint["mint_recipient_owner"] != mint["mint_recipient"]
    (burn,) = decoded.burns.to_dict("records")  # the same transaction burns onward to Base
    assert (burn["destination_domain"], burn["nonce"]) == (6, "66949")


def test_v2_burn_carries_the_real_message_fields() -> None:
    (burn,) = solana.decode(V2_BURN_ETH).burns.to_dict("records")
    m = message("v2_attested_solana_to_eth")
    assert burn["cctp_version"] == 2
    assert pd.isna(burn["nonce"])
    assert burn["amount_raw"] == m.amount == 100_010_100_000
    assert burn["max_fee_raw"] == m.body_uint(132) == 10_001_010
    assert burn["min_finality_threshold"] == 2000
    assert burn["message_sender"] == "0x" + m.body_word(100).hex()
    assert burn["hook_data"] == "0x"


def test_v2_message_account_is_the_sent_message() -> None:
    decoded = solana.decode(V2_BURN_BASE)
    (sent,) = decoded.sent.to_dict("records")
    (burn,) = decoded.burns.to_dict("records")
    assert sent["tx_hash"] == burn["tx_hash"]
    assert sent["message"] == message("v2_sent_solana_to_base").entry["message_hex"]
    assert sent["hook_data"] == burn["hook_data"] != "0x"
    assert sent["sender"] == _hex("CCTPV2vPZJS2u2BBsUoscuikbYjnpFmbFsvVuJdgUMQe")
    ledger = cctx.load(V2_BURN_BASE)
    assert len(ledger) == 1
    assert _adds_up(ledger)["merged"] == 1


def test_v2_mint_resolves_the_token_account_owner() -> None:
    (mint,) = solana.decode(V2_MINT).mints.to_dict("records")
    assert mint["mint_recipient"] == _hex("7oA8vSPxsuHhub1SkNrikm9RE8DUhB2uqeTZ3GXbjQwf")
    assert mint["mint_recipient_owner"] == _hex("5umD36Tb37L3s7UGaRmyuLSxJ8JEukRWkFWiumgsVdcU")
    assert (mint["fee_raw"], mint["cctp_version"]) == (0, 2)
    row = cctx.load(V2_MINT).iloc[0]  # the ledger keeps both: the account as written, its owner
    assert row["mint_recipient_owner"] == "5umD36Tb37L3s7UGaRmyuLSxJ8JEukRWkFWiumgsVdcU"
    assert row["mint_recipient"] == "7oA8vSPxsuHhub1SkNrikm9RE8DUhB2uqeTZ3GXbjQwf"


def test_json_parsed_encoding_decodes_the_same(tmp_path: Path) -> None:
    reply = _reply(V1_RECEIVE)
    parsed = copy.deepcopy(reply)
    keys = reply["transaction"]["message"]["accountKeys"] + reply["meta"]["loadedAddresses"][
        "writable"] + reply["meta"]["loadedAddresses"]["readonly"]
    parsed["transaction"]["message"]["accountKeys"] = [{"pubkey": k} for k in keys]

    def spell(ix: dict[str, Any]) -> dict[str, Any]:
        return {"programId": keys[ix["programIdIndex"]], "data": ix["data"],
                "accounts": [keys[a] for a in ix["accounts"]], "stackHeight": ix["stackHeight"]}

    message_ = parsed["transaction"]["message"]
    message_["instructions"] = [spell(ix) for ix in message_["instructions"]]
    for group in parsed["meta"]["innerInstructions"]:
        group["instructions"] = [spell(ix) for ix in group["instructions"]]
    del parsed["meta"]["loadedAddresses"]
    for balance in parsed["meta"]["postTokenBalances"] + parsed["meta"]["preTokenBalances"]:
        assert keys[balance["accountIndex"]]
    path = tmp_path / "parsed.json"
    path.write_text(json.dumps(parsed))
    plain, other = solana.decode(V1_RECEIVE), solana.decode(path)
    for kind in ("burns", "mints", "received"):
        a = getattr(plain, kind).drop(columns=["source_file"])
        b = getattr(other, kind).drop(columns=["source_file"])
        pd.testing.assert_frame_equal(a, b)


def test_base58_many_matches_one_by_one() -> None:
    rng = random.Random(5)
    raws = [bytes(rng.randint(0, 2)) + rng.randbytes(rng.choice([1, 32, 88, 196, 300, 800]))
            for _ in range(300)]
    texts = [base58_encode(r) for r in raws]
    buffer, starts, lengths, ok = decode_many([*texts, "0OIl", ""])
    assert ok.tolist() == [True] * len(raws) + [False, True]
    for i, raw in enumerate(raws):
        assert bytes(buffer[starts[i] : starts[i] + lengths[i]]) == raw
    assert base58_decode(texts[1]) in (None, raws[1])


# ---------------------------------------------------------------------------
# linking with the EVM side


def test_v1_arbitrum_to_solana_links_by_nonce(tmp_path: Path) -> None:
    m = _arbitrum_to_solana_message()
    assert (m.source_domain, m.destination_domain, m.nonce) == (3, 5, 290001)
    # FILLED: the Arbitrum burn's block, time and tx hash (the source gives the message only)
    logs = burn_logs(m, block=246_000_000, tx_hash=tx("arbitrum burn 290001"), index=3,
                     time=1724522000)
    arbitrum = write(tmp_path / "arbitrum.json", logs)
    ledger = cctx.load([V1_RECEIVE, arbitrum], chain={str(arbitrum): "arbitrum"})
    row = ledger[ledger["nonce"] == "290001"].iloc[0]
    assert row["pairing"] == "exact"
    assert (row["source_domain"], row["destination_domain"]) == (3, 5)
    assert row["mint_tx_hash"] == _reply(V1_RECEIVE)["transaction"]["signatures"][0]
    assert row["burn_timestamp"] < row["mint_timestamp"]
    assert row["mint_recipient"] == base58_encode(m.body_word(36))  # Solana's own spelling
    counts = _adds_up(ledger)
    assert counts["paired"] == 1
    assert len(ledger) == 2  # and the onward burn to Base, pending


def test_v2_solana_to_ethereum_links_by_content(tmp_path: Path) -> None:
    m = message("v2_attested_solana_to_eth")
    logs = mint_logs(m, block=22_875_000, tx_hash=m.entry["destination_tx_hash"], index=10,
                     time=1_752_000_900)  # FILLED: block, log index and time
    eth = write(tmp_path / "ethereum.json", logs)
    ledger = cctx.load([V2_BURN_ETH, eth], chain={str(eth): "ethereum"})
    assert len(ledger) == 1
    row = ledger.iloc[0]
    assert row["pairing"] == "content"
    assert (row["source_domain"], row["destination_domain"]) == (5, 0)
    assert row["burn_tx_hash"] == _reply(V2_BURN_ETH)["transaction"]["signatures"][0]
    assert row["mint_tx_hash"] == m.entry["destination_tx_hash"]
    assert row["nonce"] == "0x" + m.nonce.hex()
    assert row["fee_raw"] == 10_001_010
    assert _adds_up(ledger)["paired"] == 1


def test_solana_files_are_told_by_content_and_chain_is_implied() -> None:
    ledger = cctx.load(V1_BURN)
    assert provenance(ledger).format == "solana"
    assert ledger["source_domain"].tolist() == [5]
    assert ledger["pairing"].tolist() == ["pending"]
    assert len(cctx.load(V1_BURN, chain="solana")) == 1
    with pytest.raises(DataError, match="Solana"):
        cctx.load(V1_BURN, chain="base")


# ---------------------------------------------------------------------------
# bad input


def test_failed_transaction_is_skipped_and_counted(tmp_path: Path) -> None:
    reply = _reply(V1_BURN)
    failed = copy.deepcopy(reply)
    failed["meta"]["err"] = {"InstructionError": [0, {"Custom": 6000}]}  # FILLED: the failure
    failed["meta"]["status"] = {"Err": failed["meta"]["err"]}
    failed["transaction"]["signatures"] = ["1" * 64]
    path = tmp_path / "two.json"
    path.write_text(json.dumps([reply, failed]))
    ledger = cctx.load(path)
    counts = _adds_up(ledger)
    assert len(ledger) == 1
    assert counts["skipped_failed_transactions"] == 1


def test_other_programs_are_skipped_and_counted() -> None:
    ledger = cctx.load(OTHERS)  # JSON Lines: a Mayan burn through CCTP, two Wormhole redeems
    counts = _adds_up(ledger)
    assert len(ledger) == 1
    assert counts["skipped_other_programs"] == 2


def test_truncated_reply_is_bad_not_a_crash(tmp_path: Path) -> None:
    lines = OTHERS.read_text().splitlines()
    cut = tmp_path / "cut.jsonl"
    cut.write_text(lines[0] + "\n" + lines[1][: len(lines[1]) // 2] + "\n")
    with pytest.raises(DataError):
        cctx.load(cut)
    ledger = cctx.load(cut, errors="report")
    assert len(ledger) == 1
    (bad,) = cctx.bad_rows(ledger).to_dict("records")
    assert "truncated" in bad["reason"]
    no_meta = _reply(V1_BURN)
    del no_meta["meta"]
    lost = tmp_path / "lost.json"
    lost.write_text(json.dumps({"jsonrpc": "2.0", "id": 1, "result": no_meta}))
    (bad,) = cctx.bad_rows(cctx.load(lost, errors="report")).to_dict("records")
    assert "lacks transaction or meta" in bad["reason"]


def _with_event_data(path: Path, change: Any, out: Path) -> Path:
    reply = _reply(path)
    for group in reply["meta"]["innerInstructions"]:
        for ix in group["instructions"]:
            if len(ix["accounts"]) == 1 and ix["data"].startswith("EVM9wLn"):
                ix["data"] = base58_encode(change(_b58(ix["data"])))
    out.write_text(json.dumps(reply))
    return out


def test_unknown_event_layout_is_counted(tmp_path: Path) -> None:
    short = _with_event_data(V1_BURN, lambda raw: raw[:-4], tmp_path / "short.json")
    ledger = cctx.load(short, errors="report")
    (bad,) = cctx.bad_rows(ledger).to_dict("records")
    assert "196 bytes of its layout" in bad["reason"]
    assert len(ledger) == 0
    other = _with_event_data(V1_BURN, lambda raw: raw[:8] + b"\x01" * 8 + raw[16:],
                             tmp_path / "other.json")
    ledger = cctx.load(other)
    counts = _adds_up(ledger)
    assert counts["skipped_other_events"] == 1
    assert len(ledger) == 0
