"""A page's first look at the widgets while a panel's callback runs on another thread.

A page (Voila's, or a notebook reopened in JupyterLab) asks the kernel for every
widget's state once, over ipywidgets' control comm (``request_states``), and
builds its models from the answer; an update the kernel sends before that
answer is for a widget the page does not have yet, and the page drops it. The
answer is written on the kernel's main thread while the app's first draw may be
setting the dashboard's widgets on its own (:class:`~cctx_research.webapp.panels.AppPanels`):
a value set after its widget was read into the answer, but sent before the
answer, never reaches the page (a status line left on "fetching…" under a
drawn table). So when a panel callback ran at any moment of an answer, the
panels' widgets are sent again, as they are now, right after it: every value
is then either in the answer or in a message that follows it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import ipywidgets as w

__all__ = ["callback", "resend_after_answers", "widgets_of"]

logger = logging.getLogger(__name__)

_STATE = threading.Lock()
_running = 0  # panel callbacks under way
_begun = 0  # panel callbacks begun since the process started
_panels: weakref.WeakSet[Any] = weakref.WeakSet()
_watching = False
CONTROL_TARGET = "jupyter.widget.control"


@contextlib.contextmanager
def callback(panel: Any) -> Iterator[None]:
    """Count a panel's callback as under way while the ``with`` block runs."""
    global _running, _begun
    with _STATE:
        _running += 1
        _begun += 1
        _panels.add(panel)
    try:
        yield
    finally:
        with _STATE:
            _running -= 1


def widgets_of(root: Any) -> Iterator[Any]:
    """``root`` and every widget under it (``children``), each once."""
    seen: set[int] = set()
    todo = [root]
    while todo:
        widget = todo.pop()
        if not isinstance(widget, w.Widget) or id(widget) in seen:
            continue
        seen.add(id(widget))
        yield widget
        todo.extend(getattr(widget, "children", ()) or ())


def _answer(answer: Callable[[Any], None], msg: Any) -> None:
    with _STATE:
        running, begun = _running, _begun
    answer(msg)
    with _STATE:
        moved = running > 0 or _begun != begun
        panels = list(_panels) if moved else []
    for panel in panels:
        for widget in widgets_of(panel):
            if widget.comm is not None:
                widget.send_state()
    if panels:
        logger.debug("widget states asked for during a callback: %d panels sent again", len(panels))


def resend_after_answers() -> None:
    """In a kernel, once per process: answer the pages' state requests as the module says.

    Outside a kernel, or with an ipywidgets whose control comm is not the one
    described, nothing changes.
    """
    global _watching
    with _STATE:
        if _watching:
            return
        _watching = True
    from ipywidgets import comm

    manager = comm.get_comm_manager()
    opened = getattr(w.Widget, "handle_control_comm_opened", None)
    answer = getattr(w.Widget, "_handle_control_comm_msg", None)
    if manager is None or opened is None or answer is None:
        return

    def on_open(control: Any, msg: Any) -> None:
        opened(control, msg)  # checks the protocol's version, keeps the comm
        control.on_msg(lambda request: _answer(answer, request))

    manager.register_target(CONTROL_TARGET, on_open)
