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
>>> chains.info("solana").address_format
'solana'

The registry holds every domain Circle publishes for CCTP V1 and V2
(:data:`CHAINS`), with the chain's address format, whether it offers V2
Fast Transfer as a source, and block explorer URL templates. Sources:
Circle's developer documentation ("Supported blockchains and domains",
"CCTP V1 domains"); see ``docs`` in the project's CCTP reference.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "ADDRESS_FORMATS",
    "CHAINS",
    "DEFAULT_DOMAINS",
    "Chain",
    "address_format",
    "by_chain_id",
    "chain_id",
    "chain_label",
    "chain_name",
    "domain",
    "domain_from_chain_id",
    "domains",
    "fast_source_domains",
    "in_order",
    "info",
    "known_names",
    "name_from_chain_id",
    "sort_key",
    "v1_domains",
    "v2_domains",
]


ADDRESS_FORMATS: tuple[str, ...] = ("aptos", "evm", "noble", "solana", "starknet", "stellar", "sui")
"""How each chain writes an address (see :mod:`cctx_research.addressing`)."""


@dataclass(frozen=True)
class Chain:
    """One CCTP domain.

    Attributes
    ----------
    domain : int
        Circle's domain id.
    name : str
        Short snake_case name used in frames (``"arbitrum"``).
    label : str
        Human label used in plots and reports (``"Arbitrum One"``).
    chain_id : str or None
        EVM chain id as a string, or ``None`` for non-EVM chains (and for an
        EVM chain without a public mainnet chain id).
    in_v1, in_v2 : bool
        Whether Circle publishes CCTP V1 / V2 contracts on the chain.
    fast_source : bool
        Whether V2 Fast Transfer is offered with this chain as the *source*
        (Circle offers it only where it beats the chain's standard
        attestation time).
    address_format : str
        One of :data:`ADDRESS_FORMATS`: how the chain writes an address.
    explorer_address, explorer_tx : str
        Block explorer URL templates with ``{address}`` / ``{tx}``.
    aliases : tuple of str
        Other names accepted by the look-ups, any case.
    """

    domain: int
    name: str
    label: str
    chain_id: str | None
    in_v1: bool
    in_v2: bool = True
    fast_source: bool = False
    address_format: str = "evm"
    explorer_address: str = ""
    explorer_tx: str = ""
    aliases: tuple[str, ...] = ()

    def address_url(self, address: str) -> str:
        """The explorer page of an address (given in the chain's own format)."""
        return self.explorer_address.format(address=address)

    def tx_url(self, tx_hash: str) -> str:
        """The explorer page of a transaction."""
        return self.explorer_tx.format(tx=tx_hash)


