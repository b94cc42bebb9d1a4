"""The ledger of a sync directory: out of core in DuckDB (``ledger/``) or in pandas
(``ledger.parquet``), the same rows either way; older directories keep reading."""

from __future__ import annotations

import importlib
from pathlib import Path

import pandas as pd
import pytest

import cctx_research as cctx
from cctx_research import storage
from cctx_research.cli import main
from cctx_research.errors import DataError
from cctx_research.nodes.store import Dataset
from cctx_research.provenance import Provenance, provenance
from cctx_research.views.ledger_files import open_ledger

from .conftest import burn

ledger_module = importlib.import_module("cctx_research.nodes.ledger")


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values("transfer_id", ignore_index=True)


@pytest.fixture
def synced(base_node, ethereum_node, tmp_path):
    """Base and Ethereum synced, with a burn linked by content, one by nonce, mints alone."""
    base_node.replay(burn("v2_attested_base_to_eth_19500", "later"))
    base_node.mine(8)
    out = tmp_path / "cctp"
    cctx.sync(out, {"base": base_node.url, "ethereum": ethereum_node.url}, start=0,
              confirmations=5, progress=False)  # fmt: skip
    return out


def test_both_paths_build_the_same_ledger_and_readers_find_either(synced, tmp_path):
    out = synced
    dataset = Dataset(out)
    # the default: DuckDB, into the ledger dataset
    assert (out / "ledger").is_dir()
    assert not (out / "ledger.parquet").exists()
    assert storage.dataset_kind(out / "ledger") == "ledger"
    from_sql = cctx.load(out)
    manifest = storage.read_manifest(out / "ledger", kinds=("ledger",), instead="-")
    sql_record = Provenance.from_dict(manifest.state["writes"][-1])
    # the pandas path: the layout of every earlier sync, the dataset removed
    n = ledger_module.build_ledger(dataset, engine="pandas")
    assert (out / "ledger.parquet").is_file()
    assert not (out / "ledger").exists()
    from_pandas = cctx.load(out)
    assert n == len(from_pandas) == len(from_sql) == 6
    # two identical V2 burns, one minted: linked in time order, the other pending
    assert from_pandas["pairing"].astype(str).value_counts().to_dict() == {
        "content_ambiguous": 1, "exact": 1, "mint_only": 2, "pending": 2}  # fmt: skip
    assert list(from_sql.columns) == list(from_pandas.columns)
    pd.testing.assert_frame_equal(_sorted(from_sql), _sorted(from_pandas), check_exact=True)
    # the same provenance: the directory, its parts, and every count
    pandas_record = provenance(pd.read_parquet(out / "ledger.parquet"))
    assert sql_record.source == pandas_record.source == str(out)
    assert sql_record.files == pandas_record.files
    assert sql_record.count == pandas_record.count
    # and back: the next build replaces the file with the dataset
    assert ledger_module.build_ledger(dataset) == 6
    assert (out / "ledger").is_dir()
    assert not (out / "ledger.parquet").exists()


def test_a_directory_synced_before_keeps_its_file_until_the_next_sync(
    synced, base_node, tmp_path, capsys
):
    out = synced
    ledger_module.build_ledger(Dataset(out), engine="pandas")  # what an earlier version left
    want = _sorted(cctx.load(out))
    # every reader of a sync directory finds the file
    opened = open_ledger(out)
    assert opened is not None
    assert opened.frame.aggregate("count(*)").fetchall()[0][0] == 6
    report = tmp_path / "r.html"
    assert main(["report", "--data", str(out), "--out", str(report)]) == 0
    assert report.stat().st_size > 0
    # a sync on it builds the dataset, and the old file goes
    base_node.mine(2)
    capsys.readouterr()
    assert main(["sync", "--chain", f"base={base_node.url}", "--out", str(out),
                 "--no-progress"]) == 0  # fmt: skip
    assert f"6 transfers in {out / 'ledger'}\n" in capsys.readouterr().out
    assert not (out / "ledger.parquet").exists()
    pd.testing.assert_frame_equal(_sorted(cctx.load(out)), want)
    assert open_ledger(out).frame.aggregate("count(*)").fetchall()[0][0] == 6


