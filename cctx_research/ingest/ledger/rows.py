"""Ledger rows from the rows of burns and arrivals: gathered columns, ids and tokens.

:func:`cctx_research.ingest.ledger.linking.link` decides which burn row goes with
which arrival row; this module turns those pairs of row numbers into ledger
columns. Each column is read once, from the side a row comes from, in the
ledger's final order (time, then transfer id), so no whole-ledger copy is
made to sort it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ... import chains, schema
from ..hexcodec import large_strings
from ..rows import column as arrow_column

__all__ = ["arrow_array", "ledger_rows", "token_symbols", "transfer_ids"]

_NAT = np.iinfo(np.int64).min  # NaT as nanoseconds


def arrow_array(values: pd.Series | np.ndarray) -> pa.Array:
    """``values`` as one Arrow array (chunks combined)."""
    array = pa.array(values, from_pandas=True)
    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


def transfer_ids(
    nonce: pd.Series, src: pd.Series, dst: pd.Series, tx_hash: pd.Series, log_index: pd.Series
) -> pd.Series:
    """``<nonce>_<src chain id>_<dst chain id>``, or ``<tx hash>_<log index>`` without a nonce.

    Examples
    --------
    >>> s = lambda *v: pd.Series(list(v))
    >>> transfer_ids(s("7", None), s(0, 6), s(6, 0), s("0xa", "0xb"), s(1, 2)).tolist()
    ['7_1_8453', '0xb_2']
    """
    index = nonce.index
    src_i = np.asarray(src, dtype=np.int64)
    dst_i = np.asarray(dst, dtype=np.int64)
    domains = np.unique(np.concatenate([src_i, dst_i]))
    names = pa.array([chains.chain_id(int(d)) for d in domains], pa.large_string())
    src_id = names.take(pa.array(np.searchsorted(domains, src_i)))
    dst_id = names.take(pa.array(np.searchsorted(domains, dst_i)))
    large = pa.large_string()
    sep = pa.scalar("_", large)
    keyed = pc.binary_join_element_wise(
        arrow_array(nonce.astype(schema.STRING)).cast(large), src_id, dst_id, sep
    )
    if keyed.null_count:
        index_text = pc.cast(arrow_array(pd.Series(log_index, dtype=schema.NULLABLE_INT)), large)
        free = pc.binary_join_element_wise(
            arrow_array(pd.Series(tx_hash, dtype=schema.STRING)).cast(large),
            pc.fill_null(index_text, pa.scalar("", large)),
            sep,
        )
        keyed = pc.if_else(pc.is_null(keyed), free, keyed)
    return pd.Series(pd.array(keyed, dtype=schema.STRING), index=index)


def token_symbols(domain: pd.Series, token: pd.Series) -> pd.Series:
    """The symbol of each burned token (USDC, EURC, USYC) from the registry; null if unknown.

    Examples
    --------
    >>> token_symbols(pd.Series([0]), pd.Series(["0xA0b86991c6218b36c1d19d4a2e9eb0ce3606eB48"])
    ...               ).tolist()
    ['USDC']
    """
    d_codes, d_values = pd.factorize(np.asarray(domain, dtype=np.int64))
    t_codes, t_values = pd.factorize(pd.Series(token).astype(schema.STRING))
    pair = d_codes.astype(np.int64) * (len(t_values) + 1) + t_codes
    codes, pairs = pd.factorize(pair)
    symbols = []
    for value in pairs.tolist():
        d, t = divmod(int(value), len(t_values) + 1)
        ok = 0 <= t < len(t_values)
        symbols.append(chains.token_symbol(int(d_values[d]), t_values[t]) if ok else None)
    values = pa.array(symbols, pa.large_string()).take(pa.array(codes))
    return pd.Series(pd.array(values, dtype=schema.STRING), index=domain.index)


def _take(first: pd.Series, second: pd.Series, rows: np.ndarray, other: np.ndarray) -> object:
    """Per output row: ``first[rows]`` where ``rows >= 0``, else ``second[other]`` (else null).

    Reads only the side a row comes from; ``second`` is not touched if no row needs it.
    """
    one = rows >= 0
    two = ~one & (other >= 0)
    n, dtype = len(rows), first.dtype
    if dtype == schema.STRING:
        index = np.where(one, rows, -1)
        arrays = [large_strings(arrow_column(first))]
        if two.any():
            index[two] = len(first) + other[two]
            arrays.append(large_strings(arrow_column(second)))
        source = arrays[0] if len(arrays) == 1 else pa.chunked_array(arrays)
        return pd.array(pc.take(source, pa.array(index, mask=index < 0)), dtype=schema.STRING)
    if dtype == schema.TIMESTAMP and second.dtype == dtype:
        out = np.full(n, _NAT, dtype=np.int64)
        for sel, side, at in ((one, first, rows), (two, second, other)):
            if sel.any():
                out[sel] = side.array.asi8[at[sel]]
        return pd.DatetimeIndex(out.view("M8[ns]")).tz_localize("UTC").array
    if isinstance(dtype, np.dtype) and dtype.kind in "iu" and second.dtype == dtype:
        out = np.full(n, -1, dtype=dtype)
        for sel, side, at in ((one, first, rows), (two, second, other)):
            if sel.any():
                out[sel] = side.to_numpy()[at[sel]]
        return out
    if pd.api.types.is_integer_dtype(dtype) and pd.api.types.is_integer_dtype(second.dtype):
        data, mask = np.zeros(n, dtype=np.int64), np.ones(n, dtype=bool)
        for sel, side, at in ((one, first, rows), (two, second, other)):
            if sel.any():
                data[sel] = side.to_numpy(dtype=np.int64, na_value=0)[at[sel]]
                mask[sel] = side.isna().to_numpy()[at[sel]]
        return pd.arrays.IntegerArray(data, mask)
    index = np.where(one, rows, np.where(two, len(first) + other, -1))
    return pd.concat([first, second], ignore_index=True).array.take(index, allow_fill=True)


def _side(column: str, burns: pd.DataFrame, arrivals: pd.DataFrame, bi: np.ndarray,
          ai: np.ndarray) -> object:
    """One ledger column (as the sides give it) for burn rows ``bi`` and arrival rows ``ai``."""
    # the attested nonce and version are the arrival's; a pending burn keeps its own
    if column in ("nonce", "cctp_version"):
        return _take(arrivals[column], burns[column], ai, bi)
    if column in arrivals.columns and column in burns.columns:
        return _take(burns[column], arrivals[column], bi, ai)
    frame, rows = (burns, bi) if column in burns.columns else (arrivals, ai)
    return _take(frame[column], frame[column].iloc[:0], rows, np.full(len(rows), -1))


def _typed(values: object, kind: object) -> object:
    return values if values.dtype == kind else values.astype(kind)


def _ids(burns: pd.DataFrame, arrivals: pd.DataFrame, bi: np.ndarray, ai: np.ndarray,
         done: dict[str, object] | None = None) -> pd.Series:
    """Transfer ids of the ledger rows ``(bi, ai)`` (ledger columns in ``done`` reused)."""
    types = schema.dtypes("ledger")
    done = done or {}
    parts = {}
    for column in ("nonce", "source_domain", "destination_domain", "burn_tx_hash"):
        values = done.get(column)
        if values is None:
            values = _typed(_side(column, burns, arrivals, bi, ai), types[column])
        parts[column] = pd.Series(values, copy=False)
    log_index = pd.Series(_side("burn_log_index", burns, arrivals, bi, ai), copy=False)
    return transfer_ids(parts["nonce"], parts["source_domain"], parts["destination_domain"],
                        parts["burn_tx_hash"], log_index)


def _time_order(burns: pd.DataFrame, arrivals: pd.DataFrame, bi: np.ndarray,
                ai: np.ndarray) -> np.ndarray:
    """Positions of the rows ``(bi, ai)`` by burn time (else mint time; unknown last), then id.

    Ids are built only for rows that share a time with another.
    """
    when = np.full(len(bi), _NAT, dtype=np.int64)
    has = bi >= 0
    when[has] = burns["burn_timestamp"].array.asi8[bi[has]]
    fill = (when == _NAT) & (ai >= 0)
    when[fill] = arrivals["mint_timestamp"].array.asi8[ai[fill]]
    null = when == _NAT
    top = np.iinfo(np.int64).max
    key = np.where(null, top, when)
    exotic = bool((key[~null] == top).any())
    order = np.lexsort((key, null)) if exotic else np.argsort(key, kind="stable")
    k, z = key[order], null[order]
    same = (k[1:] == k[:-1]) & (z[1:] == z[:-1])
    if not same.any():
        return order
    run = np.cumsum(np.r_[True, ~same]) - 1
    tied = np.flatnonzero(np.bincount(run)[run] > 1)
    rows = order[tied]
    ids = _ids(burns, arrivals, bi[rows], ai[rows])
    within = pc.sort_indices(
        pa.table({"run": run[tied], "id": arrow_array(ids)}),
        sort_keys=[("run", "ascending"), ("id", "ascending")],
    ).to_numpy()
    order[tied] = rows[within]
    return order


def ledger_rows(
    burns: pd.DataFrame,
    arrivals: pd.DataFrame,
    bi: np.ndarray,
    ai: np.ndarray,
    pairing: tuple[np.ndarray, Sequence[str]],
    group: np.ndarray,
    *,
    sort: bool,
) -> pd.DataFrame:
    """Ledger rows from burn rows ``bi`` and arrival rows ``ai`` (-1: that side is absent).

    ``pairing`` is each row's position in a list of names, and that list;
    ``group`` the rows' ``link_group_size`` (0: null). With ``sort``, the rows
    come in the ledger's order (time, then id), each column gathered once in
    that order.
    """
    kinds, names = pairing
    if sort:
        order = _time_order(burns, arrivals, bi, ai)
        bi, ai, kinds, group = bi[order], ai[order], kinds[order], group[order]
    types = schema.dtypes("ledger")
    out: dict[str, object] = {}
    for column in schema.columns("ledger"):
        if column in burns.columns or column in arrivals.columns:
            out[column] = _typed(_side(column, burns, arrivals, bi, ai), types[column])
    out["pairing"] = pd.array(pa.array(list(names), pa.large_string()).take(pa.array(kinds)),
                              dtype=schema.STRING)
    out["link_group_size"] = pd.arrays.IntegerArray(group.astype(np.int64), group == 0)
    out["transfer_id"] = _ids(burns, arrivals, bi, ai, out).array
    out["token"] = token_symbols(
        pd.Series(out["source_domain"], copy=False), pd.Series(out["burn_token"], copy=False)
    ).array
    return pd.DataFrame({c: out[c] for c in schema.columns("ledger")}, copy=False)
