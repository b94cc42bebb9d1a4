"""The pending analyses run in a lazy engine (DuckDB, Polars): in flight, stuck, over time.

:func:`.pending.in_flight`, :func:`.pending.stuck`, :func:`.pending.waiting`
and :func:`.pending.timeseries` given a DuckDB relation or a Polars frame
come here (private: the public functions are the API). What comes back is
small: the sums per route, the reference latencies (medians per route, source
and finality class), the stuck transfers alone (a table lists the oldest, and
the figure draws each), and for the series the burns, mints and deadlines
counted per moment, which a running sum in pandas turns into the levels.

The rules are those of :mod:`.pending`, written as narwhals expressions
(why twice: :mod:`.ledger_lazy`); ``tests/test_report_lazy.py`` holds the
results equal.
"""

from __future__ import annotations

import logging
from typing import Any

import narwhals.stable.v2 as nw
import numpy as np
import pandas as pd

from .. import chains, schema, times
from . import _ledger, engines, ledger_lazy, results

__all__ = ["handles", "in_flight", "last_blocks", "levels_frame", "stuck", "timeseries", "waiting"]

logger = logging.getLogger(__name__)

handles = ledger_lazy.handles

_BURN, _MINT = "__burn_timestamp_ns", "__mint_timestamp_ns"
_LEVELS = (["source_domain", "destination_domain", "finality"], ["source_domain", "finality"],
           ["finality"], [])  # fmt: skip
"""The reference levels of :data:`.pending.REFERENCES`, keyed by the engine's columns."""


def _as_of(checked: ledger_lazy.Ledger, as_of: Any) -> pd.Timestamp | None:
    """:func:`._ledger.resolve_as_of` of a lazy ledger (which has no provenance of its own)."""
    if as_of is not None:
        return times.to_timestamp(as_of, name="as_of")
    last = engines.collect(checked.lf.select(b=nw.col("burn_timestamp").max(),
                                             m=nw.col("mint_timestamp").max()))  # fmt: skip
    stamps = [v for v in last.iloc[0] if not pd.isna(v)] if len(last) else []
    return pd.Timestamp(max(stamps)).tz_convert("UTC") if stamps else None


def _timed(lf: nw.LazyFrame) -> nw.LazyFrame:
    """``lf`` with the times' epoch nanoseconds and the finality code."""
    return engines.with_epoch_ns(lf, ["burn_timestamp", "mint_timestamp"]).with_columns(
        finality=ledger_lazy.finality_code()
    )


def _pending(lf: nw.LazyFrame, when: pd.Timestamp) -> nw.LazyFrame:
    """The rows pending at ``when``: burned by then, and not minted by then."""
    burn, mint = nw.col("burn_timestamp"), nw.col("mint_timestamp")
    due = nw.lit(when)
    return lf.filter(ledger_lazy.burn_known() & (burn <= due) & (mint.is_null() | (mint > due)))


def _key(columns: list[str]) -> nw.Expr:
    """One integer per value of ``columns`` (domains and finality code, all small)."""
    out = nw.lit(0)
    for column in columns:
        out = out * 1_000_000 + nw.col(column).cast(nw.Int64())
    return out


def _references(checked: ledger_lazy.Ledger) -> list[tuple[list[str], dict[int, float]]]:
    """The median latency of the completed transfers at each level, per key."""
    done = checked.lf.filter(ledger_lazy.burn_known() & ~nw.col("mint_timestamp").is_null())
    done = ledger_lazy.with_latency(done).with_columns(finality=ledger_lazy.finality_code())
    out = []
    for keys in _LEVELS:
        lf = done.with_columns(__key=_key(keys)).group_by("__key")
        medians = engines.collect(lf.agg(m=nw.col("latency_s").median()))
        medians = medians.dropna(subset=["m"])
        out.append((keys, dict(zip(medians["__key"].astype("int64"),
                                   medians["m"].astype("float64"), strict=True))))  # fmt: skip
    return out


def _with_reference(lf: nw.LazyFrame, references: list[tuple[list[str], dict]]) -> nw.LazyFrame:
    """``lf`` with ``reference_s`` and ``level`` (0-3, -1 unjudged) as :mod:`.pending` says."""
    none = nw.lit(None).cast(nw.Float64())
    found = []
    for keys, medians in references:
        if not medians:
            found.append(none)
        elif not keys:  # every completed transfer: one median
            found.append(nw.lit(medians[0]).cast(nw.Float64()))
        else:
            found.append(
                _key(keys).replace_strict(medians, default=none, return_dtype=nw.Float64())
            )
    level = nw.lit(-1)
    for k in reversed(range(len(found))):
        level = nw.when(~found[k].is_null()).then(nw.lit(k)).otherwise(level)
    return lf.with_columns(reference_s=nw.coalesce(*found), level=level.cast(nw.Int64()))


