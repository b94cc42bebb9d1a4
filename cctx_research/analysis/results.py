"""What an analysis result says about itself: one frozen record, written and read here.

Every analysis function that returns a frame (or a graph) records how it
was computed in a :class:`ResultInfo`: the ``span`` of the data it saw
(first and last timestamp), and the options that shape the result
(``freq``, ``by``, ``role``, ``values``, ``as_of``, ...). The plots title
with the span, the report and the widgets read the options: all of them
through :func:`result_info`, never through loose keys.

``span`` is the data seen, not a request: the half-open window
``[start, end)`` a frame was fetched for is in its provenance
(:func:`cctx_research.provenance.provenance`).

Examples
--------
>>> import pandas as pd
>>> frame = describe(pd.DataFrame(), span=(None, None), freq="1D")
>>> result_info(frame).freq
'1D'
>>> result_info(pd.DataFrame()).span
(None, None)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

__all__ = ["ATTR", "ResultInfo", "describe", "result_info", "span_of"]

ATTR = "cctx_result"
"""The key of ``frame.attrs`` (or ``graph.graph``) that holds a result's :class:`ResultInfo`."""

Span = tuple[pd.Timestamp | None, pd.Timestamp | None]


@dataclass(frozen=True)
class ResultInfo:
    """How an analysis result was computed.

    Parameters
    ----------
    span : tuple of (Timestamp or None, Timestamp or None)
        First and last timestamp of the data the result was computed from
        (both inclusive); ``(None, None)`` for no data.
    freq : str, optional
        The time bucket (``"1D"``), for results over time.
    by : str or tuple of str, optional
        The grouping (``"source_chain"``; the group columns of a latency
        table; ``"volume"`` or ``"count"`` for a ranking).
    role : str, optional
        ``"recipient"`` or ``"sender"``, for address rankings.
    values : str, optional
        ``"volume"`` or ``"count"``, for a flow matrix.
    as_of : Timestamp, optional
        The clock pending transfers were judged at.
    factor : float, optional
        The multiple of a route's typical latency past which a pending
        transfer is stuck.
    pending : int, optional
        Transfers pending at ``as_of``.
    unjudged : int, optional
        Pending transfers that could not be judged (no latency to compare).
    min_volume : float, optional
        The smallest pair volume kept in a counterparty graph.
    covered : tuple of (Timestamp, Timestamp), optional
        The half-open span the input is known to cover (its provenance's
        ``coverage``, else its ``window``), for results over time: a time
        bucket reaching outside it holds only part of its time.
    """

    span: Span = (None, None)
    freq: str | None = None
    by: str | tuple[str, ...] | None = None
    role: str | None = None
    values: str | None = None
    as_of: pd.Timestamp | None = None
    factor: float | None = None
    pending: int | None = None
    unjudged: int | None = None
    min_volume: float | None = None
    covered: tuple[pd.Timestamp, pd.Timestamp] | None = None

    def replace(self, **changes: Any) -> ResultInfo:
        """A copy with ``changes`` applied."""
        return dataclasses.replace(self, **changes)


_FIELDS = frozenset(f.name for f in dataclasses.fields(ResultInfo))


def _store(result: Any) -> Any:
    """The mapping a result keeps its metadata in: ``attrs`` of a frame, ``graph`` of a graph."""
    attrs = getattr(result, "attrs", None)
    if isinstance(attrs, dict):
        return attrs
    graph = getattr(result, "graph", None)
    if isinstance(graph, dict):
        return graph
    return None


def describe(result: Any, *, span: Span | None = None, **fields: Any) -> Any:
    """Record ``result``'s :class:`ResultInfo` (replacing any it had) and return ``result``.

    Parameters
    ----------
    result : pandas.DataFrame, pandas.Series or networkx.Graph
    span : tuple, optional
        First and last timestamp of the data; default ``(None, None)``.
    **fields
        The other :class:`ResultInfo` fields.

    Returns
    -------
    The same object.

    Raises
    ------
    TypeError
        If ``result`` has neither ``attrs`` nor ``graph``, or a field is unknown.
    """
    store = _store(result)
    if store is None:
        raise TypeError(
            f"describe() takes a DataFrame, Series or networkx graph, got {type(result).__name__}"
        )
    unknown = sorted(set(fields) - _FIELDS)
    if unknown:
        raise TypeError(f"unknown ResultInfo field(s) {unknown}; use {sorted(_FIELDS)}")
    if isinstance(fields.get("by"), list):
        fields["by"] = tuple(fields["by"])
    store[ATTR] = ResultInfo(span=(None, None) if span is None else tuple(span), **fields)
    return result


def result_info(result: Any) -> ResultInfo:
    """The :class:`ResultInfo` of an analysis result; an empty one when it has none.

    Parameters
    ----------
    result : object
        An analysis result (frame, series or graph); anything else, or a
        frame no analysis function made, gives ``ResultInfo()``.

    Examples
    --------
    >>> result_info(None)
    ResultInfo(span=(None, None), freq=None, by=None, role=None, values=None, as_of=None, \
factor=None, pending=None, unjudged=None, min_volume=None, covered=None)
    """
    store = _store(result)
    record = store.get(ATTR) if isinstance(store, Mapping) else None
    return record if isinstance(record, ResultInfo) else ResultInfo()


def span_of(timestamps: pd.Series) -> Span:
    """``(first, last)`` of a timestamp column, ``(None, None)`` when it holds none.

    Examples
    --------
    >>> span_of(pd.Series(pd.to_datetime(["2024-07-02", "2024-07-01"], utc=True)))[0]
    Timestamp('2024-07-01 00:00:00+0000', tz='UTC')
    >>> span_of(pd.Series([], dtype="datetime64[ns, UTC]"))
    (None, None)
    """
    if len(timestamps) == 0:
        return None, None
    lo, hi = timestamps.min(), timestamps.max()
    if pd.isna(lo):
        return None, None
    return lo, hi
