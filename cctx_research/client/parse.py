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

The ``check_*`` functions validate a body's shape; the transport calls them
so a malformed reply is retried like a truncated one.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .. import chains, schema
from .._codes import unique_ints
from ..addressing import canonical_addresses
from ..errors import ResponseSchemaError
from ..times import MS_THRESHOLD

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

_EXACT = 2**53


def _schema_error(message: str) -> ResponseSchemaError:
    return ResponseSchemaError(
        message, hint="the reply does not follow the interface; check base_url and the service"
    )


# ---------------------------------------------------------------------------
# shape checks


def check_mints(body: Any) -> None:
    if not isinstance(body, list):
        raise _schema_error(f"mint listing body must be an array of groups, got {_kind(body)}")
    for group in body:
        if not isinstance(group, dict) or not isinstance(group.get("transactions"), list):
            raise _schema_error("every mint group must be an object with a transactions array")


def check_received(body: Any) -> None:
    if not isinstance(body, dict) or not isinstance(body.get("transactions"), list):
        raise _schema_error("recipient listing body must be an object with a transactions array")


def check_transaction(body: Any) -> None:
    if not isinstance(body, dict) or not isinstance(body.get("transaction"), dict):
        raise _schema_error("hash lookup body must be an object with a transaction object")


_VOLUME_FIELDS = ("mintVolume", "burnVolume", "mintCount", "burnCount")


def check_volume(body: Any) -> None:
    if not isinstance(body, dict) or any(f not in body for f in _VOLUME_FIELDS):
        raise _schema_error("volume body must be an object with " + ", ".join(_VOLUME_FIELDS))


def check_top(body: Any) -> None:
    if not isinstance(body, dict) or not isinstance(body.get("topRecipients"), list):
        raise _schema_error("top senders body must be an object with a topRecipients array")


def _kind(value: Any) -> str:
    return type(value).__name__


