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

    @classmethod
    def check_keywords(cls, caller: str, keywords: Mapping[str, Any]) -> None:
        """Refuse a keyword that is no option, in the words Python uses for a signature."""
        known = {f.name for f in fields(cls)}
        for name in keywords:
            if name not in known:
                raise TypeError(f"{caller}() got an unexpected keyword argument {name!r}")

    def rpc(self, url: str) -> Rpc:
        """A JSON-RPC client of the node at ``url`` with this run's wire, timeout and retries."""
        return Rpc(url, transport=self.transport, timeout=self.timeout, retries=self.retries,
                   backoff=0.2)  # fmt: skip
