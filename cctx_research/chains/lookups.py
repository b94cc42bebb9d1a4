"""Look-ups of the registry: domain ids, names, labels and the interface's chain ids.

Forgiving on input (``"base"``, ``"Base"``, ``6``, ``"6"``, ``"Base Mainnet"``)
and carrying unknown values through (``"domain-<id>"``, ``"chain-<id>"``).
Numbers are domain ids; where a chain is asked (:func:`domain`, :func:`info`,
:func:`domains`), a number that is no domain but a registered chain's EVM
chain id (``8453``) is refused with the chain it names, never read as an
empty unknown domain. The name look-ups (:func:`chain_name`,
:func:`chain_label`, :func:`chain_id`) carry any number through, as the
domains of data are.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from .entries import Chain, name_key
from .registry import state

__all__ = [
    "address_format",
    "all_domains",
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

_UNKNOWN = re.compile(r"^(domain|chain)-(\d+)$")


def known_names() -> list[str]:
    """The canonical chain names, in domain order."""
    return [c.name for c in state().chains]


def all_domains() -> list[int]:
    """Every domain of the registry (built in, and added by ``chains.toml``), in order.

    What "no chain filter" means throughout the toolkit. The interface's own
    default, when a request names no domains, is narrower
    (:data:`cctx_research.chains.DEFAULT_DOMAINS`): the client always names them.
    """
    return sorted(c.domain for c in state().chains)


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
    index = state()
    keys = sorted(index.by_name)
    close = difflib.get_close_matches(name_key(value), keys, n=5, cutoff=0.6)
    names = list(dict.fromkeys(index.by_name[k].name for k in close))[:3]
    hint = " (did you mean " + " or ".join(map(repr, names)) + "?)" if names else ""
    return ValueError(
        f"unknown chain {value!r}{hint}; pass a domain id (an integer such as 6) or one of: "
        + ", ".join(f"{c.name} ({c.domain})" for c in index.chains)
    )


def info(value: int | str) -> Chain:
    """The registry entry of a chain.

    Parameters
    ----------
    value : int or str
        Anything :func:`domain` accepts: a domain id, a name, an alias or a
        label, in any case.

    Raises
    ------
    ValueError
        If ``value`` names no chain of the registry: a name that matches none,
        a domain id it does not hold, or an EVM chain id (``8453``) where a
        domain is asked (the message names the chain and its domain).

    Examples
    --------
    >>> info("sol").address_format, info("Linea").in_v1, info("base").fast_source
    ('solana', False, True)
    >>> info(8453)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: 8453 is not a CCTP domain id but the EVM chain id of Base (domain 6): ...
    """
    chain = state().by_domain.get(domain(value))
    if chain is None:
        raise ValueError(
            f"no chain of domain {domain(value)} in the registry (it holds domains "
            f"{_domain_list()}); pass one of them or a name such as 'base', or add the "
            "domain with chains.register() or chains.toml"
        )
    return chain


def _domain_list() -> str:
    return ", ".join(str(c.domain) for c in state().chains)


def _entry(value: int | str) -> Chain | None:
    """The registry entry of ``value``, ``None`` for a domain id the registry does not hold."""
    return state().by_domain.get(domain(value))


def by_chain_id(value: str | int) -> Chain | None:
    """The registry entry of an EVM chain id (``"8453"`` or ``8453``), ``None`` if unknown.

    Examples
    --------
    >>> by_chain_id(59144).name, by_chain_id(9745).name
    ('linea', 'plasma')
    """
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise TypeError(f"an EVM chain id must be a str or int, got {type(value).__name__}")
    return state().by_chain_id.get(str(value).strip())


def address_format(value: int | str) -> str | None:
    """How a chain writes addresses (``"evm"``, ``"solana"``, ...), ``None`` if unknown.

    Examples
    --------
    >>> address_format("noble"), address_format(8), address_format(42)
    ('noble', 'sui', None)
    """
    chain = _entry(value)
    return chain.address_format if chain is not None else None


def v1_domains() -> list[int]:
    """Domains with CCTP V1 contracts."""
    return [c.domain for c in state().chains if c.in_v1]


def v2_domains() -> list[int]:
    """Domains with CCTP V2 contracts."""
    return [c.domain for c in state().chains if c.in_v2]


def fast_source_domains() -> list[int]:
    """Domains from which V2 Fast Transfer is offered.

    Examples
    --------
    >>> [chain_name(d) for d in fast_source_domains()][:4]
    ['ethereum', 'optimism', 'arbitrum', 'solana']
    """
    return [c.domain for c in state().chains if c.in_v2 and c.fast_source]


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
        If ``value`` names no chain (the message lists the valid names), or
        is a number the registry holds no domain of but knows as an EVM chain
        id (``8453``: the message names the chain and its domain). Other
        unknown numbers are carried through as domains.

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
        return _not_a_chain_id(value)
    text = value.strip()
    if text.isdigit():
        return _not_a_chain_id(int(text))
    match = _UNKNOWN.match(text.lower())
    if match and match.group(1) == "domain":
        return int(match.group(2))
    chain = state().by_name.get(name_key(text))
    if chain is None:
        raise _unknown_name(value)
    return chain.domain


def _not_a_chain_id(number: int) -> int:
    """``number`` as a domain id, refused when it is no domain but a known EVM chain id.

    Numbers name domains. One the registry holds no domain of but knows as an
    EVM chain id (``8453``) is what a user writes meaning the chain, and
    reading it as an unknown domain would select nothing without a word.
    Chain ids are not read as chains: some are also domains (10 is OP
    Mainnet's chain id and Unichain's domain), and a rule that held for some
    numbers only would mislead on the others.
    """
    index = state()
    if number in index.by_domain:
        return number
    chain = index.by_chain_id.get(str(number))
    if chain is not None:
        raise ValueError(
            f"{number} is not a CCTP domain id but the EVM chain id of {chain.label} "
            f"(domain {chain.domain}): pass {chain.domain} or {chain.name!r} "
            f"(chains.by_chain_id({number}) looks chain ids up)"
        )
    return number


def _lenient(value: int | str) -> int:
    """The domain of ``value`` for the name look-ups, which carry any number through."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return domain(value)


def domains(values: int | str | Iterable[int | str] | None) -> list[int] | None:
    """Normalise one chain or a list of chains to sorted unique domain ids.

    ``None`` stays ``None`` (meaning: every chain, :func:`all_domains`).

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
    d = _lenient(domain_id)
    chain = state().by_domain.get(d)
    return chain.name if chain else f"domain-{d}"


def chain_label(domain_id: int | str) -> str:
    """Human label of a domain (``"Arbitrum One"``), for plots and reports."""
    d = _lenient(domain_id)
    chain = state().by_domain.get(d)
    return chain.label if chain else f"domain {d}"


def chain_id(domain_id: int | str) -> str:
    """The interface's chain identifier of a domain.

    EVM chains give their chain id as a string (``"8453"``); non-EVM chains
    give their name (``"solana"``), as the upstream indexer does; unknown
    domains give ``"domain-<id>"``.
    """
    d = _lenient(domain_id)
    chain = state().by_domain.get(d)
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
    index = state()
    chain = index.by_chain_id.get(text) or index.by_name.get(name_key(text))
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

