"""The CCTP domain registry: domain id <-> chain name <-> EVM chain id.

Circle numbers the chains CCTP connects as *domains*. The interface speaks
of chains in three ways: domain ids as strings (``"6"``), EVM chain ids as
strings (``"8453"``) and, for non-EVM chains, names (``"solana"``). This
module is the one place that maps between them.

Look-ups are forgiving (``"base"``, ``"Base"``, ``6``, ``"6"``, ``"Base
Mainnet"`` all name Base) and unknown values are carried through, never
dropped: :func:`chain_name` of an unknown domain is ``"domain-<id>"`` and of
an unknown chain id ``"chain-<id>"``, so a frame never loses a row because
the registry is older than the data.

Examples
--------
>>> from cctx_research import chains
>>> chains.domain("Base")
6
>>> chains.chain_name(3)
'arbitrum'
>>> chains.domain_from_chain_id("42161")
3
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "CHAINS",
    "DEFAULT_DOMAINS",
    "Chain",
    "chain_id",
    "chain_label",
    "chain_name",
    "domain",
    "domain_from_chain_id",
    "domains",
    "known_names",
    "name_from_chain_id",
]


@dataclass(frozen=True)
class Chain:
    """One CCTP domain."""

    domain: int
    name: str
    """Short snake_case name used in frames (``"arbitrum"``)."""
    label: str
    """Human label used in plots and reports (``"Arbitrum One"``)."""
    chain_id: str | None
    """EVM chain id as a string, or ``None`` for non-EVM chains."""
    in_v1: bool
    aliases: tuple[str, ...] = ()


CHAINS: tuple[Chain, ...] = (
    Chain(0, "ethereum", "Ethereum", "1", True, ("eth", "mainnet", "ethereum mainnet")),
    Chain(1, "avalanche", "Avalanche C-Chain", "43114", True, ("avax", "avalanche c-chain")),
    Chain(2, "optimism", "OP Mainnet", "10", True, ("op", "op mainnet", "op-mainnet")),
    Chain(3, "arbitrum", "Arbitrum One", "42161", True, ("arb", "arbitrum one", "arbitrum-one")),
    Chain(4, "noble", "Noble", None, True, ("noble-1",)),
    Chain(5, "solana", "Solana", None, True, ("sol",)),
    Chain(6, "base", "Base", "8453", True, ("base mainnet",)),
    Chain(7, "polygon", "Polygon PoS", "137", True, ("matic", "polygon pos", "polygon-pos")),
    Chain(8, "sui", "Sui", None, True, ()),
    Chain(9, "aptos", "Aptos", None, True, ()),
    Chain(10, "unichain", "Unichain", "130", True, ()),
    Chain(11, "linea", "Linea", "59144", False, ()),
    Chain(12, "codex", "Codex", "81224", False, ()),
    Chain(13, "sonic", "Sonic", "146", False, ()),
    Chain(14, "world_chain", "World Chain", "480", False, ("worldchain", "world chain", "world")),
)

DEFAULT_DOMAINS: tuple[int, ...] = (0, 1, 2, 3, 6, 7)
"""The domains the interface lists by default (the six V1 EVM chains indexed)."""

_BY_DOMAIN = {c.domain: c for c in CHAINS}
_BY_CHAIN_ID = {c.chain_id: c for c in CHAINS if c.chain_id is not None}


def _key(text: str) -> str:
    return re.sub(r"[\s_]+", " ", text.strip().lower())


_BY_NAME: dict[str, Chain] = {}
for _c in CHAINS:
    for _alias in (_c.name, _c.label, *_c.aliases):
        _BY_NAME[_key(_alias)] = _c

_UNKNOWN = re.compile(r"^(domain|chain)-(\d+)$")


def known_names() -> list[str]:
    """The canonical chain names, in domain order."""
    return [c.name for c in CHAINS]


def domain(value: int | str) -> int:
    """Return the domain id named by ``value``.

    Parameters
    ----------
    value : int or str
        A domain id (``6`` or ``"6"``), a chain name or alias in any case
        (``"base"``, ``"Arbitrum One"``, ``"op"``), or a carried-through
        unknown (``"domain-42"``).

    Returns
    -------
    int

    Raises
    ------
    TypeError
        If ``value`` is neither an int nor a str.
    ValueError
        If ``value`` names no chain; the message lists the valid names.

    Examples
    --------
    >>> domain("OP Mainnet"), domain(" 7 "), domain("domain-42")
    (2, 7, 42)
    """
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(
            f"a chain must be a domain id (int) or a chain name (str), got {type(value).__name__}"
        )
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"domain ids are non-negative integers, got {value}")
        return value
    text = value.strip()
    if text.isdigit():
        return int(text)
    match = _UNKNOWN.match(text.lower())
    if match and match.group(1) == "domain":
        return int(match.group(2))
    chain = _BY_NAME.get(_key(text))
    if chain is None:
        raise ValueError(
            f"unknown chain {value!r}; pass a domain id (0-14) or one of: "
            + ", ".join(known_names())
        )
    return chain.domain


def domains(values: int | str | Iterable[int | str] | None) -> list[int] | None:
    """Normalise one chain or a list of chains to sorted unique domain ids.

    ``None`` stays ``None`` (meaning: the default list).

    Examples
    --------
    >>> domains(["base", 3, "6"])
    [3, 6]
    """
    if values is None:
        return None
    if isinstance(values, (int, str)):
        values = [values]
    try:
        items = list(values)
    except TypeError:
        raise TypeError(
            "chains must be a domain id, a chain name or a list of either, "
            f"got {type(values).__name__}"
        ) from None
    if not items:
        raise ValueError("an empty list of chains selects nothing; pass None for all chains")
    return sorted({domain(v) for v in items})


def chain_name(domain_id: int | str) -> str:
    """Canonical name of a domain; unknown domains become ``"domain-<id>"``.

    Examples
    --------
    >>> chain_name(6), chain_name("42")
    ('base', 'domain-42')
    """
    d = domain(domain_id)
    chain = _BY_DOMAIN.get(d)
    return chain.name if chain else f"domain-{d}"


def chain_label(domain_id: int | str) -> str:
    """Human label of a domain (``"Arbitrum One"``), for plots and reports."""
    d = domain(domain_id)
    chain = _BY_DOMAIN.get(d)
    return chain.label if chain else f"domain {d}"


def chain_id(domain_id: int | str) -> str:
    """The interface's chain identifier of a domain.

    EVM chains give their chain id as a string (``"8453"``); non-EVM chains
    give their name (``"solana"``), as the upstream indexer does; unknown
    domains give ``"domain-<id>"``.
    """
    d = domain(domain_id)
    chain = _BY_DOMAIN.get(d)
    if chain is None:
        return f"domain-{d}"
    return chain.chain_id if chain.chain_id is not None else chain.name


def domain_from_chain_id(value: str | int) -> int | None:
    """Domain of an interface chain identifier (``"42161"`` or ``"solana"``).

    Returns ``None`` for an identifier the registry does not know, so the
    caller can carry the raw value through.
    """
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise TypeError(
            f"a chain id must be a str or int (e.g. '42161'), got {type(value).__name__}"
        )
    text = str(value).strip()
    chain = _BY_CHAIN_ID.get(text) or _BY_NAME.get(_key(text))
    if chain is not None:
        return chain.domain
    match = _UNKNOWN.match(text.lower())
    if match and match.group(1) == "domain":
        return int(match.group(2))
    return None


def name_from_chain_id(value: str | int) -> str:
    """Canonical name for an interface chain identifier, ``"chain-<id>"`` if unknown."""
    d = domain_from_chain_id(value)
    return chain_name(d) if d is not None else f"chain-{str(value).strip()}"
