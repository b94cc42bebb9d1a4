"""How a report section is declared and built: :class:`SectionSpec` and :class:`Context`.

A section is declared once, as a :class:`SectionSpec`: its ``id`` (the
anchor), its ``title``, a ``builder`` that turns the report's
:class:`Context` into HTML parts, and a ``supports`` predicate saying whether
the data can feed it. When it cannot (a latency section on frames with one
timestamp), the section still appears, with the one-line ``unsupported``
note instead of its content, so a reader learns what would provide it. A
section that could never say anything of this data (links counted on a
ledger that does not say how it was linked) is left out instead: its
``left_out`` reason goes to the provenance block, in one line.

Examples
--------
>>> spec = SectionSpec("hello", "Hello", lambda ctx: ["<p>hi</p>"])
>>> spec.build(Context(start=None, end=None)).to_html()
'<section id="hello"><h2>Hello</h2><p>hi</p></section>'
>>> never = SectionSpec("x", "X", lambda ctx: [], supports=lambda ctx: False,
...                     unsupported="No data for X.")
>>> never.build(Context(start=None, end=None)).parts
('<p class="note">No data for X.</p>',)
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..views.figures import FigureCache, resolve_draw
from ..views.markup import EmbeddedFigure, escape, note, render_png
from .document import Section

__all__ = ["Context", "SectionSpec", "build_sections", "figure"]

logger = logging.getLogger(__name__)

Part = str | EmbeddedFigure


@dataclass
class Context:
    """What section builders read: the window, the analysis results, the ledger.

    Attributes
    ----------
    start, end : pandas.Timestamp
        The half-open window.
    freq : str
        The time bucket of the window (``"1h"``, ``"1D"``, ``"7D"``).
    chains : tuple of str or None
        The chains kept, or None for all.
    top_n : int
        Rows of the ranked tables.
    data : dict
        Analysis results by name; builders may add theirs (they end up in
        :attr:`Report.data <cctx_research.report.Report.data>`).
    provenance : dict
        The report's provenance block.
    ledger : pandas.DataFrame or None
        A ``"ledger"`` frame (burn and mint sides), when the report has one.
    as_of : pandas.Timestamp or None
        The clock pending transfers are aged at: the data's last event when
        the window is the data's span (a report on one's own data), else
        None (the window's end: :attr:`now`).
    """

    start: pd.Timestamp | None
    end: pd.Timestamp | None
    freq: str = "1D"
    chains: tuple[str, ...] | None = None
    top_n: int = 10
    data: dict[str, Any] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    ledger: pd.DataFrame | None = None
    as_of: pd.Timestamp | None = None
    attestations: pd.DataFrame | None = None
    """What Circle's attestation API said of the burns (Iris messages), or None."""
    links: pd.DataFrame | None = None
    """How the ledger's burns and mints were linked, per route (:func:`~cctx_research.analysis.
    linking.quality`), over the transfers burned in the window and the mints in it whose burn
    is not in the data; None without a ledger."""
    figures: FigureCache | None = None
    """Where rendered figures are kept and found again (:mod:`cctx_research.views.figures`), or
    None: every figure is drawn."""

    @property
    def now(self) -> pd.Timestamp | None:
        """When ages, in-flight and stuck are judged: ``as_of``, else the window's end."""
        return self.as_of if self.as_of is not None else self.end


def _always(ctx: Context) -> bool:
    return True


@dataclass(frozen=True)
class SectionSpec:
    """One entry of the section registry.

    Attributes
    ----------
    id : str
        Anchor of the section in the HTML.
    title : str
    builder : callable
        ``builder(ctx) -> sequence of parts`` (escaped HTML strings and
        :class:`~cctx_research.views.markup.EmbeddedFigure`).
    supports : callable
        ``supports(ctx) -> bool``: whether the data can feed the section.
    unsupported : str or callable
        The one-line note shown instead when it cannot (or
        ``unsupported(ctx) -> str``, to say why for this data).
    left_out : callable or None
        ``left_out(ctx) -> str``: why the section is left out of this
        report altogether (empty: it is not); see :func:`build_sections`.
    """

    id: str
    title: str
    builder: Callable[[Context], Sequence[Part]]
    supports: Callable[[Context], bool] = _always
    unsupported: str | Callable[[Context], str] = ""
    left_out: Callable[[Context], str] | None = None

    def build(self, ctx: Context) -> Section:
        """The section for ``ctx``: built, or the note when the data does not support it."""
        if not self.supports(ctx):
            logger.debug("section %r: not supported by the data", self.id)
            text = self.unsupported(ctx) if callable(self.unsupported) else self.unsupported
            text = text or f"The data has nothing for {self.title.lower()}."
            return Section(self.id, self.title, (note(text),), supported=False)
        return Section(self.id, self.title, tuple(self.builder(ctx)))


def build_sections(specs: Iterable[SectionSpec], ctx: Context) -> list[Section]:
    """Every section of ``specs`` that is not left out, in order.

    The reasons of those left out are gathered first, as ``"Title: reason"``
    lines under ``ctx.provenance["left_out"]``, for the provenance section
    (built with the others) to say what the report does not show and why.

    Examples
    --------
    >>> ctx = Context(start=None, end=None)
    >>> specs = [SectionSpec("a", "A", lambda c: []),
    ...          SectionSpec("b", "B", lambda c: [], left_out=lambda c: "nothing to show")]
    >>> [s.id for s in build_sections(specs, ctx)], ctx.provenance["left_out"]
    (['a'], ['B: nothing to show'])
    """
    kept, reasons = [], []
    for spec in specs:
        reason = spec.left_out(ctx) if spec.left_out is not None else ""
        if reason:
            reasons.append(f"{spec.title}: {reason}")
        else:
            kept.append(spec)
    ctx.provenance["left_out"] = reasons
    return [spec.build(ctx) for spec in kept]


def figure(
    ctx: Context, name: str, caption: str, draw: str | Callable[..., Any], data: Any, **kw: Any
) -> Part:
    """An embedded figure, or an error paragraph in its place when it cannot be drawn.

    ``draw`` is a plot function or the name of one of :mod:`cctx_research.plots`
    (``"plot_volume"``): named, it is imported only when the figure is drawn, so
    a report whose figures are all in ``ctx.figures`` never loads matplotlib's
    drawing machinery.
    """
    try:
        if ctx.figures is not None:
            png = ctx.figures.png(draw, data, **kw)
        else:
            png = render_png(resolve_draw(draw), data, **kw)
        return EmbeddedFigure(name, caption, png)
    except Exception as exc:
        # A figure that cannot be drawn must not lose the rest of the report;
        # say so in its place (and in the log, with the traceback).
        logger.warning("figure %r could not be drawn: %s", name, exc, exc_info=True)
        return f'<p class="error">Figure {escape(name)} could not be drawn: {escape(exc)}</p>'
