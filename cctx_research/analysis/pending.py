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
from . import _common, _ledger, attestation_state, pending_lazy, results

__all__ = ["REFERENCES", "in_flight", "stuck", "timeseries", "waiting"]

logger = logging.getLogger(__name__)

REFERENCES: tuple[str, ...] = ("route", "source", "class", "all")
"""The levels a stuck transfer's reference latency is taken from, most specific first."""



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
        ``span``. On the bundled sample (default ``factor``) it lists only
        burns planted as never minted, and every one of them burned more
        than a day before ``as_of`` (:func:`cctx_research.service.sample.truth`).

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
    if pending_lazy.handles(ledger):  # judged in the engine: the stuck rows alone come back
        return pending_lazy.stuck(ledger, as_of, factor, attestations)
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
    out = late[list(_ledger.STUCK_COLUMNS)].reset_index(drop=True)
    out["burn_timestamp"] = out["burn_timestamp"].astype(schema.TIMESTAMP)
    out.attrs.clear()
    if attestations is not None:
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
    if pending_lazy.handles(ledger):
        return pending_lazy.waiting(ledger, attestations, as_of)
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
    if pending_lazy.handles(ledger):  # summed in the engine
        return pending_lazy.in_flight(ledger, as_of, by)
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


def timeseries(
    ledger: pd.DataFrame,
    *,
    freq: str = "1h",
    factor: float = 3.0,
    as_of: times.TimeLike | None = None,
) -> pd.DataFrame:
    """USDC in flight over time, pending apart from never minted.

    At each moment, the transfers pending then (burned, not yet minted) are
    split as :func:`stuck` splits them: *never minted* when older than
    ``factor`` times the latency of transfers like them (its module notes),
    else *pending*. Transfers that are never minted would otherwise pile up
    in the in-flight total and make it climb for as long as the data runs;
    apart, the pending line reads as what is on its way. A transfer minted
    late counts as never minted from the moment it is that old until its
    mint.

    Parameters
    ----------
    ledger : pandas.DataFrame
        A canonical ``"ledger"`` frame.
    freq : str, default "1h"
        The step between moments, a fixed length (``"1h"``, ``"6h"``,
        ``"1D"``): from the first burn's ``freq`` boundary up to ``as_of``,
        and ``as_of`` itself.
    factor : float, default 3.0
        As in :func:`stuck`.
    as_of : str, datetime, Timestamp or int, optional
        The last moment (naive means UTC); default as in :func:`stuck`.

    Returns
    -------
    pandas.DataFrame
        One row per moment, in time order: ``timestamp``, ``pending_count``,
        ``pending`` (USDC), ``pending_raw`` (int64 base units, exact),
        ``never_minted_count``, ``never_minted``, ``never_minted_raw``,
        ``in_flight`` and ``in_flight_raw`` (both together). At each moment
        ``t`` the never-minted part equals ``stuck(ledger, as_of=t,
        factor=factor)`` and the in-flight total ``in_flight(ledger,
        as_of=t)``. Transfers burned before the ledger's first burn are not
        known: the series starts from zero. Its
        :func:`~.results.result_info` holds ``span``, ``freq``, ``as_of``
        and ``factor``.

    Raises
    ------
    DataError
        If the frame does not follow the ledger schema or has no burn times.
    TypeError, ValueError
        For a bad ``freq``, ``factor`` or ``as_of``.

    Examples
    --------
    >>> import cctx_research as cctx
    >>> ledger = cctx.load_sample(as_of="2024-07-01", days=2)
    >>> series = timeseries(ledger, freq="6h", as_of="2024-07-01")
    >>> late = stuck(ledger, as_of="2024-07-01")
    >>> int(series["never_minted_count"].iloc[-1]) == len(late)
    True
    """
    step = _step(freq)
    factor = arguments.positive_number("factor", factor)
    if pending_lazy.handles(ledger):  # counted per moment in the engine
        return pending_lazy.timeseries(ledger, step, factor, as_of, freq)
    frame = _ledger.ledger_frame(ledger, what="pending.timeseries")
    when = _ledger.resolve_as_of(frame, as_of)
    known = _ledger.burn_known(frame)
    if when is not None:
        known &= (frame["burn_timestamp"] <= when).to_numpy()
    rows = frame.loc[known]
    table = _ledger.table(rows, ["amount_raw", "burn_timestamp", "mint_timestamp"])
    reference, _ = _references(frame, table)
    burn = _nanoseconds(table["burn_timestamp"])
    mint = _nanoseconds(table["mint_timestamp"])
    # stuck's test, age > factor x reference, in whole nanoseconds: t - burn > floor(limit)
    judged = ~np.isnan(reference)
    limit = np.floor(np.where(judged, factor * reference * 1e9, 0.0)).astype("int64")
    late = np.where(judged, burn + limit, _NEVER)
    raw = table["amount_raw"].to_numpy(dtype="int64")
    if when is None or not len(table):
        moments = pd.DatetimeIndex([], tz="UTC")
    else:
        first = table["burn_timestamp"].min().floor(step)
        moments = pd.date_range(first, when, freq=step)
        if not len(moments) or moments[-1] != when:
            moments = moments.append(pd.DatetimeIndex([when]))
    t = moments.as_unit("ns").asi8
    # a transfer is pending at t when burn <= t < mint (as _pending says), and never
    # minted when, besides, t - burn > factor x its reference: t > late
    ever = mint > burn  # a mint before its burn is never pending
    total = _level(t, burn[ever], mint[ever], raw[ever], starts="right")
    overdue = late < mint
    never = _level(t, late[overdue], mint[overdue], raw[overdue], starts="left")
    out = pending_lazy.levels_frame(moments, total, never)
    return results.describe(out, span=_ledger.span(frame), freq=freq, as_of=when, factor=factor)


