"""Volume counted once per end-user movement: the ``dedupe=`` of :mod:`.volumes`.

:func:`.volumes.timeseries`, :func:`~.volumes.size_buckets`,
:func:`~.volumes.seasonality` and :func:`~.volumes.kpis` count every CCTP
transfer by default: the protocol's volume.
With ``dedupe=``, volume is counted once per end-user movement: a transfer
that *continues* an earlier one is left out. An integrator wraps a CCTP leg
when its contract receives the mint and acts on it; when it acts by burning
the funds again toward a third chain, one movement made two CCTP transfers,
and the second is dropped. The rule is :mod:`.movements`' (a continuation
burns on the chain the earlier leg minted on, from the address it minted
to, within ``window`` of that mint, for no more than arrived, and the
address is a labelled integrator or the earlier leg was wrapped: it has
hook data, or its recipient is its destination caller). With the ledger,
the window is :func:`.movements.continuations`' default, an hour, and the
labels the bundled ones.

Why the first leg stays and the later ones go: the first burn is where the
user's money entered CCTP, with the user's amount and origin chain; a
continuation is the integrator routing it on, for no more than arrived, so
dropping it never adds volume and never moves a movement's start. What
``dedupe`` leaves alone, on purpose:

- a wrapped leg that is not continued (Across's periphery burning for a
  user, Mayan's FastMCTP delivering on the destination) is one transfer and
  is counted once already; :func:`.actors.integrators` says whose it was.
  Adding an integrator's own volume to CCTP's would count it twice; that is
  across protocols, not within CCTP;
- rebalancing (an operator moving its own inventory) moved once and is real
  volume; :func:`.movements.rebalancing_share` measures it.

On the synthetic sample, whose forwarder burns some mints onward to a third
chain (``sample.truth``'s ``continues``), volume counted once is the planted
movements' volume within 0.1 % (``tests/analysis/test_planted_truth.py``).

The rule reads burn times, hook data and fees, which a ``"transfers"`` frame
does not carry, so ``dedupe`` takes the ledger the transfers came from
(``cctx_research.transfers_from_ledger(ledger)`` keeps its ``transfer_id``),
or the table :func:`.movements.continuations` returns for another ``window``
or other labels.

Examples
--------
>>> import cctx_research as cctx
>>> from cctx_research.analysis import volumes
>>> ledger = cctx.load_sample(as_of="2024-07-01", days=2)
>>> transfers = cctx.transfers_from_ledger(ledger)
>>> once_ = volumes.timeseries(transfers, dedupe=ledger)["volume"].sum()
>>> bool(once_ <= volumes.timeseries(transfers)["volume"].sum())
True
"""

from __future__ import annotations

from typing import Any

import narwhals.stable.v2 as nw
import pandas as pd

from . import engines, movements

__all__ = ["transfers_once"]


def transfers_once(transfers: Any, dedupe: Any) -> Any:
    """``transfers`` without the transfers that continue an earlier one.

    Parameters
    ----------
    transfers : DataFrame (pandas, Polars, DuckDB, Dask)
        A ``"transfers"`` frame; filtered in its own engine.
    dedupe : DataFrame or None
        The ledger the transfers came from (any engine), or a
        :func:`.movements.continuations` table; None (or False) leaves
        ``transfers`` as it is.

    Raises
    ------
    TypeError
        For ``dedupe=True`` or anything else that is neither, saying what to pass.

    Examples
    --------
    >>> import cctx_research as cctx
    >>> ledger = cctx.load_sample(as_of="2024-07-01", days=1)
    >>> transfers = cctx.transfers_from_ledger(ledger)
    >>> len(transfers_once(transfers, ledger)) <= len(transfers)
    True
    """
    if dedupe is None or dedupe is False:
        return transfers
    what = "dedupe= takes the ledger these transfers came from, or movements.continuations(...)"
    if dedupe is True:
        raise TypeError(
            f"{what}: the rule reads burn times, hook data and fees, which a transfers frame "
            "lacks; pass dedupe=ledger"
        )
    if isinstance(dedupe, pd.DataFrame) and {"transfer_id", "continues"} <= set(dedupe.columns):
        table = dedupe
    elif engines.recognised(dedupe):
        table = movements.continuations(dedupe)
    else:
        raise TypeError(f"{what}; got {type(dedupe).__name__}")
    later = pd.unique(table["transfer_id"].dropna().astype(str).to_numpy())
    if not len(later):
        return transfers
    if engines.is_pandas(transfers) or not engines.recognised(transfers):
        if not isinstance(transfers, pd.DataFrame) or "transfer_id" not in transfers.columns:
            return transfers  # not a transfers frame: the schema check says what is wrong
        return transfers[~transfers["transfer_id"].isin(later).to_numpy(dtype=bool)]
    lf = engines.lazy(transfers, "transfers", columns=["transfer_id"])
    return lf.filter(~nw.col("transfer_id").is_in(list(later))).to_native()
