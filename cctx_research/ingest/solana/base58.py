"""Base58 strings to bytes, many at once, with numpy.

Solana's JSON replies spell instruction data in base58. Decoding one string
is a big-number change of base, so a loop over strings costs tens of
microseconds a string in Python. The value of a string is linear in its
digits, so the strings of one length are decoded together by one matrix
product, then one carry pass per output limb over all of them.

The product is made small: every five digits are first read as one number
below ``58**5`` (about 2**29), and the output is in 16-bit limbs, so a
string of ``w`` digits costs ``w/5 x w*0.73/2`` multiply-adds (a tenth of
digits times bytes). Each sum is an integer below 2**53 (at most 200
groups of ``58**5 x 2**16``), so float64 BLAS adds them exactly, in any
order; longer strings use 8-bit limbs (the bound then holds to 53,000
groups).

Examples
--------
>>> buffer, starts, lengths, ok = decode_many(["2g", "1112g", "0OIl"])
>>> [bytes(buffer[s : s + n]) for s, n in zip(starts, lengths)][:2]
[b'a', b'\\x00\\x00\\x00a']
>>> ok.tolist()
[True, True, False]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..hexcodec import take_rows

__all__ = ["ALPHABET", "decode_many"]

ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
"""Bitcoin's base58 alphabet, which Solana uses."""

_DIGIT = np.full(256, 255, dtype=np.uint8)
_DIGIT[np.frombuffer(ALPHABET.encode(), dtype=np.uint8)] = np.arange(58, dtype=np.uint8)
_ROWS = 8192  # strings decoded together
_GROUP = 5  # digits read as one number below 58**5
_SINGLE_THREADED = 1 << 18  # OpenBLAS runs a product of fewer multiply-adds on one thread
_EXACT = 2**53
_POWERS: dict[tuple[int, int], np.ndarray] = {}


def _powers(groups: int, bits: int) -> np.ndarray:
    """``(limbs, groups)`` float64: column ``g`` holds the little-endian limbs of
    ``58 ** (5 * (groups - 1 - g))``."""
    found = _POWERS.get((groups, bits))
    if found is None:
        limbs = (groups * _GROUP * 5858 + 999) // (bits * 1000) + 2  # log2(58) bits a digit
        nbytes = limbs * bits // 8
        rows = [(58 ** (_GROUP * (groups - 1 - g))).to_bytes(nbytes, "little")
                for g in range(groups)]  # fmt: skip
        dtype = np.dtype("<u2") if bits == 16 else np.uint8
        table = np.frombuffer(b"".join(rows), dtype=dtype).reshape(groups, limbs)
        found = _POWERS[(groups, bits)] = np.ascontiguousarray(table.T, dtype=np.float64)
    return found


