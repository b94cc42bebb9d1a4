"""The rebalancing rules in DuckDB SQL, held equal to the numpy rule row for row.

:mod:`cctx_research.analysis.rebalancing_sql` runs when a DuckDB ledger's
addresses cannot cross as exact hashes; these tests run it directly, on the
sample, on tied legs (identical burn times), on self-sends and on nothing.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cctx_research as cctx
from cctx_research import schema
from cctx_research.analysis import actor_inputs, movements, rebalancing_sql

from .test_actors import POOL, SETTINGS, build, tied, tied_legs


def _benchmark_ledger(transfers: int) -> pd.DataFrame:
    """The actor benchmark's synthetic ledger (``benchmarks/actors.py``) of ``transfers`` rows."""
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "benchmarks"))
        from actors import generate

    return generate(transfers)


# each example runs DuckDB several times: fewer than the suite's default, the ties as
# strategies (burns within minutes by few addresses: most examples tie somewhere)
FEWER = settings(SETTINGS, max_examples=25)

duckdb = pytest.importorskip("duckdb")


def in_sql(ledger: pd.DataFrame, *, window: str = "1D", rules=movements.RULES, labels=True):
    """:func:`movements.rebalancing_share` of ``ledger`` with its rules run in SQL."""
    lazy = actor_inputs.ledger_lazy(duckdb.from_df(ledger), movements._COLUMNS, what="test")
    table = actor_inputs.labels_of(labels)
    chosen = movements._rules(rules)
    return rebalancing_sql.share(lazy.to_native(), movements._window_ns(window), chosen, table)


def assert_same(got: pd.DataFrame, want: pd.DataFrame) -> None:
    assert list(got.columns) == list(want.columns)
    assert len(got) == len(want)
    for col in want.columns:
        assert got[col].astype(str).tolist() == want[col].astype(str).tolist(), col


@pytest.fixture(scope="module")
def sample() -> pd.DataFrame:
    return cctx.load_sample(as_of="2024-07-01", days=2)


@pytest.mark.parametrize("window", ["1h", "1D"])
@pytest.mark.parametrize("signers", [True, False])
def test_sql_rules_equal_numpy_on_the_sample(sample, window, signers):
    # without the burns' signers, the depositors are the end users: the rebalancer's trips
    ledger = sample if signers else sample.assign(burn_tx_from=pd.NA)
    want = movements.rebalancing_share(ledger, window=window, rules=movements.ALL_RULES)
    assert want["same_address_volume"].sum() > 0
    assert (want["round_trip_volume"].sum() > 0) is not signers
    assert_same(in_sql(ledger, window=window, rules=movements.ALL_RULES), want)


def test_sql_rules_equal_numpy_with_signers_and_no_labels(sample):
    rng = np.random.default_rng(4)
    who = np.array([f"0x{k:040x}" for k in range(100, 110)], dtype=object)
    signer = who[rng.integers(0, len(who), len(sample))]
    signer[rng.random(len(sample)) < 0.3] = None
    ledger = sample.assign(burn_tx_from=pd.array(signer, dtype=schema.STRING))
    for labels in (True, False):
        want = movements.rebalancing_share(ledger, window="6h", labels=labels)
        assert want["round_trip_volume"].sum() > 0
        assert_same(in_sql(ledger, window="6h", labels=labels), want)


@FEWER
@given(st.lists(tied, min_size=1, max_size=30).map(build), st.sampled_from(["1min", "5min"]))
def test_sql_round_trips_with_ties_equal_numpy(ledger, window):
    # legs at one minute: the tie order (transfer_id, byte order) decides in both
    want = movements.rebalancing_share(ledger, window=window, labels=False)
    assert_same(in_sql(ledger, window=window, labels=False), want)
    shuffled = ledger.sample(frac=1.0, random_state=len(ledger)).reset_index(drop=True)
    assert_same(in_sql(shuffled, window=window, labels=False), want)


def test_sql_tied_legs_pair_by_transfer_id():
    # two outbound legs at one minute, one return: the greater id is the nearer
    ledger = tied_legs()
    for order in ([0, 1, 2], [1, 0, 2], [2, 1, 0]):
        got = in_sql(ledger.iloc[order].reset_index(drop=True), labels=False)
        assert got["round_trip_volume"].sum() == pytest.approx(20 / 1e6), order


def test_sql_self_sends_and_nothing():
    leg = dict(amount=7, delay=1, src=0, dst=3, burn=0, self_relay=False)
    leg.update(version=1, hook="0x", relayer=None)
    own = build(
        [
            dict(leg, sender=POOL[1], recipient=POOL[1]),
            dict(leg, sender=POOL[0], recipient=POOL[0], burn=1),
            dict(leg, sender=POOL[2], recipient=POOL[3]),
        ]
    )
    want = movements.rebalancing_share(own, rules=movements.ALL_RULES)
    assert want["rebalancing_count"].sum() == 2  # the operator's same_address, the user's self
    assert_same(in_sql(own, rules=movements.ALL_RULES), want)
    empty = schema.empty("ledger")
    assert_same(in_sql(empty), movements.rebalancing_share(empty))
    assert in_sql(empty).empty


def test_sql_rules_equal_numpy_on_the_benchmark_ledger():
    ledger = _benchmark_ledger(20_000)
    want = movements.rebalancing_share(ledger)
    assert want["round_trip_volume"].sum() > 0
    assert_same(in_sql(ledger), want)


