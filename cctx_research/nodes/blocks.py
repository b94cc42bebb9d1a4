"""Block times from a node: batched headers, and the block of a date.

Examples
--------
>>> as_block("0x1f")
31
>>> as_block("twelve")
Traceback (most recent call last):
ValueError: a block must be a number (or a 0x hex quantity), got 'twelve'
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

import pandas as pd

from ..net import RequestStats
from .rpc import Rpc

__all__ = ["BATCH", "as_block", "block_at", "times"]

BATCH = 100
"""Headers asked in one JSON-RPC batch."""


def as_block(value: Any) -> int:
    """A block number from an int, a decimal string or a ``0x`` hex quantity."""
    if isinstance(value, bool):
        raise ValueError(f"a block must be a number, got {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"a block number cannot be negative, got {value}")
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        try:
            return int(text, 16) if text.startswith("0x") else int(text)
        except ValueError:
            pass
    raise ValueError(f"a block must be a number (or a 0x hex quantity), got {value!r}")


def _header(rpc: Rpc, number: int, stats: RequestStats | None) -> dict[str, Any]:
    header = rpc.call("eth_getBlockByNumber", [hex(number), False], stats=stats)
    if not isinstance(header, dict):
        raise ValueError(f"{rpc.host} has no block {number} (yet)")
    return header


def times(
    rpc: Rpc,
    numbers: Iterable[int],
    *,
    stats: RequestStats | None = None,
    cancel: threading.Event | None = None,
) -> dict[int, int]:
    """Unix seconds of each block, asked in batches of :data:`BATCH` headers."""
    wanted = sorted(set(numbers))
    out: dict[int, int] = {}
    for i in range(0, len(wanted), BATCH):
        chunk = wanted[i : i + BATCH]
        headers = rpc.batch(
            [("eth_getBlockByNumber", [hex(n), False]) for n in chunk], stats=stats, cancel=cancel
        )
        for number, header in zip(chunk, headers, strict=True):
            if not isinstance(header, dict) or "timestamp" not in header:
                raise ValueError(f"{rpc.host} gave no header for block {number}")
            out[number] = int(header["timestamp"], 16)
    return out


def block_at(rpc: Rpc, when: pd.Timestamp, head: int, *, stats: RequestStats | None = None) -> int:
    """The first block at or after ``when`` (binary search on block times; ``head + 1`` if none)."""
    target = int(when.value // 1_000_000_000)
    lo, hi = 0, head + 1  # invariant: time(lo - 1) < target <= time(hi)
    while lo < hi:
        mid = (lo + hi) // 2
        if int(_header(rpc, mid, stats)["timestamp"], 16) < target:
            lo = mid + 1
        else:
            hi = mid
    return lo