def test_the_newer_ledger_is_read_when_a_stop_left_both(synced):
    out = synced
    dataset_ledger = cctx.load(out)
    # a stop between writing the file and removing the dataset: the file is the newer
    stale = _sorted(dataset_ledger).iloc[:3]
    stale.to_parquet(out / "ledger.parquet", index=False)
    assert storage.sync_ledger(out) == out / "ledger.parquet"
    assert len(cctx.load(out)) == 3
    (out / "ledger.parquet").unlink()
    assert storage.sync_ledger(out) == out / "ledger"


def test_a_stopped_build_leaves_the_previous_ledger(synced, monkeypatch):
    import cctx_research.ingest as ingest

    out = synced
    before = sorted(p.relative_to(out) for p in (out / "ledger").rglob("*"))
    want = _sorted(cctx.load(out))
    real_load = ingest.load

    def stopped(files, **kw):  # the whole new ledger written, then Ctrl-C
        real_load(files, **kw)
        raise KeyboardInterrupt

    monkeypatch.setattr(ingest, "load", stopped)
    with pytest.raises(KeyboardInterrupt):
        ledger_module.build_ledger(Dataset(out))
    assert sorted(p.relative_to(out) for p in (out / "ledger").rglob("*")) == before
    pd.testing.assert_frame_equal(_sorted(cctx.load(out)), want)
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]  # no temporary left


def test_duckdb_is_refused_where_it_cannot_serve(tmp_path):
    out = tmp_path / "cctp"
    dataset = Dataset(out)
    dataset.save_state({"chains": {}})
    folder = out / "solana" / "transactions"
    folder.mkdir(parents=True)
    (folder / "solana__transactions__v2-messenger__page_000000_slots_1_to_2.jsonl").write_text("")
    with pytest.raises(ValueError, match=r"Solana's parts .* read in pandas.*engine='pandas'"):
        ledger_module.build_ledger(dataset, engine="duckdb")
    with pytest.raises(ValueError, match=r"engine must be 'duckdb', 'pandas' or None.*'polars'"):
        ledger_module.build_ledger(dataset, engine="polars")
    assert not (out / "ledger").exists()
    assert not (out / "ledger.parquet").exists()


def test_without_duckdb_the_ledger_is_built_in_pandas(synced, monkeypatch):
    import importlib.util as util

    out = synced
    real = util.find_spec
    monkeypatch.setattr(util, "find_spec", lambda name, *a: None if name == "duckdb"
                        else real(name, *a))  # fmt: skip
    assert ledger_module.build_ledger(Dataset(out)) == 6
    assert (out / "ledger.parquet").is_file()
    assert not (out / "ledger").exists()
    with pytest.raises(ValueError, match=r"DuckDB is not installed: pip install"):
        ledger_module.build_ledger(Dataset(out), engine="duckdb")


def test_iris_reads_only_the_v2_rows_of_either_ledger(synced):
    out = synced
    from_dataset = ledger_module.read_for_iris(out)
    ledger_module.build_ledger(Dataset(out), engine="pandas")
    from_file = ledger_module.read_for_iris(out)
    assert list(from_dataset.columns) == list(ledger_module.IRIS_COLUMNS)
    assert (from_dataset["cctp_version"] == 2).all()
    v2 = from_file[from_file["cctp_version"] == 2]
    assert sorted(from_dataset["burn_tx_hash"].dropna()) == sorted(v2["burn_tx_hash"].dropna())
    assert len(from_dataset) == len(v2) > 0


def test_no_ledger_yet_is_said(tmp_path):
    with pytest.raises(DataError, match="no ledger to ask Iris about"):
        ledger_module.read_for_iris(Path(tmp_path))
