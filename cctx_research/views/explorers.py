"""Block-explorer pages of accounts and transactions, per chain.

Reports and widgets link an address or a transaction hash to the block
explorer of the chain it lives on: the destination chain for a mint or a
recipient, the source chain for a burn or a sender. A link is a plain
``<a href>``: nothing is loaded from the explorer until a reader clicks it.

The URL templates are the chain registry's (``Chain.explorer_address`` /
``explorer_tx`` in :mod:`cctx_research.chains`); the value is first spelled
the way that chain writes it (:mod:`cctx_research.addressing`: a Solana
account given in the interface's bytes32 form becomes base58). A value that
fits no format of the chain, and a chain the registry does not know or that
has no explorer, get ``None``: the caller shows the plain text rather than a
broken link.

Examples
--------
>>> address_url("base", "0x" + "AB" * 20)
'https://basescan.org/address/0xabababababababababababababababababababab'
>>> tx_url(3, "0x" + "0f" * 32)[:31]
'https://arbiscan.io/tx/0x0f0f0f'
>>> address_url("solana", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
'https://solscan.io/account/EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v'
>>> address_url("base", "not an address") is None, address_url("domain-99", "0x" + "ab" * 20)
(True, None)
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from .. import addressing, chains

__all__ = ["address_url", "tx_url"]


def _chain(chain: Any) -> chains.Chain | None:
    if chain is None or (isinstance(chain, float) and chain != chain):
        return None
    try:
        return chains.info(chain if isinstance(chain, (int, str)) else str(chain))
    except (TypeError, ValueError):
        return None


def address_url(chain: Any, address: Any) -> str | None:
    """The explorer URL of an account on ``chain``, or None (see the module docstring).

    Parameters
    ----------
    chain : str or int
        A chain name, alias or domain id.
    address : str
        In the chain's own format or the interface's bytes32 form.

    Returns
    -------
    str or None
    """
    entry = _chain(chain)
    if entry is None or not entry.explorer_address or not isinstance(address, str):
        return None
    try:
        spelled = addressing.normalize_address(address, chain=entry.domain)
    except ValueError:
        return None
    return entry.address_url(quote(spelled, safe=""))


def tx_url(chain: Any, tx_hash: Any) -> str | None:
    """The explorer URL of a transaction on ``chain``, or None (see the module docstring).

    Parameters
    ----------
    chain : str or int
        A chain name, alias or domain id: the chain the transaction ran on.
    tx_hash : str

    Returns
    -------
    str or None
    """
    entry = _chain(chain)
    if entry is None or not entry.explorer_tx or not isinstance(tx_hash, str):
        return None
    try:
        spelled = addressing.normalize_hash(tx_hash, entry.domain)
    except ValueError:
        return None
    return entry.tx_url(quote(spelled, safe=""))
