"""Arrow string arrays built from numpy character matrices, with no per-row Python.

Hex spellings of fixed-width values (hashes, bytes32 words, addresses) are
built as ``(rows, width)`` ``uint8`` matrices of ASCII; these helpers turn
them into Arrow strings and merge two such columns row by row.

Examples
--------
>>> import numpy as np, pyarrow as pa
>>> m = np.frombuffer(b"0xab0xcd", dtype=np.uint8).reshape(2, 4)
>>> from_char_matrix(m).to_pylist()
['0xab', '0xcd']
>>> pick = np.array([False, True, False])
>>> interleave(pick, pa.array(["b"]), pa.array(["a", "c"])).to_pylist()
['a', 'b', 'c']
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

__all__ = ["char_rows", "from_char_matrix", "interleave"]


_ROWS = 1 << 16  # rows a block of :func:`char_rows`: its index is ``_ROWS * k`` integers


def char_rows(chars: np.ndarray, begin: np.ndarray, k: int) -> np.ndarray:
    """The ``(m, k)`` ``uint8`` matrix of ``chars[begin[i] : begin[i] + k]`` per row ``i``.

    Gathered a block of rows at a time: one index of ``m * k`` integers (eight
    bytes each, for a byte each gathered) would take eight times the result's
    memory, gigabytes at millions of addresses.
    """
    out = np.empty((len(begin), k), dtype=np.uint8)
    step = np.arange(k)
    for at in range(0, len(begin), _ROWS):
        out[at : at + _ROWS] = chars[begin[at : at + _ROWS, None] + step]
    return out


def from_char_matrix(matrix: np.ndarray) -> pa.LargeStringArray:
    """Each row of an ``(m, k)`` ``uint8`` matrix of ASCII as one string."""
    m, k = matrix.shape
    chars = np.ascontiguousarray(matrix, dtype=np.uint8)
    offsets = np.arange(0, (m + 1) * k, k, dtype=np.int64) if k else np.zeros(m + 1, np.int64)
    return pa.LargeStringArray.from_buffers(m, pa.py_buffer(offsets), pa.py_buffer(chars))


def interleave(mask: np.ndarray, where_true: pa.Array, where_false: pa.Array) -> pa.Array:
    """Row ``i`` from ``where_true`` (in turn) where ``mask[i]``, else from ``where_false``.

    ``where_true`` holds the ``mask.sum()`` rows for the True places, in
    order; ``where_false`` the others.
    """
    mask = np.asarray(mask, dtype=bool)
    if mask.all():
        return where_true
    if not mask.any():
        return where_false
    order = np.empty(len(mask), dtype=np.int64)
    order[mask] = np.arange(len(where_true))
    order[~mask] = len(where_true) + np.arange(len(where_false))
    return pa.concat_arrays([where_true, where_false]).take(pa.array(order))
