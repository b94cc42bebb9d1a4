"""A local Solana JSON-RPC node for the sync tests (:mod:`.standin`), served over loopback HTTP.

:class:`Node` serves a :class:`~.standin.SolanaStandin` with the service's
own server (``cctx_research.service.server.start_in_background``, waitress)
on a free loopback port, under a URL whose path stands for a provider's key
(the sync must never show or store it).
"""

from __future__ import annotations

from typing import Any

from cctx_research.ingest.solana.base58 import decode_many
from cctx_research.service.server import start_in_background

from .standin import FIXTURES, MAINNET_GENESIS, PUBLIC_429, SolanaStandin, recorded

__all__ = ["FIXTURES", "KEY", "MAINNET_GENESIS", "PUBLIC_429", "Node", "SolanaStandin",
           "receive_message", "recorded"]  # fmt: skip

KEY = "SOLANA-SECRET-KEY-42"


class Node:
    """A stand-in served on loopback; a context manager with :attr:`url` and :attr:`standin`."""

    def __init__(self, standin: SolanaStandin | None = None) -> None:
        self.standin = standin if standin is not None else SolanaStandin()
        self._handle = start_in_background(self.standin)
        self.url = f"{self._handle.url.rstrip('/')}/{KEY}"

    def __enter__(self) -> Node:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self._handle.close()


def receive_message(result: dict[str, Any]) -> bytes:
    """The CCTP message a Wormhole ``prepare_order_response_cctp`` instruction carries.

    The recorded receive ``3VXJGF7X...`` (``v1_receive_from_arbitrum.json``)
    starts with that instruction; its data is the 8-byte discriminator, then
    the message as a Borsh ``Vec<u8>`` (a u32 length, the bytes). It is the
    real Arbitrum -> Solana message of nonce 290001.
    """
    buffer, starts, lengths, ok = decode_many(
        [result["transaction"]["message"]["instructions"][0]["data"]])
    assert ok[0]
    data = bytes(buffer[starts[0] : starts[0] + lengths[0]])
    size = int.from_bytes(data[8:12], "little")
    return data[12 : 12 + size]
