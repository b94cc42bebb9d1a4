"""load() on real CCTP messages rebuilt into the logs Circle's contracts emit.

Every message here is real (tests/fixtures/cctp_real, sources cited there and
beside each entry); what the logs around them had to fill in is said in
tests/ingest/real.py. Two Arbitrum receipts are real logs, verbatim.
"""

from __future__ import annotations

import json
import warnings

import pandas as pd
import pytest

import cctx_research as cctx
from cctx_research.analysis import linking as link_quality
from cctx_research.analysis import pending
from cctx_research.errors import DataError, OtherTokenWarning
from cctx_research.provenance import provenance

from .real import REAL, RELAYER, burn_logs, entries, message, mint_logs, tx, write

T0 = 1_763_000_000  # 2025-11-13, filled in


def _counts(ledger: pd.DataFrame) -> dict[str, int]:
    return provenance(ledger).count


def _adds_up(counts: dict[str, int]) -> None:
    total = counts["decoded"] + counts["skipped"] + counts["duplicates"] + counts["bad"]
    assert total == counts["rows_read"], counts


# Four real V2 transfers between EVM chains, with what Iris or the chain says of them.
V2_EVM = (
    "v2_attested_eth_to_arb_fast_100",  # Ethereum -> Arbitrum, fast, fee 50 of maxFee 50
    "v2_attested_base_to_eth_19500",  # Base -> Ethereum, standard, 19,500 USDC
    "v2_attested_op_to_base_fast_fee1",  # OP -> Base, fast, fee 1, destinationCaller set
)


@pytest.fixture
def v2_files(tmp_path):
    """Each V2 transfer's burn on its source chain and mint on its destination, one file a chain."""
    by_chain: dict[int, list] = {}
    for k, entry_id in enumerate(V2_EVM):
        m = message(entry_id)
        src_tx = m.entry.get("source_tx_hash") or tx(f"burn {entry_id}")
        dst_tx = m.entry.get("destination_tx_hash") or tx(f"mint {entry_id}")
        by_chain.setdefault(m.source_domain, []).extend(
            burn_logs(m, block=1000 + k, tx_hash=src_tx, index=10, time=T0 + 100 * k)
        )
        by_chain.setdefault(m.destination_domain, []).extend(
            mint_logs(m, block=5000 + k, tx_hash=dst_tx, index=30, time=T0 + 100 * k + 40)
        )
    names = {0: "ethereum", 2: "optimism", 3: "arbitrum", 6: "base"}
    paths = {write(tmp_path / f"{names[d]}.json", logs): names[d] for d, logs in by_chain.items()}
    return paths


def test_real_v2_transfers_link_once_each_with_the_attested_nonce(v2_files):
    ledger = cctx.load(list(v2_files), chain={p.name: c for p, c in v2_files.items()})
    assert len(ledger) == len(V2_EVM)  # not burns and mints twice over
    assert set(ledger["pairing"]) == {"content"}
    for entry_id in V2_EVM:
        m = message(entry_id)
        row = ledger[ledger["nonce"] == "0x" + m.nonce.hex()]
        assert len(row) == 1, entry_id
        row = row.iloc[0]
        assert row["amount_raw"] == m.amount
        assert row["fee_raw"] == m.fee_executed
        assert row["finality_threshold_executed"] == m.finality_executed
        assert row["min_finality_threshold"] == m.min_finality
        assert (row["source_domain"], row["destination_domain"]) == (
            m.source_domain,
            m.destination_domain,
        )
        assert row["mint_timestamp"] - row["burn_timestamp"] == pd.Timedelta(seconds=40)
        assert row["token"] == "USDC"
        if m.entry.get("destination_tx_hash"):
            assert row["mint_tx_hash"] == m.entry["destination_tx_hash"]
    eth_arb = ledger.set_index("nonce").loc["0x" + message(V2_EVM[0]).nonce.hex()]
    assert eth_arb["fee_raw"] == 50
    assert eth_arb["amount_raw"] == 100
    assert eth_arb["burn_tx_hash"] == message(V2_EVM[0]).entry["source_tx_hash"]
    transfers = cctx.transfers_from_ledger(ledger)
    assert transfers["amount_raw"].sum() == sum(message(e).amount for e in V2_EVM)
    counts = _counts(ledger)
    assert counts["content"] == 3
    assert counts["pending"] == 0
    assert counts["mint_only"] == 0
    assert counts["merged"] == 6  # MessageSent into DepositForBurn, each mint into its message
    _adds_up(counts)


