"""What the panels share: the status line, the busy indicator, error capture, dates."""

from __future__ import annotations

import datetime as dt
import logging
import traceback
import warnings
from collections.abc import Callable
from typing import Any

import pandas as pd

from .. import provenance, times
from ..errors import CctxError, CoverageWarning
from ..views.markup import escape, synthetic_banner

try:
    import ipywidgets as w
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "cctx_research.widgets needs ipywidgets: pip install 'cctx-research[notebooks]'"
    ) from exc

__all__ = [
    "BUSY",
    "DEFAULT_DAYS",
    "ERROR_STYLE",
    "OK_STYLE",
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
"""Days shown when a panel opens: the last week, today included."""


BUSY = "&#9203; {what}&hellip;"
OK_STYLE = "color:#1a7f37"
WARN_STYLE = "color:#9a6700;font-weight:600"
ERROR_STYLE = "color:#cf222e;font-weight:600"
SYNTHETIC_NOTE = synthetic_banner(subject="these panels are")


def default_dates(days: int = DEFAULT_DAYS) -> tuple[dt.date, dt.date]:
    today = pd.Timestamp.now(tz="UTC").date()
    return today - dt.timedelta(days=days - 1), today


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


class Panel(w.VBox):
    """Status line, busy indicator and error capture shared by the panels."""

    def _setup(self, client: Any, controls: list[Any]) -> None:
        self.client = client
        self.status = w.HTML(value="")
        self.banner = w.HTML(value="")
        self.output = w.Output(layout=w.Layout(max_height="300px", overflow="auto"))
        self.error: BaseException | None = None
        self.busy = False
        self.fetches = 0
        self.coverage_note: str | None = None
        self.draws = 0
        self.images: dict[str, w.Image] = {}
        self._controls = controls
        if says_synthetic(client):
            self.banner.value = SYNTHETIC_NOTE

    def _image(self, name: str, width: str = "49%") -> w.Image:
        image = w.Image(format="png", layout=w.Layout(width=width, height="auto"))
        self.images[name] = image
        return image

    def _say(self, text: str, *, style: str = "") -> None:
        self.status.value = f'<span style="{style}">{text}</span>' if style else text

    def _set_busy(self, what: str | None) -> None:
        self.busy = what is not None
        for control in self._controls:
            control.disabled = self.busy
        if what is not None:
            self._say(BUSY.format(what=escape(what)))

    def _fetch(self, what: str, fn: Callable[[], Any]) -> Any:
        """One fetch, with the busy indicator on while it runs."""
        self._set_busy(what)
        try:
            with warnings.catch_warnings(record=True) as shown:
                warnings.simplefilter("always")
                result = fn()
        finally:
            self._set_busy(None)
        # a window the data does not cover is said on the status line (not a
        # green "0 transfers"), and the warning goes on to the notebook
        notes = [str(x.message) for x in shown if issubclass(x.category, CoverageWarning)]
        self.coverage_note = notes[0] if notes else None
        for x in shown:
            warnings.warn_explicit(x.message, x.category, x.filename, x.lineno)
        self.fetches += 1
        if says_synthetic(result):
            self.banner.value = SYNTHETIC_NOTE
        return result

    def _run(self, action: Callable[[], None]) -> None:
        """Run a callback inside the Output capture; show any error, never drop it."""
        self.output.outputs = ()
        self.error = None
        with self.output:
            try:
                action()
            except Exception as exc:
                self._show_error(exc)

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
