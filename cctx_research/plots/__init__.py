"""Matplotlib plots of the analysis results, one module per analysis family.

Every ``plot_*`` function takes the data first (an analysis result, or a
canonical frame it computes that result from), options keyword-only, draws
on ``ax`` (a new figure when ``ax`` is None) and returns the
:class:`~matplotlib.axes.Axes`. None of them calls ``plt.show()``.
Axes are labelled with units (USDC); amounts and counts on axes and
colour bars are in one compact format (``12.3M``, ``950k``), never an
offset or an exponent (``1e6``); legends sit beside the axes, never over
the data; titles carry the span of the data (override with ``title=``).
Empty data gives an empty axes with a "no data" note, never an error.
Chains are labelled with
:func:`cctx_research.chains.chain_label` (``"Arbitrum One"``).

Modules
-------
flows
    :func:`plot_flow_graph`, :func:`plot_flow_matrix`, :func:`plot_net_flows`
    (:mod:`cctx_research.analysis.flows`).
volumes
    :func:`plot_volume`, :func:`plot_size_distribution`,
    :func:`plot_seasonality`, :func:`plot_in_flight`
    (:mod:`cctx_research.analysis.volumes`).
addresses
    :func:`plot_lorenz`, :func:`plot_address_activity`
    (:mod:`cctx_research.analysis.addresses`).
ledger
    :func:`plot_latency`, :func:`plot_stuck`, :func:`plot_fast_share`
    (and who moves the money: :func:`plot_relayer_shares`)
    (:mod:`cctx_research.analysis.latency`, ``pending``, ``v2``; they need a
    ``"ledger"`` frame).

Every ``plot_*`` function is also importable from this package.

Examples
--------
>>> from cctx_research import plots
>>> ax = plots.plot_flow_matrix(transfers)  # doctest: +SKIP
>>> ax.figure.savefig("matrix.png")  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:  # imported on first use: importing this package costs no matplotlib
    from .actors import plot_relayer_shares
    from .addresses import plot_address_activity, plot_lorenz
    from .flows import plot_flow_graph, plot_flow_matrix, plot_net_flows
    from .ledger import plot_fast_share, plot_latency, plot_stuck
    from .volumes import plot_in_flight, plot_seasonality, plot_size_distribution, plot_volume

_HOMES: dict[str, str] = {
    "plot_relayer_shares": "actors",
    "plot_address_activity": "addresses", "plot_lorenz": "addresses",
    "plot_flow_graph": "flows", "plot_flow_matrix": "flows", "plot_net_flows": "flows",
    "plot_fast_share": "ledger", "plot_latency": "ledger", "plot_stuck": "ledger",
    "plot_in_flight": "volumes", "plot_seasonality": "volumes",
    "plot_size_distribution": "volumes", "plot_volume": "volumes",
}  # fmt: skip
"""Each ``plot_*`` function's module: the package imports it (and matplotlib) when the
function is first asked for, so a page or a command that has not drawn yet has not paid
for matplotlib."""

__all__ = [
    "plot_address_activity",
    "plot_fast_share",
    "plot_flow_graph",
    "plot_flow_matrix",
    "plot_in_flight",
    "plot_latency",
    "plot_lorenz",
    "plot_net_flows",
    "plot_relayer_shares",
    "plot_seasonality",
    "plot_size_distribution",
    "plot_stuck",
    "plot_volume",
]


__getattr__, __dir__ = exports(__name__, _HOMES, __all__)
