"""``movements.dedupe`` on every engine: the engine's own lazy frame, the rows pandas keeps."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cctx_research as cctx
from cctx_research import chains, schema
from cctx_research.analysis import actor_inputs, continuations_sql, engines, movements

from .test_actors import DOMAINS, ENGINES, POOL, RELAYERS, SETTINGS, as_engine, build

# each example runs DuckDB several times: fewer than the suite's default, the ties as
# strategies (burns within minutes by few addresses: most examples tie somewhere)
FEWER = settings(SETTINGS, max_examples=25)


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


forwarded = st.fixed_dictionaries(
    {
        "src": st.sampled_from(DOMAINS),
        "dst": st.sampled_from(DOMAINS),
        "amount": st.integers(1, 1_000),
        "burn": st.integers(0, 6),  # a few minutes: mints and burns at one time
        "delay": st.sampled_from([0, 1, 2, None]),
        "sender": st.sampled_from(POOL),
        "recipient": st.sampled_from(POOL),
        "self_relay": st.booleans(),
        "version": st.just(2),
        "hook": st.sampled_from(["0x", "0x0102"]),
        "relayer": st.sampled_from(RELAYERS),
    }
).filter(lambda r: r["src"] != r["dst"])


@FEWER
@given(st.lists(forwarded, min_size=1, max_size=25).map(build), st.sampled_from(["1min", "1h"]))
def test_continuations_in_sql_equal_pandas_with_ties(ledger, window):
    # mints and burns at one minute: the tie order (transfer_id) decides in both forms
    duckdb = pytest.importorskip("duckdb")
    want = movements.continuations(ledger, window=window).astype(str).values.tolist()
    shuffled = ledger.sample(frac=1.0, random_state=len(ledger)).reset_index(drop=True)
    assert movements.continuations(shuffled, window=window).astype(str).values.tolist() == want
    for rows in (ledger, shuffled):
        got = movements.continuations(duckdb.from_df(rows), window=window)
        assert got.astype(str).values.tolist() == want


def test_dedupe_on_duckdb_scans_the_ledger_in_reads_of_its_own(sample):
    # the ledger named twice in one query (the mints, the burns, the rows kept) made DuckDB
    # share one scan of every column through a CTE, several times slower than a scan each
    duckdb = pytest.importorskip("duckdb")
    plan = movements.dedupe(duckdb.from_df(sample)).explain()
    assert set(re.findall(r"CTE Name: (\w+)", plan)) == {"latest"}  # the few mints' own
    assert plan.count("PANDAS_SCAN") == 3
    assert continuations_sql.source(duckdb.from_df(sample), "x").startswith("(SELECT")


def test_dedupe_on_duckdb_reads_canonical_addresses_as_they_are(sample):
    # the labelled integrators are found by an exact test of the canonical column: an
    # address spelled otherwise is no ledger's (schema.py), and no longer lowercased here
    duckdb = pytest.importorskip("duckdb")
    table = actor_inputs.labels_of(True)
    rows = table.table
    row = rows[(rows["kind"] == "integrator") & rows["address"].str.startswith("0x")].iloc[0]
    domain = chains.domain(row["chain"]) if isinstance(row["chain"], str) else 0
    ledger = sample.head(2).assign(
        mint_recipient=pd.array([row["address"], row["address"].upper()], dtype=schema.STRING),
        mint_timestamp=sample["burn_timestamp"].head(2),
        destination_domain=domain,
    )
    rel = actor_inputs.ledger_lazy(duckdb.from_df(ledger), movements._COLUMNS, what="test")
    found = continuations_sql._integrators(rel.to_native(), table)
    assert [(a, int(d)) for a, d in found] == [(row["address"], domain)]
