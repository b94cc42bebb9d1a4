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

import binascii
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from cctx_research._textarrays import from_char_matrix

__all__ = [
    "HexColumn",
    "binary_bytes",
    "binary_to_hex",
    "bytes_to_hex",
    "gather",
    "hex_slices",
    "hex_to_bytes",
    "large_binaries",
    "large_strings",
    "segments_to_hex",
    "slices_to_hex",
    "take_rows",
]

_NIBBLE = np.full(256, 255, dtype=np.uint8)
for _i, _c in enumerate(b"0123456789abcdef"):
    _NIBBLE[_c] = _i
for _i, _c in enumerate(b"ABCDEF"):
    _NIBBLE[_c] = 10 + _i
_DIGITS = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
_PAIRS = np.stack([_DIGITS[np.arange(256) >> 4], _DIGITS[np.arange(256) & 15]], axis=1)
_PAIRS16 = np.ascontiguousarray(_PAIRS).view(np.uint16).ravel()  # byte -> its two digits
_PAIRS16_0X = np.append(_PAIRS16, np.frombuffer(b"0x", dtype=np.uint16))  # 256 -> "0x"
# two hex digits, read as one native uint16 -> their byte, or 0xFFFF if either is no digit
_first, _second = np.divmod(np.arange(65536), 256)
if np.little_endian:
    _first, _second = _second, _first
_BYTE16 = np.where(
    (_NIBBLE[_first] < 16) & (_NIBBLE[_second] < 16),
    _NIBBLE[_first].astype(np.uint16) * 16 + _NIBBLE[_second],
    0xFFFF,
).astype(np.uint16)


@dataclass(frozen=True)
class HexColumn:
    """A decoded hex column: row ``i`` is ``buffer[starts[i] : starts[i] + lengths[i]]``."""

    buffer: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray
    ok: np.ndarray
    """False where the value was missing, lacked ``0x``, had an odd length or a non-hex digit."""
    text: np.ndarray | None = None
    """The hex text decoded: byte ``k`` of :attr:`buffer` is ``text[2k : 2k + 2]``; None
    for a column that was binary already (:func:`binary_bytes`)."""


