"""The user's own data for the service (``cctx-research serve --data``).

``--data`` accepts whatever :func:`cctx_research.load` reads: the toolkit's
own ``ledger`` and ``transfers`` frames (Parquet, CSV, JSON), an imported
ledger, event logs, Dune and XChainDataGen exports. This module only adapts
a loaded ledger to what the service can answer (see :func:`for_service`);
reading and coercion live in :mod:`cctx_research.ingest`.

A ``transfers`` file carries one time only, so a completed row is taken as
burned and minted at ``timestamp`` and a pending row as burned then and
never minted. Such rows carry no transaction hashes or block numbers:
**hash look-ups of such data find nothing**, the recipient listing shows
``transactionHash`` ``""``, and block numbers are -1.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from .. import schema
from ..errors import CctxWarning, DataError

__all__ = ["for_service", "load_ledger", "to_ledger"]

logger = logging.getLogger(__name__)

ZERO_ADDRESS = "0x" + "0" * 40
_ADDRESSES = schema.ADDRESS_COLUMNS


def to_ledger(frame: pd.DataFrame) -> pd.DataFrame:
    """Coerce an in-memory frame of kind ``"ledger"`` or ``"transfers"`` to a typed ledger.

    Raises
    ------
    DataError
        Naming the missing columns (of both kinds), or the rows whose
        values do not fit, with their positions.
    """
    from ..ingest import ledger_from_frame

    return ledger_from_frame(frame)


def for_service(ledger: pd.DataFrame, *, fractions: str = "refuse") -> pd.DataFrame:
    """A loaded ledger as the service can serve it.

    Transfers with neither a burn time nor a mint time (event logs loaded
    without block times) are left out, with a warning: the service's
    windows are times. Unknown addresses (a source that lacks a field)
    are served as the zero address, which the interface uses for "none".
    Mint-only rows (burn side null) are served as mints; their burn has no
    time, so they are in no burn window.

    The interface carries whole seconds: with ``fractions="refuse"`` (what
    ``serve --data`` does) a time with a fraction of a second is an error
    naming its rows; with ``"floor"`` (``report --data``, whose ledger
    sections read the exact times) such times are served to the second,
    with a warning saying how many.
    """
    schema.validate(ledger, "ledger")
    if fractions not in ("refuse", "floor"):
        raise ValueError(f"fractions must be 'refuse' or 'floor', got {fractions!r}")
    if fractions == "refuse":
        _refuse_fractions(ledger)
    else:
        ledger = _floor_fractions(ledger)
    timeless = ledger["burn_timestamp"].isna() & ledger["mint_timestamp"].isna()
    if timeless.any():
        logger.warning(
            "%d transfers have no burn or mint time and are not served; load event logs "
            "with a blocks file (blocks=) or with blockTimestamp to serve them",
            int(timeless.sum()),
        )
        ledger = ledger[~timeless.to_numpy()]
    out = ledger.copy()
    for column in _ADDRESSES:
        if out[column].isna().any():
            out[column] = out[column].fillna(ZERO_ADDRESS)
    out.attrs = dict(ledger.attrs)
    return out.reset_index(drop=True)


def _refuse_fractions(ledger: pd.DataFrame) -> None:
    """The interface carries whole seconds: a finer time is refused, never cut."""
    for column in ("burn_timestamp", "mint_timestamp"):
        times = ledger[column]
        fraction = times.notna() & (times != times.dt.floor("s"))
        if fraction.any():
            rows = (np.flatnonzero(fraction.to_numpy()) + 1)[:5]
            raise DataError(
                f"column {column!r} has {int(fraction.sum())} time(s) with a fraction of a "
                f"second (row {', row '.join(map(str, rows))}); the interface carries whole "
                "seconds, so serving them would cut them",
                hint=f"round them first, e.g. ledger[{column!r}].dt.floor('s'), or analyse "
                "the file directly with cctx_research.load, which keeps them exactly",
            )


def _floor_fractions(ledger: pd.DataFrame) -> pd.DataFrame:
    out = ledger.copy()
    cut = 0
    for column in ("burn_timestamp", "mint_timestamp"):
        floored = out[column].dt.floor("s")
        cut += int((out[column].notna() & (out[column] != floored)).sum())
        out[column] = floored
    if cut:
        warnings.warn(
            CctxWarning(
                f"{cut} time(s) with a fraction of a second are served to the second "
                "(the interface carries whole seconds); the ledger itself keeps them exactly"
            ),
            stacklevel=3,
        )
    out.attrs = dict(ledger.attrs)
    return out


def load_ledger(
    path: str | Path | Iterable[str | Path], *, fractions: str = "refuse", **options
) -> pd.DataFrame:
    """Load files (anything :func:`cctx_research.load` reads) as a ledger for the service.

    Parameters
    ----------
    path : path, glob, directory or list of them
    fractions : {"refuse", "floor"}
        Times with a fraction of a second: an error, or served to the second
        with a warning (see :func:`for_service`).
    **options
        Passed to :func:`cctx_research.load` (``format``, ``chain``, ...).

    Raises
    ------
    DataError
        If the files are missing, unreadable or match no format, or rows
        do not fit (see :func:`cctx_research.load`).
    """
    from ..ingest import load

    ledger = load(path, **options)
    served = for_service(ledger, fractions=fractions)
    logger.info("loaded %d transfers from %s", len(served), path)
    return served
