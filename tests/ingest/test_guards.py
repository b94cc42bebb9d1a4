"""The guards every reader applies: Circle's emitters only, times in CCTP's era, amounts
within USDC's supply, domains a message can carry.

The files are real (``tests/fixtures/docs``, ``dune``, ``xchaindatagen``, ``solana``; sources
cited in their READMEs and ``tests/fixtures/cctp_real/README.md``); each test says what it
changed in them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import cctx_research as cctx
from cctx_research.errors import DataError
from cctx_research.provenance import provenance

FIXTURES = Path(__file__).parents[1] / "fixtures"
DOCS = FIXTURES / "docs"
ELSEWHERE = "0x1234567890abcdef1234567890abcdef12345678"  # no CCTP contract


def _counts(ledger: pd.DataFrame) -> dict[str, int]:
    counts = dict(provenance(ledger).count)
    assert counts["rows_read"] == (
        counts["decoded"] + counts["skipped"] + counts["duplicates"] + counts["bad"]
    )
    return counts


def _logs(tmp_path: Path, change) -> Path:
    """``docs/eth.json`` (Ethereum: a V1 burn, MessageSent then DepositForBurn, and a V2 mint,
    MintAndWithdraw then MessageReceived) with ``change`` applied to each log."""
    logs = json.loads((DOCS / "eth.json").read_text())
    for i, log in enumerate(logs):
        change(i, log)
    path = tmp_path / "eth.json"
    path.write_text(json.dumps(logs))
    return path


# -- emitters --------------------------------------------------------------------------


def test_a_real_burn_re_emitted_by_another_contract_is_skipped_and_counted(tmp_path):
    truth = cctx.load(DOCS / "eth.json", chain="ethereum")

    def elsewhere(i, log):  # the V1 burn's two logs, emitted by another contract
        if i < 2:
            log["address"] = ELSEWHERE

    ledger = cctx.load(_logs(tmp_path, elsewhere), chain="ethereum")
    counts = _counts(ledger)
    assert counts["skipped_unknown_emitter"] == 2
    assert len(truth) == 2
    assert len(ledger) == 1
    assert ledger["burn_tx_hash"].isna().all()  # the mint alone: no burn was counted
    assert "skipped_unknown_emitter" not in _counts(truth)


def test_a_v2_event_of_another_contract_is_skipped(tmp_path):
    # the V2 mint's MintAndWithdraw and MessageReceived from a non-CCTP address
    def elsewhere(i, log):
        if i >= 2:
            log["address"] = ELSEWHERE

    ledger = cctx.load(_logs(tmp_path, elsewhere), chain="ethereum")
    assert _counts(ledger)["skipped_unknown_emitter"] == 2
    assert ledger["mint_tx_hash"].isna().all()


def test_v2_events_of_the_shared_contracts_are_not_edges(tmp_path):
    # EDGE (domain 28) has its own V2 contracts: V2 logs of the shared address, given as
    # EDGE's, are not Circle's there (the V1 logs are Ethereum's and refused as such)
    def v2_only(i, log):
        if i < 2:
            log["topics"] = ["0x" + "00" * 32]  # another event: skipped as such

    ledger = cctx.load(_logs(tmp_path, v2_only), chain="edge")
    counts = _counts(ledger)
    assert counts["skipped_unknown_emitter"] == 2
    assert len(ledger) == 0


def test_a_message_transmitters_event_from_the_token_messenger_is_skipped(tmp_path):
    # the V2 MessageReceived given the TokenMessengerV2 as its emitter: a CCTP contract, but
    # not the one that emits that event
    def swapped(i, log):
        if i == 3:
            log["address"] = "0x28b5a0e9c621a5badaa536219b3a228c8168cf5d"

    ledger = cctx.load(_logs(tmp_path, swapped), chain="ethereum")
    assert _counts(ledger)["skipped_unknown_emitter"] == 1


def _rewrite(src: Path, dst: Path, column: str, change) -> Path:
    frame = pd.read_csv(src, dtype=str)
    frame[column] = frame[column].map(change)
    frame.to_csv(dst, index=False)
    return dst


@pytest.mark.parametrize(
    ("name", "chain", "transfers"),
    [
        ("circle_ethereum_tokenmessenger_evt_depositforburn.csv", "ethereum", 1),
        # a MintAndWithdraw alone says no source: skipped as such even when it is Circle's
        ("circle_base_tokenmessenger_evt_mintandwithdraw.csv", "base", 0),
        ("circle_base_messagetransmitter_evt_messagereceived.csv", "base", 1),
        ("circle_multichain_tokenmessengerv2_evt_depositforburn.csv", None, 1),
    ],
)
def test_a_dune_row_of_another_contract_is_skipped_and_counted(tmp_path, name, chain,
                                                              transfers):  # fmt: skip
    # Dune's decoded fixture, contract_address rewritten to a non-CCTP address
    truth = cctx.load(FIXTURES / "dune" / name, chain=chain)
    path = _rewrite(FIXTURES / "dune" / name, tmp_path / name, "contract_address",
                    lambda v: ELSEWHERE)  # fmt: skip
    ledger = cctx.load(path, chain=chain)
    assert len(truth) == transfers
    assert "skipped_unknown_emitter" not in _counts(truth)
    assert len(ledger) == 0
    assert _counts(ledger)["skipped_unknown_emitter"] == 1


def test_a_dune_table_without_its_contract_address_is_refused(tmp_path):
    name = "circle_ethereum_tokenmessenger_evt_depositforburn.csv"
    frame = pd.read_csv(FIXTURES / "dune" / name, dtype=str).drop(columns=["contract_address"])
    frame.to_csv(tmp_path / name, index=False)
    with pytest.raises(DataError, match="no 'contract_address' column") as e:
        cctx.load(tmp_path / name, chain="ethereum")
    assert "export the decoded table with its contract_address" in str(e.value)


@pytest.mark.parametrize("table", ["deposits", "withdrawals"])
def test_a_dune_bridges_row_of_another_contract_is_skipped_and_counted(tmp_path, table):
    # the spell's deposits and withdrawals carry the TokenMessenger that emitted the event
    # (spellbook's cctp_v1_deposits/withdrawals macros); the first row's rewritten
    name = f"bridges_evms_{table}.csv"
    truth = cctx.load(FIXTURES / "dune" / name)
    frame = pd.read_csv(FIXTURES / "dune" / name, dtype=str)
    frame.loc[0, "contract_address"] = ELSEWHERE
    frame.to_csv(tmp_path / name, index=False)
    ledger = cctx.load(tmp_path / name)
    assert len(truth) == 2
    assert "skipped_unknown_emitter" not in _counts(truth)
    assert len(ledger) == 1
    assert _counts(ledger)["skipped_unknown_emitter"] == 1
    kept = "burn_tx_hash" if table == "deposits" else "mint_tx_hash"
    assert ledger[kept].tolist() == [frame.loc[1, "tx_hash"]]


@pytest.mark.parametrize(
    ("table", "contract", "says"),
    [
        # Circle's V2 testnet TokenMessenger (the same on every testnet)
        ("deposits", "0x8fe6b999dc680ccfdd5bf7eb0974218be2542daa", "holds testnet data"),
        # Base's V1 TokenMessenger on an Ethereum deposit
        ("deposits", "0x1682ae6375c4e4a97e4b583bc394c861a46d8962", "base"),
        # Ethereum's V1 TokenMessenger on a Base withdrawal
        ("withdrawals", "0xbd3fa81b58ba92a82136038b25adec7066af3155", "ethereum"),
    ],
)
def test_a_dune_bridges_row_of_a_testnet_or_another_chains_contract_is_refused(
    tmp_path, table, contract, says
):
    name = f"bridges_evms_{table}.csv"
    frame = pd.read_csv(FIXTURES / "dune" / name, dtype=str)
    frame.loc[1, "contract_address"] = contract
    frame.to_csv(tmp_path / name, index=False)
    with pytest.raises(DataError) as e:
        cctx.load(tmp_path / name)
    message = str(e.value)
    assert says in message.lower()
    assert "line 3" in message  # the header is line 1
    assert "'contract_address'" in message
    assert name in message


def test_an_xchaindatagen_row_of_another_contract_is_skipped_and_counted(tmp_path):
    # XChainDataGen's cross-chain fixture, src_contract_address rewritten
    name = "cctp_cross_chain_transactions.csv"
    path = _rewrite(FIXTURES / "xchaindatagen" / name, tmp_path / name, "src_contract_address",
                    lambda v: ELSEWHERE)  # fmt: skip
    assert len(cctx.load(FIXTURES / "xchaindatagen" / name)) == 1
    ledger = cctx.load(path)
    assert len(ledger) == 0
    assert _counts(ledger)["skipped_unknown_emitter"] == 1


@pytest.mark.parametrize(
    ("name", "column"),
    [
        ("cctp_deposit_for_burn.csv", "transaction_hash"),
        ("cctp_message_received.csv", "transaction_hash"),
        ("cctp_cross_chain_transactions.csv", "src_transaction_hash"),
        ("cctp_cross_chain_transactions.csv", "dst_transaction_hash"),
        ("cctp_blockchain_transactions.csv", "transaction_hash"),
    ],
)
def test_an_xchaindatagen_row_without_its_transaction_hash_is_a_bad_row(tmp_path, name, column):
    # XChainDataGen declares every transaction hash NOT NULL (repository/cctp/models.py):
    # the fixture's first row with its hash emptied
    frame = pd.read_csv(FIXTURES / "xchaindatagen" / name, dtype=str)
    frame.loc[0, column] = None
    path = tmp_path / name
    frame.to_csv(path, index=False)
    with pytest.raises(DataError) as e:
        cctx.load(path)
    message = str(e.value)
    assert f"{name}:2:" in message  # the first row is line 2
    assert f"column {column!r} is empty" in message
    assert "XChainDataGen writes a transaction hash on every row" in message


# -- amounts ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("folder", "name", "column", "chain"),
    [
        ("dune", "circle_ethereum_tokenmessenger_evt_depositforburn.csv", "amount", "ethereum"),
        ("dune", "bridges_evms_flows.csv", "deposit_amount_raw", None),
        ("xchaindatagen", "cctp_cross_chain_transactions.csv", "amount", None),
    ],
)
def test_an_amount_beyond_usdcs_supply_is_refused_naming_file_line_and_column(
    tmp_path, folder, name, column, chain
):
    # the fixture's amounts rewritten as 5 USDC written with 18 decimals (5 * 10**18: within
    # int64, beyond USDC's supply)
    path = _rewrite(FIXTURES / folder / name, tmp_path / name, column,
                    lambda v: "5000000000000000000" if isinstance(v, str) else v)  # fmt: skip
    with pytest.raises(DataError, match=rf"{name}:2: column {column!r}: '5000000000000000000' "
                       r"base units is not an amount of USDC") as e:  # fmt: skip
        cctx.load(path, chain=chain)
    assert "6 decimals" in str(e.value)
    ledger = cctx.load(path, chain=chain, errors="report")
    assert _counts(ledger)["bad"] >= 1
    assert (ledger["amount_raw"] <= 10**17).all()


def test_an_event_log_amount_beyond_usdcs_supply_is_a_bad_row_naming_the_log(tmp_path):
    from eth_abi import encode

    # the V2 MintAndWithdraw's amount word rewritten as 5 * 10**18 (5 USDC in wei)
    def huge(i, log):
        if i == 2:
            data = bytes.fromhex(log["data"][2:])
            log["data"] = "0x" + (encode(["uint256"], [5 * 10**18]) + data[32:]).hex()

    path = _logs(tmp_path, huge)
    with pytest.raises(DataError, match=r"log 4 of transaction 0x62709dd885.*column 'amount'"):
        cctx.load(path, chain="ethereum")
    ledger = cctx.load(path, chain="ethereum", errors="report")
    assert _counts(ledger)["bad"] == 1
    assert "is not an amount of USDC" in cctx.bad_rows(ledger)["reason"].iat[0]


def test_a_message_sent_from_no_cctp_domain_is_a_bad_row_not_another_chain(tmp_path):
    # the V1 MessageSent's source domain (bytes 4-8 of the message, after the two words of
    # its ABI bytes) rewritten as 2**28, which no chain has: a damaged message (the fuzz
    # test's find), where the file used to be refused as "domain-268435456"'s
    def damaged(i, log):
        if i == 0:
            data = bytearray.fromhex(log["data"][2:])
            data[68:72] = (2**28).to_bytes(4, "big")
            log["data"] = "0x" + data.hex()

    path = _logs(tmp_path, damaged)
    with pytest.raises(DataError, match=r"log 10 of transaction 0xc94c32fe36\w+: MessageSent whose "
                       r"message says source domain 268435456, which no CCTP chain has"):
        cctx.load(path, chain="ethereum")
    ledger = cctx.load(path, chain="ethereum", errors="report")
    assert _counts(ledger)["bad"] == 1
    assert "a damaged message" in cctx.bad_rows(ledger)["reason"].iat[0]

    # a message naming another chain's domain still says the file is that chain's
    def arbitrum(i, log):
        if i == 0:
            data = bytearray.fromhex(log["data"][2:])
            data[68:72] = (3).to_bytes(4, "big")
            log["data"] = "0x" + data.hex()

    with pytest.raises(DataError, match="the data says arbitrum"):
        cctx.load(_logs(tmp_path, arbitrum), chain="ethereum", errors="report")


def test_an_own_ledger_amount_beyond_usdcs_supply_is_refused(tmp_path):
    ledger = cctx.load(DOCS / "eth.json", chain="ethereum")
    ledger.loc[0, "amount_raw"] = 2 * 10**17
    ledger.to_csv(tmp_path / "mine.csv", index=False)
    with pytest.raises(DataError, match=r"mine.csv:2: column 'amount_raw'.*not an amount"):
        cctx.load(tmp_path / "mine.csv")


def test_an_own_transfers_amount_in_usdc_beyond_its_supply_is_refused(tmp_path):
    # a "transfers" table (one time, amounts in USDC) of the two transfers of docs/eth.json,
    # the second's amount written as 2e12 USDC
    ledger = cctx.load(DOCS / "eth.json", chain="ethereum")
    frame = pd.DataFrame({
        "transfer_id": ledger["transfer_id"],
        "timestamp": ledger["burn_timestamp"].fillna(ledger["mint_timestamp"]),
        "amount": [1.5, 2e12],
        "is_completed": [True, True],
        **{c: ledger[c] for c in ("source_domain", "destination_domain", "mint_recipient",
                                  "message_sender", "burn_token", "destination_caller",
                                  "destination_token_messenger")},
    })  # fmt: skip
    frame.to_csv(tmp_path / "mine.csv", index=False)
    assert len(cctx.load(tmp_path / "mine.csv", errors="report")) == 1
    with pytest.raises(DataError, match=r"mine.csv:3: column 'amount': 2e\+12 USDC is not "
                       r"an amount of USDC \(from 0 to 100,000,000,000 USDC"):  # fmt: skip
        cctx.load(tmp_path / "mine.csv")


# -- domains and times of own frames ---------------------------------------------------


def test_an_own_ledger_domain_no_message_can_carry_is_refused(tmp_path):
    ledger = cctx.load(DOCS / "eth.json", chain="ethereum")
    ledger.loc[1, "destination_domain"] = -3
    ledger.to_csv(tmp_path / "mine.csv", index=False)
    with pytest.raises(DataError, match=r"mine.csv:3: column 'destination_domain'.*not a CCTP"):
        cctx.load(tmp_path / "mine.csv")


def test_an_own_ledger_time_outside_cctps_era_is_refused(tmp_path):
    ledger = cctx.load(DOCS / "eth.json", chain="ethereum")
    ledger["burn_timestamp"] = ledger["burn_timestamp"].astype(object)
    ledger.loc[0, "burn_timestamp"] = "2021-01-01T00:00:00Z"
    ledger.to_csv(tmp_path / "mine.csv", index=False)
    with pytest.raises(DataError, match=r"mine.csv:2: column 'burn_timestamp'.*before CCTP's"):
        cctx.load(tmp_path / "mine.csv")


# -- times of event logs and Solana replies --------------------------------------------


@pytest.mark.parametrize(("seconds", "side"), [(1_600_000_000, "before CCTP's launch"),
                                                (4_102_444_800, "in the future")])  # fmt: skip
def test_an_event_log_time_outside_cctps_era_is_a_bad_row_naming_the_log(tmp_path, seconds,
                                                                         side):  # fmt: skip
    def when(i, log):  # the V1 burn's block time
        if i < 2:
            log["blockTimestamp"] = hex(seconds)

    path = _logs(tmp_path, when)
    with pytest.raises(DataError, match=rf"log 10 of transaction 0xc94c32fe36.*"
                       rf"'blockTimestamp'.*{side}"):  # fmt: skip
        cctx.load(path, chain="ethereum")
    ledger = cctx.load(path, chain="ethereum", errors="report")
    assert _counts(ledger)["bad"] == 2
    assert ledger["burn_tx_hash"].isna().all()


def test_a_solana_reply_time_outside_cctps_era_is_a_bad_row(tmp_path):
    # the V1 Solana -> Ethereum burn, its blockTime set to 2021
    name = "v1_burn_solana_to_ethereum.json"
    doc = json.loads((FIXTURES / "solana" / name).read_text())
    text = json.dumps(doc)
    assert text.count('"blockTime": ') == 1
    start = text.index('"blockTime": ') + len('"blockTime": ')
    end = start + len(text[start:]) - len(text[start:].lstrip("0123456789"))
    (tmp_path / name).write_text(text[:start] + "1609459200" + text[end:])
    assert len(cctx.load(FIXTURES / "solana" / name)) == 1
    with pytest.raises(DataError, match=r"instruction \d+ of transaction .*'blockTime'.*"
                       r"before CCTP's launch"):  # fmt: skip
        cctx.load(tmp_path / name)
    ledger = cctx.load(tmp_path / name, errors="report")
    assert len(ledger) == 0
    assert _counts(ledger)["bad"] == 1


def test_a_sync_datasets_log_part_goes_through_the_same_guards(tmp_path):
    # the committed fixture's logs (one of each event and version, Ethereum's contracts) as a
    # sync dataset's log part (cryo's columns, chain_id 1), the V1 DepositForBurn re-emitted
    # by another contract
    from tests.ingest.logs import fixture_logs, write_cryo

    logs = fixture_logs()
    burn = next(lg for lg in logs if (lg.event, lg.version) == ("DepositForBurn", 1))
    burn.address = ELSEWHERE
    part = tmp_path / "logs" / "ethereum__logs__blocks_0020000000_to_0020000007.parquet"
    part.parent.mkdir(parents=True)
    write_cryo(part, logs, chain_id=1)
    truth = cctx.load(FIXTURES / "evm" / "cryo_logs.parquet")
    ledger = cctx.load(tmp_path / "logs")
    assert _counts(ledger)["skipped_unknown_emitter"] == 1
    assert burn.tx_hash in set(truth["burn_tx_hash"])
    assert burn.tx_hash not in set(ledger["burn_tx_hash"])


def test_solana_events_of_another_program_are_not_transfers(tmp_path):
    # the V1 Solana -> Ethereum burn with Circle's TokenMessengerMinter program id replaced,
    # everywhere, by another program's (Wormhole's token bridge)
    name = "v1_burn_solana_to_ethereum.json"
    text = (FIXTURES / "solana" / name).read_text()
    circle = "CCTPiPYPc6AsJuwueEnWgSgucamXDZwBd53dQ11YiKX3"
    assert circle in text
    other = "wormDTUJ6AWPNvk59vGQbDvGJmqbDTdgWgAqcLBCgUb"
    (tmp_path / name).write_text(text.replace(circle, other))
    ledger = cctx.load(tmp_path / name, format="solana")
    counts = _counts(ledger)
    assert len(ledger) == 0
    assert counts["bad"] == 0
    assert counts["skipped"] >= 1


def test_contracts_are_compared_in_lowercase_each_distinct_one_once():
    # the guards lower each distinct address once (a file holds a few over millions of rows):
    # the answer per row is the one a row-by-row comparison gives, missing values included
    from cctx_research import chains
    from cctx_research.ingest.ledger import guards

    circle = chains.contracts("ethereum", 1).token_messenger
    testnet = next(iter(guards.TESTNET_CONTRACTS))
    rows = [circle.upper().replace("0X", "0x"), None, ELSEWHERE, circle, testnet.upper()]
    for values in (rows, pd.Series(rows, dtype="string[pyarrow]"), pd.array(rows, dtype=object)):
        unknown = guards.unknown_emitters(values, [0, 0, 0, -1, 0], "token_messenger")
        assert unknown.tolist() == [False, True, True, False, True]
        with pytest.raises(DataError, match=rf"row 4, column 'contract' is {testnet}"):
            guards.refuse_testnet("f.csv", "contract", values)
    guards.refuse_testnet("f.csv", "contract", rows[:4])  # no testnet contract: passes
