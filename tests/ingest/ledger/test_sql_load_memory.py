"""The SQL load spills rather than fails: its windows and sorts carry narrow rows.

A 2M-transfer ``load(engine="duckdb")`` once stopped with DuckDB's "failed to pin block"
error at its 2 GB limit in the deposit-message join (``cx_burns_all``), whose windows ranked
the whole decoded rows (``SELECT *, row_number() OVER (...)``): DuckDB cannot spill
enough of a window's wide rows. The sides now rank keys and a row's number only and gather
the wide rows after (``benchmarks/README.md``, figure 13, "The whole history end to end",
"The 2M load that stopped under a 7 GiB cap"). These tests hold that shape on a small
sync-shaped dataset: every window of the load is over named columns, and the load completes
under a memory limit far below the data's size, giving the pandas load's ledger.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

import cctx_research as cctx
from cctx_research.ingest.ledger import sqllink, sqlrows

pytest.importorskip("duckdb")

ROOT = Path(__file__).resolve().parents[3]
_WIDE_WINDOW = re.compile(r"SELECT\s+\*(?:[^()]|\(\))*?\bOVER\s*\(", re.IGNORECASE)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from scale_data import QUICK_DAYS, dataset_files, generate

        root = tmp_path_factory.mktemp("sync")
        generate(root, 4_000, seed=3, part_logs=4_000, days=QUICK_DAYS)
        return dataset_files(root)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


def test_no_window_of_the_load_carries_whole_rows(files, tmp_path, monkeypatch):
    seen: list[str] = []
    connect = sqllink.connect

    class Recording:
        def __init__(self, con):
            self._con = con

        def execute(self, query, *args):
            seen.append(" ".join(str(query).split()))
            return self._con.execute(query, *args)

        def __getattr__(self, name):
            return getattr(self._con, name)

    monkeypatch.setattr(sqllink, "connect", lambda **kw: Recording(connect(**kw)))
    cctx.load(files, engine="duckdb", out=tmp_path / "ledger")
    assert any(" OVER (" in q for q in seen)  # the windows were seen
    wide = [q[:200] for q in seen if _WIDE_WINDOW.search(q)]
    assert not wide, wide


def test_the_load_spills_under_a_small_memory_limit(files, tmp_path, monkeypatch):
    monkeypatch.setattr(sqlrows, "MEMORY_LIMIT", "64MB")
    cctx.load(files, engine="duckdb", out=tmp_path / "ledger")
    got = pd.read_parquet(tmp_path / "ledger").sort_values("transfer_id", ignore_index=True)
    want = cctx.load(files).sort_values("transfer_id", ignore_index=True)
    assert len(got) == len(want) > 3_500
    assert got["transfer_id"].tolist() == want["transfer_id"].tolist()
    assert got["pairing"].astype(str).tolist() == want["pairing"].astype(str).tolist()
