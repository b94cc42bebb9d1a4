"""cctx_research: research toolkit for Circle CCTP cross-chain USDC transfers.

>>> import cctx_research as cctx
>>> client = cctx.connect()                     # doctest: +SKIP
>>> transfers = client.mints("2026-11-01", "2026-11-02")  # doctest: +SKIP
>>> ledger = cctx.load_sample(days=7)           # doctest: +SKIP
>>> ledger = cctx.load(["eth.json", "base.json"], chain={"eth.json": "ethereum",
...                    "base.json": "base"})           # doctest: +SKIP

Every name is reached through the same import, loaded on first use (so
``import cctx_research`` loads neither pandas nor a plotting library):

>>> cctx.analysis.flows.matrix(transfers)          # doctest: +SKIP
>>> cctx.plots.plot_flow_matrix(transfers)         # doctest: +SKIP
>>> cctx.report.build(client).save("report.html")  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

from . import errors
from ._version import __version__
from .errors import CctxError

if TYPE_CHECKING:  # the names below are imported on first use (see _NAMES)
    from . import chains, provenance, schema
    from .client import Client, ClientOptions
    from .connection import connect
    from .ingest import bad_rows, load, transfers_from_ledger
    from .times import TimeLike


def load_sample(*, as_of: TimeLike | None = None, days: int = 30, progress: bool | None = None):
    """The bundled synthetic sample ledger (see :func:`cctx_research.service.sample.load_sample`).

    Imported on first use: the package's face loads nothing of the local
    service until it is asked for.
    """
    from .service.sample import load_sample as _load_sample

    return _load_sample(as_of=as_of, days=days, progress=progress)


_NAMES = {
    "Client": ("client", "Client"),
    "ClientOptions": ("client", "ClientOptions"),
    "bad_rows": ("ingest", "bad_rows"),
    "connect": ("connection", "connect"),
    "load": ("ingest", "load"),
    "sync": ("nodes", "sync"),
    "sync_status": ("nodes", "status"),
    "transfers_from_ledger": ("ingest", "transfers_from_ledger"),
}
"""Names of the face imported on first use, each from its home: ``cctx.connect`` loads the
client (and pandas) when it is first reached, so that ``import cctx_research`` (and the
command line's ``--help``) costs next to nothing."""

_LAZY = {
    "analysis": "analysis",
    "chains": "chains",
    "datasets": "ingest.datasets",
    "iris": "iris",
    "labels": "labels",
    "nodes": "nodes",
    "export": "export",
    "plots": "plots",
    "provenance": "provenance",
    "report": "report",
    "schema": "schema",
    "selection": "views.selection",
    "service": "service",
    "views": "views",
    "webapp": "webapp",
    "widgets": "widgets",
}
"""Subpackages and modules imported on first attribute access (``cctx.plots``), each
with its home in the package (``cctx.selection`` is :mod:`cctx_research.views.selection`)."""


def __getattr__(name: str) -> Any:
    if name in _NAMES:
        module_name, attr = _NAMES[name]
        value = getattr(importlib.import_module(f".{module_name}", __name__), attr)
        globals()[name] = value
        return value
    if name in _LAZY:
        module = importlib.import_module(f".{_LAZY[name]}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_NAMES))


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
