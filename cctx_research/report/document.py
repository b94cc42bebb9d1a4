"""A built report as a document: :class:`Section`, :class:`Report`, its stylesheet."""

from __future__ import annotations

import logging
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..views.markup import EmbeddedFigure, escape, synthetic_banner, when

__all__ = ["CSS", "Report", "Section", "output_path"]

logger = logging.getLogger(__name__)

CSS = """
.cctx-report { font-family: -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
  color: #1f2328; max-width: 1100px; margin: 0 auto; padding: 0 16px 32px; line-height: 1.45; }
.cctx-report h1 { font-size: 1.7em; margin: 0.6em 0 0.2em; }
.cctx-report h2 { font-size: 1.3em; margin: 1.6em 0 0.5em; padding-bottom: 0.2em;
  border-bottom: 1px solid #d0d7de; }
.cctx-report h3 { font-size: 1.05em; margin: 1.1em 0 0.4em; }
.cctx-report .subtitle { color: #57606a; margin: 0 0 1em; }
.cctx-report .banner { background: #fff4ce; border: 2px solid #d4a72c; color: #4d2d00;
  padding: 10px 14px; border-radius: 6px; font-weight: 600; margin: 12px 0; }
.cctx-report .note { color: #57606a; font-size: 0.92em; }
.cctx-report nav ol { columns: 2; margin: 0.4em 0 1em; }
.cctx-report table { border-collapse: collapse; margin: 0.4em 0 0.8em; font-size: 0.9em; }
.cctx-report th, .cctx-report td { border: 1px solid #d0d7de; padding: 3px 8px; }
.cctx-report th { background: #f6f8fa; text-align: left; }
.cctx-report td.num, .cctx-report th.num { text-align: right;
  font-variant-numeric: tabular-nums; }
.cctx-report td { white-space: nowrap; }
.cctx-report td.up { color: #1a7f37; }
.cctx-report td.down { color: #cf222e; }
.cctx-report td a { color: #0969da; text-decoration: none; }
.cctx-report td a:hover { text-decoration: underline; }
.cctx-report code { font-size: 0.88em; }
.cctx-report figure { margin: 0.6em 0 1em; }
.cctx-report figure img { max-width: 100%; height: auto; border: 1px solid #eaeef2; }
.cctx-report figcaption { color: #57606a; font-size: 0.88em; }
.cctx-report .cards { display: flex; flex-wrap: wrap; gap: 10px; margin: 0.5em 0 1em; }
.cctx-report .card { border: 1px solid #d0d7de; border-radius: 6px; padding: 8px 14px;
  min-width: 150px; }
.cctx-report .card .value { font-size: 1.35em; font-weight: 600; }
.cctx-report .card .label { color: #57606a; font-size: 0.85em; }
.cctx-report .error { color: #cf222e; }
"""
"""The report's inline stylesheet (no external asset, no web font)."""