# fmt: off
# (domain, name, label, EVM chain id, V1, V2, fast source, address format, explorer, aliases)
_TABLE: tuple[tuple, ...] = (
    (0, "ethereum", "Ethereum", "1", 1, 1, 1, "evm", "https://etherscan.io",
     ("eth", "mainnet", "ethereum mainnet")),
    (1, "avalanche", "Avalanche C-Chain", "43114", 1, 1, 0, "evm", "https://snowtrace.io",
     ("avax", "avalanche c-chain")),
    (2, "optimism", "OP Mainnet", "10", 1, 1, 1, "evm", "https://optimistic.etherscan.io",
     ("op", "op mainnet", "op-mainnet")),
    (3, "arbitrum", "Arbitrum One", "42161", 1, 1, 1, "evm", "https://arbiscan.io",
     ("arb", "arbitrum one", "arbitrum-one")),
    (4, "noble", "Noble", None, 1, 0, 0, "noble", "https://www.mintscan.io/noble", ("noble-1",)),
    (5, "solana", "Solana", None, 1, 1, 1, "solana", "https://solscan.io", ("sol",)),
    (6, "base", "Base", "8453", 1, 1, 1, "evm", "https://basescan.org", ("base mainnet",)),
    (7, "polygon", "Polygon PoS", "137", 1, 1, 0, "evm", "https://polygonscan.com",
     ("matic", "polygon pos", "polygon-pos")),
    (8, "sui", "Sui", None, 1, 0, 0, "sui", "https://suiscan.xyz/mainnet", ()),
    (9, "aptos", "Aptos", None, 1, 0, 0, "aptos", "https://explorer.aptoslabs.com", ()),
    (10, "unichain", "Unichain", "130", 1, 1, 1, "evm", "https://uniscan.xyz", ()),
    (11, "linea", "Linea", "59144", 0, 1, 1, "evm", "https://lineascan.build", ()),
    (12, "codex", "Codex", "81224", 0, 1, 1, "evm", "https://explorer.codex.xyz", ()),
    (13, "sonic", "Sonic", "146", 0, 1, 0, "evm", "https://sonicscan.org", ()),
    (14, "world_chain", "World Chain", "480", 0, 1, 1, "evm", "https://worldscan.org",
     ("worldchain", "world chain", "world")),
    (15, "monad", "Monad", "143", 0, 1, 0, "evm", "https://monadscan.com", ()),
    (16, "sei", "Sei", "1329", 0, 1, 0, "evm", "https://seiscan.io", ("sei evm",)),
    (17, "bnb", "BNB Smart Chain", "56", 0, 1, 1, "evm", "https://bscscan.com",
     ("bsc", "bnb smart chain", "bnb chain", "binance smart chain")),
    (18, "xdc", "XDC Network", "50", 0, 1, 0, "evm", "https://xdcscan.com", ("xdc network",)),
    (19, "hyperevm", "HyperEVM", "999", 0, 1, 0, "evm", "https://hyperevmscan.io",
     ("hyperliquid", "hyper evm")),
    (21, "ink", "Ink", "57073", 0, 1, 1, "evm", "https://explorer.inkonchain.com", ()),
    (22, "plume", "Plume", "98866", 0, 1, 1, "evm", "https://explorer.plume.org", ()),
    (25, "starknet", "Starknet", None, 0, 1, 1, "starknet", "https://voyager.online", ()),
    (26, "arc", "Arc (testnet)", None, 0, 1, 0, "evm", "https://testnet.arcscan.app",
     ("arc testnet",)),
    (27, "stellar", "Stellar", None, 0, 1, 0, "stellar", "https://stellar.expert/explorer/public",
     ("xlm",)),
)
# fmt: on

# Explorer paths by address format (EVM explorers share Etherscan's paths).
_EXPLORER_PATHS = {
    "evm": ("/address/{address}", "/tx/{tx}"),
    "noble": ("/address/{address}", "/tx/{tx}"),
    "solana": ("/account/{address}", "/tx/{tx}"),
    "sui": ("/account/{address}", "/tx/{tx}"),
    "aptos": ("/account/{address}?network=mainnet", "/txn/{tx}?network=mainnet"),
    "starknet": ("/contract/{address}", "/tx/{tx}"),
    "stellar": ("/contract/{address}", "/tx/{tx}"),
}

CHAINS: tuple[Chain, ...] = tuple(
    Chain(
        domain=d,
        name=name,
        label=label,
        chain_id=cid,
        in_v1=bool(v1),
        in_v2=bool(v2),
        fast_source=bool(fast),
        address_format=fmt,
        explorer_address=explorer + _EXPLORER_PATHS[fmt][0],
        explorer_tx=explorer + _EXPLORER_PATHS[fmt][1],
        aliases=aliases,
    )
    for d, name, label, cid, v1, v2, fast, fmt, explorer, aliases in _TABLE
)
"""Every domain Circle publishes for CCTP V1 and V2, in domain order.

Sources: Circle, "Supported blockchains and domains" (V2 domains and the
Fast Transfer source column), "CCTP V1 domains"; Stellar's domain (27) from
Circle's CCTP-on-Stellar pages; EVM chain ids from each chain's documentation.
Arc is listed by Circle as a testnet only, so it has no mainnet chain id.
"""


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


