"""``load``'s progress: which stage a long load is in, and how far through it.

A load of a chain's whole history runs for minutes: the files are read one
by one (each file's logs decoded as it is read), then the burn and mint
sides are built, linked, and the ledger is written. ``load(progress=...)``
says so as it goes: ``True`` draws a bar on stderr (tqdm, which also works in
a notebook), a callable is given one :class:`LoadStep` per step, ``False`` or
``None`` says nothing.

Examples
--------
>>> seen = []
>>> report = reporter(seen.append)
>>> report("read", done=0, total=2, path="eth.parquet")
>>> report("link")
>>> [(s.stage, s.done, s.total) for s in seen]
[('read', 0, 2), ('link', 0, 1)]
>>> reporter("yes")
Traceback (most recent call last):
...
TypeError: progress must be True, False, None or a callable taking a LoadStep, got str
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["STAGES", "Bar", "LoadStep", "Reporter", "reporter"]

STAGES: dict[str, str] = {
    "read": "reading files",
    "decode": "decoding logs",
    "sides": "building burn and mint sides",
    "link": "linking burns to mints",
    "write": "writing the ledger",
}
"""The stages of a load, in order, and what each is called on a progress bar."""


@dataclass(frozen=True)
class LoadStep:
    """One step of a load: its stage, how many of the stage's items are done, of how many.

    ``path`` is the file being read or decoded (``"read"``, ``"decode"``),
    else None. A stage of one item (``"sides"``, ``"link"``, ``"write"``)
    starts with ``done=0, total=1``.
    """

    stage: str
    done: int = 0
    total: int = 1
    path: Path | None = None

    @property
    def label(self) -> str:
        """What the stage is called on a progress bar."""
        return STAGES[self.stage]


class Bar:
    """A tqdm bar on stderr that follows the stages: one bar, its description the stage.

    Give it as ``progress`` to share one bar between ``load`` and what comes after it
    (the CLI's writing); :meth:`close` ends it.
    """

    def __init__(self) -> None:
        self.bar: Any = None

    def __call__(self, step: LoadStep) -> None:
        from tqdm.auto import tqdm

        if self.bar is None:
            self.bar = tqdm(total=step.total, file=sys.stderr, leave=False, unit="step")
        if self.bar.desc != step.label or self.bar.total != step.total:
            self.bar.reset(total=step.total)
            self.bar.set_description_str(step.label)
        self.bar.n = step.done
        self.bar.set_postfix_str("" if step.path is None else step.path.name[:40])
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class Reporter:
    """``report(stage, done=0, total=1, path=None)``: one :class:`LoadStep` to the sink."""

    def __init__(self, sink: Callable[[LoadStep], None] | None, *, owned: bool = False) -> None:
        self.sink, self.owned = sink, owned

    def __call__(self, stage: str, *, done: int = 0, total: int = 1, path: Any = None) -> None:
        if stage not in STAGES:
            raise ValueError(f"stage must be one of {', '.join(STAGES)}, got {stage!r}")
        if self.sink is not None:
            self.sink(LoadStep(stage, done, total, None if path is None else Path(path)))

    def close(self) -> None:
        """End the bar this reporter drew (``progress=True``); a caller's sink is its own."""
        if self.owned and isinstance(self.sink, Bar):
            self.sink.close()


def reporter(progress: Any) -> Reporter:
    """The :class:`Reporter` of ``load``'s ``progress`` argument.

    Raises
    ------
    TypeError
        If ``progress`` is not True, False, None or a callable.
    """
    if progress is None or progress is False:
        return Reporter(None)
    if progress is True:
        return Reporter(Bar(), owned=True)
    if callable(progress):
        return Reporter(progress)
    raise TypeError(
        "progress must be True, False, None or a callable taking a LoadStep, "
        f"got {type(progress).__name__}"
    )