def _step(freq: Any) -> pd.Timedelta:
    """``freq`` as a fixed length of time."""
    _common.frequency(freq)
    try:
        step = pd.Timedelta(freq)
    except ValueError:
        step = None
    if step is None or step <= pd.Timedelta(0):
        raise ValueError(
            f"freq must be a fixed length of time such as '1h', '6h' or '1D', got {freq!r}"
        )
    return step


_NEVER = np.iinfo("int64").max
"""A time after every other, in nanoseconds: a mint that never came."""


def _nanoseconds(stamps: pd.Series) -> np.ndarray:
    """Times as int64 nanoseconds since the epoch; NaT as :data:`_NEVER`."""
    values = pd.to_datetime(stamps, utc=True).dt.as_unit("ns")
    missing = values.isna().to_numpy()
    stamps_ns = values.fillna(pd.Timestamp(0, tz="UTC")).astype("int64").to_numpy(dtype="int64")
    return np.where(missing, _NEVER, stamps_ns)


def _level(
    t: np.ndarray, start: np.ndarray, end: np.ndarray, raw: np.ndarray, *, starts: str
) -> tuple[np.ndarray, np.ndarray]:
    """How many intervals, and how much, hold each moment of ``t``.

    An interval holds ``t`` when it has started (``start <= t`` with
    ``starts="right"``, ``start < t`` with ``"left"``) and not ended
    (``t < end``); each ``end`` is after its ``start``.
    """
    order_s, order_e = np.argsort(start, kind="stable"), np.argsort(end, kind="stable")
    s_sorted, e_sorted = start[order_s], end[order_e]
    zero = np.zeros(1, dtype="int64")
    s_sum = np.concatenate([zero, np.cumsum(raw[order_s])])
    e_sum = np.concatenate([zero, np.cumsum(raw[order_e])])
    begun = np.searchsorted(s_sorted, t, side=starts)
    ended = np.searchsorted(e_sorted, t, side="right")
    count = (begun - ended).astype("int64")
    return count, (s_sum[begun] - e_sum[ended]).astype("int64")
