"""The `import` command: summary, atomic output, bad rows next to the output; `report --data`."""

from __future__ import annotations

import filecmp
from pathlib import Path

import pandas as pd
import pytest

from cctx_research.cli import main

DUNE = Path(__file__).parent.parent / "fixtures" / "dune"


def test_summary_counts_and_reasons(tmp_path, capsys):
    out = tmp_path / "ledger.parquet"
    assert main(["import", str(DUNE / "bridges_evms_flows.csv"), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"wrote 2 transfers to {out}" in text
    assert "rows read               3" in text
    assert "rows of other bridges" in text
    assert "paired by the source" in text
    assert "ethereum -> base" in text  # the links per route
    assert "100%" in text
    assert len(pd.read_parquet(out)) == 2


def test_a_failed_import_leaves_no_file(tmp_path, capsys):
    bad = tmp_path / "mystery.csv"
    bad.write_text("a,b\n1,2\n")
    out = tmp_path / "ledger.parquet"
    assert main(["import", str(bad), "--out", str(out), "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "matches no known format" in err
    assert "the closest is" in err  # what the file looks like
    assert "hint: pass format=" in err  # and what to do
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mystery.csv"]


def test_errors_report_writes_the_bad_rows_next_to_the_output(tmp_path, capsys):
    frame = pd.read_csv(DUNE / "bridges_evms_deposits.csv", dtype=str)
    frame.loc[1, "deposit_amount_raw"] = "lots"
    src = tmp_path / "deposits.csv"
    frame.to_csv(src, index=False)
    out = tmp_path / "ledger.csv"
    argv = ["import", str(src), "--errors", "report", "--no-progress", "--out", str(out)]
    assert main(argv) == 0
    assert "listed in ledger.csv.bad.csv" in capsys.readouterr().out
    bad = pd.read_csv(tmp_path / "ledger.csv.bad.csv")
    assert bad["index"].tolist() == [3]
    assert len(pd.read_csv(out)) == 1
    assert (tmp_path / "ledger.csv.meta.json").is_file()


def test_chain_option_shapes(tmp_path, capsys):
    src = DUNE / "circle_ethereum_tokenmessenger_evt_depositforburn.csv"
    out = tmp_path / "l.parquet"
    argv = ["import", str(src), "--chain", "ethereum", "--no-progress", "--out", str(out)]
    assert main(argv) == 0
    argv = ["import", str(src), "--chain", "base", "--chain", "x=eth", "--out", str(out)]
    assert main(argv) == 1
    assert "--chain" in capsys.readouterr().err


def test_report_on_imported_data(tmp_path):
    ledger = tmp_path / "ledger.parquet"
    assert main(["import", str(DUNE), "--errors", "report", "--chain",
                 f"{DUNE / 'circle_ethereum_tokenmessenger_evt_depositforburn.csv'}=ethereum",
                 "--chain",
                 f"{DUNE / 'circle_base_messagetransmitter_evt_messagereceived.csv'}=base",
                 "--chain", f"{DUNE / 'circle_base_tokenmessenger_evt_mintandwithdraw.csv'}=base",
                 "--no-progress", "--out", str(ledger)]) == 0  # fmt: skip
    html = tmp_path / "report.html"
    assert main(["report", "--data", str(ledger), "--no-progress", "--out", str(html)]) == 0
    text = html.read_text()
    assert "ledger.parquet" in text  # where the numbers come from
    assert "Synthetic data" not in text


def test_report_refuses_a_wrong_out_before_any_work(tmp_path, capsys, monkeypatch):
    import cctx_research.ingest as ingest

    def never(*args, **kwargs):
        raise AssertionError("the data was loaded before --out was checked")

    monkeypatch.setattr(ingest, "load", never)
    src = str(DUNE / "bridges_evms_flows.csv")
    assert main(["report", "--data", src, "--no-progress", "--out", str(tmp_path / "r.pdf")]) == 1
    assert "path must end in .html" in capsys.readouterr().err
    missing = tmp_path / "no" / "such" / "r.html"
    assert main(["report", "--data", src, "--no-progress", "--out", str(missing)]) == 1
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "no").exists()


def test_a_chain_before_its_path_is_answered_with_the_right_order(tmp_path, capsys):
    # the swapped pair was read as a chain named by the path: "unknown chain '<path>'", 32 chains
    src = DUNE / "circle_ethereum_tokenmessenger_evt_depositforburn.csv"
    out = tmp_path / "l.parquet"
    argv = ["import", str(src), "--chain", f"ethereum={src}", "--no-progress", "--out", str(out)]
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"cctx-research: error: --chain ethereum={src}: the chain goes after the '='; "
        f"did you mean --chain {src}=ethereum?"
    ]
    assert not out.exists()
    assert main(["import", str(src), "--chain", f"{src}=ethereum", "--no-progress",
                 "--out", str(out)]) == 0  # fmt: skip
    assert len(pd.read_parquet(out)) > 0


def test_format_solana_is_accepted_as_the_docs_list_it(tmp_path, capsys):
    src = Path(__file__).parent.parent / "fixtures" / "solana" / "v2_burn_solana_to_ethereum.json"
    out = tmp_path / "l.parquet"
    argv = ["import", str(src), "--format", "solana", "--no-progress", "--out", str(out)]
    assert main(argv) == 0, capsys.readouterr().err
    ledger = pd.read_parquet(out)
    assert ledger["source_domain"].tolist() == [5]  # Solana
    assert "solana -> ethereum" in capsys.readouterr().out


def _scale_parts(tmp_path, monkeypatch, n=2_000):
    """``scale.py``'s sync-shaped dataset of ``n`` transfers: cryo's Parquet log parts."""
    root = Path(__file__).resolve().parents[2]
    monkeypatch.syspath_prepend(str(root / "benchmarks"))
    from scale_data import QUICK_DAYS, dataset_files, generate

    generate(tmp_path / "sync", n, seed=3, part_logs=2_000, days=QUICK_DAYS)
    return [str(p) for p in dataset_files(tmp_path / "sync")]


def _same_bytes(a: Path, b: Path) -> bool:
    """Whether the directories hold the same files, each of the same bytes."""
    names = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    if names != sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file()):
        return False
    return all(filecmp.cmp(a / name, b / name, shallow=False) for name in names)


def test_engine_duckdb_writes_the_pandas_ledger_out_of_core(tmp_path, capsys, monkeypatch):
    import cctx_research as cctx
    from cctx_research.ingest import datasets

    pytest.importorskip("duckdb")
    parts = _scale_parts(tmp_path, monkeypatch)
    by_pandas, by_duckdb = tmp_path / "pandas", tmp_path / "duckdb"
    assert main(["import", *parts, "--no-progress", "--out", f"{by_pandas}/"]) == 0
    said_pandas = capsys.readouterr().out
    # the frame is never made: writing one from pandas would fail here
    monkeypatch.setattr(datasets, "write", lambda *a, **k: pytest.fail("a pandas ledger"))
    argv = ["import", *parts, "--engine", "duckdb", "--no-progress", "--out", f"{by_duckdb}/"]
    assert main(argv) == 0
    said_duckdb = capsys.readouterr().out
    want = cctx.load(by_pandas).sort_values("transfer_id", ignore_index=True)
    assert len(want) > 1_900
    if not _same_bytes(by_pandas, by_duckdb):  # the same files read back the same ledger
        got = cctx.load(by_duckdb).sort_values("transfer_id", ignore_index=True)
        pd.testing.assert_frame_equal(got, want, check_exact=True)
    # the same summary and links per route, but for the path written
    assert said_duckdb.replace(str(by_duckdb), "OUT") == said_pandas.replace(str(by_pandas), "OUT")
    assert f"wrote {len(want):,} transfers to {by_duckdb}" in said_duckdb
    assert "V2, on the fields both sides carry" in said_duckdb  # content links counted
    assert "links by route" in said_duckdb


def test_engine_duckdb_refuses_what_it_cannot_do_before_reading(tmp_path, capsys, monkeypatch):
    import importlib.util

    import cctx_research.ingest as ingest

    monkeypatch.setattr(ingest, "load", lambda *a, **k: pytest.fail("read before refusing"))
    src = str(DUNE / "bridges_evms_flows.csv")
    file_out = ["import", src, "--engine", "duckdb", "--out", str(tmp_path / "l.parquet")]
    assert main(file_out) == 1
    assert "--engine duckdb writes a partitioned ledger dataset: pass --out DIR/" in (
        capsys.readouterr().err)  # fmt: skip
    report = ["import", src, "--engine", "duckdb", "--errors", "report", "--out", f"{tmp_path}/"]
    assert main(report) == 1
    assert "--errors report lists the bad rows beside a ledger built in pandas" in (
        capsys.readouterr().err)  # fmt: skip
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "duckdb" else real(name, *a))  # fmt: skip
    assert main(["import", src, "--engine", "duckdb", "--out", f"{tmp_path}/d/"]) == 1
    assert "pip install 'cctx-research[engines]'" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # argparse: "invalid choice: 'spark' (choose from ...)"
        main(["import", src, "--engine", "spark", "--out", f"{tmp_path}/d/"])
    assert "invalid choice: 'spark'" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()
