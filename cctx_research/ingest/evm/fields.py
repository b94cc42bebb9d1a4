"""Each CCTP event's columns, read from its logs' topics and data words, all rows at once.

A chunk of logs (:class:`Chunk`) has its hex decoded once; then each
event's logs (:func:`decode_event`) have their topics and data checked
against the event's layout (:mod:`cctx_research.ingest.evm.events`) and
read into its family's columns (burns, mints, sent, received), a bad log
flagged with its reason; :func:`event_frame` gives a family's rows their
columns and types.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from cctx_research import schema
from cctx_research.ingest.evm import events as ev
from cctx_research.ingest.evm.abi_words import (
    address_word,
    be_uint,
    bytes32_address,
    hex_words,
    uint256_text,
    uint_word,
)
from cctx_research.ingest.evm.frame import is_binary
from cctx_research.ingest.evm.messages import BODY_COLUMNS, decode_message, from_token_messenger
from cctx_research.ingest.hexcodec import (
    HexColumn,
    binary_bytes,
    binary_to_hex,
    gather,
    hex_to_bytes,
    large_binaries,
    slices_to_hex,
)
from cctx_research.ingest.rows import Reasons, column, int_column, string_column

__all__ = ["KINDS", "Chunk", "decode_event", "event_frame"]


class Chunk:
    """The columns of every log decoded once: hex to bytes, numbers to numpy.

    A column that holds bytes already (cryo's Parquet read with
    ``read_logs(binary=True)``) is read in place; hex text is made only for
    the columns the event frames show as hex, and only for their rows.
    """

    def __init__(self, frame: pd.DataFrame, *, message: bool = True) -> None:
        self.frame = frame
        self.message = message  # whether a MessageSent's whole message is given as hex
        self.tx = _bytes(frame["tx_hash"])
        self.address = _bytes(frame["address"])
        self.topics = {j: _bytes(frame[f"topic{j}"]) for j in (1, 2, 3)}
        self.present = {j: frame[f"topic{j}"].notna().to_numpy() for j in (1, 2, 3)}
        self.data = _bytes(frame["data"])
        self.block_number = frame["block_number"].isna().to_numpy()
        self.log_index = frame["log_index"].isna().to_numpy()
        self._lower: dict[str, pa.Array] = {}

    def hex_text(self, name: str, rows: np.ndarray) -> pa.Array:
        """Lowercase ``0x`` hex of column ``name`` (tx_hash, address, transaction_from) at
        ``rows``."""
        values = self.frame[name]
        if is_binary(values):
            return binary_to_hex(large_binaries(values).take(pa.array(rows)))
        if name not in self._lower:
            self._lower[name] = pc.ascii_lower(column(values))
        return self._lower[name].take(pa.array(rows))


def _as_read(value: Any) -> Any:
    """A value of a hex column as its file spells it: hex text, or bytes shown as hex."""
    return "0x" + value.hex() if isinstance(value, bytes) else value


def _bytes(values: pd.Series) -> HexColumn:
    return binary_bytes(values) if is_binary(values) else hex_to_bytes(column(values))


def _subset(col: HexColumn, rows: np.ndarray) -> HexColumn:
    return HexColumn(col.buffer, col.starts[rows], col.lengths[rows], col.ok[rows], col.text)


class _Log:
    """The logs of one event: topics and data as bytes, checks recorded."""

    def __init__(self, spec: ev.EventSpec, shared: Chunk, rows: np.ndarray) -> None:
        self.spec, self.shared, self.g, self.m = spec, shared, rows, len(rows)
        self.reasons = Reasons(self.m)
        r = self.reasons
        r.flag(shared.block_number[rows], "missing block_number")
        r.flag(shared.log_index[rows], "missing log_index")
        tx = _subset(shared.tx, rows)
        r.flag(~tx.ok | (tx.lengths != 32), "tx_hash is not 0x + 64 hex digits")
        address = _subset(shared.address, rows)
        r.flag(~address.ok | (address.lengths != 20), "address is not 0x + 40 hex digits")
        n_topics = len(spec.indexed)
        self.topics: list[HexColumn] = []
        for j in range(1, n_topics + 1):
            topic = _subset(shared.topics[j], rows)
            r.flag(
                ~topic.ok | (topic.lengths != 32),
                f"topic{j} ({spec.indexed[j - 1].name}) missing or not 32 bytes of hex",
            )
            self.topics.append(topic)
        for j in range(n_topics + 1, 4):
            r.flag(
                shared.present[j][rows],
                f"{spec.name} V{spec.version} has {n_topics + 1} topics, this log more",
            )
        self.data = _subset(shared.data, rows)
        head = 32 * len(spec.data)
        dynamic = any(p.type == "bytes" for p in spec.data)
        r.flag(~self.data.ok, "data is not 0x hex")
        size = self.data.lengths
        if dynamic:
            r.flag(
                self.data.ok & (size < head + 32),
                f"data shorter than the {head + 32} bytes of {spec.name} V{spec.version}'s head",
            )
        else:
            r.flag(
                self.data.ok & (size != head),
                f"data is not the {head} bytes of {spec.name} V{spec.version}",
            )
        self.rows = np.flatnonzero(~r.flagged)  # rows safe to read so far

    def _all_rows(self, values: np.ndarray) -> np.ndarray:
        """Values gathered for the safe rows, spread over every row (zeros where unsafe)."""
        if len(self.rows) == self.m:
            return values
        out = np.zeros((self.m, *values.shape[1:]), dtype=np.uint8)
        out[self.rows] = values
        return out

    @cached_property
    def _head(self) -> np.ndarray:
        """The data's head words, ``(m, words, 32)``, gathered once."""
        k = len(self.spec.data)
        return self._all_rows(gather(self.data, self.rows, 0, 32 * k)).reshape(self.m, k, 32)

    def word(self, name: str) -> np.ndarray:
        """The 32-byte topic or head word of parameter ``name``, for every row (zeros if unsafe)."""
        indexed = [p.name for p in self.spec.indexed]
        if name in indexed:
            return self._all_rows(gather(self.topics[indexed.index(name)], self.rows, 0, 32))
        return self._head[:, [p.name for p in self.spec.data].index(name)]

    def uint(self, name: str, bits: int) -> np.ndarray:
        values, fits = uint_word(words := self.word(name), bits)
        if bits > 64:
            bad = np.flatnonzero(~fits & ~self.reasons.flagged)
            for i in bad:
                self.reasons.set(
                    i,
                    f"{name} {uint256_text(words[i])} does not fit int64 "
                    f"(tx {_as_read(self.shared.frame['tx_hash'].iat[self.g[i]])} log "
                    f"{self.shared.frame['log_index'].iat[self.g[i]]})",
                )
        else:
            self.reasons.flag(~fits, f"{name} is not a valid uint{bits}")
        return values

    def address_param(self, name: str) -> pd.Series:
        text, padded = address_word(self.word(name))
        self.reasons.flag(~padded, f"{name} is not an address (non-zero padding)")
        return string_column(text)

    def bytes_param(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(start in the data buffer, length) of a dynamic ``bytes`` parameter per row."""
        j = [p.name for p in self.spec.data].index(name)
        offset, ok_offset = uint_word(self.word(name), 64)
        size = self.data.lengths.astype(np.uint64)
        ok = ok_offset & (offset % 32 == 0) & (offset + np.uint64(32) <= size)
        self.reasons.flag(~ok, f"{name}: bad offset in data")
        safe = np.flatnonzero(ok & ~self.reasons.flagged)
        length = np.zeros(self.m, dtype=np.uint64)
        length[safe] = be_uint(gather(self.data, safe, offset[safe].astype(np.int64) + 24, 8))
        fits = length <= size - np.minimum(offset + np.uint64(32), size)
        self.reasons.flag(~fits, f"{name}: length past the end of data")
        del j
        start = self.data.starts + np.where(ok, offset, 0).astype(np.int64) + 32
        return start, np.where(ok & fits, length, 0).astype(np.int64)

    def base(self, version: np.ndarray | int) -> dict[str, Any]:
        f, shared = self.shared.frame, self.shared
        return {
            "block_number": int_column(f["block_number"].iloc[self.g]),
            "tx_hash": string_column(shared.hex_text("tx_hash", self.g)),
            "log_index": int_column(f["log_index"].iloc[self.g]),
            "contract": string_column(shared.hex_text("address", self.g)),
            "transaction_from": string_column(shared.hex_text("transaction_from", self.g)),
            "cctp_version": np.broadcast_to(np.asarray(version, dtype=np.int64), (self.m,)),
        }


def _burns(log: _Log) -> dict[str, Any]:
    v2 = log.spec.version == 2
    cols = log.base(log.spec.version)
    nonce = None if v2 else log.uint("nonce", 64)
    cols["nonce"] = (
        pd.Series(pd.NA, index=range(log.m), dtype=schema.STRING)
        if v2
        else (pd.Series(nonce.astype(str), dtype=schema.STRING))
    )
    cols["burn_token"] = log.address_param("burnToken")
    cols["amount_raw"] = log.uint("amount", 256).astype(np.int64)
    cols["message_sender"] = log.address_param("depositor")
    cols["mint_recipient"] = bytes32_address(log.word("mintRecipient"))
    cols["destination_domain"] = log.uint("destinationDomain", 32).astype(np.int64)
    cols["destination_token_messenger"] = bytes32_address(log.word("destinationTokenMessenger"))
    cols["destination_caller"] = bytes32_address(log.word("destinationCaller"))
    if v2:
        cols["max_fee_raw"] = log.uint("maxFee", 256).astype(np.int64)
        cols["min_finality_threshold"] = log.uint("minFinalityThreshold", 32).astype(np.int64)
        start, length = log.bytes_param("hookData")
        cols["hook_data"] = slices_to_hex(log.data.buffer, log.data.text, start, length)
    return cols


def _mints(log: _Log) -> dict[str, Any]:
    cols = log.base(log.spec.version)
    cols["mint_recipient"] = log.address_param("mintRecipient")
    cols["amount_raw"] = log.uint("amount", 256).astype(np.int64)
    cols["mint_token"] = log.address_param("mintToken")
    if log.spec.version == 2:
        cols["fee_raw"] = log.uint("feeCollected", 256).astype(np.int64)
    return cols


def _sent(log: _Log) -> dict[str, Any]:
    start, length = log.bytes_param("message")
    text = log.data.text
    # before the hook data's "0x" lands in it
    message = (slices_to_hex(log.data.buffer, text, start, length) if log.shared.message
               else pa.nulls(log.m, pa.large_string()))  # fmt: skip
    decoded = decode_message(log.data.buffer, text, start, length, log.reasons, header=True)
    cols = log.base(decoded.pop("cctp_version"))
    cols["message"] = message
    cols.update(decoded)
    return cols


def _received(log: _Log) -> dict[str, Any]:
    v2 = log.spec.version == 2
    cols = log.base(log.spec.version)
    cols["caller"] = log.address_param("caller")
    cols["source_domain"] = log.uint("sourceDomain", 32).astype(np.int64)
    if v2:
        cols["nonce"] = hex_words(log.word("nonce"))
        cols["finality_threshold_executed"] = log.uint("finalityThresholdExecuted", 32)
    else:
        cols["nonce"] = pd.Series(log.uint("nonce", 64).astype(str), dtype=schema.STRING)
    cols["sender"] = bytes32_address(log.word("sender"))
    start, length = log.bytes_param("messageBody")
    version = 2 if v2 else 1
    token = from_token_messenger(pd.Series(cols["sender"]), cols["source_domain"])
    cols.update(
        decode_message(
            log.data.buffer,
            log.data.text,
            start,
            length,
            log.reasons,
            body_version=version,
            token=token,
        )
    )
    return cols


_BUILDERS = {"burns": _burns, "mints": _mints, "sent": _sent, "received": _received}
_SCHEMA: dict[str, dict[str, Any]] = {
    "burns": {
        "nonce": schema.STRING,
        "burn_token": schema.STRING,
        "amount_raw": "int64",
        "message_sender": schema.STRING,
        "mint_recipient": schema.STRING,
        "destination_domain": "int64",
        "destination_token_messenger": schema.STRING,
        "destination_caller": schema.STRING,
        "max_fee_raw": schema.NULLABLE_INT,
        "min_finality_threshold": schema.NULLABLE_INT,
        "hook_data": schema.STRING,
    },
    "mints": {
        "mint_recipient": schema.STRING,
        "amount_raw": "int64",
        "mint_token": schema.STRING,
        "fee_raw": schema.NULLABLE_INT,
    },
    "sent": {
        "message": schema.STRING,
        "message_version": "int64",
        "source_domain": "int64",
        "destination_domain": "int64",
        "nonce": schema.STRING,
        "sender": schema.STRING,
        "recipient": schema.STRING,
        "destination_caller": schema.STRING,
        "min_finality_threshold": schema.NULLABLE_INT,
        "finality_threshold_executed": schema.NULLABLE_INT,
        **BODY_COLUMNS,
    },
    "received": {
        "caller": schema.STRING,
        "source_domain": "int64",
        "nonce": schema.STRING,
        "sender": schema.STRING,
        "finality_threshold_executed": schema.NULLABLE_INT,
        **BODY_COLUMNS,
    },
}
_BASE = {
    "domain": schema.NULLABLE_INT,
    "chain_id": schema.STRING,
    "block_number": "int64",
    "timestamp": schema.TIMESTAMP,
    "tx_hash": schema.STRING,
    "log_index": "int64",
    "contract": schema.STRING,
    "transaction_from": schema.STRING,
    "cctp_version": "int64",
    "source_file": schema.STRING,
    "index": "int64",
}


def _as_column(values: Any) -> Any:
    if isinstance(values, pd.Series):
        return values.reset_index(drop=True)
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return string_column(values)
    return values


def event_frame(kind: str, parts: list[pd.DataFrame]) -> pd.DataFrame:
    """The decoded rows of one event family (``parts``) as one frame of its columns and types."""
    dtypes = {**_BASE, **_SCHEMA[kind]}
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in dtypes.items()})
    frame = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    frame = frame.reindex(columns=list(dtypes))
    for name, dtype in dtypes.items():
        frame[name] = frame[name].astype(dtype)
    return frame


def decode_event(
    spec: ev.EventSpec, shared: Chunk, rows: np.ndarray, parts: list[pd.DataFrame]
) -> tuple[np.ndarray, np.ndarray]:
    """Decode one event's rows of a chunk; append the good ones to ``parts``."""
    log = _Log(spec, shared, rows)
    cols = _BUILDERS[spec.kind](log)
    good = ~log.reasons.flagged
    out = pd.DataFrame({k: _as_column(v) for k, v in cols.items()})[good].reset_index(drop=True)
    parts.append(out)
    return good, log.reasons.text


KINDS: tuple[str, ...] = tuple(_BUILDERS)
"""The event families, in the order of their frames."""
