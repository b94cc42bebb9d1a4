"""Block-explorer addresses of accounts and transactions, per chain.

Reports and widgets link an address or a transaction hash to the block
explorer of the chain it lives on: the destination chain for a mint or a
recipient, the source chain for a burn or a sender. A link is a plain
``<a href>``: nothing is loaded from the explorer until a reader clicks it.

A value gets a URL only when it is spelled the way that chain's explorer
expects (an EVM chain: ``0x`` + 40 hex for an account, ``0x`` + 64 hex for a
transaction; Solana: base58; Noble: ``noble1...`` bech32 and 64 hex). A
value in another spelling (a Solana account as bytes32 hex, say) and a chain
with no explorer in :data:`EXPLORERS` get ``None``: the caller shows the
plain text rather than a broken link.

Examples
--------
>>> address_url("base", "0x" + "AB" * 20)
'https://basescan.org/address/0xabababababababababababababababababababab'
>>> tx_url(3, "0x" + "0f" * 32)[:31]
'https://arbiscan.io/tx/0x0f0f0f'
>>> address_url("solana", "0x" + "ab" * 32) is None
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from . import chains

__all__ = ["EXPLORERS", "Explorer", "address_url", "tx_url"]

_EVM_ADDRESS = re.compile(r"^0x(?:0{24})?([0-9a-fA-F]{40})$")
_HEX64 = re.compile(r"^0x[0-9a-fA-F]{64}$")
_BASE58 = re.compile(r"^[1-9A-HJ-NP-Za-km-z]+$")
_NOBLE_ADDRESS = re.compile(r"^noble1[02-9ac-hj-np-z]{38,58}$")
_NOBLE_TX = re.compile(r"^(?:0x)?[0-9a-fA-F]{64}$")


@dataclass(frozen=True)
class Explorer:
    """URL templates of one chain's block explorer (``{}`` takes the value)."""

    address: str
    tx: str


def _evm(base: str) -> Explorer:
    return Explorer(f"{base}/address/{{}}", f"{base}/tx/{{}}")


EXPLORERS: dict[str, Explorer] = {
    "ethereum": _evm("https://etherscan.io"),
    "avalanche": _evm("https://snowtrace.io"),
    "optimism": _evm("https://optimistic.etherscan.io"),
    "arbitrum": _evm("https://arbiscan.io"),
    "noble": Explorer("https://www.mintscan.io/noble/address/{}", "https://www.mintscan.io/noble/tx/{}"),
    "solana": Explorer("https://solscan.io/account/{}", "https://solscan.io/tx/{}"),
    "base": _evm("https://basescan.org"),
    "polygon": _evm("https://polygonscan.com"),
    "sui": Explorer("https://suiscan.xyz/mainnet/account/{}", "https://suiscan.xyz/mainnet/tx/{}"),
    "aptos": Explorer(
        "https://explorer.aptoslabs.com/account/{}?network=mainnet",
        "https://explorer.aptoslabs.com/txn/{}?network=mainnet",
    ),
    "unichain": _evm("https://uniscan.xyz"),
    "linea": _evm("https://lineascan.build"),
    "sonic": _evm("https://sonicscan.org"),
    "world_chain": _evm("https://worldscan.org"),
}
"""Explorer of each chain, by canonical chain name (chains without one get no links)."""


def _chain(chain: Any) -> tuple[str, bool] | None:
    """Canonical name of ``chain`` and whether it is an EVM chain; None when unknown."""
    if chain is None or (isinstance(chain, float) and chain != chain):
        return None
    try:
        domain = chains.domain(str(chain) if not isinstance(chain, int) else chain)
    except (TypeError, ValueError):
        return None
    name = chains.chain_name(domain)
    evm = chains.chain_id(domain) != name  # non-EVM chains are identified by name
    return name, evm


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def address_url(chain: Any, address: Any) -> str | None:
    """The explorer URL of an account on ``chain``, or None (see the module docstring).

    Parameters
    ----------
    chain : str or int
        A chain name, alias or domain id.
    address : str
        As frames hold it; a bytes32-padded EVM address is shortened to 20 bytes.

    Returns
    -------
    str or None
    """
    found, text = _chain(chain), _text(address)
    if found is None or text is None or found[0] not in EXPLORERS:
        return None
    name, evm = found
    if evm:
        match = _EVM_ADDRESS.match(text)
        value = "0x" + match.group(1).lower() if match else None
    elif name == "solana":
        value = text if 32 <= len(text) <= 44 and _BASE58.match(text) else None
    elif name == "noble":
        value = text if _NOBLE_ADDRESS.match(text) else None
    else:  # Sui, Aptos: 0x + 64 hex
        value = text.lower() if _HEX64.match(text) else None
    return None if value is None else EXPLORERS[name].address.format(quote(value, safe=""))


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
    found, text = _chain(chain), _text(tx_hash)
    if found is None or text is None or found[0] not in EXPLORERS:
        return None
    name, evm = found
    if evm or name == "aptos":
        value = text.lower() if _HEX64.match(text) else None
    elif name in ("solana", "sui"):
        value = text if 32 <= len(text) <= 88 and _BASE58.match(text) else None
    elif name == "noble":
        value = text.removeprefix("0x").upper() if _NOBLE_TX.match(text) else None
    else:
        value = None
    return None if value is None else EXPLORERS[name].tx.format(quote(value, safe=""))