def _age(when: pd.Timestamp) -> nw.Expr:
    return (nw.lit(when.as_unit("ns").value) - nw.col(_BURN)).cast(nw.Float64()) / 1e9


def _described(frame: pd.DataFrame, checked: ledger_lazy.Ledger, **info: Any) -> pd.DataFrame:
    frame.attrs.clear()
    return results.describe(frame, span=checked.span, **info)


def in_flight(data: Any, as_of: Any, by: str | None) -> pd.DataFrame:
    """:func:`.pending.in_flight` (``by`` checked) of a lazy ledger."""
    checked = ledger_lazy.ledger(data, what="pending.in_flight")
    when = _as_of(checked, as_of)
    keys = ["source_domain", "destination_domain"] if by == "route" else []
    aggs = {"count": nw.len(), "amount_raw": nw.col("amount_raw").sum(),
            "oldest": nw.col("burn_timestamp").min()}  # fmt: skip
    if when is None:
        out = pd.DataFrame({"count": [0], "amount_raw": [0], "oldest": [pd.NaT]})
        out = out.iloc[:0] if keys else out
    elif keys:
        out = ledger_lazy.grouped(_pending(checked.lf, when), [], aggs)
    else:
        out = engines.collect(_pending(checked.lf, when).select(**aggs))
        out["amount_raw"] = out["amount_raw"].fillna(0)
    names = list(_ledger.ROUTE) if keys else []
    out["count"] = out["count"].astype("int64")
    out["amount_raw"] = out["amount_raw"].astype("int64")
    out["amount"] = _ledger.amount(out["amount_raw"])
    out["oldest"] = pd.to_datetime(out["oldest"], utc=True).astype(schema.TIMESTAMP)
    out["max_age_s"] = (
        (when - out["oldest"]).dt.total_seconds().astype("float64")
        if when is not None else np.full(len(out), np.nan)
    )  # fmt: skip
    out = out[[*names, "count", "amount", "amount_raw", "oldest", "max_age_s"]]
    return _described(out.reset_index(drop=True), checked, as_of=when)


_ROWS = ["transfer_id", "burn_tx_hash", "source_domain", "destination_domain", "cctp_version",
         "finality", "amount_raw", "burn_timestamp", "age_s", "reference_s", "level",
         "message_sender", "mint_recipient"]  # fmt: skip


def _rows(lf: nw.LazyFrame, domains: list[int], columns: list[str]) -> pd.DataFrame:
    """``lf``'s rows brought back with the pandas path's route, finality and amount columns."""
    out = engines.collect(lf.select([c for c in _ROWS if c in columns]))
    for name, column in _ledger.routes(out, domains).items():
        out[name] = column
    if "finality" in out.columns:
        out["finality"] = pd.Categorical.from_codes(
            out["finality"].to_numpy(dtype="int8"),
            dtype=pd.CategoricalDtype(list(_ledger.FINALITY_CLASSES), ordered=True),
        )
    if "cctp_version" in out.columns:
        out["cctp_version"] = out["cctp_version"].astype("Int64")
    for column in ("transfer_id", "burn_tx_hash", "message_sender", "mint_recipient"):
        if column in out.columns:
            out[column] = out[column].astype(schema.STRING)
    out["amount_raw"] = out["amount_raw"].astype("int64")
    out["amount"] = _ledger.amount(out["amount_raw"])
    out["burn_timestamp"] = out["burn_timestamp"].astype(schema.TIMESTAMP)
    out["age_s"] = out["age_s"].astype("float64")
    out = out.sort_values(["age_s", "transfer_id"], ascending=[False, True], kind="stable")
    return out.reset_index(drop=True)


def _domains(lf: nw.LazyFrame) -> tuple[int, list[int]]:
    """Rows of ``lf``, and the domains they touch (the chain categories of their rows)."""
    seen = engines.collect(lf.group_by(["source_domain", "destination_domain"]).agg(n=nw.len()))
    both = pd.unique(np.concatenate([seen["source_domain"], seen["destination_domain"]]))
    return int(seen["n"].sum()), [int(d) for d in both]


