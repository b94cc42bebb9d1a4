"""HTML pieces shared by the report and the widgets.

Every value that ends up in HTML goes through :func:`escape` (here, once);
tables format numbers for reading and head their columns as a person reads
them, with units (:func:`html_table`, :mod:`.columns`); figures are drawn on
bare matplotlib figures and embedded as PNG (:func:`render_png`,
:class:`EmbeddedFigure`); addresses and transaction hashes link to their
chain's block explorer (:func:`address_link`, :func:`tx_link`, and
``links=`` of :func:`html_table`); data from the synthetic sample carries
:func:`synthetic_banner`.

Nothing here loads an external asset: a figure is a ``data:`` URI and a link
is a plain ``<a href>`` a reader may follow.

Examples
--------
>>> escape('<b>"x"</b>')
'&lt;b&gt;&quot;x&quot;&lt;/b&gt;'
>>> usd(1234.6), usd(12.345), share(0.1234)
('1,235 USDC', '12.35 USDC', '12.3%')
>>> address_link("base", "0x" + "ab" * 20)[:60]
'<a href="https://basescan.org/address/0xabababababababababab'
>>> address_link("domain-42", "0xab<")
'0xab&lt;'
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from . import explorers, values
from .columns import displayed, header

__all__ = [
    "EmbeddedFigure",
    "address_link",
    "cards",
    "escape",
    "field_table",
    "html_table",
    "link",
    "note",
    "pairs",
    "render_png",
    "share",
    "shorten",
    "synthetic_banner",
    "tx_link",
    "usd",
    "when",
]

_LINK_KINDS = ("address", "tx")
# inline styles as well as classes: widgets show these pieces without the
# report's stylesheet
_BANNER_STYLE = (
    "background:#fff4ce;border:2px solid #d4a72c;color:#4d2d00;padding:8px 12px;"
    "border-radius:6px;font-weight:600;margin:8px 0"
)


def escape(value: Any) -> str:
    """``str(value)`` escaped for HTML text and attribute values (quotes included)."""
    return html.escape(str(value), quote=True)


def when(ts: Any) -> str:
    """A time as ``YYYY-MM-DD HH:MM UTC`` (``"-"`` when missing); naive means UTC."""
    if ts is None or (not isinstance(ts, str) and pd.isna(ts)):
        return "-"
    stamp = pd.Timestamp(ts)
    stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
    return stamp.strftime("%Y-%m-%d %H:%M UTC")


def usd(value: Any) -> str:
    """An amount of USDC: whole units from 100 up, cents below; ``"-"`` when missing."""
    if value is None or not np.isfinite(value):
        return "-"
    return f"{value:,.0f} USDC" if abs(value) >= 100 else f"{value:,.2f} USDC"


def share(value: Any) -> str:
    """A fraction as a percentage with one decimal; ``"-"`` when missing."""
    return "-" if value is None or not np.isfinite(value) else f"{value * 100:,.1f}%"


def link(url: str | None, text: Any, *, title: str | None = None) -> str:
    """``<a href>`` to ``url`` showing ``text`` (all escaped); the plain text when no URL.

    ``title`` is the tooltip (the full value when ``text`` is shortened).
    """
    if url is None:
        return escape(text)
    tip = f' title="{escape(title)}"' if title else ""
    return f'<a href="{escape(url)}" rel="noopener noreferrer"{tip}>{escape(text)}</a>'


def shorten(value: Any, *, keep: int = 6) -> str:
    """A long hash as its first and last characters (``0x7c8196…32d6ef``); short values as is.

    Examples
    --------
    >>> shorten("0x" + "ab" * 32)
    '0xababab…ababab'
    >>> shorten("0x12")
    '0x12'
    """
    text = str(value)
    head = keep + (2 if text.startswith("0x") else 0)
    return text if len(text) <= head + keep + 1 else f"{text[:head]}…{text[-keep:]}"


def address_link(chain: Any, address: Any, text: Any = None) -> str:
    """An account linked to its page on ``chain``'s explorer (escaped text when none fits).

    See :func:`cctx_research.views.explorers.address_url` for what gets a link.
    """
    return link(explorers.address_url(chain, address), address if text is None else text)


def tx_link(chain: Any, tx_hash: Any, text: Any = None) -> str:
    """A transaction linked to its page on ``chain``'s explorer (escaped text when none fits).

    The hash is shown in full unless ``text`` says otherwise (the full hash
    is then the link's tooltip).
    """
    shown = tx_hash if text is None else text
    title = str(tx_hash) if str(shown) != str(tx_hash) else None
    return link(explorers.tx_url(chain, tx_hash), shown, title=title)


_NO_CENTS = "\u2008\u2007\u2007"
"""Where ``.00`` would be, in blank space as wide (punctuation and figure spaces)."""


def _cell(value: Any, column: str, decimals: int | None = None) -> tuple[str, str]:
    """Text and CSS class of one table cell.

    A plain float gets ``decimals`` decimals; with None, two below 1,000 and
    none from 1,000 up, followed by blank space as wide as the two (so that
    a column's decimal points line up). Chains, routes, seconds and missing
    labels read as :mod:`.values` writes them, by the column's name.
    """
    if value is None or (
        not isinstance(value, (str, bytes)) and np.ndim(value) == 0 and pd.isna(value)
    ):
        return (values.UNLABELLED, "") if column.endswith("_label") else ("-", "num")
    if column in values.CHAIN_COLUMNS and isinstance(value, str):
        return values.chain_text(value), ""
    if column in values.ROUTE_COLUMNS and isinstance(value, str):
        return values.route_text(value), ""
    if values.is_duration(column) and isinstance(value, (int, float, np.integer, np.floating)):
        return values.duration(value), "num"
    if isinstance(value, pd.Timestamp):
        return when(value), ""
    if isinstance(value, (bool, np.bool_)):
        return ("yes" if value else "no"), ""
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}", "num"
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if "share" in column:
            return f"{v * 100:,.1f}%", "num"
        if np.isinf(v):
            return ("∞" if v > 0 else "-∞"), "num"
        if decimals is None:
            return (f"{v:,.2f}" if abs(v) < 1000 else f"{v:,.0f}{_NO_CENTS}"), "num"
        return f"{v:,.{decimals}f}", "num"
    return str(value), ""


def _decimals(values: pd.Series) -> int | None:
    """How a float column is written so that its numbers line up (see :func:`_cell`).

    0 when every value is whole, or 1,000 and more; None (cents below
    1,000, blank space where they would be above) for a column of both.
    """
    if not pd.api.types.is_float_dtype(values.dtype):
        return None
    finite = values.to_numpy(dtype="float64", na_value=np.nan)
    finite = finite[np.isfinite(finite)]
    if (finite == np.round(finite)).all() or (np.abs(finite) >= 1000).all():
        return 0
    return None


def _numeric(values: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(
        values.dtype
    )


def _link_specs(
    links: Mapping[str, tuple[str, str]] | None, columns: Sequence[Any]
) -> dict[str, tuple[str, str]]:
    if links is None:
        return {}
    if not isinstance(links, Mapping):
        raise TypeError(
            "links must map a column to (kind, chain column), e.g. "
            "{'address': ('address', 'chain')}, got " + type(links).__name__
        )
    names = [str(c) for c in columns]
    specs: dict[str, tuple[str, str]] = {}
    for column, spec in links.items():
        if not (isinstance(spec, tuple) and len(spec) == 2 and spec[0] in _LINK_KINDS):
            raise ValueError(
                f"links[{column!r}] must be (kind, chain column) with kind one of "
                f"{list(_LINK_KINDS)}, got {spec!r}"
            )
        for needed in (column, spec[1]):
            if needed not in names:
                raise ValueError(f"links name {needed!r}, which is not among {names}")
        specs[str(column)] = spec
    return specs


def html_table(
    frame: pd.DataFrame,
    *,
    index: bool = False,
    caption: str | None = None,
    links: Mapping[str, tuple[str, str]] | None = None,
) -> str:
    """An escaped HTML table of a frame, for reading: human headers, aligned numbers.

    Columns are headed as :func:`cctx_research.views.columns.header` writes
    them (``volume (USDC)``, ``from``, ``fee rate (bps)``); an exact
    ``*_raw`` twin beside its USDC amount is left out (the frame keeps it).
    Numbers are right-aligned (class ``num``, their headers too), with one
    number of decimals per column; shares are percentages.

    Parameters
    ----------
    frame : pandas.DataFrame
    index : bool, default False
        Show the index as the first columns.
    caption : str, optional
    links : mapping, optional
        ``{column: (kind, chain_column)}``: link each value of ``column`` to
        the explorer of the chain in ``chain_column`` of the same row;
        ``kind`` is ``"address"`` or ``"tx"`` (hashes are shown shortened,
        with the full hash as the tooltip).

    Returns
    -------
    str

    Examples
    --------
    >>> frame = pd.DataFrame({"chain": ["base"], "address": ["0x" + "ab" * 20], "share": [0.5]})
    >>> text = html_table(frame, links={"address": ("address", "chain")})
    >>> 'href="https://basescan.org/address/0xab' in text, "50.0%" in text
    (True, True)
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    if caption is not None and not isinstance(caption, str):
        raise TypeError(f"caption must be a str or None, got {type(caption).__name__}")
    data = frame.reset_index() if index else frame
    specs = _link_specs(links, list(data.columns))
    data = data[displayed(data.columns)]
    position = {str(c): i for i, c in enumerate(data.columns)}
    decimals = [_decimals(data.iloc[:, i]) for i in range(data.shape[1])]
    num = ' class="num"'
    head = "".join(
        f"<th{num if _numeric(data.iloc[:, i]) else ''}>{escape(header(c))}</th>"
        for i, c in enumerate(data.columns)
    )
    rows = []
    for record in data.itertuples(index=False, name=None):
        cells = []
        for k, (column, value) in enumerate(zip(data.columns, record, strict=True)):
            text, css = _cell(value, str(column), decimals[k])
            spec = specs.get(str(column))
            if spec is not None and css != "num":
                chain = record[position[spec[1]]]
                if spec[0] == "address":
                    content = address_link(chain, value, text)
                else:  # a hash is long: shown shortened, in full as the tooltip
                    content = tx_link(chain, value, shorten(text))
            else:
                content = escape(text)
            cls = f' class="{css}"' if css else ""
            cells.append(f"<td{cls}>{content}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    cap = f"<caption>{escape(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def field_table(
    row: pd.Series, *, links: Mapping[str, tuple[str, str]] | None = None
) -> str:
    """One record as a two-column ``field`` / ``value`` table, values formatted and escaped.

    Each field is named as :func:`cctx_research.views.columns.header` writes
    it (``transaction``, ``amount (USDC)``, ``from``), as in :func:`html_table`.

    Parameters
    ----------
    row : pandas.Series
        Field names in the index.
    links : mapping, optional
        ``{field: (kind, chain_field)}``: link the value of ``field`` to the
        explorer of the chain held in ``chain_field`` of the same record;
        ``kind`` is ``"address"`` or ``"tx"``.

    Returns
    -------
    str

    Examples
    --------
    >>> row = pd.Series({"tx_hash": "0x" + "0f" * 32, "source_chain": "ethereum"})
    >>> text = field_table(row, links={"tx_hash": ("tx", "source_chain")})
    >>> "https://etherscan.io/tx/0x0f0f" in text
    True
    """
    if not isinstance(row, pd.Series):
        raise TypeError(f"row must be a pandas Series, got {type(row).__name__}")
    names = [str(i) for i in row.index]
    specs = _link_specs(links, names)
    values = dict(zip(names, row.to_numpy(), strict=True))
    rows = []
    for name, value in values.items():
        text, css = _cell(value, name)
        spec = specs.get(name)
        if spec is not None and css != "num":
            maker = address_link if spec[0] == "address" else tx_link
            content = maker(values[spec[1]], value, text)
        else:
            content = escape(text)
        cls = f' class="{css}"' if css else ""
        rows.append(f"<tr><th>{escape(header(name))}</th><td{cls}>{content}</td></tr>")
    head = "<thead><tr><th>field</th><th>value</th></tr></thead>"
    return f"<table>{head}<tbody>{''.join(rows)}</tbody></table>"


def pairs(items: Iterable[tuple[str, Any]]) -> str:
    """A two-column table of ``(name, value)`` pairs, escaped."""
    rows = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in items)
    return f"<table>{rows}</table>"


def note(text: str) -> str:
    """A muted one-paragraph note, escaped."""
    return f'<p class="note">{escape(text)}</p>'


_CARD_STYLES = (
    "display:flex;flex-wrap:wrap;gap:10px;margin:0.5em 0 1em",
    "border:1px solid #d0d7de;border-radius:6px;padding:8px 14px;min-width:150px",
    "font-size:1.35em;font-weight:600",
    "color:#57606a;font-size:0.85em",
)


def cards(items: Sequence[tuple[str, str]]) -> str:
    """Headline figures as cards: ``(label, value)`` pairs, escaped.

    Styled inline as well as by class, so that they read as cards in a
    notebook or a widget, where the report's stylesheet is not. The value
    carries the unit (``"1,234 USDC"``); the label names what is counted.
    """
    box, card, value, label = _CARD_STYLES
    body = "".join(
        f'<div class="card" style="{card}"><div class="value" style="{value}">{escape(v)}</div>'
        f'<div class="label" style="{label}">{escape(k)}</div></div>'
        for k, v in items
    )
    return f'<div class="cards" style="{box}">{body}</div>'


def synthetic_banner(
    source: Any = None, *, subject: str = "this report is", element_id: str | None = None
) -> str:
    """The banner data from the synthetic sample carries, wherever it is shown.

    Parameters
    ----------
    source : str, optional
        The provenance record's source (default: "the bundled synthetic sample").
    subject : str
        What the banner speaks of ("this report is", "these figures are").
    element_id : str, optional
        ``id`` of the element (the report's is ``"synthetic-banner"``).

    Examples
    --------
    >>> "Synthetic data" in synthetic_banner()
    True
    """
    what = escape(source or "bundled synthetic sample")
    ident = f' id="{escape(element_id)}"' if element_id else ""
    return (
        f'<div class="banner" role="note"{ident} style="{_BANNER_STYLE}">'
        f"Synthetic data: {escape(subject)} built on the {what.removeprefix('the ')}, "
        "not on real CCTP transfers. "
        "Set CCTX_API_KEY and CCTX_PROJECT_ID to use the real service.</div>"
    )


# zlib's level for the figures' PNGs (lossless at any level: the same pixels). Pillow's
# default, zlib's 6, took twice the time to encode the 30-day sample report's eleven
# figures (0.42 s against 0.22 s, Pillow alone) for files 2 % larger (1,114 KiB against
# 1,094); drawn whole, the eleven take 3.46 s instead of 3.56 (medians of six, alternating).
_PNG_COMPRESS_LEVEL = 3


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
    from matplotlib.figure import Figure  # here: a page whose figures are kept never loads it

    fig = Figure(figsize=figsize, dpi=dpi, layout="constrained")
    ax = fig.add_subplot()
    draw(data, ax=ax, **kwargs)
    # The layout is computed once, then the engine is dropped: with a layout engine set,
    # savefig draws the whole figure twice (a dry run to lay it out, then the picture) and
    # lays it out in each; without one, it draws once. The positions are those the layout
    # found, so the picture is the same, pixel for pixel.
    fig.get_layout_engine().execute(fig)
    fig.set_layout_engine(None)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, facecolor="white",
                pil_kwargs={"compress_level": _PNG_COMPRESS_LEVEL})  # fmt: skip
    return buf.getvalue()


@dataclass(frozen=True)
class EmbeddedFigure:
    """One figure: a PNG and what it shows."""

    name: str
    caption: str
    png: bytes = field(repr=False)

    def to_html(self) -> str:
        """``<figure>`` with the PNG as a ``data:`` URI."""
        b64 = base64.b64encode(self.png).decode("ascii")
        return (
            f'<figure id="fig-{escape(self.name)}"><img alt="{escape(self.caption)}" '
            f'src="data:image/png;base64,{b64}"><figcaption>{escape(self.caption)}'
            "</figcaption></figure>"
        )
