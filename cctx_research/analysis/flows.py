"""Chain-to-chain flows: the corridor graph, the flow matrix and net flows.

Every function takes a canonical ``"transfers"`` frame (see
:mod:`cctx_research.schema`) first and options keyword-only. Chains are the
frame's chain names (``"ethereum"``, ``"base"``, ...); unknown chains such as
``"domain-42"`` are carried through like any other. A *corridor* is an
ordered ``(source_chain, destination_chain)`` pair, named
``"source->destination"`` where a single string is needed.

Results record the span of the data they were computed from, as
``(first, last)`` timestamps, in their :class:`~.results.ResultInfo`
(read it with :func:`~.results.result_info`) so that plots can title with it.
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
import pandas as pd

from .. import arguments, chains, schema
from . import _common, engines, once, results

__all__ = ["centrality", "corridors", "graph", "matrix", "net"]

_EDGE_COLUMNS = ["volume", "count", "mean", "median", "share"]


def _corridor_table(transfers: Any) -> pd.DataFrame:
    """Volume, count, mean and median per observed corridor (one groupby)."""
    # sort=False would make pandas recode the categoricals by first appearance (slower);
    # the mean is sum / count rather than a third pass over the data.
    span = None
    if engines.is_pandas(transfers):
        table = transfers.groupby(["source_chain", "destination_chain"], observed=True)[
            "amount"
        ].agg(["sum", "count", "median"])
    else:
        grouped = engines.grouped(transfers, ["source_chain", "destination_chain"], median=True)
        table = grouped[["sum", "count", "median"]]
        span = results.result_info(grouped).span
    table.columns = ["volume", "count", "median"]
    table.insert(2, "mean", table["volume"] / table["count"])
    table["count"] = table["count"].astype("int64")
    total = table["volume"].sum()
    table["share"] = table["volume"] / total if total > 0 else 0.0
    return results.describe(table, span=span)


def graph(transfers: pd.DataFrame, *, weight: str = "volume", dedupe: Any = None) -> nx.DiGraph:
    """The corridor graph: one node per chain, one edge per corridor.

    Parameters
    ----------
    transfers : pandas.DataFrame
        A canonical ``"transfers"`` frame.
    weight : {"volume", "count"}, default "volume"
        Which edge attribute is also stored as ``"weight"``, the attribute
        networkx algorithms use by default.
    dedupe : DataFrame, optional
        Count each end-user movement once: the ledger ``transfers`` came from
        (or a :func:`.movements.continuations` table); a transfer that
        continues an earlier one is left out (:mod:`.once`). On the synthetic
        sample, the corridors then carry the planted movements to within
        0.5 % of their volume (``tests/analysis/test_planted_truth.py``).

    Returns
    -------
    networkx.DiGraph
        Nodes are chain names with attributes ``domain`` (int, or None for a
        name the registry cannot resolve), ``inflow`` and ``outflow`` (USDC),
        ``net`` (``inflow - outflow``), ``count_in`` and ``count_out``.
        Edges ``source -> destination`` carry ``volume`` (USDC), ``count``,
        ``mean`` and ``median`` (USDC per transfer), ``share`` (of the total
        volume) and ``weight``. ``graph.graph`` holds ``weight``,
        ``total_volume`` and ``total_count``; its
        :func:`~.results.result_info` the ``span`` (first and last
        timestamp, or ``(None, None)`` when empty).

    Raises
    ------
    DataError
        If ``transfers`` misses a column or has a wrong dtype.
    ValueError
        If ``weight`` is not ``"volume"`` or ``"count"``.

    Examples
    --------
    >>> g = graph(transfers)  # doctest: +SKIP
    >>> g.edges["ethereum", "base"]["volume"]  # doctest: +SKIP
    1250.0
    """
    transfers, win = _common.source(once.transfers_once(transfers, dedupe))
    arguments.choice("weight", weight, ["volume", "count"])
    table = _corridor_table(transfers)
    win = results.result_info(table).span if win is None else win
    g = nx.DiGraph(
        weight=weight,
        total_volume=float(table["volume"].sum()),
        total_count=int(table["count"].sum()),
    )
    results.describe(g, span=win)
    frame = transfers if engines.is_pandas(transfers) else None
    if table.empty:
        return g
    flat = table.reset_index()
    src = flat["source_chain"].astype(str)
    dst = flat["destination_chain"].astype(str)
    outflow = flat.groupby(src)["volume"].sum()
    inflow = flat.groupby(dst)["volume"].sum()
    count_out = flat.groupby(src)["count"].sum()
    count_in = flat.groupby(dst)["count"].sum()
    for name in chains.in_order(list(src) + list(dst)):
        i, o = float(inflow.get(name, 0.0)), float(outflow.get(name, 0.0))
        g.add_node(
            name,
            domain=_common.chain_domain(name, frame),
            inflow=i,
            outflow=o,
            net=i - o,
            count_in=int(count_in.get(name, 0)),
            count_out=int(count_out.get(name, 0)),
        )
    records = flat[_EDGE_COLUMNS].to_dict("records")
    for s, d, attrs in zip(src, dst, records, strict=True):
        attrs["count"] = int(attrs["count"])
        attrs["weight"] = attrs[weight]
        g.add_edge(s, d, **attrs)
    return g


def matrix(transfers: pd.DataFrame, *, values: str = "volume", dedupe: Any = None) -> pd.DataFrame:
    """Square source x destination flow matrix over every chain seen.

    Parameters
    ----------
    transfers : pandas.DataFrame
        A canonical ``"transfers"`` frame.
    values : {"volume", "count"}, default "volume"
        Sum of ``amount`` (USDC, float) or number of transfers (int64).
    dedupe : DataFrame, optional
        Count each end-user movement once: the ledger ``transfers`` came from
        (or a :func:`.movements.continuations` table); a transfer that
        continues an earlier one is left out (:mod:`.once`). On the synthetic
        sample, the corridors then carry the planted movements to within
        0.5 % of their volume (``tests/analysis/test_planted_truth.py``).

    Returns
    -------
    pandas.DataFrame
        Index ``source_chain`` and columns ``destination_chain``, both the
        chains seen as source or destination (registry order, then unknown
        chains), zeros where there is no flow. Empty input gives a 0 x 0
        frame.

    Raises
    ------
    DataError
        If ``transfers`` does not follow the schema.
    ValueError
        If ``values`` is not ``"volume"`` or ``"count"``.

    Examples
    --------
    >>> matrix(transfers).loc["ethereum", "base"]  # doctest: +SKIP
    1250.0
    """
    transfers, win = _common.source(once.transfers_once(transfers, dedupe))
    arguments.choice("values", values, ["volume", "count"])
    if engines.is_pandas(transfers):
        grouped = transfers.groupby(["source_chain", "destination_chain"], observed=True)["amount"]
        cells = grouped.sum() if values == "volume" else grouped.size().astype("int64")
    else:
        table = engines.grouped(transfers, ["source_chain", "destination_chain"])
        cells = table["sum"] if values == "volume" else table["count"]
        win = results.result_info(table).span
    src = cells.index.get_level_values(0).astype(str)
    dst = cells.index.get_level_values(1).astype(str)
    order = chains.in_order(list(src) + list(dst))
    dtype = "float64" if values == "volume" else "int64"
    out = pd.DataFrame(
        np.zeros((len(order), len(order)), dtype=dtype),
        index=pd.Index(order, name="source_chain", dtype=object),
        columns=pd.Index(order, name="destination_chain", dtype=object),
    )
    if len(cells):
        pos = {name: k for k, name in enumerate(order)}
        arr = out.to_numpy(copy=True)
        arr[[pos[s] for s in src], [pos[d] for d in dst]] = cells.to_numpy()
        out = pd.DataFrame(arr, index=out.index, columns=out.columns)
    return results.describe(out, span=win, values=values)


def net(transfers: pd.DataFrame, *, freq: str | None = None) -> pd.DataFrame:
    """Inflow, outflow and net flow per chain, optionally per time bucket.

    Parameters
    ----------
    transfers : pandas.DataFrame
        A canonical ``"transfers"`` frame.
    freq : str, optional
        A pandas frequency (``"1h"``, ``"1D"``, ``"7D"``). When given, one row
        per (bucket, chain) for every bucket between the first and the last
        transfer, with zeros where nothing moved, plus ``cumulative_net``.

    Returns
    -------
    pandas.DataFrame
        Without ``freq``: columns ``chain``, ``inflow``, ``outflow``, ``net``
        (USDC), ``count_in``, ``count_out``, one row per chain seen, sorted
        by ``net`` descending. With ``freq``: ``timestamp`` (bucket start)
        first, the same columns, and ``cumulative_net`` (running sum of
        ``net`` per chain), sorted by time then chain. ``chain`` is a chain
        categorical.

    Raises
    ------
    DataError
        If ``transfers`` does not follow the schema.
    ValueError, TypeError
        If ``freq`` is not a pandas frequency string.

    Examples
    --------
    >>> net(transfers).set_index("chain").loc["base", "net"]  # doctest: +SKIP
    1250.0
    """
    if freq is not None:
        _common.frequency(freq)
    transfers, win = _common.source(transfers)
    if engines.is_pandas(transfers):
        keys: list[Any] = [] if freq is None else [_common.time_grouper(freq)]
        out_g = transfers.groupby([*keys, "source_chain"], observed=True)["amount"].agg(
            ["sum", "count"]
        )
        in_g = transfers.groupby([*keys, "destination_chain"], observed=True)["amount"].agg(
            ["sum", "count"]
        )
    else:
        out_g = engines.grouped(transfers, ["source_chain"], freq=freq)
        win = results.result_info(out_g).span
        out_g = out_g[["sum", "count"]]
        in_g = engines.grouped(transfers, ["destination_chain"], freq=freq)[["sum", "count"]]
    out_g.index = out_g.index.set_names([*(["timestamp"] if freq else []), "chain"])
    in_g.index = in_g.index.set_names([*(["timestamp"] if freq else []), "chain"])
    if freq is None:
        out_g.index = out_g.index.astype(str)
        in_g.index = in_g.index.astype(str)
    else:
        out_g.index = out_g.index.set_levels(out_g.index.levels[1].astype(str), level=1)
        in_g.index = in_g.index.set_levels(in_g.index.levels[1].astype(str), level=1)
    order = chains.in_order(
        list(out_g.index.get_level_values("chain")) + list(in_g.index.get_level_values("chain"))
    )
    if freq is None:
        full = pd.Index(order, name="chain", dtype=object)
    else:
        stamps = out_g.index.get_level_values("timestamp").union(
            in_g.index.get_level_values("timestamp")
        )
        if len(stamps):
            buckets = pd.date_range(stamps.min(), stamps.max(), freq=freq, name="timestamp")
        else:
            buckets = pd.DatetimeIndex([], tz="UTC", name="timestamp")
        full = pd.MultiIndex.from_product([buckets, order], names=["timestamp", "chain"])
    out_g = out_g.reindex(full, fill_value=0)
    in_g = in_g.reindex(full, fill_value=0)
    result = pd.DataFrame(
        {
            "inflow": in_g["sum"].astype("float64"),
            "outflow": out_g["sum"].astype("float64"),
        },
        index=full,
    )
    result["net"] = result["inflow"] - result["outflow"]
    result["count_in"] = in_g["count"].astype("int64")
    result["count_out"] = out_g["count"].astype("int64")
    if freq is None:
        result = result.sort_values(["net", "inflow"], ascending=[False, False], kind="stable")
        result = result.reset_index()
    else:
        result["cumulative_net"] = result.groupby(level="chain", sort=False)["net"].cumsum()
        result = result.reset_index()
        if result.empty:
            result["timestamp"] = result["timestamp"].astype(schema.TIMESTAMP)
    result["chain"] = _common.chain_column(result["chain"].astype(object), order)
    return results.describe(result, span=win)


def corridors(transfers: pd.DataFrame, *, n: int | None = 10, dedupe: Any = None) -> pd.DataFrame:
    """The top corridors by volume, with their shares of volume and count.

    Parameters
    ----------
    transfers : pandas.DataFrame
        A canonical ``"transfers"`` frame.
    n : int or None, default 10
        How many corridors to return; None for all.
    dedupe : DataFrame, optional
        Count each end-user movement once: the ledger ``transfers`` came from
        (or a :func:`.movements.continuations` table); a transfer that
        continues an earlier one is left out (:mod:`.once`). On the synthetic
        sample, the corridors then carry the planted movements to within
        0.5 % of their volume (``tests/analysis/test_planted_truth.py``).

    Returns
    -------
    pandas.DataFrame
        Columns ``rank`` (1 = largest), ``corridor`` (``"ethereum->base"``),
        ``source_chain``, ``destination_chain`` (chain categoricals),
        ``volume`` (USDC), ``count``, ``mean`` and ``median`` (USDC per
        transfer), ``volume_share`` and ``count_share`` (of all transfers,
        not just the top ``n``). Ties are broken by count then corridor name.

    Raises
    ------
    DataError
        If ``transfers`` does not follow the schema.
    TypeError, ValueError
        If ``n`` is not a positive int or None.

    Examples
    --------
    >>> corridors(transfers, n=3)[["corridor", "volume_share"]]  # doctest: +SKIP
    """
    transfers, win = _common.source(once.transfers_once(transfers, dedupe))
    n = arguments.positive_int("n", n, allow_none=True)
    table = _corridor_table(transfers)
    win = results.result_info(table).span if win is None else win
    table = table.reset_index()
    total_count = table["count"].sum()
    out = pd.DataFrame(
        {
            **_common.corridor_columns(table["source_chain"], table["destination_chain"]),
            "volume": table["volume"].astype("float64"),
            "count": table["count"].astype("int64"),
            "mean": table["mean"].astype("float64"),
            "median": table["median"].astype("float64"),
            "volume_share": table["share"].astype("float64"),
            "count_share": (
                table["count"] / total_count if total_count else table["count"] * 0.0
            ).astype("float64"),
        }
    )
    out = out.sort_values(
        ["volume", "count", "corridor"], ascending=[False, False, True], kind="stable"
    )
    if n is not None:
        out = out.head(n)
    out.insert(0, "rank", np.arange(1, len(out) + 1, dtype="int64"))
    out = out.reset_index(drop=True)
    return results.describe(out, span=win)


def _pagerank(g: nx.DiGraph, weight: str, alpha: float = 0.85) -> dict[Any, float]:
    """Weighted PageRank by power iteration (networkx's own needs scipy)."""
    nodes = list(g)
    if not nodes:
        return {}
    a = nx.to_numpy_array(g, nodelist=nodes, weight=weight, dtype=float)
    a = np.where(np.isfinite(a) & (a > 0), a, 0.0)
    size = len(nodes)
    out_strength = a.sum(axis=1)
    dangling = out_strength == 0
    transition = np.divide(a, out_strength[:, None], out=np.zeros_like(a), where=~dangling[:, None])
    rank = np.full(size, 1.0 / size)
    for _ in range(1000):
        previous = rank
        rank = alpha * (rank @ transition + rank[dangling].sum() / size) + (1 - alpha) / size
        if np.abs(rank - previous).sum() < size * 1e-12:
            break
    rank = rank / rank.sum()
    return dict(zip(nodes, rank.tolist(), strict=True))


def centrality(graph: nx.DiGraph, *, weight: str = "volume") -> pd.DataFrame:
    """Volume-weighted PageRank and in/out strength per chain.

    Parameters
    ----------
    graph : networkx.DiGraph
        A corridor graph from :func:`graph` (any DiGraph with a numeric edge
        attribute named ``weight`` works).
    weight : str, default "volume"
        The edge attribute used as weight (``"count"`` for transfer counts).

    Returns
    -------
    pandas.DataFrame
        Columns ``chain``, ``pagerank`` (sums to 1; damping 0.85, dangling
        chains spread their rank uniformly), ``in_strength`` and
        ``out_strength`` (sum of incoming / outgoing edge ``weight``),
        ``in_degree`` and ``out_degree`` (number of corridors), sorted by
        ``pagerank`` descending.

    Raises
    ------
    TypeError
        If ``graph`` is not a networkx DiGraph or ``weight`` not a str.

    Examples
    --------
    >>> centrality(graph(transfers)).head(3)  # doctest: +SKIP
    """
    if not isinstance(graph, nx.DiGraph):
        raise TypeError(
            "graph must be a networkx.DiGraph such as flows.graph(transfers), "
            f"got {type(graph).__name__}"
        )
    if not isinstance(weight, str):
        raise TypeError(f"weight must be the name of an edge attribute (str), got {weight!r}")
    nodes = list(graph)
    ranks = _pagerank(graph, weight)
    out = pd.DataFrame(
        {
            "chain": pd.array([str(v) for v in nodes], dtype=schema.STRING),
            "pagerank": pd.array([ranks[v] for v in nodes], dtype="float64"),
            "in_strength": pd.array(
                [float(graph.in_degree(v, weight=weight)) for v in nodes], dtype="float64"
            ),
            "out_strength": pd.array(
                [float(graph.out_degree(v, weight=weight)) for v in nodes], dtype="float64"
            ),
            "in_degree": pd.array([graph.in_degree(v) for v in nodes], dtype="int64"),
            "out_degree": pd.array([graph.out_degree(v) for v in nodes], dtype="int64"),
        }
    )
    out = out.sort_values(["pagerank", "chain"], ascending=[False, True], kind="stable")
    out = out.reset_index(drop=True)
    return results.describe(out, span=results.result_info(graph).span)
