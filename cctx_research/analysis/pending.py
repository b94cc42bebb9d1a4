"""Transfers burned and not yet minted: what is in flight, and what is stuck.

Functions take a canonical ``"ledger"`` frame and a moment ``as_of``. A
transfer is *pending* at ``as_of`` when it was burned at or before
``as_of`` and not minted by then: never minted, or minted after ``as_of``.
So the same ledger answers "what was pending last Tuesday at noon".

A pending transfer is *stuck* when its age exceeds ``factor`` times the
typical latency of transfers like it. That reference is the median
burn-to-mint latency of the completed transfers in the data, taken at the
first level that has any (``reference`` in the result says which):

1. ``"route"``: the same route and finality class;
2. ``"source"``: the same source chain and finality class (attestation
   waits for the source chain's finality, so the source sets the latency);
3. ``"class"``: the same finality class on any route;
4. ``"all"``: every completed transfer.

Only a ledger without any completed transfer leaves pending transfers
unjudged: :func:`stuck` then lists none, counts them in the ``unjudged`` of
its :func:`~.results.result_info` and logs a warning; :func:`in_flight`
still counts them. Data without burn times raises
:class:`~cctx_research.errors.DataError` naming what provides them.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pandas as pd

from .. import arguments, chains, schema, times
from . import _ledger, attestation_state, results

__all__ = ["REFERENCES", "in_flight", "stuck", "waiting"]

logger = logging.getLogger(__name__)

REFERENCES: tuple[str, ...] = ("route", "source", "class", "all")
"""The levels a stuck transfer's reference latency is taken from, most specific first."""

_STUCK_COLUMNS = [
    "transfer_id",
    "burn_tx_hash",
    "source_chain",
    "destination_chain",
    "cctp_version",
    "finality",
    "amount",
    "amount_raw",
    "burn_timestamp",
    "age_s",
    "reference_s",
    "reference",
    "message_sender",
    "mint_recipient",
]


def _pending(ledger: Any, as_of: Any, *, what: str) -> tuple[pd.DataFrame, pd.Series, Any]:
    """The checked ledger, a mask of its pending rows at ``as_of``, and ``as_of``."""
    frame = _ledger.ledger_frame(ledger, what=what)
    when = _ledger.resolve_as_of(frame, as_of)
    if when is None:
        return frame, pd.Series(False, index=frame.index), None
    burned = _ledger.burn_known(frame) & (frame["burn_timestamp"] <= when).to_numpy()
    mint = frame["mint_timestamp"]
    unminted = (mint.isna() | (mint > when)).to_numpy()
    return frame, pd.Series(burned & unminted, index=frame.index), when


