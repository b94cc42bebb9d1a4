"""Data access: the analytics interface's client -> canonical DataFrames.

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
- :mod:`.cache_policy`: the cache policy, one frozen record deciding what is kept;
- :mod:`.calls`: one call's counters, tasks and summary;
- :mod:`.planner`, :mod:`.paging`: the page size and pure page generators;
- :mod:`.bounds`: the service's bound semantics;
- :mod:`.envelope`: an operation's request and its ``{status, body}`` reply;
- :mod:`.cache_dir`: the cache directory (replies and chunks side by side);
  :mod:`.chunks`: Arrow IPC files for settled chunks;
- :mod:`.parse`: JSON -> frames of :mod:`cctx_research.schema`.

Underneath is the toolkit's network floor, :mod:`cctx_research.net`: the
sender's core (retries, typed errors, cancelling), the transport seam
(sockets, or a :class:`BaseTransport` such as :class:`WSGITransport`), the
worker threads, the reply cache and the progress bar.

This package never imports :mod:`cctx_research.service`: it talks to any
service over HTTP, or through the transport seam.
"""

from __future__ import annotations

from ..net import BaseTransport, WSGITransport
from .core import Client
from .options import ClientOptions

__all__ = ["BaseTransport", "Client", "ClientOptions", "WSGITransport"]
