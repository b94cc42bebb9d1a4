"""EVM event logs: CCTP's events and messages, read from the files nodes and cryo write.

:func:`read_logs` reads a file of logs (``eth_getLogs``, receipts, cryo)
into the log frame (:mod:`~cctx_research.ingest.evm.frame`),
:func:`read_blocks` a file of block times, and :func:`decode_logs` decodes
the CCTP events in a log frame (:mod:`~cctx_research.ingest.evm.decoder`),
vectorised. The facts it decodes by are in
:mod:`~cctx_research.ingest.evm.events` (event signatures, contracts) and
:mod:`~cctx_research.ingest.evm.messages` (the message a burn sends, also
read from Solana's accounts, Dune's exports and Circle's Iris).
"""

from __future__ import annotations

from .decoder import DecodedLogs, decode_logs
from .logs import read_blocks, read_logs

__all__ = ["DecodedLogs", "decode_logs", "read_blocks", "read_logs"]
