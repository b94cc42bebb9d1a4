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

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:  # imported on first use: a submodule (datasets, lazy) costs no readers
    from .exports.own import ledger_from_frame
    from .formats import FORMATS
    from .loader import bad_rows, load
    from .transfers import transfers_from_ledger

_HOMES: dict[str, str] = {
    "FORMATS": "formats", "bad_rows": "loader", "ledger_from_frame": "exports.own",
    "load": "loader", "transfers_from_ledger": "transfers",
}  # fmt: skip
"""Each name's module: importing the package (or one of its submodules, such as
``ingest.datasets`` for a report on a ledger dataset) does not import every reader
(EVM, Solana, Dune, XChainDataGen) until a name is first asked for."""

__all__ = ["FORMATS", "bad_rows", "ledger_from_frame", "load", "transfers_from_ledger"]

__getattr__, __dir__ = exports(__name__, _HOMES, __all__)
