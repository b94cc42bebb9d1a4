"""Content links: V2 burns and arrivals that carry the same transfer, joined on what they share.

A V2 burn carries no nonce; its arrival carries the nonce Circle attested.
What both sides carry unchanged from burn to attestation (the content key
(:data:`CONTENT_KEY`) joins them: a key seen
once on each side is one link; a key shared by several transfers
(identical transfers) links each mint, in time order, to the earliest burn
of its group not yet taken that is not later than it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import keys

__all__ = ["CONTENT_KEY", "content_links"]

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


def content_links(
    burns: pd.DataFrame,
    arrivals: pd.DataFrame,
    cb: np.ndarray,
    ca: np.ndarray,
    ambiguous: str,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Content links among the V2 burns ``cb`` and arrivals ``ca`` (rows still unlinked);
    ``ambiguous="keep"`` leaves keys shared by several transfers unlinked.

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
    # a key seen once on each side is no group: its link_group_size is null (0 here), as the
    # schema says; only identical transfers carry how many share their key
    group_size = np.where(is_ambiguous, size[gb[burn_rows]], 0) if len(burn_rows) else (
        np.zeros(0, dtype=np.int64))
    burn_group = np.where(size[gb] > 1, size[gb], 0)
    arrival_group = np.where(size[ga] > 1, size[ga], 0)
    return burn_rows, arrival_rows, is_ambiguous, group_size, burn_group, arrival_group
