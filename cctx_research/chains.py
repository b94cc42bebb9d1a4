"""The CCTP domain registry: domains, chains, contracts and the tokens they burn.

Circle numbers the chains CCTP connects as *domains*. The interface speaks
of chains in three ways: domain ids as strings (``"6"``), EVM chain ids as
strings (``"8453"``) and, for non-EVM chains, names (``"solana"``). This
module is the one place that maps between them, and the one home of CCTP's
contract addresses (:func:`contracts`, :func:`token_messengers`,
:func:`contract_domains`) and of the tokens each domain burns
(:func:`tokens`, :func:`token_symbol`).

Look-ups are forgiving (``"base"``, ``"Base"``, ``6``, ``"6"``, ``"Base
Mainnet"`` all name Base) and unknown values are carried through, never
dropped: :func:`chain_name` of an unknown domain is ``"domain-<id>"`` and of
an unknown chain id ``"chain-<id>"``, so a frame never loses a row because
the registry is older than the data.

The registry is open: :func:`register` adds or amends a domain for the
running process, and ``chains.toml`` in the configuration directory (see
:mod:`cctx_research.chains_toml`) does it for every process (``load``, the
client, the service, the reports), read once at the first look-up.

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
>>> chains.chain_name(31), chains.chain_name(37)
('pharos', 'x_layer')
>>> chains.contracts("edge", 2).token_messenger
'0x98706a006bc632df31cadfcbd43f38887ce2ca5c'
>>> chains.token_symbol("bnb", "0x8D0fA28f221eB5735BC71d3a0Da67EE5bC821311")
'USYC'

The built-in registry holds every domain Circle publishes for CCTP V1 and V2
as of November 2026 (:data:`CHAINS`), with the chain's address format,
whether it offers V2 Fast Transfer as a source, block explorer URL
templates, contract addresses by version and burnable tokens. Its sources
are listed in ``cctx_research._registry_table`` and in the project's CCTP
reference.
"""

from __future__ import annotations

import difflib
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import fields
from typing import Any

from . import chains_toml
from .chain_entries import (
    ADDRESS_FORMATS,
    BUILTIN,
    VERSIONS,
    Chain,
    Contracts,
    RegistryIndex,
    canonical_address,
    chain_from_mapping,
    check_names,
    name_key,
)

__all__ = [
    "ADDRESS_FORMATS",
    "CHAINS",
    "DEFAULT_DOMAINS",
    "Chain",
    "Contracts",
    "address_format",
    "by_chain_id",
    "chain_id",
    "chain_label",
    "chain_name",
    "config_file",
    "contract_domains",
    "contracts",
    "domain",
    "domain_from_chain_id",
    "domains",
    "fast_source_domains",
    "in_order",
    "info",
    "known_names",
    "name_from_chain_id",
    "register",
    "reload",
    "sort_key",
    "token_messengers",
    "token_symbol",
    "tokens",
    "v1_domains",
    "v2_domains",
]


DEFAULT_DOMAINS: tuple[int, ...] = (0, 1, 2, 3, 6, 7)
"""The domains the interface lists by default (the six V1 EVM chains indexed)."""

_UNKNOWN = re.compile(r"^(domain|chain)-(\d+)$")


_LOCK = threading.RLock()
_STATE: RegistryIndex | None = None
_REGISTERED: dict[int, Chain] = {}  # register() calls of this process, by domain


def _state() -> RegistryIndex:
    """The registry, reading ``chains.toml`` at the first call of the process."""
    state = _STATE
    if state is not None:
        return state
    with _LOCK:
        if _STATE is None:
            _rebuild(chains_toml.file_chains(BUILTIN))
        return _STATE  # type: ignore[return-value]


_FILE_CHAINS: dict[int, Chain] = {}


def _rebuild(file_chains: dict[int, Chain]) -> None:
    global _STATE, _FILE_CHAINS
    merged = {c.domain: c for c in BUILTIN}
    merged.update(file_chains)
    merged.update(_REGISTERED)
    check_names(merged.values())
    _FILE_CHAINS = file_chains
    _STATE = RegistryIndex(merged.values())


def __getattr__(name: str) -> Any:
    if name == "CHAINS":
        return _state().chains
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


CHAINS: tuple[Chain, ...]
"""Every domain of the registry in domain order: Circle's published CCTP V1 and V2
domains plus any added by ``chains.toml`` or :func:`register` (read at access)."""


