"""Self-contained HTML reports of CCTP activity.

:func:`build` fetches one window through a client, runs the analysis and
draws the figures; the :class:`Report` it returns renders to a single HTML
file with every figure embedded as a base64 PNG, a small inline stylesheet
and no script or external asset, so it opens anywhere without a network.

Sections, in order (their ``id`` in the HTML in brackets):

1. headline KPIs (``kpis``): the window's totals and the 24 h / 7 d / 30 d
   numbers against the period before;
2. flows (``flows``): the corridor graph, the flow matrix and the top corridors;
3. net flows (``net-flows``) per chain;
4. volume over time (``volume``): per source chain, mint against burn
   volume, and USDC in flight (burned, not yet minted);
5. ticket sizes (``sizes``);
6. seasonality (``seasonality``): hour of day x day of week, UTC;
7. top addresses and concentration (``addresses``);
8. provenance (``provenance``): source, window, generation time, library
   version, requests and cache hits, and a banner when the data is the
   synthetic sample.

Window
------
``start`` / ``end`` follow the client's convention (half-open ``[start,
end)``, naive times mean UTC). The default is the last 30 days up to now
(``end`` = now floored to the minute), which on the embedded default is the
whole synthetic sample.

Chains
------
``chains=`` keeps the transfers that *touch* one of the chains (as source or
destination). The mint and burn volume of the volume section comes from the
interface's ``volume`` operation, which has no chain filter, so it always
covers every chain; the report says so.

Examples
--------
>>> import cctx_research as cctx
>>> from cctx_research import report
>>> r = report.build(cctx.connect())  # doctest: +SKIP
>>> r.save("report.html")  # doctest: +SKIP
"""

from __future__ import annotations

import base64
import html
import io
import logging
import os
import tempfile
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from . import chains as chain_registry
from . import plots, times
from . import provenance as _provenance_mod
from ._version import __version__
from .analysis import addresses, flows, volumes
from .errors import CoverageWarning

__all__ = [
    "DEFAULT_DAYS",
    "SECTIONS",
    "EmbeddedFigure",
    "Report",
    "Section",
    "build",
    "default_window",
    "html_table",
    "is_synthetic",
    "render_png",
]

logger = logging.getLogger(__name__)

DEFAULT_DAYS = 30
"""Length of the default window, in days, ending now."""

SECTIONS: tuple[tuple[str, str], ...] = (
    ("kpis", "Headline KPIs"),
    ("flows", "Chain-to-chain flows"),
    ("net-flows", "Net flows per chain"),
    ("volume", "Volume over time"),
    ("sizes", "Ticket sizes"),
    ("seasonality", "Seasonality"),
    ("addresses", "Top addresses and concentration"),
    ("provenance", "Provenance"),
)
"""``(id, title)`` of every section, in the order they appear."""

