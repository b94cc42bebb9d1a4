"""Solana's CCTP transactions: ``getTransaction`` replies decoded as the EVM decoder's events.

:func:`decode` reads a file of replies, :func:`decode_json` JSON text in
memory, :func:`decode_replies` the dicts an RPC client holds; :func:`read`
is the reader of ``load(format="solana")``. Replies are read by
:mod:`~cctx_research.ingest.solana.replies` (from JSON text by
:mod:`~cctx_research.ingest.solana.text`); Circle's programs and their
event layouts are in :mod:`~cctx_research.ingest.solana.layouts`.
"""

from __future__ import annotations

from .decoder import DOMAIN, decode, decode_json, decode_replies, read

__all__ = ["DOMAIN", "decode", "decode_json", "decode_replies", "read"]
