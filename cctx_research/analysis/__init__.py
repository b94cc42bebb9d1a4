"""Pure analysis functions on canonical frames (no IO, no plotting).

Modules
-------
flows
    Chain-to-chain flows: :func:`~flows.graph`, :func:`~flows.matrix`,
    :func:`~flows.net`, :func:`~flows.corridors`, :func:`~flows.centrality`.
volumes
    Volumes over time and their shape: :func:`~volumes.timeseries`,
    :func:`~volumes.size_buckets`, :func:`~volumes.seasonality`,
    :func:`~volumes.kpis`, :func:`~volumes.in_flight`; each counts
    transfers, or with ``dedupe=`` end-user movements once (:mod:`~.once`).
addresses
    Address-level views: :func:`~addresses.top`,
    :func:`~addresses.concentration`, :func:`~addresses.profile`,
    :func:`~addresses.counterparty_graph`, :func:`~addresses.hubs`.
latency
    Burn-to-mint latency of a ledger: :func:`~latency.by_route`,
    :func:`~latency.timeseries`.
pending
    Pending transfers of a ledger: :func:`~pending.stuck`,
    :func:`~pending.in_flight`, :func:`~pending.timeseries` (pending apart
    from never minted, over time).
linking
    How well a ledger's burns are linked to their mints:
    :func:`~linking.quality`.
v2
    CCTP V2 per route: :func:`~v2.fast_share`, :func:`~v2.fees`,
    :func:`~v2.fee_caps`, :func:`~v2.hooks`.
history
    A ledger's mint and burn volume per bucket,
    :func:`~history.volume_history` (what ``client.volume_history`` returns).
actors
    Who moves the money: :func:`~actors.relayers`,
    :func:`~actors.integrators`, :func:`~actors.hhi`,
    :func:`~actors.end_user` (who signed the burn, else the depositor).
movements
    Rebalancing and volume counted once per movement:
    :func:`~movements.rebalancing`, :func:`~movements.rebalancing_share`,
    :func:`~movements.continuations`, :func:`~movements.dedupe`.
hooks
    CCTP V2 hook data decoded: :func:`~hooks.decode`, :func:`~hooks.classify`.
results
    What a result says about itself: :class:`~results.ResultInfo` (the
    ``span`` of the data seen, ``freq``, ``by``, ``as_of``, ...), read with
    :func:`~results.result_info`.
inputs
    Which kind of frame was given: :func:`~inputs.is_transfers`,
    :func:`~inputs.is_ledger`, and the error for data without burn times.

``flows``, ``volumes`` and ``addresses`` take a ``"transfers"`` frame (the
interface's mints); ``latency``, ``pending``, ``v2``, ``actors`` and
``movements`` need a ``"ledger"`` frame, which has both sides of each
transfer (``cctx_research.load(...)``, ``cctx_research.load_sample()``,
``report --data``).

Examples
--------
>>> from cctx_research.analysis import flows, volumes, addresses
>>> g = flows.graph(transfers)  # doctest: +SKIP
"""

from __future__ import annotations

from . import (
    actors,
    addresses,
    flows,
    history,
    hooks,
    inputs,
    latency,
    linking,
    movements,
    pending,
    results,
    v2,
    volumes,
)
from .addresses import AddressProfile, Concentration
from .results import ResultInfo, result_info
from .volumes import SizeDistribution

__all__ = [
    "AddressProfile",
    "Concentration",
    "ResultInfo",
    "SizeDistribution",
    "actors",
    "addresses",
    "flows",
    "history",
    "hooks",
    "inputs",
    "latency",
    "linking",
    "movements",
    "pending",
    "result_info",
    "results",
    "v2",
    "volumes",
]
