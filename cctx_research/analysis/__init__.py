"""Pure analysis functions on canonical frames (no IO, no plotting).

Modules
-------
flows
    Chain-to-chain flows: :func:`~flows.graph`, :func:`~flows.matrix`,
    :func:`~flows.net`, :func:`~flows.corridors`, :func:`~flows.centrality`.
volumes
    Volumes over time and their shape: :func:`~volumes.timeseries`,
    :func:`~volumes.size_buckets`, :func:`~volumes.seasonality`,
    :func:`~volumes.kpis`, :func:`~volumes.in_flight`.
addresses
    Address-level views: :func:`~addresses.top`,
    :func:`~addresses.concentration`, :func:`~addresses.profile`,
    :func:`~addresses.counterparty_graph`, :func:`~addresses.hubs`.

Examples
--------
>>> from cctx_research.analysis import flows, volumes, addresses
>>> g = flows.graph(transfers)  # doctest: +SKIP
"""

from __future__ import annotations

from . import addresses, flows, volumes
from .addresses import AddressProfile, Concentration
from .volumes import SizeDistribution

__all__ = ["AddressProfile", "Concentration", "SizeDistribution", "addresses", "flows", "volumes"]
