"""Exact keys over many columns, fast: 64-bit fingerprints, then a check of every match.

A key is a tuple of columns (integers, nullable integers, strings such as
``0x`` addresses and hashes) over the rows of one or more frames. Hashing
strings one by one, or dictionary-encoding each column, is most of the time
of grouping a few million rows; this module folds each row's key into one
``uint64`` instead (strings of a common length are read straight from the
Arrow character buffer as 64-bit words), groups the fingerprints, and then
compares every row with the first row of its group, exactly (the bytes of
its strings, its integers, its nulls). A group that does not hold is a
fingerprint collision: the groups are then rebuilt from exact dictionary
codes, so a result never depends on a hash.

A null equals a null and nothing else; strings compare byte for byte
(``"0xAB"`` is not ``"0xab"``).

Examples
--------
>>> import pandas as pd
>>> left = pd.Series(["0xab", None, "0xab", "0xAB"], dtype="string")
>>> right = pd.Series([1, 2, 1, 1])
>>> group_ids([[(left, None)], [(right, None)]]).tolist()
[0, 1, 0, 2]
>>> duplicated([[(left, None)], [(right, None)]]).tolist()
[False, False, True, False]
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..hexcodec import large_strings, take_rows
from ..rows import column as arrow_column

__all__ = ["Parts", "duplicated", "fold", "group_ids"]

logger = logging.getLogger(__name__)

Parts = Sequence[tuple[pd.Series, "np.ndarray | None"]]
"""One key column: pieces ``(series, rows)``, the rows of each series that count
(``None``: all), stacked in order."""

_P = np.uint64(0x9E3779B97F4A7C15)
_NULL = np.uint64(0xC2B2AE3D27D4EB4F)
_SHIFT = np.uint64(29)
_BLOCK = 1 << 20  # rows read at a time, so gathered words stay small


def fold(words: Iterable[np.ndarray], seed: np.ndarray) -> np.ndarray:
    """``seed`` with each array of 64-bit ``words`` folded in, row by row (in place).

    Each word is xored in and multiplied by an odd constant; a final shift
    mixes the high bits back into the low ones.

    Examples
    --------
    >>> one, two = np.array([1, 2], dtype=np.uint64), np.array([2, 1], dtype=np.uint64)
    >>> h = fold([one, two], np.zeros(2, dtype=np.uint64))
    >>> bool(h[0] != h[1])
    True
    """
    for word in words:
        seed ^= word
        seed *= _P
    seed ^= seed >> _SHIFT
    return seed


class _Column:
    """One key column over the stacked rows of its parts, read for fingerprints and checks."""

    def __init__(self, parts: Parts) -> None:
        self.parts = [(s, None if r is None else np.asarray(r, dtype=np.int64)) for s, r in parts]
        sizes = [len(s) if r is None else len(r) for s, r in self.parts]
        self.bounds = np.cumsum([0, *sizes])
        self.part = None if len(sizes) == 1 else np.repeat(np.arange(len(sizes)), sizes)
        self.numeric = all(pd.api.types.is_integer_dtype(s.dtype) for s, _ in self.parts)
        if self.numeric:
            self.values = np.concatenate(
                [_pick(s.to_numpy(dtype=np.int64, na_value=0), r) for s, r in self.parts]
            )
            self.null = np.concatenate([_pick(s.isna().to_numpy(), r) for s, r in self.parts])
            return
        self.chars, starts, lengths = [], [], []
        for series, rows in self.parts:
            arr = large_strings(arrow_column(series))
            n = len(arr)
            offsets = np.frombuffer(arr.buffers()[1], np.int64)[arr.offset : arr.offset + n + 1]
            data = arr.buffers()[2]
            chars = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
            self.chars.append(chars)
            size = np.diff(offsets)
            if arr.null_count:
                size[~np.asarray(arr.is_valid(), dtype=bool)] = -1
            starts.append(_pick(offsets[:-1], rows))
            lengths.append(_pick(size, rows))
        self.starts = np.concatenate(starts)
        self.lengths = np.concatenate(lengths)
        counts = np.bincount(np.clip(self.lengths + 1, 0, 258), minlength=259)
        common = counts >= max(1, len(self.lengths) // 64)
        common[:2] = common[258] = False  # nulls and empty strings need no bytes; long ones codes
        self.widths = (np.flatnonzero(common) - 1).tolist()
        other = (self.lengths > 0) & ~common[np.clip(self.lengths + 1, 0, 258)]
        self.codes = None  # exact codes of the strings of other lengths
        if other.any():
            self.codes = np.zeros(len(self.lengths), np.int64)
            self.codes[other] = _dictionary(self.parts, self.bounds, np.flatnonzero(other))

    def fingerprint(self, h: np.ndarray) -> np.ndarray:
        """``h`` with this column folded in (in place)."""
        if self.numeric:
            return fold([self.values.view(np.uint64) ^ (self.null * _NULL)], h)
        first = self.lengths.view(np.uint64)
        if self.codes is not None:
            first = first ^ self.codes.view(np.uint64) * _NULL
        fold([first], h)
        for width in self.widths:
            rows = np.flatnonzero(self.lengths == width)
            for part, at in self._by_part(rows):
                for lo in range(0, len(at), _BLOCK):
                    block = rows[at[lo : lo + _BLOCK]]
                    words = self._words(part, block, width)
                    h[block] = fold([words[:, k] for k in range(words.shape[1])], h[block])
        return h

    def equal(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """Whether row ``i[k]`` holds exactly the value of row ``j[k]``, for each ``k``."""
        if self.numeric:
            return (self.values[i] == self.values[j]) & (self.null[i] == self.null[j])
        same = self.lengths[i] == self.lengths[j]
        if self.codes is not None:
            same &= self.codes[i] == self.codes[j]
        for width in self.widths:
            at = np.flatnonzero(same & (self.lengths[i] == width))
            for p, on_p in self._by_part(i[at]):
                for q, on_q in self._by_part(j[at[on_p]]):
                    pairs = at[on_p[on_q]]
                    for lo in range(0, len(pairs), _BLOCK):
                        block = pairs[lo : lo + _BLOCK]
                        left = self._words(p, i[block], width)
                        same[block] = (left == self._words(q, j[block], width)).all(axis=1)
        return same

    def exact_codes(self) -> tuple[np.ndarray, int]:
        """Exact dictionary codes of every row (nulls 0) and how many there can be."""
        if self.numeric:
            codes, uniques = pd.factorize(self.values)
            return np.where(self.null, 0, codes.astype(np.int64) + 1), len(uniques) + 1
        codes = np.zeros(len(self.lengths), np.int64)
        present = np.flatnonzero(self.lengths >= 0)
        if len(present):
            codes[present] = _dictionary(self.parts, self.bounds, present)
        return codes, int(codes.max(initial=0)) + 1

    def _words(self, part: int, rows: np.ndarray, width: int) -> np.ndarray:
        """The ``width``-byte strings of ``rows`` (all in ``part``) as 64-bit words, zero-padded."""
        chars, starts = self.chars[part], self.starts[rows]
        size = -(-width // 8) * 8
        short = np.flatnonzero(starts > len(chars) - size)  # too near the end to read ``size``
        if len(short):
            starts = starts.copy()
            starts[short] = 0
        out = take_rows(chars, starts, size)
        if len(short):
            out[short] = 0
            out[short, :width] = take_rows(chars, self.starts[rows[short]], width)
        words = out.view("<u8")
        if width % 8:
            words[:, -1] &= np.uint64((1 << (8 * (width % 8))) - 1)  # little-endian: low bytes
        return words

    def _by_part(self, rows: np.ndarray) -> list[tuple[int, np.ndarray]]:
        """``rows`` split by the part each comes from: positions in ``rows``, per part."""
        if self.part is None:
            return [(0, np.arange(len(rows)))]
        part = self.part[rows]
        return [(p, np.flatnonzero(part == p)) for p in range(len(self.chars))]


def _pick(values: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
    return values if rows is None else values[rows]


def _dictionary(parts: list, bounds: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Exact codes (from 1) of the strings at stacked ``rows`` (all present), over every part."""
    chunks = []
    for p, (series, own) in enumerate(parts):
        local = rows[(rows >= bounds[p]) & (rows < bounds[p + 1])] - bounds[p]
        taken = local if own is None else own[local]
        chunks.append(large_strings(arrow_column(series)).take(pa.array(taken)))
    encoded = pa.chunked_array(chunks, pa.large_string()).dictionary_encode()
    indices = [c.indices for c in encoded.chunks]
    flat = pa.chunked_array(indices, pa.int32()).combine_chunks() if indices else pa.array(
        [], pa.int32())
    return pc.fill_null(flat, -1).to_numpy(zero_copy_only=False).astype(np.int64) + 1


