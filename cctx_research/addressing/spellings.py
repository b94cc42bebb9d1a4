"""One address or transaction hash: each chain's own spelling and the wire's bytes32."""

from __future__ import annotations

import re
from typing import Any

from .. import chains
from .codecs import (
    base58_decode,
    base58_encode,
    bech32_decode,
    bech32_encode,
    strkey_decode,
    strkey_encode,
)

__all__ = [
    "FORMATS",
    "ZERO_ADDRESSES",
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
_STELLAR_CONTRACT = 2 << 3  # strkey version byte of a contract id ('C')
_STELLAR_ACCOUNT = 6 << 3  # of an ed25519 account ('G')
_SHORT_HEX = ("sui", "aptos", "starknet")


# --------------------------------------------------------------------------
# one address <-> its 32 bytes


def _format_of(chain: Any) -> str | None:
    """Address format of a chain (name, alias or domain id); ``None`` if unknown."""
    if chain is None:
        return None
    if isinstance(chain, str) and chain in FORMATS and chain not in chains.known_names():
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


ZERO_ADDRESSES: frozenset[str] = frozenset(
    {_encode(bytes(32), fmt) for fmt in FORMATS} | {"0x" + "00" * 32}
)
"""The zero address as each format spells it (``0x`` + 40 zeros, ``0x`` + 64 zeros, ``1`` x 32
on Solana, ``noble1qqq...``, Stellar's): as a ``destination_caller``, anyone may relay."""


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

