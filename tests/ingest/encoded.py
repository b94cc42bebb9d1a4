"""CCTP logs as a node returns them, encoded with eth-abi from the published signatures."""

from __future__ import annotations

from typing import Any

from eth_abi import encode
from eth_hash.auto import keccak

TM_V1_ETH = "0xbd3fa81b58ba92a82136038b25adec7066af3155"
MT_V1_BASE = "0xad09780d193884d503182ad4588450c416d6f9d4"
TM_V1_BASE = "0x1682ae6375c4e4a97e4b583bc394c861a46d8962"
TM_V2 = "0x28b5a0e9c621a5badaa536219b3a228c8168cf5d"
USDC_ETH = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"
USDC_BASE = "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"

DEPOSIT_V1 = (
    "DepositForBurn(uint64,address,uint256,address,bytes32,uint32,bytes32,bytes32)"
)
DEPOSIT_V2 = (
    "DepositForBurn(address,uint256,address,bytes32,uint32,bytes32,bytes32,uint256,uint32,bytes)"
)
MINT_V1 = "MintAndWithdraw(address,uint256,address)"
RECEIVED_V1 = "MessageReceived(address,uint32,uint64,bytes32,bytes)"
TRANSFER = "Transfer(address,address,uint256)"


def topic(signature: str) -> str:
    return "0x" + keccak(signature.encode()).hex()


def word(value: int | str) -> str:
    """A 32-byte topic of an integer or an address."""
    number = int(value, 16) if isinstance(value, str) else value
    return "0x" + number.to_bytes(32, "big").hex()


def pad(address: str) -> bytes:
    return bytes(12) + bytes.fromhex(address[2:])


def log(
    address: str, topics: list[str], data: bytes, *, block: int, tx: str, index: int, time: int
) -> dict[str, Any]:
    return {
        "address": address,
        "topics": topics,
        "data": "0x" + data.hex(),
        "blockNumber": hex(block),
        "blockHash": "0x" + "ab" * 32,
        "blockTimestamp": hex(time),
        "transactionHash": tx,
        "transactionIndex": "0x1",
        "logIndex": hex(index),
        "removed": False,
    }


def deposit_v1(nonce: int, amount: int, sender: str, recipient: str, dst: int, **where) -> dict:
    data = encode(
        ["uint256", "bytes32", "uint32", "bytes32", "bytes32"],
        [amount, pad(recipient), dst, pad(TM_V1_BASE), bytes(32)],
    )
    topics = [topic(DEPOSIT_V1), word(nonce), word(USDC_ETH), word(sender)]
    return log(TM_V1_ETH, topics, data, **where)


def deposit_v2(amount: int, sender: str, recipient: str, dst: int, max_fee: int, **where) -> dict:
    data = encode(
        ["uint256", "bytes32", "uint32", "bytes32", "bytes32", "uint256", "bytes"],
        [amount, pad(recipient), dst, pad(TM_V2), bytes(32), max_fee, b"\x01\x02"],
    )
    topics = [topic(DEPOSIT_V2), word(USDC_BASE), word(sender), word(1000)]
    return log(TM_V2, topics, data, **where)


def burn_body_v1(amount: int, sender: str, recipient: str) -> bytes:
    """The V1 BurnMessage: version, burnToken, mintRecipient, amount, messageSender (packed)."""
    return (
        (0).to_bytes(4, "big")
        + pad(USDC_ETH)
        + pad(recipient)
        + amount.to_bytes(32, "big")
        + pad(sender)
    )


def received_v1(src: int, nonce: int, body: bytes, **where) -> dict:
    data = encode(["uint32", "bytes32", "bytes"], [src, pad(TM_V1_ETH), body])
    topics = [topic(RECEIVED_V1), word("0x" + "c0" * 20), word(nonce)]
    return log(MT_V1_BASE, topics, data, **where)


def mint_v1(recipient: str, amount: int, **where) -> dict:
    data = encode(["uint256"], [amount])
    return log(TM_V1_BASE, [topic(MINT_V1), word(recipient), word(USDC_BASE)], data, **where)


def transfer(**where) -> dict:
    data = encode(["uint256"], [5])
    return log(USDC_BASE, [topic(TRANSFER), word(1), word(2)], data, **where)
