"""Joining burns and mints into ledger rows, only where the data determines the pair.

Every reader hands over three tables in ledger column names:

*burns*
    One row per ``DepositForBurn`` on its source chain: ``source_domain``,
    ``burn_tx_hash``, ``burn_log_index``, ``burn_block``, ``burn_timestamp``,
    ``cctp_version``, ``nonce`` (V1 decimal; null for V2, which has none at
    burn time), the burn fields (``amount_raw``, ``message_sender``,
    ``mint_recipient``, ``burn_token``, ``destination_domain``,
    ``destination_token_messenger``, ``destination_caller``) and the V2 ones
    (``max_fee_raw``, ``min_finality_threshold``, ``hook_data``).
*arrivals*
    One row per received message that minted (``MessageReceived`` and the
    ``MintAndWithdraw`` of the same transaction) on its destination chain:
    ``destination_domain``, ``mint_tx_hash``, ``mint_log_index``,
    ``mint_block``, ``mint_timestamp``, ``cctp_version``, ``source_domain``,
    ``nonce`` (V1 decimal, V2 ``0x`` + 64 hex), ``fee_raw``,
    ``finality_threshold_executed`` and what the message body says
    (``amount_raw``, ``mint_recipient``, ...), null where unknown.
*paired*
    Ledger rows a source already paired (a Dune flows row, XChainDataGen's
    cross-chain table).

The rules (the ledger's ``pairing`` column, :data:`cctx_research.schema.LEDGER_PAIRING`):

- V1 burns and arrivals join exactly on ``(source_domain, nonce)``:
  ``"exact"``. A V1 burn without an arrival is ``"pending"`` and kept.
- A V2 burn carries no nonce, so nothing in logs determines its mint: it is
  kept, ``"unpaired"``; V2 arrivals stay ``"mint_only"``. Nothing is matched
  on amounts, addresses or times: that would be a guess.
- An arrival without a burn in the data is kept, ``"mint_only"``: the burn
  side is null (``burn_timestamp`` NaT, ``burn_tx_hash`` null,
  ``burn_block`` -1) and the burn fields come from the message body.
- Rows a source paired are ``"source"``; they replace event rows with the
  same ``transfer_id`` (``"exact"`` rows win over them: they carry more).

``transfer_id`` is ``"<nonce>_<source chain id>_<destination chain id>"``
(the interface's id for V1; V2 with the bytes32 nonce) and, for a V2 burn
whose nonce is unknown, ``"<burn tx hash>_<log index>"``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .. import chains, schema

__all__ = ["ARRIVAL_COLUMNS", "BURN_COLUMNS", "pair", "transfer_ids"]

logger = logging.getLogger(__name__)

_ADDRESS_FIELDS = (
    "message_sender",
    "mint_recipient",
    "burn_token",
    "destination_caller",
    "destination_token_messenger",
)
_SHARED = (*_ADDRESS_FIELDS, "amount_raw", "max_fee_raw", "hook_data", "min_finality_threshold")

BURN_COLUMNS: dict[str, object] = {
    "source_domain": np.dtype("int64"),
    "burn_tx_hash": schema.STRING,
    "burn_log_index": schema.NULLABLE_INT,
    "burn_block": np.dtype("int64"),
    "burn_timestamp": schema.TIMESTAMP,
    "cctp_version": schema.NULLABLE_INT,
    "nonce": schema.STRING,
    "amount_raw": np.dtype("int64"),
    **{c: schema.STRING for c in _ADDRESS_FIELDS},
    "destination_domain": np.dtype("int64"),
    "max_fee_raw": schema.NULLABLE_INT,
    "min_finality_threshold": schema.NULLABLE_INT,
    "hook_data": schema.STRING,
}
"""Columns (and dtypes) of the *burns* table."""

ARRIVAL_COLUMNS: dict[str, object] = {
    "destination_domain": np.dtype("int64"),
    "mint_tx_hash": schema.STRING,
    "mint_log_index": schema.NULLABLE_INT,
    "mint_block": np.dtype("int64"),
    "mint_timestamp": schema.TIMESTAMP,
    "cctp_version": schema.NULLABLE_INT,
    "source_domain": np.dtype("int64"),
    "nonce": schema.STRING,
    "amount_raw": schema.NULLABLE_INT,
    **{c: schema.STRING for c in _ADDRESS_FIELDS},
    "fee_raw": schema.NULLABLE_INT,
    "finality_threshold_executed": schema.NULLABLE_INT,
    "max_fee_raw": schema.NULLABLE_INT,
    "min_finality_threshold": schema.NULLABLE_INT,
    "hook_data": schema.STRING,
}
"""Columns (and dtypes) of the *arrivals* table."""

_RANK = {"exact": 0, "source": 1, "pending": 2, "unpaired": 2, "mint_only": 3}


def typed(frame: pd.DataFrame, spec: dict[str, object]) -> pd.DataFrame:
    """``frame`` with exactly the columns of ``spec`` (missing ones null), at their dtypes."""
    out = pd.DataFrame(index=frame.index)
    for column, dtype in spec.items():
        if column in frame.columns:
            out[column] = frame[column].astype(dtype)
        elif dtype == np.dtype("int64"):
            out[column] = np.full(len(frame), -1, dtype=np.int64)
        else:
            out[column] = pd.Series(
                pd.NaT if dtype is schema.TIMESTAMP else pd.NA, index=frame.index, dtype=dtype
            )
    return out


def transfer_ids(
    nonce: pd.Series, src: pd.Series, dst: pd.Series, tx_hash: pd.Series, log_index: pd.Series
) -> pd.Series:
    """``<nonce>_<src chain id>_<dst chain id>``, or ``<tx hash>_<log index>`` without a nonce."""
    known = {int(d): chains.chain_id(int(d)) for d in pd.unique(pd.concat([src, dst]))}
    ids = [
        f"{n}_{known[int(s)]}_{known[int(d)]}"
        if isinstance(n, str)
        else f"{h}_{'' if pd.isna(k) else int(k)}"
        for n, s, d, h, k in zip(
            nonce.astype(object).where(nonce.notna(), None),
            src.to_numpy(),
            dst.to_numpy(),
            tx_hash.astype(object),
            log_index.astype(object),
            strict=True,
        )
    ]
    return pd.Series(ids, index=nonce.index, dtype=schema.STRING)


def _stack(frames: Sequence[pd.DataFrame], spec: dict[str, object]) -> pd.DataFrame:
    parts = [typed(f, spec) for f in frames] or [typed(pd.DataFrame(), spec)]
    return typed(pd.concat(parts, ignore_index=True), spec)


def _dedupe(frame: pd.DataFrame, keys: list[str]) -> tuple[pd.DataFrame, int]:
    known = frame[keys].notna().all(axis=1)
    dup = frame[keys].duplicated() & known
    return frame[~dup], int(dup.sum())


def pair(
    burns: Sequence[pd.DataFrame],
    arrivals: Sequence[pd.DataFrame],
    paired: Sequence[pd.DataFrame] = (),
) -> tuple[pd.DataFrame, dict[str, int]]:
    """The ledger of ``burns``, ``arrivals`` and source-paired rows, and what was counted.

    Returns
    -------
    (ledger, counts)
        The ledger (kind ``"ledger"``, with ``pairing``), sorted by burn time
        (mint-only rows by mint time) then id; counts ``paired``,
        ``unpaired``, ``pending``, ``mint_only`` and ``duplicates``.

    Examples
    --------
    >>> burn = pd.DataFrame({"source_domain": [0], "nonce": ["7"], "cctp_version": [1],
    ...     "burn_tx_hash": ["0x" + "a" * 64], "destination_domain": [6], "amount_raw": [5]})
    >>> mint = pd.DataFrame({"destination_domain": [6], "source_domain": [0], "nonce": ["7"],
    ...     "cctp_version": [1], "mint_tx_hash": ["0x" + "b" * 64]})
    >>> ledger, counts = pair([burn], [mint])
    >>> ledger[["transfer_id", "pairing", "amount_raw"]].values.tolist()
    [['7_1_8453', 'exact', 5]]
    """
    b = _stack(burns, BURN_COLUMNS)
    a = _stack(arrivals, ARRIVAL_COLUMNS)
    b, dup_b = _dedupe(b, ["source_domain", "burn_tx_hash", "burn_log_index"])
    a, dup_a = _dedupe(a, ["destination_domain", "mint_tx_hash", "mint_log_index"])
    duplicates = dup_b + dup_a

    has_nonce = b["nonce"].notna()
    b_keyed, b_free = b[has_nonce], b[~has_nonce]
    b_keyed, dup_kb = _dedupe(b_keyed, ["source_domain", "nonce"])
    a, dup_ka = _dedupe(a, ["source_domain", "nonce"])
    duplicates += dup_kb + dup_ka

    merged = b_keyed.merge(
        a, on=["source_domain", "nonce"], how="outer", suffixes=("", "_mint"), indicator=True
    )
    both = merged["_merge"] == "both"
    burn_only = merged["_merge"] == "left_only"
    for column in ("destination_domain", "cctp_version", *_SHARED):
        other = merged[f"{column}_mint"]
        if column == "destination_domain":
            merged[column] = merged[column].where(~merged[column].isna(), other)
        else:
            merged[column] = merged[column].where(merged[column].notna(), other)
    version = merged["cctp_version"]
    merged["pairing"] = np.where(both, "exact", np.where(burn_only, "pending", "mint_only"))
    merged.loc[burn_only & (version == 2).fillna(False), "pairing"] = "unpaired"
    b_free = b_free.assign(pairing="unpaired")
    rows = pd.concat([merged.drop(columns="_merge"), b_free], ignore_index=True)
    rows["burn_block"] = rows["burn_block"].fillna(-1)
    rows["mint_block"] = rows["mint_block"].fillna(-1)
    rows["amount_raw"] = rows["amount_raw"].fillna(-1)
    ledger = _finish(rows)

    sourced = [_finish(p.assign(pairing="source")) for p in paired if len(p)]
    if sourced:
        ledger = pd.concat([ledger, *sourced], ignore_index=True)
        rank = ledger["pairing"].map(_RANK)
        ledger = ledger.iloc[np.lexsort((rank.to_numpy(), ledger["transfer_id"].to_numpy()))]
        dup = ledger["transfer_id"].duplicated()
        duplicates += int((dup & ledger["pairing"].isin(["source"])).sum())
        ledger = ledger[~dup]
    when = ledger["burn_timestamp"].fillna(ledger["mint_timestamp"])
    order = np.lexsort((ledger["transfer_id"].to_numpy(dtype=object), when.to_numpy()))
    ledger = ledger.iloc[order].reset_index(drop=True)
    tally = ledger["pairing"].value_counts()
    counts = {
        "paired": int(tally.get("exact", 0) + tally.get("source", 0)),
        "unpaired": int(tally.get("unpaired", 0)),
        "pending": int(tally.get("pending", 0)),
        "mint_only": int(tally.get("mint_only", 0)),
        "duplicates": duplicates,
    }
    return ledger, counts


def _finish(rows: pd.DataFrame) -> pd.DataFrame:
    """Ledger columns at their dtypes, with transfer ids where missing."""
    types = schema.dtypes("ledger")
    out = pd.DataFrame(index=rows.index)
    for column in schema.columns("ledger"):
        if column == "transfer_id":
            continue
        if column in rows.columns:
            out[column] = rows[column].astype(types[column])
        elif column in ("burn_block", "mint_block"):
            out[column] = np.full(len(rows), -1, dtype=np.int64)
        else:
            kind = types[column]
            out[column] = pd.Series(
                pd.NaT if kind is schema.TIMESTAMP else pd.NA, index=rows.index, dtype=kind
            )
    if "transfer_id" in rows.columns:
        ids = rows["transfer_id"].astype(schema.STRING)
    else:
        ids = pd.Series(pd.NA, index=rows.index, dtype=schema.STRING)
    need = ids.isna()
    if need.any():
        sub = rows[need]
        absent = pd.Series(pd.NA, index=sub.index, dtype=object)
        ids[need] = transfer_ids(
            sub["nonce"],
            sub["source_domain"],
            sub["destination_domain"],
            sub.get("burn_tx_hash", absent),
            sub.get("burn_log_index", absent),
        )
    out.insert(0, "transfer_id", ids)
    return out[schema.columns("ledger")]
