"""cctx_research: research toolkit for Circle CCTP cross-chain USDC transfers.

>>> import cctx_research as cctx
>>> client = cctx.connect()                     # doctest: +SKIP
>>> transfers = client.mints("2026-11-01", "2026-11-02")  # doctest: +SKIP
>>> ledger = cctx.load_sample(days=7)           # doctest: +SKIP
"""

from __future__ import annotations

from . import chains, errors, provenance, schema
from ._version import __version__
from .client import Client, connect
from .errors import CctxError
from .service.sample import load_sample

__all__ = [
    "CctxError",
    "Client",
    "__version__",
    "chains",
    "connect",
    "errors",
    "load_sample",
    "provenance",
    "schema",
]