def mint_records(body: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The transaction summaries of a mint listing page, flattened out of the groups."""
    if len(body) == 1:
        return body[0]["transactions"]
    return [record for group in body for record in group["transactions"]]


# ---------------------------------------------------------------------------
# column conversions


def _column(records: Sequence[dict[str, Any]], *names: str, required: bool = False) -> list:
    name = names[0]
    try:
        return [r[name] for r in records]
    except KeyError:
        pass
    except TypeError:
        raise _schema_error("every record must be an object") from None
    for alt in names[1:]:
        try:
            return [r[alt] for r in records]
        except KeyError:
            continue
    if required:
        missing = sum(1 for r in records if name not in r)
        raise _schema_error(f"{missing} record(s) lack the field {name!r}")
    return [_first(r, names) for r in records]


def _first(record: dict[str, Any], names: Iterable[str]) -> Any:
    for name in names:
        if name in record:
            return record[name]
    return None


def raw_amounts(values: Sequence[Any], *, name: str = "amount") -> np.ndarray:
    """Exact integer amounts (int64) from JSON numbers or digit strings."""
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64)
    arr = np.asarray(values)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64, copy=False)
    if arr.dtype.kind == "f":
        if not np.isfinite(arr).all():
            raise _schema_error(f"{name} holds missing or infinite values")
        if (np.abs(arr) >= _EXACT).any() or (arr != np.round(arr)).any():
            raise _schema_error(
                f"{name} holds values that are not exact integer base units "
                "(fractional or beyond 2**53)"
            )
        return arr.astype(np.int64)
    out = np.empty(len(values), dtype=np.int64)
    try:
        for i, value in enumerate(values):
            if isinstance(value, bool) or value is None:
                raise ValueError(value)
            if isinstance(value, float):
                if not value.is_integer() or abs(value) >= _EXACT:
                    raise ValueError(value)
                value = int(value)
            out[i] = int(value.strip()) if isinstance(value, str) else int(value)
    except (ValueError, TypeError, OverflowError):
        raise _schema_error(
            f"{name} holds a value that is not an integer amount: {value!r}"
        ) from None
    return out


def timestamps(values: Sequence[Any], *, name: str = "timestamp") -> pd.DatetimeIndex:
    """Tz-aware UTC times from Unix seconds, milliseconds or ISO strings."""
    if len(values) == 0:
        return pd.DatetimeIndex([], dtype=schema.TIMESTAMP)
    arr = np.asarray(values)
    if arr.dtype.kind in "OUS":
        numbers = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce")
        if numbers.notna().all():
            arr = numbers.to_numpy()
        else:
            try:
                out = pd.to_datetime(pd.Series(values, dtype=object), utc=True, format="mixed")
            except (ValueError, TypeError) as exc:
                raise _schema_error(f"{name} holds values that are not times") from exc
            if out.isna().any():
                raise _schema_error(f"{name} holds missing times")
            return pd.DatetimeIndex(out).as_unit("ns")
    if arr.dtype.kind == "b":
        raise _schema_error(f"{name} holds booleans, not times")
    if arr.dtype.kind == "f":
        if not np.isfinite(arr).all():
            raise _schema_error(f"{name} holds missing times")
        ms = np.abs(arr) >= MS_THRESHOLD
        ns = np.round(arr * np.where(ms, 1e6, 1e9)).astype(np.int64)
    else:
        arr = arr.astype(np.int64)
        ms = np.abs(arr) >= MS_THRESHOLD
        ns = arr * np.where(ms, 1_000_000, 1_000_000_000)
    return pd.DatetimeIndex(ns.astype("datetime64[ns]")).tz_localize("UTC")


def addresses(values: Sequence[Any], chains: Any = None) -> pd.Series:
    """Addresses in their chain's own spelling (see :mod:`cctx_research.addressing`).

    ``chains`` gives each row's chain (domain ids); without it, hex is only
    made canonical.
    """
    return canonical_addresses(values, chains)


def tx_hashes(values: Sequence[Any]) -> pd.Series:
    """Transaction hashes: ``0x`` hex in lower case; others (base58, Cosmos) as given."""
    text = _strings(values)
    is_hex = text.str.startswith("0x").fillna(False)
    return text.where(~is_hex, text.str.lower())


def _ints(values: Sequence[Any], *, name: str) -> np.ndarray:
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64)
    fast = _plain_ints(values)
    if fast is not None:
        return fast
    numbers = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce")
    # past 2**53 a JSON number has lost digits (read as a float): never cast it
    if numbers.isna().any() or (numbers != np.round(numbers)).any() or (
        numbers.abs() >= _EXACT
    ).any():
        bad = next(
            v
            for v, n in zip(values, numbers, strict=True)
            if pd.isna(n) or n != round(n) or abs(n) >= _EXACT
        )
        raise _schema_error(f"{name} holds a value that is not an integer: {bad!r}")
    return numbers.to_numpy().astype(np.int64)


def _plain_ints(values: Sequence[Any]) -> np.ndarray | None:
    """Integers or digit strings (no nulls, no booleans) as int64 through Arrow; else None."""
    try:
        arr = pa.array(values)
        if not (pa.types.is_integer(arr.type) or pa.types.is_string(arr.type)):
            return None
        arr = pc.cast(arr, pa.int64())
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return None
    return None if arr.null_count else arr.to_numpy()


def _chains_by_unique(
    values: Sequence[Any] | pd.Series, name_of: Callable[[Any], str]
) -> pd.Categorical:
    """A chain categorical, naming each distinct value once (registry names first)."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        uniques, codes = unique_ints(values)  # domain ids: no objects
        uniques = uniques.tolist()
    else:
        if not isinstance(values, pd.Series):
            values = pd.Series(values, dtype=object)
        codes, uniques = pd.factorize(values, use_na_sentinel=True)
    names = [name_of(u) for u in uniques]
    known = chains.known_names()
    categories = known + sorted(set(names) - set(known))
    position = {name: i for i, name in enumerate(categories)}
    mapping = np.array([position[n] for n in names] + [-1], dtype=np.int64)
    return pd.Categorical.from_codes(mapping[codes], dtype=schema.chain_dtype(tuple(categories)))


def chain_names_from_domains(domains: np.ndarray) -> pd.Categorical:
    """Chain names of domain ids (unknown: ``"domain-<id>"``)."""
    return _chains_by_unique(np.asarray(domains), lambda d: chains.chain_name(int(d)))


def chain_names_from_ids(values: Sequence[Any]) -> pd.Categorical:
    """Chain names of interface chain ids (``"8453"``; unknown: ``"chain-<id>"``)."""
    return _chains_by_unique(values, lambda v: chains.name_from_chain_id(str(v)))


def _strings(values: Sequence[Any]) -> pd.Series:
    return pd.Series([None if v is None else str(v) for v in values], dtype=schema.STRING)


def _bools(values: Sequence[Any], *, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype.kind == "b":
        return arr
    out = []
    for v in values:
        if isinstance(v, bool):
            out.append(v)
        elif isinstance(v, str) and v.lower() in ("true", "false"):
            out.append(v.lower() == "true")
        elif v is None:
            out.append(False)
        else:
            raise _schema_error(f"{name} holds a value that is not a boolean: {v!r}")
    return np.array(out, dtype=bool)


def coerce(frame: pd.DataFrame, kind: str) -> pd.DataFrame:
    """``frame`` with exactly the columns of ``kind``, in order, at their dtypes."""
    if frame.empty:
        out = schema.empty(kind)
        out.attrs = dict(frame.attrs)
        return out
    data = {}
    for col, dtype in schema.dtypes(kind).items():
        s = frame[col]
        if isinstance(dtype, pd.CategoricalDtype):
            data[col] = (
                s
                if isinstance(s.dtype, pd.CategoricalDtype)
                else pd.Series(_chains_by_unique(s, str), index=s.index)
            )
        elif s.dtype != dtype:
            data[col] = s.astype(dtype)
        else:
            data[col] = s
    out = pd.DataFrame(data, index=frame.index)
    out.attrs = dict(frame.attrs)
    return out


def _scale(raw: np.ndarray, decimals: int) -> np.ndarray:
    return raw / 10**decimals


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
        key: _column(records, *spellings, required=key in _REQUIRED)
        for key, spellings in _SUMMARY_FIELDS.items()
    }


def _summary_columns(records: Sequence[dict[str, Any]], decimals: int) -> dict[str, Any]:
    fields = _fields(records)
    raw = raw_amounts(fields["amount"])
    src = _ints(fields["sourceDomain"], name="sourceDomain")
    dst = _ints(fields["destinationDomain"], name="destinationDomain")
    return {
        "transfer_id": _strings(fields["id"]),
        "timestamp": timestamps(fields["timestamp"]),
        "amount": _scale(raw, decimals),
        "amount_raw": raw,
        "is_completed": _bools(fields["isCompleted"], name="isCompleted"),
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
            "transaction_type": _strings([body.get("transactionType")]).array,
            **{k: _plain(v) for k, v in cols.items()},
            "block_number": _ints([block if block is not None else -1], name="blockNumber"),
            "chain_id": _strings([tx.get("chainId")]).array,
            "record_id": _strings([tx.get("_id")]).array,
            "entity_id": _strings([tx.get("entityId")]).array,
            "instance_id": _strings([tx.get("instanceId")]).array,
        }
    )
    return coerce(frame, "transaction")


