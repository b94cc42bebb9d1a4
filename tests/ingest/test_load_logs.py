"""load() of event logs: real encodings, V1 pairing across chain files, a lone V2 burn pending."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import cctx_research as cctx
from cctx_research import schema
from cctx_research.errors import DataError
from cctx_research.provenance import provenance

from .encoded import (
    burn_body_v1,
    deposit_v1,
    deposit_v2,
    mint_v1,
    received_v1,
    transfer,
)

SENDER = "0x" + "a1" * 20
RECIPIENT = "0x" + "b1" * 20
T0 = 1_719_828_000  # 2024-07-01T10:00:00Z


def _tx(n: int) -> str:
    return "0x" + f"{n:064x}"


@pytest.fixture
def chain_files(tmp_path):
    """Ethereum burns (a JSON list) and Base mints (a JSON-RPC response), plus noise."""
    eth = [
        deposit_v1(501, 123_456_789, SENDER, RECIPIENT, 6, block=100, tx=_tx(1), index=3, time=T0),
        deposit_v1(502, 7_000_000, SENDER, RECIPIENT, 6, block=101, tx=_tx(2), index=0, time=T0),
    ]
    eth.append(dict(eth[0]))  # the same log twice: counted once
    base = [
        mint_v1(RECIPIENT, 123_456_789, block=900, tx=_tx(9), index=4, time=T0 + 1000),
        received_v1(0, 501, burn_body_v1(123_456_789, SENDER, RECIPIENT),
                    block=900, tx=_tx(9), index=5, time=T0 + 1000),
        deposit_v2(9_000_000, SENDER, RECIPIENT, 3, 900, block=901, tx=_tx(10), index=1,
                   time=T0 + 1001),
        transfer(block=901, tx=_tx(10), index=0, time=T0 + 1001),
    ]
    (tmp_path / "eth.json").write_text(json.dumps(eth))
    (tmp_path / "base.json").write_text(json.dumps({"jsonrpc": "2.0", "id": 1, "result": base}))
    return tmp_path


def test_v1_pairs_across_chain_files_and_a_lone_v2_burn_is_pending(chain_files):
    ledger = cctx.load(
        [chain_files / "eth.json", chain_files / "base.json"],
        chain={"eth.json": "ethereum", "base.json": "base"},
    )
    schema.validate(ledger, "ledger")
    rows = ledger.set_index("transfer_id")
    paired = rows.loc["501_1_8453"]
    assert paired["pairing"] == "exact"
    assert paired["amount_raw"] == 123_456_789
    assert paired["burn_tx_hash"] == _tx(1)
    assert paired["mint_tx_hash"] == _tx(9)
    assert paired["burn_timestamp"] == pd.Timestamp(T0, unit="s", tz="UTC")
    assert paired["mint_timestamp"] == pd.Timestamp(T0 + 1000, unit="s", tz="UTC")
    assert (paired["burn_block"], paired["mint_block"]) == (100, 900)
    assert paired["mint_recipient"] == RECIPIENT
    assert paired["message_sender"] == SENDER
    assert paired["cctp_version"] == 1
    pending = rows.loc["502_1_8453"]
    assert pending["pairing"] == "pending"
    assert pd.isna(pending["mint_timestamp"])
    v2 = ledger[ledger["cctp_version"] == 2]
    assert len(v2) == 1
    row = v2.iloc[0]
    assert row["pairing"] == "pending"
    assert row["transfer_id"] == f"{_tx(10)}_1"
    assert row["max_fee_raw"] == 900
    assert row["min_finality_threshold"] == 1000
    assert row["hook_data"] == "0x0102"
    assert pd.isna(row["nonce"])
    counts = cctx.provenance.provenance(ledger).count
    assert counts["duplicates"] == 1
    assert counts["skipped_other_events"] == 1
    assert counts["paired"] == 1
    assert counts["unpaired"] == 0
    assert counts["pending"] == 2
    assert counts["rows_read"] == 7
    assert cctx.provenance.provenance(ledger).format == "evm-logs"


def test_mint_without_its_burn_is_kept_with_a_null_burn_side(chain_files):
    ledger = cctx.load(chain_files / "base.json", chain="base")
    row = ledger.set_index("transfer_id").loc["501_1_8453"]
    assert row["pairing"] == "mint_only"
    assert pd.isna(row["burn_timestamp"])
    assert pd.isna(row["burn_tx_hash"])
    assert row["burn_block"] == -1
    assert row["amount_raw"] == 123_456_789  # from the message body


def test_logs_without_chain_are_reported(chain_files):
    with pytest.raises(DataError) as info:
        cctx.load(chain_files / "eth.json")
    assert "eth.json" in str(info.value)


def test_logs_without_times_are_counted(tmp_path):
    entry = deposit_v1(7, 1, SENDER, RECIPIENT, 6, block=5, tx=_tx(3), index=0, time=T0)
    del entry["blockTimestamp"]
    (tmp_path / "eth.json").write_text(json.dumps([entry]))
    ledger = cctx.load(tmp_path / "eth.json", chain="ethereum")
    assert cctx.provenance.provenance(ledger).count["missing_times"] == 1
    assert ledger["burn_timestamp"].isna().all()


EVM = Path(__file__).parent.parent / "fixtures" / "evm"


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("getlogs_list.json", {"chain": "ethereum"}),
        ("getlogs_response.json", {"chain": "ethereum"}),
        ("getlogs_responses.json", {"chain": "ethereum"}),
        ("getlogs.jsonl", {"chain": "ethereum"}),
        ("getlogs_no_time.jsonl", {"chain": "ethereum", "blocks": EVM / "blocks_rpc.json"}),
        ("cryo_logs.csv", {"blocks": EVM / "cryo_blocks.csv"}),
    ],
)
def test_every_log_shape_loads_to_the_same_ledger(name, options):
    ledger = cctx.load(EVM / name, **options)
    reference = cctx.load(EVM / "getlogs_list.json", chain="ethereum")
    same = ["pairing", "amount_raw", "cctp_version", "burn_block", "mint_block"]
    if not name.startswith("cryo"):  # cryo's rows carry their own chain id
        same.append("transfer_id")
    assert sorted(map(tuple, ledger[same].astype(str).to_numpy())) == sorted(
        map(tuple, reference[same].astype(str).to_numpy())
    )
    record = provenance(ledger)
    assert record.format == "evm-logs"
    assert record.count["missing_times"] == 0
    assert set(ledger["pairing"]) <= set(cctx.schema.LEDGER_PAIRING)


def test_cryo_logs_carry_their_chain():
    ledger = cctx.load(EVM / "cryo_logs.csv")
    assert provenance(ledger).count["missing_times"] > 0  # no blocks file given
    assert len(ledger) == len(cctx.load(EVM / "getlogs_list.json", chain="ethereum"))


def _cryo_folder(folder: Path) -> Path:
    """cryo's ``--output-dir``: the fixture's logs in two chunk files of its naming."""
    import pyarrow.parquet as pq

    table = pq.read_table(EVM / "cryo_logs.parquet")
    half = table.num_rows // 2
    folder.mkdir()
    for i, part in enumerate((table.slice(0, half), table.slice(half))):
        pq.write_table(part, folder / f"ethereum__logs__{i:05d}000_to_{i:05d}999.parquet")
    return folder


def test_a_folder_of_cryo_log_files_loads_file_by_file(tmp_path):
    folder = _cryo_folder(tmp_path / "eth_logs")
    blocks = EVM / "cryo_blocks.parquet"
    ledger = cctx.load(folder, blocks=blocks)
    whole = cctx.load(EVM / "cryo_logs.parquet", blocks=blocks)
    pd.testing.assert_frame_equal(ledger, whole, check_exact=True)
    record = provenance(ledger)
    assert record.files == tuple(str(p) for p in sorted(folder.glob("*.parquet")))
    assert record.count == provenance(whole).count
    assert record.count["rows_read"] == 8


def test_import_of_a_folder_of_cryo_log_files(tmp_path, capsys):
    from cctx_research.cli import main

    folder = _cryo_folder(tmp_path / "eth_logs")
    out = tmp_path / "eth.parquet"
    blocks = EVM / "cryo_blocks.parquet"
    chunks = tmp_path / "eth_blocks"  # cryo's blocks --output-dir: a folder of chunk files
    chunks.mkdir()
    times = pd.read_parquet(blocks)
    times.iloc[:2].to_parquet(chunks / "ethereum__blocks__0_to_1.parquet", index=False)
    times.iloc[2:].to_parquet(chunks / "ethereum__blocks__2_to_9.parquet", index=False)
    assert main(["import", f"{folder}/", "--blocks", f"{chunks}/", "--out", str(out),
                 "--no-progress"]) == 0
    assert f"to {out}" in capsys.readouterr().out
    written = pd.read_parquet(out)
    expected = cctx.load(EVM / "cryo_logs.parquet", blocks=blocks)
    assert written["transfer_id"].tolist() == expected["transfer_id"].tolist()
    for side in ("burn_timestamp", "mint_timestamp"):  # the times came from the blocks folder
        assert written[side].tolist() == expected[side].tolist()
    assert (written["burn_timestamp"].notna() | written["mint_timestamp"].notna()).all()


def test_a_cryo_parquet_file_is_read_once_by_the_log_reader(monkeypatch):
    """Its columns are told from the file's footer: the whole file is never first read as a
    table of another format (that read cost a tenth of a large load)."""
    from cctx_research.ingest import reading

    def refuse(*args, **kwargs):
        raise AssertionError("a cryo logs file was read as a table")

    expected = cctx.load(EVM / "cryo_logs.parquet", blocks=EVM / "cryo_blocks.parquet")
    monkeypatch.setattr(reading, "read_table", refuse)
    ledger = cctx.load(EVM / "cryo_logs.parquet", blocks=EVM / "cryo_blocks.parquet")
    assert len(ledger) > 0
    pd.testing.assert_frame_equal(ledger, expected)
