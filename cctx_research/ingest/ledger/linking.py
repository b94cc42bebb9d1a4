"""Linking burns to mints, counting every transfer once.

Every reader hands over three tables in ledger column names:

*burns* (:data:`BURN_COLUMNS`)
    One row per burn on its source chain (``DepositForBurn`` and/or its
    ``MessageSent``; a Dune deposit; an XChainDataGen burn). ``nonce`` is
    the V1 decimal nonce; null for a V2 burn, whose nonce Circle assigns at
    attestation (unless a source gives the attested nonce).
*arrivals* (:data:`ARRIVAL_COLUMNS`)
    One row per received token message on its destination chain, with
    ``nonce`` (V1 decimal, V2 ``0x`` + 64 hex) and what the message body
    says (``amount_raw``, ``mint_recipient``, ``message_sender``, ...).
*paired*
    Ledger rows a source already paired (a two-sided Dune flows row,
    XChainDataGen's cross-chain table).

How a burn finds its mint (the ledger's ``pairing`` column,
:data:`cctx_research.schema.LEDGER_PAIRING`), strongest first:

1. ``"source"``: a source paired them. Its link wins: the burns and mints
   it covers (same chain, transaction and amount) are not linked again.
2. ``"exact"`` (V1) / ``"attested"`` (V2): the nonce, on
   ``(source_domain, nonce)``. A V2 burn has a nonce only where a source
   gives the attested one (Circle's API).
3. ``"content"``: a V2 burn and a V2 arrival that share the
   :data:`CONTENT_KEY` (source and destination domain, burn token, mint
   recipient, message sender, amount, max fee, hook data: the fields both
   sides carry unchanged from burn to attestation), seen once on each side.
   The row takes the attested nonce, the mint's time, transaction and fee.
4. ``"content_ambiguous"``: the same key more than once (identical
   transfers: an app sending a fixed amount to one recipient). They are
   real and counted, never dropped: each mint, in time order, takes the
   earliest burn of its group not yet taken that is not later than it.
   ``link_group_size`` holds how many transfers share the key, so
   volumes are right while latencies are flagged. With
   ``ambiguous="keep"`` they stay unlinked (burns ``"unpaired"``, mints
   ``"mint_only"``).

What remains is ``"pending"`` (a burn with no mint in the data) or
``"mint_only"`` (a mint whose burn is not in the data: the burn side is
null, ``burn_block`` -1, the burn fields from the message body).

``transfer_id`` is ``"<nonce>_<source chain id>_<destination chain id>"``
(the interface's id; V2 with the bytes32 nonce) and, for a burn whose
nonce is unknown, ``"<burn tx hash>_<log index>"``.

Examples
--------
>>> import pandas as pd
>>> burn = pd.DataFrame({"source_domain": [0], "nonce": ["7"], "cctp_version": [1],
...     "burn_tx_hash": ["0x" + "a" * 64], "destination_domain": [6], "amount_raw": [5]})
>>> mint = pd.DataFrame({"destination_domain": [6], "source_domain": [0], "nonce": ["7"],
...     "cctp_version": [1], "mint_tx_hash": ["0x" + "b" * 64]})
>>> ledger, counts = link([burn], [mint])
>>> ledger[["transfer_id", "pairing", "amount_raw"]].values.tolist()
[['7_1_8453', 'exact', 5]]
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ... import schema
from . import keys
from .content import CONTENT_KEY, content_links
from .rows import arrow_array, ledger_rows, token_symbols, transfer_ids

__all__ = [
    "AMBIGUOUS",
    "ARRIVAL_COLUMNS",
    "BURN_COLUMNS",
    "CONTENT_KEY",
    "link",
    "pairing_counts",
    "token_symbols",
    "transfer_ids",
    "typed",
    "unique_sides",
]

logger = logging.getLogger(__name__)

_ADDRESS_FIELDS = (
    "message_sender",
    "mint_recipient",
    "burn_token",
    "destination_caller",
    "destination_token_messenger",
)
_SHARED = (*_ADDRESS_FIELDS, "amount_raw", "max_fee_raw", "hook_data", "min_finality_threshold")

AMBIGUOUS: tuple[str, ...] = ("link", "keep")
"""What :func:`link` does with identical transfers: link them in time order, or keep them apart."""

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
    "burn_tx_from": schema.STRING,
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
    "relayer": schema.STRING,
    "mint_recipient_owner": schema.STRING,
}
"""Columns (and dtypes) of the *arrivals* table."""

_PAIRINGS = ("exact", "attested", "content", "content_ambiguous", "pending", "unpaired",
             "mint_only")
_KIND = {name: code for code, name in enumerate(_PAIRINGS)}

# Which pairing wins when two rows share a transfer id (lower wins): rows
# from events carry more fields than a source's paired row.
_RANK = {
    "exact": 0,
    "attested": 0,
    "content": 1,
    "content_ambiguous": 1,
    "source": 2,
    "pending": 3,
    "unpaired": 3,
    "mint_only": 4,
}


def typed(frame: pd.DataFrame, spec: dict[str, object]) -> pd.DataFrame:
    """``frame`` with exactly the columns of ``spec`` (missing ones null), at their dtypes."""
    out = {}
    for column, dtype in spec.items():
        if column in frame.columns:
            values = frame[column]
            out[column] = values if values.dtype == dtype else values.astype(dtype)
        elif dtype == np.dtype("int64"):
            out[column] = np.full(len(frame), -1, dtype=np.int64)
        else:
            out[column] = pd.Series(
                pd.NaT if dtype is schema.TIMESTAMP else pd.NA, index=frame.index, dtype=dtype
            )
    return pd.DataFrame(out, index=frame.index, copy=False)


def _stack(frames: Sequence[pd.DataFrame], spec: dict[str, object]) -> pd.DataFrame:
    parts = [typed(f, spec) for f in frames if len(f)]
    if not parts:
        return typed(pd.DataFrame(), spec)
    return parts[0].reset_index(drop=True) if len(parts) == 1 else typed(
        pd.concat(parts, ignore_index=True), spec
    )


def _dedupe(frame: pd.DataFrame, keys_: list[str]) -> tuple[pd.DataFrame, int]:
    """``frame`` without the rows whose ``keys_`` (all known) an earlier row had."""
    if not len(frame):
        return frame, 0
    known = frame[keys_].notna().all(axis=1).to_numpy()
    if not known.any():
        return frame, 0
    rows = None if known.all() else np.flatnonzero(known)
    repeats = keys.duplicated([[(frame[c], rows)] for c in keys_])
    if not repeats.any():
        return frame, 0
    dup = np.zeros(len(frame), dtype=bool)
    dup[slice(None) if rows is None else rows] = repeats
    return frame[~dup].reset_index(drop=True), int(dup.sum())


def _source_claims(side: pd.DataFrame, paired: pd.DataFrame, prefix: str) -> np.ndarray:
    """Rows of ``side`` that a source-paired row covers (same chain, transaction and amount)."""
    domain = "source_domain" if prefix == "burn" else "destination_domain"
    keys = [domain, f"{prefix}_tx_hash", "amount_raw"]
    if not len(side) or not len(paired) or not set(keys) <= set(paired.columns):
        return np.zeros(len(side), dtype=bool)
    covered = paired[keys].dropna().drop_duplicates()
    covered = covered.astype({domain: "int64", "amount_raw": "int64"})
    probe = side[keys].astype({"amount_raw": "Int64"})
    return probe.merge(covered.assign(_hit=True), on=keys, how="left")["_hit"].notna().to_numpy()


def link(
    burns: Sequence[pd.DataFrame],
    arrivals: Sequence[pd.DataFrame],
    paired: Sequence[pd.DataFrame] = (),
    *,
    ambiguous: str = "link",
) -> tuple[pd.DataFrame, dict[str, int]]:
    """The ledger of ``burns``, ``arrivals`` and source-paired rows, and what was counted.

    Parameters
    ----------
    burns, arrivals, paired : sequences of DataFrames
        The tables of the module note (any may be empty).
    ambiguous : {"link", "keep"}
        Identical V2 transfers: link each mint to the earliest free burn
        before it (``"content_ambiguous"``), or keep them unlinked.

    Returns
    -------
    (ledger, counts)
        The ledger (kind ``"ledger"``, with ``pairing`` and
        ``link_group_size``), ordered by burn time (mint-only rows by mint
        time) then id; counts: ``paired`` (all links), ``exact``,
        ``attested``, ``content``, ``content_ambiguous``, ``source``,
        ``pending``, ``unpaired``, ``mint_only`` and ``duplicates``.

    Raises
    ------
    ValueError
        If ``ambiguous`` is not one of :data:`AMBIGUOUS`.
    """
    if ambiguous not in AMBIGUOUS:
        raise ValueError(f"ambiguous must be 'link' or 'keep', got {ambiguous!r}")
    b, a, duplicates = unique_sides(burns, arrivals)
    sourced = [_finish(p.assign(pairing="source")) for p in paired if len(p)]
    source_rows = pd.concat(sourced, ignore_index=True) if sourced else None
    if source_rows is not None:
        b, a, claimed = _unclaimed(b, a, source_rows)
        duplicates += claimed
    links = _Links(b, a)
    links.by_nonce()
    links.by_content(ambiguous)
    links.rest(ambiguous)
    ledger = ledger_rows(b, a, *links.rows(), sort=source_rows is None)
    if source_rows is not None:
        ledger, repeated = _with_sourced(ledger, source_rows)
        duplicates += repeated
    counts = pairing_counts(ledger)
    counts["duplicates"] = duplicates
    return ledger, counts


def unique_sides(
    burns: Sequence[pd.DataFrame], arrivals: Sequence[pd.DataFrame]
) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """Burns and arrivals stacked, each event once and each nonce once; how many repeated."""
    b = _stack(burns, BURN_COLUMNS)
    a = _stack(arrivals, ARRIVAL_COLUMNS)
    b, dup_b = _dedupe(b, ["source_domain", "burn_tx_hash", "burn_log_index"])
    a, dup_a = _dedupe(a, ["destination_domain", "mint_tx_hash", "mint_log_index"])
    b, dup_kb = _dedupe(b, ["source_domain", "nonce"])
    a, dup_ka = _dedupe(a, ["source_domain", "nonce"])
    return b, a, dup_b + dup_a + dup_kb + dup_ka


def _unclaimed(b: pd.DataFrame, a: pd.DataFrame,
               source_rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, int]:  # fmt: skip
    """The burns and arrivals no source-paired row covers (a source's link wins), and how
    many were covered."""
    claimed_b = _source_claims(b, source_rows, "burn")
    claimed_a = _source_claims(a, source_rows, "mint")
    claimed = int(claimed_b.sum() + claimed_a.sum())
    return b[~claimed_b].reset_index(drop=True), a[~claimed_a].reset_index(drop=True), claimed


class _Links:
    """The links of burns ``b`` and arrivals ``a``, made rule by rule, strongest first.

    Each rule takes sides still free and adds rows: burn and arrival rows
    (-1 where that side is absent), a pairing (its code in ``_PAIRINGS``) and
    a ``link_group_size`` (0: null).
    """

    def __init__(self, b: pd.DataFrame, a: pd.DataFrame) -> None:
        self.b, self.a = b, a
        self.free_b = np.ones(len(b), dtype=bool)
        self.free_a = np.ones(len(a), dtype=bool)
        self.group_b = np.zeros(len(b), dtype=np.int64)
        self.group_a = np.zeros(len(a), dtype=np.int64)
        self.version_b = b["cctp_version"].to_numpy(dtype="float64", na_value=np.nan)
        self.version_a = a["cctp_version"].to_numpy(dtype="float64", na_value=np.nan)
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []

    def _add(self, bi: np.ndarray, ai: np.ndarray, kinds: np.ndarray, group: np.ndarray) -> None:
        self.parts.append((bi, ai, kinds, group))
        self.free_b[bi[bi >= 0]] = False
        self.free_a[ai[ai >= 0]] = False

    def by_nonce(self) -> None:
        """2. the nonce, on ``(source_domain, nonce)``, where both sides have it."""
        b, a = self.b, self.a
        keyed_b = np.flatnonzero(b["nonce"].notna().to_numpy())
        keyed_a = np.flatnonzero(a["nonce"].notna().to_numpy()) if len(keyed_b) else keyed_b
        nb_ = na_ = np.empty(0, dtype=np.int64)
        if len(keyed_b) and len(keyed_a):
            left = pd.DataFrame(
                {"source_domain": b["source_domain"].to_numpy()[keyed_b],
                 "nonce": b["nonce"].array[keyed_b], "_b": keyed_b}
            )
            right = pd.DataFrame(
                {"source_domain": a["source_domain"].to_numpy()[keyed_a],
                 "nonce": a["nonce"].array[keyed_a], "_a": keyed_a}
            )
            hits = left.merge(right, on=["source_domain", "nonce"], how="inner")
            nb_, na_ = hits["_b"].to_numpy(dtype=np.int64), hits["_a"].to_numpy(dtype=np.int64)
        kinds = np.where(self.version_b[nb_] == 2, _KIND["attested"], _KIND["exact"])
        self._add(nb_, na_, kinds, np.zeros(len(nb_), np.int64))

    def by_content(self, ambiguous: str) -> None:
        """3. content, among V2 sides still free (4. identical transfers, if ``"link"``)."""
        b, a = self.b, self.a
        cb = np.flatnonzero(self.free_b & (self.version_b == 2) & b["nonce"].isna().to_numpy())
        ca = np.flatnonzero(self.free_a & (self.version_a == 2))
        if not (len(cb) and len(ca)):
            empty = np.empty(0, dtype=np.int64)
            self._add(empty, empty, empty, empty)
            return
        lb, la, amb, size, gsb, gsa = content_links(b, a, cb, ca, ambiguous)
        self.group_b[cb], self.group_a[ca] = gsb, gsa
        kinds = np.where(amb, _KIND["content_ambiguous"], _KIND["content"])
        self._add(cb[lb], ca[la], kinds, size)

    def rest(self, ambiguous: str) -> None:
        """What remains: burns pending (unpaired, where identical transfers are kept apart),
        then mints only."""
        pb, pa_ = np.flatnonzero(self.free_b), np.flatnonzero(self.free_a)
        kept_apart = (self.group_b[pb] > 0) & (ambiguous == "keep")
        pending = np.where(kept_apart, _KIND["unpaired"], _KIND["pending"])
        self._add(pb, np.full(len(pb), -1), pending, self.group_b[pb])
        self._add(np.full(len(pa_), -1), pa_, np.full(len(pa_), _KIND["mint_only"]),
                  self.group_a[pa_])

    def rows(self) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, tuple[str, ...]],
                            np.ndarray]:  # fmt: skip
        """Burn rows, arrival rows, (pairing codes, their names) and group sizes of every row."""
        bi, ai, kinds, group = (np.concatenate(c) for c in zip(*self.parts, strict=True))
        return (bi.astype(np.int64), ai.astype(np.int64), (kinds.astype(np.int64), _PAIRINGS),
                group)  # fmt: skip


def _with_sourced(ledger: pd.DataFrame, source_rows: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """``ledger`` with the source-paired rows, each transfer once (the stronger pairing wins),
    in the ledger's order; how many rows repeated a transfer."""
    ledger = pd.concat([ledger, source_rows], ignore_index=True)
    rank = ledger["pairing"].map(_RANK).to_numpy()
    ids = arrow_array(ledger["transfer_id"])
    order = pc.sort_indices(
        pa.table({"id": ids, "rank": rank}),
        sort_keys=[("id", "ascending"), ("rank", "ascending")],
    ).to_numpy()
    ledger = ledger.iloc[order]
    dup = ledger["transfer_id"].duplicated().to_numpy()
    ledger = ledger[~dup]
    when = ledger["burn_timestamp"].fillna(ledger["mint_timestamp"])
    order = pc.sort_indices(
        pa.table({"when": arrow_array(when), "id": arrow_array(ledger["transfer_id"])}),
        sort_keys=[("when", "ascending"), ("id", "ascending")],
    ).to_numpy()
    return ledger.iloc[order].reset_index(drop=True), int(dup.sum())


def pairing_counts(ledger: pd.DataFrame) -> dict[str, int]:
    """How a ledger's transfers are paired: one count per ``pairing``, and ``paired``.

    ``paired`` counts every link (the pairings of
    :data:`~cctx_research.schema.LINKED`). A row whose ``pairing`` is null
    (a ledger that does not say how it was linked: the synthetic sample, a
    ``transfers`` file) is counted by its sides: burn and mint, ``paired``;
    a burn only, ``pending``; a mint only, ``mint_only``.

    Examples
    --------
    >>> ledger, _ = link([burn], [mint])  # doctest: +SKIP
    >>> pairing_counts(ledger)["paired"]  # doctest: +SKIP
    1
    """
    if "pairing" in ledger.columns:
        pairing = ledger["pairing"]
    else:
        pairing = pd.Series(pd.NA, index=ledger.index, dtype=schema.STRING)
    tally = pairing.value_counts()
    counts = {k: int(tally.get(k, 0)) for k in _RANK}
    counts["paired"] = sum(counts[k] for k in schema.LINKED)
    unknown = pairing.isna().to_numpy(dtype=bool)
    if unknown.any():
        burned = (ledger["burn_timestamp"].notna() | ledger["burn_tx_hash"].notna()).to_numpy()
        minted = (ledger["mint_timestamp"].notna() | ledger["mint_tx_hash"].notna()).to_numpy()
        counts["paired"] += int((unknown & burned & minted).sum())
        counts["pending"] += int((unknown & burned & ~minted).sum())
        counts["mint_only"] += int((unknown & ~burned & minted).sum())
    return counts


def _finish(rows: pd.DataFrame) -> pd.DataFrame:
    """Ledger columns at their dtypes, with transfer ids and tokens where missing."""
    types = schema.dtypes("ledger")
    out: dict[str, object] = {}
    for column in schema.columns("ledger"):
        if column == "transfer_id":
            continue
        kind = types[column]
        if column in rows.columns:
            values = rows[column]
            out[column] = values if values.dtype == kind else values.astype(kind)
        elif column in ("burn_block", "mint_block"):
            out[column] = np.full(len(rows), -1, dtype=np.int64)
        else:
            out[column] = pd.Series(
                pd.NaT if kind is schema.TIMESTAMP else pd.NA, index=rows.index, dtype=kind
            )
    frame = pd.DataFrame(out, index=rows.index)
    if "transfer_id" in rows.columns:
        ids = rows["transfer_id"].astype(schema.STRING)
    else:
        ids = pd.Series(pd.NA, index=rows.index, dtype=schema.STRING)
    need = ids.isna().to_numpy()
    if need.any():
        sub = frame[need]
        if "burn_log_index" in rows.columns:
            log_index = rows["burn_log_index"][need]
        else:
            log_index = pd.Series(pd.NA, index=sub.index, dtype=schema.NULLABLE_INT)
        ids[need] = transfer_ids(
            sub["nonce"],
            sub["source_domain"],
            sub["destination_domain"],
            sub["burn_tx_hash"],
            log_index,
        ).to_numpy()
    frame.insert(0, "transfer_id", ids)
    if frame["token"].isna().any():
        frame["token"] = frame["token"].fillna(
            token_symbols(frame["source_domain"], frame["burn_token"])
        )
    return frame[schema.columns("ledger")]
