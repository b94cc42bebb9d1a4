"""What the panels share: the status line, the busy indicator, error and warning capture, dates."""

from __future__ import annotations

import datetime as dt
import logging
import threading
import traceback
import warnings
from collections.abc import Callable
from typing import Any

import pandas as pd

from .. import provenance, times
from ..errors import CctxError, CctxWarning, CoverageWarning, SyntheticDataWarning
from ..views import notices
from ..views.figures import FigureCache, resolve_draw
from ..views.markup import escape, render_png, synthetic_banner

try:
    import ipywidgets as w
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "cctx_research.widgets needs ipywidgets: pip install 'cctx-research[notebooks]'"
    ) from exc

from . import _states  # after the check that ipywidgets is there

__all__ = [
    "BUSY",
    "DEFAULT_DAYS",
    "ERROR_STYLE",
    "OK_STYLE",
    "PANEL_CSS",
    "SYNTHETIC_NOTE",
    "WARN_STYLE",
    "Panel",
    "as_date",
    "days_window",
    "default_dates",
    "fetch_summary",
    "last_day",
    "says_synthetic",
]

logger = logging.getLogger(__name__)

DEFAULT_DAYS = 7
"""Days shown when a panel opens: the last week of complete days (today left out)."""


BUSY = "&#9203; {what}&hellip;"
OK_STYLE = "color:#1a7f37"
WARN_STYLE = notices.WARN_STYLE
ERROR_STYLE = "color:#cf222e;font-weight:600"
SYNTHETIC_NOTE = synthetic_banner(subject="these panels are")
PANEL_CSS = (
    "<style>"
    ".cctx-panel table{border-collapse:collapse;margin:4px 0 8px}"
    ".cctx-panel th,.cctx-panel td{padding:2px 10px;border-bottom:1px solid #d0d7de;"
    "text-align:left;vertical-align:top}"
    ".cctx-panel td.num,.cctx-panel th.num{text-align:right;font-variant-numeric:tabular-nums;"
    "white-space:nowrap}"
    ".cctx-panel a{color:#0969da;text-decoration:underline}"
    ".cctx-panel .cctx-fit{max-width:100%}"
    ".cctx-panel .cctx-fit td{overflow-wrap:anywhere}"
    "</style>"
)
"""The panels' table style (the report's stylesheet is not there): numbers right-aligned,
links (addresses, transactions) that look like links in a notebook's or the app's theme, and
a ``cctx-fit`` box whose table fits its panel (a long address wraps) instead of being cut off."""


def default_dates(days: int = DEFAULT_DAYS) -> tuple[dt.date, dt.date]:
    """The last ``days`` complete UTC days: ending yesterday, as today is still partial.

    A window holding today would open every panel on a "Partial data" warning.
    """
    last = pd.Timestamp.now(tz="UTC").date() - dt.timedelta(days=1)
    return last - dt.timedelta(days=days - 1), last


def days_window(start: Any, end: Any) -> tuple[pd.Timestamp, pd.Timestamp]:
    """Days picked (both included) -> the half-open UTC window ``[start, end + 1 day)``."""
    if start is None or end is None:
        raise ValueError("pick both a start and an end date")
    lo = pd.Timestamp(as_date(start)).tz_localize("UTC")
    hi = pd.Timestamp(as_date(end)).tz_localize("UTC") + pd.Timedelta(days=1)
    if lo >= hi:
        raise ValueError(
            f"the start date ({start}) is after the end date ({end}); pick a start on or "
            "before the end"
        )
    return lo, hi


def fetch_summary(frame: Any) -> str:
    record = provenance.provenance(frame) if hasattr(frame, "attrs") else None
    if record is None:
        return ""
    return f"{record.network_requests:,} requests sent, {record.cache_hits:,} cache hits"


def says_synthetic(value: Any) -> bool:
    """Whether a fetched frame or a client says its data is synthetic (by the typed flag)."""
    if hasattr(value, "attrs"):
        return provenance.is_synthetic(value)
    return getattr(value, "synthetic", False) is True


def as_date(value: Any) -> dt.date | None:
    if value is None:
        return None
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    return times.to_timestamp(value, name="date").date()


def last_day(end: Any) -> dt.date | None:
    """The last day a half-open ``end`` covers: the day of the instant before it."""
    if end is None:
        return None
    return (times.to_timestamp(end, name="end") - pd.Timedelta(1, "ns")).date()


_CALLBACKS = threading.RLock()
"""Held while any panel's callback runs. The app draws its first page on a thread, and a
click meanwhile waits for it (then draws what it picked). The wait is process-wide, not a
panel's: a callback records warnings with :class:`warnings.catch_warnings`, which swaps
process-wide state (the filters, ``showwarning``), so two panels' callbacks on two threads
would each restore what the other had set: warnings recorded by the wrong panel, and
Python's left pointing at a finished callback's list."""


