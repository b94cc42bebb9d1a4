"""Data access: HTTP, cache, pagination and parsing -> canonical DataFrames.

:class:`Client` is the way in; :func:`connect` builds one from the
``CCTX_*`` settings or starts the embedded sample. The modules behind it:

- :mod:`.http`: one POST with retries, envelope checks and typed errors;
- :mod:`.cache`: requests-cache (SQLite) for replies, Arrow IPC for settled chunks;
- :mod:`.paging`: pure page generators;
- :mod:`.parse`: JSON -> frames of :mod:`cctx_research.schema`;
- :mod:`.progress`: the tqdm bar.
"""

from __future__ import annotations

from .connect import connect
from .core import Client

__all__ = ["Client", "connect"]