def test_the_quality_table_counts_links_per_route(v2_files):
    ledger = cctx.load(list(v2_files), chain={p.name: c for p, c in v2_files.items()})
    table = link_quality.quality(ledger, freq=None)
    assert len(table) == 3
    assert table["content"].tolist() == [1, 1, 1]
    assert table["link_rate"].tolist() == [1.0, 1.0, 1.0]


def test_a_solana_sourced_mint_is_mint_only_and_counted_once(tmp_path):
    m = message("v2_attested_solana_to_eth")  # real: Solana's TokenMessengerMinter V2 sent it
    path = write(
        tmp_path / "eth.json",
        mint_logs(m, block=9, tx_hash=m.entry["destination_tx_hash"], index=4, time=T0),
    )
    ledger = cctx.load(path, chain="ethereum")
    row = ledger.iloc[0]
    assert len(ledger) == 1
    assert row["pairing"] == "mint_only"
    assert row["source_domain"] == 5
    assert row["amount_raw"] == m.amount
    assert pd.isna(row["burn_timestamp"])


def test_real_v1_pairs_from_message_sent_and_message_received_alone(tmp_path):
    """A researcher who pulled only the MessageTransmitter's logs still gets every pair."""
    ids = (
        "v1_arbitrum_to_ethereum_4730",
        "v1_ethereum_to_base_282099",
        "v1_base_to_ethereum_761503",
    )
    by_chain: dict[int, list] = {}
    for k, entry_id in enumerate(ids):
        m = message(entry_id)
        by_chain.setdefault(m.source_domain, []).extend(
            burn_logs(
                m, block=100 + k, tx_hash=tx(f"v1 burn {k}"), index=3, time=T0 + k, deposit=False
            )
        )
        by_chain.setdefault(m.destination_domain, []).extend(
            mint_logs(
                m,
                block=900 + k,
                tx_hash=m.entry.get("destination_tx_hash") or tx(f"v1 mint {k}"),
                index=7,
                time=T0 + 1000 + k,
                mint=False,
            )
        )
    names = {0: "ethereum", 3: "arbitrum", 6: "base"}
    paths = [write(tmp_path / f"{names[d]}.json", logs) for d, logs in by_chain.items()]
    ledger = cctx.load(paths, chain={p.name: p.stem for p in paths})
    assert sorted(ledger["pairing"]) == ["exact"] * 3
    got = ledger.set_index("nonce")
    for entry_id in ids:
        m = message(entry_id)
        row = got.loc[str(m.nonce)]
        assert row["amount_raw"] == m.amount
        assert row["message_sender"] == m.address(m.body_word(100))
    _adds_up(_counts(ledger))


def test_generic_messages_are_skipped_and_counted_never_transfers(tmp_path):
    generic_v1 = message("generic_v1_base_to_ethereum_hyperlane")
    generic_v2 = message("generic_v2_op_to_base_hyperlane_attested")
    eth = write(
        tmp_path / "ethereum.json",
        mint_logs(generic_v1, block=1, tx_hash=tx("generic v1"), index=0, time=T0, mint=False),
    )
    base = write(
        tmp_path / "base.json",
        mint_logs(generic_v2, block=2, tx_hash=tx("generic v2"), index=0, time=T0, mint=False),
    )
    sent = message("generic_v2_op_to_base_hyperlane_sent")
    op = write(
        tmp_path / "optimism.json",
        burn_logs(
            sent, block=3, tx_hash=sent.entry["source_tx_hash"], index=0, time=T0, deposit=False
        ),
    )
    ledger = cctx.load(
        [eth, base, op],
        chain={"ethereum.json": "ethereum", "base.json": "base", "optimism.json": "optimism"},
    )
    assert len(ledger) == 0
    counts = _counts(ledger)
    assert counts["skipped_generic_messages"] == 3
    _adds_up(counts)