def stuck(data: Any, as_of: Any, factor: float, attestations: Any) -> pd.DataFrame:
    """:func:`.pending.stuck` (``factor`` checked) of a lazy ledger."""
    from .pending import REFERENCES

    checked = ledger_lazy.ledger(data, what="pending.stuck")
    when = _as_of(checked, as_of)
    total = unjudged = 0
    if when is None:
        frame = _rows_of(_no_rows(), [])
    else:
        lf = _with_reference(_timed(_pending(checked.lf, when)), _references(checked))
        lf = lf.with_columns(age_s=_age(when))
        total, domains = _domains(lf)
        nulls = engines.collect(lf.select(n=nw.col("reference_s").is_null().sum()))["n"]
        unjudged = int(nulls.fillna(0).iloc[0]) if len(nulls) else 0
        late = lf.filter((nw.col("age_s") > nw.col("reference_s") * factor).fill_null(False))
        frame = _rows(late, domains, _ROWS)
    if unjudged:
        logger.warning(
            "%d pending transfers have no completed transfer to compare with: not judged",
            unjudged,
        )
    frame["reference_s"] = frame["reference_s"].astype("float64")
    frame["reference"] = pd.Categorical.from_codes(
        frame["level"].to_numpy(dtype="int8"),
        dtype=pd.CategoricalDtype(list(REFERENCES), ordered=True),
    )
    out = frame[list(_ledger.STUCK_COLUMNS)].reset_index(drop=True)
    if attestations is not None:
        from . import attestation_state

        out = out.join(attestation_state.why(out, attestations, last_blocks(checked.lf)))
    return _described(out, checked, as_of=when, factor=factor, pending=total,
                      unjudged=unjudged)  # fmt: skip


def _no_rows() -> pd.DataFrame:
    return pd.DataFrame({c: [] for c in _ROWS}).astype({"amount_raw": "int64"})


def _rows_of(empty: pd.DataFrame, domains: list[int]) -> pd.DataFrame:
    """:func:`_rows` of no row (a ledger without a moment to judge at)."""
    for column in ("source_domain", "destination_domain", "finality", "level"):
        empty[column] = empty[column].astype("int64")
    for name, column in _ledger.routes(empty, domains).items():
        empty[name] = column
    empty["finality"] = pd.Categorical.from_codes(
        [], dtype=pd.CategoricalDtype(list(_ledger.FINALITY_CLASSES), ordered=True)
    )
    empty["amount"] = _ledger.amount(empty["amount_raw"])
    for column in ("transfer_id", "burn_tx_hash", "message_sender", "mint_recipient"):
        empty[column] = empty[column].astype(schema.STRING)
    empty["cctp_version"] = empty["cctp_version"].astype("Int64")
    empty["burn_timestamp"] = empty["burn_timestamp"].astype(schema.TIMESTAMP)
    empty["age_s"] = empty["age_s"].astype("float64")
    return empty


def last_blocks(lf: nw.LazyFrame) -> dict[str, int]:
    """:func:`.pending._last_blocks` in the engine: each destination's last mint block."""
    block = nw.col("mint_block")
    minted = lf.filter(~block.is_null() & (block >= 0))
    last = engines.collect(minted.group_by("destination_domain").agg(b=block.max()))
    return {chains.chain_name(int(d)): int(b) for d, b in
            zip(last["destination_domain"], last["b"], strict=True)}  # fmt: skip


def waiting(data: Any, attestations: Any, as_of: Any) -> pd.DataFrame:
    """:func:`.pending.waiting` of a lazy ledger: the pending rows alone come back."""
    from . import attestation_state

    checked = ledger_lazy.ledger(data, what="pending.waiting")
    when = _as_of(checked, as_of)
    columns = ["transfer_id", "burn_tx_hash", "source_domain", "destination_domain",
               "amount_raw", "burn_timestamp", "age_s"]  # fmt: skip
    if when is None:
        rows = _rows_of(_no_rows(), [])
    else:
        lf = _timed(_pending(checked.lf, when)).with_columns(age_s=_age(when))
        rows = _rows(lf, _domains(lf)[1], columns)
    out = rows[["transfer_id", "burn_tx_hash", "source_chain", "destination_chain", "amount",
                "amount_raw", "age_s"]].reset_index(drop=True)  # fmt: skip
    out = out.join(attestation_state.why(out, attestations, last_blocks(checked.lf)))
    return _described(out, checked, as_of=when, pending=len(out))


