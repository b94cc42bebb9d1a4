"""The interface's records of the store's rows, as plain dicts ready for :func:`json.dumps`.

:class:`~cctx_research.service.store.Store` finds the rows that answer an
operation; this module writes them the way the interface does (its field
names, camelCase, the ``detinationTokenMessenger`` typo included): the
transaction summary (interface 2.1), the mint groups of the mint listing
(2.2), the hash lookup's detail (2.3) and the recipient listing's items
(2.4). Rows are positions in the :class:`~cctx_research.service.index.LedgerIndex`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from .. import chains
from .index import LedgerIndex

__all__ = ["INSTANCE_ID", "detail", "mint_groups", "received_items", "summaries"]

INSTANCE_ID = "cctx-research-local"
"""``instanceId`` of every record: this service is one indexer instance."""

_NS = 1_000_000_000


def summaries(
    ix: LedgerIndex, rows: np.ndarray, ts_ns: np.ndarray, clock: int
) -> list[dict[str, Any]]:
    """Transaction summaries (interface 2.1) of ``rows`` with the given times."""
    ids = ix.ids.take(pa.array(rows, type=pa.int64())).to_pylist()
    completed = (ix.minted[rows] & (ix.mint_ns[rows] <= clock)).tolist()
    c = ix.codes
    o = ix.out
    recipients = [o["mint_recipient"][k] for k in c["mint_recipient"][rows].tolist()]
    senders = [o["message_sender"][k] for k in c["message_sender"][rows].tolist()]
    tokens = [o["burn_token"][k] for k in c["burn_token"][rows].tolist()]
    callers = [o["destination_caller"][k] for k in c["destination_caller"][rows].tolist()]
    messengers = [
        o["destination_token_messenger"][k] for k in c["destination_token_messenger"][rows].tolist()
    ]
    return [
        {
            "id": ids[i],
            "amount": amount,
            "timestamp": ts,
            "isCompleted": done,
            "sourceDomain": str(src),
            "destinationDomain": str(dst),
            "mintRecipient": recipients[i],
            "messageSender": senders[i],
            "burnToken": tokens[i],
            "destinationCaller": callers[i],
            "detinationTokenMessenger": messengers[i],
        }
        for i, (amount, ts, done, src, dst) in enumerate(
            zip(
                ix.amount[rows].tolist(),
                (ts_ns // _NS).tolist(),
                completed,
                ix.src[rows].tolist(),
                ix.dst[rows].tolist(),
                strict=True,
            )
        )
    ]


def mint_groups(ix: LedgerIndex, rows: np.ndarray, clock: int) -> list[dict[str, Any]]:
    """The mint listing's page (interface 2.2): the mints of ``rows``, grouped by chain pair."""
    records = summaries(ix, rows, ix.mint_ns[rows], clock)
    groups: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for src, dst, record in zip(ix.src[rows].tolist(), ix.dst[rows].tolist(), records, strict=True):
        groups.setdefault((src, dst), []).append(record)
    return [
        {
            "sourceChain": chains.chain_id(src),
            "destinationChain": chains.chain_id(dst),
            "totalAmount": sum(r["amount"] for r in txs),
            "chain": chains.chain_id(dst),
            "transactions": txs,
        }
        for (src, dst), txs in sorted(groups.items())
    ]


def detail(ix: LedgerIndex, row: int, is_mint: bool, tx_hash: str, clock: int) -> dict[str, Any]:
    """The hash lookup's answer (interface 2.3) for one side of one row."""
    ts_ns = ix.mint_ns[row] if is_mint else ix.burn_ns[row]
    rows = np.array([row])
    record = summaries(ix, rows, np.array([ts_ns]), clock)[0]
    src, dst = int(ix.src[row]), int(ix.dst[row])
    seconds = int(ts_ns // _NS)
    record.update(
        {
            "_id": f"{seconds & 0xFFFFFFFF:08x}{int(is_mint):02x}{row:014x}",
            "transactionHash": tx_hash,
            "entityId": "mintTransactionsTable" if is_mint else "burnTransactionsTable",
            "blockNumber": int((ix.mint_block if is_mint else ix.burn_block)[row]),
            "chainId": chains.chain_id(dst if is_mint else src),
            "instanceId": INSTANCE_ID,
            "sourceChain": chains.chain_id(src),
            "destinationChain": chains.chain_id(dst),
        }
    )
    return {"transactionType": "mint" if is_mint else "burn", "transaction": record}


def received_items(
    ix: LedgerIndex, rows: np.ndarray, ts: np.ndarray, done: np.ndarray
) -> list[dict[str, Any]]:
    """The recipient listing's items (interface 2.4): a mint where ``done``, else the burn."""
    ids = ix.ids.take(pa.array(rows, type=pa.int64())).to_pylist()
    items = []
    for i, (row, t, is_mint) in enumerate(
        zip(rows.tolist(), ts.tolist(), done.tolist(), strict=True)
    ):
        items.append(
            {
                "id": ids[i],
                "amount": int(ix.amount[row]),
                "timestamp": t // _NS,
                "sourceChain": chains.chain_id(int(ix.src[row])),
                "destinationChain": chains.chain_id(int(ix.dst[row])),
                "transactionType": "mint" if is_mint else "burn",
                "transactionHash": ix.hash_text(row, is_mint),
            }
        )
    return items
