"""Vectorised ``0x`` hex <-> bytes over whole Arrow/numpy columns.

Event logs carry their topics and data as ``0x`` hex text (or as bytes, in
cryo's Parquet). Decoding a million logs one ``bytes.fromhex`` at a time is
most of a naive decoder's time, so this module converts a whole column at
once: the Arrow string buffer is one run of ASCII, a 256-entry table turns
every character into its nibble, and pairs of nibbles become bytes. Each
row's bytes then sit at a known offset in one flat ``uint8`` buffer, from
which fixed fields are gathered with numpy fancy indexing.

Examples
--------
>>> import numpy as np, pyarrow as pa
>>> col = hex_to_bytes(pa.array(["0x00ff", "0xAB", "zz", None]))
>>> col.ok.tolist(), col.lengths.tolist()
([True, True, False, False], [2, 1, 0, 0])
>>> bytes(col.buffer[col.starts[0] : col.starts[0] + 2]).hex()
'00ff'
>>> bytes_to_hex(np.array([[0, 255], [16, 1]], dtype=np.uint8)).to_pylist()
['0x00ff', '0x1001']
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "HexColumn",
    "binary_to_hex",
    "bytes_to_hex",
    "gather",
    "hex_to_bytes",
    "segments_to_hex",
]

_NIBBLE = np.full(256, 255, dtype=np.uint8)
for _i, _c in enumerate(b"0123456789abcdef"):
    _NIBBLE[_c] = _i
for _i, _c in enumerate(b"ABCDEF"):
    _NIBBLE[_c] = 10 + _i
_DIGITS = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
_PAIRS = np.stack([_DIGITS[np.arange(256) >> 4], _DIGITS[np.arange(256) & 15]], axis=1)


@dataclass(frozen=True)
class HexColumn:
    """A decoded hex column: row ``i`` is ``buffer[starts[i] : starts[i] + lengths[i]]``."""

    buffer: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray
    ok: np.ndarray
    """False where the value was missing, lacked ``0x``, had an odd length or a non-hex digit."""


def _strings(values: pa.Array | pa.ChunkedArray) -> pa.LargeStringArray:
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks else pa.array([], pa.large_string())
    if not pa.types.is_large_string(values.type):
        values = values.cast(pa.large_string())
    return values


def hex_to_bytes(values: pa.Array | pa.ChunkedArray) -> HexColumn:
    """Decode a column of ``0x`` hex strings (any case) into one flat byte buffer.

    Rows that are not valid hex come back with ``ok`` False and length 0;
    nothing raises, so the caller can name every bad row.
    """
    arr = _strings(values)
    n = len(arr)
    nbytes = pc.fill_null(pc.binary_length(arr), 0)
    prefixed = pc.fill_null(pc.starts_with(pc.utf8_slice_codeunits(arr, 0, 2), "0x"), False)
    prefixed = pc.or_(prefixed, pc.fill_null(pc.starts_with(arr, "0X"), False))
    even = pc.equal(pc.bit_wise_and(nbytes, 1), 0)
    shape_ok = np.asarray(pc.and_(prefixed, even), dtype=bool)
    # Bad rows become "0x" so every row keeps an even number of characters
    # and the pairs of nibbles stay aligned across the whole buffer.
    clean = pc.if_else(pa.array(shape_ok), arr, pa.scalar("0x", pa.large_string()))
    clean = _strings(clean)
    offsets = np.frombuffer(clean.buffers()[1], dtype=np.int64)[clean.offset : clean.offset + n + 1]
    base = int(offsets[0]) if n else 0
    chars = (
        np.frombuffer(clean.buffers()[2], dtype=np.uint8)[base : int(offsets[-1])]
        if n
        else (np.zeros(0, np.uint8))
    )
    rel = offsets - base
    nib = _NIBBLE[chars]
    bad = nib == 255
    # Every row starts with "0x": the 'x' is the one expected non-digit.
    bad_per_row = np.add.reduceat(bad, rel[:-1]) - 1 if n else np.zeros(0, np.int64)
    ok = shape_ok & (bad_per_row == 0)
    buffer = (nib[0::2] << 4) | (nib[1::2] & 15)
    starts = rel[:-1] // 2 + 1
    lengths = np.where(ok, (rel[1:] - rel[:-1]) // 2 - 1, 0)
    return HexColumn(buffer.astype(np.uint8, copy=False), starts, lengths, ok)


def gather(column: HexColumn, rows: np.ndarray, offset: int | np.ndarray, width: int) -> np.ndarray:
    """Bytes ``[offset, offset + width)`` of each row in ``rows``, as an ``(m, width)`` array.

    The caller checks lengths first; ``offset`` may be one number or one per row.
    """
    start = column.starts[rows] + offset
    return column.buffer[start[:, None] + np.arange(width)]


def bytes_to_hex(matrix: np.ndarray) -> pa.LargeStringArray:
    """``0x`` + lowercase hex of each row of an ``(m, k)`` uint8 matrix."""
    m, k = matrix.shape
    out = np.empty((m, 2 + 2 * k), dtype=np.uint8)
    out[:, 0] = ord("0")
    out[:, 1] = ord("x")
    out[:, 2:] = _PAIRS[matrix].reshape(m, 2 * k)
    offsets = np.arange(0, (m + 1) * (2 + 2 * k), 2 + 2 * k, dtype=np.int64)
    return pa.LargeStringArray.from_buffers(m, pa.py_buffer(offsets), pa.py_buffer(out))


def segments_to_hex(buffer: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> pa.Array:
    """``0x`` + hex of variable-length slices ``buffer[starts[i] : starts[i] + lengths[i]]``."""
    m = len(starts)
    lengths = lengths.astype(np.int64)
    out_len = 2 + 2 * lengths
    offsets = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(out_len, out=offsets[1:])
    total = int(lengths.sum())
    if total:
        within = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        src = buffer[np.repeat(starts, lengths) + within]
        digits = _PAIRS[src].reshape(-1)
    else:
        digits = np.zeros(0, np.uint8)
    out = np.empty(int(offsets[-1]), dtype=np.uint8)
    is_prefix = np.zeros(len(out), dtype=bool)
    is_prefix[offsets[:-1]] = True
    is_prefix[offsets[:-1] + 1] = True
    out[offsets[:-1]] = ord("0")
    out[offsets[:-1] + 1] = ord("x")
    out[~is_prefix] = digits
    return pa.LargeStringArray.from_buffers(m, pa.py_buffer(offsets), pa.py_buffer(out))


def binary_to_hex(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """``0x`` hex of a binary column (cryo's Parquet); nulls stay null."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks else pa.array([], pa.large_binary())
    arr = values.cast(pa.large_binary())
    n = len(arr)
    if n == 0:
        return pa.array([], pa.large_string())
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset : arr.offset + n + 1]
    data = arr.buffers()[2]
    buffer = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    lengths = np.where(np.asarray(arr.is_valid()), offsets[1:] - offsets[:-1], 0)
    text = segments_to_hex(buffer, offsets[:-1], lengths)
    return pc.if_else(arr.is_valid(), text, pa.scalar(None, pa.large_string()))
