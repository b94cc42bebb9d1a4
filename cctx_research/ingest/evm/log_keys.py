"""Which chain each log is on, when it happened, and whether it repeats.

The decoder's per-log context, decided before any event is decoded:

- the chain: a row's own ``chain_id`` (cryo writes one), else the ``chain=``
  the caller gives (a name, ``"domain-N"``, an EVM chain id, or a mapping from
  source file to one of those); numbers are EVM chain ids, never domains;
- the time: the log's ``blockTimestamp``, else the blocks frame, else NaT;
- duplicates: the same (chain, tx hash, log index) seen earlier.

Examples
--------
>>> import pandas as pd
>>> from cctx_research.ingest.evm.frame import conform_logs
>>> frame = conform_logs(pd.DataFrame({"block_number": [1, 1], "log_index": [0, 0],
...     "tx_hash": ["0xAB", "0xab"], "address": ["0x1"] * 2, "topic0": ["0x2"] * 2,
...     "data": ["0x"] * 2}))
>>> chain_id, domain = chain_columns(frame, "arbitrum")
>>> chain_id.tolist(), domain.tolist(), duplicates(frame, chain_id).tolist()
(['42161', '42161'], [3, 3], [False, True])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from cctx_research import chains, schema
from cctx_research.ingest.evm.frame import is_binary
from cctx_research.ingest.hexcodec import large_binaries, large_strings, take_rows
from cctx_research.ingest.ledger.guards import epoch_scale
from cctx_research.ingest.ledger.keys import fold
from cctx_research.ingest.rows import column, string_column

__all__ = ["chain_columns", "duplicates", "resolve_chain", "timestamps"]


def resolve_chain(value: Any) -> tuple[str | None, int | None]:
    """(EVM chain id, domain) of a ``chain=`` value: a name, ``domain-N`` or an EVM chain id."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(
            "chain must be a chain name ('base'), an EVM chain id (8453 or '8453') or a "
            f"mapping from source file to either, got {type(value).__name__}"
        )
    text = str(value).strip()
    if text.isdigit():  # numbers are EVM chain ids, as in cryo's chain_id column
        return str(int(text)), chains.domain_from_chain_id(str(int(text)))
    domain = chains.domain(text)
    known = {c.domain: c.chain_id for c in chains.CHAINS}
    return known.get(domain), domain


def _codes(values: pd.Series) -> tuple[np.ndarray, list[Any]]:
    """Dictionary codes of a string column (-1 for missing) and its distinct values."""
    encoded = pc.dictionary_encode(column(values))
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    codes = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False).astype(np.int64)
    return codes, encoded.dictionary.to_pylist()


def chain_columns(frame: pd.DataFrame, chain: Any) -> tuple[pd.Series, pd.Series]:
    """Per row: EVM chain id (string or <NA>) and CCTP domain (Int64 or <NA>).

    A row's own ``chain_id`` (cryo) wins; else ``chain``: a name, ``"domain-N"``,
    an EVM chain id, or a mapping from ``source_file`` to one of those.
    Decided once per distinct (chain id, file) pair, then spread over the rows.
    """
    own, own_values = _codes(frame["chain_id"])
    files, file_values = _codes(frame["source_file"])
    if chain is None:
        given: dict[Any, tuple[str | None, int | None]] = {}
    elif isinstance(chain, Mapping):
        given = {str(k): resolve_chain(v) for k, v in chain.items()}
    else:
        given = dict.fromkeys([*file_values, None], resolve_chain(chain))
    pair = (own + 1) * (len(file_values) + 1) + (files + 1)
    used, rows = np.unique(pair, return_inverse=True)
    ids: list[str | None] = []
    domains: list[int | None] = []
    for key in used.tolist():
        o, f = divmod(key, len(file_values) + 1)
        fill_id, fill_domain = given.get(file_values[f - 1] if f else None, (None, None))
        chain_id = own_values[o - 1] if o else fill_id
        found = chains.domain_from_chain_id(chain_id) if chain_id is not None else None
        ids.append(chain_id)
        domains.append(found if found is not None else fill_domain)
    chain_id = string_column(pa.array(ids, pa.large_string()).take(pa.array(rows)))
    domain = pd.array(domains, dtype=schema.NULLABLE_INT).take(rows)
    return chain_id.set_axis(frame.index), pd.Series(domain, index=frame.index)


