"""JSON bodies -> canonical frames (see :mod:`cctx_research.schema`).

The interface's camelCase names (and its ``detinationTokenMessenger``
spelling) stop here. Conversions are vectorised: the only per-record Python
is pulling each field out of the decoded JSON into a list.

- amounts: exact integers in ``amount_raw`` (ints, integral floats below
  2**53 or digit strings; anything else is a
  :class:`~cctx_research.errors.ResponseSchemaError`), and
  ``amount = amount_raw / 10**decimals``;
- timestamps: Unix seconds, or milliseconds when above 1e11, or ISO
  strings, to tz-aware UTC;
- addresses: hex lowercased, bytes32-padded EVM addresses (12 zero bytes,
  then 20) cut to 20 bytes; non-hex values (base58) kept as they are;
- chains: registry names as categoricals; unknown ids kept
  (``"domain-42"``, ``"chain-999"``).

The conversions of one field's values live in :mod:`cctx_research.client.columns`
(``raw_amounts``, ``timestamps``, ``addresses``, ``tx_hashes``, ... stay
reachable here). The ``check_*`` functions validate a body's shape; the transport calls them
so a malformed reply is retried like a truncated one.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .. import schema
from .columns import (
    addresses,
    bools,
    chain_names_from_domains,
    chain_names_from_ids,
    coerce,
    column,
    ints,
    raw_amounts,
    scale,
    schema_error,
    strings,
    timestamps,
    tx_hashes,
)

__all__ = [
    "check_mints",
    "check_received",
    "check_top",
    "check_transaction",
    "check_volume",
    "coerce",
    "mint_records",
    "received",
    "top_addresses",
    "transaction",
    "transfers",
    "volume",
]

# ---------------------------------------------------------------------------
# shape checks


def check_mints(body: Any) -> None:
    if not isinstance(body, list):
        raise schema_error(f"mint listing body must be an array of groups, got {_kind(body)}")
    for group in body:
        if not isinstance(group, dict) or not isinstance(group.get("transactions"), list):
            raise schema_error("every mint group must be an object with a transactions array")


def check_received(body: Any) -> None:
    if not isinstance(body, dict) or not isinstance(body.get("transactions"), list):
        raise schema_error("recipient listing body must be an object with a transactions array")


def check_transaction(body: Any) -> None:
    if not isinstance(body, dict) or not isinstance(body.get("transaction"), dict):
        raise schema_error("hash lookup body must be an object with a transaction object")


_VOLUME_FIELDS = ("mintVolume", "burnVolume", "mintCount", "burnCount")


def check_volume(body: Any) -> None:
    if not isinstance(body, dict) or any(f not in body for f in _VOLUME_FIELDS):
        raise schema_error("volume body must be an object with " + ", ".join(_VOLUME_FIELDS))


def check_top(body: Any) -> None:
    if not isinstance(body, dict) or not isinstance(body.get("topRecipients"), list):
        raise schema_error("top senders body must be an object with a topRecipients array")


def _kind(value: Any) -> str:
    return type(value).__name__


def mint_records(body: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The transaction summaries of a mint listing page, flattened out of the groups."""
    if len(body) == 1:
        return body[0]["transactions"]
    return [record for group in body for record in group["transactions"]]


# ---------------------------------------------------------------------------
# frames


_SUMMARY_FIELDS: dict[str, tuple[str, ...]] = {
    "amount": ("amount",),
    "sourceDomain": ("sourceDomain",),
    "destinationDomain": ("destinationDomain",),
    "id": ("id",),
    "timestamp": ("timestamp",),
    "isCompleted": ("isCompleted",),
    "mintRecipient": ("mintRecipient",),
    "messageSender": ("messageSender",),
    "burnToken": ("burnToken",),
    "destinationCaller": ("destinationCaller",),
    "destinationTokenMessenger": ("detinationTokenMessenger", "destinationTokenMessenger"),
}
_REQUIRED = ("amount", "id", "timestamp")


def _fields(records: Sequence[dict[str, Any]]) -> dict[str, Sequence[Any]]:
    """Every summary field as a column, pulled out of the records in one pass.

    When a record lacks a field (or spells it another way), each column is
    pulled on its own, with the checks and messages of :func:`_column`.
    """
    for pick in (0, -1):  # the interface's spellings first, then the alternatives
        names = [spellings[pick] for spellings in _SUMMARY_FIELDS.values()]
        try:
            rows = list(map(operator.itemgetter(*names), records))
        except (KeyError, TypeError):
            continue
        return dict(zip(_SUMMARY_FIELDS, zip(*rows, strict=True), strict=True))
    return {
        key: column(records, *spellings, required=key in _REQUIRED)
        for key, spellings in _SUMMARY_FIELDS.items()
    }


def _summary_columns(records: Sequence[dict[str, Any]], decimals: int) -> dict[str, Any]:
    fields = _fields(records)
    raw = raw_amounts(fields["amount"])
    src = ints(fields["sourceDomain"], name="sourceDomain")
    dst = ints(fields["destinationDomain"], name="destinationDomain")
    return {
        "transfer_id": strings(fields["id"]),
        "timestamp": timestamps(fields["timestamp"]),
        "amount": scale(raw, decimals),
        "amount_raw": raw,
        "is_completed": bools(fields["isCompleted"], name="isCompleted"),
        "source_domain": src,
        "destination_domain": dst,
        "source_chain": chain_names_from_domains(src),
        "destination_chain": chain_names_from_domains(dst),
        **_address_columns(fields, src, dst),
    }