_CSS = """
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
.cctx-report td.num { text-align: right; font-variant-numeric: tabular-nums; }
.cctx-report td.up { color: #1a7f37; }
.cctx-report td.down { color: #cf222e; }
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


# --------------------------------------------------------------------------
# small HTML helpers: every value goes through html.escape


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _when(ts: Any) -> str:
    if ts is None or (not isinstance(ts, str) and pd.isna(ts)):
        return "-"
    stamp = pd.Timestamp(ts)
    stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
    return stamp.strftime("%Y-%m-%d %H:%M UTC")


def _usd(value: float) -> str:
    if value is None or not np.isfinite(value):
        return "-"
    return f"{value:,.0f} USDC" if abs(value) >= 100 else f"{value:,.2f} USDC"


def _cell(value: Any, column: str) -> tuple[str, str]:
    """Text and CSS class of one table cell."""
    if value is None or (
        not isinstance(value, (str, bytes)) and np.ndim(value) == 0 and pd.isna(value)
    ):
        return "-", "num"
    if isinstance(value, pd.Timestamp):
        return _when(value), ""
    if isinstance(value, (bool, np.bool_)):
        return ("yes" if value else "no"), ""
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}", "num"
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if "share" in column:
            return f"{v * 100:,.1f}%", "num"
        return (f"{v:,.2f}" if abs(v) < 1000 else f"{v:,.0f}"), "num"
    return str(value), ""


def html_table(frame: pd.DataFrame, *, index: bool = False, caption: str | None = None) -> str:
    """An escaped HTML table of a frame, numbers formatted for reading."""
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    if caption is not None and not isinstance(caption, str):
        raise TypeError(f"caption must be a str or None, got {type(caption).__name__}")
    data = frame.reset_index() if index else frame
    head = "".join(f"<th>{_esc(c)}</th>" for c in data.columns)
    rows = []
    for record in data.itertuples(index=False, name=None):
        cells = []
        for column, value in zip(data.columns, record, strict=True):
            text, css = _cell(value, str(column))
            cls = f' class="{css}"' if css else ""
            cells.append(f"<td{cls}>{_esc(text)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    cap = f"<caption>{_esc(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _pairs(items: Iterable[tuple[str, Any]]) -> str:
    rows = "".join(f"<tr><th>{_esc(k)}</th><td>{_esc(v)}</td></tr>" for k, v in items)
    return f"<table>{rows}</table>"


# --------------------------------------------------------------------------
# figures


def render_png(
    draw: Callable[..., Any],
    data: Any,
    *,
    figsize: tuple[float, float] = (9.0, 4.5),
    dpi: int = 100,
    **kwargs: Any,
) -> bytes:
    """Draw ``draw(data, ax=ax, **kwargs)`` on a fresh figure and return PNG bytes.

    The figure is a bare :class:`matplotlib.figure.Figure`, not a pyplot
    one, so nothing is left open in pyplot's registry and no GUI backend
    is involved.

    Parameters
    ----------
    draw : callable
        A ``plot_*`` function of :mod:`cctx_research.plots`.
    data : object
        Its first argument.
    figsize : tuple of float
        Inches.
    dpi : int
    **kwargs
        Passed on to ``draw``.

    Returns
    -------
    bytes
        A PNG image.
    """
    if not callable(draw):
        raise TypeError(f"draw must be a plot function such as plots.plot_volume, got {draw!r}")
    if isinstance(dpi, bool) or not isinstance(dpi, int) or dpi < 1:
        raise ValueError(f"dpi must be a positive int, got {dpi!r}")
    if (
        not isinstance(figsize, (tuple, list))
        or len(figsize) != 2
        or not all(isinstance(v, (int, float)) and v > 0 for v in figsize)
    ):
        raise ValueError(f"figsize must be (width, height) in inches, got {figsize!r}")
    fig = Figure(figsize=figsize, dpi=dpi, layout="constrained")
    ax = fig.add_subplot()
    draw(data, ax=ax, **kwargs)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, facecolor="white")
    return buf.getvalue()


@dataclass(frozen=True)
class EmbeddedFigure:
    """One figure of a report: a PNG and what it shows."""

    name: str
    caption: str
    png: bytes = field(repr=False)

    def to_html(self) -> str:
        """``<figure>`` with the PNG as a ``data:`` URI."""
        b64 = base64.b64encode(self.png).decode("ascii")
        return (
            f'<figure id="fig-{_esc(self.name)}"><img alt="{_esc(self.caption)}" '
            f'src="data:image/png;base64,{b64}"><figcaption>{_esc(self.caption)}'
            "</figcaption></figure>"
        )


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
        :class:`EmbeddedFigure` objects.
    """

    id: str
    title: str
    parts: tuple[str | EmbeddedFigure, ...] = ()

    @property
    def figures(self) -> list[EmbeddedFigure]:
        """The figures of the section."""
        return [p for p in self.parts if isinstance(p, EmbeddedFigure)]

    def to_html(self) -> str:
        """``<section>`` with a heading and the parts."""
        body = "".join(p.to_html() if isinstance(p, EmbeddedFigure) else p for p in self.parts)
        return f'<section id="{_esc(self.id)}"><h2>{_esc(self.title)}</h2>{body}</section>'


