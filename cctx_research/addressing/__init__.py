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

Frames show addresses in the chain's own format, whatever their source;
:func:`to_bytes32` gives the wire form and :func:`from_bytes32` reads it
back, and for a frame's address columns :func:`as_bytes32` and
:func:`as_chain_format` (which chain spells each column:
:data:`cctx_research.schema.ADDRESS_CHAINS`). A zero address (a
``destination_caller`` that lets anyone relay) is spelled as its chain
spells zero (:data:`ZERO_ADDRESSES`). Every public function
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

The package's modules: :mod:`~cctx_research.addressing.spellings` (one address
or hash), :mod:`~cctx_research.addressing.columns` (many addresses, vectorised),
:mod:`~cctx_research.addressing.frames` (a frame's address columns) and
:mod:`~cctx_research.addressing.codecs` (base58, bech32, strkey).
"""

from __future__ import annotations

# the text codecs stay reachable here (addressing.base58_encode), outside __all__
from .codecs import (  # noqa: F401
    base58_decode,
    base58_encode,
    bech32_decode,
    bech32_encode,
    strkey_decode,
    strkey_encode,
)
from .columns import canonical_addresses
from .frames import as_bytes32, as_chain_format
from .spellings import (
    FORMATS,
    ZERO_ADDRESSES,
    detect_format,
    from_bytes32,
    normalize_address,
    normalize_hash,
    to_bytes32,
)

__all__ = [
    "FORMATS",
    "ZERO_ADDRESSES",
    "as_bytes32",
    "as_chain_format",
    "canonical_addresses",
    "detect_format",
    "from_bytes32",
    "normalize_address",
    "normalize_hash",
    "to_bytes32",
]