def test_a_relayer_transaction_with_a_generic_message_and_a_transfer(tmp_path):
    """The mint joins its own message (the log after it), not the generic one before it."""
    generic = message("generic_v2_op_to_base_hyperlane_attested")
    transfer = message("v2_attested_op_to_base_fast_fee1")
    relay = tx("relay both")
    logs = mint_logs(generic, block=7, tx_hash=relay, index=20, time=T0, mint=False)
    logs += mint_logs(transfer, block=7, tx_hash=relay, index=22, time=T0)
    ledger = cctx.load(write(tmp_path / "base.json", logs), chain="base")
    assert len(ledger) == 1
    row = ledger.iloc[0]
    assert row["fee_raw"] == transfer.fee_executed == 1
    assert row["relayer"] == RELAYER  # MessageReceived's caller: who relayed
    assert row["nonce"] == "0x" + transfer.nonce.hex()
    assert row["amount_raw"] == transfer.amount
    counts = _counts(ledger)
    assert counts["skipped_generic_messages"] == 1
    assert counts["merged"] == 1
    _adds_up(counts)


@pytest.fixture
def identical(tmp_path):
    """Three transfers with one real message's content (an app paying one recipient a fixed
    amount): burns 10 minutes apart, each minted 20 minutes later. Filled in: the second and
    third attested nonces (the real one, with its last byte changed), the hashes and times."""
    m = message("v2_attested_base_to_eth_19500")
    burns, mints = [], []
    for k in range(3):
        burns += burn_logs(
            m, block=10 + k, tx_hash=tx(f"same burn {k}"), index=2, time=T0 + 600 * k
        )
        nonce = m.nonce[:-1] + bytes([(m.nonce[-1] + k) % 256])
        twin = type(m)(m.raw[:12] + nonce + m.raw[44:], m.entry)
        mints += mint_logs(
            twin, block=90 + k, tx_hash=tx(f"same mint {k}"), index=5, time=T0 + 600 * k + 1200
        )
    base = write(tmp_path / "base.json", burns)
    eth = write(tmp_path / "ethereum.json", mints)
    return [base, eth], {"base.json": "base", "ethereum.json": "ethereum"}, m


def test_identical_transfers_link_in_time_order_and_say_so(identical):
    paths, chain, m = identical
    ledger = cctx.load(paths, chain=chain)
    assert len(ledger) == 3
    assert set(ledger["pairing"]) == {"content_ambiguous"}
    assert ledger["link_group_size"].tolist() == [3, 3, 3]
    latency = (ledger["mint_timestamp"] - ledger["burn_timestamp"]).dt.total_seconds()
    assert latency.tolist() == [1200.0] * 3  # earliest free burn before each mint
    assert ledger["amount_raw"].sum() == 3 * m.amount  # volume counted once per transfer
    table = link_quality.quality(ledger, freq=None)
    assert int(table["ambiguous"].sum()) == 3


def test_identical_transfers_can_be_kept_unlinked(identical):
    paths, chain, _ = identical
    ledger = cctx.load(paths, chain=chain, ambiguous="keep")
    assert sorted(ledger["pairing"]) == ["mint_only"] * 3 + ["unpaired"] * 3
    with pytest.raises(ValueError, match="ambiguous must be 'link'"):
        cctx.load(paths, chain=chain, ambiguous="maybe")