@dataclass(frozen=True, repr=False)
class Report:
    """A built report (see :func:`build`): sections, provenance, the frames used.

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
        hits, per operation under ``"operations"``.
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
            f"Report({self.title!r}, {_when(self.start)} to {_when(self.end)}, "
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
            f'<li><a href="#{_esc(s.id)}">{_esc(s.title)}</a></li>' for s in self.sections
        )
        window = f"{_when(self.start)} to {_when(self.end)} (end excluded)"
        chains_text = ", ".join(self.chains) if self.chains else "all chains"
        parts = [
            '<div class="cctx-report">',
            f"<h1>{_esc(self.title)}</h1>",
            f'<p class="subtitle">{_esc(window)} &middot; {_esc(chains_text)} &middot; '
            f"source: {_esc(self.provenance.get('source', 'unknown'))}</p>",
        ]
        if self.synthetic:
            parts.append(_banner(self.provenance.get("source")))
        for note in self.provenance.get("coverage_notes", ()):
            parts.append(
                '<div class="banner" role="note" id="coverage-note">'
                f"Partial data: {_esc(note)}.</div>"
            )
        parts.append(f"<nav><ol>{nav}</ol></nav>")
        parts.extend(s.to_html() for s in self.sections)
        parts.append("</div>")
        return "".join(parts)

    def to_html(self) -> str:
        """One self-contained HTML document (figures embedded, no external assets).

        Returns
        -------
        str
        """
        return (
            "<!DOCTYPE html>\n"
            '<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{_esc(self.title)}</title><style>{_CSS}</style></head>"
            f"<body>{self._body()}</body></html>\n"
        )

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write :meth:`to_html` to ``path`` (atomically: a temporary file, then rename).

        Parameters
        ----------
        path : str or path-like
            The file to write; its directory must exist.

        Returns
        -------
        pathlib.Path
            The path written.
        """
        target = Path(path).expanduser()
        if target.is_dir():
            raise IsADirectoryError(
                f"{target} is a directory; pass a file name such as report.html"
            )
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
        return f"<style>{_CSS}</style>{self._body()}"


def _banner(source: Any) -> str:
    what = _esc(source or "the bundled synthetic sample")
    return (
        '<div class="banner" role="note" id="synthetic-banner">'
        f"Synthetic data: this report is built on the {what}, not on real CCTP transfers. "
        "Set CCTX_API_KEY and CCTX_PROJECT_ID to report on the real service.</div>"
    )


# --------------------------------------------------------------------------
# building


def default_window(
    start: times.TimeLike | None = None,
    end: times.TimeLike | None = None,
    *,
    days: int = DEFAULT_DAYS,
    now: times.TimeLike | None = None,
) -> tuple[pd.Timestamp, pd.Timestamp]:
    """Resolve a report window: missing ends default to the last ``days`` days.

    Parameters
    ----------
    start, end : time, optional
        Naive times mean UTC.
    days : int, default 30
    now : time, optional
        The clock (default: now, floored to the minute).

    Returns
    -------
    tuple of pandas.Timestamp
        ``(start, end)``, tz-aware UTC.

    Raises
    ------
    ValueError
        If ``start >= end``.

    Examples
    --------
    >>> start, end = default_window(now="2024-07-01")
    >>> start.isoformat(), end.isoformat()
    ('2024-06-01T00:00:00+00:00', '2024-07-01T00:00:00+00:00')
    """
    if isinstance(days, bool) or not isinstance(days, int) or days < 1:
        raise ValueError(f"days must be a positive int, got {days!r}")
    length = pd.Timedelta(days=days)
    if end is not None:
        end_ts = times.to_timestamp(end, name="end")
    elif start is not None:
        end_ts = times.to_timestamp(start, name="start") + length
        if now is None:
            end_ts = min(end_ts, pd.Timestamp.now(tz="UTC").ceil("min"))
    else:
        clock = pd.Timestamp.now(tz="UTC") if now is None else times.to_timestamp(now, name="now")
        end_ts = clock.floor("min")
    start_ts = times.to_timestamp(start, name="start") if start is not None else end_ts - length
    if start_ts >= end_ts:
        raise ValueError(
            f"start ({start_ts.isoformat()}) must be before end ({end_ts.isoformat()}); "
            "windows are half-open [start, end)"
        )
    return start_ts, end_ts


