"""The dashboard as a web app: the three widget panels served by Voila.

``cctx-research dashboard`` (see :mod:`.server`) serves
:func:`~.panels.app`, a tab per panel of :mod:`cctx_research.widgets`
(the dashboard, the address explorer, the transaction lookup), for people
who do not use Jupyter. Each browser page gets its own Python kernel that
runs ``app.ipynb`` (beside this file): it connects with
:func:`cctx_research.connect`, which the command points at the data to
show through the ``CCTX_*`` variables.

Voila and ipywidgets come with the ``notebooks`` extra
(``pip install 'cctx-research[notebooks]'``).
"""

from __future__ import annotations

__all__: list[str] = []
