"""XChainDataGen's CCTP tables (format ``"xchaindatagen"``), exported as CSV or Parquet.

XChainDataGen (github.com/AndreAugusto11/XChainDataGen, MIT) extracts CCTP
V1 on six EVM chains into these tables (column names from its models; the
mapping is ours):

``cctp_deposit_for_burn`` (burns)
    ``blockchain``, ``transaction_hash``, ``nonce``, ``depositor``,
    ``burn_token``, ``recipient``, ``dst_blockchain``, ``amount``.
``cctp_message_received`` (arrivals)
    ``blockchain``, ``transaction_hash``, ``nonce``, ``src_blockchain``,
    ``input_token`` (the burned token), ``depositor``, ``recipient``, ``amount``.
``cctp_cross_chain_transactions`` (paired by XChainDataGen: ``"source"``)
    ``src_blockchain``, ``src_transaction_hash``, ``src_timestamp``,
    ``dst_blockchain``, ``dst_transaction_hash``, ``dst_timestamp`` (Unix
    seconds), ``deposit_id`` (the nonce), ``depositor``, ``recipient``, ``amount``.
``cctp_blockchain_transactions`` (times)
    ``blockchain``, ``transaction_hash``, ``block_number``, ``timestamp``:
    load it with the two event tables to give them block numbers and times;
    without it their times are missing (and counted).

The event tables carry no log index; a transfer's id comes from its nonce.
Every table declares its transaction hashes ``NOT NULL`` (XChainDataGen's
``repository/cctp/models.py``), so a row without one is malformed: a bad row
naming file, line and column, never a transfer without its transaction.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from ..formats import FileRead
from ..ledger import guards
from ..values import Rows
from .dune import chain_domains

__all__ = ["apply_times", "read"]

logger = logging.getLogger(__name__)


def _hashes(rows: Rows, column: str) -> pd.Series:
    """A column of transaction hashes XChainDataGen never leaves empty: an empty cell flags."""
    out = rows.hashes(column)
    rows.flag(
        np.asarray(out.isna(), dtype=bool),
        f"column {column!r} is empty (XChainDataGen writes a transaction hash on every row: "
        "export the table again, or leave the row out)",
    )
    return out


def _deposits(rows: Rows, parts: FileRead) -> None:
    parts.burn_rows.append(
        pd.DataFrame(
            {
                "source_domain": chain_domains(rows, "blockchain"),
                "burn_tx_hash": _hashes(rows, "transaction_hash"),
                "cctp_version": 1,
                "nonce": rows.integers("nonce").astype(str),
                "amount_raw": rows.amounts("amount"),
                "message_sender": rows.addresses("depositor"),
                "mint_recipient": rows.addresses("recipient"),
                "burn_token": rows.addresses("burn_token"),
                "destination_domain": chain_domains(rows, "dst_blockchain"),
            }
        )[~rows.bad]
    )


def _received(rows: Rows, parts: FileRead) -> None:
    parts.arrivals.append(
        pd.DataFrame(
            {
                "destination_domain": chain_domains(rows, "blockchain"),
                "mint_tx_hash": _hashes(rows, "transaction_hash"),
                "cctp_version": 1,
                "source_domain": chain_domains(rows, "src_blockchain"),
                "nonce": rows.integers("nonce").astype(str),
                "amount_raw": rows.amounts("amount"),
                "message_sender": rows.addresses("depositor"),
                "mint_recipient": rows.addresses("recipient"),
                "burn_token": rows.addresses("input_token"),
            }
        )[~rows.bad]
    )


def _cross_chain(rows: Rows, parts: FileRead) -> None:
    """Paired transfers; where the table names the source contract, only Circle's count.

    ``src_contract_address`` is the contract that emitted the burn (its
    TokenMessenger); a row naming another is skipped as
    ``skipped_unknown_emitter``. Without the column the rows are taken as
    XChainDataGen selected them, from Circle's contracts.
    """
    source = chain_domains(rows, "src_blockchain")
    unknown = np.zeros(len(rows), dtype=bool)
    if rows.has("src_contract_address"):
        contract, line = rows.addresses("src_contract_address"), rows.offset
        guards.refuse_testnet(rows.source_file, "src_contract_address", contract,
                              lambda i: f"line {i + line}")  # fmt: skip
        guards.refuse_other_chain(rows.source_file, "src_contract_address", contract, source,
                                  lambda i: f"line {i + line}",
                                  chain_column="src_blockchain")  # fmt: skip
        unknown = guards.unknown_emitters(contract, source, "token_messenger")
    frame = pd.DataFrame(
        {
            "source_domain": source,
            "destination_domain": chain_domains(rows, "dst_blockchain"),
            "cctp_version": 1,
            "nonce": rows.integers("deposit_id").astype(str),
            "amount_raw": rows.amounts("amount"),
            "burn_timestamp": rows.times("src_timestamp"),
            "mint_timestamp": rows.times("dst_timestamp"),
            "burn_tx_hash": _hashes(rows, "src_transaction_hash"),
            "mint_tx_hash": _hashes(rows, "dst_transaction_hash"),
            "message_sender": rows.addresses("depositor"),
            "mint_recipient": rows.addresses("recipient"),
        }
    )
    unknown &= ~rows.bad
    parts.skip("unknown_emitter", int(unknown.sum()))
    parts.paired.append(frame[~rows.bad & ~unknown])


def _transactions(rows: Rows, parts: FileRead) -> None:
    parts.tx_times.append(
        pd.DataFrame(
            {
                "domain": chain_domains(rows, "blockchain"),
                "tx_hash": _hashes(rows, "transaction_hash"),
                "block_number": rows.integers("block_number"),
                "timestamp": rows.times("timestamp"),
            }
        )[~rows.bad]
    )


_READERS = {
    "cctp_deposit_for_burn": _deposits,
    "cctp_message_received": _received,
    "cctp_cross_chain_transactions": _cross_chain,
    "cctp_blockchain_transactions": _transactions,
}


def read(rows: Rows, table: str) -> FileRead:
    """Read one XChainDataGen table."""
    out = FileRead(format="xchaindatagen")
    rows.frame.columns = [str(c).strip().lower() for c in rows.frame.columns]
    _READERS[table](rows, out)
    out.problems.extend(rows.problems)
    return out


def apply_times(frame: pd.DataFrame, times: pd.DataFrame, side: str) -> pd.DataFrame:
    """Fill ``<side>_timestamp``/``<side>_block`` of rows without them from ``times``."""
    domain = "source_domain" if side == "burn" else "destination_domain"
    lookup = times.drop_duplicates(["domain", "tx_hash"]).set_index(["domain", "tx_hash"])
    keys = pd.MultiIndex.from_arrays([frame[domain], frame[f"{side}_tx_hash"]])
    found = lookup.reindex(keys)
    ts, block = f"{side}_timestamp", f"{side}_block"
    # the found times keep their dtype (UTC) by index, even when no row is left
    found_times = pd.Series(found["timestamp"].array, index=frame.index)
    frame[ts] = frame[ts].fillna(found_times) if ts in frame.columns else found_times
    known = found["block_number"].notna().to_numpy()
    old = frame[block].to_numpy() if block in frame.columns else np.full(len(frame), -1)
    new = np.where(known & (old < 0), found["block_number"].fillna(-1).to_numpy(), old)
    frame[block] = new.astype(np.int64)
    return frame
