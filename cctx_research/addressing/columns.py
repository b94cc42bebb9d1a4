"""Many addresses at once (frame columns), vectorised with Arrow kernels and numpy."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .._codes import unique_ints
from .._textarrays import char_rows, from_char_matrix, interleave
from .codecs import base58_encode_rows
from .spellings import _PAD_HEX, _encode, _format_of, _hex_bytes

__all__ = ["canonical_addresses"]

_PREFIX = pa.scalar("0x", pa.large_string())
_EMPTY = pa.scalar("", pa.large_string())

# --------------------------------------------------------------------------
# many addresses (frames)


def _string_array(values: Sequence[Any]) -> pa.Array:
    try:
        return pa.array(values, type=pa.large_string())
    except (pa.ArrowTypeError, pa.ArrowInvalid):
        return pa.array(pd.array(values, dtype=pd.StringDtype("pyarrow")))  # str() of others


def _hex_canonical(raw: pa.Array) -> pa.Array:
    """Lowercase ``0x`` hex, EVM-padded bytes32 cut to 20 bytes; others kept."""
    fast = _bytes32_canonical(raw)
    if fast is not None:
        return fast
    is_hex = pc.fill_null(pc.starts_with(pc.utf8_lower(raw), "0x"), False)
    lower = pc.if_else(is_hex, pc.utf8_lower(raw), raw)
    padded = pc.fill_null(
        pc.and_(pc.equal(pc.utf8_length(lower), 66), pc.starts_with(lower, _PAD_HEX)), False
    )
    cut = pc.binary_join_element_wise(
        _PREFIX, pc.utf8_slice_codeunits(lower, len(_PAD_HEX)), _EMPTY
    )
    return pc.if_else(padded, cut, lower)


def _bytes32_canonical(raw: pa.Array) -> pa.Array | None:
    """:func:`_hex_canonical` of a column of ``0x`` + 40 or 64 ASCII characters, as numpy.

    The common case (the address fields of a page: bytes32 wire values and
    20-byte addresses), done on the character buffer; ``None`` for any other
    column, which takes the general path.
    """
    if isinstance(raw, pa.ChunkedArray):
        raw = raw.combine_chunks()
    n = len(raw)
    if n == 0 or raw.null_count or not pa.types.is_large_string(raw.type):
        return None
    offsets = np.frombuffer(raw.buffers()[1], dtype=np.int64)[raw.offset : raw.offset + n + 1]
    sizes = np.diff(offsets)
    wide = sizes == 66
    if not (wide | (sizes == 42)).all():
        return None
    chars = np.frombuffer(raw.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
    starts = offsets[:-1] - offsets[0]
    if (chars >= 0x80).any() or (chars[starts] != ord("0")).any():
        return None
    lower = np.where((chars >= ord("A")) & (chars <= ord("Z")), chars | 0x20, chars)
    if (lower[starts + 1] != ord("x")).any():
        return None
    # a wide row padded with 24 zero digits is an EVM address: "0x" + its last 40
    padded = np.zeros(n, dtype=bool)
    padded[wide] = (char_rows(lower, starts[wide] + 2, 24) == ord("0")).all(axis=1)
    lower[starts[padded] + 24] = ord("0")
    lower[starts[padded] + 25] = ord("x")
    short = ~wide | padded
    begin = np.where(padded, starts + 24, starts)
    return interleave(
        short,
        from_char_matrix(char_rows(lower, begin[short], 42)),
        from_char_matrix(char_rows(lower, begin[~short], 66)),
    )


@lru_cache(maxsize=1 << 16)
def _respell(value: str, fmt: str) -> str:
    # cached: a pull's pages name the same addresses again and again (a Solana or Noble
    # address is a big-number base change or a checksum in Python, 20-60 us each)
    raw = _hex_bytes(value, fmt)
    return value if raw is None else _encode(raw, fmt)


def canonical_addresses(values: Sequence[Any], chains: Any = None) -> pd.Series:
    """Many addresses in their chain's own format, unchecked (missing stay missing).

    Parameters
    ----------
    values : sequence of str
        Addresses, typically bytes32 wire values.
    chains : sequence or scalar, optional
        The chain of each row (names or domain ids; a scalar for all rows).
        ``None``: hex is lowercased and EVM-padded bytes32 cut to 20 bytes,
        other values are kept as they are.

    Returns
    -------
    pandas.Series
        Arrow-backed strings. Values that fit no format are kept unchanged.

    Examples
    --------
    >>> wire = ["0x" + "00" * 12 + "AB" * 20, "0x" + "c6fa7af3bedbad3a3d65f36aabc97431b1bbe4c2"
    ...         "d2f6e0e47ca60203452f5d61"]
    >>> canonical_addresses(wire, ["base", "solana"]).tolist()
    ['0xabababababababababababababababababababab', 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v']
    """
    # Vectorised with Arrow kernels: parsing five address columns per page is
    # a large part of a cold pull; only non-EVM rows go through Python.
    out = _hex_canonical(_string_array(values))
    series = pd.Series(pd.array(out, dtype=pd.StringDtype("pyarrow")))
    if chains is None or len(series) == 0:
        return series
    codes, formats = _format_codes(chains, len(series))
    respelled = [i for i, f in enumerate(formats) if f not in (None, "evm")]
    if not respelled:  # EVM rows only: the hex is their spelling
        return series
    other = np.isin(codes, respelled)
    other &= pc.fill_null(pc.starts_with(out, "0x"), False).to_numpy(zero_copy_only=False)
    if other.any():
        rows = np.flatnonzero(other)
        values_ = series.iloc[rows].to_numpy(dtype=object)
        kinds = codes[rows]
        spelled = np.empty(len(rows), dtype=object)
        for f in np.unique(kinds).tolist():
            sel = kinds == f
            if formats[f] == "solana":
                spelled[sel] = _base58_many(values_[sel])
            else:
                spelled[sel] = [_respell(v, formats[f]) for v in values_[sel].tolist()]
        series.iloc[rows] = spelled
    return series


def _base58_many(values: np.ndarray) -> np.ndarray:
    """Solana's spelling of ``0x`` hex values (20 or 32 bytes), each distinct one once;
    values that are not such hex are kept."""
    codes, uniques = pd.factorize(values)
    out = np.asarray(uniques, dtype=object).copy()
    ok, matrix = _hex32_rows(out.tolist())
    if ok.any():
        out[ok] = base58_encode_rows(matrix[ok])
    return out[codes]


_NIBBLE = np.full(256, 255, dtype=np.uint8)
for _i, _c in enumerate(b"0123456789abcdef"):
    _NIBBLE[_c] = _i
    _NIBBLE[bytes([_c]).upper()[0]] = _i


def _hex32_rows(values: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Which values are ``0x`` + 40 or 64 hex digits, and their bytes, left-padded to 32."""
    arr = pa.array(values, type=pa.large_string())
    n = len(arr)
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[: n + 1]
    data = arr.buffers()[2]
    chars = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(1, np.uint8)
    sizes = np.diff(offsets)
    ok = (sizes == 42) | (sizes == 66)
    starts = np.where(ok, offsets[:-1], 0)
    ok &= (chars[starts] == ord("0")) & ((chars[starts + 1] | 0x20) == ord("x"))
    skip = 64 - np.where(ok, sizes - 2, 0)  # leading digits a 40-digit value lacks
    cols = np.arange(64)[None, :]
    inside = ok[:, None] & (cols >= skip[:, None])
    at = np.where(inside, starts[:, None] + 2 + cols - skip[:, None], 0)
    digits = np.where(inside, chars[at], ord("0")).astype(np.uint8)
    nibbles = _NIBBLE[digits]
    ok &= (nibbles != 255).all(axis=1)
    return ok, ((nibbles[:, 0::2] << 4) | nibbles[:, 1::2]).astype(np.uint8)


def _format_codes(values: Any, n: int) -> tuple[np.ndarray, list[str | None]]:
    """Each row's address format, as codes into a list of formats (``None``: unknown)."""
    if isinstance(values, (str, int)) and not isinstance(values, bool):
        return np.zeros(n, dtype=np.int64), [_format_of(values)]
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        uniques, codes = unique_ints(values)  # domain ids: no objects
        uniques = list(uniques)
    else:
        column = pd.Series(list(values) if not isinstance(values, pd.Series) else values.array)
        codes, uniques = pd.factorize(column.astype(object), use_na_sentinel=True)
    if len(codes) != n:
        raise ValueError(f"chains has {len(codes)} rows for {n} addresses; pass one per row")
    formats = [None if pd.isna(u) else _safe_format(u) for u in uniques]
    return np.where(codes < 0, len(formats), codes), [*formats, None]


def _safe_format(chain: Any) -> str | None:
    try:
        return _format_of(chain if not hasattr(chain, "item") else chain.item())
    except (TypeError, ValueError):
        return None  # a carried-through unknown ("chain-999"): keep its values

