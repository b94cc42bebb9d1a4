"""Progress bars over chunks and pages (``tqdm.auto``).

``progress=None`` decides by where the output goes: on in a notebook
kernel or when stderr is a terminal, off when the ``CI`` environment
variable is set or output is redirected. Without ipywidgets a notebook gets
the plain text bar (``tqdm.auto`` falls back by itself; its warning about
it is silenced here).
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any

__all__ = ["MIN_UNITS", "Progress", "wanted"]

MIN_UNITS = 4
"""A bar appears when a call makes more than a few (``MIN_UNITS - 1``) requests."""


def _in_notebook() -> bool:
    return "ipykernel" in sys.modules and "IPython" in sys.modules


def wanted(progress: bool | None) -> bool:
    """Resolve ``progress=None`` to on or off."""
    if progress is not None:
        return bool(progress)
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        return False
    if _in_notebook():
        return True
    stream = sys.stderr
    return bool(stream is not None and hasattr(stream, "isatty") and stream.isatty())


class Progress:
    """A bar over the chunks of one call; pages show in its postfix.

    It only appears once the call has made ``MIN_UNITS`` requests or has
    that many chunks, so short calls stay quiet.
    """

    def __init__(self, *, enabled: bool, total: int, desc: str) -> None:
        self.enabled = enabled
        self.total = total
        self.desc = desc
        self.done = 0
        self.requests = 0
        self._bar: Any = None

    def _ensure(self) -> None:
        if self._bar is not None or not self.enabled:
            return
        if self.total < MIN_UNITS and self.requests < MIN_UNITS:
            return
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from tqdm.auto import tqdm

            self._bar = tqdm(total=self.total, desc=self.desc, unit="chunk", leave=False)
        self._bar.update(self.done)

    def page(self, n: int = 1) -> None:
        """Count requests made."""
        self.requests += n
        self._ensure()
        if self._bar is not None:
            self._bar.set_postfix(requests=self.requests, refresh=False)

    def advance(self, n: int = 1) -> None:
        """Count chunks finished."""
        self.done += n
        self._ensure()
        if self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Progress:
        self._ensure()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
