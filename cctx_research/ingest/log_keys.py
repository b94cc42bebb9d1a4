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
>>> from cctx_research.ingest.log_frame import conform_logs
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
import pyarrow.compute as pc

from cctx_research import chains, schema
from cctx_research.ingest.rows import column

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


def chain_columns(frame: pd.DataFrame, chain: Any) -> tuple[pd.Series, pd.Series]:
    """Per row: EVM chain id (string or <NA>) and CCTP domain (Int64 or <NA>).

    A row's own ``chain_id`` (cryo) wins; else ``chain``: a name, ``"domain-N"``,
    an EVM chain id, or a mapping from ``source_file`` to one of those.
    """
    chain_id = frame["chain_id"].astype(schema.STRING)
    if chain is not None:
        if isinstance(chain, Mapping):
            given = {str(k): resolve_chain(v)[0] for k, v in chain.items()}
            domains = {str(k): resolve_chain(v)[1] for k, v in chain.items()}
            fill = frame["source_file"].map(given)
            fill_domain = frame["source_file"].map(domains)
        else:
            cid, dom = resolve_chain(chain)
            fill = pd.Series(cid, index=frame.index, dtype=object)
            fill_domain = pd.Series(dom, index=frame.index, dtype=object)
        missing = chain_id.isna()
        chain_id = chain_id.where(~missing, fill.astype(schema.STRING))
    else:
        fill_domain = pd.Series(None, index=frame.index, dtype=object)
    lookup = {v: chains.domain_from_chain_id(v) for v in chain_id.dropna().unique()}
    domain = chain_id.map(lookup).astype(object)
    domain = domain.where(domain.notna(), fill_domain)
    return chain_id, domain.astype(schema.NULLABLE_INT)


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
    times = pd.to_datetime(blocks["timestamp"], utc=True).astype(schema.TIMESTAMP)
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


def duplicates(frame: pd.DataFrame, chain_id: pd.Series) -> np.ndarray:
    """Rows whose (chain, tx hash, log index) an earlier row already had."""
    if frame.empty:
        return np.zeros(0, dtype=bool)
    tx = pc.dictionary_encode(pc.ascii_lower(column(frame["tx_hash"]))).indices
    chain = pc.dictionary_encode(column(chain_id)).indices
    codes = [
        pc.fill_null(tx, -1).to_numpy(zero_copy_only=False).astype(np.int64),
        pc.fill_null(chain, -1).to_numpy(zero_copy_only=False).astype(np.int64),
        frame["log_index"].fillna(-1).to_numpy(dtype=np.int64),
    ]
    spans = [int(c.max()) + 2 for c in codes]
    if np.prod([float(x) for x in spans]) < 2**62:
        key = (codes[0] + 1) * spans[1] * spans[2] + (codes[1] + 1) * spans[2] + codes[2] + 1
        return pd.Series(key).duplicated().to_numpy()
    return pd.DataFrame(codes).T.duplicated().to_numpy()
