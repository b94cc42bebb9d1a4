"""Data access: HTTP, cache, pagination and parsing -> canonical DataFrames.

:class:`Client` is the way in (:func:`cctx_research.connect` builds one from
the ``CCTX_*`` settings or starts the embedded sample). The modules behind it:

- :mod:`.options`: the options, one frozen record (:class:`ClientOptions`);
- :mod:`.core`: the client's methods and the one call path (stats, provenance, log);
- :mod:`.listing`, :mod:`.aggregates`: the listing and aggregate calls;
- :mod:`.runner`: tasks on worker threads, adaptive concurrency, cancellation;
- :mod:`.planner`: the page size (learned) and each chunk's pages;
- :mod:`.paging`: pure page generators;
- :mod:`.bounds`: the service's bound semantics;
- :mod:`.http`: one POST with retries, envelope checks and typed errors;
- :mod:`.cache`: requests-cache (SQLite) for replies, Arrow IPC for settled chunks;
- :mod:`.parse`: JSON -> frames of :mod:`cctx_research.schema`;
- :mod:`.progress`: the tqdm bar.

This package never imports :mod:`cctx_research.service`: it talks to any
service over HTTP only.
"""

from __future__ import annotations

from .core import Client
from .options import ClientOptions

__all__ = ["Client", "ClientOptions"]
