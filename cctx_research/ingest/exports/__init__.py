"""Tables others export, and the toolkit's own: one reader module per source.

:mod:`~cctx_research.ingest.exports.dune` (Dune's CCTP tables),
:mod:`~cctx_research.ingest.exports.xchaindatagen` (XChainDataGen's
PostgreSQL tables) and :mod:`~cctx_research.ingest.exports.own` (the
toolkit's own ledger and transfers frames). Each reads one file into a
:class:`~cctx_research.ingest.formats.FileRead`.
"""

from __future__ import annotations

__all__: list[str] = []