_ADDRESS_FIELDS = (
    # column, wire field, whose chain it lives on
    ("mint_recipient", "mintRecipient", "destination"),
    ("message_sender", "messageSender", "source"),
    ("burn_token", "burnToken", "source"),
    ("destination_caller", "destinationCaller", "destination"),
    ("destination_token_messenger", "destinationTokenMessenger", "destination"),
)


def _address_columns(
    fields: dict[str, Sequence[Any]], src: np.ndarray, dst: np.ndarray
) -> dict[str, Any]:
    """The five address columns: bytes32 on the wire -> the format of each one's chain.

    Spelled in one call over the five columns end to end (one set of
    fixed costs per page, not five), then cut back apart.
    """
    n = len(src)
    values: list[Any] = []
    for _, field, _ in _ADDRESS_FIELDS:
        values.extend(fields[field])
    where = np.concatenate([dst if side == "destination" else src for *_, side in _ADDRESS_FIELDS])
    spelled = addresses(values, where).array
    return {
        column: spelled[k * n : (k + 1) * n] for k, (column, *_) in enumerate(_ADDRESS_FIELDS)
    }


def transfers(records: Sequence[dict[str, Any]], *, decimals: int = 6) -> pd.DataFrame:
    """Transaction summaries (flattened mint groups) -> ``transfers`` frame."""
    if not records:
        return schema.empty("transfers")
    cols = _summary_columns(records, decimals)
    return coerce(pd.DataFrame({k: _plain(v) for k, v in cols.items()}), "transfers")


def _plain(values: Any) -> Any:
    return values.array if isinstance(values, pd.Series) else values


def transaction(body: dict[str, Any], *, decimals: int = 6) -> pd.DataFrame:
    """Hash lookup body -> one-row ``transaction`` frame."""
    tx = body["transaction"]
    records = [tx]
    cols = _summary_columns(records, decimals)
    block = tx.get("blockNumber")
    frame = pd.DataFrame(
        {
            "tx_hash": tx_hashes([tx.get("transactionHash")]).array,
            "transaction_type": strings([body.get("transactionType")]).array,
            **{k: _plain(v) for k, v in cols.items()},
            "block_number": ints([block if block is not None else -1], name="blockNumber"),
            "chain_id": strings([tx.get("chainId")]).array,
            "record_id": strings([tx.get("_id")]).array,
            "entity_id": strings([tx.get("entityId")]).array,
            "instance_id": strings([tx.get("instanceId")]).array,
        }
    )
    return coerce(frame, "transaction")


def received(items: Sequence[dict[str, Any]], *, address: str, decimals: int = 6) -> pd.DataFrame:
    """Recipient listing items -> ``received`` frame."""
    if not items:
        return schema.empty("received")
    raw = raw_amounts(column(items, "amount", required=True))
    frame = pd.DataFrame(
        {
            "transfer_id": strings(column(items, "id", required=True)).array,
            "tx_hash": tx_hashes(column(items, "transactionHash")).array,
            "transaction_type": strings(column(items, "transactionType")).array,
            "timestamp": timestamps(column(items, "timestamp", required=True)),
            "amount": scale(raw, decimals),
            "amount_raw": raw,
            "source_chain": chain_names_from_ids(column(items, "sourceChain")),
            "destination_chain": chain_names_from_ids(column(items, "destinationChain")),
            "address": pd.array([address] * len(items), dtype=schema.STRING),
        }
    )
    return coerce(frame, "received")


def volume(
    body: dict[str, Any], *, start: pd.Timestamp, end: pd.Timestamp, decimals: int = 6
) -> dict[str, Any]:
    """Volume summary body -> one row (a dict) of the ``volume`` frame."""
    mint_raw, burn_raw = raw_amounts(
        [body["mintVolume"], body["burnVolume"]], name="mintVolume/burnVolume"
    )
    mint_count, burn_count = ints([body["mintCount"], body["burnCount"]], name="counts")
    total_count = body.get("totalCount")
    total_count = (
        int(ints([total_count], name="totalCount")[0])
        if total_count is not None
        else mint_count + burn_count
    )
    return {
        "timestamp": start,
        "end": end,
        "mint_volume": float(mint_raw) / 10**decimals,
        "burn_volume": float(burn_raw) / 10**decimals,
        "total_volume": float(mint_raw + burn_raw) / 10**decimals,
        "mint_volume_raw": int(mint_raw),
        "burn_volume_raw": int(burn_raw),
        "mint_count": int(mint_count),
        "burn_count": int(burn_count),
        "total_count": int(total_count),
    }


def volume_frame(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """Rows from :func:`volume` -> ``volume`` frame."""
    if not rows:
        return schema.empty("volume")
    return coerce(pd.DataFrame(list(rows)), "volume")


def top_addresses(items: Sequence[dict[str, Any]], *, decimals: int = 6) -> pd.DataFrame:
    """Top address items -> ``top_addresses`` frame (ranked 1..n in reply order)."""
    if not items:
        return schema.empty("top_addresses")
    raw = raw_amounts(column(items, "totalVolume", required=True), name="totalVolume")
    frame = pd.DataFrame(
        {
            "rank": np.arange(1, len(items) + 1, dtype=np.int64),
            "address": addresses(column(items, "address", required=True)).array,
            "volume": scale(raw, decimals),
            "volume_raw": raw,
            "transaction_count": ints(column(items, "transactionCount"), name="transactionCount"),
        }
    )
    return coerce(frame, "top_addresses")
