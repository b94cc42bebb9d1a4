"""A ledger as the ``transfers`` frame, so the analysis runs on loaded data unchanged."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from .. import chains, schema
from ..provenance import attach, provenance
from ..tokens import default_token_rows

__all__ = ["transfers_from_ledger"]

logger = logging.getLogger(__name__)


def transfers_from_ledger(ledger: pd.DataFrame) -> pd.DataFrame:
    """The ``transfers`` frame (the mint side, completed and pending) of a ledger.

    Each transfer appears once, as the interface shows it: ``timestamp`` is
    the mint time when minted (``is_completed`` true), else the burn time
    (pending). Identical V2 transfers kept apart (``load(...,
    ambiguous="keep")``: ``pairing`` ``"unpaired"``) show as pending, and
    their mints as completed mint-only rows. Transfers of other tokens than
    USDC are left out when the ledger holds USDC, with an
    :class:`~cctx_research.errors.OtherTokenWarning`
    (:mod:`cctx_research.tokens`). Rows with no
    time at all (event logs without block times) are left out, and counted
    in a log line. Where the ledger knows the owner of a token-account
    recipient (Solana), ``mint_recipient_owner`` is kept beside
    ``mint_recipient``, and the address analyses count the owner.

    Parameters
    ----------
    ledger : pandas.DataFrame
        Kind ``"ledger"`` (:func:`cctx_research.load`, the sample).

    Returns
    -------
    pandas.DataFrame
        Kind ``"transfers"``, ordered by ``timestamp`` then ``transfer_id``,
        with the ledger's provenance (operation ``"transfers_from_ledger"``).

    Examples
    --------
    >>> from cctx_research.service.sample import generate
    >>> t = transfers_from_ledger(generate("2024-07-01", days=1))
    >>> bool(t["is_completed"].any()), t["source_chain"].dtype.name
    (True, 'category')
    """
    schema.validate(ledger, "ledger")
    ledger = default_token_rows(ledger, what="transfers_from_ledger")
    done = ledger["mint_timestamp"].notna()
    when = ledger["mint_timestamp"].where(done, ledger["burn_timestamp"])
    keep = when.notna()
    if not keep.all():
        logger.info("left out %d transfers without a burn or mint time", int((~keep).sum()))
    src = ledger["source_domain"].to_numpy(dtype=np.int64)
    dst = ledger["destination_domain"].to_numpy(dtype=np.int64)
    names = {d: chains.chain_name(int(d)) for d in np.unique(np.concatenate([src, dst]))}
    out = pd.DataFrame(
        {
            "transfer_id": ledger["transfer_id"].astype(schema.STRING),
            "timestamp": when.astype(schema.TIMESTAMP),
            "amount": ledger["amount_raw"].to_numpy(dtype=np.int64) / 1_000_000,
            "amount_raw": ledger["amount_raw"].to_numpy(dtype=np.int64),
            "is_completed": done.to_numpy(dtype=bool),
            "source_domain": src,
            "destination_domain": dst,
            "source_chain": schema.chain_categorical([names[d] for d in src]),
            "destination_chain": schema.chain_categorical([names[d] for d in dst]),
            **{
                c: ledger[c].astype(schema.STRING)
                for c in (
                    "mint_recipient",
                    "message_sender",
                    "burn_token",
                    "destination_caller",
                    "destination_token_messenger",
                )
            },
        },
        index=ledger.index,
    )[keep.to_numpy()]
    owner = ledger.get("mint_recipient_owner")
    if owner is not None and owner.notna().any():  # Solana token accounts' owners
        out["mint_recipient_owner"] = owner.astype(schema.STRING)[keep.to_numpy()]
    order = np.lexsort((out["transfer_id"].to_numpy(dtype=object), out["timestamp"].to_numpy()))
    out = out.iloc[order].reset_index(drop=True)
    record = provenance(ledger)
    if record is not None:
        attach(out, record.replace(operation="transfers_from_ledger"))
    return schema.validate(out, "transfers")