def large_strings(values: pa.Array | pa.ChunkedArray) -> pa.LargeStringArray:
    """One contiguous ``large_string`` array (chunks combined), whose buffers numpy can read."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks else pa.array([], pa.large_string())
    if not pa.types.is_large_string(values.type):
        values = values.cast(pa.large_string())
    return values


def _shape_ok(arr: pa.LargeStringArray) -> np.ndarray:
    """Rows that are present, start with 0x (or 0X) and have an even length."""
    n = len(arr)
    if n == 0:
        return np.zeros(0, dtype=bool)
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset : arr.offset + n + 1]
    data = arr.buffers()[2]
    chars = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    chars = np.concatenate([chars, np.zeros(2, np.uint8)]) if len(chars) < 2 else chars
    starts, size = offsets[:-1], np.diff(offsets)
    ok = (size >= 2) & (size % 2 == 0) & np.asarray(arr.is_valid(), dtype=bool)
    at = np.where(ok, starts, 0)
    ok &= (chars[at] == ord("0")) & ((chars[at + 1] | 0x20) == ord("x"))  # x or X
    return ok


def hex_to_bytes(values: pa.Array | pa.ChunkedArray) -> HexColumn:
    """Decode a column of ``0x`` hex strings (any case) into one flat byte buffer.

    Rows that are not valid hex come back with ``ok`` False and length 0;
    nothing raises, so the caller can name every bad row.
    """
    arr = large_strings(values)
    n = len(arr)
    shape_ok = _shape_ok(arr)
    if not shape_ok.all():
        # Bad rows become "0x" so every row keeps an even number of characters
        # and the pairs of digits stay aligned across the whole buffer.
        arr = large_strings(pc.if_else(pa.array(shape_ok), arr, pa.scalar("0x", pa.large_string())))
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset : arr.offset + n + 1]
    base = int(offsets[0]) if n else 0
    if n:
        chars = np.frombuffer(arr.buffers()[2], dtype=np.uint8)[base : int(offsets[-1])]
    else:
        chars = np.zeros(0, np.uint8)
    rel = offsets - base
    starts = rel[:-1] // 2 + 1
    sizes = (rel[1:] - rel[:-1]) // 2 - 1
    buffer = _unhex(chars, rel[:-1])
    ok = shape_ok.copy()
    if buffer is None:  # some row holds a non-hex digit: find which, with the table
        pairs = _BYTE16[chars.view(np.uint16)] if len(chars) else np.zeros(0, np.uint16)
        pairs[rel[:-1] // 2] = 0  # the "0x" of every row
        bad = np.flatnonzero(pairs > 255)
        ok[np.unique(np.searchsorted(rel // 2, bad, side="right") - 1)] = False
        buffer = pairs.astype(np.uint8)
    lengths = np.where(ok, sizes, 0)
    return HexColumn(buffer, starts, lengths, ok, chars)


def _unhex(chars: np.ndarray, prefixes: np.ndarray) -> np.ndarray | None:
    """All the digits at once through :func:`binascii.unhexlify` (C), or None if one is not hex.

    Every row's ``0x`` becomes ``00`` first (a byte the callers never read),
    so the buffer keeps the layout of the table path: row bytes at
    ``starts``. About twice as fast as the table lookup, which stays for
    the rare column that holds a bad digit.
    """
    digits = chars.copy()
    digits[prefixes + 1] = ord("0")
    try:
        return np.frombuffer(binascii.unhexlify(digits), dtype=np.uint8)
    except binascii.Error:
        return None


def take_rows(buffer: np.ndarray, starts: np.ndarray, width: int) -> np.ndarray:
    """``buffer[starts[i] : starts[i] + width]`` for every ``i``, as an ``(m, width)`` copy.

    Indexes a view of the buffer as overlapping ``width``-byte records, so
    the gather moves one record per row (two to three times faster than
    indexing a sliding window of bytes).
    """
    if width == 0:
        return np.zeros((len(starts), 0), dtype=np.uint8)
    if len(buffer) < width:
        buffer = np.concatenate([buffer, np.zeros(width - len(buffer), np.uint8)])
    buffer = np.ascontiguousarray(buffer)
    records = np.ndarray(
        (len(buffer) - width + 1,), dtype=np.dtype((np.void, width)), buffer=buffer, strides=(1,)
    )
    return records[starts].view(np.uint8).reshape(len(starts), width)


def gather(column: HexColumn, rows: np.ndarray, offset: int | np.ndarray, width: int) -> np.ndarray:
    """Bytes ``[offset, offset + width)`` of each row in ``rows``, as an ``(m, width)`` array.

    The caller checks lengths first; ``offset`` may be one number or one per row.
    """
    return take_rows(column.buffer, column.starts[rows] + offset, width)


def hex_slices(text: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> pa.Array:
    """``0x`` + lowercase hex of buffer slices ``[starts[i], starts[i] + lengths[i])``.

    Cut from the hex ``text`` the buffer was decoded from (byte ``k`` is
    ``text[2k : 2k + 2]``, see :attr:`HexColumn.text`): each slice becomes a
    string view into the text, and Arrow copies them out, prefixes and
    lowercases them in C++, with no per-row work in Python or numpy.
    """
    m = len(starts)
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    if m == 0:
        return pa.array([], pa.large_string())
    if len(text) >= 2**31 - 16:  # views hold 32-bit offsets
        buffer = _BYTE16[text.view(np.uint16)].astype(np.uint8)
        return segments_to_hex(buffer, starts, lengths)
    size = 2 * lengths
    pos = np.where(size > 0, 2 * starts, 0)
    views = np.zeros((m, 16), dtype=np.uint8)
    words = views.view(np.int32)
    words[:, 0] = size
    n = len(text)
    near = pos + 12 > n  # only short slices at the very end: read those from a padded tail
    tail_start = max(n - 12, 0)
    tail = np.concatenate([text[tail_start:], np.zeros(12, np.uint8)])
    head = np.empty((m, 12), dtype=np.uint8)
    head[~near] = take_rows(text, pos[~near], 12)
    head[near] = take_rows(tail, pos[near] - tail_start, 12)
    inline = size <= 12
    head[inline[:, None] & (np.arange(12) >= size[:, None])] = 0
    views[inline, 4:16] = head[inline]
    views[~inline, 4:8] = head[~inline, :4]
    words[~inline, 3] = pos[~inline]
    out = pa.Array.from_buffers(
        pa.string_view(), m, [None, pa.py_buffer(views), pa.py_buffer(text)]
    ).cast(pa.large_string())
    prefix, none = pa.scalar("0x", pa.large_string()), pa.scalar("", pa.large_string())
    return pc.ascii_lower(pc.binary_join_element_wise(prefix, out, none))


def bytes_to_hex(matrix: np.ndarray) -> pa.LargeStringArray:
    """``0x`` + lowercase hex of each row of an ``(m, k)`` uint8 matrix."""
    m, k = matrix.shape
    out = np.empty((m, 2 + 2 * k), dtype=np.uint8)
    out[:, 0] = ord("0")
    out[:, 1] = ord("x")
    out[:, 2:] = _PAIRS16[matrix].view(np.uint8).reshape(m, 2 * k)
    return from_char_matrix(out)


def segments_to_hex(buffer: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> pa.Array:
    """``0x`` + hex of variable-length slices ``buffer[starts[i] : starts[i] + lengths[i]]``."""
    m = len(starts)
    lengths = np.asarray(lengths, dtype=np.int64)
    starts = np.asarray(starts, dtype=np.int64)
    if m == 0:
        return pa.array([], pa.large_string())
    # One index per output pair of digits: a sentinel slot (the "0x"), then
    # the row's bytes; built with one cumsum rather than a repeat per row.
    slots = lengths + 1
    first = np.zeros(m, dtype=np.int64)
    np.cumsum(slots[:-1], out=first[1:])
    wide = len(buffer) >= 2**31 - 1
    step = np.ones(int(slots.sum()), dtype=np.int64 if wide else np.int32)
    step[first[1:]] = starts[1:] - (starts[:-1] + lengths[:-1])
    step[0] = starts[0] - 1
    index = np.cumsum(step, dtype=step.dtype)
    np.clip(index, 0, max(len(buffer) - 1, 0), out=index)  # a sentinel may point at -1
    source = buffer[index].astype(np.uint16) if len(buffer) else np.zeros(len(index), np.uint16)
    source[first] = 256
    text = _PAIRS16_0X[source].view(np.uint8)
    offsets = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(2 * slots, out=offsets[1:])
    return pa.LargeStringArray.from_buffers(m, pa.py_buffer(offsets), pa.py_buffer(text))


def binary_to_hex(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """``0x`` hex of a binary column (cryo's Parquet); nulls stay null."""
    col = binary_bytes(values)
    if not len(col.ok):
        return pa.array([], pa.large_string())
    text = segments_to_hex(col.buffer, col.starts, col.lengths)
    return pc.if_else(pa.array(col.ok), text, pa.scalar(None, pa.large_string()))


def large_binaries(values: object) -> pa.LargeBinaryArray:
    """One contiguous ``large_binary`` array of a binary column of any width (an Arrow
    array, or a pandas column backed by one)."""
    if not isinstance(values, (pa.Array, pa.ChunkedArray)):
        values = pa.array(values)
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks else pa.array([], pa.large_binary())
    if not pa.types.is_large_binary(values.type):
        values = values.cast(pa.large_binary())
    return values


def binary_bytes(values: object) -> HexColumn:
    """A binary column (cryo's Parquet) as a :class:`HexColumn`, without passing through hex.

    The rows stay where Arrow holds them: ``buffer`` is the column's data
    buffer and ``starts`` its offsets, so nothing is copied; missing values
    have ``ok`` False and length 0.
    """
    arr = large_binaries(values)
    n = len(arr)
    if n == 0:
        empty = np.zeros(0, np.int64)
        return HexColumn(np.zeros(0, np.uint8), empty, empty, np.zeros(0, bool))
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset : arr.offset + n + 1]
    data = arr.buffers()[2]
    buffer = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    ok = np.asarray(arr.is_valid(), dtype=bool)
    lengths = np.where(ok, np.diff(offsets), 0)
    return HexColumn(buffer, offsets[:-1].copy(), lengths, ok)


def slices_to_hex(
    buffer: np.ndarray, text: np.ndarray | None, starts: np.ndarray, lengths: np.ndarray
) -> pa.Array:
    """``0x`` + lowercase hex of ``buffer[starts[i] : starts[i] + lengths[i]]``: cut from
    the hex ``text`` the buffer was decoded from when there is one (:func:`hex_slices`),
    else encoded from the bytes (:func:`segments_to_hex`, a column that was binary)."""
    if text is not None:
        return hex_slices(text, starts, lengths)
    return segments_to_hex(buffer, starts, lengths)