def bucket_for(start: pd.Timestamp, end: pd.Timestamp) -> str:
    """The time bucket used for a window: hours up to 3 days, days up to 120, then weeks."""
    length = end - start
    if length <= pd.Timedelta(days=3):
        return "1h"
    if length <= pd.Timedelta(days=120):
        return "1D"
    return "7D"


def chain_names(values: Any) -> tuple[str, ...] | None:
    """Normalise ``chains=`` (names, aliases or domain ids) to canonical names."""
    ids = chain_registry.domains(values)
    return None if ids is None else tuple(chain_registry.chain_name(d) for d in ids)


def touching(transfers: pd.DataFrame, names: Sequence[str] | None) -> pd.DataFrame:
    """The transfers whose source or destination is one of ``names`` (all when None)."""
    if not names:
        return transfers
    keep = transfers["source_chain"].astype(str).isin(names) | transfers[
        "destination_chain"
    ].astype(str).isin(names)
    out = transfers.loc[keep]
    out.attrs = dict(transfers.attrs)
    return out


def _record(frame: Any) -> Mapping[str, Any]:
    attrs = getattr(frame, "attrs", None) or {}
    record = attrs.get("cctx", {})
    return record if isinstance(record, Mapping) else {}


def _number(record: Mapping[str, Any], *names: str) -> int:
    for name in names:
        value = record.get(name)
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return int(value)
    return 0


_SECRET_WORDS = ("key", "secret", "token", "password", "auth")


def _safe_parameters(parameters: Any) -> str:
    if not isinstance(parameters, Mapping):
        return "" if parameters is None else str(parameters)
    shown = []
    for k, v in parameters.items():
        if any(w in str(k).lower() for w in _SECRET_WORDS):
            continue
        if v is None:
            continue
        shown.append(f"{k}={v}")
    return ", ".join(shown)


def is_synthetic(*frames: Any) -> bool:
    """Whether any frame's provenance record flags synthetic data."""
    return _provenance_mod.is_synthetic(*(f for f in frames if hasattr(f, "attrs")))


def _provenance(
    frames: Mapping[str, Any],
    *,
    start: pd.Timestamp,
    end: pd.Timestamp,
    chains: tuple[str, ...] | None,
    generated_at: pd.Timestamp,
    synthetic: bool,
) -> dict[str, Any]:
    operations = []
    sources = []
    for label, frame in frames.items():
        record = _record(frame)
        source = record.get("source")
        if source and source not in sources:
            sources.append(str(source))
        operations.append(
            {
                "data": label,
                "operation": str(record.get("operation", label)),
                "parameters": _safe_parameters(record.get("parameters")),
                "requests": _number(record, "requests"),
                "cache_hits": _number(record, "cache_hits", "cached", "from_cache"),
            }
        )
    return {
        "source": "; ".join(sources) if sources else "unknown",
        "synthetic": synthetic,
        "start": start,
        "end": end,
        "chains": ", ".join(chains) if chains else "all",
        "generated_at": generated_at,
        "library_version": __version__,
        "requests": sum(o["requests"] for o in operations),
        "cache_hits": sum(o["cache_hits"] for o in operations),
        "operations": operations,
    }


def _figure(name: str, caption: str, draw: Callable[..., Any], data: Any, **kw: Any) -> Any:
    try:
        return EmbeddedFigure(name, caption, render_png(draw, data, **kw))
    except Exception as exc:
        # A figure that cannot be drawn must not lose the rest of the report;
        # say so in its place (and in the log, with the traceback).
        logger.warning("figure %r could not be drawn: %s", name, exc, exc_info=True)
        return f'<p class="error">Figure {_esc(name)} could not be drawn: {_esc(exc)}</p>'


def _note(text: str) -> str:
    return f'<p class="note">{_esc(text)}</p>'


