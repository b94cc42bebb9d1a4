"""Builder of small canonical ledger frames for the latency, pending and V2 tests.

``make_ledger`` turns a few hand-written rows into a valid ledger, so the
expected numbers can be worked out by hand.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from cctx_research import chains, schema

_V2_KEYS = {
    "version": "cctp_version",
    "threshold": "min_finality_threshold",
    "executed": "finality_threshold_executed",
    "max_fee": "max_fee_raw",
    "fee": "fee_raw",
    "hook": "hook_data",
}


def make_ledger(rows: Iterable[Mapping[str, Any]], *, v2_columns: bool = True) -> pd.DataFrame:
    """A canonical ledger from rows of (at least) ``src``, ``dst``, ``amount``, ``burn``.

    Row keys: ``src`` / ``dst`` (chain name or domain id), ``amount`` (USDC),
    ``burn`` (UTC time string), ``mint`` (time string, or None/absent for
    pending), and the V2 fields ``version``, ``threshold``, ``executed``,
    ``max_fee`` and ``fee`` (base units), ``hook`` (hex string). With
    ``v2_columns=False`` the V2 columns are left out entirely.
    """
    rows = list(rows)
    n = len(rows)
    src = [chains.domain(r["src"]) for r in rows]
    dst = [chains.domain(r["dst"]) for r in rows]
    mint = [r.get("mint") for r in rows]
    data: dict[str, Any] = {
        "transfer_id": [r.get("id", f"t{i}") for i, r in enumerate(rows)],
        "source_domain": src,
        "destination_domain": dst,
        "amount_raw": [round(r["amount"] * 10**6) for r in rows],
        "burn_timestamp": pd.to_datetime([r["burn"] for r in rows], utc=True, format="ISO8601"),
        "mint_timestamp": pd.to_datetime(mint, utc=True, format="ISO8601"),
        "burn_tx_hash": ["0x" + f"{i + 1:064x}" for i in range(n)],
        "mint_tx_hash": [
            None if m is None else "0x" + f"{i + 1:063x}f" for i, m in enumerate(mint)
        ],
        "burn_block": [100 + i for i in range(n)],
        "mint_block": [-1 if m is None else 200 + i for i, m in enumerate(mint)],
        "message_sender": ["0x" + f"{2:040x}"] * n,
        "mint_recipient": ["0x" + f"{1:040x}"] * n,
        "burn_token": ["0x" + f"{0xA0B8:040x}"] * n,
        "destination_caller": ["0x" + "0" * 40] * n,
        "destination_token_messenger": ["0x" + f"{0xBD3F:040x}"] * n,
    }
    if v2_columns:
        for key, column in _V2_KEYS.items():
            data[column] = [r.get(key) for r in rows]
    frame = pd.DataFrame(data)
    types = schema.dtypes("ledger")
    frame = frame.astype({c: t for c, t in types.items() if c in frame.columns})
    if v2_columns:
        schema.complete(frame, "ledger")
        frame = frame[schema.columns("ledger")]
    return frame


def v2(threshold: int, **extra: Any) -> dict[str, Any]:
    """V2 fields of a row: fast (1000) or standard (2000), and any extra ones."""
    return {"version": 2, "threshold": threshold, **extra}
