"""The CCTP events and message layouts, as facts.

Everything here is taken from Circle's contracts (``circlefin/evm-cctp-contracts``:
V1 in ``src/TokenMessenger.sol`` and ``src/MessageTransmitter.sol``, V2 in
``src/v2/TokenMessengerV2.sol``, ``src/v2/BaseTokenMessenger.sol`` and
``src/v2/MessageTransmitterV2.sol``; layouts in ``src/messages/Message.sol``,
``src/messages/BurnMessage.sol``, ``src/messages/v2/MessageV2.sol`` and
``src/messages/v2/BurnMessageV2.sol``). ``MintAndWithdraw`` is emitted by the
TokenMessenger (V1) and TokenMessengerV2, after the TokenMinter mints.

An event log carries ``topic0 = keccak256(signature)``, then one topic per
``indexed`` parameter (in declaration order), and the other parameters
ABI-encoded in ``data``: 32-byte words for static types, and for each
``bytes`` parameter a head word holding the offset of its tail (length word,
then the bytes padded to 32). The topic0 constants are written out so the
decoder needs no hashing library; the tests recompute each one.

The contracts' addresses on each chain are in the domain registry
(:func:`cctx_research.chains.contracts`).

``MessageSent(bytes)`` has the same signature, so the same topic0, in V1 and
V2: the message's own ``version`` field (0 for V1, 1 for V2) tells them apart.

Examples
--------
>>> from cctx_research.ingest.evm.events import BY_TOPIC0, DEPOSIT_FOR_BURN_V2
>>> DEPOSIT_FOR_BURN_V2.signature
'DepositForBurn(address,uint256,address,bytes32,uint32,bytes32,bytes32,uint256,uint32,bytes)'
>>> [p.name for p in DEPOSIT_FOR_BURN_V2.indexed]
['burnToken', 'depositor', 'minFinalityThreshold']
>>> BY_TOPIC0[DEPOSIT_FOR_BURN_V2.topic0].version
2
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "BURN_MESSAGE_V1",
    "BURN_MESSAGE_V2",
    "BY_TOPIC0",
    "DEPOSIT_FOR_BURN_V1",
    "DEPOSIT_FOR_BURN_V2",
    "EVENTS",
    "MESSAGE_RECEIVED_V1",
    "MESSAGE_RECEIVED_V2",
    "MESSAGE_SENT",
    "MESSAGE_V1",
    "MESSAGE_V2",
    "MESSAGE_VERSIONS",
    "MINT_AND_WITHDRAW_V1",
    "MINT_AND_WITHDRAW_V2",
    "EventSpec",
    "Layout",
    "LayoutField",
    "Param",
]


@dataclass(frozen=True)
class Param:
    """One event parameter: its Solidity name, ABI type and whether it is indexed."""

    name: str
    type: str
    indexed: bool = False


@dataclass(frozen=True)
class EventSpec:
    """One CCTP event of one protocol version."""

    name: str
    """Solidity event name (``"DepositForBurn"``)."""
    version: int
    """CCTP version, 1 or 2 (``MessageSent`` serves both; see the module note)."""
    contract: str
    """The contract that emits it (``"TokenMessengerV2"``)."""
    params: tuple[Param, ...]
    topic0: str
    """``0x`` + keccak256 of :attr:`signature`, lowercase."""
    kind: str
    """Which frame of :class:`~cctx_research.ingest.evm.logs.DecodedLogs` it lands in."""

    @property
    def signature(self) -> str:
        """The canonical signature: name and parameter types, no spaces or names."""
        return f"{self.name}({','.join(p.type for p in self.params)})"

    @property
    def indexed(self) -> tuple[Param, ...]:
        """The indexed parameters, in topic order (topic1, topic2, topic3)."""
        return tuple(p for p in self.params if p.indexed)

    @property
    def data(self) -> tuple[Param, ...]:
        """The parameters ABI-encoded in the log's ``data``, in order."""
        return tuple(p for p in self.params if not p.indexed)


