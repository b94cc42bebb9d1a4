"""Base58 strings to bytes, many at once, with numpy.

Solana's JSON replies spell instruction data in base58. Decoding one string
is a big-number change of base, so a loop over strings costs tens of
microseconds a string in Python. The value of a string is linear in its
digits, so the strings of one length are decoded together by one matrix
product with the bytes of the powers of 58 (BLAS), then one carry pass per
output byte over all of them.

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

__all__ = ["ALPHABET", "decode_many"]

ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
"""Bitcoin's base58 alphabet, which Solana uses."""

_DIGIT = np.full(256, 255, dtype=np.uint8)
_DIGIT[np.frombuffer(ALPHABET.encode(), dtype=np.uint8)] = np.arange(58, dtype=np.uint8)
_ROWS = 16384  # strings decoded together
_POWERS: dict[int, np.ndarray] = {}


def _powers(width: int) -> np.ndarray:
    """``(width, nbytes)`` float32: row ``j``: the little-endian bytes of ``58**(width-1-j)``."""
    found = _POWERS.get(width)
    if found is None:
        nbytes = (width * 5858 + 7999) // 8000 + 1  # log2(58)/8 bytes per digit, rounded up
        rows = [(58 ** (width - 1 - j)).to_bytes(nbytes, "little") for j in range(width)]
        found = np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(width, nbytes)
        found = _POWERS[width] = found.astype(np.float32)
    return found


def _group(text: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Decode ``(m, width)`` digit rows: (big-endian bytes ``(m, nbytes)``, leading ones, ok).

    The value is linear in the digits: ``sum(d_j * 58**(width-1-j))``. One
    matrix product with the bytes of those powers gives every output byte's
    sum of products (each below 2**24, so float32 holds it exactly); carrying
    from the low byte up then gives the bytes.
    """
    m = len(text)
    digits = _DIGIT[text]
    ok = (digits != 255).all(axis=1)
    digits[~ok] = 0
    ones = np.argmax(digits != 0, axis=1)
    ones[~digits.any(axis=1)] = width
    powers = _powers(width)
    nbytes = powers.shape[1]
    out = np.empty((m, nbytes), dtype=np.uint8)
    for lo in range(0, m, _ROWS):
        hi = min(lo + _ROWS, m)
        # (nbytes, rows), C order: BLAS reads both operands transposed, no copy
        sums = (powers.T @ digits[lo:hi].astype(np.float32).T).astype(np.int32)
        for b in range(nbytes - 1):
            sums[b + 1] += sums[b] >> 8
        sums &= 255
        out[lo:hi] = sums[::-1].T
    return out, ones, ok


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
    by_width: dict[int, list[int]] = {}
    for i, s in enumerate(strings):
        by_width.setdefault(len(s) if isinstance(s, str) else -1, []).append(i)
    ok = np.zeros(n, dtype=bool)
    pieces: list[np.ndarray] = []
    lengths = np.zeros(n, dtype=np.int64)
    order = np.zeros(n, dtype=np.int64)
    where = 0
    for width in sorted(by_width):
        rows = np.asarray(by_width[width], dtype=np.int64)
        if width <= 0:
            ok[rows] = width == 0
            continue
        joined = "".join([strings[i] for i in by_width[width]]).encode("ascii", "replace")
        text = np.frombuffer(joined, dtype=np.uint8).reshape(len(rows), width).copy()
        raw, ones, good = _group(text, width)
        first = np.argmax(raw != 0, axis=1)  # significant bytes start here
        first[~raw.any(axis=1)] = raw.shape[1]
        size = raw.shape[1] - first + ones
        keep = np.where(good, size, 0)
        # each row's bytes: its leading ones as zeros, then the significant bytes
        extra = int(ones[good].max(initial=0))
        if extra:
            raw = np.concatenate([np.zeros((len(rows), extra), dtype=np.uint8), raw], axis=1)
        total = int(keep.sum())
        pieces.append(raw[np.arange(raw.shape[1]) >= (raw.shape[1] - keep)[:, None]])
        lengths[rows] = keep
        order[rows] = where + np.cumsum(keep) - keep
        where += total
        ok[rows] = good
    buffer = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.uint8)
    return buffer, order, lengths, ok
