"""The text encodings of non-EVM addresses and hashes: base58, bech32 and Stellar strkey."""

from __future__ import annotations

import base64
import binascii
import functools
import math
import operator
from collections.abc import Sequence

import numpy as np
import pyarrow as pa

__all__ = [
    "base58_decode",
    "base58_decode_rows",
    "base58_encode",
    "base58_encode_rows",
    "bech32_decode",
    "bech32_encode",
    "strkey_decode",
    "strkey_encode",
]

# --------------------------------------------------------------------------
# the text encodings themselves: base58 (Bitcoin alphabet, as Solana and Sui
# use it), bech32 (BIP-173, as Cosmos chains use it), Stellar strkey (SEP-23:
# base32 of a version byte, the payload and a CRC16-XModem, little endian)

_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_B58_INDEX = {c: i for i, c in enumerate(_B58)}


def base58_encode(raw: bytes) -> str:
    """Base58 of ``raw``; each leading zero byte is a leading ``1``."""
    number = int.from_bytes(raw, "big")
    digits = []
    while number:
        number, rem = divmod(number, 58)
        digits.append(_B58[rem])
    zeros = len(raw) - len(raw.lstrip(b"\x00"))
    return "1" * zeros + "".join(reversed(digits))


_B58_CHARS = np.frombuffer(_B58.encode(), dtype=np.uint8)
_GROUP = 58**5  # five digits at a time: below 2**32, so a 32-bit limb step fits in uint64


def base58_encode_rows(rows: np.ndarray) -> np.ndarray:
    """:func:`base58_encode` of each row of an ``(n, width)`` uint8 matrix, vectorised.

    Long division of all rows at once, by ``58**5`` over 32-bit limbs: the
    cost of a few numpy passes per five digits, not a big-number step per
    digit and row (a Solana column of many distinct addresses).

    Returns
    -------
    numpy.ndarray
        Object array of str.

    Examples
    --------
    >>> rows = np.array([[0] * 31 + [1], [0xC6] + [0] * 31], dtype=np.uint8)
    >>> base58_encode_rows(rows).tolist() == [base58_encode(bytes(r)) for r in rows]
    True
    """
    rows = np.ascontiguousarray(rows, dtype=np.uint8)
    n, width = rows.shape
    if n == 0:
        return np.empty(0, dtype=object)
    pad = -width % 4
    limbs = np.concatenate([np.zeros((n, pad), np.uint8), rows], axis=1)
    number = limbs.view(">u4").astype(np.uint64)
    groups = math.ceil(math.ceil(width * 8 / math.log2(58)) / 5)
    total = groups * 5
    digits = np.zeros((n, total), dtype=np.uint8)
    shift, group = np.uint64(32), np.uint64(_GROUP)
    for g in range(groups):
        rem = np.zeros(n, dtype=np.uint64)
        for j in range(number.shape[1]):
            current = (rem << shift) | number[:, j]
            number[:, j] = current // group
            rem = current % group
        for k in range(5):
            digits[:, total - 5 * g - 1 - k] = rem % np.uint64(58)
            rem //= np.uint64(58)
    nonzero = digits != 0
    first = np.where(nonzero.any(axis=1), nonzero.argmax(axis=1), total)
    filled = rows != 0
    zeros = np.where(filled.any(axis=1), filled.argmax(axis=1), width)
    # a zero digit is "1", as is each leading zero byte: the text is the last `length` digits
    length = zeros + (total - first)
    keep = np.arange(total)[None, :] >= (total - length)[:, None]
    chars = _B58_CHARS[digits][keep]
    offsets = np.concatenate([[0], np.cumsum(length)]).astype(np.int64)
    text = pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(chars))
    return text.to_numpy(zero_copy_only=False)