def _fingerprints(columns: Sequence[Parts]) -> np.ndarray:
    """One ``uint64`` per stacked row, folded from every column of the key."""
    h = np.zeros(0, np.uint64)
    for k, parts in enumerate(columns):
        col = _Column(parts)
        if k == 0:
            h = np.zeros(int(col.bounds[-1]), np.uint64)
        col.fingerprint(h)
    return h


def _exact_ids(columns: Sequence[Parts]) -> np.ndarray:
    """Group ids from exact dictionary codes, column by column (first-appearance order)."""
    gid: np.ndarray | None = None
    for parts in columns:
        codes, size = _Column(parts).exact_codes()
        gid = codes if gid is None else gid * (size + 1) + codes
        gid = pd.factorize(gid)[0].astype(np.int64)
    return gid if gid is not None else np.zeros(0, np.int64)


def group_ids(columns: Sequence[Parts]) -> np.ndarray:
    """The group of each stacked row's key: equal keys, equal ids (numbered by first row).

    Parameters
    ----------
    columns : sequence of :data:`Parts`
        The key's columns, each over the same number of stacked rows.

    Returns
    -------
    numpy.ndarray
        ``int64`` ids ``0, 1, ...`` in the order each key first appears.
    """
    if not columns:
        raise ValueError("group_ids needs at least one key column")
    h = _fingerprints(columns)
    ids = pd.factorize(h)[0]
    ids = ids.astype(np.int64)
    # ids count up in order of first appearance: a group starts where the running max grows
    first = np.flatnonzero(np.r_[True, ids[1:] > np.maximum.accumulate(ids)[:-1]])
    rows = np.flatnonzero(first[ids] != np.arange(len(ids)))
    leaders = first[ids[rows]]
    if all(_Column(parts).equal(rows, leaders).all() for parts in columns):
        return ids
    logger.info("fingerprint collision among %d keys; grouping on exact codes", len(ids))
    return _exact_ids(columns)