def _usyc_burn_logs() -> list:
    """A USYC burn: the real USYC address on Ethereum (tokens.json) in a real V2 message.

    Filled in: no real USYC burn was found in public sources, so the token word of the
    Ethereum -> Arbitrum message is replaced by USYC's address.
    """
    usyc = (REAL / "tokens.json").read_text().lower()
    assert "136471a34f6ef19fe571effc1ca711fdb8e49f2b" in usyc
    m = message("v2_attested_eth_to_arb_fast_100")
    body = bytearray(m.raw)
    body[148 + 4 : 148 + 36] = bytes(12) + bytes.fromhex("136471a34f6ef19fe571effc1ca711fdb8e49f2b")
    usyc_message = type(m)(bytes(body), m.entry)
    return burn_logs(usyc_message, block=1, tx_hash=tx("usyc"), index=0, time=T0)


def test_usyc_burns_are_not_counted_as_usdc(tmp_path):
    logs = _usyc_burn_logs()
    usdc = burn_logs(
        message("v2_attested_eth_to_arb_fast_100"), block=2, tx_hash=tx("usdc"), index=0, time=T0
    )
    ledger = cctx.load(write(tmp_path / "eth.json", logs + usdc), chain="ethereum")
    assert sorted(ledger["token"]) == ["USDC", "USYC"]
    with pytest.warns(OtherTokenWarning, match="left out 1 transfers of other tokens .USYC 1."):
        transfers = cctx.transfers_from_ledger(ledger)
    assert len(transfers) == 1
    assert transfers["amount_raw"].sum() == message("v2_attested_eth_to_arb_fast_100").amount
    with pytest.warns(OtherTokenWarning, match="in_flight counts USDC"):
        flight = pending.in_flight(ledger, by=None)
    assert int(flight["count"].sum()) == 1
    usyc_only = ledger[ledger["token"] == "USYC"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", OtherTokenWarning)  # a USYC-only ledger: as it is
        assert len(cctx.transfers_from_ledger(usyc_only)) == 1


def test_real_arbitrum_receipts_give_one_burn_each(tmp_path):
    receipts = json.loads((REAL / "logs_across_arbitrum_receipts.json").read_text())["entries"]
    logs = [lg for r in receipts for lg in r["receipt"]["logs"]]
    path = write(tmp_path / "arbitrum.json", logs)
    ledger = cctx.load(path, chain="arbitrum")
    assert len(ledger) == len(receipts)
    assert set(ledger["pairing"]) == {"pending"}
    assert set(ledger["burn_tx_hash"]) == {r["transactionHash"] for r in receipts}
    assert set(ledger["destination_domain"]) == {0}  # toward Ethereum, as the receipts say
    counts = _counts(ledger)
    assert counts["merged"] == len(receipts)
    assert counts["skipped_other_events"] == len(logs) - 2 * len(receipts)
    _adds_up(counts)


def _receipts() -> list[dict]:
    """The two real Arbitrum receipts (Across's sponsored CCTP periphery), verbatim."""
    doc = json.loads((REAL / "logs_across_arbitrum_receipts.json").read_text())
    return [e["receipt"] for e in doc["entries"]]


def _receipt_file(tmp_path, shape: str):
    receipts = _receipts()
    path = tmp_path / ("receipts.jsonl" if shape == "jsonl" else "receipts.json")
    if shape == "list":  # eth_getTransactionReceipt results, gathered in a list
        return write(path, receipts)
    responses = [{"jsonrpc": "2.0", "id": i, "result": r} for i, r in enumerate(receipts)]
    if shape == "responses":
        return write(path, responses)
    if shape == "jsonl":
        path.write_text("\n".join(json.dumps(r) for r in responses))
        return path
    # eth_getBlockReceipts: one response whose result is a list of receipts
    return write(path, {"jsonrpc": "2.0", "id": 1, "result": receipts})


@pytest.mark.parametrize("shape", ["list", "responses", "jsonl", "block_receipts"])
def test_real_receipts_keep_the_sender_of_each_burn_transaction(tmp_path, shape):
    receipts = _receipts()
    ledger = cctx.load(_receipt_file(tmp_path, shape), chain="arbitrum")
    senders = dict(zip(ledger["burn_tx_hash"], ledger["burn_tx_from"], strict=True))
    assert senders == {r["transactionHash"]: r["from"] for r in receipts}
    # the depositor is Across's periphery contract; the transaction's sender is the user
    assert set(ledger["message_sender"]) == {"0xaa4958efa0cf6ddd87e354a90785f1d7291a82c7"}
    assert set(ledger["burn_tx_from"]) == {"0x9a8f92a830a5cb89a3816e3d267cb7791c16b04d"}
    counts = _counts(ledger)
    assert counts["rows_read"] == sum(len(r["logs"]) for r in receipts)
    _adds_up(counts)


def test_get_logs_output_has_no_transaction_sender(tmp_path):
    logs = [lg for r in _receipts() for lg in r["logs"]]  # the same logs, as eth_getLogs gives
    ledger = cctx.load(write(tmp_path / "logs.json", logs), chain="arbitrum")
    assert len(ledger) == 2
    assert ledger["burn_tx_from"].isna().all()


def test_cryo_logs_joined_with_its_transactions_keep_from_address(tmp_path):
    # cryo's logs dataset has no sender; its transactions dataset calls it from_address
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [(r["from"], lg) for r in _receipts() for lg in r["logs"]]

    def raw(text: str | None) -> bytes | None:
        return None if text is None else bytes.fromhex(text[2:])

    topic = lambda lg, i: raw(lg["topics"][i]) if len(lg["topics"]) > i else None  # noqa: E731
    table = pa.table(
        {
            "block_number": pa.array([int(lg["blockNumber"], 16) for _, lg in rows], pa.uint32()),
            "transaction_index": pa.array(
                [int(lg["transactionIndex"], 16) for _, lg in rows], pa.uint32()
            ),
            "log_index": pa.array([int(lg["logIndex"], 16) for _, lg in rows], pa.uint32()),
            "transaction_hash": pa.array([raw(lg["transactionHash"]) for _, lg in rows]),
            "address": pa.array([raw(lg["address"]) for _, lg in rows]),
            **{
                f"topic{i}": pa.array([topic(lg, i) for _, lg in rows], pa.binary())
                for i in range(4)
            },
            "data": pa.array([raw(lg["data"]) for _, lg in rows]),
            "chain_id": pa.array([42161] * len(rows), pa.uint64()),
            "from_address": pa.array([raw(sender) for sender, _ in rows]),
        }
    )
    path = tmp_path / "cryo_logs_with_senders.parquet"
    pq.write_table(table, path)
    blocks = {int(lg["blockNumber"], 16): int(lg["blockTimestamp"], 16) for _, lg in rows}
    times = pd.DataFrame({"block_number": list(blocks), "timestamp": list(blocks.values())})
    ledger = cctx.load(path, blocks=times)
    assert set(ledger["burn_tx_from"]) == {"0x9a8f92a830a5cb89a3816e3d267cb7791c16b04d"}
    assert len(ledger) == 2
    # the block times (Unix seconds in a frame) are the receipts' own, not nanoseconds
    expected = {pd.Timestamp(t, unit="s", tz="UTC") for t in blocks.values()}
    assert set(ledger["burn_timestamp"]) == expected


def test_real_arbitrum_logs_read_as_base_raise_naming_arbitrum(tmp_path):
    receipts = json.loads((REAL / "logs_across_arbitrum_receipts.json").read_text())["entries"]
    path = write(tmp_path / "logs.json", [lg for r in receipts for lg in r["receipt"]["logs"]])
    with pytest.raises(DataError, match="data says arbitrum") as info:
        cctx.load(path, chain="base")
    assert "logs.json" in str(info.value)
    assert "chain='arbitrum'" in str(info.value)


def test_a_chain_id_column_that_contradicts_chain_raises(tmp_path):
    from .logs import fixture_logs, write_cryo

    path = write_cryo(tmp_path / "cryo.csv", fixture_logs(), chain_id=1)
    with pytest.raises(DataError, match="chain_id column says ethereum"):
        cctx.load(path, chain="base")


DUNE_HEAD = (
    "deposit_chain,withdrawal_chain,bridge_name,bridge_version,deposit_block_time,"
    "deposit_block_number,withdrawal_block_time,withdrawal_block_number,deposit_amount_raw,"
    "withdrawal_amount_raw,sender,recipient,deposit_token_address,deposit_tx_hash,"
    "withdrawal_tx_hash,bridge_transfer_id,deposit_chain_id,withdrawal_chain_id\n"
)


def test_dune_flows_one_sided_rows_as_they_are(tmp_path):
    """bridges_evms.flows is a full outer join: rows from the real messages' fields."""
    eth_arb = message("v2_attested_eth_to_arb_fast_100")
    sol_eth = message("v2_attested_solana_to_eth")
    base_eth = message("v2_attested_base_to_eth_19500")
    messenger = "0x28b5a0e9c621a5badaa536219b3a228c8168cf5d"
    rows = [
        # two-sided
        f"ethereum,arbitrum,CCTP,2,2025-11-13 00:00:00.000 UTC,1,2025-11-13 00:00:40.000 UTC,2,"
        f"{eth_arb.amount},{eth_arb.amount - 50},{eth_arb.address(eth_arb.body_word(100))},"
        f"{eth_arb.address(eth_arb.body_word(36))},{eth_arb.address(eth_arb.body_word(4))},"
        f"{eth_arb.entry['source_tx_hash']},{eth_arb.entry['destination_tx_hash']},"
        f"0x{eth_arb.nonce.hex()},0,3",
        # withdrawal only: the burn is on Solana; the spell's sender is the TokenMessenger
        f",ethereum,CCTP,2,,,2025-11-13 01:00:00.000 UTC,3,,{sol_eth.amount},{messenger},"
        f"{sol_eth.address(sol_eth.body_word(36))},,,{sol_eth.entry['destination_tx_hash']},"
        f"0x{sol_eth.nonce.hex()},5,0",
        # deposit only: not minted in the export
        f"base,ethereum,CCTP,2,2025-11-13 02:00:00.000 UTC,4,,,{base_eth.amount},,"
        f"{base_eth.address(base_eth.body_word(100))},{base_eth.address(base_eth.body_word(36))},"
        f"{base_eth.address(base_eth.body_word(4))},{tx('dune deposit')},,,6,0",
    ]
    path = tmp_path / "flows.csv"
    path.write_text(DUNE_HEAD + "\n".join(rows) + "\n")
    ledger = cctx.load(path)
    by = ledger.set_index("pairing")
    assert sorted(ledger["pairing"]) == ["mint_only", "pending", "source"]
    assert by.loc["mint_only", "source_domain"] == 5
    assert pd.isna(by.loc["mint_only", "message_sender"])  # not the TokenMessenger
    assert by.loc["pending", "burn_tx_hash"] == tx("dune deposit")
    assert by.loc["source", "mint_tx_hash"] == eth_arb.entry["destination_tx_hash"]
    counts = _counts(ledger)
    assert (counts["source"], counts["pending"], counts["mint_only"]) == (1, 1, 1)
    _adds_up(counts)


def test_every_fixture_entry_cites_its_source():
    for name in ("v2_messages.json", "v1_messages.json", "generic_messages.json"):
        for entry_id, entry in entries(name).items():
            assert entry.get("source"), entry_id
            assert entry.get("note"), entry_id