def test_round_trip_sql_names_its_frames():
    text = rebalancing_sql.round_trip_flags("legs", 60)
    assert "FROM legs" in text
    assert "<= 60" in text


def test_duckdb_rows_carry_strings_only_where_the_depositor_is_labelled(sample, monkeypatch):
    # the labelled depositors are found in the engine (an exact test of the canonical column):
    # no depositor's string crosses but theirs, and the answer is the pandas one
    from cctx_research.analysis import actors_lazy

    crossed = []
    rows_of = actors_lazy.round_trip_rows

    def spy(lf, labelled, *, users):
        got = rows_of(lf, labelled, users=users)
        crossed.append(got)
        return got

    monkeypatch.setattr(actors_lazy, "round_trip_rows", spy)
    want = movements.rebalancing_share(sample, rules=movements.ALL_RULES)
    got = movements.rebalancing_share(duckdb.from_df(sample), rules=movements.ALL_RULES)
    assert_same(got, want)
    (rows,) = crossed
    labelled = rows["labelled_sender"].to_pandas()
    known = set(actor_inputs.labels_of(True).addresses())
    assert labelled.notna().sum() == sample["message_sender"].isin(known).sum() > 0
    assert set(labelled.dropna()) <= known
    assert rows["mint_recipient"].null_count == labelled.isna().sum()


def test_groups_one_way_only_are_dropped_before_the_sort_and_change_no_pair(monkeypatch):
    from cctx_research.analysis import round_trip_legs, round_trips

    ledger = _benchmark_ledger(20_000).assign(burn_tx_from=pd.NA)
    facts = round_trips.rows(ledger)
    d, src, dst = len(facts.domains), facts.src.astype(np.int64), facts.dst.astype(np.int64)
    group = facts.user.astype(np.int64) * d * d + np.minimum(src, dst) * d + np.maximum(src, dst)
    keep = round_trip_legs._both_ways(group, facts.src < facts.dst)
    assert keep is not None
    assert 0 < keep.sum() < len(keep)  # some groups go one way only
    want = round_trip_legs.round_trips(facts, 86_400 * 10**9, facts.burned)
    assert len(want[0]) > 0
    monkeypatch.setattr(round_trip_legs, "_both_ways", lambda group, forward: None)
    got = round_trip_legs.round_trips(facts, 86_400 * 10**9, facts.burned)
    assert [a.tolist() for a in got] == [a.tolist() for a in want]


def test_duckdb_rows_keep_the_scan_order_with_many_labelled_addresses():
    # the transfer ids of tied legs come from a second query, matched by position: the rows'
    # query must keep the scan's order. A test of the depositor against the forty labelled
    # addresses as `IN (...)` was a join in DuckDB, whose rows came back out of order
    # (150k rows, two threads: every row out of place)
    from cctx_research.analysis import actors_lazy

    ledger = _benchmark_ledger(150_000)
    relation = duckdb.connect(config={"threads": 2}).from_df(ledger)
    lf = actor_inputs.ledger_lazy(relation, movements._COLUMNS, what="test")
    labelled = sorted(set(actor_inputs.labels_of(True).addresses()))
    assert len(labelled) > 6
    got = actors_lazy.round_trip_rows(lf, labelled, users=False)
    stamps = ledger["burn_timestamp"].to_numpy(dtype="datetime64[ns]").view("int64")
    assert got["stamp"].to_numpy().tolist() == stamps.tolist()
    # only the labelled depositors' rows carry strings: the filter's false positives dropped
    known = ledger["message_sender"].isin(labelled).to_numpy()
    assert 0 < known.sum() < len(ledger)
    assert got["labelled_sender"].is_valid().to_numpy(zero_copy_only=False).tolist() == (
        known.tolist()
    )
    assert got["mint_recipient"].null_count == (~known).sum()


def test_duckdb_ids_out_of_the_rows_order_send_the_rules_to_sql(monkeypatch):
    # tied legs are ordered by ids matched to the rows by position: ids in another order
    # (checked by the burn times beside them) must not be trusted
    from cctx_research.analysis import round_trips

    ledger = _benchmark_ledger(20_000)
    # legs of one end user, one way, at one time: their ids order them
    twin = np.random.default_rng(3).choice(len(ledger) - 1, 500, replace=False)
    for col in ("message_sender", "source_domain", "destination_domain", "burn_timestamp"):
        ledger.loc[twin + 1, col] = ledger[col].to_numpy()[twin]
    want = movements.rebalancing_share(ledger)
    ids_of = round_trips._duckdb_ids
    asked = []
    monkeypatch.setattr(round_trips, "_duckdb_ids", lambda *a: asked.append(1) or ids_of(*a))
    in_engine = []
    share = rebalancing_sql.share
    monkeypatch.setattr(rebalancing_sql, "share", lambda *a: in_engine.append(1) or share(*a))
    assert_same(movements.rebalancing_share(duckdb.from_df(ledger)), want)
    assert in_engine == []
    assert asked == [1]
    # as if the rows' query had come back in the reverse order
    reverse = lambda lf, stamps, at: ids_of(lf, stamps[::-1].copy(), at)  # noqa: E731
    monkeypatch.setattr(round_trips, "_duckdb_ids", reverse)
    got = movements.rebalancing_share(duckdb.from_df(ledger))
    assert in_engine == [1]
    pd.testing.assert_frame_equal(got, want)
