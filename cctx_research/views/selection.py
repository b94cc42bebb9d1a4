"""Which rows a view shows: chains picked by the user, transfers touching them.

Shared by the report and the widgets, so that "chains" means the same in
both: the transfers that *touch* a chain, as source or destination.

Examples
--------
>>> chain_names(["Base", 7])
('base', 'polygon')
>>> chain_names(None) is None
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .. import chains as chain_registry
from ..addressing import canonical_addresses

__all__ = ["chain_names", "touching", "with_main_chain"]

_ROLE_CHAIN = {
    "recipient": ("mint_recipient", "destination_chain"),
    "sender": ("message_sender", "source_chain"),
}


def chain_names(values: Any) -> tuple[str, ...] | None:
    """Normalise ``chains=`` (names, aliases or domain ids) to canonical names, domain order.

    ``None`` stays ``None`` (all chains); an unknown chain is a ValueError
    listing the known names.
    """
    ids = chain_registry.domains(values)
    return None if ids is None else tuple(chain_registry.chain_name(d) for d in ids)


def touching(transfers: pd.DataFrame, names: Sequence[str] | None) -> pd.DataFrame:
    """The transfers whose source or destination is one of ``names`` (all when None).

    The result keeps the frame's ``attrs`` (its provenance).
    """
    if not names:
        return transfers
    keep = transfers["source_chain"].astype(str).isin(names) | transfers[
        "destination_chain"
    ].astype(str).isin(names)
    out = transfers.loc[keep]
    out.attrs = dict(transfers.attrs)
    return out


def with_main_chain(ranked: pd.DataFrame, transfers: pd.DataFrame, *, role: str) -> pd.DataFrame:
    """``ranked`` with a ``chain`` column: the chain each address has most volume on.

    Recipients count on the destination chain, senders on the source chain:
    the chain whose block explorer shows the address's side of its
    transfers (ties go to the first chain by name).

    Parameters
    ----------
    ranked : pandas.DataFrame
        With an ``address`` column (``analysis.addresses.top``).
    transfers : pandas.DataFrame
        The ``"transfers"`` frame it was ranked from.
    role : {"recipient", "sender"}

    Returns
    -------
    pandas.DataFrame
        A copy of ``ranked`` with ``chain`` after ``address``.

    Examples
    --------
    >>> t = pd.DataFrame({"mint_recipient": ["0xa", "0xa", "0xb"],
    ...                   "destination_chain": ["base", "polygon", "base"],
    ...                   "amount": [1.0, 5.0, 2.0]})
    >>> ranked = pd.DataFrame({"address": ["0xa", "0xb"]})
    >>> with_main_chain(ranked, t, role="recipient")["chain"].tolist()
    ['polygon', 'base']
    """
    if role not in _ROLE_CHAIN:
        raise ValueError(f"role must be one of {list(_ROLE_CHAIN)}, got {role!r}")
    column, chain_column = _ROLE_CHAIN[role]
    out = ranked.copy()
    position = out.columns.get_loc("address") + 1
    if not len(out):
        out.insert(position, "chain", pd.Series(dtype=object, index=out.index))
        return out
    # the column as it is (Arrow strings cross without a Python string per row), and only
    # the rows of the ranked addresses summed: a whole history names millions of others
    spelled = pa.array(canonical_addresses(transfers[column].array).array)
    # a missing address (NaN or None) ranked too is null here, as in pandas' groupby: no chain
    ranked_ = pa.array(out["address"].astype(str).tolist(), spelled.type, from_pandas=True)
    rows = np.flatnonzero(pc.fill_null(pc.is_in(spelled, value_set=ranked_), False))
    sides = pd.DataFrame(
        {
            "address": spelled.take(rows).to_numpy(zero_copy_only=False),
            "chain": transfers[chain_column].iloc[rows].astype(str).to_numpy(),
            "amount": transfers["amount"].to_numpy()[rows],
        }
    )
    volume = (
        sides.groupby(["address", "chain"], sort=False)["amount"]
        .sum()
        .reset_index()
        .sort_values(["amount", "chain"], ascending=[False, True], kind="stable")
        .drop_duplicates("address")
    )
    main = dict(zip(volume["address"].astype(str), volume["chain"], strict=True))
    out.insert(position, "chain", out["address"].astype(str).map(main))
    return out
