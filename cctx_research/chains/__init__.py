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
:mod:`cctx_research.chains.toml_file`) does it for every process (``load``, the
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
are listed in ``cctx_research.chains._table`` and in the project's CCTP
reference.

The package's modules: :mod:`~cctx_research.chains.entries` (the entry records
and their checks), :mod:`~cctx_research.chains._table` (the built-in data),
:mod:`~cctx_research.chains.toml_file` (reading ``chains.toml``),
:mod:`~cctx_research.chains.registry` (the process's registry, :func:`register`),
:mod:`~cctx_research.chains.lookups` (names, ids and domains) and
:mod:`~cctx_research.chains.addresses` (contracts and tokens by address).
"""

from __future__ import annotations

from typing import Any

from .addresses import contract_domains, contracts, token_messengers, token_symbol, tokens
from .entries import ADDRESS_FORMATS, Chain, Contracts
from .lookups import (
    address_format,
    all_domains,
    by_chain_id,
    chain_id,
    chain_label,
    chain_name,
    domain,
    domain_from_chain_id,
    domains,
    fast_source_domains,
    in_order,
    info,
    known_names,
    name_from_chain_id,
    sort_key,
    v1_domains,
    v2_domains,
)
from .registry import config_file, register, reload
from .registry import state as _registry_state

__all__ = [
    "ADDRESS_FORMATS",
    "CHAINS",
    "DEFAULT_DOMAINS",
    "Chain",
    "Contracts",
    "address_format",
    "all_domains",
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
"""The domains the interface lists when a request names none (the six V1 EVM chains indexed).

Only the HTTP interface's default: in the toolkit, no chain filter means every
chain (:func:`all_domains`), and the client names them all in its requests.
"""


def __getattr__(name: str) -> Any:
    if name == "CHAINS":
        return _registry_state().chains
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


CHAINS: tuple[Chain, ...]
"""Every domain of the registry in domain order: Circle's published CCTP V1 and V2
domains plus any added by ``chains.toml`` or :func:`register` (read at access)."""
