"""Circle's attestation API (Iris): what the chains alone cannot say.

Iris knows, for a burn, its messages as Circle attests them: the V2 nonce
before the mint, whether the attestation is pending and why
(``delay_reason``), and Circle's Fast Transfer fee schedule and allowance
now (Iris keeps no history of them).

>>> from cctx_research import iris
>>> client = iris.IrisClient()                                  # doctest: +SKIP
>>> client.messages("base", "0x2629...")                        # doctest: +SKIP
>>> client.fees("ethereum", "base"), client.fast_allowance()    # doctest: +SKIP

Modules: :mod:`.client` (the :class:`IrisClient`: requests, rate, cache),
:mod:`.options` (its options, one record: :class:`IrisOptions`) and
:mod:`.frames` (replies -> typed frames, the reply checks). The client
stands on the toolkit's network floor, :mod:`cctx_research.net` (sender,
transport seam, pacing, reply cache); it never imports
:mod:`cctx_research.client` or :mod:`cctx_research.service`.
"""

from __future__ import annotations

from .client import MAINNET_URL, SANDBOX_URL, IrisClient
from .frames import (
    ALLOWANCE_COLUMNS,
    DELAY_REASONS,
    FEE_COLUMNS,
    MESSAGE_COLUMNS,
    STATUSES,
)
from .options import DEFAULT_RATE, IrisOptions

__all__ = [
    "ALLOWANCE_COLUMNS",
    "DEFAULT_RATE",
    "DELAY_REASONS",
    "FEE_COLUMNS",
    "MAINNET_URL",
    "MESSAGE_COLUMNS",
    "SANDBOX_URL",
    "STATUSES",
    "IrisClient",
    "IrisOptions",
]
