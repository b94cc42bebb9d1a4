"""Decoded CCTP events as the two sides of a transfer: burns and arrivals.

The event tables use the column names of
:class:`cctx_research.ingest.evm.logs.DecodedLogs`, whoever produced them
(the log decoder, or Dune's decoded tables): ``burns`` (``DepositForBurn``),
``sent`` (``MessageSent``), ``received`` (``MessageReceived``) and ``mints``
(``MintAndWithdraw``). This module turns them into the *burns* and
*arrivals* tables of :mod:`~cctx_research.ingest.ledger.linking`. Every event
stands alone, and two events of one transfer become one side:

- a **burn** comes from ``DepositForBurn`` or ``MessageSent``, whichever is
  present; when both are, they are merged (the message adds the header:
  for V1 the nonce, for V2 nothing the event lacks). In one transaction the
  message a ``DepositForBurn`` sent is the ``MessageSent`` with the same
  amount, mint recipient and destination, taken in log order (Circle's
  TokenMessenger emits ``DepositForBurn`` right after the transmitter's
  ``MessageSent``).
- an **arrival** comes from ``MessageReceived`` (source domain, nonce, the
  burn message body) with the ``MintAndWithdraw`` of the same transfer,
  which is the log right before it in its transaction (the TokenMessenger
  mints and emits while handling the message, then the transmitter emits
  ``MessageReceived``). It is never joined by rank: a generic message in the
  same transaction would take the transfer's fee.

Only token transfers are transfers. A message counts when its body parses
as a burn message of its version and its header ``sender`` is a
TokenMessenger of its source domain (:func:`cctx_research.chains.token_messengers`;
a domain the registry knows no TokenMessenger of is accepted, and counted
as ``sender_unverified``). Other messages are skipped and counted
(``skipped_generic_messages``), as is a ``MintAndWithdraw`` with no
``MessageReceived`` (``skipped_mints_without_message``: without its message
a mint cannot say where it came from).

The burned amount of an arrival is the body's ``amount``; its fee is the
mint's ``feeCollected``, else the attested body's ``feeExecuted``.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from ... import chains, schema

__all__ = ["arrivals", "burns", "token_transfers"]

logger = logging.getLogger(__name__)

_ZERO_NONCE = "0x" + "0" * 64


def _col(frame: pd.DataFrame, name: str, dtype: object = object) -> pd.Series:
    if name in frame.columns:
        return frame[name]
    return pd.Series(pd.NA, index=frame.index, dtype=dtype)


def token_transfers(messages: pd.DataFrame) -> tuple[np.ndarray, int]:
    """Which messages are token transfers, and how many of them have an unverified sender.

    A message is a token transfer when its burn body parsed (``amount_raw``
    is known) and its header ``sender`` is a TokenMessenger of its
    ``source_domain``. Where the registry lists no TokenMessenger for the
    domain, the body alone decides, and the row counts as unverified.
    """
    n = len(messages)
    if n == 0:
        return np.zeros(0, dtype=bool), 0
    body = _col(messages, "amount_raw").notna().to_numpy(dtype=bool)
    sender = _col(messages, "sender").astype(schema.STRING).str.lower()
    domain = _col(messages, "source_domain").astype("Int64")
    ok = np.zeros(n, dtype=bool)
    unverified = np.zeros(n, dtype=bool)
    codes, uniques = pd.factorize(domain)
    for code, value in enumerate(uniques):
        rows = codes == code
        known = chains.token_messengers(int(value)) if pd.notna(value) else frozenset()
        if not known:
            ok[rows] = True
            unverified[rows] = True
        else:
            ok[rows] = sender[rows].isin(known).to_numpy(dtype=bool)
    ok &= body
    return ok, int((ok & unverified).sum())


_BURN_FIELDS = (
    "burn_token",
    "mint_recipient",
    "message_sender",
    "destination_caller",
    "destination_token_messenger",
    "max_fee_raw",
    "min_finality_threshold",
    "hook_data",
)

_FILLED = ("nonce", *_BURN_FIELDS, "transaction_from")
"""What a ``MessageSent`` fills in where its ``DepositForBurn`` lacks it."""


def _burn_side(events: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "source_domain": _col(events, "domain"),
            "burn_tx_hash": _col(events, "tx_hash"),
            "burn_log_index": _col(events, "log_index"),
            "burn_block": _col(events, "block_number").fillna(-1),
            "burn_timestamp": _col(events, "timestamp", schema.TIMESTAMP),
            "cctp_version": _col(events, "cctp_version"),
            "nonce": _col(events, "nonce", schema.STRING),
            "amount_raw": _col(events, "amount_raw"),
            "destination_domain": _col(events, "destination_domain"),
            **{c: _col(events, c) for c in _BURN_FIELDS},
            "burn_tx_from": _col(events, "transaction_from", schema.STRING),
        }
    )


def _in_tx_rank(frame: pd.DataFrame, keys: list[str]) -> pd.Series:
    """Each row's rank, in log order, among the rows of its transaction with the same ``keys``."""
    # the columns it orders by alone: sorting the whole frame would reorder every column
    order = frame[[*keys, "log_index"]].sort_values([*keys, "log_index"], kind="stable")
    rank = order.groupby(keys, sort=False, dropna=False).cumcount()
    return rank.reindex(frame.index)


