"""The decoder's per-log keys: chain per row and duplicates, on frames built by hand."""

from __future__ import annotations

import pandas as pd

from cctx_research.ingest.evm.frame import conform_logs
from cctx_research.ingest.evm.log_keys import chain_columns, duplicates

TX = "0x" + "ab" * 32


def _frame(tx, log_index, *, chain_id=None, source_file=None):
    n = len(tx)
    columns = {
        "block_number": [1] * n,
        "log_index": log_index,
        "tx_hash": tx,
        "address": ["0x" + "11" * 20] * n,
        "topic0": ["0x" + "22" * 32] * n,
        "data": ["0x"] * n,
    }
    if chain_id is not None:
        columns["chain_id"] = chain_id
    if source_file is not None:
        columns["source_file"] = source_file
    return conform_logs(pd.DataFrame(columns))


def test_a_repeat_is_the_same_hash_in_any_case_with_the_same_index_and_chain():
    upper = "0x" + TX[2:].upper()
    frame = _frame([TX, upper, TX, TX, "0xabc", "0xABC"], [0, 0, 1, 0, 0, 0])
    chain_id, _ = chain_columns(frame, "base")
    assert duplicates(frame, chain_id).tolist() == [False, True, False, True, False, True]


def test_the_same_log_on_two_chains_is_two_logs():
    frame = _frame([TX, TX, TX], [0, 0, 0], chain_id=["1", "8453", "8453"])
    chain_id, domain = chain_columns(frame, None)
    assert duplicates(frame, chain_id).tolist() == [False, False, True]
    assert chain_id.tolist() == ["1", "8453", "8453"]
    assert domain.tolist() == [0, 6, 6]


def test_a_rows_own_chain_id_wins_and_files_take_their_mapped_chain():
    frame = _frame(
        [TX] * 4,
        [0, 1, 2, 3],
        chain_id=["42161", None, None, None],
        source_file=["a.json", "a.json", "b.json", "c.json"],
    )
    chain_id, domain = chain_columns(frame, {"a.json": "base", "b.json": "domain-5"})
    assert chain_id.fillna("-").tolist() == ["42161", "8453", "-", "-"]
    assert domain.fillna(-1).tolist() == [3, 6, 5, -1]
    chain_id, domain = chain_columns(frame, 10)
    assert chain_id.tolist() == ["42161", "10", "10", "10"]
    assert domain.tolist() == [3, 2, 2, 2]
