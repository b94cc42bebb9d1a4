"""From events to the ledger: each event a side of a transfer, burns linked to their mints.

:mod:`~cctx_research.ingest.ledger.sides` makes burn and arrival sides of
decoded events; :mod:`~cctx_research.ingest.ledger.attested` gives V2 burns
the nonce Circle attested; :mod:`~cctx_research.ingest.ledger.linking`
joins burns to mints (its rules there; V2 content in
:mod:`~cctx_research.ingest.ledger.content`), with exact keys over many
columns from :mod:`~cctx_research.ingest.ledger.keys` and the ledger's rows
built by :mod:`~cctx_research.ingest.ledger.rows`. Checks of whether a
ledger's rows are plausible belong here too, beside the rows they check.
"""

from __future__ import annotations

__all__: list[str] = []
