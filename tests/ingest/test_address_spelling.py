"""One spelling per address: a loaded ledger spells each address as its chain does.

Real transfers (fixtures cited in tests/fixtures/solana/README.md and
tests/fixtures/cctp_real/README.md):

- Solana -> Ethereum: ``v1_burn_solana_to_ethereum.json``, mainnet transaction
  ``3UZLAda9...`` recorded by wormhole-foundation/wormhole-explorer (depositor
  ``3DBoK4xX...``, USDC mint ``EPjFWdd5...``);
- Arbitrum -> Solana: the real V1 message nonce 290001 that
  ``v1_receive_from_arbitrum.json`` (mainnet ``3VXJGF7X...``, same source)
  receives, its Arbitrum burn rebuilt from the message (``tests/ingest/real.py``);
- Solana -> Ethereum V2: ``v2_burn_solana_to_ethereum.json`` (the real message
  ``v2_attested_solana_to_eth``) with its real Ethereum mint ``0x8897ff...``.

What the client and the sample write for the same address is the reference:
the loaded ledger is served on loopback and read back through the client.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import cctx_research as cctx
from cctx_research import addressing, schema
from cctx_research.addressing import base58_encode, bech32_encode
from cctx_research.errors import CoverageWarning

from .real import burn_logs, message, mint_logs, tx, write
from .solana.test_decoder import V1_BURN, V1_RECEIVE, V2_BURN_ETH, _arbitrum_to_solana_message

ZERO_SOLANA = "1" * 32  # base58 of 32 zero bytes
HEX64 = r"0x[0-9a-f]{64}"


def _reply(path: Path) -> dict[str, Any]:
    doc = json.loads(path.read_text())
    return doc["result"] if "jsonrpc" in doc else doc


def _account_keys(path: Path) -> list[str]:
    reply = _reply(path)
    loaded = reply["meta"].get("loadedAddresses") or {"writable": [], "readonly": []}
    return (reply["transaction"]["message"]["accountKeys"] + loaded["writable"]
            + loaded["readonly"])  # fmt: skip


def _served(ledger: pd.DataFrame, start: str, end: str) -> pd.DataFrame:
    """The ledger served on loopback and listed back by the client (every chain)."""
    with cctx.connect(data=ledger, loopback=True, as_of=end) as client, warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverageWarning)  # a few transfers in a wider window
        return client.mints(start, end).set_index("transfer_id")


@pytest.fixture(scope="module")
def arbitrum_to_solana(tmp_path_factory) -> tuple[pd.DataFrame, Any]:
    root = tmp_path_factory.mktemp("arb_sol")
    m = _arbitrum_to_solana_message()
    # FILLED: the Arbitrum burn's block, time and tx hash (the source gives the message only)
    logs = burn_logs(m, block=246_000_000, tx_hash=tx("arbitrum burn 290001"), index=3,
                     time=1724522000)
    arbitrum = write(root / "arbitrum.json", logs)
    ledger = cctx.load([V1_RECEIVE, arbitrum], chain={str(arbitrum): "arbitrum"})
    return ledger, m


@pytest.fixture(scope="module")
def solana_to_ethereum(tmp_path_factory) -> tuple[pd.DataFrame, Any]:
    m = message("v2_attested_solana_to_eth")
    logs = mint_logs(m, block=22_875_000, tx_hash=m.entry["destination_tx_hash"], index=10,
                     time=1_752_000_900)  # FILLED: block, log index and time
    eth = write(tmp_path_factory.mktemp("sol_eth") / "ethereum.json", logs)
    return cctx.load([V2_BURN_ETH, eth], chain={str(eth): "ethereum"}), m


# ---------------------------------------------------------------------------
# real transfers, loaded


def test_solana_to_evm_spells_the_solana_side_in_base58() -> None:
    ledger = cctx.load(V1_BURN)
    row = ledger.iloc[0]
    keys = _account_keys(V1_BURN)
    assert row["message_sender"] == "3DBoK4xXbff387iNkVmJt18ZXbQHjaBUXR9Xwy7KJdPM" in keys
    assert row["burn_token"] == "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
    # the destination side is Ethereum's: 0x + 40 hex, lowercase
    assert row["destination_token_messenger"] == "0xbd3fa81b58ba92a82136038b25adec7066af3155"
    assert pd.Series([row["mint_recipient"]]).str.fullmatch(r"0x[0-9a-f]{40}").all()


def test_evm_to_solana_spells_the_solana_side_in_base58(arbitrum_to_solana) -> None:
    ledger, m = arbitrum_to_solana
    row = ledger[ledger["nonce"] == "290001"].iloc[0]
    assert row["pairing"] == "exact"
    keys = _account_keys(V1_RECEIVE)
    # the mint recipient (a USDC token account of the receive), its owner and the relayer
    assert row["mint_recipient"] == base58_encode(m.body_word(36))
    assert row["mint_recipient"] in keys
    owners = {keys[b["accountIndex"]]: b["owner"]
              for b in _reply(V1_RECEIVE)["meta"]["postTokenBalances"]}  # fmt: skip
    assert row["mint_recipient_owner"] == owners[row["mint_recipient"]]
    assert row["relayer"] in keys
    assert row["destination_caller"] == base58_encode(m.word("destination_caller"))
    assert row["destination_token_messenger"] == base58_encode(m.word("recipient"))
    # the source side is Arbitrum's
    assert row["message_sender"] == m.address(m.body_word(100))
    assert row["burn_token"] == "0xaf88d065e77c8cc2239327c5edb3a432268e5831"


@pytest.mark.parametrize(("loaded", "window"), [
    ("arbitrum_to_solana", ("2024-08-20", "2024-08-30")),
    ("solana_to_ethereum", ("2025-07-01", "2025-07-10")),
])  # fmt: skip
def test_loaded_addresses_equal_the_clients_spelling(request, loaded, window) -> None:
    ledger = request.getfixturevalue(loaded)[0]
    listed = _served(ledger, *window)
    assert len(listed) == 1  # the linked transfer (the others are pending)
    row = ledger.set_index("transfer_id").loc[listed.index[0]]
    assert 5 in (row["source_domain"], row["destination_domain"])
    for column in schema.ADDRESS_COLUMNS:
        assert listed[column].iloc[0] == row[column], column


def test_zero_destination_caller_is_the_destination_chains_zero(solana_to_ethereum,
                                                                 tmp_path) -> None:
    ledger, m = solana_to_ethereum
    assert m.word("destination_caller") == bytes(32)  # the real message sets none
    assert ledger["destination_caller"].tolist() == ["0x" + "0" * 40]
    assert ledger["message_sender"].iloc[0] == base58_encode(m.body_word(100))
    # an Arbitrum burn toward Solana with no caller: zero on Solana is base58 of 32 zero bytes
    ledger = cctx.load(_zero_caller_burn(tmp_path), chain="arbitrum")
    assert ledger["destination_caller"].tolist() == [ZERO_SOLANA]
    sample = cctx.load_sample(as_of="2024-07-01", days=1)
    to_solana = sample[sample["destination_domain"] == 5]["destination_caller"]
    assert ZERO_SOLANA in set(to_solana)  # the sample spells it the same way
    assert ZERO_SOLANA in addressing.ZERO_ADDRESSES
    assert bech32_encode("noble", bytes(20)) in addressing.ZERO_ADDRESSES


def _zero_caller_burn(tmp_path: Path) -> Path:
    """The real Arbitrum -> Solana message with its destination caller zeroed (FILLED)."""
    m = _arbitrum_to_solana_message()
    zero = type(m)(m.raw[:84] + bytes(32) + m.raw[116:], {})
    logs = burn_logs(zero, block=1, tx_hash=tx("zero caller"), index=3, time=1724522000)
    return write(tmp_path / "arbitrum.json", logs)


def test_zero_caller_on_solana_is_no_integrator(tmp_path) -> None:
    ledger = cctx.load(_zero_caller_burn(tmp_path), chain="arbitrum")
    table = cctx.analysis.actors.integrators(ledger, by="destination_caller", labels=False)
    assert ZERO_SOLANA not in set(table["integrator"].dropna().astype(str))


# ---------------------------------------------------------------------------
# the sample written and loaded back


def _written_as_bytes32(ledger: pd.DataFrame) -> pd.DataFrame:
    """The ledger as a file that keeps CCTP's bytes32 would hold it (encoded one by one)."""
    out = ledger.copy()
    for column in schema.ADDRESS_CHAINS:
        out[column] = [None if pd.isna(v) else addressing.to_bytes32(v) for v in out[column]]
    return out


