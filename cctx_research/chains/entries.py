"""Registry entries: the :class:`Chain` and :class:`Contracts` records, checked.

:mod:`cctx_research.chains` keeps the registry and answers look-ups; this
module holds what an entry is and how one is made: the built-in entries
(from ``cctx_research.chains._table``) and :func:`chain_from_mapping`, the
one check behind :func:`cctx_research.chains.register` and ``chains.toml``.
Addresses are written in one canonical spelling (:func:`canonical_address`).

Examples
--------
>>> canonical_address("0x" + "00" * 12 + "AB" * 20) == "0x" + "ab" * 20
True
>>> chain_from_mapping({"domain": 90, "name": "example_chain"}, {}).label
'Example Chain'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from . import _table

__all__ = [
    "ADDRESS_FORMATS",
    "BUILTIN",
    "VERSIONS",
    "Chain",
    "Contracts",
    "RegistryIndex",
    "canonical_address",
    "chain_from_mapping",
    "check_names",
    "name_key",
    "spellings",
]

_HEX = re.compile(r"^0x[0-9a-f]+$")
_EVM_PAD = "0x" + "0" * 24


ADDRESS_FORMATS: tuple[str, ...] = ("aptos", "evm", "noble", "solana", "starknet", "stellar", "sui")
"""How each chain writes an address (see :mod:`cctx_research.addressing`)."""

VERSIONS: tuple[int, ...] = (1, 2)
"""The CCTP versions whose contracts the registry lists."""


@dataclass(frozen=True)
class Contracts:
    """The CCTP contracts of one domain and version, as lowercase ``0x`` hex.

    EVM contracts are 20-byte addresses (``0x`` + 40 digits); non-EVM programs
    and packages their 32-byte CCTP form (``0x`` + 64 digits). Where one
    program is both messenger and minter (Solana, Sui, Aptos, Starknet,
    Stellar) it fills both fields. ``None`` marks a contract the registry
    does not know.
    """

    token_messenger: str | None = None
    message_transmitter: str | None = None
    token_minter: str | None = None


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
    contracts : tuple of (int, Contracts)
        The CCTP contracts by version, e.g. ``((1, Contracts(...)), (2, ...))``.
    tokens : tuple of (str, str)
        The tokens the domain burns through CCTP: ``(symbol, address)`` pairs.
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
    contracts: tuple[tuple[int, Contracts], ...] = ()
    tokens: tuple[tuple[str, str], ...] = ()

    def address_url(self, address: str) -> str:
        """The explorer page of an address (given in the chain's own format)."""
        return self.explorer_address.format(address=address)

    def tx_url(self, tx_hash: str) -> str:
        """The explorer page of a transaction."""
        return self.explorer_tx.format(tx=tx_hash)


def _builtin_chain(row: tuple) -> Chain:
    d, name, label, cid, v1, v2, fast, fmt, explorer, aliases = row
    by_version: list[tuple[int, Contracts]] = []
    if d in _table.V1_CONTRACTS:
        by_version.append((1, Contracts(*_table.V1_CONTRACTS[d])))
    if d in _table.V2_CONTRACTS:
        by_version.append((2, Contracts(*_table.V2_CONTRACTS[d])))
    elif v2 and fmt == "evm" and d not in _table.V2_NO_CONTRACTS:
        by_version.append((2, Contracts(*_table.V2_COMMON)))
    return Chain(
        domain=d,
        name=name,
        label=label,
        chain_id=cid,
        in_v1=bool(v1),
        in_v2=bool(v2),
        fast_source=bool(fast),
        address_format=fmt,
        explorer_address=explorer + _table.EXPLORER_PATHS[fmt][0],
        explorer_tx=explorer + _table.EXPLORER_PATHS[fmt][1],
        aliases=aliases,
        contracts=tuple(by_version),
        tokens=tuple(_table.TOKENS.get(d, {}).items()),
    )


BUILTIN: tuple[Chain, ...] = tuple(_builtin_chain(row) for row in _table.DOMAINS)
"""The built-in registry: every domain Circle publishes for CCTP (see ``_table``)."""


def name_key(text: str) -> str:
    """The form names are compared in: lower case, runs of spaces and underscores as one space."""
    return re.sub(r"[\s_]+", " ", text.strip().lower())


def canonical_address(address: str) -> str | None:
    """Lowercase hex of a 20- or 32-byte address, ``None`` if not hex of either size.

    A 32-byte address that pads 20 bytes (12 zero bytes first) is cut to its
    20 bytes, so an EVM address compares equal in either wire spelling.
    """
    text = address.strip().lower()
    if not _HEX.match(text):
        return None
    if len(text) == 66 and text.startswith(_EVM_PAD):
        return "0x" + text[26:]
    return text if len(text) in (42, 66) else None


def spellings(address: str) -> tuple[str, ...]:
    """Both wire spellings of an address: 20-byte and padded 32-byte where it fits 20 bytes."""
    return (address, _EVM_PAD + address[2:]) if len(address) == 42 else (address,)


_NAME = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")
_SYMBOL = re.compile(r"^[A-Z][A-Z0-9.]{0,15}$")
_FIELDS = {f.name for f in fields(Chain)} | {"explorer"}
_CONTRACT_FIELDS = {f.name for f in fields(Contracts)}


def _flag(table: Mapping[str, Any], key: str, default: bool) -> bool:
    value = table.get(key, default)
    if not isinstance(value, bool):
        raise TypeError(f"{key!r} must be true or false, got {value!r}")
    return value


def _text(table: Mapping[str, Any], key: str, default: str) -> str:
    value = table.get(key, default)
    if not isinstance(value, str) or not value.strip():
        raise TypeError(f"{key!r} must be a non-empty string, got {value!r}")
    return value.strip()


def _address(value: Any, key: str, fmt: str) -> str:
    """Check and normalise one address of a chain written in ``fmt``."""
    found = canonical_address(value) if isinstance(value, str) else None
    if found is None:
        want = "0x + 40 hex digits" if fmt == "evm" else "0x + 64 hex digits (its 32-byte form)"
        raise ValueError(f"{key!r} must be an address written as {want}, got {value!r}")
    if fmt == "evm" and len(found) != 42:
        raise ValueError(f"{key!r} must be a 20-byte EVM address (0x + 40 hex digits), "
                         f"got {value!r}")
    return found if fmt == "evm" else _EVM_PAD + found[2:] if len(found) == 42 else found


def _version(value: Any) -> int:
    text = str(value).strip().lower().removeprefix("v")
    if isinstance(value, bool) or not text.isdigit() or int(text) not in VERSIONS:
        raise ValueError(f"'contracts' keys must be CCTP versions {VERSIONS} "
                         f"(1, 2, 'v1' or 'v2'), got {value!r}")
    return int(text)


def _contracts(value: Any, fmt: str, base: tuple) -> tuple[tuple[int, Contracts], ...]:
    if not isinstance(value, Mapping):
        raise TypeError("'contracts' must map a version (1 or 2) to a table of "
                        f"token_messenger / message_transmitter / token_minter, got {value!r}")
    merged = dict(base)
    for version, table in value.items():
        number = _version(version)
        if isinstance(table, Contracts):
            table = {f: getattr(table, f) for f in _CONTRACT_FIELDS}
        if not isinstance(table, Mapping):
            raise TypeError(f"'contracts.v{number}' must be a table, got {table!r}")
        unknown = sorted(set(table) - _CONTRACT_FIELDS)
        if unknown:
            raise ValueError(f"'contracts.v{number}' has unknown key {unknown[0]!r}; "
                             f"use {sorted(_CONTRACT_FIELDS)}")
        merged[number] = Contracts(**{
            k: None if table.get(k) is None else _address(table[k], f"contracts.v{number}.{k}", fmt)
            for k in sorted(_CONTRACT_FIELDS)
        })
    return tuple(sorted(merged.items()))


def _tokens(value: Any, fmt: str, base: tuple) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, Mapping):
        raise TypeError(f"'tokens' must map a symbol (USDC) to an address, got {value!r}")
    merged = dict(base)
    for symbol, address in value.items():
        if not isinstance(symbol, str) or not _SYMBOL.match(symbol):
            raise ValueError(f"'tokens' keys must be upper-case symbols such as 'USDC', "
                             f"got {symbol!r}")
        merged[symbol] = _address(address, f"tokens.{symbol}", fmt)
    return tuple(merged.items())


