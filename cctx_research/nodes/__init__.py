"""Sync CCTP from JSON-RPC nodes into a local dataset, and keep it current.

>>> import cctx_research as cctx                                     # doctest: +SKIP
>>> cctx.sync("cctp/", {"base": BASE_RPC, "arbitrum": ARB_RPC},      # doctest: +SKIP
...           start="2026-11-01")
>>> cctx.sync_status("cctp/")                                         # doctest: +SKIP

The first run of a chain needs ``start`` (a block number or a date: a date
becomes the first block at or after it, found by binary search on block
times). Later runs fetch only the blocks after the chain's checkpoint, plus
the last ``confirmations`` blocks again (a reorg there is replaced). The
dataset's layout and its crash rules are in ``docs/datasets.md`` (and
:mod:`cctx_research.nodes.store`); how a chain is fetched, in
:mod:`cctx_research.nodes.engine`; the run itself (a :class:`SyncOptions`
record, a step per kind of chain, the ledger), in :mod:`cctx_research.nodes.sync`.

Solana (``{"solana": SOL_RPC}``) is synced from its CCTP programs'
signatures and transactions instead of logs, in slots, finalized only (see
:mod:`cctx_research.nodes.solana`); its legs link with their EVM sides in
the same ledger.

After the chains, the ledger of all of them is built with
:func:`cctx_research.ingest.load` (one linking across every chain, so a
Base -> Arbitrum transfer synced on both sides is one row) and written to
``ledger.parquet``; ``cctx.load("cctp/")`` and ``cctx-research report
--data cctp/`` read it.

A node's URL may hold its key: it is never printed, logged or stored; the
node is named by its host.
"""

from __future__ import annotations

from .engine import DEFAULT_CONFIRMATIONS, ChainSync
from .sync import SyncOptions, SyncResult, status, sync

__all__ = ["DEFAULT_CONFIRMATIONS", "ChainSync", "SyncOptions", "SyncResult", "status", "sync"]