@pytest.mark.parametrize("form", ["as written", "bytes32"])
def test_sample_written_and_loaded_back_joins_with_the_client(tmp_path, form) -> None:
    as_of = "2024-07-01T00:00Z"
    sample = cctx.load_sample(as_of=as_of, days=1)
    written = sample if form == "as written" else _written_as_bytes32(sample)
    path = tmp_path / "ledger.parquet"
    written.to_parquet(path)
    loaded = cctx.load(path)
    with cctx.connect(sample=True, as_of=as_of, days=1, loopback=True) as client:
        listed = client.mints("2024-06-30", as_of)
    joined = listed.merge(loaded, on=["transfer_id", "message_sender"], how="inner",
                          suffixes=("", "_loaded"))
    assert len(listed) > 0
    assert len(joined) == len(listed)
    assert (joined["source_domain"] == 5).any()
    assert (joined["destination_domain"] == 5).any()
    for column in ("mint_recipient", "destination_caller", "burn_token"):
        assert (joined[column] == joined[f"{column}_loaded"]).all(), column
    for column in schema.ADDRESS_CHAINS:
        assert loaded[column].equals(sample[column].astype(schema.STRING)), column


# ---------------------------------------------------------------------------
# bytes32 on request


def test_bytes32_on_request_round_trips(arbitrum_to_solana) -> None:
    ledger = pd.concat([arbitrum_to_solana[0], cctx.load_sample(as_of="2024-07-01", days=1)],
                       ignore_index=True)
    wire = addressing.as_bytes32(ledger)
    for column in schema.ADDRESS_CHAINS:
        present = wire[column].dropna()
        assert present.str.fullmatch(HEX64).all(), column
        assert ledger[column].isna().equals(wire[column].isna())
    solana = ledger["destination_domain"].to_numpy() == 5
    recipient = ledger.loc[solana, "mint_recipient"].iloc[0]
    assert wire.loc[solana, "mint_recipient"].iloc[0] == addressing.to_bytes32(recipient)
    evm = np.flatnonzero(ledger["source_domain"].to_numpy() == 0)[0]
    assert wire["message_sender"].iloc[evm] == "0x" + "0" * 24 + ledger["message_sender"].iloc[
        evm][2:]
    back = addressing.as_chain_format(wire)
    pd.testing.assert_frame_equal(back, ledger)
    assert cctx.provenance.provenance(back) == cctx.provenance.provenance(ledger)


def test_bytes32_refuses_what_is_not_an_address() -> None:
    frame = pd.DataFrame({"source_domain": [5, 0], "destination_domain": [0, 5],
                          "message_sender": ["EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
                                             "not-an-address"]})
    with pytest.raises(ValueError, match=r"'message_sender', row 1: 'not-an-address'.*ethereum"):
        addressing.as_bytes32(frame)
    with pytest.raises(TypeError, match="pandas DataFrame"):
        addressing.as_bytes32(frame.to_dict())
    with pytest.raises(ValueError, match="needs the column 'destination_domain'"):
        addressing.as_chain_format(pd.DataFrame({"mint_recipient": ["0x" + "ab" * 20]}))
    with pytest.raises(ValueError, match="not an address column"):
        addressing.as_bytes32(frame, columns=["source_domain"])
