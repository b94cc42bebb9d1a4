"""Solana's CCTP transactions: ``getTransaction`` replies read once, decoded as EVM events.

One reader of replies (:mod:`~cctx_research.ingest.solana.replies`, the walk
over instructions in :mod:`~cctx_research.ingest.solana.walk`) serves every
entry point: :func:`decode` a file, :func:`decode_json` JSON text in memory
(read straight into typed replies by :mod:`~cctx_research.ingest.solana.text`),
:func:`decode_replies` the dicts an RPC client holds. Circle's programs and
their event layouts are in :mod:`~cctx_research.ingest.solana.layouts`.
"""

from __future__ import annotations

from .decoder import DOMAIN, decode, decode_json, decode_replies, read

__all__ = ["DOMAIN", "decode", "decode_json", "decode_replies", "read"]
