"""Data access: HTTP, cache, pagination and parsing -> canonical DataFrames.

:class:`Client` is the way in (:func:`cctx_research.connect` builds one from
the ``CCTX_*`` settings, or joins one to local data or the embedded sample).
The modules behind it:

- :mod:`.core`: the :class:`Client`, a thin typed face over its session;
- :mod:`.session`: the engine: transport, both caches, page sizes, the
  clock, the bound semantics and the one call path;
- :mod:`.listing`, :mod:`.aggregates`, :mod:`.lookup`: the endpoint
  families, each using only the session's public methods;
- :mod:`.coverage`: what of a window the service's data covers;
- :mod:`.options`: the options, one frozen record (:class:`ClientOptions`);
- :mod:`.policy`: the cache policy, one frozen record deciding what is kept;
- :mod:`.runner`, :mod:`.calls`: tasks on worker threads, one call's counters;
- :mod:`.planner`, :mod:`.paging`: the page size and pure page generators;
- :mod:`.bounds`: the service's bound semantics;
- :mod:`.http`: one POST with retries, envelope checks and typed errors
  (:mod:`.statuses`: what a status means; :mod:`.replies`: decoding replies);
- :mod:`.transports`: the wire under it (sockets, or a
  :class:`~.transports.BaseTransport` such as :class:`WSGITransport`);
- :mod:`.cache`: requests-cache (SQLite) for replies; :mod:`.chunks`:
  Arrow IPC files for settled chunks;
- :mod:`.parse`: JSON -> frames of :mod:`cctx_research.schema`;
- :mod:`.progress`: the tqdm bar.

This package never imports :mod:`cctx_research.service`: it talks to any
service over HTTP, or through the transport seam.
"""

from __future__ import annotations

from ..net.transports import BaseTransport, WSGITransport
from .core import Client
from .options import ClientOptions

__all__ = ["BaseTransport", "Client", "ClientOptions", "WSGITransport"]
