"""Addresses and transaction hashes: each chain's own spelling, and the wire's.

CCTP carries every address as ``bytes32``: an EVM address is 12 zero bytes
followed by its 20 bytes, a Noble account (20 bytes) is padded the same way,
and Solana, Sui, Aptos, Starknet and Stellar accounts fill all 32 bytes. The
interface writes these as ``0x`` + 64 hex digits. People (and block
explorers) write them in the chain's own format:

========  ===========================================  ==============
format    shown as                                     bytes
========  ===========================================  ==============
evm       ``0x`` + 40 hex digits, lowercase            20
solana    base58 (``EPjFWdd5...``)                     32
noble     bech32 with prefix ``noble`` (``noble1...``) 20 (or 32)
sui       ``0x`` + 64 hex digits                       32
aptos     ``0x`` + 64 hex digits                       32
starknet  ``0x`` + 64 hex digits                       32
stellar   strkey contract id (``C...``, 56 chars)      32
========  ===========================================  ==============

Frames show addresses in the chain's own format; :func:`to_bytes32` gives
the wire form and :func:`from_bytes32` reads it back. Every public function
of the toolkit that takes an address accepts any of these formats
(:func:`normalize_address`), so an address spelled two ways is one address
everywhere. Transaction hashes: ``0x`` + 64 hex on EVM chains, Aptos and
Starknet; base58 of 64 bytes (a signature) on Solana; base58 of 32 bytes on
Sui; 64 hex digits, upper case, on Noble; lower case on Stellar.

Examples
--------
>>> normalize_address("0x" + "00" * 12 + "AB" * 20) == "0x" + "ab" * 20
True
>>> to_bytes32("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")[:18]
'0xc6fa7af3bedbad3a'
>>> from_bytes32(to_bytes32("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"), "solana")
'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v'
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from . import chains
from ._codes import unique_ints
from ._textarrays import from_char_matrix, interleave

__all__ = [
    "FORMATS",
    "canonical_addresses",
    "detect_format",
    "from_bytes32",
    "normalize_address",
    "normalize_hash",
    "to_bytes32",
]

FORMATS: dict[str, str] = {
    "evm": "'0x' + 40 hex digits (or the bytes32 form: '0x' + 24 zeros + those 40)",
    "solana": "base58 of 32 bytes (32 to 44 characters, e.g. 'EPjFWdd5Aufq...')",
    "noble": "bech32 with prefix 'noble' ('noble1' + 38 characters for 20 bytes)",
    "sui": "'0x' + up to 64 hex digits (32 bytes)",
    "aptos": "'0x' + up to 64 hex digits (32 bytes)",
    "starknet": "'0x' + up to 64 hex digits (a felt, 32 bytes)",
    "stellar": "a strkey: 'C...' (contract) or 'G...' (account), 56 characters",
}
"""What each address format looks like, for error messages."""

_BYTES32 = "the interface's bytes32 form ('0x' + 64 hex digits)"
_PAD = b"\x00" * 12
_PAD_HEX = "0x" + "00" * 12
_HEX_RE = re.compile(r"^0x[0-9a-fA-F]+$")
_PREFIX = pa.scalar("0x", pa.large_string())
_EMPTY = pa.scalar("", pa.large_string())
_STELLAR_CONTRACT = 2 << 3  # strkey version byte of a contract id ('C')
_STELLAR_ACCOUNT = 6 << 3  # of an ed25519 account ('G')
_SHORT_HEX = ("sui", "aptos", "starknet")


# --------------------------------------------------------------------------
# one address <-> its 32 bytes


def _format_of(chain: Any) -> str | None:
    """Address format of a chain (name, alias or domain id); ``None`` if unknown."""
    if chain is None:
        return None
    if isinstance(chain, str) and chain in FORMATS and chains.info(chain) is None:
        return chain
    return chains.address_format(chain)


def _hex_bytes(text: str, fmt: str | None) -> bytes | None:
    """Bytes of ``0x`` hex that fits ``fmt`` (``None``: 20 or 32 bytes), else ``None``."""
    if not _HEX_RE.match(text):
        return None
    digits = text[2:]
    if fmt in _SHORT_HEX and len(digits) <= 64:
        return bytes.fromhex(digits.rjust(64, "0"))
    if len(digits) in (40, 64):
        return bytes.fromhex(digits)
    return None


def _decode(text: str, fmt: str | None) -> tuple[bytes, str] | None:
    """(20 or 32 bytes, detected format) of one address, ``None`` if it fits no format."""
    raw = _hex_bytes(text, fmt)
    if raw is not None:
        if fmt is None:
            is_evm = len(raw) == 20 or raw[:12] == _PAD
            return raw, "evm" if is_evm else "hex32"
        if fmt == "evm" and len(raw) == 32 and raw[:12] != _PAD:
            return None
        return raw, fmt
    if fmt in (None, "noble") and text.lower().startswith("noble1"):
        decoded = bech32_decode(text, "noble")
        if decoded is not None and len(decoded) in (20, 32):
            return decoded, "noble"
        return None
    if fmt in (None, "stellar") and len(text) == 56 and text[:1] in ("C", "G"):
        decoded = strkey_decode(text, (_STELLAR_CONTRACT, _STELLAR_ACCOUNT))
        if decoded is not None:
            return decoded, "stellar"
        if fmt == "stellar":
            return None
    if fmt in (None, "solana"):
        decoded = base58_decode(text)
        if decoded is not None and len(decoded) == 32:
            return decoded, "solana"
    return None


def _encode(raw: bytes, fmt: str | None) -> str:
    """The spelling of 20 or 32 bytes in ``fmt`` (``None``: compact hex, EVM if padded)."""
    body = raw[12:] if len(raw) == 32 and raw[:12] == _PAD else raw
    if fmt == "solana":
        return base58_encode(raw.rjust(32, b"\x00"))
    if fmt == "noble":
        return bech32_encode("noble", body)
    if fmt == "stellar":
        return strkey_encode(_STELLAR_CONTRACT, raw.rjust(32, b"\x00"))
    if fmt in _SHORT_HEX:
        return "0x" + raw.rjust(32, b"\x00").hex()
    return "0x" + body.hex()  # evm, or unknown: 20 bytes if padded, else 32


def _accepted(fmt: str | None, chain: Any) -> str:
    if fmt is None:
        return "one of: " + "; ".join(f"{k}: {v}" for k, v in FORMATS.items())
    return f"{FORMATS[fmt]} on {chain!r}, or {_BYTES32}"


def normalize_address(value: Any, *, chain: Any = None, name: str = "address") -> str:
    """One address, checked, in its chain's own format.

    Parameters
    ----------
    value : str
        An address in any format of :data:`FORMATS`, or the bytes32 wire
        form; surrounding white space is ignored, hex is any case.
    chain : str or int, optional
        The chain it belongs to (name, alias or domain id). ``None``: the
        format is detected (``0x`` + 40 hex -> EVM; ``noble1...`` -> Noble;
        ``C...``/``G...`` strkey -> Stellar; base58 of 32 bytes -> Solana;
        other ``0x`` + 64 hex stay as they are).
    name : str
        The argument's name, for error messages.

    Returns
    -------
    str

    Raises
    ------
    TypeError
        If ``value`` is not a str.
    ValueError
        If it fits no format (of the chain, when given); the message names
        the formats accepted.

    Examples
    --------
    >>> normalize_address("0x" + "00" * 12 + "1b" * 20, chain="noble")
    'noble1rvd3kxcmrvd3kxcmrvd3kxcmrvd3kxcmkzslgn'
    >>> normalize_address("0x1", chain="aptos") == "0x" + "0" * 63 + "1"
    True
    """
    if not isinstance(value, str):
        raise TypeError(
            f"{name} must be a str such as '0x' followed by 40 hex digits, "
            f"got {type(value).__name__}"
        )
    fmt = _format_of(chain)
    text = value.strip()
    decoded = _decode(text, fmt)
    if decoded is None:
        raise ValueError(f"{name} must be {_accepted(fmt, chain)}; got {value[:80]!r}")
    raw, found = decoded
    return _encode(raw, None if found == "hex32" else found)


def detect_format(value: str) -> str | None:
    """The format an address is written in (``"hex32"`` for bare bytes32), or ``None``.

    Examples
    --------
    >>> detect_format("noble1mry47pkga5tdswtluy0m8teslpalkdq0kz9xym"), detect_format("0x12")
    ('noble', None)
    """
    decoded = _decode(value.strip(), None) if isinstance(value, str) else None
    return None if decoded is None else decoded[1]


def to_bytes32(address: Any, chain: Any = None) -> str:
    """The interface's bytes32 form of an address: ``0x`` + 64 hex digits, lowercase.

    Parameters
    ----------
    address : str
        In any format :func:`normalize_address` accepts.
    chain : str or int, optional
        The chain, when known (it checks the format and reads short hex).

    Examples
    --------
    >>> to_bytes32("0x" + "AB" * 20) == "0x" + "00" * 12 + "ab" * 20
    True
    """
    fmt = _format_of(chain)
    if not isinstance(address, str):
        raise TypeError(f"address must be a str, got {type(address).__name__}")
    decoded = _decode(address.strip(), fmt)
    if decoded is None:
        raise ValueError(f"address must be {_accepted(fmt, chain)}; got {address[:80]!r}")
    return "0x" + decoded[0].rjust(32, b"\x00").hex()


def from_bytes32(value: Any, chain: Any) -> str:
    """An address read from its bytes32 wire form, in ``chain``'s own format.

    A chain the registry does not know gives the compact hex (20 bytes when
    padded, else 32). An EVM chain's value that is not padded keeps all 32
    bytes rather than lose the upper ones.

    Examples
    --------
    >>> from_bytes32("0x" + "00" * 12 + "ab" * 20, "base") == "0x" + "ab" * 20
    True
    """
    if not isinstance(value, str):
        raise TypeError(f"a bytes32 value must be a str, got {type(value).__name__}")
    raw = _hex_bytes(value.strip(), None)
    if raw is None:
        raise ValueError(f"a bytes32 value must be {_BYTES32}; got {value[:80]!r}")
    return _encode(raw, _format_of(chain))


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
    padded[wide] = (lower[starts[wide, None] + np.arange(2, 26)] == ord("0")).all(axis=1)
    lower[starts[padded] + 24] = ord("0")
    lower[starts[padded] + 25] = ord("x")
    short = ~wide | padded
    begin = np.where(padded, starts + 24, starts)
    return interleave(
        short,
        from_char_matrix(lower[begin[short, None] + np.arange(42)]),
        from_char_matrix(lower[begin[~short, None] + np.arange(66)]),
    )


def _respell(value: str, fmt: str) -> str:
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
        pairs = pd.DataFrame({"v": series.iloc[rows].to_numpy(), "f": codes[rows]})
        uniques = pairs.drop_duplicates()
        spelled = {
            (v, f): _respell(v, formats[f]) for v, f in zip(uniques["v"], uniques["f"], strict=True)
        }
        series.iloc[rows] = [spelled[(v, f)] for v, f in zip(pairs["v"], pairs["f"], strict=True)]
    return series


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


# --------------------------------------------------------------------------
# transaction hashes

_HASH_FORMATS = {
    "evm": "'0x' + 64 hex digits",
    "solana": "a base58 signature of 64 bytes (86 to 88 characters)",
    "sui": "a base58 digest of 32 bytes",
    "noble": "64 hex digits (a Cosmos tx hash, any case, '0x' optional)",
    "stellar": "64 hex digits",
}


def normalize_hash(value: Any, chain: Any = None, *, name: str = "tx_hash") -> str:
    """A transaction hash, checked, in its chain's spelling.

    Parameters
    ----------
    value : str
        ``0x`` + 64 hex digits (EVM, Aptos, Starknet), a base58 signature of
        64 bytes (Solana) or digest of 32 bytes (Sui), 64 bare hex digits
        (Noble, Stellar).
    chain : str or int, optional
        The chain it was sent on; ``None`` accepts any of these.
    name : str
        The argument's name, for error messages.

    Examples
    --------
    >>> normalize_hash("0x" + "AB" * 32) == "0x" + "ab" * 32
    True
    >>> normalize_hash("ab" * 32, "noble") == "AB" * 32
    True
    """
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    fmt = _format_of(chain)
    text = value.strip()
    if fmt in ("aptos", "starknet"):
        fmt = "evm"
    hex64 = re.fullmatch(r"(0[xX])?([0-9a-fA-F]{64})", text)
    if hex64 is not None and fmt in (None, "evm", "noble", "stellar"):
        digits = hex64.group(2)
        if fmt == "noble":
            return digits.upper()
        if fmt == "stellar" or (fmt is None and hex64.group(1) is None):
            return digits.lower()
        if hex64.group(1) is not None:
            return "0x" + digits.lower()
    if fmt in (None, "solana", "sui") and hex64 is None:
        decoded = base58_decode(text)
        sizes = {None: (32, 64), "solana": (64,), "sui": (32,)}[fmt]
        if decoded is not None and len(decoded) in sizes:
            return text
    if fmt is None:
        accepted = "; ".join(f"{k}: {v}" for k, v in _HASH_FORMATS.items())
        raise ValueError(f"{name} must be one of: {accepted}; got {value[:100]!r}")
    raise ValueError(f"{name} must be {_HASH_FORMATS[fmt]} on {chain!r}; got {value[:100]!r}")


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


_BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_BECH32_INDEX = {c: i for i, c in enumerate(_BECH32)}
_BECH32_GEN = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)


def _polymod(values: list[int]) -> int:
    chk = 1
    for value in values:
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ value
        for i, gen in enumerate(_BECH32_GEN):
            if (top >> i) & 1:
                chk ^= gen
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