def received(items: Sequence[dict[str, Any]], *, address: str, decimals: int = 6) -> pd.DataFrame:
    """Recipient listing items -> ``received`` frame."""
    if not items:
        return schema.empty("received")
    raw = raw_amounts(_column(items, "amount", required=True))
    frame = pd.DataFrame(
        {
            "transfer_id": _strings(_column(items, "id", required=True)).array,
            "tx_hash": tx_hashes(_column(items, "transactionHash")).array,
            "transaction_type": _strings(_column(items, "transactionType")).array,
            "timestamp": timestamps(_column(items, "timestamp", required=True)),
            "amount": _scale(raw, decimals),
            "amount_raw": raw,
            "source_chain": chain_names_from_ids(_column(items, "sourceChain")),
            "destination_chain": chain_names_from_ids(_column(items, "destinationChain")),
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
    mint_count, burn_count = _ints([body["mintCount"], body["burnCount"]], name="counts")
    total_count = body.get("totalCount")
    total_count = (
        int(_ints([total_count], name="totalCount")[0])
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
    raw = raw_amounts(_column(items, "totalVolume", required=True), name="totalVolume")
    frame = pd.DataFrame(
        {
            "rank": np.arange(1, len(items) + 1, dtype=np.int64),
            "address": addresses(_column(items, "address", required=True)).array,
            "volume": _scale(raw, decimals),
            "volume_raw": raw,
            "transaction_count": _ints(_column(items, "transactionCount"), name="transactionCount"),
        }
    )
    return coerce(frame, "top_addresses")
