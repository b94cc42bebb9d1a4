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

CONTENT_KEY: tuple[str, ...] = (
    "source_domain",
    "destination_domain",
    "burn_token",
    "mint_recipient",
    "message_sender",
    "amount_raw",
    "max_fee_raw",
    "hook_data",
)
"""The fields a V2 burn and its arrival both carry unchanged (BurnMessageV2 and header)."""

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


def _nanos(stamps: pd.Series, missing: int) -> np.ndarray:
    values = stamps.array.asi8 if len(stamps) else np.zeros(0, dtype=np.int64)
    return np.where(stamps.isna().to_numpy(), missing, values)


def _fifo(
    gb: np.ndarray, ga: np.ndarray, tb: np.ndarray, ta: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Within each group, each mint (in time order) takes the earliest free burn not after it.

    Returns (burn rows, arrival rows) of the links, as positions in the inputs. With
    ``B`` burns before a group's ``j``-th mint, the links made so far follow
    ``M_j = min(M_{j-1} + 1, B_j)``, whose closed form is
    ``min(j + 1, j + min_{i<=j}(B_i - i))``: a cumulative minimum, vectorised over
    every group at once by offsetting each group below the one before.
    """
    nb = len(gb)
    group = np.concatenate([gb, ga])
    when = np.concatenate([tb, ta])
    side = np.concatenate([np.zeros(nb, np.int8), np.ones(len(ga), np.int8)])
    order = np.lexsort((side, when, group))
    g, s = group[order], side[order]
    start = np.r_[True, g[1:] != g[:-1]]
    group_start = np.maximum.accumulate(np.where(start, np.arange(len(g)), 0))
    burns_so_far = np.cumsum(s == 0)
    before = burns_so_far - np.r_[0, burns_so_far][group_start]  # burns in group up to here
    mint = s == 1
    mg, mb, mpos = g[mint], before[mint], order[mint] - nb
    mstart = np.r_[True, mg[1:] != mg[:-1]]
    mfirst = np.maximum.accumulate(np.where(mstart, np.arange(len(mg)), 0))
    j = np.arange(len(mg)) - mfirst
    span = 2 * (len(g) + 2)
    # groups are sorted ascending: offset each below the ones before, then a running min
    rank = np.cumsum(mstart) - 1
    v = (mb - j) - rank * span
    cummin = np.minimum.accumulate(v) + rank * span
    m_now = np.minimum(j + 1, cummin + j)
    m_before = np.where(mstart, 0, np.r_[0, m_now[:-1]])
    linked = m_now > m_before
    # the burn a link takes: the (M - 1)-th burn of the group, in time order
    bmask = s == 0
    bg, bpos = g[bmask], order[bmask]
    bstart = np.r_[True, bg[1:] != bg[:-1]]
    first_burn_of = {}
    starts = np.flatnonzero(bstart)
    first_burn_of = pd.Series(starts, index=bg[starts])
    first = first_burn_of.reindex(mg[linked]).to_numpy(dtype=np.int64)
    burn_rows = bpos[first + m_now[linked] - 1]
    return burn_rows, mpos[linked]


def _content_links(
    burns: pd.DataFrame, arrivals: pd.DataFrame, cb: np.ndarray, ca: np.ndarray, ambiguous: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Content links among the V2 burns ``cb`` and arrivals ``ca`` (rows still unlinked).

    Returns burn rows, arrival rows (positions in ``cb`` and ``ca``), whether each
    link is ambiguous, its group size, and the group size of every burn in ``cb``
    and arrival in ``ca`` (0 where the group is not shared).
    """
    gid = keys.group_ids([[(burns[c], cb), (arrivals[c], ca)] for c in CONTENT_KEY])
    gb, ga = gid[: len(cb)], gid[len(cb) :]
    n_groups = int(gid.max(initial=-1)) + 1
    nb = np.bincount(gb, minlength=n_groups)
    na = np.bincount(ga, minlength=n_groups)
    size = np.maximum(nb, na)
    tb = _nanos(burns["burn_timestamp"], np.iinfo(np.int64).min)[cb]
    ta = _nanos(arrivals["mint_timestamp"], np.iinfo(np.int64).max)[ca]
    single = (nb == 1) & (na == 1)
    ub = np.flatnonzero(single[gb])
    ua = np.flatnonzero(single[ga])
    # one burn and one mint: pair by group (a mint before its burn is no link)
    ua = ua[np.argsort(ga[ua], kind="stable")]
    ub = ub[np.argsort(gb[ub], kind="stable")]
    ok = tb[ub] <= ta[ua]
    lb, la = ub[ok], ua[ok]
    amb_b = np.empty(0, dtype=np.int64)
    amb_a = np.empty(0, dtype=np.int64)
    shared = (nb >= 1) & (na >= 1) & ~single
    if ambiguous == "link" and shared.any():
        rb = np.flatnonzero(shared[gb])
        ra = np.flatnonzero(shared[ga])
        fb, fa = _fifo(gb[rb], ga[ra], tb[rb], ta[ra])
        amb_b, amb_a = rb[fb], ra[fa]
    burn_rows = np.concatenate([lb, amb_b])
    arrival_rows = np.concatenate([la, amb_a])
    is_ambiguous = np.r_[np.zeros(len(lb), bool), np.ones(len(amb_b), bool)]
    group_size = size[gb[burn_rows]] if len(burn_rows) else np.zeros(0, dtype=np.int64)
    burn_group = np.where(size[gb] > 1, size[gb], 0)
    arrival_group = np.where(size[ga] > 1, size[ga], 0)
    return burn_rows, arrival_rows, is_ambiguous, group_size, burn_group, arrival_group


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
    b = _stack(burns, BURN_COLUMNS)
    a = _stack(arrivals, ARRIVAL_COLUMNS)
    b, dup_b = _dedupe(b, ["source_domain", "burn_tx_hash", "burn_log_index"])
    a, dup_a = _dedupe(a, ["destination_domain", "mint_tx_hash", "mint_log_index"])
    b, dup_kb = _dedupe(b, ["source_domain", "nonce"])
    a, dup_ka = _dedupe(a, ["source_domain", "nonce"])
    duplicates = dup_b + dup_a + dup_kb + dup_ka

    sourced = [_finish(p.assign(pairing="source")) for p in paired if len(p)]
    source_rows = pd.concat(sourced, ignore_index=True) if sourced else None
    if source_rows is not None:
        claimed_b = _source_claims(b, source_rows, "burn")
        claimed_a = _source_claims(a, source_rows, "mint")
        duplicates += int(claimed_b.sum() + claimed_a.sum())
        b = b[~claimed_b].reset_index(drop=True)
        a = a[~claimed_a].reset_index(drop=True)

    # 2. the nonce, where both sides have it
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
    version_b = b["cctp_version"].to_numpy(dtype="float64", na_value=np.nan)
    version_a = a["cctp_version"].to_numpy(dtype="float64", na_value=np.nan)
    nonce_kind = np.where(version_b[nb_] == 2, _KIND["attested"], _KIND["exact"])

    # 3. content, among V2 sides still free
    free_b = np.ones(len(b), dtype=bool)
    free_a = np.ones(len(a), dtype=bool)
    free_b[nb_] = False
    free_a[na_] = False
    cb = np.flatnonzero(free_b & (version_b == 2) & b["nonce"].isna().to_numpy())
    ca = np.flatnonzero(free_a & (version_a == 2))
    group_b = np.zeros(len(b), dtype=np.int64)
    group_a = np.zeros(len(a), dtype=np.int64)
    if len(cb) and len(ca):
        lb, la, amb, size, gsb, gsa = _content_links(b, a, cb, ca, ambiguous)
        group_b[cb], group_a[ca] = gsb, gsa
        lb, la = cb[lb], ca[la]
        content_kind = np.where(amb, _KIND["content_ambiguous"], _KIND["content"])
    else:
        lb = la = np.empty(0, dtype=np.int64)
        size = np.empty(0, dtype=np.int64)
        content_kind = np.empty(0, dtype=np.int64)
    free_b[lb] = False
    free_a[la] = False

    pb = np.flatnonzero(free_b)
    pa_ = np.flatnonzero(free_a)
    kept_apart = (group_b[pb] > 0) & (ambiguous == "keep")
    pending_kind = np.where(kept_apart, _KIND["unpaired"], _KIND["pending"])
    bi = np.concatenate([nb_, lb, pb, np.full(len(pa_), -1)]).astype(np.int64)
    ai = np.concatenate([na_, la, np.full(len(pb), -1), pa_]).astype(np.int64)
    kinds = np.concatenate(
        [nonce_kind, content_kind, pending_kind, np.full(len(pa_), _KIND["mint_only"])]
    ).astype(np.int64)
    group = np.concatenate([np.zeros(len(nb_), np.int64), size, group_b[pb], group_a[pa_]])
    ledger = ledger_rows(b, a, bi, ai, (kinds, _PAIRINGS), group, sort=source_rows is None)

    if source_rows is not None:
        ledger = pd.concat([ledger, source_rows], ignore_index=True)
        rank = ledger["pairing"].map(_RANK).to_numpy()
        ids = arrow_array(ledger["transfer_id"])
        order = pc.sort_indices(
            pa.table({"id": ids, "rank": rank}),
            sort_keys=[("id", "ascending"), ("rank", "ascending")],
        ).to_numpy()
        ledger = ledger.iloc[order]
        dup = ledger["transfer_id"].duplicated().to_numpy()
        duplicates += int(dup.sum())
        ledger = ledger[~dup]
        when = ledger["burn_timestamp"].fillna(ledger["mint_timestamp"])
        order = pc.sort_indices(
            pa.table({"when": arrow_array(when), "id": arrow_array(ledger["transfer_id"])}),
            sort_keys=[("when", "ascending"), ("id", "ascending")],
        ).to_numpy()
        ledger = ledger.iloc[order].reset_index(drop=True)
    counts = pairing_counts(ledger)
    counts["duplicates"] = duplicates
    return ledger, counts


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
