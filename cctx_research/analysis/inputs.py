"""What kind of frame the analysis functions were given, and what to say when it is the wrong one.

The transfer analyses (flows, volumes, addresses) take a ``"transfers"``
frame; the ledger analyses (latency, pending, v2) a ``"ledger"`` frame with
the burn time of each transfer. The plots use these checks to decide
whether to compute a result from raw data, and to fail with the same
message the analyses give.

Examples
--------
>>> import pandas as pd
>>> is_ledger(pd.DataFrame(columns=["burn_timestamp", "mint_timestamp"]))
True
>>> is_transfers(pd.DataFrame(columns=["timestamp"]))
False
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..errors import DataError

__all__ = [
    "SOURCES_OF_BURN_TIMES",
    "is_ledger",
    "is_transfers",
    "ledger_not_transfers",
    "no_burn_times",
]

SOURCES_OF_BURN_TIMES = (
    "a ledger with both sides of each transfer: cctx_research.load(...) of event logs "
    "or exports, cctx_research.load_sample(), or the file given to `report --data`"
)
"""Where data with burn times comes from, for error messages."""


def is_transfers(data: Any) -> bool:
    """Whether ``data`` is a pandas frame shaped like a ``"transfers"`` frame."""
    return isinstance(data, pd.DataFrame) and {"transfer_id", "mint_recipient"} <= set(data.columns)


def is_ledger(data: Any) -> bool:
    """Whether ``data`` is a pandas frame with a ledger's burn and mint times."""
    return isinstance(data, pd.DataFrame) and {"burn_timestamp", "mint_timestamp"} <= set(
        data.columns
    )


def no_burn_times(what: str) -> DataError:
    """The error to raise when ``what`` was given data without burn times.

    Examples
    --------
    >>> str(no_burn_times("latency.by_route")).startswith("latency.by_route needs")
    True
    """
    return DataError(
        f"{what} needs the burn time of each transfer, and this data has none "
        "(a 'transfers' frame from the interface has one timestamp per transfer, "
        "the mint's)",
        hint=f"pass {SOURCES_OF_BURN_TIMES}",
    )


def ledger_not_transfers(data: Any) -> None:
    """Raise when a ledger is given where a ``"transfers"`` frame is needed, saying what to do.

    Examples
    --------
    >>> ledger_not_transfers(pd.DataFrame(columns=["burn_timestamp", "mint_timestamp"]))
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cctx_research.errors.DataError: this is a 'ledger' frame ... takes a 'transfers' frame
    hint: pass cctx_research.transfers_from_ledger(ledger)
    """
    if is_ledger(data) and "timestamp" not in data.columns:
        raise DataError(
            "this is a 'ledger' frame (both sides of each transfer), and this analysis takes "
            "a 'transfers' frame",
            hint="pass cctx_research.transfers_from_ledger(ledger)",
        )
