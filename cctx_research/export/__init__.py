"""Writing results out: frames to files with their provenance, notebooks to offline HTML.

:mod:`.frames`
    :func:`write` a frame as Parquet, CSV or JSON with its provenance
    (what ``cctx-research fetch`` uses); :func:`read_sidecar` reads it back.
:mod:`.notebook`
    :func:`export_notebook`: a notebook as one self-contained HTML file whose
    widgets work with no network (``cctx-research export-notebook``).
"""

from __future__ import annotations

from .frames import FORMATS, read_sidecar, sidecar_path, write
from .notebook import export_notebook

__all__ = ["FORMATS", "export_notebook", "read_sidecar", "sidecar_path", "write"]
