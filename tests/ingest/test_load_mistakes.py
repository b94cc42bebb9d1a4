"""Everyday mistakes with real data: each is refused or read right, never read wrong.

The files are the real messages of ``tests/fixtures/docs`` (sources in
``tests/fixtures/cctp_real/README.md``), copied under the names a user
would give them; each test says what it changed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import cctx_research as cctx

DOCS = Path(__file__).parents[1] / "fixtures" / "docs"


def _two_receipt_files(tmp_path: Path) -> tuple[Path, Path]:
    """``eth.json`` and ``base.json`` (unchanged) as ``ethereum/logs.json``, ``base/logs.json``."""
    eth = tmp_path / "ethereum" / "logs.json"
    base = tmp_path / "base" / "logs.json"
    for src, dst in ((DOCS / "eth.json", eth), (DOCS / "base.json", base)):
        dst.parent.mkdir()
        shutil.copy(src, dst)
    return eth, base


def test_files_of_one_name_are_each_read_as_the_chain_their_path_is_given(tmp_path):
    eth, base = _two_receipt_files(tmp_path)
    ledger = cctx.load([eth, base], chain={str(eth): "ethereum", str(base): "base"})
    corridors = set(zip(ledger["source_domain"], ledger["destination_domain"], strict=True))
    assert corridors == {(0, 6), (6, 0)}  # Ethereum -> Base and back, both linked
    assert ledger["mint_timestamp"].notna().all()


def test_a_bare_name_that_matches_two_files_is_refused(tmp_path):
    eth, base = _two_receipt_files(tmp_path)
    with pytest.raises(ValueError, match=r"'logs.json' matches 2 files.*by its path"):
        cctx.load([eth, base], chain={"logs.json": "ethereum"})
    # a bare name that matches one file still works
    ledger = cctx.load([eth], chain={"logs.json": "ethereum"})
    assert set(ledger["source_domain"]) == {0, 6}


def _generic_v2_with_a_burn_sized_body() -> dict:
    """The real generic V2 message OP -> Base (``cctp_real/generic_messages.json``,
    ``generic_v2_op_to_base_hyperlane_sent``: Hyperlane's, header sender 0xa7ec...)
    with its 32-byte body replaced by 228 bytes whose "amount" word is all ones (it
    overflows int64), laid out as the ``MessageSent`` log OP's V2 MessageTransmitter
    emits. Block, time and transaction hash are filled in.
    """
    import json

    from eth_abi import encode

    from tests.ingest.logs import SIGNATURES, topic0

    entries = json.loads((DOCS.parent / "cctp_real" / "generic_messages.json").read_text())
    real = next(e for e in entries["entries"] if e["id"] == "generic_v2_op_to_base_hyperlane_sent")
    header = bytes.fromhex(real["message_hex"][2:])[:148]
    body = bytes(4) + bytes(32) * 2 + b"\xff" * 32 + bytes(32) * 4
    assert len(body) == 228
    data = encode(["bytes"], [header + body])
    return {
        "address": "0x81d40f21f12a8f0e3252bccb954d722d4c464b64",
        "topics": [topic0(SIGNATURES[("MessageSent", 2)])],
        "data": "0x" + data.hex(),
        "blockNumber": hex(130_000_000),
        "blockTimestamp": hex(1_740_000_000),
        "transactionHash": real["source_tx_hash"],
        "transactionIndex": "0x1",
        "logIndex": "0x2",
        "removed": False,
    }


@pytest.mark.parametrize("errors", ["raise", "report"])
def test_a_generic_v2_message_is_skipped_and_counted_never_an_error(tmp_path, errors):
    import json

    path = tmp_path / "op_logs.json"
    path.write_text(json.dumps([_generic_v2_with_a_burn_sized_body()]))
    ledger = cctx.load(path, chain="optimism", errors=errors)
    assert len(ledger) == 0
    assert cctx.bad_rows(ledger).empty
    from cctx_research.provenance import provenance

    assert provenance(ledger).count["skipped_generic_messages"] == 1


FIXTURES = DOCS.parent


def _rewrite(src: Path, dst: Path, column: str, change) -> Path:
    import pandas as pd

    frame = pd.read_csv(src, dtype=str)
    frame[column] = frame[column].map(change)
    dst.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(dst, index=False)
    return dst


@pytest.mark.parametrize(("scale", "unit"), [(1_000, "ms"), (1_000_000, "us"), (10**9, "ns")])
def test_epoch_times_in_smaller_units_read_as_the_same_instants(tmp_path, scale, unit):
    # XChainDataGen's fixture, its two time columns (Unix seconds) rewritten in ``unit``
    name = "cctp_cross_chain_transactions.csv"
    src = FIXTURES / "xchaindatagen" / name
    path = _rewrite(src, tmp_path / unit / name, "src_timestamp", lambda v: str(int(v) * scale))
    _rewrite(path, path, "dst_timestamp", lambda v: str(int(v) * scale))
    expected = cctx.load(src)
    got = cctx.load(path)
    assert got["burn_timestamp"].tolist() == expected["burn_timestamp"].tolist()
    assert got["mint_timestamp"].tolist() == expected["mint_timestamp"].tolist()
    assert got["burn_timestamp"].min().year == 2024


@pytest.mark.parametrize(
    ("value", "says"),
    [("2021-06-01 00:00:00.000 UTC", "before CCTP's launch"), ("2105-02-01", "in the future")],
)
def test_a_time_outside_cctps_era_is_refused_naming_file_row_and_column(tmp_path, value, says):
    # Dune's decoded DepositForBurn fixture, the first row's evt_block_time replaced by ``value``
    from cctx_research.errors import DataError

    name = "circle_ethereum_tokenmessenger_evt_depositforburn.csv"
    src = FIXTURES / "dune" / name
    rows = iter([value])
    path = _rewrite(src, tmp_path / name, "evt_block_time", lambda v: next(rows, v))
    with pytest.raises(DataError) as caught:
        cctx.load(path, chain="ethereum")
    text = str(caught.value)
    assert name in text
    assert "evt_block_time" in text
    assert says in text
    assert "Unix seconds" in text
    reported = cctx.load(path, chain="ethereum", errors="report")
    bad = cctx.bad_rows(reported)
    assert bad["index"].tolist() == [2]  # the file's line 2: its first row
    assert len(reported) == len(cctx.load(src, chain="ethereum")) - 1


def test_dune_flows_one_sided_rows_load_as_the_spell_writes_them(tmp_path):
    # bridges_evms.flows is a FULL OUTER JOIN of deposits (which carry
    # withdrawal_chain_id) and withdrawals (which carry deposit_chain_id); the
    # fixture's first CCTP row (ethereum -> base) is split into the two one-sided rows
    # the join gives when either side is missing from the export.
    import pandas as pd

    frame = pd.read_csv(FIXTURES / "dune" / "bridges_evms_flows.csv", dtype=str)
    row = frame.iloc[[0]]
    deposit_only, withdrawal_only = row.copy(), row.copy()
    for column in frame.columns:
        if column.startswith("withdrawal_") and column != "withdrawal_chain_id":
            deposit_only[column] = None  # the deposit table knows its target's id only
        if column.startswith("deposit_") and column != "deposit_chain_id":
            withdrawal_only[column] = None  # the withdrawal table knows its origin's id only
    deposit_only["deposit_chain"] = row["deposit_chain"]
    deposit_only["deposit_chain_id"] = None
    withdrawal_only["withdrawal_chain"] = row["withdrawal_chain"]
    withdrawal_only["withdrawal_chain_id"] = None
    path = tmp_path / "bridges_evms_flows.csv"
    pd.concat([deposit_only, withdrawal_only]).to_csv(path, index=False)
    ledger = cctx.load(path)  # errors="raise": nothing refused
    assert set(zip(ledger["source_domain"], ledger["destination_domain"], strict=True)) == {
        (0, 6)
    }
    burns = ledger[ledger["burn_tx_hash"].notna()]
    mints = ledger[ledger["mint_tx_hash"].notna()]
    assert len(burns) >= 1
    assert len(mints) >= 1
    assert burns["amount_raw"].tolist()[0] == 123456789012


TESTNET = {
    "0x28b5a0e9c621a5badaa536219b3a228c8168cf5d": "0x8fe6b999dc680ccfdd5bf7eb0974218be2542daa",
    "0x81d40f21f12a8f0e3252bccb954d722d4c464b64": "0xe737e5cebeeba77efe34d4aa090756590b1ce275",
}


@pytest.mark.parametrize("errors", ["raise", "report"])
def test_v2_logs_of_the_testnet_contracts_are_refused_as_testnet(tmp_path, errors):
    # eth.json's real V2 mint (MintAndWithdraw + MessageReceived, v2_attested_base_to_eth_19500)
    # with each emitter rewritten to its testnet V2 counterpart (Circle's testnet pages)
    import json

    from cctx_research.errors import DataError

    logs = json.loads((DOCS / "eth.json").read_text())
    for log in logs:
        log["address"] = TESTNET.get(log["address"], log["address"])
    path = tmp_path / "sepolia.json"
    path.write_text(json.dumps(logs))
    with pytest.raises(DataError, match=r"testnet data: log \d+ of transaction 0x62709dd885") as e:
        cctx.load(path, chain="ethereum", errors=errors)
    assert "sepolia.json" in str(e.value)
    assert "column 'address'" in str(e.value)
    assert "mainnet" in str(e.value)


def test_a_v1_table_of_one_chain_given_as_another_is_refused(tmp_path):
    # Dune's decoded Ethereum DepositForBurn fixture (contract_address: Ethereum's V1
    # TokenMessenger, 0xbd3f...), unchanged, loaded with chain="base"
    from cctx_research.errors import DataError

    name = "circle_ethereum_tokenmessenger_evt_depositforburn.csv"
    with pytest.raises(DataError, match=r"line 2: column 'contract_address' .* of ethereum, but"
                       r" the row is read as base") as e:  # fmt: skip
        cctx.load(FIXTURES / "dune" / name, chain="base")
    assert "chain='ethereum'" in str(e.value)
    assert len(cctx.load(FIXTURES / "dune" / name, chain="ethereum")) > 0


def test_a_dune_table_of_the_testnet_contracts_is_refused(tmp_path):
    # Dune's decoded V2 DepositForBurn fixture, contract_address rewritten to the testnet
    # TokenMessengerV2
    from cctx_research.errors import DataError

    name = "circle_multichain_tokenmessengerv2_evt_depositforburn.csv"
    path = _rewrite(FIXTURES / "dune" / name, tmp_path / name, "contract_address",
                    lambda v: "0x8FE6B999Dc680CcFDD5Bf7EB0974218be2542DAA")  # fmt: skip
    with pytest.raises(DataError, match=r"testnet data: line 2, column 'contract_address'"):
        cctx.load(path)


def test_an_xchaindatagen_row_whose_contract_is_of_another_chain_is_refused(tmp_path):
    # XChainDataGen's cross-chain fixture, src_blockchain rewritten from ethereum to base;
    # its src_contract_address stays Ethereum's V1 TokenMessenger
    from cctx_research.errors import DataError

    name = "cctp_cross_chain_transactions.csv"
    path = _rewrite(FIXTURES / "xchaindatagen" / name, tmp_path / name, "src_blockchain",
                    lambda v: "base" if v == "ethereum" else v)  # fmt: skip
    with pytest.raises(DataError, match=r"line 2: column 'src_contract_address' .* of "
                       r"ethereum, but the row is read as base") as e:  # fmt: skip
        cctx.load(path)
    assert "src_blockchain" in str(e.value)
