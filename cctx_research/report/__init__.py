"""Self-contained HTML reports of CCTP activity.

:func:`build` gets one window's frames (through a client, or as frames
the caller holds: the mints, the volume history, a ledger), runs the
analysis and draws the figures; the :class:`Report` it returns renders to a single HTML
file with every figure embedded as a base64 PNG, a small inline stylesheet
and no script or external asset, so it opens anywhere without a network.
Addresses link to their chain's block explorer (plain links: nothing is
loaded from them).

Sections
--------
One registry (:data:`REGISTRY`, ``(id, title)`` pairs in :data:`SECTIONS`)
lists the sections in order, each with its builder and a predicate saying
whether the data supports it; a section the data cannot feed shows a
one-line note instead. Their ``id`` in the HTML in brackets:

1. headline KPIs (``kpis``): the window's totals and the 24 h / 7 d / 30 d
   numbers against the period before;
2. flows (``flows``): the corridor graph, the flow matrix and the top corridors;
3. net flows (``net-flows``) per chain;
4. volume over time (``volume``): per source chain, mint against burn
   volume, and USDC in flight (burned, not yet minted);
5. ticket sizes (``sizes``);
6. seasonality (``seasonality``): hour of day x day of week, UTC;
7. top addresses and concentration (``addresses``);
8. with a ledger: latency (``latency``), pending and never minted
   (``pending``), V2 fast transfers and fees (``v2``), how burns were
   linked to mints (``links``), and who moves the money (``actors``:
   relayers, depositors and integrators with their labels, rebalancing, the
   volume counted once per movement);
9. provenance (``provenance``): source, window, generation time, library
   version, requests and cache hits, and a banner when the data is the
   synthetic sample.

Window
------
``start`` / ``end`` follow the client's convention (half-open ``[start,
end)``, naive times mean UTC). The default is the last 30 days up to now
(``end`` = now floored to the minute), which on the embedded default is the
whole synthetic sample. Without a client (a report on one's own ledger) the
window is the data's span, to the minute, and pending transfers are aged at
its last event, which the page states.

Chains
------
``chains=`` keeps the transfers that *touch* one of the chains (as source or
destination). The mint and burn volume of the volume section comes from the
interface's ``volume`` operation, which has no chain filter, so it always
covers every chain; the report says so.

Modules
-------
:mod:`.building` (``build``: the inputs resolved, then drawn),
:mod:`.inputs` (the window and the frames, resolved into one record),
:mod:`.sources` (the frames from a client, or derived from a ledger),
:mod:`.progress` (the steps, told to the caller's callback or bar),
:mod:`.registry` (how a section is declared), :mod:`.sections` (the sections and the registry),
:mod:`.document` (``Report``, ``Section``); the HTML pieces shared with the
widgets are in :mod:`cctx_research.views.markup`.

Examples
--------
>>> import cctx_research as cctx
>>> from cctx_research import report
>>> r = report.build(cctx.connect())  # doctest: +SKIP
>>> r.save("report.html")  # doctest: +SKIP
>>> r = report.build(ledger=cctx.load("ledger.parquet"))  # doctest: +SKIP
"""

from __future__ import annotations

from ..views.markup import EmbeddedFigure, html_table, render_png
from .building import build, is_synthetic
from .document import Report, Section, output_path
from .inputs import DEFAULT_DAYS, default_window
from .registry import Context, SectionSpec
from .sections import REGISTRY, SECTIONS

__all__ = [
    "DEFAULT_DAYS",
    "REGISTRY",
    "SECTIONS",
    "Context",
    "EmbeddedFigure",
    "Report",
    "Section",
    "SectionSpec",
    "build",
    "default_window",
    "html_table",
    "is_synthetic",
    "output_path",
    "render_png",
]
