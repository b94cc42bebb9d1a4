"""What one sync run asks of every chain: :class:`SyncOptions`, checked once.

Its own module, so the run (:mod:`.sync`) and each kind of chain's step
(:mod:`.solana`, the EVM step in :mod:`.sync`) share the record without
importing each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from ..net import BaseTransport
from ..times import to_timestamp
from .rpc import Rpc

__all__ = ["SyncOptions"]


@dataclass(frozen=True)
class SyncOptions:
    """What one run asks of every chain: the blocks (or slots) and how to fetch them.

    Attributes
    ----------
    start, end : int, str or Timestamp, optional
        Blocks (Solana: slots) or dates; see :func:`cctx_research.nodes.sync`.
    confirmations : int or mapping, optional
        Blocks behind the head a reorg may still change (checked per chain,
        when its node has answered).
    max_workers : int
        Most requests in flight per chain.
    range_blocks : int
        Blocks asked at first in one ``eth_getLogs``.
    progress : bool
        A progress bar per chain.
    transport : BaseTransport, optional
        The wire for every node (tests).
    timeout, retries : float, int
        Seconds per request; retries of a transient failure.

    Raises
    ------
    ValueError
        If ``max_workers`` or ``range_blocks`` is not a positive whole number.
    """

    start: Any = None
    end: Any = None
    confirmations: int | Mapping[str, int] | None = None
    max_workers: int = 8
    range_blocks: int = 10_000
    progress: bool = True
    transport: BaseTransport | None = None
    timeout: float = 30.0
    retries: int = 5

    def __post_init__(self) -> None:
        for name in ("max_workers", "range_blocks"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive whole number, got {value!r}")
        _check_order(self.start, self.end)

    @classmethod
    def check_keywords(cls, caller: str, keywords: Mapping[str, Any]) -> None:
        """Refuse a keyword that is no option, in the words Python uses for a signature."""
        known = {f.name for f in fields(cls)}
        for name in keywords:
            if name not in known:
                raise TypeError(f"{caller}() got an unexpected keyword argument {name!r}")

    def mixed_bounds(self) -> bool:
        """Whether ``start`` and ``end`` are both given, one a block or slot, the other a date.

        Their order is then known only once a node has turned the date into a block.
        """
        a, b = _bound_kind(self.start), _bound_kind(self.end)
        return a is not None and b is not None and a[0] != b[0]

    def rpc(self, url: str) -> Rpc:
        """A JSON-RPC client of the node at ``url`` with this run's wire, timeout and retries."""
        return Rpc(url, transport=self.transport, timeout=self.timeout, retries=self.retries,
                   backoff=0.2)  # fmt: skip


def _bound_kind(value: Any) -> tuple[str, Any] | None:
    """``("number", n)`` for a block or slot, ``("time", t)`` for a date, None if neither."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return "number", value
    if isinstance(value, str):
        text = value.strip().lower()
        if text.isdigit():
            return "number", int(text)
        if text.startswith("0x"):
            try:
                return "number", int(text, 16)
            except ValueError:
                return None
    try:
        return "time", to_timestamp(value, name="start")
    except (TypeError, ValueError):
        return None  # each chain's step says what a bound must be


def _check_order(start: Any, end: Any) -> None:
    """Refuse a ``start`` after ``end`` when both are blocks/slots or both dates.

    Raises
    ------
    ValueError
        Naming both bounds and what to pass: a window that ends before it
        starts would sync nothing and say "0 transactions".
    """
    a, b = _bound_kind(start), _bound_kind(end)
    if a is None or b is None or a[0] != b[0]:
        return
    if a[0] == "number" and a[1] > b[1]:
        raise ValueError(
            f"start={start!r} is after end={end!r}: pass the earlier block (or slot) as "
            "start (--from) and the later as end (--to)"
        )
    if a[0] == "time" and a[1] >= b[1]:
        raise ValueError(
            f"start={start!r} is not before end={end!r} (a date end is exclusive): pass the "
            "earlier date as start (--from) and a later one as end (--to)"
        )