def chain_from_mapping(table: Mapping[str, Any], known: Mapping[int, Chain]) -> Chain:
    """A validated :class:`Chain` from a mapping; fields left out keep ``known``'s entry."""
    unknown = sorted(set(table) - _FIELDS)
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r}; the keys of a chain are "
                         f"{sorted(_FIELDS)}")
    d = table.get("domain")
    if isinstance(d, bool) or not isinstance(d, int) or d < 0:
        raise ValueError(f"'domain' must be a non-negative integer, got {d!r}")
    base = known.get(d)
    if base is None and "name" not in table:
        raise ValueError(f"'name' is required for domain {d}, which the registry does not know")
    fmt = table.get("address_format", base.address_format if base else "evm")
    if fmt not in ADDRESS_FORMATS:
        raise ValueError(f"'address_format' must be one of {ADDRESS_FORMATS}, got {fmt!r}")
    name = _text(table, "name", base.name if base else "")
    if not _NAME.match(name):
        raise ValueError(f"'name' must be snake_case (lower-case letters, digits, single "
                         f"underscores, a letter first), got {name!r}")
    chain_id = table.get("chain_id", base.chain_id if base else None)
    if isinstance(chain_id, int) and not isinstance(chain_id, bool):
        chain_id = str(chain_id)
    if chain_id is not None and (not isinstance(chain_id, str) or not chain_id.isdigit()):
        raise ValueError(f"'chain_id' must be an EVM chain id (digits, e.g. '8453') or absent, "
                         f"got {chain_id!r}")
    aliases = table.get("aliases", base.aliases if base else ())
    if isinstance(aliases, str) or not all(isinstance(a, str) and a.strip() for a in aliases):
        raise TypeError(f"'aliases' must be a list of names, got {aliases!r}")
    explorer_address = base.explorer_address if base else ""
    explorer_tx = base.explorer_tx if base else ""
    if "explorer" in table:
        root = _text(table, "explorer", "").rstrip("/")
        if not root.startswith(("https://", "http://")):
            raise ValueError(f"'explorer' must be an http(s) URL, got {root!r}")
        explorer_address = root + _table.EXPLORER_PATHS[fmt][0]
        explorer_tx = root + _table.EXPLORER_PATHS[fmt][1]
    explorer_address = _text(table, "explorer_address", explorer_address or "-")
    explorer_tx = _text(table, "explorer_tx", explorer_tx or "-")
    if explorer_address != "-" and "{address}" not in explorer_address:
        raise ValueError(f"'explorer_address' must hold '{{address}}', got {explorer_address!r}")
    if explorer_tx != "-" and "{tx}" not in explorer_tx:
        raise ValueError(f"'explorer_tx' must hold '{{tx}}', got {explorer_tx!r}")
    same_format = base is not None and base.address_format == fmt
    return Chain(
        domain=d,
        name=name,
        label=_text(table, "label", base.label if base else name.replace("_", " ").title()),
        chain_id=chain_id,
        in_v1=_flag(table, "in_v1", base.in_v1 if base else False),
        in_v2=_flag(table, "in_v2", base.in_v2 if base else True),
        fast_source=_flag(table, "fast_source", base.fast_source if base else False),
        address_format=fmt,
        explorer_address="" if explorer_address == "-" else explorer_address,
        explorer_tx="" if explorer_tx == "-" else explorer_tx,
        aliases=tuple(a.strip() for a in aliases),
        contracts=_contracts(table.get("contracts", {}), fmt,
                             base.contracts if same_format else ()),
        tokens=_tokens(table.get("tokens", {}), fmt, base.tokens if same_format else ()),
    )


