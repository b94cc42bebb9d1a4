"""Loading the user's own data for the service (``cctx-research serve --data``).

A data file is Parquet (``.parquet``/``.pq``), CSV (``.csv``, optionally
compressed: ``.csv.gz`` ...) or JSON records (``.json``, what ``cctx-research
fetch`` writes) holding either

* the canonical ``"ledger"`` kind (see :mod:`cctx_research.schema`): one row
  per transfer with its burn side and its mint side; or
* the canonical ``"transfers"`` kind (what ``Client.transfers`` returns).
  Such rows carry one time only, so a completed row is taken as burned and
  minted at ``timestamp`` and a pending row as burned then and never
  minted. They carry no transaction hashes or block numbers: **hash
  look-ups of such data find nothing**, the recipient listing shows
  ``transactionHash`` ``""``, and block numbers are -1.

Values are coerced to the canonical dtypes (CSV cells are read as text):
timestamps as ISO 8601 or Unix seconds, booleans as ``true``/``false``/``1``
/``0``. Anything that does not fit raises :class:`~cctx_research.errors.DataError`
naming the column and a bad value.

Times are kept to the second, as the interface carries them: a time with a
fraction of a second is refused, naming its row, rather than silently cut.
The provenance of the file (Parquet metadata, or the ``<file>.meta.json``
sidecar ``fetch`` writes beside CSV and JSON) carries over: synthetic data
served again stays marked synthetic.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from .. import schema
from ..errors import DataError
from ..provenance import Provenance, attach

__all__ = ["load_ledger", "to_ledger"]

logger = logging.getLogger(__name__)

_TRANSFERS_REQUIRED = (
    "transfer_id",
    "timestamp",
    "is_completed",
    "source_domain",
    "destination_domain",
    "mint_recipient",
    "message_sender",
    "burn_token",
    "destination_caller",
    "destination_token_messenger",
)
_STRINGS = (
    "transfer_id",
    "burn_tx_hash",
    "mint_tx_hash",
    "message_sender",
    "mint_recipient",
    "burn_token",
    "destination_caller",
    "destination_token_messenger",
)
_LOWERCASE = frozenset(_STRINGS) - {"transfer_id"}
_OPTIONAL_IN_LEDGER = frozenset({"mint_timestamp", "mint_tx_hash", "mint_block"})


def _bad(column: str, values: pd.Series, mask: pd.Series | np.ndarray, what: str) -> DataError:
    example = values[np.asarray(mask, dtype=bool)].iloc[0]
    return DataError(
        f"column {column!r} has {int(np.sum(mask))} value(s) that are not {what}, "
        f"e.g. {str(example)[:80]!r}"
    )


def _integers(frame: pd.DataFrame, column: str, *, missing: int | None = None) -> pd.Series:
    raw = frame[column]
    numbers = pd.to_numeric(raw, errors="coerce")
    absent = raw.isna()
    invalid = (numbers.isna() & ~absent) | (numbers.notna() & (numbers % 1 != 0))
    if invalid.any():
        raise _bad(column, raw, invalid, "integers")
    if absent.any():
        if missing is None:
            raise DataError(f"column {column!r} has missing values")
        numbers = numbers.fillna(missing)
    return numbers.astype(np.int64)


def _nullable_integers(frame: pd.DataFrame, column: str) -> pd.Series:
    raw = frame[column]
    numbers = pd.to_numeric(raw, errors="coerce")
    invalid = (numbers.isna() & raw.notna()) | (numbers.notna() & (numbers % 1 != 0))
    if invalid.any():
        raise _bad(column, raw, invalid, "integers")
    return numbers.astype(schema.NULLABLE_INT)


def _times(frame: pd.DataFrame, column: str, *, optional: bool = False) -> pd.Series:
    raw = frame[column]
    absent = raw.isna() | (raw.astype("string").str.strip() == "")
    if isinstance(raw.dtype, pd.DatetimeTZDtype):
        out = raw.dt.tz_convert("UTC")
    elif pd.api.types.is_datetime64_dtype(raw.dtype):
        out = raw.dt.tz_localize("UTC")
    else:
        text = raw.astype("string").str.strip()
        numeric = pd.to_numeric(text, errors="coerce")
        as_seconds = pd.to_datetime(numeric, unit="s", utc=True, errors="coerce")
        as_text = pd.to_datetime(
            text.where(numeric.isna()), utc=True, errors="coerce", format="ISO8601"
        )
        out = as_seconds.fillna(as_text) if numeric.notna().any() else as_text
    invalid = out.isna() & ~absent
    if invalid.any():
        raise _bad(column, raw, invalid, "ISO 8601 times or Unix seconds")
    if absent.any() and not optional:
        raise DataError(f"column {column!r} has missing values")
    out = out.astype(schema.TIMESTAMP)
    fraction = out.notna() & (out.dt.microsecond.ne(0) | out.dt.nanosecond.ne(0))
    if fraction.any():
        row = int(np.flatnonzero(fraction.to_numpy())[0])
        raise DataError(
            f"column {column!r}, row {row + 1}: {raw.iloc[row]!r} has a fraction of a second; "
            "the interface carries whole seconds, so this time cannot be served exactly. "
            f"Round the times to whole seconds first ({int(fraction.sum())} rows have fractions)"
        )
    return out


def _booleans(frame: pd.DataFrame, column: str) -> pd.Series:
    raw = frame[column]
    if pd.api.types.is_bool_dtype(raw.dtype) and not raw.isna().any():
        return raw.astype(bool)
    text = raw.astype("string").str.strip().str.lower()
    mapping = {"true": True, "false": False, "1": True, "0": False, "yes": True, "no": False}
    out = text.map(mapping)
    invalid = out.isna()
    if invalid.any():
        raise _bad(column, raw, invalid, "booleans (true/false)")
    return out.astype(bool)


def _strings(frame: pd.DataFrame, column: str) -> pd.Series:
    out = frame[column].astype(schema.STRING).str.strip()
    out = out.mask(out == "")
    return out.str.lower() if column in _LOWERCASE else out


def to_ledger(frame: pd.DataFrame) -> pd.DataFrame:
    """Coerce a frame of kind ``"ledger"`` or ``"transfers"`` to a typed ledger.

    Parameters
    ----------
    frame : pandas.DataFrame
        Columns of either kind, at any dtype that holds the right values
        (text from a CSV file included). Extra columns are dropped.

    Returns
    -------
    pandas.DataFrame
        Kind ``"ledger"``, validated.

    Raises
    ------
    DataError
        Naming the missing columns (of both kinds) or the column with
        unparsable values and an example of them.
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"expected a pandas DataFrame, got {type(frame).__name__}")
    ledger_cols = [c for c in schema.columns("ledger") if c not in schema.LEDGER_V2]
    missing_ledger = [c for c in ledger_cols if c not in frame.columns]
    missing_transfers = [c for c in _TRANSFERS_REQUIRED if c not in frame.columns]
    amount_missing = "amount_raw" not in frame.columns and "amount" not in frame.columns
    if not missing_ledger:
        return _from_ledger(frame)
    if not missing_transfers and not amount_missing:
        return _from_transfers(frame)
    transfers_need = missing_transfers + (["amount_raw (or amount)"] if amount_missing else [])
    raise DataError(
        "the data is neither a 'ledger' nor a 'transfers' table: "
        f"missing for 'ledger': {', '.join(missing_ledger)}; "
        f"missing for 'transfers': {', '.join(transfers_need)}",
        hint="see cctx_research.schema.columns('ledger') and columns('transfers')",
    )