class Panel(w.VBox):
    """Status line, busy indicator, error and warning capture shared by the panels.

    The toolkit's warnings raised while a panel fetches or draws (partial
    coverage, a read-only cache, other tokens left out) are said on its
    status line, in the words of :mod:`cctx_research.views.notices`, and kept
    in ``panel.notes``; synthetic data is the banner. Other warnings go on
    to Python's warning machinery, outside the panel.
    """

    def _setup(self, client: Any, controls: list[Any]) -> None:
        self.client = client
        self.add_class("cctx-panel")
        self.style = w.HTML(value=PANEL_CSS)
        self.status = w.HTML(value="")
        self.banner = w.HTML(value="")
        self.output = w.Output(layout=w.Layout(max_height="300px", overflow="auto"))
        self.error: BaseException | None = None
        self.busy = False
        self.fetches = 0
        self.coverage_note: str | None = None
        self.notes: list[str] = []
        self._fetch_notes: list[str] = []
        self._caught: list[warnings.WarningMessage] | None = None
        self.draws = 0
        self.images: dict[str, w.Image] = {}
        self.figures: FigureCache | None = None
        self._controls = controls
        # one callback at a time, in the whole process (see _CALLBACKS)
        self._lock = _CALLBACKS
        # a page that loads while a callback runs on a thread is sent the panel again
        _states.count_views(self)
        if says_synthetic(client):
            self.banner.value = SYNTHETIC_NOTE

    def _image(self, name: str, width: str = "49%") -> w.Image:
        """An image that takes no room (and shows no broken-image icon) until it holds a PNG."""
        layout = w.Layout(width=width, height="auto", display="none")
        image = w.Image(format="png", layout=layout)

        def shown(change: dict[str, Any]) -> None:
            image.layout.display = None if change["new"] else "none"

        image.observe(shown, names="value")
        self.images[name] = image
        return image

    def _png(self, draw: str, data: Any, **options: Any) -> bytes:
        """The PNG of ``draw`` (a :mod:`cctx_research.plots` name): kept in ``figures``, or drawn.

        Named, the plot function (and matplotlib) is imported only when a figure is drawn.
        """
        if self.figures is not None:
            return self.figures.png(draw, data, **options)
        return render_png(resolve_draw(draw), data, **options)

    def _say(self, text: str, *, style: str = "") -> None:
        self.status.value = f'<span style="{style}">{text}</span>' if style else text

    def _say_result(self, text: str) -> None:
        """Say what a callback did (HTML), after the toolkit's warnings it met, if any."""
        self.notes = list(self._fetch_notes)
        for caught in self._caught or ():
            note = self._note(caught)
            if note is not None and note not in self.notes:
                self.notes.append(note)
        if self.notes:
            said = " &middot; ".join(escape(note) for note in self.notes)
            self._say(f"&#9888; {said} &middot; {text}", style=WARN_STYLE)
        else:
            self._say(text, style=OK_STYLE)

    def _note(self, caught: warnings.WarningMessage) -> str | None:
        """The status-line words of a toolkit warning; None for others and synthetic data."""
        if not issubclass(caught.category, CctxWarning):
            return None
        if issubclass(caught.category, SyntheticDataWarning):
            self.banner.value = SYNTHETIC_NOTE  # said by the banner
            return None
        return notices.text_line(caught.message, caught.category)

    def _set_busy(self, what: str | None) -> None:
        self.busy = what is not None
        for control in self._controls:
            control.disabled = self.busy
        if what is not None:
            self._say(BUSY.format(what=escape(what)))

    def _fetch(self, what: str, fn: Callable[[], Any]) -> Any:
        """One fetch, with the busy indicator on while it runs."""
        self._set_busy(what)
        seen = len(self._caught) if self._caught is not None else 0
        try:
            result = fn()
        finally:
            self._set_busy(None)
        # a window the data does not cover is said on the status line (not a
        # green "0 transfers"), on every redraw of what was fetched
        shown = (self._caught or [])[seen:]
        coverage = [str(x.message) for x in shown if issubclass(x.category, CoverageWarning)]
        self.coverage_note = coverage[0] if coverage else None
        self._fetch_notes = [n for n in map(self._note, shown) if n is not None]
        self.fetches += 1
        if says_synthetic(result):
            self.banner.value = SYNTHETIC_NOTE
        return result

    def _run(self, action: Callable[[], None]) -> None:
        """Run a callback inside the Output capture; show any error, never drop it.

        Warnings raised meanwhile are recorded: the toolkit's go to the status
        line (:meth:`_say_result`), others are passed on once the callback is
        done, outside the panel's output.
        """
        with self._lock, _states.callback():
            self._run_now(action)

    def _run_now(self, action: Callable[[], None]) -> None:
        self.output.outputs = ()
        self.error = None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self._caught = caught
            try:
                with self.output:
                    try:
                        action()
                    except Exception as exc:
                        self._show_error(exc)
            finally:
                self._caught = None
        for x in caught:
            if not issubclass(x.category, CctxWarning):
                warnings.warn_explicit(x.message, x.category, x.filename, x.lineno)

    def _show_error(self, exc: BaseException) -> None:
        self.error = exc
        logger.debug("widget callback failed", exc_info=exc)
        if isinstance(exc, (ValueError, TypeError)):
            # bad input: what to do instead is in the message
            message = str(exc)
        elif isinstance(exc, CctxError):
            message = f"{type(exc).__name__}: {exc}"
        else:
            message = f"{type(exc).__name__}: {exc} (traceback below)"
            self.output.outputs = (
                {
                    "output_type": "error",
                    "ename": type(exc).__name__,
                    "evalue": str(exc),
                    "traceback": traceback.format_exception(type(exc), exc, exc.__traceback__),
                },
            )
        self._say(escape(message), style=ERROR_STYLE)


# --------------------------------------------------------------------------
# dashboard
