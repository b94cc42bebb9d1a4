"""The normalised event-log frame: its columns, and conforming a frame to them.

Readers (:mod:`cctx_research.ingest.evm.logs`) produce this frame and the
decoder consumes it, so a frame a user builds by hand, or cryo's logs read
with pandas, decodes the same way. One row per log:

=================  =============  ================================================
column             dtype          meaning
=================  =============  ================================================
source_file        string         the file the log came from ("" if built by hand)
index              int64          position of the log in that file (0-based)
chain_id           string         EVM chain id when the file says it (cryo), else <NA>
block_number       Int64
transaction_index  Int64
log_index          Int64
tx_hash            string         ``0x`` hex as read (checked by the decoder); this and
                                  the other hex columns may instead hold bytes
                                  (``BINARY``), as ``read_logs(binary=True)`` keeps
                                  cryo's Parquet
address            string         the emitting contract
topic0 .. topic3   string         ``0x`` hex, <NA> where the log has fewer topics
data               string         ``0x`` hex
removed            boolean        true for logs a node dropped in a reorg
block_timestamp    Int64          Unix seconds when the log carries it
transaction_from   string         the transaction's sender (``from``) where the source
                                  gives it (receipts; a log table joined with cryo's
                                  ``transactions``, whose ``from_address`` reads too),
                                  else <NA>: ``eth_getLogs`` and cryo's ``logs`` lack it
problem            string         what the reader found wrong with the row, else <NA>
=================  =============  ================================================

Examples
--------
>>> import pandas as pd
>>> frame = conform_logs(pd.DataFrame({"block_number": [1], "transaction_hash": ["0xab"],
...     "log_index": [0], "address": ["0x01"], "topic0": ["0xff"], "data": ["0x"]}))
>>> frame.columns.tolist() == list(LOG_COLUMNS)
True
>>> frame.loc[0, "tx_hash"], frame.loc[0, "removed"]
('0xab', np.False_)
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pyarrow as pa

from cctx_research import schema

__all__ = ["BINARY", "LOG_COLUMNS", "REQUIRED", "conform_logs", "conforms", "is_binary"]

LOG_COLUMNS: dict[str, Any] = {
    "source_file": schema.STRING,
    "index": "int64",
    "chain_id": schema.STRING,
    "block_number": schema.NULLABLE_INT,
    "transaction_index": schema.NULLABLE_INT,
    "log_index": schema.NULLABLE_INT,
    "tx_hash": schema.STRING,
    "address": schema.STRING,
    "topic0": schema.STRING,
    "topic1": schema.STRING,
    "topic2": schema.STRING,
    "topic3": schema.STRING,
    "data": schema.STRING,
    "removed": pd.BooleanDtype(),
    "block_timestamp": schema.NULLABLE_INT,
    "transaction_from": schema.STRING,
    "problem": schema.STRING,
}
"""The normalised log frame's columns and dtypes, in order."""

BINARY = pd.ArrowDtype(pa.large_binary())
"""The dtype a hex column may have instead of text: the bytes themselves (cryo's Parquet)."""

_HEX = ("tx_hash", "address", "topic0", "topic1", "topic2", "topic3", "data", "transaction_from")

REQUIRED = ("block_number", "log_index", "tx_hash", "address", "topic0", "data")
"""Columns a log frame must have; the others are filled with nulls when absent."""

# Other spellings of the same columns: cryo's, and the JSON-RPC field names.
_ALIASES = {
    "transaction_hash": "tx_hash",
    "transactionHash": "tx_hash",
    "blockNumber": "block_number",
    "logIndex": "log_index",
    "transactionIndex": "transaction_index",
    "blockTimestamp": "block_timestamp",
    "block_time": "block_timestamp",
    "contract_address": "address",
    "from_address": "transaction_from",
}


def conform_logs(frame: pd.DataFrame, *, source_file: str = "") -> pd.DataFrame:
    """A copy of ``frame`` with the normalised log columns, in order and typed.

    Parameters
    ----------
    frame : DataFrame
        Logs with the columns above, or cryo's names (``transaction_hash``);
        binary columns must already be ``0x`` hex text.
    source_file : str
        Filled into ``source_file`` when the frame has no such column.

    Raises
    ------
    TypeError
        If ``frame`` is not a DataFrame.
    ValueError
        If a required column is missing; the message lists them.
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"logs must be a DataFrame (from read_logs), got {type(frame).__name__}")
    frame = frame.rename(columns={k: v for k, v in _ALIASES.items() if v not in frame.columns})
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        raise ValueError(
            f"the logs lack the columns {missing}; pass the frame read_logs returns, or one "
            f"with the columns {list(REQUIRED)} (cryo's names such as transaction_hash work too)"
        )
    n = len(frame)
    out = {}
    for name, dtype in LOG_COLUMNS.items():
        if name in frame.columns:
            values = frame[name]
            if name in _HEX and is_binary(values):
                out[name] = values.astype(BINARY)
                continue
            if name == "chain_id":
                values = values.astype("string").str.strip()
        elif name == "source_file":
            values = pd.Series([source_file] * n, index=frame.index)
        elif name == "index":
            values = pd.Series(range(n), index=frame.index)
        elif name == "removed":
            values = pd.Series(False, index=frame.index)
        else:
            values = pd.Series(pd.NA, index=frame.index)
        out[name] = values.astype(dtype)
    return pd.DataFrame(out).reset_index(drop=True)


def is_binary(values: pd.Series) -> bool:
    """Whether a column holds bytes in Arrow (binary of any width), not hex text."""
    dtype = values.dtype
    if not isinstance(dtype, pd.ArrowDtype):
        return False
    kind = dtype.pyarrow_dtype
    return bool(
        pa.types.is_binary(kind) or pa.types.is_large_binary(kind)
        or pa.types.is_fixed_size_binary(kind)
    )


def conforms(frame: pd.DataFrame) -> bool:
    """Whether ``frame`` is a normalised log frame already (its columns, in order, typed),
    so the decoder can read it as it is instead of conforming a copy."""
    if not isinstance(frame, pd.DataFrame) or list(frame.columns) != list(LOG_COLUMNS):
        return False
    index = frame.index
    if not isinstance(index, pd.RangeIndex) or index.start != 0 or index.step != 1:
        return False
    return all(
        frame[name].dtype == dtype or (name in _HEX and frame[name].dtype == BINARY)
        for name, dtype in LOG_COLUMNS.items()
    )
