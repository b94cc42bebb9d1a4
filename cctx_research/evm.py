"""Addresses and transaction hashes: their one canonical spelling.

Frames hold addresses as lowercase ``0x`` hex, EVM addresses as 20 bytes.
On chain, ``mintRecipient``, ``destinationCaller`` and
``destinationTokenMessenger`` are ``bytes32``: an EVM address is 12 zero
bytes followed by its 20 bytes. A bytes32 value that is not padded that way
(a non-EVM account) stays 32 bytes. Values that are not ``0x`` hex (a Solana
account in base58) are kept as they are: only hex is case-insensitive.

The client, the service and the analysis modules all normalise through this
module, so an address spelled two ways is one address everywhere.

Examples
--------
>>> normalize_address("0x" + "00" * 12 + "AB" * 20) == "0x" + "ab" * 20
True
>>> canonical_addresses(["0x" + "AB" * 20, "So1anaAccount"]).tolist()
['0xabababababababababababababababababababab', 'So1anaAccount']
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["canonical_addresses", "normalize_address", "normalize_hash"]

_PAD = "0x" + "00" * 12  # the 12 zero bytes before an EVM address in a bytes32
_ADDRESS_RE = re.compile(r"^0x(?:[0-9a-fA-F]{40}|[0-9a-fA-F]{64})$")
_HASH_RE = re.compile(r"^0x[0-9a-fA-F]{64}$")
_PREFIX = pa.scalar("0x", pa.large_string())
_EMPTY = pa.scalar("", pa.large_string())


def normalize_address(value: Any, *, name: str = "address") -> str:
    """The canonical spelling of one address, checked.

    Parameters
    ----------
    value : str
        ``0x`` + 40 hex digits, or ``0x`` + 64 (bytes32-padded), any case;
        surrounding white space is ignored.
    name : str
        The argument's name, for error messages.

    Raises
    ------
    TypeError
        If ``value`` is not a str.
    ValueError
        If it is not ``0x`` + 40 or 64 hex digits.
    """
    if not isinstance(value, str):
        raise TypeError(
            f"{name} must be a str such as '0x' followed by 40 hex digits, "
            f"got {type(value).__name__}"
        )
    text = value.strip()
    if not _ADDRESS_RE.match(text):
        raise ValueError(
            f"{name} must be '0x' followed by 40 hex digits (a 20-byte address) or 64 "
            f"(bytes32, left-padded with zeros), any case; got {value[:80]!r}"
        )
    text = text.lower()
    return "0x" + text[len(_PAD) :] if len(text) == 66 and text.startswith(_PAD) else text


def normalize_hash(value: Any, *, name: str = "tx_hash") -> str:
    """A transaction hash in lowercase, checked (``0x`` + 64 hex digits)."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    text = value.strip()
    if not _HASH_RE.match(text):
        raise ValueError(
            f"{name} must be '0x' followed by 64 hex digits (any case), got {value[:80]!r}"
        )
    return text.lower()


def _string_array(values: Sequence[Any]) -> pa.Array:
    try:
        return pa.array(values, type=pa.large_string())
    except (pa.ArrowTypeError, pa.ArrowInvalid):
        return pa.array(pd.array(values, dtype=pd.StringDtype("pyarrow")))  # str() of others


def canonical_addresses(values: Sequence[Any]) -> pd.Series:
    """The canonical spelling of many addresses, unchecked (missing stay missing).

    Vectorised with Arrow kernels: parsing five address columns per page is
    a large part of a cold pull.
    """
    raw = _string_array(values)
    is_hex = pc.fill_null(pc.starts_with(pc.utf8_lower(raw), "0x"), False)
    lower = pc.if_else(is_hex, pc.utf8_lower(raw), raw)
    padded = pc.fill_null(
        pc.and_(pc.equal(pc.utf8_length(lower), 66), pc.starts_with(lower, _PAD)), False
    )
    cut = pc.binary_join_element_wise(_PREFIX, pc.utf8_slice_codeunits(lower, len(_PAD)), _EMPTY)
    return pd.Series(pd.array(pc.if_else(padded, cut, lower), dtype=pd.StringDtype("pyarrow")))
