"""Circle's Solana events read from their bytes, a field of every event at a time.

An event's data is the 8-byte event-instruction tag, its discriminator and
its Borsh-encoded fields (:mod:`~cctx_research.ingest.solana.layouts`):
here each field is read for all the events of one name and version at
once, and the fields become the columns of the EVM decoder's tables
(:func:`columns`). Pubkeys are spelled as the EVM decoder spells a bytes32
from a message (:func:`pubkeys_hex`); a ``bytes`` field is read as hex text;
a message body by the EVM decoder's own
:func:`~cctx_research.ingest.evm.messages.decode_message`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ... import schema
from ..evm.abi_words import bytes32_address, hex_words
from ..evm.messages import decode_message
from ..hexcodec import hex_slices, take_rows
from ..rows import Reasons, nullable, string_column
from .base58 import decode_many
from .layouts import Layout

__all__ = ["EventBytes", "columns", "pubkeys_hex"]

_INT64_MAX = np.uint64(np.iinfo(np.int64).max)


def pubkeys_hex(values: list[str]) -> pd.Series:
    """Base58 pubkeys in the decoder's bytes32 spelling; ``<NA>`` where not 32 bytes of base58."""
    buffer, starts, lengths, ok = decode_many(values)
    ok &= lengths == 32
    words = take_rows(buffer, np.where(ok, starts, 0), 32) if len(buffer) else np.zeros(
        (len(values), 32), dtype=np.uint8)
    return string_column(bytes32_address(words)).where(ok)


class EventBytes:
    """The events of one (name, version) group: their bytes, and the checks made so far.

    ``ev[name]`` reads a field of every event as a column (a ``bytes`` field: its
    starts and lengths); a value a field cannot hold flags its event.
    """

    def __init__(self, layout: Layout, buffer: np.ndarray, text: np.ndarray | None,
                 starts: np.ndarray, lengths: np.ndarray) -> None:
        self.layout, self.buffer, self.text = layout, buffer, text
        self.starts, self.lengths = starts, lengths
        self.reasons = Reasons(len(starts))
        what = f"{layout.name} V{layout.version}"
        if layout.dynamic:
            short = lengths < layout.fixed
            self.reasons.flag(short, f"{what} event shorter than its {layout.fixed} fixed bytes")
            size = self._le(np.where(short, 0, layout.fixed - 4 - 16), 4)
            self.reasons.flag(size != lengths - layout.fixed,
                              f"{what} event: the length of its bytes field does not match")
        else:
            self.reasons.flag(lengths != layout.fixed,
                              f"{what} event is not the {layout.fixed} bytes of its layout")
        self.safe = ~self.reasons.flagged

    def _raw(self, offset: np.ndarray | int, width: int) -> np.ndarray:
        starts = np.where(self.safe if hasattr(self, "safe") else True, self.starts, 0)
        return take_rows(self.buffer, starts + 16 + offset, width)

    def _le(self, offset: np.ndarray | int, width: int) -> np.ndarray:
        raw = self._raw(offset, width)
        padded = np.zeros((len(raw), 8), dtype=np.uint8)
        padded[:, :width] = raw
        return padded.view("<u8").ravel()

    def __getitem__(self, name: str) -> Any:
        f = self.layout.field(name)
        if f.type == "pubkey":
            return string_column(bytes32_address(self._raw(f.offset, 32)))
        if f.type == "bytes32":
            return string_column(hex_words(self._raw(f.offset, 32)))
        if f.type == "u32":
            return self._le(f.offset, 4).astype(np.int64)
        if f.type == "u64":
            values = self._le(f.offset, 8)
            self.reasons.flag(values > _INT64_MAX, f"{name} does not fit int64")
            return values.astype(np.int64)
        start = self.starts + self.layout.fixed  # the trailing bytes field
        return start, np.where(self.safe, self.lengths - self.layout.fixed, 0)


def _decimal(values: np.ndarray) -> pd.Series:
    """Unsigned 64-bit values as decimal text (a nonce), in the schema's string dtype."""
    return string_column(pa.array(values.astype(np.uint64)).cast(pa.string()))


def columns(kind: str, ev: EventBytes) -> dict[str, Any]:
    """The columns of one event table (``kind``: burns, mints, received) from its events."""
    v2 = ev.layout.version == 2
    m = len(ev.starts)
    if kind == "burns":
        cols: dict[str, Any] = {
            "nonce": pd.Series(pd.NA, index=range(m), dtype=schema.STRING) if v2
            else _decimal(ev["nonce"]),
            "burn_token": ev["burn_token"], "amount_raw": ev["amount"],
            "message_sender": ev["depositor"], "mint_recipient": ev["mint_recipient"],
            "destination_domain": ev["destination_domain"],
            "destination_token_messenger": ev["destination_token_messenger"],
            "destination_caller": ev["destination_caller"],
        }
        if v2:
            cols["max_fee_raw"] = ev["max_fee"]
            cols["min_finality_threshold"] = ev["min_finality_threshold"]
            cols["hook_data"] = hex_slices(ev.text, *ev["hook_data"])
        return cols
    if kind == "mints":
        cols = {"mint_recipient": ev["mint_recipient"], "amount_raw": ev["amount"],
                "mint_token": ev["mint_token"]}
        if v2:
            cols["fee_raw"] = ev["fee_collected"]
        return cols
    cols = {"caller": ev["caller"], "source_domain": ev["source_domain"], "sender": ev["sender"]}
    if v2:
        cols["nonce"] = ev["nonce"]
        cols["finality_threshold_executed"] = nullable(ev["finality_threshold_executed"],
                                                       np.ones(m, dtype=bool))
    else:
        cols["nonce"] = _decimal(ev["nonce"])
    start, length = ev["message_body"]
    cols.update(decode_message(ev.buffer, ev.text, start, length, ev.reasons,
                               body_version=ev.layout.version))
    return cols
