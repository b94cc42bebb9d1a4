"""The summary ``import`` prints: what it read, decoded, paired and skipped, and why.

The ledger itself is written by :func:`cctx_research.storage.write_atomically`.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pandas as pd

from ..provenance import Provenance, provenance

__all__ = ["summary"]

logger = logging.getLogger(__name__)

_WHY = {
    "skipped_other_events": "logs of other events",
    "skipped_unknown_emitter": "events no CCTP contract of their chain emitted",
    "skipped_other_bridges": "rows of other bridges",
    "removed": "removed (reorged) logs",
    "skipped_generic_messages": "messages that are not token transfers (another app's)",
    "skipped_mints_without_message": "mints without their MessageReceived (source unknown)",
}

_LINKS = {
    "exact": "V1, on the nonce",
    "attested": "V2, on the attested nonce",
    "content": "V2, on the fields both sides carry",
    "content_ambiguous": "V2, among identical transfers: latency uncertain",
    "source": "paired by the source",
}


def summary(ledger: Any, out: Path, *, bad_file: bool = False,
            record: Provenance | None = None) -> str:  # fmt: skip
    """What an import read, decoded, paired and skipped, and why: a few lines of text.

    ``ledger`` is the DataFrame, or an engine's lazy frame with its ``record`` (the
    dataset's provenance, which a lazy frame cannot carry)."""
    record = record if record is not None else provenance(ledger)
    c = record.count if record is not None else {}
    n = len(ledger) if isinstance(ledger, pd.DataFrame) else c.get("transfers", 0)
    lines = [
        f"wrote {n:,} transfers to {out} (format: {record.format if record else '?'})",
        f"  rows read      {c.get('rows_read', 0):>10,}",
        f"  decoded        {c.get('decoded', 0):>10,}"
        + (f"  ({c['merged']:,} merged into another event's side)" if c.get("merged") else ""),
        f"  linked         {c.get('paired', 0):>10,}",
    ]
    lines += [f"    {n:>10,}  {why}" for key, why in _LINKS.items() if (n := c.get(key, 0))]
    lines += [
        f"  pending        {c.get('pending', 0):>10,}  (burns without a mint in the data)",
        f"  unpaired       {c.get('unpaired', 0):>10,}  (identical V2 transfers kept apart)",
        f"  mint only      {c.get('mint_only', 0):>10,}  (mints whose burn is not in the data)",
        f"  skipped        {c.get('skipped', 0):>10,}",
    ]
    lines += [f"    {n:>10,}  {why}" for key, why in _WHY.items() if (n := c.get(key, 0))]
    lines.append(f"  duplicates     {c.get('duplicates', 0):>10,}  (counted once)")
    bad = c.get("bad", 0)
    lines.append(
        f"  bad            {bad:>10,}"
        + (f"  (listed in {out.name}.bad.csv)" if bad_file and bad else "")
    )
    if c.get("sender_unverified"):
        lines.append(
            f"  unverified     {c['sender_unverified']:>10,}  (messages from a domain whose "
            "TokenMessenger the registry does not list)"
        )
    if c.get("missing_times"):
        lines.append(
            f"  missing times  {c['missing_times']:>10,}  (give --blocks, or logs with "
            "blockTimestamp)"
        )
    return "\n".join(lines)
