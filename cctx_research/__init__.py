"""cctx_research: research toolkit for Circle CCTP cross-chain USDC transfers."""

from __future__ import annotations

from . import chains, errors, schema
from ._version import __version__

__all__ = ["__version__", "chains", "errors", "schema"]