def sort_key(name: str) -> tuple[int, int, str]:
    """Sort key of a chain name: registry names in domain order, then unknown ones by domain.

    Examples
    --------
    >>> sorted(["domain-99", "base", "ethereum"], key=sort_key)
    ['ethereum', 'base', 'domain-99']
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a chain name (str) like 'base', got {type(name).__name__}")
    known = known_names()
    if name in known:
        return (0, known.index(name), name)
    try:
        return (1, domain(name), name)
    except (TypeError, ValueError):
        return (2, 0, name)


def in_order(names: Iterable[object]) -> list[str]:
    """The distinct chain names of ``names`` (missing values left out), in :func:`sort_key` order.

    Examples
    --------
    >>> in_order(["base", "ethereum", "base", None])
    ['ethereum', 'base']
    """
    import pandas as pd

    if isinstance(names, (str, bytes)) or not isinstance(names, Iterable):
        raise TypeError(
            f"names must be an iterable of chain names such as ['base', 'ethereum'], "
            f"got {type(names).__name__}"
        )
    return sorted({str(n) for n in names if not pd.isna(n)}, key=sort_key)


def _unknown_name(value: str) -> ValueError:
    keys = sorted(_BY_NAME)
    close = difflib.get_close_matches(_key(value), keys, n=5, cutoff=0.6)
    names = list(dict.fromkeys(_BY_NAME[k].name for k in close))[:3]
    hint = " (did you mean " + " or ".join(map(repr, names)) + "?)" if names else ""
    return ValueError(
        f"unknown chain {value!r}{hint}; pass a domain id (an integer such as 6) or one of: "
        + ", ".join(f"{c.name} ({c.domain})" for c in CHAINS)
    )


def info(value: int | str) -> Chain | None:
    """The registry entry of a chain, ``None`` for a domain id it does not know.

    Parameters
    ----------
    value : int or str
        Anything :func:`domain` accepts: a domain id, a name, an alias or a
        label, in any case.

    Raises
    ------
    ValueError
        If ``value`` is a name that matches no chain.

    Examples
    --------
    >>> info("sol").address_format, info("Linea").in_v1, info("base").fast_source
    ('solana', False, True)
    >>> info(99) is None
    True
    """
    return _BY_DOMAIN.get(domain(value))


def by_chain_id(value: str | int) -> Chain | None:
    """The registry entry of an EVM chain id (``"8453"`` or ``8453``), ``None`` if unknown.

    Examples
    --------
    >>> by_chain_id(59144).name
    'linea'
    """
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise TypeError(f"an EVM chain id must be a str or int, got {type(value).__name__}")
    return _BY_CHAIN_ID.get(str(value).strip())


def address_format(value: int | str) -> str | None:
    """How a chain writes addresses (``"evm"``, ``"solana"``, ...), ``None`` if unknown.

    Examples
    --------
    >>> address_format("noble"), address_format(8), address_format(42)
    ('noble', 'sui', None)
    """
    chain = info(value)
    return chain.address_format if chain is not None else None


def v1_domains() -> list[int]:
    """Domains with CCTP V1 contracts."""
    return [c.domain for c in CHAINS if c.in_v1]


def v2_domains() -> list[int]:
    """Domains with CCTP V2 contracts."""
    return [c.domain for c in CHAINS if c.in_v2]


def fast_source_domains() -> list[int]:
    """Domains from which V2 Fast Transfer is offered.

    Examples
    --------
    >>> [chain_name(d) for d in fast_source_domains()][:4]
    ['ethereum', 'optimism', 'arbitrum', 'solana']
    """
    return [c.domain for c in CHAINS if c.in_v2 and c.fast_source]


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
        raise _unknown_name(value)
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
