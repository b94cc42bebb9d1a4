"""The toolkit's own frames (format ``"cctx"``): ledgers and transfers, from any file.

A ``"ledger"`` table (Parquet from ``import`` or ``DataFrame.to_parquet``,
CSV, JSON) keeps every column it has; a ``"transfers"`` table (what
``Client.mints`` returns and ``cctx-research fetch mints`` writes as
Parquet, CSV or JSON) carries one time only, so a completed row is taken as
burned and minted at ``timestamp`` and a pending row as burned then and
never minted. Such rows have no transaction hashes or block numbers (block
-1): **hash look-ups of them find nothing**.

Values are coerced to the canonical dtypes: timestamps as ISO 8601 or Unix
seconds (sub-second digits kept), booleans as ``true``/``false``/``1``/``0``,
integers exactly. Rows that do not fit are reported by line (see
:class:`~cctx_research.ingest.values.Rows`).
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from ... import schema
from ...addressing import as_chain_format
from ...errors import DataError
from ..ledger import guards
from ..values import Rows, malformed_error

__all__ = ["LEDGER_NEEDS", "TRANSFERS_NEEDS", "ledger_from_frame", "ledger_from_rows", "missing"]

logger = logging.getLogger(__name__)

LEDGER_NEEDS: tuple[str, ...] = tuple(
    c for c in schema.columns("ledger") if c not in schema.optional_columns("ledger")
)
"""Columns a ``"ledger"`` table must have (the V2, linking and token columns are optional)."""

TRANSFERS_NEEDS: tuple[str, ...] = (
    "transfer_id",
    "timestamp",
    "amount_raw",
    "is_completed",
    "source_domain",
    "destination_domain",
    "mint_recipient",
    "message_sender",
    "burn_token",
    "destination_caller",
    "destination_token_messenger",
)
"""Columns a ``"transfers"`` table must have (``amount`` may stand in for ``amount_raw``)."""

_ADDRESSES = schema.ADDRESS_COLUMNS


def missing(columns: pd.Index) -> dict[str, list[str]]:
    """The columns each kind lacks: ``{"ledger": [...], "transfers": [...]}``."""
    have = set(columns)
    transfers = [c for c in TRANSFERS_NEEDS if c not in have]
    if "amount_raw" in transfers and "amount" in have:
        transfers.remove("amount_raw")
    return {"ledger": [c for c in LEDGER_NEEDS if c not in have], "transfers": transfers}


def ledger_from_rows(rows: Rows) -> pd.DataFrame:
    """A ledger from a table of kind ``"ledger"`` or ``"transfers"`` (bad rows flagged in ``rows``).

    The caller has checked the columns with :func:`missing`. The result
    holds every row; the caller drops ``rows.bad``.
    """
    lacking = missing(rows.frame.columns)
    out = _from_ledger(rows) if not lacking["ledger"] else _from_transfers(rows)
    schema.complete(out, "ledger")
    return out[schema.columns("ledger")]


def ledger_from_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A typed ledger from an in-memory frame of kind ``"ledger"`` or ``"transfers"``.

    The frame's columns are coerced as :func:`cctx_research.load` coerces a
    file's (exact integers, each address in its chain's format, UTC times).

    Raises
    ------
    TypeError
        If ``frame`` is not a pandas DataFrame.
    DataError
        Naming the columns each kind lacks, or the rows whose values do not
        fit, with their positions.

    Examples
    --------
    >>> from cctx_research.service.sample import generate
    >>> ledger_from_frame(generate("2024-07-01", days=1)).shape[0] > 0
    True
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(
            f"expected a pandas DataFrame of kind 'ledger' or 'transfers', got "
            f"{type(frame).__name__}"
        )
    lacking = missing(frame.columns)
    if lacking["ledger"] and lacking["transfers"]:
        raise DataError(
            "the data is neither a 'ledger' nor a 'transfers' table: "
            f"missing for 'ledger': {', '.join(lacking['ledger'])}; "
            f"missing for 'transfers': {', '.join(lacking['transfers'])}",
            hint="see cctx_research.schema.columns('ledger') and columns('transfers')",
        )
    rows = Rows(frame, "frame", first=0)
    ledger = ledger_from_rows(rows)
    if rows.problems:
        raise malformed_error(rows.problems)
    return schema.validate(as_chain_format(ledger.reset_index(drop=True)), "ledger")


def _from_ledger(rows: Rows) -> pd.DataFrame:
    out = pd.DataFrame(index=rows.frame.index)
    out["transfer_id"] = rows.strings("transfer_id")
    rows.flag(np.asarray(out["transfer_id"].isna()), "column 'transfer_id' is empty")
    for column in ("source_domain", "destination_domain"):
        out[column] = rows.domains(column)
    out["amount_raw"] = rows.amounts("amount_raw")
    out["burn_timestamp"] = rows.times("burn_timestamp", optional=True)
    out["mint_timestamp"] = rows.times("mint_timestamp", optional=True)
    out["burn_tx_hash"] = rows.hashes("burn_tx_hash")
    out["mint_tx_hash"] = rows.hashes("mint_tx_hash")
    out["burn_block"] = rows.integers("burn_block", missing=-1)
    out["mint_block"] = rows.integers("mint_block", missing=-1)
    for column in _ADDRESSES:
        out[column] = rows.addresses(column)
    for column in schema.LEDGER_V2:
        if column in ("nonce", "hook_data"):
            out[column] = rows.strings(column, lower=column == "hook_data")
        else:
            out[column] = rows.nullable_integers(column)
    out["pairing"] = rows.strings("pairing")
    out["link_group_size"] = rows.nullable_integers("link_group_size")
    out["token"] = rows.strings("token")
    out["relayer"] = rows.addresses("relayer")
    out["mint_recipient_owner"] = rows.addresses("mint_recipient_owner")
    out["burn_tx_from"] = rows.addresses("burn_tx_from")
    no_burn_time = out["burn_timestamp"].isna() & out["mint_timestamp"].isna()
    rows.flag(np.asarray(no_burn_time), "burn_timestamp and mint_timestamp are both empty")
    return out


def _from_transfers(rows: Rows) -> pd.DataFrame:
    n = len(rows)
    ts = rows.times("timestamp")
    completed = rows.booleans("is_completed")
    if rows.has("amount_raw"):
        amount_raw = rows.amounts("amount_raw")
    else:  # token units with 6 decimals: exact up to 2**53 base units
        amount = pd.to_numeric(rows.frame["amount"], errors="coerce")
        rows.flag(np.asarray(amount.isna()), "column 'amount' is not a number")
        units = amount.fillna(0) * 1_000_000
        rows.flag(guards.outside_supply(units) | np.isinf(units.to_numpy(dtype=float)),
                  lambda i: guards.amount_message("amount", f"{amount.iat[i]:g}", unit="USDC"))
        amount_raw = units.where(~rows.bad, 0).round().astype(np.int64).to_numpy()
    out = pd.DataFrame(
        {
            "transfer_id": rows.strings("transfer_id"),
            "source_domain": rows.domains("source_domain"),
            "destination_domain": rows.domains("destination_domain"),
            "amount_raw": amount_raw,
            "burn_timestamp": ts,
            "mint_timestamp": ts.where(completed).astype(schema.TIMESTAMP),
            "burn_tx_hash": pd.Series([pd.NA] * n, dtype=schema.STRING),
            "mint_tx_hash": pd.Series([pd.NA] * n, dtype=schema.STRING),
            "burn_block": np.full(n, -1, dtype=np.int64),
            "mint_block": np.full(n, -1, dtype=np.int64),
            **{c: rows.addresses(c) for c in _ADDRESSES},
        }
    )
    rows.flag(np.asarray(out["transfer_id"].isna()), "column 'transfer_id' is empty")
    return out