def _key_codes(
    left: pd.DataFrame, right: pd.DataFrame, keys: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    """One int64 per row of ``left`` and of ``right`` for its values of ``keys``: equal
    values (missing ones too) the same number, and numbers in the order of the values
    (each key sorted, missing last, as a join sorts them)."""
    n = len(left)
    code = np.zeros(n + len(right), dtype=np.int64)
    for key in keys:
        values = pd.concat([left[key], right[key]], ignore_index=True)
        codes, uniques = pd.factorize(values, sort=True)
        codes = np.where(codes < 0, len(uniques), codes).astype(np.int64)
        code, _ = pd.factorize(code * (len(uniques) + 1) + codes, sort=True)
        code = code.astype(np.int64)
    return code[:n], code[n:]


def burns(deposits: pd.DataFrame, sent: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """The *burns* table of ``DepositForBurn`` and ``MessageSent`` events.

    Parameters
    ----------
    deposits, sent : DataFrame
        The event tables (either may be empty).

    Returns
    -------
    (burns, counts)
        counts: ``merged`` (messages folded into their ``DepositForBurn``),
        ``skipped_generic_messages`` and ``sender_unverified``.
    """
    counts = {"merged": 0, "skipped_generic_messages": 0, "sender_unverified": 0}
    deposits = deposits.reset_index(drop=True)
    sent = sent.reset_index(drop=True)
    if len(sent):
        transfer, counts["sender_unverified"] = token_transfers(sent)
        counts["skipped_generic_messages"] = int((~transfer).sum())
        sent = sent[transfer].reset_index(drop=True)
        sent = sent.assign(
            destination_token_messenger=_col(sent, "recipient"),
            # a V2 burn's message has no nonce yet: Circle's attestation assigns it
            nonce=_col(sent, "nonce", schema.STRING).mask(
                _col(sent, "nonce", schema.STRING) == _ZERO_NONCE
            ),
        )
        wrong = sent["source_domain"].to_numpy() != sent["domain"].to_numpy(dtype=np.int64)
        if wrong.any():  # the loader's chain check names the file; never pair across chains
            sent = sent[~wrong].reset_index(drop=True)
    if not len(sent):
        return _burn_side(deposits), counts
    if not len(deposits):
        return _burn_side(sent), counts
    keys = ["domain", "tx_hash", "amount_raw", "mint_recipient", "destination_domain"]
    # one integer a key, in the keys' order: the join and the ranks work on integers, not
    # strings, and the outer join's rows come out in the order the keys would give them
    group_d, group_s = _key_codes(deposits, sent, keys)
    d = deposits.assign(_g=group_d)
    d["_k"] = _in_tx_rank(d, ["_g"]).to_numpy()
    s = sent.assign(_g=group_s)
    s["_k"] = _in_tx_rank(s, ["_g"]).to_numpy()
    extra = [c for c in _FILLED if c in s.columns and c not in keys]
    s = s[["_g", "_k", *extra]]
    joined = d.merge(s, on=["_g", "_k"], how="outer", suffixes=("", "_sent"), indicator=True)
    both = (joined["_merge"] == "both").to_numpy()
    counts["merged"] = int(both.sum())
    sent_only = (joined["_merge"] == "right_only").to_numpy()
    if sent_only.any():  # a MessageSent alone: the event columns come from the message
        whole = sent.assign(_g=group_s, _k=s["_k"].to_numpy())
        alone = joined.loc[sent_only, ["_g", "_k"]].merge(whole, on=["_g", "_k"], how="left")
        # the deposits' keys, holed by the messages' rows: typed as a join on them types them
        common = {k: pd.concat([deposits[k][:0], sent[k][:0]]).dtype for k in keys}
        joined = pd.concat([joined[~sent_only].astype(common), alone], ignore_index=True)
        both = np.concatenate([both[~sent_only], np.zeros(len(alone), dtype=bool)])
    for column in _FILLED:
        other = f"{column}_sent"
        if other in joined.columns:
            joined[column] = joined[column].where(joined[column].notna(), joined[other])
    return _burn_side(joined.drop(columns=["_merge", "_g", "_k"], errors="ignore")), counts


def arrivals(received: pd.DataFrame, mints: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """The *arrivals* table of ``MessageReceived`` events and their ``MintAndWithdraw``.

    Returns
    -------
    (arrivals, counts)
        counts: ``merged`` (mints folded into their message),
        ``skipped_mints_without_message``, ``skipped_generic_messages`` and
        ``sender_unverified``.
    """
    counts = {
        "merged": 0,
        "skipped_mints_without_message": 0,
        "skipped_generic_messages": 0,
        "sender_unverified": 0,
    }
    received = received.reset_index(drop=True)
    mints = mints.reset_index(drop=True)
    transfer, counts["sender_unverified"] = token_transfers(received)
    counts["skipped_generic_messages"] = int((~transfer).sum())
    r = received[transfer]
    keys = ["domain", "tx_hash", "log_index"]
    m = mints.assign(log_index=mints["log_index"] + 1) if len(mints) else mints
    m = m.rename(columns={c: f"mint_{c}" for c in m.columns if c not in keys})
    joined = r.merge(m, on=keys, how="left", indicator=True) if len(m) else r.assign(_merge="")
    has_mint = (joined["_merge"] == "both").to_numpy()
    counts["merged"] = int(has_mint.sum())
    counts["skipped_mints_without_message"] = len(mints) - counts["merged"]
    fee = _col(joined, "mint_fee_raw").astype(schema.NULLABLE_INT)
    fee = fee.fillna(_col(joined, "fee_executed_raw").astype(schema.NULLABLE_INT))
    contract = _col(joined, "mint_contract").astype(schema.STRING)
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
            "amount_raw": _col(joined, "amount_raw"),
            "mint_recipient": _col(joined, "mint_recipient"),
            "message_sender": _col(joined, "message_sender"),
            "burn_token": _col(joined, "burn_token"),
            "destination_token_messenger": contract,
            "fee_raw": fee,
            "finality_threshold_executed": _col(joined, "finality_threshold_executed"),
            "max_fee_raw": _col(joined, "max_fee_raw"),
            "hook_data": _col(joined, "hook_data"),
            "relayer": _col(joined, "caller"),
            "mint_recipient_owner": _col(joined, "mint_mint_recipient_owner"),
        }
    )
    return out.reset_index(drop=True), counts
