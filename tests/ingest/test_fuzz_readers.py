"""Readers under fuzzing: valid input read as its truth, damaged input never crashes.

Valid logs are encoded independently of the decoder with eth-abi
(:mod:`tests.ingest.logs`); damage is random bytes written over a log's data,
a cut short hex string, or a random cell of a table. A damaged file may only
give a :class:`DataError` (``errors="raise"``) or bad rows and counted skips
(``errors="report"``), and never a transfer its truth does not hold.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cctx_research as cctx
from cctx_research.errors import DataError
from cctx_research.ingest.values import Rows
from tests.ingest.logs import fixture_logs

FIXTURES = Path(__file__).parents[1] / "fixtures"
FUZZ = settings(max_examples=12, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip


@pytest.fixture(scope="module")
def valid(tmp_path_factory) -> tuple[list[dict], pd.DataFrame]:
    logs = [log.node() for log in fixture_logs()]
    path = tmp_path_factory.mktemp("valid") / "logs.json"
    path.write_text(json.dumps(logs))
    return logs, cctx.load(path, chain="ethereum")


def test_valid_logs_read_as_what_eth_abi_encoded(valid):
    _, ledger = valid
    expected = {  # the burns' amounts (a V2 mint's is net of its fee)
        log.expected["amount_raw"]
        for log in fixture_logs()
        if "amount_raw" in log.expected and log.event in ("DepositForBurn", "MessageSent")
    }
    assert len(ledger) > 0
    assert set(ledger["amount_raw"]) == expected


@FUZZ
@given(which=st.integers(0, 7), at=st.integers(0, 2_000), junk=st.binary(min_size=1, max_size=40),
       cut=st.booleans(), errors=st.sampled_from(["raise", "report"]))  # fmt: skip
def test_damaged_logs_never_crash_nor_invent_a_transfer(valid, tmp_path, which, at, junk, cut,
                                                        errors):  # fmt: skip
    logs, truth = valid
    damaged = [dict(log) for log in logs]
    data = damaged[which]["data"][2:]
    at = min(at, len(data))
    data = data[:at] if cut else data[:at] + junk.hex() + data[at + 2 * len(junk) :]
    damaged[which]["data"] = "0x" + data[: len(data) - len(data) % 2]
    path = tmp_path / "damaged.json"
    path.write_text(json.dumps(damaged))
    try:
        ledger = cctx.load(path, chain="ethereum", errors=errors)
    except DataError:
        assert errors == "raise"
        return
    assert len(ledger) <= len(truth) + 1  # a burn may lose its mint: two rows, never more
    real = set(truth["amount_raw"])
    made_up = set(ledger["amount_raw"]) - real
    # a damaged amount may survive only on the one damaged log's row
    assert len(made_up) <= 1


ERA = st.integers(1_682_467_200, 1_767_225_600)  # 2023-04-26 .. 2026-01-01, in seconds


@FUZZ
@given(seconds=ERA, nanos=st.integers(0, 999_999_999), unit=st.sampled_from([0, 3, 6, 9]))
def test_unix_times_in_any_unit_read_as_their_instant(seconds, nanos, unit):
    value = seconds * 10**unit + nanos // 10 ** (9 - unit) if unit else seconds
    rows = Rows(pd.DataFrame({"t": [str(value)]}), "f.csv")
    got = rows.times("t").iat[0]
    expected = pd.Timestamp(seconds, unit="s", tz="UTC") + pd.Timedelta(
        nanoseconds=(nanos // 10 ** (9 - unit)) * 10 ** (9 - unit) if unit else 0
    )
    assert got == expected
    assert not rows.problems


@FUZZ
@given(row=st.integers(0, 0), column=st.sampled_from(
    ["evt_block_time", "amount", "nonce", "destinationDomain", "evt_tx_hash", "contract_address"]),
    value=st.one_of(st.text(max_size=30), st.integers().map(str)))  # fmt: skip
def test_damaged_dune_cells_never_crash(tmp_path, row, column, value):
    name = "circle_ethereum_tokenmessenger_evt_depositforburn.csv"
    frame = pd.read_csv(FIXTURES / "dune" / name, dtype=str)
    frame.loc[row, column] = value
    path = tmp_path / name
    frame.to_csv(path, index=False)
    truth = cctx.load(FIXTURES / "dune" / name, chain="ethereum")
    try:
        ledger = cctx.load(path, chain="ethereum", errors="report")
    except DataError:
        return  # refused whole (a contract of another chain, testnet, unreadable)
    assert len(ledger) <= len(truth)
