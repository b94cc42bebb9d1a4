"""A page that loads while a panel's callback runs on another thread sees the callback's end.

A page (Voila's, or a notebook reopened in JupyterLab) asks the kernel for every
widget's state once, over ipywidgets' control comm, and builds its models from
the answer (ipywidgets 8's ``_loadFromKernel``; past 4 s without an answer it
asks widget by widget instead). A model takes the updates sent to it only once it
exists, and it is made a few awaits after the answer came: an update that arrives
before then is dropped. The app's first draw sets the dashboard's widgets on a
thread (:class:`~cctx_research.webapp.panels.AppPanels`) while the page loads, so
some of its values could be lost: a status line left on "fetching…", a table
never shown.

No message says that a page's models exist, except one: a model whose
``_view_count`` is a number reports each view of it the page displays, and a
view is displayed only once the page's models are made. So each panel counts
its views, and when a view of it is displayed the panel's widgets are sent
again, as they are then; if a callback runs at that moment they are sent once
more when it ends, so the last update of each widget carries its last value.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import weakref
from collections.abc import Iterable, Iterator
from typing import Any

import ipywidgets as w

__all__ = ["callback", "count_views", "widgets_of"]

logger = logging.getLogger(__name__)

_STATE = threading.Lock()
"""Held while the counts change and while widgets are sent again: no callback begins
meanwhile, so what is sent again is not overtaken by a value older than it."""
_running = 0  # panel callbacks under way
_owed: weakref.WeakSet[Any] = weakref.WeakSet()  # panels to send again when they end


@contextlib.contextmanager
def callback() -> Iterator[None]:
    """Count a panel's callback as under way while the ``with`` block runs."""
    global _running
    with _STATE:
        _running += 1
    try:
        yield
    finally:
        with _STATE:
            _running -= 1
            if _running == 0 and _owed:
                panels = list(_owed)
                _owed.clear()
                _send_again(panels)


def count_views(panel: Any) -> None:
    """Have the page report each view of ``panel`` it displays; send the panel again then."""
    panel._view_count = 0
    panel.observe(_on_views, names="_view_count")


def _on_views(change: dict[str, Any]) -> None:
    if not (change["new"] or 0) > (change["old"] or 0):
        return  # a view removed
    panel = change["owner"]
    with _STATE:
        if _running:
            _owed.add(panel)
        _send_again([panel])


def widgets_of(root: Any) -> Iterator[Any]:
    """``root`` and every widget under it (children, layouts, styles), each once."""
    seen: set[int] = set()
    todo = [root]
    while todo:
        widget = todo.pop()
        if not isinstance(widget, w.Widget) or id(widget) in seen:
            continue
        seen.add(id(widget))
        yield widget
        todo.extend(getattr(widget, "children", ()) or ())
        todo.extend(getattr(widget, name, None) for name in ("layout", "style"))


def _send_again(panels: Iterable[Any]) -> None:
    """Send each widget under ``panels`` again, every synced trait but the view count (the
    page's own figure). A send that fails is logged, never raised: at a callback's end it
    would take the place of the callback's own error."""
    sent = 0
    for panel in panels:
        for widget in widgets_of(panel):
            if widget.comm is None:
                continue
            try:
                widget.send_state(key=[k for k in widget.keys if k != "_view_count"])
                sent += 1
            except Exception:  # a widget closed meanwhile, a comm gone with its page
                logger.debug("a widget could not be sent again", exc_info=True)
    logger.debug("a view displayed: %d widgets sent again", sent)