def timestamps(frame: pd.DataFrame, chain_id: pd.Series, blocks: pd.DataFrame | None) -> pd.Series:
    """Per row: the log's ``block_timestamp``, else its block's time in ``blocks``, else NaT."""
    seconds = frame["block_timestamp"].astype(schema.NULLABLE_INT)
    stamps = pd.to_datetime(seconds, unit="s", utc=True).astype(schema.TIMESTAMP)
    if blocks is None or not stamps.isna().any():
        return stamps
    if not isinstance(blocks, pd.DataFrame) or not {"block_number", "timestamp"} <= set(blocks):
        raise ValueError(
            "blocks must be the frame read_blocks returns (block_number, timestamp and "
            "optionally chain_id)"
        )
    times = _block_times(blocks["timestamp"])
    nanos = pd.Series(times.array.asi8, dtype="int64").where(times.notna().to_numpy())
    numbers = blocks["block_number"].astype("int64").to_numpy()
    if "chain_id" in blocks and blocks["chain_id"].notna().any():
        index = pd.MultiIndex.from_arrays([blocks["chain_id"].astype(str).to_numpy(), numbers])
        keys = pd.MultiIndex.from_arrays(
            [chain_id.fillna("").astype(str).to_numpy(), frame["block_number"].to_numpy()]
        )
    else:
        index = pd.Index(numbers)
        keys = pd.Index(frame["block_number"].to_numpy())
    table = pd.Series(nanos.to_numpy(), index=index)
    table = table[~table.index.duplicated()]
    found_ns = table.reindex(keys).to_numpy()
    found = pd.Series(pd.to_datetime(found_ns, unit="ns", utc=True), index=frame.index)
    found = found.astype(schema.TIMESTAMP)
    return stamps.where(stamps.notna(), found)


def _block_times(values: pd.Series) -> pd.Series:
    """Block times as UTC: datetimes as they are, Unix times in the unit their size says
    (a frame of seconds is not nanoseconds from 1970)."""
    if pd.api.types.is_bool_dtype(values.dtype) or not pd.api.types.is_numeric_dtype(values.dtype):
        return pd.to_datetime(values, utc=True).astype(schema.TIMESTAMP)
    numbers = pd.to_numeric(values).to_numpy(dtype="float64", na_value=np.nan)
    known = ~np.isnan(numbers)
    whole = np.where(known, numbers, 0).astype(np.int64)
    times = pd.Series(pd.to_datetime(whole * epoch_scale(whole), unit="ns", utc=True))
    return times.where(known).astype(schema.TIMESTAMP)


def duplicates(frame: pd.DataFrame, chain_id: pd.Series) -> np.ndarray:
    """Rows whose (chain, tx hash, log index) an earlier row already had.

    A 64-bit key folded from the hash's 64 digits (case folded), the chain
    and the log index finds the few rows that might repeat; only those (and
    hashes that are not 0x + 64 digits) are compared exactly, on the whole
    lowercased hash.
    """
    n = len(frame)
    if n == 0:
        return np.zeros(0, dtype=bool)
    binary = is_binary(frame["tx_hash"])
    tx = large_binaries(frame["tx_hash"]) if binary else large_strings(column(frame["tx_hash"]))
    # a hash's 32 bytes, or its 64 digits after "0x" (case folded)
    size, skip, fold_case = (32, 0, np.uint8(0)) if binary else (66, 2, np.uint8(0x20))
    offsets = np.frombuffer(tx.buffers()[1], dtype=np.int64)[tx.offset : tx.offset + n + 1]
    hashes = (np.diff(offsets) == size) & np.asarray(tx.is_valid(), dtype=bool)
    key = np.zeros(n, dtype=np.uint64)
    if hashes.any():
        chars = np.frombuffer(tx.buffers()[2], dtype=np.uint8)
        words = (take_rows(chars, offsets[:-1][hashes] + skip, size - skip) | fold_case)
        words = words.view("<u8")
        columns = (np.ascontiguousarray(words[:, j]) for j in range(words.shape[1]))
        key[hashes] = fold(columns, np.zeros(len(words), dtype=np.uint64))
    chain, _ = _codes(chain_id)
    index = frame["log_index"].fillna(-1).to_numpy(dtype=np.int64)
    key ^= (chain.astype(np.uint64) + np.uint64(1)) * np.uint64(0xC2B2AE3D27D4EB4F)
    key ^= index.astype(np.uint64) * np.uint64(0x165667B19E3779F9)
    maybe = pd.Series(key).duplicated(keep=False).to_numpy() | ~hashes
    out = np.zeros(n, dtype=bool)
    rows = np.flatnonzero(maybe)
    if len(rows):
        exact = pd.DataFrame(
            {
                "tx": (tx.take(pa.array(rows)) if binary else pc.ascii_lower(
                    tx.take(pa.array(rows)))).to_numpy(zero_copy_only=False),
                "chain": chain[rows],
                "index": index[rows],
            }
        )
        out[rows] = exact.duplicated().to_numpy()
    return out
