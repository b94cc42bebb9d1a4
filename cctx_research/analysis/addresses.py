"""Address-level analysis: top addresses, concentration, profiles, routers.

A transfer has two addresses: the ``message_sender`` (who called the burn on
the source chain, often a router contract) and the ``mint_recipient`` (who
received the USDC on the destination chain). A recipient that is a Solana
token account counts as its owner (``mint_recipient_owner``, which
:func:`cctx_research.transfers_from_ledger` carries where the ledger knows
it): the person or program the money reached, whichever of its token
accounts it landed in. Addresses are lowercase ``0x``
hex; functions that take one accept a 20-byte address or a bytes32-padded
one, in any case.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd

from .. import arguments, schema
from . import _common, engines, results
from .profiles import AddressProfile, profile

__all__ = [
    "AddressProfile",
    "Concentration",
    "concentration",
    "counterparty_graph",
    "hubs",
    "profile",
    "top",
]

_ROLE_COLUMN = {"recipient": "mint_recipient", "sender": "message_sender"}


def top(
    transfers: pd.DataFrame, *, role: str = "recipient", by: str = "volume", n: int | None = 20
) -> pd.DataFrame:
    """The top addresses by volume or by number of transfers.

    Parameters
    ----------
    transfers : pandas.DataFrame
        A canonical ``"transfers"`` frame.
    role : {"recipient", "sender"}, default "recipient"
        Rank ``mint_recipient`` (a token account as its owner) or
        ``message_sender`` addresses.
    by : {"volume", "count"}, default "volume"
        Rank by USDC volume or by number of transfers (the other breaks ties,
        then the address).
    n : int or None, default 20
        How many addresses; None for all.

    Returns
    -------
    pandas.DataFrame
        The columns of the ``"top_addresses"`` kind (``rank``, ``address``,
        ``volume`` in USDC, ``volume_raw`` in base units,
        ``transaction_count``) plus ``share``: the address's share of all
        volume (``by="volume"``) or of all transfers (``by="count"``).

    Raises
    ------
    DataError
        If ``transfers`` does not follow the schema.
    ValueError, TypeError
        For an unknown ``role`` or ``by``, or ``n`` that is not a positive int.

    Examples
    --------
    >>> top(transfers, role="sender", by="count", n=5)  # doctest: +SKIP
    """
    transfers, win = _common.source(transfers)
    arguments.choice("role", role, list(_ROLE_COLUMN))
    arguments.choice("by", by, ["volume", "count"])
    n = arguments.positive_int("n", n, allow_none=True)
    column = _ROLE_COLUMN[role]
    if role == "recipient":
        transfers = _common.recipients_as_owners(transfers)
    if engines.is_pandas(transfers):
        agg = transfers.groupby(column, sort=False)[["amount", "amount_raw"]].agg(
            {"amount": ["sum", "count"], "amount_raw": "sum"}
        )
    else:
        # one row per distinct address: what ranking and respelling need
        agg = engines.grouped(transfers, [column], raw=True)
        win = results.result_info(agg).span
        agg = agg[["sum", "count", "sum_raw"]]
    agg.columns = ["volume", "transaction_count", "volume_raw"]
    agg = _common.fold_addresses(agg)
    key = "volume" if by == "volume" else "transaction_count"
    other = "transaction_count" if by == "volume" else "volume"
    total = agg[key].sum()
    if n is not None and len(agg) > n:
        # nlargest keeps every tie at the cut, so the sort below stays exact.
        agg = agg.nlargest(n, [key, other], keep="all")
    agg = agg.reset_index().rename(columns={column: "address"})
    agg = agg.sort_values([key, other, "address"], ascending=[False, False, True], kind="stable")
    if n is not None:
        agg = agg.head(n)
    out = pd.DataFrame(
        {
            "rank": np.arange(1, len(agg) + 1, dtype="int64"),
            "address": agg["address"].astype(schema.STRING).to_numpy(),
            "volume": agg["volume"].astype("float64").to_numpy(),
            "volume_raw": agg["volume_raw"].astype("int64").to_numpy(),
            "transaction_count": agg["transaction_count"].astype("int64").to_numpy(),
        }
    )
    out["address"] = out["address"].astype(schema.STRING)
    out["share"] = out[key] / total if total else out[key] * 0.0
    out["share"] = out["share"].astype("float64")
    return results.describe(out, span=win, role=role, by=by)


@dataclass(frozen=True, repr=False)
class Concentration:
    """How concentrated a set of non-negative values (volumes per address) is.

    Attributes
    ----------
    n : int
        Number of values.
    total : float
    gini : float
        Gini coefficient, 0 (all equal) to ``1 - 1/n`` (one holds all). NaN
        when there are no values or they sum to 0.
    hhi : float
        Herfindahl-Hirschman index: the sum of squared shares, from ``1/n``
        to 1 (multiply by 10,000 for the antitrust convention). NaN when
        empty or the total is 0.
    top1_share, top10_share, top100_share : float
        Share of the total held by the largest 1, 10 and 100 values (all of
        it when there are fewer). NaN when empty or the total is 0.
    lorenz : pandas.DataFrame
        Lorenz curve points ``population_share`` and ``value_share`` from
        ``(0, 0)`` to ``(1, 1)``, values sorted ascending (``n + 1`` rows;
        a single ``(0, 0)`` row when empty).
    span : tuple
        First and last timestamp of the data the values came from, when
        ``values`` carried it in its :func:`~.results.result_info` (a column
        of :func:`top`'s output does); else ``(None, None)``.
    """

    n: int
    total: float
    gini: float
    hhi: float
    top1_share: float
    top10_share: float
    top100_share: float
    lorenz: pd.DataFrame = field(compare=False)
    span: tuple[Any, Any] = field(default=(None, None), compare=False)

    def as_dict(self) -> dict[str, float]:
        """The scalar measures as a dict (everything but ``lorenz``)."""
        return {
            "n": self.n,
            "total": self.total,
            "gini": self.gini,
            "hhi": self.hhi,
            "top1_share": self.top1_share,
            "top10_share": self.top10_share,
            "top100_share": self.top100_share,
        }

    def __repr__(self) -> str:
        inner = ", ".join(
            f"{k}={v}" if isinstance(v, int) else f"{k}={v:.4g}" for k, v in self.as_dict().items()
        )
        return f"Concentration({inner})"

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><th>{k}</th><td>{v:,}</td></tr>"
            if isinstance(v, int)
            else f"<tr><th>{k}</th><td>{v:.4g}</td></tr>"
            for k, v in self.as_dict().items()
        )
        return f"<table><caption>Concentration</caption>{rows}</table>"


def concentration(values: Any) -> Concentration:
    """Gini, HHI, top shares and the Lorenz curve of non-negative values.

    Parameters
    ----------
    values : array-like of float
        For instance volume per address: ``top(transfers, n=None)["volume"]``.

    Returns
    -------
    Concentration
        See :class:`Concentration`; the measures are NaN for no values or an
        all-zero total.

    Raises
    ------
    TypeError
        If ``values`` is not numeric.
    ValueError
        If ``values`` holds NaN, infinite or negative numbers, or is not 1-D.

    Examples
    --------
    >>> concentration([5, 5, 5, 5]).gini
    0.0
    >>> concentration([0, 0, 0, 1]).gini
    0.75
    """
    if isinstance(values, (str, bytes)) or np.isscalar(values):
        raise TypeError("values must be an array-like of numbers, e.g. a Series of volumes")
    try:
        arr = np.asarray(
            values.to_numpy(dtype="float64", na_value=np.nan)
            if isinstance(values, pd.Series)
            else values,
            dtype="float64",
        )
    except (TypeError, ValueError) as exc:
        raise TypeError("values must be numbers, e.g. a Series of volumes per address") from exc
    if arr.ndim != 1:
        raise ValueError(f"values must be one-dimensional, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("values hold NaN or infinite numbers; drop or fill them first")
    if np.any(arr < 0):
        raise ValueError("values must be non-negative (volumes, counts)")
    span = results.result_info(values).span
    n = int(arr.size)
    total = float(arr.sum())
    x = np.sort(arr)
    if n == 0 or total <= 0:
        nan = float("nan")
        pop = np.linspace(0.0, 1.0, n + 1) if n else np.zeros(1)
        lorenz = pd.DataFrame({"population_share": pop, "value_share": np.zeros(len(pop))})
        return Concentration(n, total, nan, nan, nan, nan, nan, lorenz, span)
    cum = np.cumsum(x)
    ranks = np.arange(1, n + 1, dtype="float64")
    gini = float(2.0 * np.dot(ranks, x) / (n * total) - (n + 1.0) / n)
    gini = 0.0 if abs(gini) < 1e-12 else gini
    shares = x / total
    # the k largest hold everything above the (n - k) smallest
    top_share = {
        k: float((total - (cum[n - k - 1] if n > k else 0.0)) / total) for k in (1, 10, 100)
    }
    lorenz = pd.DataFrame(
        {
            "population_share": np.concatenate([[0.0], ranks / n]),
            "value_share": np.concatenate([[0.0], cum / total]),
        }
    )
    return Concentration(
        n=n,
        total=total,
        gini=gini,
        hhi=float(np.dot(shares, shares)),
        top1_share=top_share[1],
        top10_share=top_share[10],
        top100_share=top_share[100],
        lorenz=lorenz,
        span=span,
    )


def counterparty_graph(transfers: pd.DataFrame, *, min_volume: float = 0) -> nx.DiGraph:
    """Bipartite sender -> recipient graph of who sends USDC to whom.

    Nodes are ``(role, address)`` tuples, ``("sender", "0xab..")`` and
    ``("recipient", "0xcd..")``, so an address that both sends and receives
    appears once on each side and the graph stays bipartite. Node attributes:
    ``bipartite`` (0 for senders, 1 for recipients), ``role``, ``address``,
    ``volume`` (USDC over the kept edges) and ``count``. Edges carry
    ``volume`` (USDC), ``count`` and ``weight`` (= ``volume``).

    Parameters
    ----------
    transfers : pandas.DataFrame
        A canonical ``"transfers"`` frame.
    min_volume : float, default 0
        Keep only sender-recipient pairs with at least this much volume (USDC).

    Returns
    -------
    networkx.DiGraph
        Its :func:`~.results.result_info` holds the ``span`` (the data's first
        and last timestamp) and ``min_volume``.

    Raises
    ------
    DataError
        If ``transfers`` does not follow the schema.
    TypeError, ValueError
        If ``min_volume`` is not a non-negative number.

    Examples
    --------
    >>> g = counterparty_graph(transfers, min_volume=1_000)  # doctest: +SKIP
    >>> hubs(g, n=5)  # doctest: +SKIP
    """
    transfers, win = _common.source(transfers)
    transfers = _common.recipients_as_owners(transfers)
    if isinstance(min_volume, bool) or not isinstance(min_volume, (int, float, np.number)):
        raise TypeError(f"min_volume must be a number of USDC, got {type(min_volume).__name__}")
    if not np.isfinite(min_volume) or min_volume < 0:
        raise ValueError(f"min_volume must be a non-negative number of USDC, got {min_volume}")
    if engines.is_pandas(transfers):
        pairs = transfers.groupby(["message_sender", "mint_recipient"], sort=False)[
            "amount"
        ].agg(["sum", "count"])
    else:
        pairs = engines.grouped(transfers, ["message_sender", "mint_recipient"])
        win = results.result_info(pairs).span
        pairs = pairs[["sum", "count"]]
    pairs = _common.fold_addresses(pairs)
    if min_volume > 0:
        pairs = pairs[pairs["sum"] >= min_volume]
    pairs = pairs.reset_index()
    g = results.describe(nx.DiGraph(), span=win, min_volume=float(min_volume))
    if pairs.empty:
        return g
    senders = pairs.groupby("message_sender")[["sum", "count"]].sum()
    recipients = pairs.groupby("mint_recipient")[["sum", "count"]].sum()
    g.add_nodes_from(
        (
            ("sender", a),
            {"bipartite": 0, "role": "sender", "address": a, "volume": float(v), "count": int(c)},
        )
        for a, v, c in zip(senders.index, senders["sum"], senders["count"], strict=True)
    )
    g.add_nodes_from(
        (
            ("recipient", a),
            {
                "bipartite": 1,
                "role": "recipient",
                "address": a,
                "volume": float(v),
                "count": int(c),
            },
        )
        for a, v, c in zip(recipients.index, recipients["sum"], recipients["count"], strict=True)
    )
    g.add_edges_from(
        (("sender", s), ("recipient", r), {"volume": float(v), "count": int(c), "weight": float(v)})
        for s, r, v, c in zip(
            pairs["message_sender"],
            pairs["mint_recipient"],
            pairs["sum"],
            pairs["count"],
            strict=True,
        )
    )
    return g


def hubs(graph: nx.DiGraph, *, n: int | None = 10) -> pd.DataFrame:
    """Rank nodes by distinct counterparties, then volume (router detection).

    A router contract calls the burn for many users, so as a sender it has
    many distinct recipients; a hot wallet receives from many senders.

    Parameters
    ----------
    graph : networkx.DiGraph
        A graph from :func:`counterparty_graph` (other graphs work; ``volume``
        and ``count`` edge attributes are used when present).
    n : int or None, default 10
        How many nodes; None for all.

    Returns
    -------
    pandas.DataFrame
        Columns ``rank``, ``address``, ``role``, ``counterparties`` (distinct
        neighbours), ``volume`` (USDC over its edges), ``count`` (transfers)
        and ``mean_per_counterparty`` (USDC).

    Raises
    ------
    TypeError, ValueError
        If ``graph`` is not a networkx graph or ``n`` not a positive int.

    Examples
    --------
    >>> hubs(counterparty_graph(transfers), n=5)  # doctest: +SKIP
    """
    if not isinstance(graph, nx.Graph):
        raise TypeError(
            "graph must be a networkx graph such as counterparty_graph(transfers), "
            f"got {type(graph).__name__}"
        )
    n = arguments.positive_int("n", n, allow_none=True)
    nodes = list(graph)
    data = graph.nodes
    out = pd.DataFrame(
        {
            "address": pd.array(
                [str(data[v].get("address", v)) for v in nodes], dtype=schema.STRING
            ),
            "role": pd.array([str(data[v].get("role", "")) for v in nodes], dtype=schema.STRING),
            "counterparties": pd.array(
                [len(set(nx.all_neighbors(graph, v))) for v in nodes], dtype="int64"
            ),
            "volume": pd.array(
                [float(graph.degree(v, weight="volume")) for v in nodes], dtype="float64"
            ),
            "count": pd.array([int(graph.degree(v, weight="count")) for v in nodes], dtype="int64"),
        }
    )
    out["mean_per_counterparty"] = (
        out["volume"] / out["counterparties"].where(out["counterparties"] > 0)
    ).astype("float64")
    out = out.sort_values(
        ["counterparties", "volume", "address", "role"],
        ascending=[False, False, True, True],
        kind="stable",
    )
    if n is not None:
        out = out.head(n)
    out.insert(0, "rank", np.arange(1, len(out) + 1, dtype="int64"))
    out = out.reset_index(drop=True)
    return results.describe(out, span=results.result_info(graph).span)
