"""Who moves the money: relayers and integrators of a ledger.

Functions take a canonical ``"ledger"`` frame (pandas, or a Polars, DuckDB
or Dask frame, of which only the columns used are collected; see
:mod:`.engines`) and return small tables. Volumes are USDC (``volume``,
float) and exact base units (``volume_raw``).

- The *relayer* of a transfer is who called ``receiveMessage`` on the
  destination (``MessageReceived``'s ``caller``, the ledger's ``relayer``
  column): who paid to mint. A transfer whose relayer the source does not
  give counts under a null relayer, so shares still sum to one.
- The *integrator* is read from the burn: the depositor (``message_sender``,
  a contract when an application burns for its users), the
  ``destination_caller`` (who alone may relay; the zero address means
  anyone), or the first four bytes of the hook data (see :mod:`.hooks`).
- Labels (:mod:`cctx_research.labels`) name the addresses; ``labels=False``
  leaves them out, a path or frame adds your own over the bundled ones.

Time to relay is ``mint_timestamp - burn_timestamp``: the ledger holds no
attestation time, so it includes the attestation wait (use
:mod:`.latency` for the route's typical wait). Rebalancing and the rule that
counts a wrapped movement once are in :mod:`.rebalancing`.

Examples
--------
>>> import cctx_research as cctx
>>> table = relayers(cctx.load_sample(as_of="2024-07-01", days=1), labels=False)
>>> round(float(table["volume_share"].sum()), 9)
1.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .. import addressing, chains, schema
from .. import labels as labels_
from . import _common, _ledger, actor_inputs, actors_lazy, results
from .actor_inputs import end_user, ledger_columns

__all__ = [
    "INTEGRATOR_KEYS",
    "RELAYER_BY",
    "end_user",
    "hhi",
    "integrators",
    "ledger_columns",
    "relayers",
]

RELAYER_BY: tuple[str, ...] = ("route", "cctp_version")
"""What ``by`` may split :func:`relayers` by: the route, the CCTP version."""

INTEGRATOR_KEYS: tuple[str, ...] = ("message_sender", "destination_caller", "hook_prefix", "label")
"""What identifies an integrator in :func:`integrators` (``label``: the depositor's label)."""

ZERO_CALLERS = frozenset(z.lower() for z in addressing.ZERO_ADDRESSES)
"""A destination caller of zero, as any chain spells it (lowercase): anyone may relay."""


def _chain_categorical(values: Sequence[int]) -> pd.Categorical:
    names = [chains.chain_name(int(d)) for d in values]
    return _common.chain_column(names, chains.in_order(names))


def _shares(out: pd.DataFrame, group: list[str], count: str) -> pd.DataFrame:
    if group:
        totals = out.groupby(group, observed=True, sort=False)[[count, "volume_raw"]].transform(
            "sum"
        )
    else:
        totals = pd.DataFrame(
            {count: out[count].sum(), "volume_raw": out["volume_raw"].sum()}, index=out.index
        )
    out[f"{count[:-1]}_share" if count.endswith("s") else f"{count}_share"] = (
        out[count] / totals[count].where(totals[count] > 0)
    ).astype("float64")
    out["volume_share"] = (
        out["volume_raw"].astype("float64")
        / totals["volume_raw"].astype("float64").where(totals["volume_raw"] > 0)
    ).astype("float64")
    return out


def relayers(
    ledger: Any,
    *,
    by: str | Sequence[str] | None = None,
    freq: str | None = None,
    labels: Any = True,
) -> pd.DataFrame:
    """Share of mints and volume per relayer, and each relayer's time to relay.

    Parameters
    ----------
    ledger : DataFrame (pandas, Polars, DuckDB, Dask)
        A canonical ledger; only minted transfers count. A Polars or DuckDB
        frame is reduced in its engine (per group: mints, volume, median time
        to relay) and only the groups are collected; a Dask frame, or a
        calendar ``freq``, collects the columns used.
    by : {None, "route", "cctp_version"} or a list of them
        Split by route (``source_chain``, ``destination_chain``) and/or version;
        shares are within each group.
    freq : str, optional
        Also split by the time bucket of the mint (``"1D"``, ``"7D"``).
    labels : bool, path or DataFrame, default True
        Add ``relayer_label`` and ``relayer_kind`` (bundled labels, or yours
        over them); ``False`` leaves them out.

    Returns
    -------
    pandas.DataFrame
        ``timestamp`` (with ``freq``), the ``by`` columns, ``relayer``,
        ``mints``, ``volume``, ``volume_raw``, ``mint_share``,
        ``volume_share`` (within the group), ``median_relay_s`` (burn to mint,
        seconds; NaN without burn times) and the label columns. Sorted by
        group, then volume, largest first (then by relayer). :func:`~.results.result_info`
        records ``by`` (the group columns) and ``freq``. On the bundled sample,
        the mints per relayer are exactly those planted
        (:func:`cctx_research.service.sample.truth`).

    Raises
    ------
    DataError, TypeError, ValueError
        For a frame that is no ledger, or a bad ``by`` / ``freq``.

    Examples
    --------
    >>> from cctx_research import schema
    >>> list(relayers(schema.empty("ledger"), labels=False).columns)[:4]
    ['relayer', 'mints', 'volume', 'volume_raw']
    """
    keys = _ledger.by_keys(by, RELAYER_BY)
    if freq is not None:
        _common.frequency(freq)
    cols = ["source_domain", "destination_domain", "amount_raw", "burn_timestamp"]
    cols += ["mint_timestamp", "cctp_version", "relayer"]
    if actors_lazy.reduces(ledger, freq):
        lf = actor_inputs.ledger_lazy(ledger, cols, what="actors.relayers")
        groups, span = actors_lazy.relayer_groups(lf, keys, freq)
    else:
        frame = actor_inputs.ledger_columns(ledger, cols, what="actors.relayers")
        groups = _relayer_groups(frame, keys, freq)
        span = results.span_of(frame["mint_timestamp"].dropna())
    out = pd.DataFrame(index=groups.index)
    if freq is not None:
        out["timestamp"] = groups["timestamp"].astype(schema.TIMESTAMP)
    if "route" in keys:
        out["source_chain"] = _chain_categorical(groups["source_domain"].to_numpy(dtype=int))
        out["destination_chain"] = _chain_categorical(
            groups["destination_domain"].to_numpy(dtype=int)
        )
    if "cctp_version" in keys:
        out["cctp_version"] = groups["cctp_version"].astype(schema.NULLABLE_INT)
    out["relayer"] = groups["relayer"].astype(schema.STRING)
    out["mints"] = groups["mints"].astype("int64")
    out["volume"] = _ledger.amount(groups["volume_raw"])
    out["volume_raw"] = groups["volume_raw"].astype("int64")
    group_cols = [
        c
        for c in out.columns
        if c in ("timestamp", "source_chain", "destination_chain", "cctp_version")
    ]
    out = _shares(out, group_cols, "mints")
    out["median_relay_s"] = groups["median_relay_s"].astype("float64")
    # ties in volume go by relayer: the same order from every engine
    out = out.sort_values(
        [*group_cols, "volume_raw", "relayer"],
        ascending=[True] * len(group_cols) + [False, True],
        kind="stable",
    ).reset_index(drop=True)
    table = actor_inputs.labels_of(labels)
    if table is not None:
        out = labels_.attach(out, ["relayer"], user=table)
    return results.describe(out, span=span, freq=freq, by=tuple(group_cols))


def _relayer_groups(frame: pd.DataFrame, keys: list[str], freq: str | None) -> pd.DataFrame:
    """Mints, volume and median time to relay per group and relayer, from a pandas ledger."""
    # one integer key per (route, version, relayer): one cheap group-by, no string keys
    minted = frame["mint_timestamp"].notna().to_numpy()
    r_codes, r_names = pd.factorize(frame["relayer"], use_na_sentinel=True)
    key = r_codes.astype("int64") + 1
    width = len(r_names) + 1
    if "route" in keys:
        src, dst, domains = actor_inputs.route_codes(frame)
        key += (src * len(domains) + dst) * width
        width *= len(domains) ** 2
    if "cctp_version" in keys:
        version = frame["cctp_version"].to_numpy(dtype="float64", na_value=np.nan)
        v_codes, v_names = pd.factorize(version, use_na_sentinel=True)
        key += (v_codes.astype("int64") + 1) * width
    work = pd.DataFrame(
        {
            "k": key,
            "amount_raw": frame["amount_raw"].to_numpy(dtype="int64"),
            "latency_s": _ledger.latency_seconds(frame).to_numpy(dtype="float64"),
        }
    )
    group: list[Any] = ["k"]
    if freq is not None:
        work["timestamp"] = frame["mint_timestamp"].array
        group = [_common.time_grouper(freq), "k"]
    # filter numbers, not the frame: a row filter would copy every string column
    if not minted.all():
        work = work.loc[minted]
    agg = (
        work.groupby(group, observed=True, sort=False, dropna=False)
        .agg(
            mints=("amount_raw", "size"),
            volume_raw=("amount_raw", "sum"),
            median_relay_s=("latency_s", "median"),
        )
        .reset_index()
    )
    key = agg["k"].to_numpy(dtype="int64")
    out = pd.DataFrame(index=agg.index)
    if freq is not None:
        out["timestamp"] = agg["timestamp"]
    r_width = len(r_names) + 1
    if "route" in keys:
        route = (key // r_width) % len(domains) ** 2
        names = np.asarray(domains, dtype="int64")
        out["source_domain"] = names[route // len(domains)]
        out["destination_domain"] = names[route % len(domains)]
    if "cctp_version" in keys:
        v = key // width - 1
        values = np.append(np.asarray(v_names, dtype="float64"), np.nan)
        out["cctp_version"] = pd.array(values[v], dtype="Float64").astype("Int64")
    names = np.append(np.asarray(r_names, dtype=object), None)
    out["relayer"] = pd.array(names[key % r_width - 1], dtype=schema.STRING)
    for col in ("mints", "volume_raw", "median_relay_s"):
        out[col] = agg[col]
    return out


def hhi(table: pd.DataFrame, *, share: str = "volume_share") -> pd.DataFrame:
    """Herfindahl-Hirschman index of a share table, per group (0 to 1; 1: one actor).

    Parameters
    ----------
    table : pandas.DataFrame
        A result of :func:`relayers` or :func:`integrators`; its groups are
        the ``by`` of its :func:`~.results.result_info`.
    share : str, default "volume_share"
        The share column (``"mint_share"``, ``"transfer_share"`` ...).

    Returns
    -------
    pandas.DataFrame
        The group columns, ``hhi`` (sum of squared shares) and ``actors``
        (rows in the group).

    Examples
    --------
    >>> hhi(pd.DataFrame({"volume_share": [0.5, 0.5]}))["hhi"].tolist()
    [0.5]
    """
    if not isinstance(table, pd.DataFrame) or share not in table.columns:
        raise ValueError(f"hhi() takes a share table with a {share!r} column")
    groups = [c for c in (results.result_info(table).by or ()) if c in table.columns]
    squared = table.assign(__sq=table[share].astype("float64") ** 2)
    if groups:
        out = squared.groupby(groups, observed=True, sort=True).agg(
            hhi=("__sq", "sum"), actors=("__sq", "size")
        )
        out = out.reset_index()
    else:
        out = pd.DataFrame({"hhi": [float(squared["__sq"].sum())], "actors": [len(table)]})
    out["actors"] = out["actors"].astype("int64")
    return results.describe(out, span=results.result_info(table).span, by=tuple(groups))


def _integrator_key(frame: pd.DataFrame, by: str, table: Any) -> pd.Series:
    if by == "hook_prefix":
        from .hooks import classify

        return classify(frame)["hook_prefix"]
    if by == "label":
        if table is None:
            raise ValueError("by='label' needs labels; pass labels=True or your own")
        label, _ = table.resolve(
            frame["message_sender"], labels_.chains_of(frame, "message_sender")
        )
        return pd.Series(pd.array(label, dtype=schema.STRING), index=frame.index)
    key = frame[by].astype(schema.STRING)
    if by == "destination_caller":
        key = key.where(~key.str.lower().isin(ZERO_CALLERS))
    return key


_INTEGRATOR_INPUTS = (
    "source_domain", "destination_domain", "amount_raw", "burn_timestamp", "burn_tx_hash",
    "burn_block", "message_sender", "mint_recipient", "destination_caller", "cctp_version",
    "hook_data",
)  # fmt: skip
"""The ledger columns :func:`integrators` reads (and ``burn_tx_from`` where there is one)."""

_INTEGRATOR_COLUMNS = (
    "integrator", "transfers", "volume", "volume_raw", "routes", "volume_share",
    "transfer_share", "volume_first_half", "volume_second_half", "growth", "v1_volume",
    "v2_volume", "v2_share", "end_users",
)  # fmt: skip
"""The columns of :func:`integrators`, in order (before the label columns)."""


def integrators(ledger: Any, *, by: str = "message_sender", labels: Any = True) -> pd.DataFrame:
    """Volume, transfers and routes per integrator, with share, growth and V1/V2 split.

    Parameters
    ----------
    ledger : DataFrame (pandas, Polars, DuckDB, Dask)
        A canonical ledger; every transfer with a burn counts, at its burn.
        By depositor or destination caller, a Polars or DuckDB frame is
        reduced in its engine and only the integrators' sums are collected.
    by : {"message_sender", "destination_caller", "hook_prefix", "label"}
        What names the integrator: the depositor, the destination caller
        (null: anyone may relay), the hook's first four bytes (null: no hook),
        or the depositor's label (null: unlabelled). By depositor, a
        depositor is an integrator when some of its burns were signed by
        another account (``burn_tx_from``: the users it burns for) or when it
        is labelled one (kind ``integrator``); one that signs every burn it
        makes (where signers are known) is a user burning for itself, and is
        left out of the table. Where no signer of a depositor's burns is known
        (``eth_getLogs``, cryo), nothing tells, and it stays.
    labels : bool, path or DataFrame, default True
        Add ``integrator_label`` / ``integrator_kind`` for address keys.

    Returns
    -------
    pandas.DataFrame
        ``integrator``, ``transfers``, ``volume``, ``volume_raw``, ``routes``
        (distinct routes), ``volume_share``, ``transfer_share``,
        ``volume_first_half`` / ``volume_second_half`` (USDC burned before /
        after the middle of the span of burn times), ``growth``
        (second / first - 1; NaN when the first is 0), ``v1_volume``,
        ``v2_volume``, ``v2_share`` (of the volume whose version is known:
        who has moved to V2), ``end_users`` (distinct senders of the burn
        transactions, :func:`end_user`: the people behind a depositing
        contract; null where the source does not give them) and the label
        columns. Largest volume first (then by integrator). Shares are of
        every burn in the ledger: with depositors left out (see ``by``) they
        sum to less than one, the rest being users burning for themselves.
        On the bundled sample the table is exactly the depositing contracts
        the generator planted, with their exact volumes
        (:func:`cctx_research.service.sample.truth`).

    Examples
    --------
    >>> from cctx_research import schema
    >>> integrators(schema.empty("ledger"), labels=False).shape[0]
    0
    """
    if by not in INTEGRATOR_KEYS:
        raise ValueError(f"by={by!r} is not supported; pass one of {list(INTEGRATOR_KEYS)}")
    cols = list(_INTEGRATOR_INPUTS)
    table = actor_inputs.labels_of(labels)
    _, names, _ = actor_inputs.checked_names(ledger, cols, what="actors.integrators")
    # the end users only where the source gives them: a column of nulls costs a pass
    users = "burn_tx_from" in names
    cols += ["burn_tx_from"] if users else []
    if by in ("message_sender", "destination_caller") and actors_lazy.reduces(ledger):
        lf = actor_inputs.ledger_lazy(ledger, cols, what="actors.integrators")
        groups, span = actors_lazy.integrator_groups(lf, by, sorted(ZERO_CALLERS), users=users)
    else:
        frame = actor_inputs.ledger_columns(ledger, cols, what="actors.integrators")
        groups, span = _integrator_groups(frame, by, table, users=users)
    out = _integrator_table(groups)
    if by == "message_sender" and users:
        out = _without_self_signers(out, groups, table)
    if table is not None and by in ("message_sender", "destination_caller"):
        label, kind = table.resolve(out["integrator"], None)
        out["integrator_label"] = pd.array(label, dtype=schema.STRING)
        out["integrator_kind"] = pd.array(kind, dtype=schema.STRING)
    return results.describe(out, span=span, by=())


def _without_self_signers(out: pd.DataFrame, groups: pd.DataFrame, table: Any) -> pd.DataFrame:
    """``out`` without the depositors that only sign their own burns (see :func:`integrators`)."""
    own = groups["own_signed"].to_numpy(dtype="int64")
    others = groups["other_signed"].to_numpy(dtype="int64")
    alone = groups["integrator"].astype(schema.STRING)[(own > 0) & (others == 0)].dropna()
    if table is not None and len(alone):
        _, kind = table.resolve(alone.reset_index(drop=True), None)
        alone = alone[np.array([k != "integrator" for k in kind], dtype=bool)]
    if not len(alone):
        return out
    keep = ~out["integrator"].isin(set(alone)).to_numpy(dtype=bool)
    return out.loc[keep].reset_index(drop=True)


def _integrator_table(groups: pd.DataFrame) -> pd.DataFrame:
    """The integrators' table from their raw sums: amounts, shares, growth, V2 share, sorted."""
    out = pd.DataFrame(
        {
            "integrator": groups["integrator"].astype(schema.STRING),
            "transfers": groups["transfers"].astype("int64"),
            "volume": _ledger.amount(groups["volume_raw"]),
            "volume_raw": groups["volume_raw"].astype("int64"),
            "routes": groups["routes"].astype("int64"),
            "volume_first_half": _ledger.amount(groups["first_raw"]),
            "volume_second_half": _ledger.amount(groups["second_raw"]),
            "v1_volume": _ledger.amount(groups["v1_raw"]),
            "v2_volume": _ledger.amount(groups["v2_raw"]),
            "end_users": groups["end_users"].astype(schema.NULLABLE_INT),
        }
    )
    out = out.loc[out["transfers"] > 0].reset_index(drop=True)
    out = _shares(out, [], "transfers")
    first = out["volume_first_half"].where(out["volume_first_half"] > 0)
    out["growth"] = (out["volume_second_half"] / first - 1).astype("float64")
    known = out["v1_volume"] + out["v2_volume"]
    out["v2_share"] = (out["v2_volume"] / known.where(known > 0)).astype("float64")
    out = out[list(_INTEGRATOR_COLUMNS)].iloc[_largest_first(out["volume_raw"], out["integrator"])]
    return out.reset_index(drop=True)

def _largest_first(values: pd.Series, names: pd.Series) -> np.ndarray:
    """Positions in descending ``values``, ties by ``names`` (nulls last).

    Ties are broken by name so that every engine gives the same order; only
    the tied rows are sorted by name (a sort of every name would cost more
    than the rest of :func:`integrators`).
    """
    vol = values.to_numpy(dtype="int64")
    within = np.zeros(len(vol), dtype="int64")
    tied = np.flatnonzero(pd.Series(vol).duplicated(keep=False).to_numpy())
    if len(tied):
        by_name = names.iloc[tied].reset_index(drop=True)
        ranks = by_name.sort_values(kind="stable", na_position="last").index.to_numpy()
        within[tied[ranks]] = np.arange(len(tied))
    return np.lexsort((within, -vol))


def _integrator_groups(
    frame: pd.DataFrame, by: str, table: Any, *, users: bool = False
) -> tuple[pd.DataFrame, tuple[Any, Any]]:
    """The sums of :func:`.actors_lazy.integrator_groups`, from a pandas ledger."""
    burned = _ledger.burn_known(frame)
    codes, uniques = pd.factorize(_integrator_key(frame, by, table), use_na_sentinel=True)
    n = len(uniques) + 1
    codes = np.where(codes < 0, n - 1, codes)[burned]
    raw = frame["amount_raw"].to_numpy(dtype="int64")[burned]
    stamps = frame["burn_timestamp"].to_numpy(dtype="datetime64[ns]").view("int64")[burned]
    mid = (stamps.min() + (stamps.max() - stamps.min()) // 2) if len(stamps) else 0
    late = stamps >= mid
    version = frame["cctp_version"].to_numpy(dtype="float64", na_value=np.nan)[burned]
    src, dst, domains = actor_inputs.route_codes(frame)
    route = (src * len(domains) + dst)[burned]

    def total(values: np.ndarray) -> np.ndarray:
        # exact integer sums (np.add.at is unbuffered, and fast on integers)
        out = np.zeros(n, dtype="int64")
        np.add.at(out, codes, values)
        return out

    zero = np.zeros_like(raw)
    groups = pd.DataFrame(
        {
            "integrator": pd.array(uniques, dtype=schema.STRING).insert(len(uniques), pd.NA)
            if len(uniques)
            else pd.array([pd.NA], dtype=schema.STRING),
            "transfers": np.bincount(codes, minlength=n).astype("int64"),
            "routes": _distinct(codes, route, n, len(domains) ** 2),
            "volume_raw": total(raw),
            "first_raw": total(np.where(late, zero, raw)),
            "second_raw": total(np.where(late, raw, zero)),
            "v1_raw": total(np.where(version == 1, raw, zero)),
            "v2_raw": total(np.where(version == 2, raw, zero)),
            "end_users": actor_inputs.end_user_counts(frame, burned, codes, n)
            if users
            else actor_inputs.nulls(n, schema.NULLABLE_INT),
        }
    )
    if users:
        own, other = actor_inputs.signed_by(frame, burned, codes, n)
        groups["own_signed"], groups["other_signed"] = own, other
    span = results.span_of(frame["burn_timestamp"][burned])
    return groups, span


def _distinct(codes: np.ndarray, values: np.ndarray, n: int, size: int) -> np.ndarray:
    """How many distinct ``values`` (each in ``[0, size)``) each code has."""
    words = max(1, -(-size // 64))
    if n * words > 4 * len(codes) + 1024:
        # many groups and many values: count the distinct pairs instead of a bit set
        pairs = np.unique(codes.astype("int64") * size + values)
        return np.bincount(pairs // size, minlength=n).astype("int64")
    bits = np.zeros(n * words, dtype="uint64")
    np.bitwise_or.at(
        bits,
        codes.astype("int64") * words + values // 64,
        np.uint64(1) << (values % 64).astype("uint64"),
    )
    return np.bitwise_count(bits).reshape(n, words).sum(axis=1).astype("int64")
