"""The network floor: one request with retries, the wire under it, pacing, the reply cache.

Every part of the toolkit that talks HTTP does it here: the analytics
client (:mod:`cctx_research.client`), JSON-RPC sync
(:mod:`cctx_research.nodes`) and Circle's attestation API
(:mod:`cctx_research.iris`). This package knows no API and no data
format: each of those brings its own addresses, reply reader and cache
filter.
"""

from __future__ import annotations
