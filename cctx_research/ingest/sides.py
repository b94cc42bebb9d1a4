"""Decoded CCTP events as the two sides of a transfer: burns and arrivals.

The event tables (``burns``: ``DepositForBurn``; ``received``:
``MessageReceived``; ``mints``: ``MintAndWithdraw``) use the column names
of :class:`cctx_research.ingest.evm_logs.DecodedLogs`, whoever produced
them (the log decoder, or Dune's decoded tables). This module turns them
into the *burns* and *arrivals* tables of :mod:`~cctx_research.ingest.pairing`.

An arrival is a ``MessageReceived`` (source domain, nonce, message body)
with the ``MintAndWithdraw`` of the same transaction (fee collected, mint
amount): within one transaction the k-th of each, by log index, belong
together (CCTP emits ``MintAndWithdraw`` while handling the message that
``MessageReceived`` then reports). A ``MessageReceived`` without a mint
and without a burn message body is a message of another kind (skipped and
counted); a ``MintAndWithdraw`` without a ``MessageReceived`` cannot say
where it came from (skipped and counted).

The burned amount of an arrival is the body's ``amount`` when the body is
known, else the mint's ``amount`` plus ``feeCollected`` (V2 mints the
amount net of the fee).
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from .. import schema

__all__ = ["arrivals", "burns"]

logger = logging.getLogger(__name__)


def _col(frame: pd.DataFrame, name: str, dtype: object = object) -> pd.Series:
    if name in frame.columns:
        return frame[name]
    return pd.Series(pd.NA, index=frame.index, dtype=dtype)


def burns(events: pd.DataFrame) -> pd.DataFrame:
    """The *burns* table of ``DepositForBurn`` events."""
    return pd.DataFrame(
        {
            "source_domain": events["domain"],
            "burn_tx_hash": events["tx_hash"],
            "burn_log_index": _col(events, "log_index"),
            "burn_block": _col(events, "block_number").fillna(-1),
            "burn_timestamp": _col(events, "timestamp", schema.TIMESTAMP),
            "cctp_version": events["cctp_version"],
            "nonce": _col(events, "nonce"),
            "amount_raw": events["amount_raw"],
            "message_sender": _col(events, "message_sender"),
            "mint_recipient": _col(events, "mint_recipient"),
            "burn_token": _col(events, "burn_token"),
            "destination_domain": events["destination_domain"],
            "destination_token_messenger": _col(events, "destination_token_messenger"),
            "destination_caller": _col(events, "destination_caller"),
            "max_fee_raw": _col(events, "max_fee_raw"),
            "min_finality_threshold": _col(events, "min_finality_threshold"),
            "hook_data": _col(events, "hook_data"),
        }
    )


def _ranked(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.sort_values(["domain", "tx_hash", "log_index"], kind="stable")
    return frame.assign(_k=frame.groupby(["domain", "tx_hash"], sort=False).cumcount())


def arrivals(received: pd.DataFrame, mints: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """The *arrivals* table, and counts of what could not be one.

    Returns
    -------
    (arrivals, counts)
        counts: ``mints_without_message`` (a ``MintAndWithdraw`` with no
        ``MessageReceived`` in its transaction) and ``messages_without_mint``
        (a ``MessageReceived`` of another kind of message).
    """
    keys = ["domain", "tx_hash", "_k"]
    r = _ranked(received.reset_index(drop=True))
    m = _ranked(mints.reset_index(drop=True))
    m = m.rename(
        columns={c: f"mint_{c}" for c in m.columns if c not in keys}
    )
    joined = r.merge(m, on=keys, how="outer", indicator=True)
    lonely_mints = joined["_merge"] == "right_only"
    joined = joined[~lonely_mints]
    has_mint = joined["_merge"] == "both"
    body_amount = _col(joined, "amount_raw").astype(schema.NULLABLE_INT)
    fee = _col(joined, "mint_fee_raw").astype(schema.NULLABLE_INT)
    minted = _col(joined, "mint_amount_raw").astype(schema.NULLABLE_INT)
    gross = minted + fee.fillna(0)
    is_burn = has_mint | body_amount.notna()
    joined = joined[np.asarray(is_burn, dtype=bool)]
    out = pd.DataFrame(
        {
            "destination_domain": joined["domain"],
            "mint_tx_hash": joined["tx_hash"],
            "mint_log_index": _col(joined, "log_index"),
            "mint_block": _col(joined, "block_number").fillna(-1),
            "mint_timestamp": _col(joined, "timestamp", schema.TIMESTAMP),
            "cctp_version": _col(joined, "cctp_version"),
            "source_domain": joined["source_domain"],
            "nonce": _col(joined, "nonce"),
            "amount_raw": body_amount[is_burn].fillna(gross[is_burn]),
            "mint_recipient": _col(joined, "mint_recipient").fillna(
                _col(joined, "mint_mint_recipient")
            ),
            "message_sender": _col(joined, "message_sender"),
            "burn_token": _col(joined, "burn_token"),
            "destination_token_messenger": _col(joined, "mint_contract"),
            "fee_raw": fee[is_burn],
            "finality_threshold_executed": _col(joined, "finality_threshold_executed"),
            "max_fee_raw": _col(joined, "max_fee_raw"),
            "min_finality_threshold": _col(joined, "min_finality_threshold"),
            "hook_data": _col(joined, "hook_data"),
        }
    )
    counts = {
        "mints_without_message": int(lonely_mints.sum()),
        "messages_without_mint": int((~is_burn).sum()),
    }
    return out.reset_index(drop=True), counts