def _cards(items: Sequence[tuple[str, str]]) -> str:
    cards = "".join(
        f'<div class="card"><div class="value">{_esc(v)}</div>'
        f'<div class="label">{_esc(k)}</div></div>'
        for k, v in items
    )
    return f'<div class="cards">{cards}</div>'


def build(
    client: Any,
    start: times.TimeLike | None = None,
    end: times.TimeLike | None = None,
    *,
    chains: Any = None,
    title: str = "CCTP cross-chain USDC transfers",
    top_n: int = 10,
    progress: bool = False,
) -> Report:
    """Fetch a window through ``client``, analyse it and draw every section.

    Parameters
    ----------
    client : cctx_research.Client
        From :func:`cctx_research.connect`. Only its public methods
        ``mints`` and ``volume_history`` are used (two fetches, both cached by
        the client).
    start, end : time, optional
        The half-open window ``[start, end)``; naive means UTC. Default: the
        30 days up to now (see :func:`default_window`).
    chains : chain or list of chains, optional
        Keep the transfers touching any of these chains (names, aliases or
        domain ids). The mint/burn volume and in-flight figures always cover
        every chain.
    title : str
        The report's heading.
    top_n : int, default 10
        Rows of the top-address and top-corridor tables.
    progress : bool, default False
        Show a progress bar (tqdm, on stderr or in the notebook) over the
        steps.

    Returns
    -------
    Report

    Raises
    ------
    ValueError, TypeError
        For a bad window or chain.
    cctx_research.errors.CctxError
        When fetching fails.

    Examples
    --------
    >>> r = build(cctx.connect(), chains=["base", "arbitrum"])  # doctest: +SKIP
    >>> r.save("report.html")  # doctest: +SKIP
    """
    if not callable(getattr(client, "mints", None)) or not callable(
        getattr(client, "volume_history", None)
    ):
        raise TypeError(f"client must be a cctx_research.Client (from connect()), got {client!r}")
    if not isinstance(title, str):
        raise TypeError(f"title must be a str, got {type(title).__name__}")
    start_ts, end_ts = default_window(start, end)
    names = chain_names(chains)
    if isinstance(top_n, bool) or not isinstance(top_n, int) or top_n < 1:
        raise ValueError(f"top_n must be a positive int, got {top_n!r}")
    freq = bucket_for(start_ts, end_ts)

    from tqdm.auto import tqdm

    steps = ["transfers", "volume history", "analysis", "figures"]
    bar = tqdm(total=len(steps), desc="report", unit="step", disable=not progress, leave=False)
    try:
        with warnings.catch_warnings(record=True) as shown:
            warnings.simplefilter("always")
            bar.set_postfix_str("fetching transfers")
            fetched = client.mints(start_ts, end_ts)
            transfers = touching(fetched, names)
            bar.update(1)

            bar.set_postfix_str("fetching volume history")
            history = client.volume_history(start_ts, end_ts, freq=freq)
            bar.update(1)
        # the coverage warnings go on to the caller (CLI, notebook) and into the report
        notes = list(dict.fromkeys(str(w.message) for w in shown
                                   if issubclass(w.category, CoverageWarning)))
        for w in shown:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)

        bar.set_postfix_str("analysing")
        results = _analyse(transfers, history, end=end_ts, freq=freq, top_n=top_n)
        bar.update(1)

        bar.set_postfix_str("drawing")
        generated_at = pd.Timestamp.now(tz="UTC")
        synthetic = is_synthetic(fetched, history)
        prov = _provenance(
            {"transfers": fetched, "volume history": history},
            start=start_ts,
            end=end_ts,
            chains=names,
            generated_at=generated_at,
            synthetic=synthetic,
        )
        prov["coverage_notes"] = notes
        sections = _sections(results, prov, freq=freq, chains=names)
        if notes and fetched.empty:
            # nothing of the window is held: the note, not a page of zeros
            sections = [s for s in sections if s.id == "provenance"]
        bar.update(1)
    finally:
        bar.close()
    results["transfers"] = transfers
    results["volume_history"] = history
    return Report(
        title=title,
        start=start_ts,
        end=end_ts,
        chains=names,
        sections=tuple(sections),
        provenance=prov,
        synthetic=synthetic,
        generated_at=generated_at,
        data=results,
    )


