"""Builders of canonical transfers frames for the analysis and plot tests.

``make_transfers`` turns a few hand-written rows into a valid canonical
frame, so expected numbers can be worked out by hand; ``random_transfers``
is a larger frame for cross-checking against plain pandas.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from cctx_research import chains, schema


def addr(n: int) -> str:
    """A distinct, valid 20-byte address for small integers."""
    return "0x" + f"{n:040x}"


def make_transfers(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """A canonical transfers frame from rows of (at least) time, src, dst, amount.

    Row keys: ``time`` (str, UTC), ``src`` / ``dst`` (chain name or domain id),
    ``amount`` (USDC), optional ``sender`` / ``recipient`` (int or str),
    ``completed``.
    """
    rows = list(rows)
    n = len(rows)

    def dom(v: Any) -> int:
        return chains.domain(v)

    def address(v: Any) -> str:
        return addr(v) if isinstance(v, int) else v

    src = [dom(r["src"]) for r in rows]
    dst = [dom(r["dst"]) for r in rows]
    amount_raw = [round(r["amount"] * 10**6) for r in rows]
    frame = pd.DataFrame(
        {
            "transfer_id": pd.array([f"t{i}" for i in range(n)], dtype=schema.STRING),
            "timestamp": pd.to_datetime([r["time"] for r in rows], utc=True).astype(
                schema.TIMESTAMP
            ),
            "amount": np.array([a / 10**6 for a in amount_raw], dtype="float64"),
            "amount_raw": np.array(amount_raw, dtype="int64"),
            "is_completed": np.array([r.get("completed", True) for r in rows], dtype=bool),
            "source_domain": np.array(src, dtype="int64"),
            "destination_domain": np.array(dst, dtype="int64"),
            "source_chain": schema.chain_categorical([chains.chain_name(d) for d in src]),
            "destination_chain": schema.chain_categorical([chains.chain_name(d) for d in dst]),
            "mint_recipient": pd.array(
                [address(r.get("recipient", 1)) for r in rows], dtype=schema.STRING
            ),
            "message_sender": pd.array(
                [address(r.get("sender", 2)) for r in rows], dtype=schema.STRING
            ),
            "burn_token": pd.array([addr(0xA0B8)] * n, dtype=schema.STRING),
            "destination_caller": pd.array(["0x" + "0" * 40] * n, dtype=schema.STRING),
            "destination_token_messenger": pd.array([addr(0xBD3F)] * n, dtype=schema.STRING),
        }
    )
    return schema.validate(frame, "transfers", extra=False)


def random_transfers(n: int, *, seed: int = 7, days: int = 30) -> pd.DataFrame:
    """A random canonical frame with ``n`` rows, including an unknown domain 42."""
    rng = np.random.default_rng(seed)
    domains = np.array([0, 1, 2, 3, 6, 7, 42])
    src = rng.choice(domains, n, p=[0.3, 0.1, 0.1, 0.2, 0.2, 0.08, 0.02])
    dst = rng.choice(domains, n, p=[0.25, 0.1, 0.15, 0.2, 0.2, 0.08, 0.02])
    amount_raw = np.round(rng.lognormal(mean=6, sigma=2.5, size=n) * 10**6).astype("int64") + 1
    start = pd.Timestamp("2024-06-01", tz="UTC").value
    stamps = start + rng.integers(0, days * 86_400, n) * 1_000_000_000
    n_recipients = max(n // 5, 1)
    recipients = np.array([addr(i) for i in range(1, n_recipients + 1)], dtype=object)
    senders = np.array([addr(10**6 + i) for i in range(1, 51)], dtype=object)
    frame = pd.DataFrame(
        {
            "transfer_id": pd.array([f"r{i}" for i in range(n)], dtype=schema.STRING),
            "timestamp": pd.to_datetime(np.sort(stamps), utc=True).astype(schema.TIMESTAMP),
            "amount": amount_raw / 10**6,
            "amount_raw": amount_raw,
            "is_completed": np.ones(n, dtype=bool),
            "source_domain": src.astype("int64"),
            "destination_domain": dst.astype("int64"),
            "source_chain": schema.chain_categorical([chains.chain_name(int(d)) for d in src]),
            "destination_chain": schema.chain_categorical([chains.chain_name(int(d)) for d in dst]),
            "mint_recipient": pd.array(
                recipients[rng.zipf(1.5, n) % n_recipients], dtype=schema.STRING
            ),
            "message_sender": pd.array(senders[rng.integers(0, 50, n)], dtype=schema.STRING),
            "burn_token": pd.array([addr(0xA0B8)] * n, dtype=schema.STRING),
            "destination_caller": pd.array(["0x" + "0" * 40] * n, dtype=schema.STRING),
            "destination_token_messenger": pd.array([addr(0xBD3F)] * n, dtype=schema.STRING),
        }
    )
    return schema.validate(frame, "transfers", extra=False)


#: Hand-written rows; every expected number in the tests is worked out from these.
#: ethereum -> base 400 (2 transfers), base -> ethereum 50, arbitrum -> base 25,
#: ethereum -> arbitrum 0.5 (dust), domain-42 (unknown) -> ethereum 150,000 (whale).
_COLUMNS = ("time", "src", "dst", "amount", "sender", "recipient")
# fmt: off
SMALL_ROWS = [
    dict(zip(_COLUMNS, row, strict=True))
    for row in [
        ("2024-06-01T00:30:00Z", "ethereum", "base",     100.0,     10, 1),  # Sat
        ("2024-06-01T12:00:00Z", "ethereum", "base",     300.0,     10, 2),  # Sat
        ("2024-06-02T08:00:00Z", "base",     "ethereum", 50.0,      11, 1),  # Sun
        ("2024-06-03T23:59:59Z", "arbitrum", "base",     25.0,      10, 3),  # Mon
        ("2024-06-03T01:00:00Z", "ethereum", "arbitrum", 0.5,       12, 1),  # Mon
        ("2024-06-03T05:00:00Z", 42,         "ethereum", 150_000.0, 13, 4),  # Mon
    ]
]
# fmt: on