def _references(frame: pd.DataFrame, rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Reference latency (s) and the level it came from, for each row of ``rows``."""
    done = _ledger.completed(frame)
    completed = _ledger.table(done)
    completed["latency_s"] = _ledger.latency_seconds(done)
    value = np.full(len(rows), np.nan)
    level = np.full(len(rows), -1, dtype="int8")
    levels = (
        ["source_chain", "destination_chain", "finality"],
        ["source_chain", "finality"],
        ["finality"],
        [],
    )
    for k, keys in enumerate(levels):
        todo = np.isnan(value)
        if not todo.any() or completed.empty:
            break
        if keys:
            medians = completed.groupby(keys, observed=True)["latency_s"].median()
            index = pd.MultiIndex.from_frame(rows[keys]) if len(keys) > 1 else rows[keys[0]]
            found = medians.reindex(index).to_numpy(dtype="float64")
        else:
            found = np.full(len(rows), float(completed["latency_s"].median()))
        take = todo & ~np.isnan(found)
        value[take] = found[take]
        level[take] = k
    return value, level


def stuck(
    ledger: pd.DataFrame,
    *,
    as_of: times.TimeLike | None = None,
    factor: float = 3.0,
    attestations: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Pending transfers older than ``factor`` times the latency of transfers like them.

    Parameters
    ----------
    ledger : pandas.DataFrame
        A canonical ``"ledger"`` frame.
    as_of : str, datetime, Timestamp or int, optional
        The moment to judge at (naive means UTC). Transfers burned after it
        are ignored; those minted after it count as pending. Default: the
        end of the window the ledger was taken for (its provenance), else
        its latest burn or mint time.
    factor : float, default 3.0
        How many times the reference latency a pending transfer must have
        waited to be stuck.
    attestations : pandas.DataFrame, optional
        What Circle's attestation API said of the burns: the frames of
        :meth:`cctx_research.iris.IrisClient.messages` (or a sync
        directory's ``iris/messages.parquet``). Adds ``waiting_on``
        (:data:`~.attestation_state.WAITS`: ``"attestation_pending"``,
        ``"attested_not_relayed"``, ``"expired"``, ``"not_asked"``),
        ``delay_reason`` (Circle's, while the attestation is pending) and
        ``expiration_block``.

    Returns
    -------
    pandas.DataFrame
        One row per stuck transfer, oldest first: ``transfer_id``,
        ``burn_tx_hash``, ``source_chain``, ``destination_chain`` (chain
        categoricals), ``cctp_version`` (Int64), ``finality``
        (categorical), ``amount`` (USDC) and ``amount_raw`` (int64 base
        units), ``burn_timestamp``, ``age_s`` (seconds pending at
        ``as_of``), ``reference_s`` (the reference latency), ``reference``
        (its level: ``"route"``, ``"source"``, ``"class"`` or ``"all"``;
        see the module notes), ``message_sender`` and ``mint_recipient``.
        Its :func:`~.results.result_info` holds ``as_of``, ``factor``,
        ``pending`` (transfers pending at ``as_of``), ``unjudged`` and
        ``span``.

    Raises
    ------
    DataError
        If the frame does not follow the ledger schema or has no burn times.
    TypeError, ValueError
        For a bad ``as_of`` or ``factor``.

    Examples
    --------
    >>> import cctx_research as cctx
    >>> ledger = cctx.load_sample(as_of="2024-07-01", days=2)
    >>> late = stuck(ledger, as_of="2024-07-01", factor=3)
    >>> bool((late["age_s"] > 3 * late["reference_s"]).all())
    True
    """
    factor = arguments.positive_number("factor", factor)
    frame, pending, when = _pending(ledger, as_of, what="pending.stuck")
    rows = frame.loc[pending.to_numpy()]
    table = _ledger.table(
        rows,
        [
            "transfer_id",
            "burn_tx_hash",
            "cctp_version",
            "amount_raw",
            "burn_timestamp",
            "message_sender",
            "mint_recipient",
        ],
    )
    table["amount"] = _ledger.amount(table["amount_raw"])
    table["amount_raw"] = table["amount_raw"].astype("int64")
    if when is not None:
        table["age_s"] = (when - table["burn_timestamp"]).dt.total_seconds().astype("float64")
    else:
        table["age_s"] = pd.Series(dtype="float64")
    value, level = _references(frame, table)
    table["reference_s"] = value
    table["reference"] = pd.Categorical.from_codes(
        level, dtype=pd.CategoricalDtype(list(REFERENCES), ordered=True)
    )
    unjudged = int(np.isnan(value).sum())
    if unjudged:
        logger.warning(
            "%d pending transfers have no completed transfer to compare with: not judged",
            unjudged,
        )
    late = table.loc[(table["age_s"] > factor * table["reference_s"]).to_numpy()]
    late = late.sort_values(["age_s", "transfer_id"], ascending=[False, True], kind="stable")
    out = late[_STUCK_COLUMNS].reset_index(drop=True)
    out["burn_timestamp"] = out["burn_timestamp"].astype(schema.TIMESTAMP)
    out.attrs.clear()
    if attestations is not None:
        if not isinstance(attestations, pd.DataFrame):
            raise TypeError(
                "attestations must be a DataFrame of Iris messages (IrisClient.messages), "
                f"got {type(attestations).__name__}"
            )
        out = out.join(attestation_state.why(out, attestations, _last_blocks(frame)))
    return results.describe(
        out,
        span=_ledger.span(frame),
        as_of=when,
        factor=factor,
        pending=int(pending.sum()),
        unjudged=unjudged,
    )


def _last_blocks(frame: pd.DataFrame) -> dict[str, int]:
    """The last block each destination chain's mints reached in the data."""
    if "mint_block" not in frame.columns:
        return {}
    minted = frame[frame["mint_block"].notna() & (frame["mint_block"] >= 0)]
    last = minted.groupby("destination_domain")["mint_block"].max()
    return {chains.chain_name(int(k)): int(v) for k, v in last.items()}


def waiting(
    ledger: pd.DataFrame, attestations: pd.DataFrame, *, as_of: times.TimeLike | None = None
) -> pd.DataFrame:
    """Every transfer pending at ``as_of``, with what Circle's attestation API says it waits on.

    Parameters
    ----------
    ledger : pandas.DataFrame
        A canonical ``"ledger"`` frame.
    attestations : pandas.DataFrame
        Iris messages (:meth:`cctx_research.iris.IrisClient.messages`, or a
        sync directory's ``iris/messages.parquet``).
    as_of : time, optional
        As in :func:`stuck`.

    Returns
    -------
    pandas.DataFrame
        One row per pending transfer, oldest first: ``transfer_id``,
        ``burn_tx_hash``, ``source_chain``, ``destination_chain``, ``amount``,
        ``amount_raw``, ``age_s``, and ``waiting_on``, ``delay_reason``,
        ``expiration_block`` (see :func:`stuck`).
    """
    if not isinstance(attestations, pd.DataFrame):
        raise TypeError(
            "attestations must be a DataFrame of Iris messages (IrisClient.messages), "
            f"got {type(attestations).__name__}"
        )
    frame, pending, when = _pending(ledger, as_of, what="pending.waiting")
    rows = frame.loc[pending.to_numpy()]
    table = _ledger.table(rows, ["transfer_id", "burn_tx_hash", "amount_raw", "burn_timestamp"])
    table["amount"] = _ledger.amount(table["amount_raw"])
    table["amount_raw"] = table["amount_raw"].astype("int64")
    table["age_s"] = (
        (when - table["burn_timestamp"]).dt.total_seconds().astype("float64")
        if when is not None else pd.Series(dtype="float64")
    )  # fmt: skip
    table = table.sort_values(["age_s", "transfer_id"], ascending=[False, True], kind="stable")
    out = table[["transfer_id", "burn_tx_hash", "source_chain", "destination_chain", "amount",
                 "amount_raw", "age_s"]].reset_index(drop=True)  # fmt: skip
    out.attrs.clear()
    out = out.join(attestation_state.why(out, attestations, _last_blocks(frame)))
    return results.describe(out, span=_ledger.span(frame), as_of=when, pending=len(out))


def in_flight(
    ledger: pd.DataFrame, *, as_of: times.TimeLike | None = None, by: str | None = "route"
) -> pd.DataFrame:
    """Transfers pending at ``as_of``: how many, how much, and how old.

    Parameters
    ----------
    ledger : pandas.DataFrame
        A canonical ``"ledger"`` frame.
    as_of : str, datetime, Timestamp or int, optional
        As in :func:`stuck`.
    by : {"route", None}, default "route"
        One row per route, or one row in all.

    Returns
    -------
    pandas.DataFrame
        ``source_chain`` and ``destination_chain`` (with ``by="route"``;
        routes with nothing pending are left out), ``count``, ``amount``
        (USDC), ``amount_raw`` (int64, exact), ``oldest`` (earliest burn
        time) and ``max_age_s`` (its age at ``as_of``). With ``by=None``
        one row, zeros and NaT when nothing is pending. Its
        :func:`~.results.result_info` holds ``as_of`` and ``span``.

    Raises
    ------
    DataError
        If the frame does not follow the ledger schema or has no burn times.
    TypeError, ValueError
        For a bad ``as_of`` or ``by``.

    Examples
    --------
    >>> import cctx_research as cctx
    >>> ledger = cctx.load_sample(as_of="2024-07-01", days=2)
    >>> total = in_flight(ledger, as_of="2024-07-01", by=None)
    >>> int(total["count"].iloc[0]) > 0
    True
    """
    arguments.choice("by", by, ["route", None])
    frame, pending, when = _pending(ledger, as_of, what="pending.in_flight")
    rows = frame.loc[pending.to_numpy()]
    table = _ledger.table(rows, ["amount_raw", "burn_timestamp"])
    table["amount_raw"] = table["amount_raw"].astype("int64")
    keys = list(_ledger.ROUTE) if by == "route" else []
    if keys:
        grouped = table.groupby(keys, observed=True, sort=True)
        out = grouped.agg(
            count=("amount_raw", "size"),
            amount_raw=("amount_raw", "sum"),
            oldest=("burn_timestamp", "min"),
        ).reset_index()
    else:
        out = pd.DataFrame(
            {
                "count": [len(table)],
                "amount_raw": [int(table["amount_raw"].sum())],
                "oldest": [table["burn_timestamp"].min() if len(table) else pd.NaT],
            }
        )
    out["count"] = out["count"].astype("int64")
    out["amount_raw"] = out["amount_raw"].astype("int64")
    out["amount"] = _ledger.amount(out["amount_raw"])
    out["oldest"] = pd.to_datetime(out["oldest"], utc=True).astype(schema.TIMESTAMP)
    if when is not None:
        out["max_age_s"] = (when - out["oldest"]).dt.total_seconds().astype("float64")
    else:
        out["max_age_s"] = np.full(len(out), np.nan)
    out = out[[*keys, "count", "amount", "amount_raw", "oldest", "max_age_s"]]
    out.attrs.clear()
    return results.describe(out, span=_ledger.span(frame), as_of=when)
