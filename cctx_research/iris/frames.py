"""Iris replies -> typed frames: the reply checks and the three frame shapes.

Iris speaks camelCase JSON; here it becomes snake_case columns with exact
integers. A message's fields are decoded from its bytes by the toolkit's
own decoder (:func:`cctx_research.ingest.evm.messages.decode_message`, the one
that reads ``MessageSent`` logs), not taken from Iris's ``decodedMessage``:
the bytes are what the destination chain verifies. Only while a message is
pending, when Iris gives no bytes (``"message": "0x"``), are the fields
read from ``decodedMessage`` if Iris sent one.

The check functions (``check_*``) raise
:class:`~cctx_research.errors.ResponseSchemaError`; the client's sender
retries a reply that fails them, like a truncated one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from .. import chains, schema
from ..errors import ResponseSchemaError
from ..ingest.evm.messages import decode_message
from ..ingest.hexcodec import hex_to_bytes
from ..ingest.rows import Reasons

__all__ = [
    "ALLOWANCE_COLUMNS",
    "DELAY_REASONS",
    "FEE_COLUMNS",
    "MESSAGE_COLUMNS",
    "STATUSES",
    "allowance_frame",
    "allowance_raw",
    "check_allowance",
    "check_fees",
    "check_messages",
    "complete_reply",
    "empty_messages",
    "fees_frame",
    "messages_frame",
]

STRING = schema.STRING
INT = schema.NULLABLE_INT
TIMESTAMP = pd.DatetimeTZDtype("ns", "UTC")
CHAIN = "chain"

STATUSES: dict[str, str] = {
    "complete": "attested: the message and its attestation can be relayed",
    "pending_confirmations": "not attested yet: waiting for finality, or delayed (delay_reason)",
}
"""Values of ``status`` Circle documents, and what each means."""

DELAY_REASONS: dict[str, str] = {
    "insufficient_fee": "the burn's maxFee is below the Fast Transfer fee: attested at finality",
    "amount_above_max": "the amount is above the Fast Transfer maximum: attested at finality",
    "insufficient_allowance_available": "the Fast Transfer allowance is used up for now",
}
"""Values of ``delay_reason`` Circle documents (null when nothing delays the message)."""

MESSAGE_COLUMNS: dict[str, Any] = {
    "source_domain": np.dtype("int64"),
    "source_chain": CHAIN,
    "tx_hash": STRING,
    "message_index": np.dtype("int64"),  # position in the reply: ascending log index
    "event_nonce": STRING,
    "status": STRING,
    "delay_reason": STRING,
    "cctp_version": INT,
    "attestation": STRING,  # null while pending
    "message": STRING,  # hex; null while pending
    "destination_domain": INT,
    "destination_chain": CHAIN,
    "nonce": STRING,  # V1: decimal; V2: 0x + 64 hex
    "sender": STRING,
    "recipient": STRING,
    "destination_caller": STRING,
    "min_finality_threshold": INT,
    "finality_threshold_executed": INT,
    "burn_token": STRING,
    "mint_recipient": STRING,
    "amount_raw": INT,
    "message_sender": STRING,
    "max_fee_raw": INT,
    "fee_executed_raw": INT,
    "expiration_block": INT,
    "hook_data": STRING,
    "as_of": TIMESTAMP,
}
"""The ``messages()`` frame: one row per message of the burn transaction."""

FEE_COLUMNS: dict[str, Any] = {
    "source_domain": np.dtype("int64"),
    "destination_domain": np.dtype("int64"),
    "source_chain": CHAIN,
    "destination_chain": CHAIN,
    "finality_threshold": np.dtype("int64"),
    "minimum_fee_bps": np.dtype("float64"),
    "as_of": TIMESTAMP,
}
"""The ``fees()`` frame: one row per finality threshold of the route."""

ALLOWANCE_COLUMNS: dict[str, Any] = {
    "allowance": np.dtype("float64"),
    "allowance_raw": INT,
    "last_updated": TIMESTAMP,
    "as_of": TIMESTAMP,
}
"""The ``fast_allowance()`` frame: one row."""

_DECODED = (
    "destination_domain", "nonce", "sender", "recipient", "destination_caller",
    "min_finality_threshold", "finality_threshold_executed", "burn_token", "mint_recipient",
    "amount_raw", "message_sender", "max_fee_raw", "fee_executed_raw", "expiration_block",
    "hook_data",
)  # fmt: skip
# decodedMessage / decodedMessageBody keys -> columns (read only while the bytes are absent)
_HEADER_KEYS = {
    "destinationDomain": "destination_domain", "nonce": "nonce", "sender": "sender",
    "recipient": "recipient", "destinationCaller": "destination_caller",
    "minFinalityThreshold": "min_finality_threshold",
    "finalityThresholdExecuted": "finality_threshold_executed",
}  # fmt: skip
_BODY_KEYS = {
    "burnToken": "burn_token", "mintRecipient": "mint_recipient", "amount": "amount_raw",
    "messageSender": "message_sender", "maxFee": "max_fee_raw", "feeExecuted": "fee_executed_raw",
    "expirationBlock": "expiration_block", "hookData": "hook_data",
}  # fmt: skip
_HEX = re.compile(r"0x([0-9a-fA-F]{2})*")


def _schema_error(message: str) -> ResponseSchemaError:
    return ResponseSchemaError(message, hint="check the base URL points at Circle's Iris API")


def check_messages(body: Any) -> None:
    """Raise unless ``body`` is ``{"messages": [{...}, ...]}`` with the fields used here."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        raise _schema_error("the reply is not {messages: [...]}")
    for i, item in enumerate(body["messages"]):
        if not isinstance(item, dict):
            raise _schema_error(f"messages[{i}] is not an object")
        for key in ("message", "status"):
            if not isinstance(item.get(key), str):
                raise _schema_error(f"messages[{i}].{key} is missing or not a string")
        if not _HEX.fullmatch(item["message"]):
            raise _schema_error(f"messages[{i}].message is not 0x hex")


