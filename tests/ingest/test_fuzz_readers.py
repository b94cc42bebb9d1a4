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
from hypothesis import HealthCheck, example, given, settings
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
# a MessageSent whose source domain became 2**28: refused as another chain's file even with
# errors="report", where it is one damaged row
@example(which=4, at=135, junk=b"\x01", cut=False, errors="report")
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


SPELLINGS = st.one_of(  # how a time cell may come: every reading path, and cells that are none
    ERA.map(str), ERA.map(lambda s: str(s * 1000)), ERA.map(lambda s: f"{s}.25"),
    ERA.map(lambda s: pd.Timestamp(s, unit="s").strftime("%Y-%m-%d %H:%M:%S.000 UTC")),
    ERA.map(lambda s: pd.Timestamp(s, unit="s").strftime("%Y-%m-%dT%H:%M:%SZ")),
    ERA.map(lambda s: pd.Timestamp(s, unit="s").strftime("%Y-%m-%d %H:%M:%S  UTC")),
    ERA.map(lambda s: pd.Timestamp(s, unit="s").strftime("%Y-%m-%d %H:%M:%SUTC")),
    st.sampled_from(["", " ", "1e9", "+1700000000", "yesterday", "2024-13-01 00:00:00 UTC",
                     "UTC", "1700000000.1234567891", "99999999999999999999",
                     "9999999999999999999", "1720000000000000000", "-5", "1720000000."]),
)


@FUZZ
@given(cells=st.lists(SPELLINGS, min_size=1, max_size=12))
def test_a_column_of_mixed_time_spellings_reads_each_cell_as_alone(cells):
    """Each cell of a column reads as it reads alone (the column is split by spelling to
    be read a kind at a time: dates, numbers, the rest), and so do its problems."""
    rows = Rows(pd.DataFrame({"t": cells}), "f.csv")
    got = rows.times("t", optional=True)
    for i, cell in enumerate(cells):
        alone = Rows(pd.DataFrame({"t": [cell]}), "f.csv")
        one = alone.times("t", optional=True).iat[0]
        assert (pd.isna(got.iat[i]) and pd.isna(one)) or got.iat[i] == one, (cell, got.iat[i])
        said = [p["reason"] for p in rows.problems if p["index"] == rows.offset + i]
        assert said == [p["reason"] for p in alone.problems], cell
    assert str(got.dtype) == "datetime64[ns, UTC]"


def test_time_spellings_read_as_their_instant():
    cells = ["1720000000", "1720000000000", "1720000000.5", "2024-07-03 09:46:40.000 UTC",
             "2024-07-03T09:46:40Z", "2024-07-03 09:46:40  UTC", "2024-07-03 09:46:40UTC",
             "1720000000000000000", "1e9", "yesterday", "9999999999999999999", ""]  # fmt: skip
    rows = Rows(pd.DataFrame({"t": cells}), "f.csv")
    got = rows.times("t", optional=True)
    when = pd.Timestamp(1_720_000_000, unit="s", tz="UTC")
    assert list(got[:8]) == [when, when, when + pd.Timedelta("500ms"), *[when] * 5]
    assert got[8:].isna().all()
    # 19 digits past int64 is a bad row (it crashed the reader), an empty optional cell no
    # problem; a row's index is its line in the file (a header, then 1)
    assert sorted(p["index"] for p in rows.problems) == [10, 11, 12]


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


# -- Solana replies --------------------------------------------------------------------

SOLANA = FIXTURES / "solana"
SOLANA_TRUTH = {  # the fixtures' README: (nonce or None for V2, amount_raw, destination domain)
    "v1_burn_solana_to_ethereum.json": [("67707", 30_000_000_000, 0)],
    "v2_burn_solana_to_ethereum.json": [(None, 100_010_100_000, 0)],
}
SOLANA_FILES = sorted(p.name for p in SOLANA.glob("*.json*") if ".message." not in p.name)


@pytest.mark.parametrize("name", sorted(SOLANA_TRUTH))
def test_valid_solana_replies_read_as_their_truth(name):
    ledger = cctx.load(SOLANA / name)
    got = [(n if isinstance(n, str) else None, int(a), int(d)) for n, a, d in
           zip(ledger["nonce"], ledger["amount_raw"], ledger["destination_domain"], strict=True)]
    assert got == SOLANA_TRUTH[name]
    assert set(ledger["source_domain"]) == {5}


_JSONISH = st.text(alphabet='0123456789abcdefXYZ{}[]":, -.', min_size=1, max_size=12)


@FUZZ
@given(name=st.sampled_from(SOLANA_FILES), at=st.floats(0, 1), junk=_JSONISH,
       errors=st.sampled_from(["raise", "report"]))  # fmt: skip
# a token balance whose "mint" became "mi0t": its transaction's owners were read with a
# KeyError (now a balance that names no mint names no owner; the other balances still do)
@example(name="v2_synthetic_mint_base_to_solana.json", at=0.4765625, junk="0", errors="raise")
def test_damaged_solana_replies_never_crash_nor_invent_a_transfer(tmp_path, name, at, junk,
                                                                  errors):  # fmt: skip
    text = (SOLANA / name).read_text()
    i = int(at * (len(text) - 1))
    (tmp_path / name).write_text(text[:i] + junk + text[i + len(junk):])
    truth = cctx.load(SOLANA / name)
    try:
        ledger = cctx.load(tmp_path / name, format="solana", errors=errors)
    except DataError:
        return  # refused: the bad rows (errors="raise"), or a file no longer readable
    assert len(ledger) <= len(truth) + 1
    assert len(set(ledger["amount_raw"]) - set(truth["amount_raw"])) <= 1