def output_path(path: str | os.PathLike[str]) -> Path:
    """Check where a report will be written, before any work: an ``.html`` file in a directory.

    Raises
    ------
    TypeError
        If ``path`` is not a path.
    ValueError
        If its suffix is not ``.html`` or ``.htm`` (the report is one HTML file), or its
        directory does not exist.
    IsADirectoryError
        If it is a directory.

    Examples
    --------
    >>> output_path("report.html").name
    'report.html'
    >>> output_path("report.pdf")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: the report is one HTML file: path must end in .html, ... not 'report.pdf' ...
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file name such as report.html, got {type(path).__name__}")
    target = Path(path).expanduser()
    if target.is_dir():
        raise IsADirectoryError(f"{target} is a directory; pass a file name such as report.html")
    if target.suffix.lower() not in (".html", ".htm"):
        raise ValueError(
            "the report is one HTML file: path must end in .html, such as report.html, "
            f"not {target.name!r} (for a PDF, open the HTML in a browser and print it)"
        )
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise ValueError(
            f"the directory of path, {str(parent)!r}, does not exist: create it first "
            f"(mkdir -p {parent}) or pass a path in an existing directory"
        )
    return target


@dataclass(frozen=True)
class Section:
    """One section of a report.

    Attributes
    ----------
    id : str
        Anchor of the section (``"kpis"``, ``"flows"``, ...).
    title : str
    parts : tuple
        In order: HTML fragments (``str``, already escaped) and
        :class:`~cctx_research.views.markup.EmbeddedFigure` objects.
    supported : bool
        False when the data lacks what the section needs; ``parts`` is then
        a one-line note saying what would provide it.
    """

    id: str
    title: str
    parts: tuple[str | EmbeddedFigure, ...] = ()
    supported: bool = True

    @property
    def figures(self) -> list[EmbeddedFigure]:
        """The figures of the section."""
        return [p for p in self.parts if isinstance(p, EmbeddedFigure)]

    def to_html(self) -> str:
        """``<section>`` with a heading and the parts."""
        body = "".join(p.to_html() if isinstance(p, EmbeddedFigure) else p for p in self.parts)
        return f'<section id="{escape(self.id)}"><h2>{escape(self.title)}</h2>{body}</section>'


@dataclass(frozen=True, repr=False)
class Report:
    """A built report (see :func:`~cctx_research.report.build`).

    Attributes
    ----------
    title : str
    start, end : pandas.Timestamp
        The half-open window ``[start, end)``.
    chains : tuple of str or None
        The chains kept (transfers touching any of them), or None for all.
    sections : tuple of Section
    provenance : dict
        Source, window, generation time, library version, requests and cache
        hits, per operation under ``"operations"``; under ``"left_out"``, the
        sections this data has nothing for and why (``"Title: reason"``).
    synthetic : bool
        The data is the bundled synthetic sample; the HTML carries a banner.
    generated_at : pandas.Timestamp
    data : dict
        The analysis results the sections were drawn from (``"transfers"``,
        ``"kpis"``, ``"matrix"``, ...), for further use.
    """

    title: str
    start: pd.Timestamp
    end: pd.Timestamp
    chains: tuple[str, ...] | None
    sections: tuple[Section, ...]
    provenance: dict[str, Any]
    synthetic: bool
    generated_at: pd.Timestamp
    data: dict[str, Any] = field(default_factory=dict, compare=False)

    def __repr__(self) -> str:
        tag = ", synthetic sample" if self.synthetic else ""
        return (
            f"Report({self.title!r}, {when(self.start)} to {when(self.end)}, "
            f"{len(self.sections)} sections, {len(self.figures)} figures{tag})"
        )

    @property
    def figures(self) -> list[EmbeddedFigure]:
        """Every figure, in order."""
        return [f for s in self.sections for f in s.figures]

    def section(self, section_id: str) -> Section:
        """The section with this ``id``.

        Raises
        ------
        KeyError
            Naming the ids there are.
        """
        for s in self.sections:
            if s.id == section_id:
                return s
        raise KeyError(f"no section {section_id!r}; sections: {[s.id for s in self.sections]}")

    def _body(self) -> str:
        nav = "".join(
            f'<li><a href="#{escape(s.id)}">{escape(s.title)}</a></li>' for s in self.sections
        )
        window = f"{when(self.start)} to {when(self.end)} (end excluded)"
        chains_text = ", ".join(self.chains) if self.chains else "all chains"
        parts = [
            '<div class="cctx-report">',
            f"<h1>{escape(self.title)}</h1>",
            f'<p class="subtitle">{escape(window)} &middot; {escape(chains_text)} &middot; '
            f"source: {escape(self.provenance.get('source', 'unknown'))}</p>",
        ]
        if self.synthetic:
            parts.append(
                synthetic_banner(self.provenance.get("source"), element_id="synthetic-banner")
            )
        for note in self.provenance.get("coverage_notes", ()):
            parts.append(
                '<div class="banner" role="note" id="coverage-note">'
                f"Partial data: {escape(note)}.</div>"
            )
        parts.append(f"<nav><ol>{nav}</ol></nav>")
        parts.extend(s.to_html() for s in self.sections)
        parts.append("</div>")
        return "".join(parts)

    def to_html(self) -> str:
        """One self-contained HTML document (figures embedded, no external assets).

        Addresses and transaction hashes are plain links to block explorers;
        nothing is loaded from them.

        Returns
        -------
        str
        """
        return (
            "<!DOCTYPE html>\n"
            '<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{escape(self.title)}</title><style>{CSS}</style></head>"
            f"<body>{self._body()}</body></html>\n"
        )

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write :meth:`to_html` to ``path`` (atomically: a temporary file, then rename).

        Parameters
        ----------
        path : str or path-like
            The file to write (see :func:`output_path`).

        Returns
        -------
        pathlib.Path
            The path written.
        """
        target = output_path(path)
        text = self.to_html()
        fd, tmp = tempfile.mkstemp(prefix=".report-", suffix=".html", dir=target.parent or ".")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        logger.info("report written to %s (%d bytes)", target, len(text.encode("utf-8")))
        return target

    def _repr_html_(self) -> str:
        return f"<style>{CSS}</style>{self._body()}"
