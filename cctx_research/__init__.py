"""cctx_research: research toolkit for Circle CCTP cross-chain USDC transfers.

>>> import cctx_research as cctx
>>> client = cctx.connect()                     # doctest: +SKIP
>>> transfers = client.mints("2026-11-01", "2026-11-02")  # doctest: +SKIP
>>> ledger = cctx.load_sample(days=7)           # doctest: +SKIP
>>> ledger = cctx.load(["eth.json", "base.json"], chain={"eth.json": "ethereum",
...                    "base.json": "base"})           # doctest: +SKIP

The packages of analysis and views are reached through the same import,
loaded on first use (so ``import cctx_research`` loads no plotting library):

>>> cctx.analysis.flows.matrix(transfers)          # doctest: +SKIP
>>> cctx.plots.plot_flow_matrix(transfers)         # doctest: +SKIP
>>> cctx.report.build(client).save("report.html")  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from . import chains, errors, provenance, schema
from ._version import __version__
from .client import Client, ClientOptions
from .connection import connect
from .errors import CctxError
from .ingest import bad_rows, load, transfers_from_ledger
from .times import TimeLike


def load_sample(*, as_of: TimeLike | None = None, days: int = 30):
    """The bundled synthetic sample ledger (see :func:`cctx_research.service.sample.load_sample`).

    Imported on first use: the package's face loads nothing of the local
    service until it is asked for.
    """
    from .service.sample import load_sample as _load_sample

    return _load_sample(as_of=as_of, days=days)


_LAZY = {
    "analysis": "analysis",
    "datasets": "ingest.datasets",
    "iris": "iris",
    "labels": "labels",
    "nodes": "nodes",
    "export": "export",
    "plots": "plots",
    "report": "report",
    "selection": "views.selection",
    "service": "service",
    "views": "views",
    "webapp": "webapp",
    "widgets": "widgets",
}
"""Subpackages and view modules imported on first attribute access (``cctx.plots``), each
with its home in the package (``cctx.selection`` is :mod:`cctx_research.views.selection`)."""

_LAZY_FUNCTIONS = {"sync": ("nodes", "sync"), "sync_status": ("nodes", "status")}
"""Functions of the face imported on first use: ``cctx.sync(...)``, ``cctx.sync_status(...)``."""


def __getattr__(name: str) -> Any:
    if name in _LAZY_FUNCTIONS:
        module_name, attr = _LAZY_FUNCTIONS[name]
        value = getattr(importlib.import_module(f".{module_name}", __name__), attr)
        globals()[name] = value
        return value
    if name in _LAZY:
        module = importlib.import_module(f".{_LAZY[name]}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_LAZY_FUNCTIONS))


if "ipykernel" in sys.modules:
    # in a Jupyter kernel the toolkit's warnings are status lines, not stderr
    # boxes with a file path and a line of code (views.notices)
    importlib.import_module(".views.notices", __name__).show_in_notebooks()


__all__ = [
    "CctxError",
    "Client",
    "ClientOptions",
    "__version__",
    "bad_rows",
    "chains",
    "connect",
    "errors",
    "load",
    "load_sample",
    "provenance",
    "schema",
    "transfers_from_ledger",
]
