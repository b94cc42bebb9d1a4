"""Why a pending transfer waits, from what Circle's attestation API (Iris) said of its burn.

The chains say only that a burn has no mint. Iris says which side the wait
is on: the attestation is still pending (with Circle's ``delay_reason``
when it gives one), or the message is attested and nobody has relayed it,
or it is attested with an expiration block the destination has passed.

*messages* is the frame of :meth:`cctx_research.iris.IrisClient.messages`
(concatenated; or a sync directory's ``iris/messages.parquet``, which keeps
every answer: the newest answer of a message counts).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["DELAYS", "WAITS", "why"]

WAITS: dict[str, str] = {
    "attestation_pending": "Circle has not attested the burn yet",
    "attested_not_relayed": "attested; nobody has called receiveMessage on the destination",
    "expired": "attested with an expiration block the destination has passed: re-attest",
    "not_asked": "Iris was not asked about this burn, or did not know it",
}
"""Values of ``waiting_on`` in :func:`~cctx_research.analysis.pending.stuck`."""

DELAYS: dict[str, str] = {
    "insufficient_fee": "maxFee below the Fast Transfer fee: attested at finality",
    "amount_above_max": "amount above the Fast Transfer maximum: attested at finality",
    "insufficient_allowance_available": "the Fast Transfer allowance was used up",
}
"""Circle's documented ``delayReason`` values, as the stuck table words them."""

NEEDED = ("tx_hash", "message_index", "status", "delay_reason", "amount_raw",
          "expiration_block")  # fmt: skip


def _latest(messages: pd.DataFrame) -> pd.DataFrame:
    if not isinstance(messages, pd.DataFrame):
        raise TypeError(
            "attestations must be a DataFrame of Iris messages (IrisClient.messages), "
            f"got {type(messages).__name__}"
        )
    missing = [c for c in NEEDED if c not in messages.columns]
    if missing:
        raise ValueError(
            f"attestations must be Iris messages (IrisClient.messages); it lacks "
            f"{', '.join(missing)}"
        )
    frame = messages
    if "as_of" in frame.columns:
        frame = frame.sort_values("as_of", kind="stable")
    frame = frame.assign(tx=frame["tx_hash"].astype("string").str.lower())
    return frame.drop_duplicates(["tx", "message_index"], keep="last")


def why(
    rows: pd.DataFrame, messages: pd.DataFrame, last_blocks: dict[str, int]
) -> pd.DataFrame:
    """``waiting_on``, ``delay_reason`` and ``expiration_block`` for each of ``rows``.

    ``rows`` has ``burn_tx_hash``, ``amount_raw`` and ``destination_chain``;
    a burn meets the message of its transaction with its amount (in order,
    when several share it). ``last_blocks`` is the last block seen per
    destination chain (from its mints), to tell an expired message.
    """
    latest = _latest(messages)
    side = pd.DataFrame({
        "tx": rows["burn_tx_hash"].astype("string").str.lower().to_numpy(),
        "amount_raw": pd.to_numeric(rows["amount_raw"]).to_numpy(),
        "row": np.arange(len(rows)),
    })
    side["rank"] = side.groupby(["tx", "amount_raw"], sort=False).cumcount()
    amounts = pd.to_numeric(latest["amount_raw"], errors="coerce")
    latest = latest.assign(amount_raw=amounts).sort_values(["tx", "message_index"])
    known = latest[amounts.notna()].copy()
    known["rank"] = known.groupby(["tx", "amount_raw"], sort=False).cumcount()
    met = side.merge(known, on=["tx", "amount_raw", "rank"], how="left")
    # a pending message may carry no bytes (no amount): met by its place in the transaction
    blind = latest[amounts.isna()].drop(columns="amount_raw")
    unmet = met["status"].isna()
    if len(blind) and unmet.any():
        blind = blind.assign(rank=blind.groupby("tx", sort=False).cumcount())
        rest = side[unmet.to_numpy(bool)].copy()
        rest["rank"] = rest.groupby("tx", sort=False).cumcount()
        found = rest.merge(blind, on=["tx", "rank"], how="left")
        met = pd.concat([met[~unmet], found], ignore_index=True)
    met = met.sort_values("row")
    status = met["status"].astype("string")
    expires = pd.to_numeric(met["expiration_block"], errors="coerce").to_numpy(float)
    seen = rows["destination_chain"].astype(object).map(last_blocks).to_numpy(float)
    expired = (status == "complete").fillna(False).to_numpy(bool) & (expires > 0) & (
        seen > expires
    )
    waiting = np.select(
        [status.isna().to_numpy(bool), expired,
         (status == "complete").fillna(False).to_numpy(bool)],
        ["not_asked", "expired", "attested_not_relayed"],
        default="attestation_pending",
    )  # fmt: skip
    delay = met["delay_reason"].astype("string").to_numpy(object)
    delay = np.where(waiting == "attestation_pending", delay, None)
    return pd.DataFrame({
        "waiting_on": pd.Categorical(waiting, categories=list(WAITS)),
        "delay_reason": pd.array(delay, dtype="string"),
        "expiration_block": pd.array(
            [None if np.isnan(e) or e <= 0 else int(e) for e in expires], dtype="Int64"
        ),
    }, index=rows.index)
