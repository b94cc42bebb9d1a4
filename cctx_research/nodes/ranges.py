"""``eth_getLogs`` block ranges that adapt to what a node accepts.

Every provider caps ``eth_getLogs`` (a block range, a number of logs, a
reply size, a query time) and says so in its own words. :func:`too_large`
recognises the phrasings in use, each seen in the wild:

- Alchemy: "You can make eth_getLogs requests with up to a 500 block range.
  Based on your parameters, this block range should work: [0x123c9b2,
  0x123cba5]" (-32600; BobTheBuidler/dank_mids#772)
- Infura: "range 1000000 exceeds limit of 10000" (-32602), and "query
  returned more than 10000 results" (-32005; INFURA/infura#237)
- QuickNode: "eth_getLogs is limited to a 10,000 range" (-32614, HTTP 413;
  OffchainLabs/arbitrum-sdk#609)
- Tenderly: "range 9009594 is bigger than range limit 2000"
  (bobanetwork/boba_legacy#827)
- reth: "query exceeds max block range 5000" (-32602; paradigmxyz/reth#8558)
- Erigon: "query block range exceeds server limit, narrow your filter: 5."
  (erigontech/erigon#20424)
- cdk-erigon: "block range too large, max range: 1000" (-32005;
  0xPolygon/cdk-erigon#1706)
- geth forks: "block range is larger than max block range, block range =
  5120, max block range = 5000" (Morph; enviodev/hyperindex#605), "block
  range is bigger than maxBlockRange" (Scroll; scroll-tech/go-ethereum#529)
- Candle: "block range too high" (-32600; AlphaWallet/alpha-wallet-ios#5277)

:class:`Sizer` keeps the range one endpoint is asked: it starts wide, is
cut to the limit a message states (or to the range Alchemy suggests), is
halved on any other error for a range above one block, and doubles again
after a run of successes, never past the largest range that failed.

Examples
--------
>>> too_large("eth_getLogs is limited to a 10,000 range")
True
>>> stated_limit("range 1000000 exceeds limit of 10000")
10000
>>> stated_limit("this block range should work: [0x10, 0x1f]")
16
>>> s = Sizer(start=10_000)
>>> s.failed(10_000, "query returned more than 10000 results"); s.size
5000
"""

from __future__ import annotations

import re
import threading

__all__ = ["Sizer", "stated_limit", "too_large"]

_TOO_LARGE = re.compile(
    r"block range|range limit|exceeds limit|max(imum)? (block )?range|too (large|wide|high|big)"
    r"|is limited to|more than \d[\d,]* results|exceeds? max results|response size"
    r"|narrow your filter|should work|query timeout|too many (logs|results)|limit exceeded"
    r"|maxBlockRange",
    re.IGNORECASE,
)
_SUGGESTED = re.compile(r"should work:\s*\[\s*(0x[0-9a-f]+)\s*,\s*(0x[0-9a-f]+)\s*\]", re.I)
_LIMIT = re.compile(
    r"(?:limit(?:ed)? (?:of|to)(?: a)?|max(?:imum)?(?: block)? range(?: of)?[:=]?|up to a"
    r"|max block range =|narrow your filter:)\s*([\d,]+)",
    re.IGNORECASE,
)


def too_large(message: str) -> bool:
    """Whether a node's error says the ``eth_getLogs`` range or result was too large."""
    return bool(_TOO_LARGE.search(message or ""))


def stated_limit(message: str) -> int | None:
    """The number of blocks a node's error says it accepts, when it says one."""
    found = _SUGGESTED.search(message or "")
    if found:
        return int(found.group(2), 16) - int(found.group(1), 16) + 1
    found = _LIMIT.search(message or "")
    if found:
        value = int(found.group(1).replace(",", ""))
        return value if value > 0 else None
    return None


class Sizer:
    """The ``eth_getLogs`` range for one endpoint, adapted to its answers (thread-safe).

    Parameters
    ----------
    start : int
        Blocks to ask first (also the most ever asked).
    grow_after : int
        Successes in a row before the range doubles.
    """

    def __init__(self, start: int = 10_000, *, grow_after: int = 4, ceiling: int | None = None):
        if not isinstance(start, int) or start < 1:
            raise ValueError(f"start must be a positive number of blocks, got {start!r}")
        self.size = start
        self.ceiling = start if ceiling is None else ceiling
        self.grow_after = grow_after
        self._streak = 0
        self._lock = threading.Lock()

    def failed(self, asked: int, message: str) -> None:
        """A range of ``asked`` blocks was refused with ``message``."""
        with self._lock:
            self._streak = 0
            limit = stated_limit(message) if too_large(message) else None
            # a limit on results ("more than 10000 results") is not a block count
            if limit is not None and limit < asked and not re.search(r"results", message, re.I):
                self.ceiling = min(self.ceiling, limit)  # the node said it: never more
                blocks = limit
            else:
                self.ceiling = min(self.ceiling, max(1, asked - 1))
                blocks = asked // 2
            self.size = max(1, min(self.size, blocks))

    def succeeded(self, asked: int) -> None:
        """A range of ``asked`` blocks was answered."""
        with self._lock:
            if asked < self.size:
                return
            self._streak += 1
            if self._streak >= self.grow_after and self.size < self.ceiling:
                self.size = min(self.ceiling, self.size * 2)
                self._streak = 0