def _analyse(
    transfers: pd.DataFrame,
    history: pd.DataFrame,
    *,
    end: pd.Timestamp,
    freq: str,
    top_n: int,
) -> dict[str, Any]:
    recipients_all = addresses.top(transfers, role="recipient", n=None)
    return {
        "senders": int(transfers["message_sender"].nunique()),
        "recipients": int(transfers["mint_recipient"].nunique()),
        "kpis": volumes.kpis(transfers, now=end),
        "graph": flows.graph(transfers),
        "matrix": flows.matrix(transfers),
        "corridors": flows.corridors(transfers, n=top_n),
        "net": flows.net(transfers),
        "timeseries": volumes.timeseries(transfers, freq=freq, by="source_chain"),
        "in_flight": volumes.in_flight(history),
        "sizes": volumes.size_buckets(transfers),
        "seasonality": volumes.seasonality(transfers),
        "top_recipients": recipients_all.head(top_n),
        "top_senders": addresses.top(transfers, role="sender", n=top_n),
        "concentration": addresses.concentration(recipients_all["volume"]),
    }


def _sections(
    r: dict[str, Any], prov: dict[str, Any], *, freq: str, chains: tuple[str, ...] | None
) -> list[Section]:
    kpis = r["kpis"]
    sizes = r["sizes"]
    conc = r["concentration"]
    net = r["net"]
    history_frame = r["in_flight"]
    n_transfers = int(sizes.count)
    median = sizes.quantiles.get(0.5, float("nan"))
    scope = f"transfers touching {', '.join(chains)}" if chains else "all chains"

    kpi_table = _kpi_table(kpis)
    sections = [
        Section(
            "kpis",
            "Headline KPIs",
            (
                _cards(
                    [
                        ("transfers in the window", f"{n_transfers:,}"),
                        ("volume in the window", _usd(sizes.volume)),
                        ("median ticket", _usd(median)),
                        ("senders in the window", f"{r['senders']:,}"),
                        ("recipients in the window", f"{r['recipients']:,}"),
                    ]
                ),
                _note(
                    f"Scope: {scope}. Each period ends at the end of the window and is "
                    "compared with the period of the same length before it; change is "
                    "'-' when the earlier period holds no data."
                ),
                kpi_table,
            ),
        ),
        Section(
            "flows",
            "Chain-to-chain flows",
            (
                _figure(
                    "flow-graph",
                    "Corridor graph: chains as nodes, edge width by volume",
                    plots.plot_flow_graph,
                    r["graph"],
                    figsize=(8.0, 6.0),
                ),
                _figure(
                    "flow-matrix",
                    "Flow matrix: USDC from source chain (rows) to destination chain (columns)",
                    plots.plot_flow_matrix,
                    r["matrix"],
                    figsize=(8.0, 6.5),
                ),
                "<h3>Top corridors</h3>",
                html_table(r["corridors"]),
            ),
        ),
        Section(
            "net-flows",
            "Net flows per chain",
            (
                _figure(
                    "net-flows",
                    "Inflow minus outflow per chain (USDC)",
                    plots.plot_net_flows,
                    net,
                ),
                html_table(net),
            ),
        ),
        Section(
            "volume",
            "Volume over time",
            (
                _figure(
                    "volume",
                    f"Minted volume per source chain, buckets of {freq} (UTC)",
                    plots.plot_volume,
                    r["timeseries"],
                ),
                _figure(
                    "in-flight",
                    "Burn against mint volume, and USDC in flight (burned, not yet minted)",
                    plots.plot_in_flight,
                    history_frame,
                ),
                _note(
                    "Mint and burn volume and in-flight come from the interface's volume "
                    "operation, which covers every chain whatever the chain selection. "
                    "In flight is relative to the start of the window: USDC already in "
                    "flight before it counts as zero."
                ),
            ),
        ),
        Section(
            "sizes",
            "Ticket sizes",
            (
                _figure(
                    "size-distribution",
                    "Transfers and volume per ticket-size class",
                    plots.plot_size_distribution,
                    sizes,
                ),
                html_table(sizes.classes),
                html_table(
                    sizes.quantiles.rename("amount (USDC)").rename_axis("quantile").to_frame(),
                    index=True,
                ),
            ),
        ),
        Section(
            "seasonality",
            "Seasonality",
            (
                _figure(
                    "seasonality",
                    "Transfers by hour of day (UTC) and day of week",
                    plots.plot_seasonality,
                    r["seasonality"],
                    figsize=(9.0, 4.0),
                ),
            ),
        ),
        Section(
            "addresses",
            "Top addresses and concentration",
            (
                "<h3>Top recipients (by volume received)</h3>",
                html_table(r["top_recipients"]),
                "<h3>Top senders (by volume sent; often router contracts)</h3>",
                html_table(r["top_senders"]),
                "<h3>Concentration of volume received</h3>",
                _pairs(
                    [
                        ("recipients", f"{conc.n:,}"),
                        ("Gini", "-" if np.isnan(conc.gini) else f"{conc.gini:.3f}"),
                        ("HHI", "-" if np.isnan(conc.hhi) else f"{conc.hhi:.4f}"),
                        ("top 1 share", _share(conc.top1_share)),
                        ("top 10 share", _share(conc.top10_share)),
                        ("top 100 share", _share(conc.top100_share)),
                    ]
                ),
                _figure(
                    "lorenz",
                    "Lorenz curve of volume received per address",
                    plots.plot_lorenz,
                    conc,
                    figsize=(6.0, 5.0),
                ),
            ),
        ),
        _provenance_section(prov),
    ]
    return sections


