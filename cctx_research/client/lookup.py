"""The look-up call: one transaction by its hash (the Client's ``transaction``).

A completed transaction can no longer change: its reply is kept forever.
Not completed, it is kept for ``expire_after`` like any reply about the
recent past. The function takes the client's :class:`~.session.Session`
and uses only its public methods.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from .. import addressing
from ..arguments import check_type
from ..net import Keep
from . import parse
from .cache_policy import CachePolicy

if TYPE_CHECKING:
    from .calls import Call
    from .session import Session

__all__ = ["transaction"]


def transaction(session: Session, tx_hash: str) -> pd.Series:
    """One burn or mint transaction by its hash (see ``Client.transaction``)."""
    check_type(tx_hash, str, "tx_hash", "a str such as '0x' followed by 64 hex digits")
    text = addressing.normalize_hash(tx_hash, name="tx_hash")

    def fetch(call: Call) -> pd.Series:
        answer = session.post(
            "transactions-txHash",
            {"txHash": text},
            stats=call.stats,
            check=parse.check_transaction,
            keep=Keep.FRESH,
        )
        frame = parse.transaction(answer.body, decimals=session.options.decimals)
        session.retain(
            answer, CachePolicy.transaction(completed=bool(frame["is_completed"].iloc[0]))
        )
        row = frame.iloc[0].copy()
        row.name = text
        return row

    return session.call("transaction", {"tx_hash": text}, fetch)