def check_fees(body: Any) -> None:
    """Raise unless ``body`` is ``[{finalityThreshold, minimumFee}, ...]``."""
    if not isinstance(body, list):
        raise _schema_error("the reply is not a list of {finalityThreshold, minimumFee}")
    for i, item in enumerate(body):
        if not isinstance(item, dict):
            raise _schema_error(f"fees[{i}] is not an object")
        for key in ("finalityThreshold", "minimumFee"):
            value = item.get(key)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise _schema_error(f"fees[{i}].{key} is missing or not a number")


def check_allowance(body: Any) -> None:
    """Raise unless ``body`` is ``{allowance: number, lastUpdated: time}``."""
    if not isinstance(body, dict):
        raise _schema_error("the reply is not {allowance, lastUpdated}")
    value = body.get("allowance")
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise _schema_error("allowance is missing or not a number")
    if not isinstance(body.get("lastUpdated"), str):
        raise _schema_error("lastUpdated is missing or not a time")


def complete_reply(body: Any) -> bool:
    """Whether every message of a reply is attested (such a reply never changes)."""
    messages = body.get("messages") if isinstance(body, dict) else None
    return bool(messages) and all(
        isinstance(m, dict)
        and m.get("status") == "complete"
        and isinstance(m.get("attestation"), str)
        and m["attestation"].startswith("0x")
        and len(m.get("message") or "") > 2
        for m in messages
    )


def _typed(data: Mapping[str, Any], columns: Mapping[str, Any], n: int) -> pd.DataFrame:
    out = {}
    for name, dtype in columns.items():
        values = data.get(name, [None] * n)
        if dtype is CHAIN:
            out[name] = schema.chain_categorical(pd.Series(values, dtype=object))
        else:
            out[name] = pd.Series(values, dtype=dtype) if n else pd.Series([], dtype=dtype)
    return pd.DataFrame(out)


def empty_messages() -> pd.DataFrame:
    """The ``messages()`` frame with no rows."""
    return _typed({}, MESSAGE_COLUMNS, 0)


def _int_or_none(value: Any) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(str(value), 0) if str(value).startswith("0x") else int(str(value))
    except ValueError:
        return None


def _from_decoded(decoded: Any) -> dict[str, Any]:
    """The columns Iris's ``decodedMessage`` gives (used only without the bytes)."""
    row: dict[str, Any] = {}
    if not isinstance(decoded, dict):
        return row
    body = decoded.get("decodedMessageBody")
    for source, keys in ((decoded, _HEADER_KEYS), (body, _BODY_KEYS)):
        if not isinstance(source, dict):
            continue
        for key, column in keys.items():
            value = source.get(key)
            if MESSAGE_COLUMNS[column] is INT:
                value = _int_or_none(value)
            elif value is not None:
                value = str(value).lower() if column != "nonce" else str(value)
            row[column] = value
    return row


