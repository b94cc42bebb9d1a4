"""Real CCTP messages (tests/fixtures/cctp_real) rebuilt into the logs Circle's contracts emit.

The messages are real: bytes recorded in public sources, each cited in
``tests/fixtures/cctp_real/README.md`` and beside its entry. The logs around
them follow Circle's contracts (circlefin/evm-cctp-contracts):

- source transaction: the MessageTransmitter emits ``MessageSent(message)``
  and the TokenMessenger then ``DepositForBurn(...)`` with the burn's fields
  (``src/TokenMessenger.sol`` ``_depositForBurn``; V2 ``TokenMessengerV2``).
  A V2 message is emitted with its nonce, ``finalityThresholdExecuted``,
  ``feeExecuted`` and ``expirationBlock`` zero (``MessageV2``/``BurnMessageV2``:
  Circle's attestation fills them in), so the sent form is the attested
  message with those fields zeroed.
- destination transaction: the TokenMessenger mints and emits
  ``MintAndWithdraw(mintRecipient, amount - fee, mintToken, fee)``, then the
  transmitter emits ``MessageReceived(caller, sourceDomain, nonce, sender,
  [finalityThresholdExecuted,] messageBody)`` (``receiveMessage``).

What a fixture had to fill in, since the sources give messages, not logs:
block numbers, log indexes, times, the relayer (``caller``) and, where the
source gives none, transaction hashes. Every field of the events comes from
the message. Messages are sliced here by the layouts of ``Message.sol`` and
``MessageV2.sol`` on their own, not by the package's decoder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eth_utils import keccak

from .logs import SIGNATURES, encode_event

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "cctp_real"

# Circle's mainnet contracts ("CCTP EVM contracts" pages; V2 is one CREATE2 address everywhere)
V2_MESSENGER = "0x28b5a0e9c621a5badaa536219b3a228c8168cf5d"
V2_TRANSMITTER = "0x81d40f21f12a8f0e3252bccb954d722d4c464b64"
V1 = {  # domain -> (TokenMessenger, MessageTransmitter)
    0: ("0xbd3fa81b58ba92a82136038b25adec7066af3155", "0x0a992d191deec32afe36203ad87d7d289a738f81"),
    3: ("0x19330d10d9cc8751218eaf51e8885d058642e08a", "0xc30362313fbba5cf9163f0bb16a0e01f01a896ca"),
    6: ("0x1682ae6375c4e4a97e4b583bc394c861a46d8962", "0xad09780d193884d503182ad4588450c416d6f9d4"),
}
USDC = {  # domain -> USDC (Circle, "USDC contract addresses")
    0: "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48",
    2: "0x0b2c639c533813f4aa9d7837caf62653d097ff85",
    3: "0xaf88d065e77c8cc2239327c5edb3a432268e5831",
    6: "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913",
}
RELAYER = "0x" + "5e" * 20  # filled in: the sources do not say who relayed


def entries(name: str) -> dict[str, dict[str, Any]]:
    """The entries of one fixture file by id."""
    doc = json.loads((REAL / name).read_text())
    return {e["id"]: e for e in doc["entries"]}


def message(entry_id: str) -> Message:
    for name in ("v2_messages.json", "v1_messages.json", "generic_messages.json"):
        found = entries(name).get(entry_id)
        if found:
            return Message(bytes.fromhex(found["message_hex"][2:]), found)
    raise KeyError(entry_id)


@dataclass
class Message:
    """One real message and its fields, by the layouts of Message.sol / MessageV2.sol."""

    raw: bytes
    entry: dict[str, Any]

    @property
    def v2(self) -> bool:
        return int.from_bytes(self.raw[0:4], "big") == 1

    def _u(self, lo: int, hi: int) -> int:
        return int.from_bytes(self.raw[lo:hi], "big")

    @property
    def header_size(self) -> int:
        return 148 if self.v2 else 116

    @property
    def source_domain(self) -> int:
        return self._u(4, 8)

    @property
    def destination_domain(self) -> int:
        return self._u(8, 12)

    @property
    def nonce(self) -> int | bytes:
        return self.raw[12:44] if self.v2 else self._u(12, 20)

    def word(self, name: str) -> bytes:
        offsets = (
            {"sender": 44, "recipient": 76, "destination_caller": 108}
            if self.v2
            else {"sender": 20, "recipient": 52, "destination_caller": 84}
        )
        return self.raw[offsets[name] : offsets[name] + 32]

    @property
    def min_finality(self) -> int:
        return self._u(140, 144)

    @property
    def finality_executed(self) -> int:
        return self._u(144, 148)

    @property
    def body(self) -> bytes:
        return self.raw[self.header_size :]

    def body_word(self, offset: int) -> bytes:
        return self.body[offset : offset + 32]

    def body_uint(self, offset: int) -> int:
        return int.from_bytes(self.body_word(offset), "big")

    @property
    def amount(self) -> int:
        return self.body_uint(68)

    @property
    def fee_executed(self) -> int:
        return self.body_uint(164) if self.v2 else 0

    def address(self, word: bytes) -> str:
        return "0x" + word[12:].hex()

    def sent_form(self) -> bytes:
        """The message as MessageSent emits it: V2 nonce and executed fields zero."""
        if not self.v2:
            return self.raw
        raw = bytearray(self.raw)
        raw[12:44] = bytes(32)
        raw[144:148] = bytes(4)
        body = self.header_size
        raw[body + 164 : body + 228] = bytes(64)
        return bytes(raw)


def tx(label: str) -> str:
    """A transaction hash where the source gives none (filled in, derived from a label)."""
    return "0x" + keccak(text=label).hex()


def log(event: str, version: int, values: dict[str, Any], *, address: str, block: int,
        tx_hash: str, index: int, time: int) -> dict[str, Any]:
    topics, data = encode_event(SIGNATURES[(event, version)], values)
    return {
        "address": address,
        "topics": topics,
        "data": data,
        "blockNumber": hex(block),
        "blockTimestamp": hex(time),
        "transactionHash": tx_hash,
        "transactionIndex": "0x1",
        "logIndex": hex(index),
        "removed": False,
    }


def burn_logs(m: Message, *, block: int, tx_hash: str, index: int, time: int,
              deposit: bool = True, sent: bool = True) -> list[dict[str, Any]]:
    """MessageSent then DepositForBurn of a burn message, as the source chain emits them."""
    version = 2 if m.v2 else 1
    messenger, transmitter = (
        (V2_MESSENGER, V2_TRANSMITTER) if m.v2 else V1[m.source_domain]
    )
    out = []
    where = {"block": block, "tx_hash": tx_hash, "time": time}
    if sent:
        out.append(log("MessageSent", version, {"message": m.sent_form()},
                       address=transmitter, index=index, **where))
    if deposit:
        values: dict[str, Any] = {
            "burnToken": m.address(m.body_word(4)),
            "amount": m.amount,
            "depositor": m.address(m.body_word(100)),
            "mintRecipient": m.body_word(36),
            "destinationDomain": m.destination_domain,
            "destinationTokenMessenger": m.word("recipient"),
            "destinationCaller": m.word("destination_caller"),
        }
        if m.v2:
            values.update(maxFee=m.body_uint(132), minFinalityThreshold=m.min_finality,
                          hookData=m.body[228:])
        else:
            values["nonce"] = m.nonce
        out.append(log("DepositForBurn", version, values, address=messenger,
                       index=index + 1, **where))
    return out


def mint_logs(m: Message, *, block: int, tx_hash: str, index: int, time: int,
              mint: bool = True, caller: str = RELAYER) -> list[dict[str, Any]]:
    """MintAndWithdraw then MessageReceived of an attested message, on its destination."""
    version = 2 if m.v2 else 1
    messenger, transmitter = (
        (V2_MESSENGER, V2_TRANSMITTER) if m.v2 else V1[m.destination_domain]
    )
    where = {"block": block, "tx_hash": tx_hash, "time": time}
    out = []
    if mint:
        values: dict[str, Any] = {
            "mintRecipient": m.address(m.body_word(36)),
            "amount": m.amount - m.fee_executed,
            "mintToken": USDC[m.destination_domain],
        }
        if m.v2:
            values["feeCollected"] = m.fee_executed
        out.append(log("MintAndWithdraw", version, values, address=messenger, index=index,
                       **where))
    received: dict[str, Any] = {
        "caller": caller,
        "sourceDomain": m.source_domain,
        "nonce": m.nonce,
        "sender": m.word("sender"),
        "messageBody": m.body,
    }
    if m.v2:
        received["finalityThresholdExecuted"] = m.finality_executed
    out.append(log("MessageReceived", version, received, address=transmitter,
                   index=index + 1, **where))
    return out


def write(path: Path, logs: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(logs))
    return path