def _subset(columns: Sequence[Parts], rows: np.ndarray) -> list[list]:
    """The same columns over the stacked ``rows`` only."""
    out = []
    for parts in columns:
        bounds = np.cumsum([0, *[len(s) if r is None else len(r) for s, r in parts]])
        new = []
        for p, (series, own) in enumerate(parts):
            local = rows[(rows >= bounds[p]) & (rows < bounds[p + 1])] - bounds[p]
            new.append((series, local if own is None else np.asarray(own)[local]))
        out.append(new)
    return out


def duplicated(columns: Sequence[Parts]) -> np.ndarray:
    """Whether each stacked row's key was already held by an earlier row.

    Only rows whose fingerprints repeat are compared exactly, so a frame
    without duplicates costs one fingerprint and one sort.
    """
    if not columns:
        raise ValueError("duplicated needs at least one key column")
    h = _fingerprints(columns)
    out = np.zeros(len(h), dtype=bool)
    ordered = np.sort(h)
    repeated = ordered[1:][ordered[1:] == ordered[:-1]]
    if not len(repeated):
        return out
    maybe = np.flatnonzero(np.isin(h, repeated))
    ids = group_ids(_subset(columns, maybe))
    out[maybe] = pd.Series(ids).duplicated().to_numpy()
    return out