DEPOSIT_FOR_BURN_V1 = EventSpec(
    "DepositForBurn",
    1,
    "TokenMessenger",
    (
        Param("nonce", "uint64", True),
        Param("burnToken", "address", True),
        Param("amount", "uint256"),
        Param("depositor", "address", True),
        Param("mintRecipient", "bytes32"),
        Param("destinationDomain", "uint32"),
        Param("destinationTokenMessenger", "bytes32"),
        Param("destinationCaller", "bytes32"),
    ),
    "0x2fa9ca894982930190727e75500a97d8dc500233a5065e0f3126c48fbe0343c0",
    "burns",
)
DEPOSIT_FOR_BURN_V2 = EventSpec(
    "DepositForBurn",
    2,
    "TokenMessengerV2",
    (
        Param("burnToken", "address", True),
        Param("amount", "uint256"),
        Param("depositor", "address", True),
        Param("mintRecipient", "bytes32"),
        Param("destinationDomain", "uint32"),
        Param("destinationTokenMessenger", "bytes32"),
        Param("destinationCaller", "bytes32"),
        Param("maxFee", "uint256"),
        Param("minFinalityThreshold", "uint32", True),
        Param("hookData", "bytes"),
    ),
    "0x0c8c1cbdc5190613ebd485511d4e2812cfa45eecb79d845893331fedad5130a5",
    "burns",
)
MINT_AND_WITHDRAW_V1 = EventSpec(
    "MintAndWithdraw",
    1,
    "TokenMessenger",
    (
        Param("mintRecipient", "address", True),
        Param("amount", "uint256"),
        Param("mintToken", "address", True),
    ),
    "0x1b2a7ff080b8cb6ff436ce0372e399692bbfb6d4ae5766fd8d58a7b8cc6142e6",
    "mints",
)
MINT_AND_WITHDRAW_V2 = EventSpec(
    "MintAndWithdraw",
    2,
    "TokenMessengerV2",
    (
        Param("mintRecipient", "address", True),
        Param("amount", "uint256"),
        Param("mintToken", "address", True),
        Param("feeCollected", "uint256"),
    ),
    "0x50c55e915134d457debfa58eb6f4342956f8b0616d51a89a3659360178e1ab63",
    "mints",
)
MESSAGE_SENT = EventSpec(
    "MessageSent",
    1,
    "MessageTransmitter / MessageTransmitterV2",
    (Param("message", "bytes"),),
    "0x8c5261668696ce22758910d05bab8f186d6eb247ceac2af2e82c7dc17669b036",
    "sent",
)
MESSAGE_RECEIVED_V1 = EventSpec(
    "MessageReceived",
    1,
    "MessageTransmitter",
    (
        Param("caller", "address", True),
        Param("sourceDomain", "uint32"),
        Param("nonce", "uint64", True),
        Param("sender", "bytes32"),
        Param("messageBody", "bytes"),
    ),
    "0x58200b4c34ae05ee816d710053fff3fb75af4395915d3d2a771b24aa10e3cc5d",
    "received",
)
MESSAGE_RECEIVED_V2 = EventSpec(
    "MessageReceived",
    2,
    "MessageTransmitterV2",
    (
        Param("caller", "address", True),
        Param("sourceDomain", "uint32"),
        Param("nonce", "bytes32", True),
        Param("sender", "bytes32"),
        Param("finalityThresholdExecuted", "uint32", True),
        Param("messageBody", "bytes"),
    ),
    "0xff48c13eda96b1cceacc6b9edeedc9e9db9d6226afbc30146b720c19d3addb1c",
    "received",
)

EVENTS: tuple[EventSpec, ...] = (
    DEPOSIT_FOR_BURN_V1,
    DEPOSIT_FOR_BURN_V2,
    MINT_AND_WITHDRAW_V1,
    MINT_AND_WITHDRAW_V2,
    MESSAGE_SENT,
    MESSAGE_RECEIVED_V1,
    MESSAGE_RECEIVED_V2,
)
"""Every event the decoder reads."""

BY_TOPIC0: dict[str, EventSpec] = {e.topic0: e for e in EVENTS}
"""Event by its topic0 (lowercase ``0x`` hex)."""


@dataclass(frozen=True)
class LayoutField:
    """A field of a packed (not ABI-encoded) CCTP message: byte offset and length."""

    name: str
    offset: int
    length: int
    type: str
    """``"uint"`` (big-endian unsigned) or ``"bytes"``."""


@dataclass(frozen=True)
class Layout:
    """A packed message layout: fixed fields, then a dynamic tail from ``body_offset``."""

    name: str
    fields: tuple[LayoutField, ...]
    body_offset: int
    """Where the dynamic tail starts (the message body, or a V2 burn's hook data)."""

    def field(self, name: str) -> LayoutField:
        """The field called ``name``."""
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"{self.name} has no field {name!r}; it has {[f.name for f in self.fields]}")


def _packed(name: str, spec: tuple[tuple[str, int, str], ...]) -> Layout:
    fields, offset = [], 0
    for field_name, length, kind in spec:
        fields.append(LayoutField(field_name, offset, length, kind))
        offset += length
    return Layout(name, tuple(fields), offset)


MESSAGE_V1 = _packed(
    "MessageV1",
    (
        ("version", 4, "uint"),
        ("sourceDomain", 4, "uint"),
        ("destinationDomain", 4, "uint"),
        ("nonce", 8, "uint"),
        ("sender", 32, "bytes"),
        ("recipient", 32, "bytes"),
        ("destinationCaller", 32, "bytes"),
    ),
)
"""V1 message header (``Message.sol``): 116 bytes, then the message body."""

MESSAGE_V2 = _packed(
    "MessageV2",
    (
        ("version", 4, "uint"),
        ("sourceDomain", 4, "uint"),
        ("destinationDomain", 4, "uint"),
        ("nonce", 32, "bytes"),
        ("sender", 32, "bytes"),
        ("recipient", 32, "bytes"),
        ("destinationCaller", 32, "bytes"),
        ("minFinalityThreshold", 4, "uint"),
        ("finalityThresholdExecuted", 4, "uint"),
    ),
)
"""V2 message header (``MessageV2.sol``): 148 bytes, then the message body.

The nonce is zero and ``finalityThresholdExecuted`` 0 in the message a burn
emits: Circle fills both in the attested message.
"""

BURN_MESSAGE_V1 = _packed(
    "BurnMessageV1",
    (
        ("version", 4, "uint"),
        ("burnToken", 32, "bytes"),
        ("mintRecipient", 32, "bytes"),
        ("amount", 32, "uint"),
        ("messageSender", 32, "bytes"),
    ),
)
"""V1 burn message body (``BurnMessage.sol``): exactly 132 bytes."""

BURN_MESSAGE_V2 = _packed(
    "BurnMessageV2",
    (
        *((f.name, f.length, f.type) for f in BURN_MESSAGE_V1.fields),
        ("maxFee", 32, "uint"),
        ("feeExecuted", 32, "uint"),
        ("expirationBlock", 32, "uint"),
    ),
)
"""V2 burn message body (``BurnMessageV2.sol``): 228 bytes, then the hook data."""

MESSAGE_VERSIONS: dict[int, tuple[Layout, Layout]] = {
    0: (MESSAGE_V1, BURN_MESSAGE_V1),
    1: (MESSAGE_V2, BURN_MESSAGE_V2),
}
"""Header ``version`` -> (header layout, burn message layout): 0 is V1, 1 is V2."""