def check_names(entries: Iterable[Chain]) -> None:
    """Raise when a name, label or alias names two domains."""
    seen: dict[str, int] = {}
    for c in sorted(entries, key=lambda e: e.domain):
        for alias in {name_key(a) for a in (c.name, c.label, *c.aliases)}:
            other = seen.setdefault(alias, c.domain)
            if other != c.domain:
                raise ValueError(f"the name {alias!r} of domain {c.domain} already names "
                                 f"domain {other}; give domain {c.domain} another name or alias")


def _same(address: str) -> str:
    """The canonical spelling of an address the registry holds (checked on the way in)."""
    return canonical_address(address) or address


class RegistryIndex:
    """Every look-up table of one registry state, built once per change (never per look-up)."""

    def __init__(self, entries: Iterable[Chain]) -> None:
        self.chains: tuple[Chain, ...] = tuple(sorted(entries, key=lambda c: c.domain))
        self.by_domain = {c.domain: c for c in self.chains}
        self.by_chain_id = {c.chain_id: c for c in self.chains if c.chain_id is not None}
        self.by_name: dict[str, Chain] = {}
        for c in self.chains:
            for alias in (c.name, c.label, *c.aliases):
                self.by_name.setdefault(name_key(alias), c)
        self.contracts: dict[tuple[int, int], Contracts] = {}
        self.messengers: dict[int, frozenset[str]] = {}
        owners: dict[str, set[int]] = {}
        self.tokens: dict[int, dict[str, str]] = {}
        self.symbols: dict[tuple[int, str], str] = {}
        for c in self.chains:
            spelled: set[str] = set()
            for version, found in c.contracts:
                self.contracts[(c.domain, version)] = found
                for address in (found.token_messenger, found.message_transmitter,
                                found.token_minter):
                    if address is not None:
                        owners.setdefault(_same(address), set()).add(c.domain)
                if found.token_messenger is not None:
                    spelled.update(spellings(_same(found.token_messenger)))
            self.messengers[c.domain] = frozenset(spelled)
            self.tokens[c.domain] = dict(c.tokens)
            for symbol, address in c.tokens:
                self.symbols[(c.domain, _same(address))] = symbol
        self.owners = {a: frozenset(d) for a, d in owners.items()}
