"""Helpers shared by the ledger analyses (private: no public API here).

The latency, pending and V2 analyses read a ``"ledger"`` frame: one row per
transfer with its burn side and its mint side. This module checks such a
frame, says clearly when the data has no burn times, and derives the columns
those analyses group by (route chains, finality class, latency).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .. import chains, schema, times
from ..provenance import provenance
from ..tokens import default_token_rows
from . import _common, engines, results
from .inputs import SOURCES_OF_BURN_TIMES, no_burn_times

FAST_THRESHOLD = 1000
"""A ``min_finality_threshold`` at or below this asks for a fast transfer."""

FINALITY_CLASSES: tuple[str, ...] = ("fast", "standard", "unknown")
"""Finality classes, in the order results list them."""

USDC_UNIT = 1_000_000
"""Base units per USDC (6 decimals on every chain)."""

ROUTE = ("source_chain", "destination_chain")

STUCK_COLUMNS: tuple[str, ...] = (
    "transfer_id", "burn_tx_hash", "source_chain", "destination_chain", "cctp_version",
    "finality", "amount", "amount_raw", "burn_timestamp", "age_s", "reference_s", "reference",
    "message_sender", "mint_recipient",
)  # fmt: skip
"""The columns of :func:`.pending.stuck`, in order."""


def ledger_frame(frame: Any, *, what: str, name: str = "ledger") -> pd.DataFrame:
    """Check a ledger frame with burn times; the V2 columns it lacks are added as nulls.

    ``what`` names the analysis in the error messages. The caller's frame is
    never modified.
    """
    if not isinstance(frame, pd.DataFrame) and engines.recognised(frame):
        frame = _collect(frame, what)
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(
            f"{name} must be a pandas DataFrame of kind 'ledger' "
            f"({SOURCES_OF_BURN_TIMES}), got {type(frame).__name__}"
        )
    if "burn_timestamp" not in frame.columns and "timestamp" in frame.columns:
        raise no_burn_times(what)
    if any(c not in frame.columns for c in schema.LEDGER_V2):
        frame = schema.complete(frame.copy(deep=False), "ledger")
    frame = schema.validate(frame, "ledger")
    if len(frame) and not burn_known(frame).any():
        raise no_burn_times(what)
    return default_token_rows(frame, what=what)


_UNUSED = ("burn_token", "destination_caller", "destination_token_messenger", "nonce",
           "mint_tx_hash", "burn_tx_from", "mint_recipient_owner", "link_group_size")  # fmt: skip
"""Ledger columns the latency, pending and V2 analyses never read: left behind in the engine
(hashes and nonces are the widest columns a collect would bring back)."""


def _collect(data: Any, what: str) -> pd.DataFrame:
    """The ledger columns the analyses read, from a Polars, DuckDB or Dask frame.

    DuckDB and Polars ledgers are analysed in their engine (:mod:`.ledger_lazy`,
    :mod:`.pending_lazy`); a Dask frame, whose group-by takes no quantile, is
    collected here, only the columns the analyses use.
    """
    names = engines.lazy(data, "ledger", columns=()).collect_schema().names()
    if "burn_timestamp" not in names and "timestamp" in names:
        raise no_burn_times(what)
    optional = schema.optional_columns("ledger")
    required = [c for c in schema.columns("ledger") if c not in optional]
    lf = engines.lazy(data, "ledger", columns=required)
    names = set(lf.collect_schema().names())
    wanted = [c for c in schema.columns("ledger") if c in names and c not in _UNUSED]
    frame = engines.collect(lf.select(wanted))
    for col in _UNUSED:
        if col not in optional:  # schema.complete adds the optional ones, typed
            frame[col] = pd.Series(pd.NA, index=frame.index, dtype=schema.STRING)
    frame = _common.typed(schema.complete(frame, "ledger"), "ledger")
    return frame[schema.columns("ledger")]


def burn_known(ledger: pd.DataFrame) -> np.ndarray:
    """Rows whose burn time is known.

    A ledger built from a ``"transfers"`` frame has neither a burn hash nor
    a burn block: its one timestamp is the mint's, not the burn's.
    """
    has_time = ledger["burn_timestamp"].notna().to_numpy()
    no_side = ledger["burn_tx_hash"].isna().to_numpy() & (
        ledger["burn_block"].to_numpy(dtype="int64") == -1
    )
    return has_time & ~no_side


def by_keys(by: Any, allowed: Sequence[str]) -> list[str]:
    """``by`` (None, one name or a list of names) as a list of grouping columns."""
    options = ", ".join(repr(a) for a in allowed)
    if by is None:
        return []
    items = [by] if isinstance(by, str) else by
    if not isinstance(items, (list, tuple)):
        raise TypeError(
            f"by must be None, one of {options}, or a list of them, got {type(by).__name__}"
        )
    keys: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise TypeError(f"by must name columns ({options}), got {type(item).__name__}")
        if item not in allowed:
            raise ValueError(f"by={item!r} is not supported; pass one of {options}")
        if item not in keys:
            keys.append(item)
    return [k for k in allowed if k in keys]


def finality_class(ledger: pd.DataFrame) -> pd.Categorical:
    """``"fast"`` / ``"standard"`` / ``"unknown"`` per transfer.

    A V2 transfer is fast when its ``min_finality_threshold`` is at most
    1000 and standard above. A V1 transfer is standard: V1 attestation
    always waits for the source chain's finality. Without a threshold and a
    version saying V1, the class is unknown.
    """
    threshold = ledger["min_finality_threshold"].to_numpy(dtype="float64", na_value=np.nan)
    version = ledger["cctp_version"].to_numpy(dtype="float64", na_value=np.nan)
    codes = np.full(len(ledger), 2, dtype="int8")
    codes[(version == 1) & np.isnan(threshold)] = 1
    codes[threshold > FAST_THRESHOLD] = 1
    codes[threshold <= FAST_THRESHOLD] = 0
    return pd.Categorical.from_codes(
        codes, dtype=pd.CategoricalDtype(list(FINALITY_CLASSES), ordered=True)
    )


def routes(ledger: pd.DataFrame, domains: Sequence[int] = ()) -> dict[str, pd.Categorical]:
    """``source_chain`` and ``destination_chain`` categoricals of a ledger's rows.

    Their categories are the chains of the rows' domains, and of ``domains``
    (an engine's rows, of which ``ledger`` holds a part).
    """
    src = ledger["source_domain"].to_numpy(dtype="int64")
    dst = ledger["destination_domain"].to_numpy(dtype="int64")
    seen = np.concatenate([src, dst, np.asarray(domains, dtype="int64")])
    names = {int(d): chains.chain_name(int(d)) for d in pd.unique(seen)}
    # the categories of _common.chain_column, filled by code: no per-row string work
    dtype = _common.chain_column([], chains.in_order(names.values())).dtype
    position = {name: k for k, name in enumerate(dtype.categories)}
    out = {}
    for col, values in (("source_chain", src), ("destination_chain", dst)):
        # factorize hashes (no sort); then one code per distinct domain
        inverse, uniques = pd.factorize(values)
        codes = np.array([position[names[int(d)]] for d in uniques], dtype="int32")
        out[col] = pd.Categorical.from_codes(codes[inverse], dtype=dtype)
    return out


def table(ledger: pd.DataFrame, columns: Sequence[str] = ()) -> pd.DataFrame:
    """The route columns, ``finality`` and the given ledger columns, one row per transfer."""
    out = pd.DataFrame(routes(ledger), index=ledger.index)
    out["finality"] = pd.Series(finality_class(ledger), index=ledger.index)
    for col in columns:
        out[col] = ledger[col]
    return out


LATENCY_COLUMNS: tuple[str, ...] = (
    "source_domain",
    "destination_domain",
    "burn_timestamp",
    "mint_timestamp",
    "cctp_version",
    "min_finality_threshold",
    "pairing",
)
"""What :func:`table` and :func:`latency_seconds` read: copy only these of a large ledger."""


def completed(ledger: pd.DataFrame) -> pd.DataFrame:
    """The :data:`LATENCY_COLUMNS` of the transfers with a known burn and a mint."""
    mask = burn_known(ledger) & ledger["mint_timestamp"].notna().to_numpy()
    return ledger.loc[mask, list(LATENCY_COLUMNS)]


def latency_seconds(ledger: pd.DataFrame) -> pd.Series:
    """Burn to mint in seconds (float; NaN where not minted)."""
    # nanoseconds as integers, as Timedelta.total_seconds divides them, without the Series
    mint = ledger["mint_timestamp"].to_numpy(dtype="datetime64[ns]")
    burn = ledger["burn_timestamp"].to_numpy(dtype="datetime64[ns]")
    delta = (mint.view("int64") - burn.view("int64")) / 1e9
    delta[np.isnat(mint) | np.isnat(burn)] = np.nan
    return pd.Series(delta, index=ledger.index, dtype="float64")


def amount(raw: Any) -> np.ndarray:
    """USDC (float) from base units."""
    return np.asarray(raw, dtype="float64") / USDC_UNIT


def resolve_as_of(ledger: pd.DataFrame, as_of: Any) -> pd.Timestamp | None:
    """``as_of`` as a UTC timestamp; by default the end of the data's window.

    The default is the end of the window the ledger was taken for (its
    provenance), else the latest burn or mint time in it; None for an empty
    ledger without a window.
    """
    if as_of is not None:
        return times.to_timestamp(as_of, name="as_of")
    record = provenance(ledger)
    if record is not None and record.window is not None:
        return record.window[1]
    stamps = pd.concat([ledger["burn_timestamp"], ledger["mint_timestamp"]]).dropna()
    return stamps.max() if len(stamps) else None


def sort_groups(frame: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Rows in route order (registry order of chains), then by the other keys."""
    if frame.empty or not keys:
        return frame.reset_index(drop=True)
    return frame.sort_values(list(keys), kind="stable", na_position="last").reset_index(drop=True)


def span(ledger: pd.DataFrame) -> tuple[Any, Any]:
    """First and last burn time of the ledger (the ``span`` of results)."""
    return results.span_of(ledger["burn_timestamp"].dropna())