def _from_ledger(frame: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame(index=pd.RangeIndex(len(frame)))
    frame = frame.reset_index(drop=True)
    for column in _STRINGS:
        out[column] = _strings(frame, column)
    for column in ("source_domain", "destination_domain", "amount_raw", "burn_block"):
        out[column] = _integers(frame, column)
    out["mint_block"] = _integers(frame, "mint_block", missing=-1)
    out["burn_timestamp"] = _times(frame, "burn_timestamp")
    out["mint_timestamp"] = _times(frame, "mint_timestamp", optional=True)
    for column in schema.LEDGER_V2:
        if column not in frame.columns:
            continue
        if column in ("nonce", "hook_data"):
            out[column] = _strings(frame, column)
        else:
            out[column] = _nullable_integers(frame, column)
    schema.complete(out, "ledger")
    return schema.validate(out[schema.columns("ledger")], "ledger")


def _from_transfers(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.reset_index(drop=True)
    n = len(frame)
    ts = _times(frame, "timestamp")
    completed = _booleans(frame, "is_completed")
    if "amount_raw" in frame.columns:
        amount_raw = _integers(frame, "amount_raw")
    else:
        amount = pd.to_numeric(frame["amount"], errors="coerce")
        if amount.isna().any():
            raise _bad("amount", frame["amount"], amount.isna(), "numbers")
        amount_raw = (amount * 1_000_000).round().astype(np.int64)
    out = pd.DataFrame(
        {
            "transfer_id": _strings(frame, "transfer_id"),
            "source_domain": _integers(frame, "source_domain"),
            "destination_domain": _integers(frame, "destination_domain"),
            "amount_raw": amount_raw,
            "burn_timestamp": ts,
            "mint_timestamp": ts.where(completed),
            "burn_tx_hash": pd.Series([pd.NA] * n, dtype=schema.STRING),
            "mint_tx_hash": pd.Series([pd.NA] * n, dtype=schema.STRING),
            "burn_block": np.full(n, -1, dtype=np.int64),
            "mint_block": np.full(n, -1, dtype=np.int64),
            **{
                c: _strings(frame, c)
                for c in (
                    "message_sender",
                    "mint_recipient",
                    "burn_token",
                    "destination_caller",
                    "destination_token_messenger",
                )
            },
        }
    )
    out["mint_timestamp"] = out["mint_timestamp"].astype(schema.TIMESTAMP)
    schema.complete(out, "ledger")
    return schema.validate(out[schema.columns("ledger")], "ledger")


def _read_json(path: Path) -> pd.DataFrame:
    """JSON records, every cell kept as written (times as text, integers exact)."""
    import json

    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise DataError(f"{path.name!r} must hold a JSON array of records (objects)")
    return pd.DataFrame.from_records(data)


def load_ledger(path: str | Path) -> pd.DataFrame:
    """Read a Parquet or CSV file of kind ``"ledger"`` or ``"transfers"`` as a ledger.

    Parameters
    ----------
    path : str or pathlib.Path
        ``.parquet``/``.pq`` or ``.csv`` (``.csv.gz``, ``.csv.zst`` ... too).

    Returns
    -------
    pandas.DataFrame
        Kind ``"ledger"``; its provenance names the file.

    Raises
    ------
    DataError
        If the file is missing, unreadable, of another format, or its
        columns or values do not fit (see :func:`to_ledger`).
    """
    path = Path(path).expanduser()
    if not path.is_file():
        raise DataError(f"no such data file: {str(path)!r}")
    suffixes = [s.lower() for s in path.suffixes]
    try:
        if suffixes and suffixes[-1] in (".parquet", ".pq"):
            raw = pd.read_parquet(path)
        elif ".csv" in suffixes:
            raw = pd.read_csv(path, dtype=str, keep_default_na=True)
        elif suffixes and suffixes[-1] == ".json":
            raw = _read_json(path)
        else:
            raise DataError(
                f"cannot tell the format of {path.name!r}: name it .parquet, .csv or .json"
            )
    except DataError:
        raise
    except Exception as exc:  # pyarrow, csv and OS errors alike: the file is unreadable
        raise DataError(f"cannot read {path.name!r}: {type(exc).__name__}: {exc}") from exc
    ledger = to_ledger(raw)
    from ..export import read_sidecar
    from ..provenance import provenance

    record = read_sidecar(path) or (provenance(raw) if raw.attrs else None)
    synthetic = bool(record is not None and record.synthetic)
    source = f"{path}" if record is None else f"{path} (from {record.source})"
    attach(
        ledger,
        Provenance(source=source, synthetic=synthetic, operation="load", files=(str(path),)),
    )
    logger.info("loaded %d transfers from %s", len(ledger), path)
    return ledger
