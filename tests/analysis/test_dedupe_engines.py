"""``movements.dedupe`` on every engine: the engine's own lazy frame, the rows pandas keeps."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

import cctx_research as cctx
from cctx_research import schema
from cctx_research.analysis import engines, movements

from .test_actors import ENGINES, as_engine


def kept_ids(frame) -> list[str]:
    return sorted(engines.collect(engines.lazy(frame, "ledger", columns=["transfer_id"]).select(
        "transfer_id"))["transfer_id"].astype(str))  # fmt: skip


@pytest.fixture(scope="module")
def sample() -> pd.DataFrame:
    return cctx.load_sample(as_of="2024-07-01", days=2)


@pytest.mark.parametrize("engine", ENGINES)
def test_dedupe_on_an_engine_keeps_the_rows_pandas_keeps(sample, engine):
    want = movements.dedupe(sample)
    assert len(want) < len(sample)  # the sample's forwarder: some legs continue others
    got = movements.dedupe(as_engine(sample, engine))
    assert not isinstance(got, pd.DataFrame)
    lazy_types = {"polars": "LazyFrame", "polars-lazy": "LazyFrame", "dask": "DataFrame"}
    assert type(got).__name__ == lazy_types.get(engine, "DuckDBPyRelation")
    assert kept_ids(got) == sorted(want["transfer_id"].astype(str))


def test_dedupe_on_duckdb_keeps_every_column(sample):
    duckdb = pytest.importorskip("duckdb")
    got = movements.dedupe(duckdb.from_df(sample), window="1D")
    assert got.columns == list(sample.columns)
    want = movements.dedupe(sample, window="1D")
    assert got.aggregate("sum(amount_raw)").fetchall()[0][0] == want["amount_raw"].sum()


def test_dedupe_on_an_engine_of_the_benchmark_ledger():
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from actors import generate

    ledger = generate(20_000)
    want = movements.dedupe(ledger)
    assert len(want) < len(ledger)
    assert kept_ids(movements.dedupe(as_engine(ledger, "duckdb"))) == sorted(want["transfer_id"])


def test_dedupe_of_nothing_and_of_no_ledger():
    empty = schema.empty("ledger")
    assert kept_ids(movements.dedupe(as_engine(empty, "duckdb"))) == []
    with pytest.raises(TypeError, match=r"dedupe\(\) takes a ledger \(pandas, Polars"):
        movements.dedupe([1, 2, 3])