def base58_decode(text: str) -> bytes | None:
    """The bytes of a base58 string, ``None`` if it is not base58."""
    if not text or len(text) > 128:
        return None
    try:
        digits = [_B58_INDEX[c] for c in text]
    except KeyError:
        return None
    # Ten digits at a time: one big-int step per 58**10 instead of per digit.
    number = 0
    for i in range(0, len(digits), 10):
        chunk = digits[i : i + 10]
        value = 0
        for digit in chunk:
            value = value * 58 + digit
        number = number * 58 ** len(chunk) + value
    zeros = len(text) - len(text.lstrip("1"))
    body = number.to_bytes((number.bit_length() + 7) // 8, "big") if number else b""
    return b"\x00" * zeros + body


_B58_DIGIT = np.full(256, 255, dtype=np.uint8)
_B58_DIGIT[_B58_CHARS] = np.arange(58, dtype=np.uint8)


def base58_decode_rows(texts: Sequence[str], width: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`base58_decode` of many strings at once, each into ``width`` bytes.

    Multiplication by ``58**5`` over 32-bit limbs, all strings at once (the
    inverse of :func:`base58_encode_rows`): the cost of a few numpy passes per
    five characters, not a big-number step per character and string (a
    ledger's Solana addresses and signatures).

    Returns
    -------
    rows : numpy.ndarray
        ``(n, width)`` uint8, each value right-aligned (leading zero bytes).
    sizes : numpy.ndarray
        int64, the length :func:`base58_decode` gives (leading ``1`` s
        included); ``-1`` where a string is empty, holds a character that is
        not base58, or decodes to more than ``width`` bytes.

    Examples
    --------
    >>> rows, sizes = base58_decode_rows(["1112", "3yZe7d", "0OIl"], 4)
    >>> [bytes(r[4 - s:]) if s >= 0 else None for r, s in zip(rows, sizes)] == [
    ...     base58_decode("1112"), base58_decode("3yZe7d"), None]
    True
    """
    n = len(texts)
    rows = np.zeros((n, width), dtype=np.uint8)
    sizes = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return rows, sizes
    array = pa.array(texts, type=pa.large_string())
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int64)[array.offset : array.offset + n + 1]
    data = array.buffers()[2]
    chars = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    chars = np.concatenate([chars, np.frombuffer(b"1", np.uint8)])  # read where a row is short
    lengths = np.diff(offsets)
    longest = int(lengths.max())
    valid = (lengths > 0) & (lengths <= 128)
    # the characters right-aligned in (padded, n), "1" (digit 0) before each string's first
    padded = -(-max(longest, 1) // 5) * 5
    column = np.arange(padded)[:, None]
    lead = (padded - lengths)[None, :]
    inside = column >= lead
    codes = chars[np.where(inside, offsets[:-1][None, :] + column - lead, len(chars) - 1)]
    values = _B58_DIGIT[codes]
    valid &= ~(values == 255).any(axis=0)
    # leading "1"s are leading zero bytes: the string's first other character ends them
    other = inside & (codes != ord("1"))
    ones = np.where(other.any(axis=0), other.argmax(axis=0) - lead[0], lengths)
    group = np.where(values == 255, 0, values).astype(np.uint64).reshape(-1, 5, n)
    powers = np.array([58**4, 58**3, 58**2, 58, 1], dtype=np.uint64)[None, :, None]
    chunks = (group * powers).sum(axis=1)  # (groups, n), each below 58**5 < 2**30
    limbs_n = -(-width // 4) + 1
    limbs = np.zeros((limbs_n, n), dtype=np.uint64)  # 32-bit limbs, least significant first
    overflow = np.zeros(n, dtype=bool)
    mask, shift, step = np.uint64(0xFFFFFFFF), np.uint64(32), np.uint64(_GROUP)
    for carry in chunks:
        for j in range(limbs_n):
            current = limbs[j] * step + carry
            limbs[j] = current & mask
            carry = current >> shift
        overflow |= carry != 0
    big = np.ascontiguousarray(limbs[::-1].T).astype(">u4").view(np.uint8).reshape(n, -1)
    filled = big != 0
    significant = np.where(filled.any(axis=1), limbs_n * 4 - filled.argmax(axis=1), 0)
    size = ones + significant
    ok = valid & ~overflow & (size <= width)
    rows[ok] = big[ok][:, limbs_n * 4 - width :]
    sizes[ok] = size[ok]
    return rows, sizes


_BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_BECH32_INDEX = {c: i for i, c in enumerate(_BECH32)}
_BECH32_GEN = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)


# the generators XORed for each value of the checksum's top five bits: one lookup a
# character instead of five tests (bech32 decoding was most of a Noble column's cost)
_BECH32_TOP = tuple(
    functools.reduce(operator.xor, (g for i, g in enumerate(_BECH32_GEN) if top >> i & 1), 0)
    for top in range(32)
)


def _polymod(values: list[int]) -> int:
    chk = 1
    for value in values:
        chk = (chk & 0x1FFFFFF) << 5 ^ value ^ _BECH32_TOP[chk >> 25]
    return chk


def _hrp_expand(hrp: str) -> list[int]:
    return [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]


def _convert_bits(data: Sequence[int], src: int, dst: int, *, pad: bool) -> list[int] | None:
    acc, bits, out, top = 0, 0, [], (1 << dst) - 1
    for value in data:
        acc = (acc << src) | value
        bits += src
        while bits >= dst:
            bits -= dst
            out.append((acc >> bits) & top)
    if pad and bits:
        out.append((acc << (dst - bits)) & top)
    elif not pad and (bits >= src or (acc << (dst - bits)) & top):
        return None
    return out


def bech32_encode(hrp: str, raw: bytes) -> str:
    """Bech32 (BIP-173) of ``raw`` with human-readable part ``hrp``."""
    data = _convert_bits(raw, 8, 5, pad=True) or []
    poly = _polymod([*_hrp_expand(hrp), *data, 0, 0, 0, 0, 0, 0]) ^ 1
    checksum = [(poly >> 5 * (5 - i)) & 31 for i in range(6)]
    return hrp + "1" + "".join(_BECH32[d] for d in data + checksum)


def bech32_decode(text: str, hrp: str) -> bytes | None:
    """The bytes of a bech32 string with prefix ``hrp``; ``None`` if invalid."""
    if text.lower() != text and text.upper() != text:
        return None  # BIP-173: mixed case is invalid
    text = text.lower()
    if len(text) > 90 or not text.startswith(hrp + "1") or len(text) < len(hrp) + 7:
        return None
    try:
        data = [_BECH32_INDEX[c] for c in text[len(hrp) + 1 :]]
    except KeyError:
        return None
    if _polymod([*_hrp_expand(hrp), *data]) != 1:
        return None
    raw = _convert_bits(data[:-6], 5, 8, pad=False)
    return None if raw is None else bytes(raw)


def _crc16_xmodem(data: bytes) -> int:
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = (crc << 1) ^ 0x1021 if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def strkey_encode(version: int, payload: bytes) -> str:
    """A Stellar strkey of a 32-byte payload."""
    body = bytes([version]) + payload
    return base64.b32encode(body + _crc16_xmodem(body).to_bytes(2, "little")).decode()


def strkey_decode(text: str, versions: tuple[int, ...]) -> bytes | None:
    """The 32-byte payload of a strkey with one of ``versions``; ``None`` if invalid."""
    try:
        raw = base64.b32decode(text, casefold=False)
    except (binascii.Error, ValueError):
        return None
    if len(raw) != 35 or raw[0] not in versions:
        return None
    if _crc16_xmodem(raw[:-2]) != int.from_bytes(raw[-2:], "little"):
        return None
    return raw[1:33]
