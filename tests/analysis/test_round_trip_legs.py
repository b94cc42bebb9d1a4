"""The round-trip matching split by end user: two halves on two threads pair as one.

Past :data:`~cctx_research.analysis.round_trip_legs.SPLIT_FROM` legs the end users of even
and of odd codes are matched on two threads. These tests lower the threshold to nothing and
hold the split to the matching in one piece: the same pairs, on tied legs (where the
transfer ids decide, both halves' read in one call) and on the actor benchmark's ledger, for
pandas and for DuckDB (whose ids come from its connection, one query at a time).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cctx_research import schema
from cctx_research.analysis import movements, round_trip_legs, round_trips

from .test_actors import POOL, SETTINGS, build, tied
from .test_rebalancing_sql import _benchmark_ledger

DAY = 86_400 * 10**9


def _pairs(found: tuple) -> list[tuple[int, int]]:
    return sorted(zip(found[0].tolist(), found[1].tolist(), strict=True))


def _split(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(round_trip_legs, "SPLIT_FROM", 0)
    monkeypatch.setattr(round_trip_legs.os, "cpu_count", lambda: 2)


@SETTINGS
@given(st.lists(tied, min_size=1, max_size=30).map(build), st.sampled_from(["1min", "5min"]))
def test_halves_pair_as_one_on_tied_legs(ledger, window):
    want = movements.rebalancing_share(ledger, window=window, labels=False)
    with pytest.MonkeyPatch.context() as patch:
        _split(patch)
        got = movements.rebalancing_share(ledger, window=window, labels=False)
    pd.testing.assert_frame_equal(got, want)


def test_halves_pair_as_one_on_the_benchmark_ledger(monkeypatch):
    ledger = _benchmark_ledger(20_000).assign(burn_tx_from=pd.NA)  # the depositors stand in
    facts = round_trips.rows(ledger)
    want = round_trip_legs.round_trips(facts, DAY, facts.burned)
    assert len(want[0]) > 100
    _split(monkeypatch)
    got = round_trip_legs.round_trips(facts, DAY, facts.burned)
    assert _pairs(got) == _pairs(want)
    # each end user's legs in one half: the halves' pairs never share a leg
    assert len(set(got[0].tolist())) == len(got[0])
    assert len(set(got[1].tolist())) == len(got[1])


def _tied_users(users: int) -> pd.DataFrame:
    """For each of ``users`` depositors, two outbound legs at one minute and a return leg:
    the transfer ids decide which outbound leg is the nearer, in every end user's half."""
    leg = dict(amount=10, delay=1, self_relay=False, version=1, hook="0x", relayer=None)
    rows = []
    for k in range(users):
        sender = "0x" + f"{k + 1:02x}" * 20
        rows += [dict(leg, sender=sender, recipient=POOL[2], src=0, dst=3, burn=k),
                 dict(leg, sender=sender, recipient=POOL[2], src=0, dst=3, burn=k, amount=990),
                 dict(leg, sender=sender, recipient=POOL[2], src=3, dst=0, burn=k + 5)]  # fmt: skip
    ledger = build(rows)
    # the greater id on the cheaper leg, so the order of the rows would pair the other
    ledger["transfer_id"] = pd.array([f"{k // 3:03d}{'bac'[k % 3]}" for k in range(len(rows))],
                                     dtype=schema.STRING)  # fmt: skip
    return ledger


def test_halves_pair_as_one_on_duckdb(monkeypatch):
    duckdb = pytest.importorskip("duckdb")
    ledger = _tied_users(6)
    want = movements.rebalancing_share(ledger, labels=False)
    assert want["round_trip_volume"].sum() == pytest.approx(6 * 20 / 1e6)  # the 10 legs
    _split(monkeypatch)
    halves: list[int] = []
    real_matched = round_trip_legs._matched
    monkeypatch.setattr(round_trip_legs, "_matched",
                        lambda *a: halves.append(threading.get_ident()) or real_matched(*a))
    inside, overlapped, asked = threading.Lock(), [], []
    real_ids = round_trips._duckdb_ids

    def one_at_a_time(lf, stamps, at):  # a DuckDB connection runs one query at a time
        asked.append(len(at))
        if not inside.acquire(blocking=False):
            overlapped.append(1)
            return real_ids(lf, stamps, at)
        try:
            time.sleep(0.05)
            return real_ids(lf, stamps, at)
        finally:
            inside.release()

    monkeypatch.setattr(round_trips, "_duckdb_ids", one_at_a_time)
    con = duckdb.connect()
    try:
        got = movements.rebalancing_share(con.from_df(ledger), labels=False)
    finally:
        con.close()
    assert len(halves) == 2
    assert threading.get_ident() not in halves  # matched on the pool's threads
    # both halves' tied legs (two outbound legs of each of six users) read in one pass
    assert asked == [12]
    assert overlapped == []
    pd.testing.assert_frame_equal(got, want)


def _reads(parties: int) -> tuple[round_trip_legs._OneRead, list[list[int]]]:
    reads: list[list[int]] = []

    def ids(at):
        reads.append(at.tolist())
        return pa.array([f"id{k}" for k in at.tolist()], pa.string())

    return round_trip_legs._OneRead(ids, parties), reads


def _on_threads(*jobs):
    with ThreadPoolExecutor(len(jobs)) as pool:
        futures = [pool.submit(job) for job in jobs]
        return [future.exception() or future.result() for future in futures]


def _asks(read, party, at):
    def job():
        try:
            return read.ask(party, np.array(at)).to_pylist()
        finally:
            read.leave(party)

    return job


def _leaves(read, party, first=lambda: None):
    def job():
        try:
            return first()
        finally:
            read.leave(party)

    return job


def test_one_read_answers_each_party_its_own_rows():
    read, reads = _reads(3)
    got = _on_threads(_asks(read, 0, [5, 1]), _asks(read, 1, [7]), _leaves(read, 2))
    assert got == [["id5", "id1"], ["id7"], None]
    assert reads == [[5, 1, 7]]  # one read, whoever asked last


def test_one_read_reads_nothing_when_no_party_asks():
    read, reads = _reads(2)
    assert _on_threads(_leaves(read, 0), _leaves(read, 1)) == [None, None]
    assert reads == []


def test_a_party_that_fails_before_asking_frees_the_other():
    read, reads = _reads(2)

    def fails():
        time.sleep(0.05)  # after the other asked: it waits for this party, which leaves
        raise RuntimeError("the half failed")

    got = _on_threads(_asks(read, 0, [3]), _leaves(read, 1, fails))
    assert got[0] == ["id3"]
    assert isinstance(got[1], RuntimeError)
    assert reads == [[3]]


def test_a_failed_read_is_raised_in_every_asker():
    def ids(at):
        raise OSError("the connection is gone")

    read = round_trip_legs._OneRead(ids, 2)
    got = _on_threads(_asks(read, 0, [1]), _asks(read, 1, [2]))
    assert [type(error) for error in got] == [OSError, OSError]


def test_a_second_question_of_one_party_is_read_alone():
    read, reads = _reads(1)
    assert read.ask(0, np.array([4])).to_pylist() == ["id4"]
    assert read.ask(0, np.array([6, 2])).to_pylist() == ["id6", "id2"]
    assert reads == [[4], [6, 2]]