# -- XChainDataGen ---------------------------------------------------------------------

XCDG = FIXTURES / "xchaindatagen"
XCDG_FILES = sorted(p.name for p in XCDG.glob("*.csv"))


def test_valid_xchaindatagen_tables_read_as_their_truth():
    ledger = cctx.load(sorted(XCDG.glob("*.csv")))
    amounts = set()
    for name in ("cctp_deposit_for_burn.csv", "cctp_message_received.csv",
                 "cctp_cross_chain_transactions.csv"):  # fmt: skip
        amounts |= set(pd.read_csv(XCDG / name)["amount"].astype("int64"))
    assert set(ledger["amount_raw"]) == amounts
    assert ledger["burn_timestamp"].notna().all()


_CELL = st.one_of(st.text(max_size=30), st.integers().map(str),
                  st.sampled_from(["", "1e30", "-1", "0x", "4294967296", "2105-01-01",
                                   "1999-01-01T00:00:00Z", "1717200000000"]))  # fmt: skip


@FUZZ
@given(name=st.sampled_from(XCDG_FILES), data=st.data(), value=_CELL)
def test_damaged_xchaindatagen_cells_never_crash_nor_invent_a_transfer(tmp_path, name, data,
                                                                       value):  # fmt: skip
    frame = pd.read_csv(XCDG / name, dtype=str)
    row = data.draw(st.integers(0, len(frame) - 1))
    column = data.draw(st.sampled_from([c for c in frame.columns if c != "id"]))
    frame.loc[row, column] = value
    for other in XCDG_FILES:
        (pd.read_csv(XCDG / other, dtype=str) if other != name else frame).to_csv(
            tmp_path / other, index=False)
    truth = cctx.load(sorted(XCDG.glob("*.csv")))
    try:
        ledger = cctx.load(sorted(tmp_path.glob("*.csv")), errors="report")
    except DataError:
        return  # refused whole (a contract of another chain, an unreadable table)
    assert len(ledger) <= len(truth) + 1  # a pair may come apart: two rows, never more
    assert len(set(ledger["amount_raw"]) - set(truth["amount_raw"])) <= 1


@pytest.mark.parametrize("number", ["33132048973192757248", "99999"])
def test_a_number_in_a_chain_name_column_is_an_unknown_chain(tmp_path, number):
    # found by the test above: a chain column holding a number was taken for a domain
    # id (overflowing int64, or a domain no chain has) instead of an unknown chain
    for other in XCDG_FILES:
        frame = pd.read_csv(XCDG / other, dtype=str)
        if other == "cctp_blockchain_transactions.csv":
            frame.loc[0, "blockchain"] = number
        frame.to_csv(tmp_path / other, index=False)
    ledger = cctx.load(sorted(tmp_path.glob("*.csv")), errors="report")
    said = " ".join(cctx.bad_rows(ledger)["reason"].astype(str))
    assert f"column 'blockchain': unknown chain '{number}'" in said


def test_an_xchaindatagen_arrival_left_out_whole_is_no_crash(tmp_path):
    # found by the test above: cctp_message_received's only row, its transaction hash
    # emptied, matches no row of the times table: its time stays empty, in UTC
    for other in XCDG_FILES:
        frame = pd.read_csv(XCDG / other, dtype=str)
        if other == "cctp_message_received.csv":
            frame.loc[0, "transaction_hash"] = ""
        frame.to_csv(tmp_path / other, index=False)
    ledger = cctx.load(sorted(tmp_path.glob("*.csv")), errors="report")
    assert str(ledger["mint_timestamp"].dtype) == "datetime64[ns, UTC]"
    assert ledger["mint_timestamp"].notna().sum() == 1  # the cross-chain table's pair only


# -- the toolkit's own frames ----------------------------------------------------------


@pytest.fixture(scope="module")
def own_ledger(tmp_path_factory) -> tuple[Path, pd.DataFrame]:
    ledger = cctx.load(FIXTURES / "docs" / "eth.json", chain="ethereum")
    path = tmp_path_factory.mktemp("own") / "ledger.csv"
    ledger.to_csv(path, index=False)
    return path, ledger


def test_a_valid_own_ledger_reads_back_as_itself(own_ledger):
    path, ledger = own_ledger
    back = cctx.load(path)
    for column in ("transfer_id", "amount_raw", "source_domain", "destination_domain",
                   "burn_timestamp", "mint_timestamp", "burn_tx_hash", "mint_tx_hash"):  # fmt: skip
        pd.testing.assert_series_equal(back[column], ledger[column], check_dtype=False)


@FUZZ
@given(data=st.data(), value=_CELL)
def test_damaged_own_frames_never_crash_nor_invent_a_transfer(tmp_path, own_ledger, data, value):
    path, truth = own_ledger
    frame = pd.read_csv(path, dtype=str)
    row = data.draw(st.integers(0, len(frame) - 1))
    column = data.draw(st.sampled_from(list(frame.columns)))
    frame.loc[row, column] = value
    frame.to_csv(tmp_path / "ledger.csv", index=False)
    try:
        ledger = cctx.load(tmp_path / "ledger.csv", errors="report")
    except DataError:
        return  # refused whole
    assert len(ledger) <= len(truth)
    assert len(set(ledger["amount_raw"]) - set(truth["amount_raw"])) <= 1
    assert (ledger["amount_raw"].between(0, 10**17)).all()
