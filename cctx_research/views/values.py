"""How one value reads in a view: chains by their labels, routes, durations, unlabelled actors.

One vocabulary for every table and card of the report, the widgets and the
app: a chain is its label (``"OP Mainnet"``; the slug ``optimism`` is for
code and the command line), a route is ``"Ethereum → Base"``, a number of
seconds is a duration (``"15 min 25 s"``), and an address no label names is
``"unlabelled"``. :func:`cctx_research.views.markup.html_table` applies them
by column name (:data:`CHAIN_COLUMNS`, :data:`ROUTE_COLUMNS`, a ``*_s``
column, a ``*_label`` column), so a frame keeps its snake_case values.

Examples
--------
>>> chain_text("optimism"), route_text("ethereum->base"), duration(925)
('OP Mainnet', 'Ethereum → Base', '15 min 25 s')
>>> chain_text("domain-42"), route_text("not a route")
('domain 42', 'not a route')
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import chains

__all__ = [
    "CHAIN_COLUMNS",
    "ROUTE_COLUMNS",
    "UNLABELLED",
    "chain_text",
    "duration",
    "is_duration",
    "route_text",
]

CHAIN_COLUMNS: frozenset[str] = frozenset({"source_chain", "destination_chain", "chain"})
"""Columns whose values are chain names: shown as the chain's label."""

ROUTE_COLUMNS: frozenset[str] = frozenset({"corridor", "route"})
"""Columns whose values are routes (``"ethereum->base"``): shown as ``"Ethereum → Base"``."""

UNLABELLED = "unlabelled"
"""The one marker of an address no label names, in every table and card."""


def chain_text(name: Any) -> str:
    """The label of a chain name, alias or domain (``"OP Mainnet"``); other text as it is."""
    text = str(name)
    if text.startswith("domain-") and text[7:].isdigit():
        return f"domain {text[7:]}"
    try:
        return chains.chain_label(text)
    except (TypeError, ValueError):
        return text


def route_text(route: Any) -> str:
    """``"ethereum->base"`` as ``"Ethereum → Base"``; anything else as it is."""
    source, arrow, destination = str(route).partition("->")
    if not arrow or not source or not destination:
        return str(route)
    return f"{chain_text(source)} → {chain_text(destination)}"


def is_duration(column: Any) -> bool:
    """Whether a column holds seconds to show as durations: its name ends in ``_s``."""
    return str(column).endswith("_s") and len(str(column)) > 2


def duration(seconds: Any) -> str:
    """Seconds for reading: ``"45 s"``, ``"12 min 30 s"``, ``"3 h 05 min"``, ``"2 d 4 h"``.

    Examples
    --------
    >>> duration(8.24), duration(750), duration(11100), duration(187200), duration(float("nan"))
    ('8.2 s', '12 min 30 s', '3 h 05 min', '2 d 4 h', '-')
    >>> duration(59.7), duration(3599.9), duration(86399), duration(None)
    ('1 min 00 s', '1 h 00 min', '1 d 0 h', '-')
    """
    try:
        s = float(seconds)
    except (TypeError, ValueError):
        return "-"
    if not np.isfinite(s):
        return "-"
    if s < 59.5:
        return f"{s:.1f} s" if s < 9.95 else f"{s:.0f} s"
    if s < 3570:
        minutes, rest = divmod(round(s), 60)
        return f"{minutes} min {rest:02d} s"
    if s < 86_100:
        hours, rest = divmod(round(s / 60), 60)
        return f"{hours} h {rest:02d} min"
    days, hours = divmod(round(s / 3600), 24)
    return f"{days} d {hours} h"
