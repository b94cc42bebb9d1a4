"""CCTP's contracts and the tokens each domain burns, looked up by domain or address."""

from __future__ import annotations

from typing import Any

from .entries import VERSIONS, Contracts, canonical_address
from .lookups import domain
from .registry import state

__all__ = ["contract_domains", "contracts", "token_messengers", "token_symbol", "tokens"]



def _address_key(address: Any, what: str) -> str:
    """The canonical spelling of an address given to a look-up (hex, or a chain's own format)."""
    if not isinstance(address, str):
        raise TypeError(f"{what} must be an address as a str, got {type(address).__name__}")
    found = canonical_address(address)
    if found is not None:
        return found
    from .. import addressing  # imported here: addressing builds on the registry

    try:
        return canonical_address(addressing.to_bytes32(address)) or ""
    except ValueError:
        raise ValueError(
            f"{what} must be an address: 0x + 40 or 64 hex digits, or a chain's own spelling "
            f"(base58, bech32, strkey); got {address[:80]!r}"
        ) from None


def contracts(domain_id: int | str, version: int) -> Contracts | None:
    """The CCTP contracts of a domain and version, ``None`` if the registry lists none.

    Parameters
    ----------
    domain_id : int or str
        Anything :func:`domain` accepts.
    version : int
        The CCTP version, 1 or 2.

    Returns
    -------
    Contracts or None
        Lowercase ``0x`` hex: 20 bytes on EVM chains, the 32-byte CCTP form
        elsewhere; a field is ``None`` where that contract is unknown.

    Raises
    ------
    TypeError, ValueError
        If ``version`` is not 1 or 2, or ``domain_id`` names no chain.

    Examples
    --------
    >>> contracts("ethereum", 1).token_minter
    '0xc4922d64a24675e16e1586e3e3aa56c06fabe907'
    >>> contracts("base", 2).token_messenger == contracts("ethereum", 2).token_messenger
    True
    >>> contracts("edge", 2).message_transmitter
    '0x5b61381fc9e58e70efc13a4a97516997019198ee'
    >>> contracts("linea", 1) is None
    True
    """
    if isinstance(version, bool) or not isinstance(version, int):
        raise TypeError(f"version must be the int 1 or 2, got {type(version).__name__}")
    if version not in VERSIONS:
        raise ValueError(f"version must be one of {VERSIONS} (CCTP V1 or V2), got {version}")
    return state().contracts.get((domain(domain_id), version))


def token_messengers(domain_id: int | str) -> frozenset[str]:
    """Every TokenMessenger address (all versions) of a domain, lowercase; empty if unknown.

    An address that fits 20 bytes (EVM, Noble) appears in both wire spellings,
    ``0x`` + 40 and its 12-zero-byte padded ``0x`` + 64 form; a 32-byte one
    (Solana, Sui, Aptos, Starknet, Stellar) as ``0x`` + 64. Use it to check
    that a message's header ``sender`` is a TokenMessenger of its source domain.

    Examples
    --------
    >>> sorted(token_messengers("noble"))[1]
    '0x57d4eaf1091577a6b7d121202afbd2808134f117'
    >>> "0x28b5a0e9c621a5badaa536219b3a228c8168cf5d" in token_messengers(6)
    True
    >>> "0x28b5a0e9c621a5badaa536219b3a228c8168cf5d" in token_messengers("edge")
    False
    >>> token_messengers(99)
    frozenset()
    """
    return state().messengers.get(domain(domain_id), frozenset())


def contract_domains(address: str) -> frozenset[int]:
    """The domains whose registry entry lists this CCTP contract; empty if none.

    The V2 CREATE2 addresses belong to every EVM V2 domain that uses them, a
    V1 contract to its one domain. ``address`` is hex in any case, 20 bytes or
    bytes32-padded, or a program id in its chain's own spelling (base58).

    Examples
    --------
    >>> sorted(contract_domains("0xBd3fa81B58Ba92a82136038B25aDec7066af3155"))
    [0]
    >>> {0, 6, 30} <= contract_domains("0x81d40f21f12a8f0e3252bccb954d722d4c464b64")
    True
    >>> 28 in contract_domains("0x81d40f21f12a8f0e3252bccb954d722d4c464b64")
    False
    >>> sorted(contract_domains("CCTPV2vPZJS2u2BBsUoscuikbYjnpFmbFsvVuJdgUMQe"))
    [5]
    """
    return state().owners.get(_address_key(address, "address"), frozenset())


def tokens(domain_id: int | str) -> dict[str, str]:
    """The tokens a domain burns through CCTP: symbol -> address (a new dict each call).

    Examples
    --------
    >>> tokens("bnb")
    {'USYC': '0x8d0fa28f221eb5735bc71d3a0da67ee5bc821311'}
    >>> tokens("x layer")["USDC"]
    '0xb6ceceab302e2e4948951ee7843fc24e92933061'
    >>> tokens(99)
    {}
    """
    return dict(state().tokens.get(domain(domain_id), {}))


def token_symbol(domain_id: int | str, address: str) -> str | None:
    """The symbol (``"USDC"``, ``"EURC"``, ``"USYC"``) of a token of a domain, ``None`` if unknown.

    ``address`` may be written in any case, as 20 bytes or bytes32-padded, or
    in the chain's own spelling (a Solana mint in base58).

    Examples
    --------
    >>> token_symbol(0, "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48")
    'USDC'
    >>> token_symbol("ethereum", "0x" + "00" * 12 + "a0b86991c6218b36c1d19d4a2e9eb0ce3606eb48")
    'USDC'
    >>> token_symbol("solana", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
    'USDC'
    >>> token_symbol("base", "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48") is None
    True
    """
    return state().symbols.get((domain(domain_id), _address_key(address, "token address")))
