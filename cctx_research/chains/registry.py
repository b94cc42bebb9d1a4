"""The registry of this process: the built-in table, ``chains.toml`` and :func:`register`.

The registry is read once, at the first look-up (:func:`state`), and rebuilt
under one lock when :func:`register` amends it or :func:`reload` forgets it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from . import toml_file
from .entries import BUILTIN, Chain, RegistryIndex, chain_from_mapping, check_names

__all__ = ["config_file", "register", "reload", "state"]

_LOCK = threading.RLock()
_STATE: RegistryIndex | None = None
_REGISTERED: dict[int, Chain] = {}  # register() calls of this process, by domain


def state() -> RegistryIndex:
    """The registry, reading ``chains.toml`` at the first call of the process."""
    state = _STATE
    if state is not None:
        return state
    with _LOCK:
        if _STATE is None:
            _rebuild(toml_file.file_chains(BUILTIN))
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
    >>> from cctx_research import chains
    >>> new = register({"domain": 90, "name": "example_chain", "chain_id": "909090",
    ...                 "tokens": {"USDC": "0x" + "ab" * 20}})
    >>> chains.chain_name(90), chains.domain_from_chain_id("909090")
    ('example_chain', 90)
    >>> chains.token_symbol(90, "0x" + "AB" * 20)
    'USDC'
    >>> reload()
    >>> chains.chain_name(90)
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
        entry = chain_from_mapping(table, {} if whole else state().by_domain)
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
    return str(toml_file.config_file())