def messages_frame(
    body: Mapping[str, Any], *, source_domain: int, tx_hash: str | None, as_of: pd.Timestamp
) -> pd.DataFrame:
    """The ``messages()`` frame of one reply (checked by :func:`check_messages`).

    Raises
    ------
    ResponseSchemaError
        When a message's bytes do not decode, or name another source domain.
    """
    items = list(body["messages"])
    n = len(items)
    if not n:
        return empty_messages()
    texts = [m["message"] if len(m["message"]) > 2 else None for m in items]
    col = hex_to_bytes(pa.array(texts, type=pa.large_string()))
    reasons = Reasons(n)
    reasons.flag(~col.ok | (col.lengths == 0), "no message bytes")
    decoded = decode_message(col.buffer, col.text, col.starts, col.lengths, reasons, header=True)
    has_bytes = np.array([t is not None for t in texts])
    bad = has_bytes & reasons.flagged
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise _schema_error(f"messages[{i}].message does not decode: {reasons.text[i]}")
    ok = ~reasons.flagged
    data: dict[str, list[Any]] = {name: [None] * n for name in _DECODED}
    for name in _DECODED:
        values = pd.Series(decoded[name]).astype(object)
        for i in np.flatnonzero(ok):
            value = values.iloc[i]
            data[name][i] = None if pd.isna(value) else value
    for i in np.flatnonzero(ok):
        got = int(decoded["source_domain"][i])
        if got != source_domain:
            raise _schema_error(
                f"messages[{i}] comes from domain {got}, not the domain {source_domain} asked for"
            )
    versions: list[Any] = []
    for i, item in enumerate(items):
        version = _int_or_none(item.get("cctpVersion"))
        if ok[i]:
            version = int(decoded["cctp_version"][i])
        else:
            for column, value in _from_decoded(item.get("decodedMessage")).items():
                data[column][i] = value
        versions.append(version)
    destinations = data["destination_domain"]
    data.update(
        source_domain=[source_domain] * n,
        source_chain=[chains.chain_name(source_domain)] * n,
        tx_hash=[tx_hash] * n,
        message_index=list(range(n)),
        event_nonce=[None if m.get("eventNonce") is None else str(m["eventNonce"]) for m in items],
        status=[m["status"] for m in items],
        delay_reason=[m.get("delayReason") or None for m in items],
        cctp_version=versions,
        attestation=[_attestation(m.get("attestation")) for m in items],
        message=texts,
        destination_chain=[None if d is None else chains.chain_name(d) for d in destinations],
        as_of=[as_of] * n,
    )
    return _typed(data, MESSAGE_COLUMNS, n)


def _attestation(value: Any) -> str | None:
    # "PENDING" (or an empty string) until Circle has signed
    if isinstance(value, str) and value.startswith("0x") and len(value) > 2:
        return value.lower()
    return None


def fees_frame(
    body: Sequence[Mapping[str, Any]], *, source: int, destination: int, as_of: pd.Timestamp
) -> pd.DataFrame:
    """The ``fees()`` frame of one reply (checked by :func:`check_fees`), by threshold."""
    rows = sorted(body, key=lambda item: item["finalityThreshold"])
    n = len(rows)
    data = {
        "source_domain": [source] * n,
        "destination_domain": [destination] * n,
        "source_chain": [chains.chain_name(source)] * n,
        "destination_chain": [chains.chain_name(destination)] * n,
        "finality_threshold": [int(r["finalityThreshold"]) for r in rows],
        "minimum_fee_bps": [float(r["minimumFee"]) for r in rows],
        "as_of": [as_of] * n,
    }
    return _typed(data, FEE_COLUMNS, n)


def allowance_raw(value: Any, decimals: int = 6) -> int | None:
    """USDC units (a JSON number, or its text) -> exact base units; ``None`` past 6 decimals.

    A number is taken by its shortest text (``repr``), which is the text
    Iris sent whenever a double can carry it: always below 2**53 base units
    (about 9 billion USDC) when it has at most 6 decimals.

    Examples
    --------
    >>> allowance_raw(99999999225.24174)
    99999999225241740
    >>> allowance_raw("1.0000001") is None
    True
    """
    try:
        amount = Decimal(value if isinstance(value, str) else repr(value))
    except (InvalidOperation, ValueError):
        return None
    if not amount.is_finite():
        return None
    raw = amount.scaleb(decimals)
    if raw != raw.to_integral_value():
        return None
    return int(raw)


def allowance_frame(body: Mapping[str, Any], *, as_of: pd.Timestamp) -> pd.DataFrame:
    """The ``fast_allowance()`` frame of one reply (checked by :func:`check_allowance`)."""
    try:
        updated = pd.Timestamp(body["lastUpdated"])
    except ValueError as exc:
        raise _schema_error(f"lastUpdated is not a time: {body['lastUpdated']!r}") from exc
    updated = updated.tz_localize("UTC") if updated.tzinfo is None else updated.tz_convert("UTC")
    data = {
        "allowance": [float(body["allowance"])],
        "allowance_raw": [allowance_raw(body["allowance"])],
        "last_updated": [updated],
        "as_of": [as_of],
    }
    return _typed(data, ALLOWANCE_COLUMNS, 1)