def _group(text: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Decode ``(m, width)`` digit rows: (big-endian bytes ``(m, nbytes)``, leading ones, ok)."""
    m = len(text)
    digits = _DIGIT[text]
    ok = np.ones(m, dtype=bool)
    if m and digits.max() > 57:  # one pass over all; rows only when some digit is bad
        ok = digits.max(axis=1) < 58
        digits[~ok] = 0
    ones = np.zeros(m, dtype=np.int64)
    lead = np.flatnonzero(digits[:, 0] == 0)  # leading ones: only where the first digit is one
    if len(lead):
        nonzero = digits[lead] != 0
        found = np.argmax(nonzero, axis=1)
        found[~nonzero[np.arange(len(lead)), found]] = width  # no nonzero digit: all are ones
        ones[lead] = found
    # five digits (from the last) as one number below 2**30; the first group may be shorter.
    # Digits, numbers and limbs are laid out a row per place and a column per string, so
    # that every step below reads and writes whole contiguous rows
    columns = np.ascontiguousarray(digits.T)
    head = width % _GROUP
    groups = width // _GROUP + (head > 0)
    values = np.zeros((groups, m), dtype=np.int32)
    for i in range(head):
        values[0] *= 58
        values[0] += columns[i]
    tail = values[groups - width // _GROUP :]
    for i in range(_GROUP):
        if i:
            tail *= 58
        tail += columns[head + i :: _GROUP]
    # 16-bit limbs while every sum stays below 2**53, else 8-bit ones
    bits = 16 if groups * (58**_GROUP) * 2**16 < _EXACT else 8
    powers = _powers(groups, bits)
    product = np.empty((powers.shape[0], m), dtype=np.float64)
    floats = values.astype(np.float64)
    # products small enough for one thread: a larger one wakes BLAS's threads, whose
    # spinning costs several times the product's CPU time on a busy machine
    step = max(1, _SINGLE_THREADED // powers.size)
    for lo in range(0, m, step):
        np.matmul(powers, floats[:, lo : lo + step], out=product[:, lo : lo + step])
    sums = product.astype(np.int64)  # (limbs, strings), little-endian limbs first
    for b in range(len(sums) - 1):
        sums[b + 1] += sums[b] >> bits
    # each sum's low bits, as big-endian limbs (the cast drops the high bits), then one row
    # per string: the transpose moves 2-byte limbs, not 8-byte sums
    limbs = sums[::-1].astype(">u2" if bits == 16 else np.uint8)
    out = np.ascontiguousarray(limbs.T).view(np.uint8).reshape(m, -1)
    return out, ones, ok


def _widths(strings: Sequence[str]) -> np.ndarray:
    """Each string's length, ``-1`` where it is not a string."""
    if set(map(type, strings)) == {str}:
        return np.fromiter(map(len, strings), dtype=np.int64, count=len(strings))
    return np.fromiter((len(s) if isinstance(s, str) else -1 for s in strings), dtype=np.int64,
                       count=len(strings))  # fmt: skip


def decode_many(strings: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Decode base58 strings into one flat byte buffer.

    Parameters
    ----------
    strings : sequence of str
        Base58 text (ASCII). Anything else (a character outside the
        alphabet, a non-ASCII string) marks its row not ok.

    Returns
    -------
    (buffer, starts, lengths, ok)
        Row ``i`` is ``buffer[starts[i] : starts[i] + lengths[i]]`` (empty
        where not ok). Each leading ``1`` is a leading zero byte, as in
        Bitcoin's and Solana's base58.
    """
    n = len(strings)
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return np.zeros(0, dtype=np.uint8), empty, empty, np.zeros(0, dtype=bool)
    widths = _widths(strings)
    text_rows = widths > 0
    # every string's characters, one after another; a non-ASCII character becomes "?" (no digit)
    joined = "".join(s for s, w in zip(strings, widths, strict=True) if w > 0) if (
        not text_rows.all()) else "".join(strings)  # fmt: skip
    chars = np.frombuffer(joined.encode("ascii", "replace"), dtype=np.uint8)
    char_at = np.zeros(n, dtype=np.int64)
    char_at[text_rows] = np.cumsum(widths[text_rows]) - widths[text_rows]
    ok = widths == 0  # the empty string is zero bytes; a non-string is not ok
    lengths = np.zeros(n, dtype=np.int64)
    order = np.zeros(n, dtype=np.int64)
    pieces: list[np.ndarray] = []
    where = 0
    by_width = np.argsort(widths, kind="stable")
    sorted_widths = widths[by_width]
    bounds = np.flatnonzero(np.diff(sorted_widths)) + 1
    # each length's strings together, a slice of them at a time (the arrays stay in cache)
    for same in np.split(by_width, bounds):
        width = int(widths[same[0]])
        if width <= 0:
            continue
        for lo in range(0, len(same), _ROWS):
            rows = same[lo : lo + _ROWS]
            raw, ones, good = _group(take_rows(chars, char_at[rows], width), width)
            nonzero = raw != 0
            first = np.argmax(nonzero, axis=1)  # significant bytes start here
            first[~nonzero[np.arange(len(rows)), first]] = raw.shape[1]
            extra = int(ones[good].max(initial=0))
            if extra:  # room for each row's leading ones, as zero bytes, before its first byte
                raw = np.concatenate([np.zeros((len(rows), extra), dtype=np.uint8), raw], axis=1)
                first += extra
            # each row stays in its place in the matrix: it starts at its leading zeros
            size = raw.shape[1]
            keep = np.where(good, size - first + ones, 0)
            pieces.append(raw.ravel())
            lengths[rows] = keep
            order[rows] = where + np.arange(len(rows)) * size + (first - ones)
            where += raw.size
            ok[rows] = good
    buffer = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.uint8)
    return buffer, order, lengths, ok
