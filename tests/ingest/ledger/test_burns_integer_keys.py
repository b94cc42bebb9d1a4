"""``sides.burns`` joins a transfer's ``DepositForBurn`` and ``MessageSent`` on integer codes
of their keys; the burns must be those the join on the keys themselves gives, row for row
and in the same order (the oracle below is that join, as it was written before)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cctx_research.ingest.evm import decode_logs, read_logs
from cctx_research.ingest.ledger import sides

ROOT = Path(__file__).resolve().parents[3]
KEYS = ["domain", "tx_hash", "amount_raw", "mint_recipient", "destination_domain"]


def _rank(frame: pd.DataFrame) -> np.ndarray:
    order = frame.sort_values([*KEYS, "log_index"], kind="stable")
    return order.groupby(KEYS, sort=False, dropna=False).cumcount().reindex(frame.index).to_numpy()


def _oracle(deposits: pd.DataFrame, sent: pd.DataFrame) -> pd.DataFrame:
    """The burns of the join on the key columns (strings and all)."""
    transfer, _ = sides.token_transfers(sent)
    sent = sent[transfer].reset_index(drop=True)
    nonce = sent["nonce"].astype("string")
    sent = sent.assign(destination_token_messenger=sent["recipient"],
                       nonce=nonce.mask(nonce == sides._ZERO_NONCE))  # fmt: skip
    sent = sent[sent["source_domain"].to_numpy() == sent["domain"].to_numpy()]
    sent = sent.reset_index(drop=True)
    d = deposits.assign(_k=_rank(deposits))
    s = sent.assign(_k=_rank(sent))
    extra = [c for c in sides._FILLED if c in s.columns and c not in KEYS]
    joined = d.merge(s[[*KEYS, "_k", *extra]], on=[*KEYS, "_k"], how="outer",
                     suffixes=("", "_sent"), indicator=True)  # fmt: skip
    sent_only = (joined["_merge"] == "right_only").to_numpy()
    if sent_only.any():
        alone = joined.loc[sent_only, [*KEYS, "_k"]].merge(s, on=[*KEYS, "_k"], how="left")
        joined = pd.concat([joined[~sent_only], alone], ignore_index=True)
    for column in sides._FILLED:
        if f"{column}_sent" in joined.columns:
            joined[column] = joined[column].where(joined[column].notna(), joined[f"{column}_sent"])
    return sides._burn_side(joined.drop(columns=["_merge", "_k"], errors="ignore"))


@pytest.fixture(scope="module")
def events(tmp_path_factory):
    root = tmp_path_factory.mktemp("scale")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from scale_data import dataset_files, generate

        generate(root, 1_500, seed=11, part_logs=100_000, check=2)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    decoded = [decode_logs(read_logs(p, binary=True)) for p in dataset_files(root)]
    deposits = pd.concat([d.burns for d in decoded], ignore_index=True)
    sent = pd.concat([d.sent for d in decoded], ignore_index=True)
    return deposits, sent


def _shuffled(events):
    """Deposits without their message and messages without their deposit, identical
    transfers in one transaction, missing hashes and domains: every way rows pair."""
    deposits, sent = events
    rng = np.random.default_rng(3)
    deposits = deposits.drop(index=rng.choice(len(deposits), 40, replace=False))
    sent = sent.drop(index=rng.choice(len(sent), 40, replace=False))
    twins_d = deposits.iloc[:30].assign(log_index=deposits["log_index"].iloc[:30] + 1000)
    twins_s = sent.iloc[:30].assign(log_index=sent["log_index"].iloc[:30] + 1000)
    deposits = pd.concat([deposits, twins_d]).sample(frac=1, random_state=1)
    sent = pd.concat([sent, twins_s]).sample(frac=1, random_state=2)
    deposits.loc[deposits.index[:5], "tx_hash"] = pd.NA
    sent.loc[sent.index[:5], "tx_hash"] = pd.NA
    deposits.loc[deposits.index[5:9], "domain"] = pd.NA
    return deposits.reset_index(drop=True), sent.reset_index(drop=True)


def test_burns_of_a_generated_dataset_equal_the_join_on_the_keys(events):
    deposits, sent = events
    made, counts = sides.burns(deposits, sent)
    assert counts["merged"] > 1000
    pd.testing.assert_frame_equal(made, _oracle(deposits, sent), check_exact=True)


def test_burns_equal_the_join_on_the_keys_whatever_pairs_and_what_not(events):
    deposits, sent = _shuffled(events)
    made, counts = sides.burns(deposits, sent)
    expected = _oracle(deposits, sent)
    assert len(made) > counts["merged"]  # unpaired rows on both sides
    pd.testing.assert_frame_equal(made, expected, check_exact=True)
