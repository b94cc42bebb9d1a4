"""Bad input to load(): every case gets a clear error, or a report, and nothing is lost."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

import cctx_research as cctx
from cctx_research.errors import DataError
from cctx_research.provenance import provenance

DUNE = Path(__file__).parent.parent / "fixtures" / "dune"
PER_CHAIN_BASE = "circle_base_messagetransmitter_evt_messagereceived.csv"


def _deposits(tmp_path: Path, edit) -> Path:
    frame = pd.read_csv(DUNE / "bridges_evms_deposits.csv", dtype=str)
    frame = pd.concat([frame] * 3, ignore_index=True)
    frame["bridge_transfer_id"] = [str(3000 + i) for i in range(len(frame))]
    frame["evt_index"] = [str(i) for i in range(len(frame))]
    edit(frame)
    path = tmp_path / "deposits.csv"
    frame.to_csv(path, index=False)
    return path


def test_a_file_matching_no_format_says_in_one_line_what_it_looks_like(tmp_path):
    # it gave ~900 characters: every format's closest table and what each lacked
    path = tmp_path / "mystery.csv"
    pd.DataFrame({"tx_hash": ["0x1"], "amount": ["5"]}).to_csv(path, index=False)
    with pytest.raises(DataError) as info:
        cctx.load(path)
    assert info.value.message == (
        f"{str(path)!r} matches no known format: its columns: amount, tx_hash; the closest is "
        "xchaindatagen's 'cctp_blockchain_transactions' table, which also needs blockchain, "
        "transaction_hash, block_number, timestamp"
    )
    assert info.value.hint == (
        "pass format= one of evm-logs, dune, xchaindatagen, solana, cctx if the file is one of "
        "them (docs/sources.md lists the columns each needs)"
    )
    piped = tmp_path / "piped.csv"
    piped.write_text("tx_hash|amount\n0x1|5\n")
    with pytest.raises(DataError) as info:
        cctx.load(piped)
    assert info.value.message.endswith(
        "its one column is 'tx_hash|amount', so its delimiter is none of comma, semicolon or "
        "tab: save it as CSV with one of those"
    )


def test_a_forced_format_that_does_not_fit_says_so(tmp_path):
    with pytest.raises(DataError, match="is not a 'xchaindatagen' file"):
        cctx.load(DUNE / "bridges_evms_flows.csv", format="xchaindatagen")


def test_malformed_rows_raise_with_count_and_line_numbers(tmp_path):
    def edit(frame):
        frame.loc[1, "deposit_amount_raw"] = "12abc"
        frame.loc[4, "tx_hash"] = "0xnothex"

    path = _deposits(tmp_path, edit)
    with pytest.raises(DataError) as info:
        cctx.load(path)
    text = str(info.value)
    assert text.startswith("2 malformed row(s)")
    assert "deposits.csv:3:" in text  # row 1 is line 3 (the header is line 1)
    assert "deposits.csv:6:" in text
    assert "12abc" in text


def test_errors_report_keeps_the_good_rows_and_lists_the_bad(tmp_path):
    path = _deposits(tmp_path, lambda f: f.__setitem__("block_time", f["block_time"].where(
        f.index != 2, "not a time")))
    ledger = cctx.load(path, errors="report")
    assert len(ledger) == 5
    bad = cctx.bad_rows(ledger)
    assert bad[["index"]].to_dict("list") == {"index": [4]}
    assert "block_time" in bad["reason"].iloc[0]
    assert bad["source_file"].iloc[0] == str(path)
    assert provenance(ledger).count["bad"] == 1


def test_amount_beyond_int64_is_an_error_naming_the_row(tmp_path):
    too_big = str(2**64 + 1)  # a uint256 that would wrap in int64
    path = _deposits(tmp_path, lambda f: f.__setitem__("deposit_amount_raw", f[
        "deposit_amount_raw"].where(f.index != 0, too_big)))
    with pytest.raises(DataError) as info:
        cctx.load(path)
    assert "deposits.csv:2:" in str(info.value)
    assert too_big in str(info.value)
    assert "64-bit" in str(info.value)


def test_duplicates_across_files_count_once(tmp_path):
    for name in ("a.csv", "b.csv"):
        shutil.copy(DUNE / "bridges_evms_deposits.csv", tmp_path / name)
    ledger = cctx.load([tmp_path / "a.csv", tmp_path / "b.csv"])
    assert len(ledger) == 2
    assert provenance(ledger).count["duplicates"] == 2


def test_unknown_chain_name_is_a_bad_row(tmp_path):
    path = _deposits(tmp_path, lambda f: f.__setitem__("deposit_chain", "atlantis"))
    with pytest.raises(DataError, match="unknown chain 'atlantis'"):
        cctx.load(path)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"format": "csv"}, ValueError, "format must be one of"),
        ({"errors": "ignore"}, ValueError, "errors must be 'raise' or 'report'"),
        ({"chain": "atlantis"}, ValueError, "unknown chain"),
    ],
)
def test_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        cctx.load(DUNE / "bridges_evms_flows.csv", **kwargs)


def test_missing_paths_and_empty_globs(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        cctx.load(tmp_path / "nope.csv")
    with pytest.raises(DataError, match="matches no file"):
        cctx.load(str(tmp_path / "*.parquet"))
    with pytest.raises(DataError, match="holds no CSV, Parquet or JSON"):
        cctx.load(tmp_path)
    with pytest.raises(TypeError, match="paths must be"):
        cctx.load(42)


def test_a_directory_of_decoded_tables_without_chain_names_the_file():
    with pytest.raises(DataError, match=r"chain of .*depositforburn.csv.* is unknown"):
        cctx.load(DUNE / "circle_ethereum_tokenmessenger_evt_depositforburn.csv")


def test_unreadable_parquet(tmp_path):
    path = tmp_path / "broken.parquet"
    path.write_bytes(b"not parquet")
    with pytest.raises(DataError, match=r"cannot read .broken\.parquet."):
        cctx.load(path)


@pytest.mark.parametrize(
    ("name", "guess"),
    [
        ("circle_base_messagetransmitter_evt_messagereceived.csv", "base"),  # by the table's name
        ("received.csv", "base"),  # by Base's V1 MessageTransmitter in contract_address
        ("circle_ethereum_tokenmessenger_evt_depositforburn.csv", "ethereum"),
    ],
)
def test_a_decoded_table_without_chain_hints_its_own_chain(tmp_path, name, guess):
    # a Base MessageReceived table hinted chain='ethereum' whatever it held
    source = name if name.startswith("circle_") else PER_CHAIN_BASE
    path = tmp_path / name
    shutil.copy(DUNE / source, path)
    with pytest.raises(DataError) as caught:
        cctx.load(path)
    assert caught.value.hint.startswith(f"pass chain='{guess}' (or {{path: chain}})")


def test_a_sync_directory_without_a_ledger_suggests_a_command_and_globs_that_work(tmp_path):
    # the hint was `sync --out DIR` (refused: no --chain) and DIR/*/logs/*.parquet (no Solana)
    import glob
    import json

    from cctx_research import storage

    root = tmp_path / "synced"
    (root / "base" / "logs").mkdir(parents=True)
    (root / "solana" / "transactions").mkdir(parents=True)
    manifest = {"format": storage.FORMAT, "kind": "sync", "state": {"chains": {}}}
    (root / storage.MANIFEST).write_text(json.dumps(manifest))
    fixtures = Path(__file__).parent.parent / "fixtures"
    shutil.copy(fixtures / "evm" / "cryo_logs.parquet", root / "base" / "logs" / "p.parquet")
    reply = json.loads((fixtures / "solana" / "v2_burn_solana_to_ethereum.json").read_text())
    line = json.dumps(reply)
    (root / "solana" / "transactions" / "p.jsonl").write_text(line + "\n")
    with pytest.raises(DataError, match="is a sync directory without a ledger yet") as caught:
        cctx.load(root)
    hint = caught.value.hint
    assert hint.startswith(f"run `cctx-research sync --chain base --chain solana --out {root}`")
    globs = hint.split("or load its parts: ")[1].split(" ")
    assert len(globs) == 2
    assert all(glob.glob(g) for g in globs), globs


def test_an_empty_ledger_file_loads_as_no_transfers_and_says_so(tmp_path):
    # a ledger written with no rows crashed load with KeyError: 'transfer_id'
    ledger = cctx.load_sample(days=1, as_of="2024-07-01")
    path = tmp_path / "ledger.parquet"
    ledger.iloc[:0].to_parquet(path)
    said = r"no transfers in ledger\.parquet: the files hold no rows"
    with pytest.warns(cctx.errors.CoverageWarning, match=said):
        loaded = cctx.load(path)
    assert len(loaded) == 0
    assert list(loaded.columns) == cctx.schema.columns("ledger")


def test_a_header_only_csv_is_said_once(tmp_path):
    path = _deposits(tmp_path, lambda f: None)
    pd.read_csv(path, dtype=str).iloc[:0].to_csv(path, index=False)
    with pytest.warns(cctx.errors.CoverageWarning) as said:
        assert len(cctx.load(path)) == 0
    assert [str(w.message).split(":")[-1].strip() for w in said] == ["it adds nothing to the data"]