def timeseries(data: Any, step: pd.Timedelta, factor: float, as_of: Any, freq: str) -> Any:
    """:func:`.pending.timeseries` (``step`` and ``factor`` checked) of a lazy ledger."""
    checked = ledger_lazy.ledger(data, what="pending.timeseries")
    when = _as_of(checked, as_of)
    lf = checked.lf.filter(ledger_lazy.burn_known())
    if when is not None:
        lf = lf.filter(nw.col("burn_timestamp") <= nw.lit(when))
    lf = _with_reference(_timed(lf), _references(checked))
    judged = ~nw.col("reference_s").is_null()
    limit = (nw.col("reference_s") * factor * 1e9).floor().cast(nw.Int64())
    lf = lf.with_columns(__late=nw.when(judged).then(nw.col(_BURN) + limit))
    first = engines.collect(lf.select(f=nw.col("burn_timestamp").min()))["f"]
    if when is None or not len(first) or pd.isna(first.iloc[0]):
        moments = pd.DatetimeIndex([], tz="UTC")
    else:
        start = pd.Timestamp(first.iloc[0]).tz_convert("UTC").floor(step)
        moments = pd.date_range(start, when, freq=step)
        if not len(moments) or moments[-1] != when:
            moments = moments.append(pd.DatetimeIndex([when]))
    total, never = _levels(lf, moments, int(step.value))
    out = levels_frame(moments, total, never)
    return results.describe(out, span=checked.span, freq=freq, as_of=when, factor=factor)


def levels_frame(moments: pd.DatetimeIndex, total: tuple, never: tuple) -> pd.DataFrame:
    """``timeseries``' frame from the (count, raw amount) levels at each moment: of
    every transfer in flight (``total``) and of those past their deadline (``never``);
    the one assembly of the pandas path and the engines'."""
    out = pd.DataFrame({"timestamp": moments.astype(schema.TIMESTAMP)})
    out["pending_count"] = total[0] - never[0]
    out["pending"] = _ledger.amount(total[1] - never[1])
    out["pending_raw"] = total[1] - never[1]
    out["never_minted_count"] = never[0]
    out["never_minted"] = _ledger.amount(never[1])
    out["never_minted_raw"] = never[1]
    out["in_flight"] = _ledger.amount(total[1])
    out["in_flight_raw"] = total[1]
    return out


def _levels(lf: nw.LazyFrame, moments: pd.DatetimeIndex, step: int) -> tuple[tuple, tuple]:
    """``(count, raw)`` in flight and never minted at each moment, as :func:`.pending._level`
    counts them: each burn, mint and deadline counted by the first moment it reaches."""
    burn, mint, late = nw.col(_BURN), nw.col(_MINT), nw.col("__late")
    minted, judged = ~mint.is_null(), ~late.is_null()
    streams = (  # (what, start or end, the time, counts from the moment it is reached?)
        (0, 1, burn, True, ~minted | (mint > burn)),
        (0, -1, mint, True, minted & (mint > burn)),
        (1, 1, late, False, judged & (~minted | (late < mint))),
        (1, -1, mint, True, judged & minted & (late < mint)),
    )
    zeros = [np.zeros(len(moments), dtype="int64") for _ in range(4)]
    if not len(moments):
        return (zeros[0], zeros[1]), (zeros[2], zeros[3])
    t = moments.as_unit("ns").asi8
    t0, when = int(t[0]), int(t[-1])
    grid = len(t) - int((when - t0) % step != 0)  # the moments on the step's grid
    for what, sign, time, reached, keep in streams:
        at = _moment(time, t0, step, grid, when, reached=reached)
        counted = lf.filter(keep.fill_null(False)).with_columns(__at=at)
        counted = counted.filter(~nw.col("__at").is_null())
        got = engines.collect(counted.group_by("__at").agg(n=nw.len(),
                                                           raw=nw.col("amount_raw").sum()))
        index = got["__at"].to_numpy(dtype="int64")
        np.add.at(zeros[2 * what], index, sign * got["n"].to_numpy(dtype="int64"))
        np.add.at(zeros[2 * what + 1], index, sign * got["raw"].to_numpy(dtype="int64"))
    total = (np.cumsum(zeros[0]), np.cumsum(zeros[1]))
    return total, (np.cumsum(zeros[2]), np.cumsum(zeros[3]))


def _moment(time: nw.Expr, t0: int, step: int, grid: int, when: int, *, reached: bool) -> nw.Expr:
    """The index of the first moment at (``reached``) or after ``time``, null when none.

    The moments are ``t0 + k * step`` for ``k < grid``, then ``when`` when it is
    not on that grid; every time given is at or after ``t0``.
    """
    since = time - nw.lit(t0)
    k = (since + (step - 1)) // step if reached else since // step + 1
    at = nw.when(k < grid).then(k)
    if (when - t0) % step:  # ``when`` itself, after the grid's last moment
        last = (time <= nw.lit(when)) if reached else (time < nw.lit(when))
        at = at.when(last).then(nw.lit(grid))
    return at.cast(nw.Int64())
