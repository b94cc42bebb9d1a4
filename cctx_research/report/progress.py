"""A report's steps as they happen, for whoever shows them (a bar, a log, a widget).

Building a report runs four :data:`STEPS`; the building code calls a
:data:`ProgressCallback` with a step's name and ``False`` when it starts,
``True`` when it is done (a step with nothing to wait for, such as frames
already held, is only said done). It draws no bar itself: the caller does,
with :func:`progress_bar` (what ``report.build(progress=True)`` and
``cctx-research report`` show) or a callback of its own.

Examples
--------
>>> from cctx_research import report
>>> steps = []
>>> def told(step, done):
...     steps.append((step, done))
>>> r = report.build(ledger=ledger, progress=told)  # doctest: +SKIP
>>> steps[:3]  # doctest: +SKIP
[('transfers', True), ('volume history', True), ('analysis', False)]
>>> with progress_bar(False) as on_step:
...     on_step("analysis", False)  # shows nothing
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["STEPS", "ProgressCallback", "progress_bar", "quiet"]

STEPS: tuple[str, ...] = ("transfers", "volume history", "analysis", "figures")
"""The steps of building a report, in order."""

ProgressCallback = Callable[[str, bool], None]
"""Called with a step of :data:`STEPS` and whether it is done (``False``: it starts)."""

_LABELS = {
    "transfers": "fetching transfers",
    "volume history": "fetching volume history",
    "analysis": "analysing",
    "figures": "drawing",
}


def quiet(step: str, done: bool) -> None:
    """A callback that shows nothing."""


class _Bar:
    """A tqdm bar over the steps, opened by the first step (so a refused call shows none)."""

    def __init__(self) -> None:
        self.bar: Any = None

    def __call__(self, step: str, done: bool) -> None:
        if self.bar is None:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=len(STEPS), desc="report", unit="step", leave=False)
        if done:
            self.bar.update(1)
        else:
            self.bar.set_postfix_str(_LABELS[step])

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


@contextmanager
def progress_bar(show: bool = True) -> Iterator[ProgressCallback]:
    """A callback drawing the steps as a progress bar (tqdm: on stderr, or in the notebook).

    Parameters
    ----------
    show : bool, default True
        ``False``: a callback that shows nothing (:func:`quiet`).

    Yields
    ------
    callable
        A :data:`ProgressCallback`; the bar is closed on leaving the block.
    """
    if not show:
        yield quiet
        return
    bar = _Bar()
    try:
        yield bar
    finally:
        bar.close()
