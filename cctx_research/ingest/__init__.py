"""Reading CCTP data held in other shapes: event logs, Dune and XChainDataGen exports.

:func:`load` reads any of the formats in :data:`FORMATS` (detected from
each file's columns or content) and returns one ``ledger`` frame, burns
paired with their mints where the data determines the pair
(:mod:`~cctx_research.ingest.ledger.linking`); :func:`bad_rows` lists what
``errors="report"`` left out; :func:`transfers_from_ledger` turns a ledger
into the ``transfers`` frame the analysis functions take;
:func:`ledger_from_frame` types an in-memory ledger or transfers frame.
"""

from __future__ import annotations

from .exports.own import ledger_from_frame
from .formats import FORMATS
from .loader import bad_rows, load
from .transfers import transfers_from_ledger

__all__ = ["FORMATS", "bad_rows", "ledger_from_frame", "load", "transfers_from_ledger"]
