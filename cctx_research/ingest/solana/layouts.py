"""Circle's Solana CCTP programs: their ids, and the byte layouts of their events and accounts.

Facts from circlefin/solana-cctp-contracts (Apache-2.0): the program ids of
its README's deployment tables, and the IDLs in ``examples/target/idl``
(``message_transmitter_031.json``, ``token_messenger_minter_031.json`` for
V1; ``message_transmitter_v2.json``, ``token_messenger_minter_v2.json`` for
V2). The programs emit Anchor self-CPI events (``emit_cpi!``): an inner
instruction to the program itself, with one account (its event authority)
and data = the 8-byte event-instruction tag, the event's discriminator
(``sha256("event:<Name>")[:8]``) and the Borsh-encoded fields (integers
little-endian, ``Pubkey`` 32 bytes, ``bytes`` a u32 length then the bytes).
A name has one discriminator in both versions; the program says which
layout applies.

The message a burn sends is kept in a ``MessageSent`` account of the
MessageTransmitter (discriminator ``sha256("account:MessageSent")[:8]``):
V1 ``rent_payer: Pubkey, message: bytes``; V2 ``rent_payer: Pubkey,
created_at: i64, message: bytes``.

Examples
--------
>>> EVENT_TAG.hex(), discriminator("DepositForBurn").hex()
('e445a52e51cb9a1d', '90fc9192064aa7eb')
>>> [f.name for f in LAYOUTS[("MintAndWithdraw", 2)].fields]
['mint_recipient', 'amount', 'mint_token', 'fee_collected']
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

__all__ = [
    "CODES",
    "EVENT_TAG",
    "LAYOUTS",
    "MESSAGE_SENT_DISCRIMINATOR",
    "MESSAGE_TRANSMITTERS",
    "PROGRAMS",
    "PROGRAM_IDS",
    "TOKEN_MESSENGERS",
    "Field",
    "Layout",
    "discriminator",
]

EVENT_TAG = bytes.fromhex("e445a52e51cb9a1d")
"""Anchor's ``EVENT_IX_TAG_LE``: the first 8 bytes of every self-CPI event."""

TOKEN_MESSENGERS = {
    "CCTPiPYPc6AsJuwueEnWgSgucamXDZwBd53dQ11YiKX3": 1,
    "CCTPV2vPZJS2u2BBsUoscuikbYjnpFmbFsvVuJdgUMQe": 2,
}
"""TokenMessengerMinter program id -> CCTP version (mainnet and devnet alike)."""

MESSAGE_TRANSMITTERS = {
    "CCTPmbSD7gX1bxKPAmg77w8oFzNFpaQiQUWD43TKaecd": 1,
    "CCTPV2Sm4AdWt5296sk4P66VBZ7bEhcARwFaaS9YPbeC": 2,
}
"""MessageTransmitter program id -> CCTP version."""

PROGRAMS = {**TOKEN_MESSENGERS, **MESSAGE_TRANSMITTERS}
"""Every CCTP program id -> its version."""

PROGRAM_IDS = tuple(PROGRAMS)
"""The program ids in a fixed order: ``CODES[p] - 1`` indexes it."""

CODES = {program: i + 1 for i, program in enumerate(PROGRAM_IDS)}
"""Program id -> a small code (1..4) for columns of programs; 0 stands for any other account."""


def discriminator(name: str, namespace: str = "event") -> bytes:
    """Anchor's 8-byte discriminator of an event (or ``namespace="account"``)."""
    return hashlib.sha256(f"{namespace}:{name}".encode()).digest()[:8]


MESSAGE_SENT_DISCRIMINATOR = discriminator("MessageSent", "account")

_SIZES = {"pubkey": 32, "u32": 4, "u64": 8, "bytes32": 32, "bytes": 4}


@dataclass(frozen=True)
class Field:
    """One Borsh field: its name, type and offset after the 16 tag and discriminator bytes."""

    name: str
    type: str
    offset: int


@dataclass(frozen=True)
class Layout:
    """An event's fields; a ``bytes`` field, if any, is the last."""

    name: str
    version: int
    fields: tuple[Field, ...]

    @property
    def fixed(self) -> int:
        """Bytes of data before a trailing ``bytes`` field's content (all of them if none)."""
        last = self.fields[-1]
        return 16 + last.offset + _SIZES[last.type]

    @property
    def dynamic(self) -> bool:
        return self.fields[-1].type == "bytes"

    def field(self, name: str) -> Field:
        return next(f for f in self.fields if f.name == name)


def _layout(name: str, version: int, spec: str) -> Layout:
    fields, offset = [], 0
    for item in spec.split():
        fname, ftype = item.split(":")
        fields.append(Field(fname, ftype, offset))
        offset += _SIZES[ftype]
    return Layout(name, version, tuple(fields))


LAYOUTS: dict[tuple[str, int], Layout] = {
    (lay.name, lay.version): lay
    for lay in (
        _layout("DepositForBurn", 1, "nonce:u64 burn_token:pubkey amount:u64 depositor:pubkey "
                "mint_recipient:pubkey destination_domain:u32 "
                "destination_token_messenger:pubkey destination_caller:pubkey"),
        _layout("DepositForBurn", 2, "burn_token:pubkey amount:u64 depositor:pubkey "
                "mint_recipient:pubkey destination_domain:u32 "
                "destination_token_messenger:pubkey destination_caller:pubkey max_fee:u64 "
                "min_finality_threshold:u32 hook_data:bytes"),
        _layout("MintAndWithdraw", 1, "mint_recipient:pubkey amount:u64 mint_token:pubkey"),
        _layout("MintAndWithdraw", 2, "mint_recipient:pubkey amount:u64 mint_token:pubkey "
                "fee_collected:u64"),
        _layout("MessageReceived", 1, "caller:pubkey source_domain:u32 nonce:u64 sender:pubkey "
                "message_body:bytes"),
        _layout("MessageReceived", 2, "caller:pubkey source_domain:u32 nonce:bytes32 "
                "sender:pubkey finality_threshold_executed:u32 message_body:bytes"),
    )
}  # fmt: skip
"""(event name, version) -> layout, from the programs' IDLs."""

EMITTERS = {"DepositForBurn": TOKEN_MESSENGERS, "MintAndWithdraw": TOKEN_MESSENGERS,
            "MessageReceived": MESSAGE_TRANSMITTERS}  # fmt: skip
"""Which programs emit each event."""