def register(chain: Chain | Mapping[str, Any]) -> Chain:
    """Add a CCTP domain to the registry, or amend one, for this process.

    Parameters
    ----------
    chain : Chain or mapping
        A :class:`Chain` (it replaces any entry of its domain) or a mapping of
        its fields, as in a ``[[chain]]`` table of ``chains.toml``: a mapping
        for a known domain keeps the fields it leaves out, and its
        ``contracts`` (``{2: {"token_messenger": "0x..."}}``) and ``tokens``
        (``{"USDC": "0x..."}``) extend the entry's. ``explorer`` (a base URL)
        may stand for ``explorer_address`` and ``explorer_tx``.

    Returns
    -------
    Chain
        The entry now in the registry.

    Raises
    ------
    TypeError, ValueError
        If a field is missing or malformed (the message names the key), or a
        name or alias already names another domain.

    Notes
    -----
    Other processes (the service, a second notebook) see a domain only
    through ``chains.toml``; :func:`reload` forgets what this function added.

    Examples
    --------
    >>> new = register({"domain": 90, "name": "example_chain", "chain_id": "909090",
    ...                 "tokens": {"USDC": "0x" + "ab" * 20}})
    >>> chain_name(90), domain_from_chain_id("909090"), token_symbol(90, "0x" + "AB" * 20)
    ('example_chain', 90, 'USDC')
    >>> reload()
    >>> chain_name(90)
    'domain-90'
    """
    if isinstance(chain, Chain):
        # a Chain replaces its domain's entry whole: check it as a mapping of every field
        table: Mapping[str, Any] = {
            f.name: getattr(chain, f.name) for f in fields(Chain)
            if not (f.name.startswith("explorer_") and not getattr(chain, f.name))
        }
        table = {**table, "contracts": dict(chain.contracts), "tokens": dict(chain.tokens)}
        whole = True
    elif isinstance(chain, Mapping):
        table, whole = chain, False
    else:
        raise TypeError(f"chain must be a Chain or a mapping of its fields (as in "
                        f"chains.toml), got {type(chain).__name__}")
    with _LOCK:
        entry = chain_from_mapping(table, {} if whole else _state().by_domain)
        previous = _REGISTERED.get(entry.domain)
        _REGISTERED[entry.domain] = entry
        try:
            _rebuild(_FILE_CHAINS)
        except ValueError:
            if previous is None:
                del _REGISTERED[entry.domain]
            else:
                _REGISTERED[entry.domain] = previous
            raise
    return entry


def reload() -> None:
    """Forget :func:`register` calls and read ``chains.toml`` again at the next look-up."""
    global _STATE
    with _LOCK:
        _REGISTERED.clear()
        _STATE = None


def config_file() -> str:
    """The path of the ``chains.toml`` this process reads (it may not exist).

    ``$CCTX_CONFIG_DIR/chains.toml``, else ``chains.toml`` in the platform's
    user configuration directory for ``cctx-research``.
    """
    return str(chains_toml.config_file())


def known_names() -> list[str]:
    """The canonical chain names, in domain order."""
    return [c.name for c in _state().chains]


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
    state = _state()
    keys = sorted(state.by_name)
    close = difflib.get_close_matches(name_key(value), keys, n=5, cutoff=0.6)
    names = list(dict.fromkeys(state.by_name[k].name for k in close))[:3]
    hint = " (did you mean " + " or ".join(map(repr, names)) + "?)" if names else ""
    return ValueError(
        f"unknown chain {value!r}{hint}; pass a domain id (an integer such as 6) or one of: "
        + ", ".join(f"{c.name} ({c.domain})" for c in state.chains)
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
    return _state().by_domain.get(domain(value))


def by_chain_id(value: str | int) -> Chain | None:
    """The registry entry of an EVM chain id (``"8453"`` or ``8453``), ``None`` if unknown.

    Examples
    --------
    >>> by_chain_id(59144).name, by_chain_id(9745).name
    ('linea', 'plasma')
    """
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise TypeError(f"an EVM chain id must be a str or int, got {type(value).__name__}")
    return _state().by_chain_id.get(str(value).strip())


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
    return [c.domain for c in _state().chains if c.in_v1]


def v2_domains() -> list[int]:
    """Domains with CCTP V2 contracts."""
    return [c.domain for c in _state().chains if c.in_v2]


def fast_source_domains() -> list[int]:
    """Domains from which V2 Fast Transfer is offered.

    Examples
    --------
    >>> [chain_name(d) for d in fast_source_domains()][:4]
    ['ethereum', 'optimism', 'arbitrum', 'solana']
    """
    return [c.domain for c in _state().chains if c.in_v2 and c.fast_source]


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
    >>> domain("OP Mainnet"), domain(" 7 "), domain("domain-42"), domain("X Layer")
    (2, 7, 42, 37)
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
    chain = _state().by_name.get(name_key(text))
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
    chain = _state().by_domain.get(d)
    return chain.name if chain else f"domain-{d}"


def chain_label(domain_id: int | str) -> str:
    """Human label of a domain (``"Arbitrum One"``), for plots and reports."""
    d = domain(domain_id)
    chain = _state().by_domain.get(d)
    return chain.label if chain else f"domain {d}"


def chain_id(domain_id: int | str) -> str:
    """The interface's chain identifier of a domain.

    EVM chains give their chain id as a string (``"8453"``); non-EVM chains
    give their name (``"solana"``), as the upstream indexer does; unknown
    domains give ``"domain-<id>"``.
    """
    d = domain(domain_id)
    chain = _state().by_domain.get(d)
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
    state = _state()
    chain = state.by_chain_id.get(text) or state.by_name.get(name_key(text))
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


# ---- contracts and tokens -----------------------------------------------------------------


def _address_key(address: Any, what: str) -> str:
    """The canonical spelling of an address given to a look-up (hex, or a chain's own format)."""
    if not isinstance(address, str):
        raise TypeError(f"{what} must be an address as a str, got {type(address).__name__}")
    found = canonical_address(address)
    if found is not None:
        return found
    from . import addressing  # imported here: addressing builds on this module

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
    return _state().contracts.get((domain(domain_id), version))


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
    return _state().messengers.get(domain(domain_id), frozenset())


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
    return _state().owners.get(_address_key(address, "address"), frozenset())


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
    return dict(_state().tokens.get(domain(domain_id), {}))


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
    return _state().symbols.get((domain(domain_id), _address_key(address, "token address")))