def _kpi_table(kpis: pd.DataFrame) -> str:
    """The KPI frame as a table: one row per period and metric, values formatted by metric."""
    rows = []
    for (period, metric), row in kpis.iterrows():
        fmt = _usd if metric == "volume" else (lambda v: "-" if np.isnan(v) else f"{v:,.0f}")
        change = row["change"]
        if np.isnan(change):
            change_text, css = "-", "num"
        else:
            change_text = f"{'+' if change > 0 else ''}{change * 100:,.1f}%"
            css = "num up" if change > 0 else "num down" if change < 0 else "num"
        rows.append(
            f"<tr><td>{_esc(period)}</td><td>{_esc(metric)}</td>"
            f"<td>{_esc(_when(row['start']))}</td><td>{_esc(_when(row['end']))}</td>"
            f'<td class="num">{_esc(fmt(float(row["current"])))}</td>'
            f'<td class="num">{_esc(fmt(float(row["previous"])))}</td>'
            f'<td class="{css}">{_esc(change_text)}</td></tr>'
        )
    head = "".join(
        f"<th>{h}</th>" for h in ("period", "metric", "from", "to", "current", "previous", "change")
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _share(value: float) -> str:
    return "-" if value is None or np.isnan(value) else f"{value * 100:,.1f}%"


def _provenance_section(prov: dict[str, Any]) -> Section:
    parts: list[str | EmbeddedFigure] = []
    if prov.get("synthetic"):
        parts.append(_banner(prov.get("source")))
    parts.append(
        _pairs(
            [
                ("source", prov["source"]),
                ("synthetic sample", "yes" if prov.get("synthetic") else "no"),
                ("window", f"{_when(prov['start'])} to {_when(prov['end'])} (end excluded)"),
                ("chains", prov["chains"]),
                ("generated at", _when(prov["generated_at"])),
                ("library", f"cctx_research {prov['library_version']}"),
                ("requests", f"{prov['requests']:,}"),
                ("cache hits", f"{prov['cache_hits']:,}"),
            ]
        )
    )
    ops = pd.DataFrame(prov["operations"])
    if len(ops):
        parts.append("<h3>Fetches</h3>")
        parts.append(html_table(ops))
    return Section("provenance", "Provenance", tuple(parts))
