"""What the actor analyses read of a ledger, in pandas or lazily in its engine.

The checks and errors are shared by :mod:`.actors` and :mod:`.movements`: a
frame that is no ledger, or lacks a column the analysis needs, is named
with what to pass instead; optional columns a source lacks (the V2 fields,
``relayer``, ``burn_tx_from`` ...) are read as null.

Examples
--------
>>> import pandas as pd
>>> end_user(pd.DataFrame({"message_sender": ["0xaa"]})).tolist()
['0xaa']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from .. import labels as labels_
from .. import schema
from .._codes import unique_ints
from ..errors import DataError
from . import _common, actors_lazy, engines
from .inputs import no_burn_times

__all__ = [
    "OPTIONAL",
    "checked_names",
    "end_user",
    "end_user_counts",
    "labels_of",
    "ledger_columns",
    "ledger_lazy",
    "nulls",
    "route_codes",
    "signed_by",
]

OPTIONAL: tuple[str, ...] = schema.optional_columns("ledger")
"""Ledger columns a source may lack: read as null."""


def checked_names(
    ledger: Any, columns: Sequence[str], *, what: str
) -> tuple[list[str], set[str], Any]:
    """The wanted columns, the ledger's column names (checked, see :func:`ledger_columns`) and,
    for an engine's frame, its narwhals LazyFrame (the schema is asked once: DuckDB answers
    with a query)."""
    wanted = list(dict.fromkeys(columns))
    lf = None
    if engines.is_pandas(ledger):
        names = set(ledger.columns)
    elif engines.recognised(ledger):
        lf = engines.lazy(ledger, "ledger", columns=())
        names = set(lf.collect_schema().names())
    else:
        raise TypeError(
            f"{what} takes a ledger: {engines.SUPPORTED} of kind 'ledger', "
            f"got {type(ledger).__name__}"
        )
    if "burn_timestamp" not in names and "timestamp" in names:
        raise no_burn_times(what)
    missing = [c for c in wanted if c not in OPTIONAL and c not in names]
    if missing:
        raise DataError(
            f"{what} needs the ledger columns {missing}, which this frame lacks",
            hint="see cctx_research.schema.columns('ledger')",
        )
    return wanted, names, lf


def ledger_columns(ledger: Any, columns: Sequence[str], *, what: str) -> pd.DataFrame:
    """The ``columns`` of a ledger as pandas; optional ones it lacks come back null.

    A pandas frame is used as it is (no copy unless a column must be
    added); a Polars, DuckDB or Dask frame has only these columns collected.

    Raises
    ------
    TypeError
        If ``ledger`` is no frame an engine recognises.
    DataError
        Naming the required ledger columns it lacks.
    """
    wanted, names, lf = checked_names(ledger, columns, what=what)
    if lf is None:
        frame = ledger
    else:
        frame = engines.collect(lf.select([c for c in wanted if c in names]))
        frame = _common.typed(frame, "ledger")
    absent = [c for c in wanted if c not in frame.columns]
    if absent:
        frame = frame.copy(deep=False) if frame is ledger else frame
        types = schema.dtypes("ledger")
        for col in absent:
            frame[col] = pd.Series(nulls(len(frame), types[col]), index=frame.index)
    return frame


def nulls(n: int, dtype: Any) -> Any:
    """``n`` nulls of a ledger column's dtype, built without a value per row."""
    if dtype == schema.STRING:
        return pd.array(pa.nulls(n, pa.large_string()), dtype=schema.STRING)
    if dtype == schema.NULLABLE_INT:
        return pd.arrays.IntegerArray(np.zeros(n, dtype="int64"), np.ones(n, dtype=bool))
    return pd.array([pd.NA] * n, dtype=dtype)


def end_user(frame: pd.DataFrame) -> pd.Series:
    """The end user of each transfer: who signed its burn transaction, else the depositor.

    The burn transaction's sender (``burn_tx_from``: its ``from``) is the
    account behind a transfer even when a contract deposits for it (an
    integrator's router, a forwarding contract); sources that give it are
    transaction receipts and Dune's decoded tables (``eth_getLogs`` and
    cryo's ``logs`` dataset do not). Where it is unknown, the depositor
    (``message_sender``) stands in.

    Examples
    --------
    >>> frame = pd.DataFrame({"message_sender": ["0xaa", "0xbb"],
    ...                       "burn_tx_from": [None, "0xcc"]})
    >>> end_user(frame).tolist()
    ['0xaa', '0xcc']
    """
    sender = frame["message_sender"].astype(schema.STRING)
    if "burn_tx_from" not in frame.columns:
        return sender
    origin = frame["burn_tx_from"].astype(schema.STRING)
    if origin.isna().all():
        return sender
    return origin.fillna(sender)


def ledger_lazy(ledger: Any, columns: Sequence[str], *, what: str) -> Any:
    """The ``columns`` of a Polars, DuckDB or Dask ledger, lazily (a narwhals LazyFrame).

    Optional columns it lacks are null; nothing is computed yet. The
    checks and errors are those of :func:`ledger_columns`.
    """
    wanted, names, lf = checked_names(ledger, columns, what=what)
    return actors_lazy.with_nulls(lf.select([c for c in wanted if c in names]), wanted, names)


def labels_of(labels: Any) -> labels_.Labels | None:
    """The label table ``labels=`` asks for: the bundled one, yours over it, or None."""
    if labels is False:
        return None
    if labels is True:
        return labels_.labels()
    return labels_.labels(labels)


def route_codes(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Per-row indexes of source and destination domains into ``domains`` (sorted)."""
    src = frame["source_domain"].to_numpy(dtype="int64")
    dst = frame["destination_domain"].to_numpy(dtype="int64")
    # domains are small integers: counted, not sorted (see cctx_research._codes)
    domains, codes = unique_ints(np.concatenate([src, dst]))
    codes = codes.ravel()
    return codes[: len(src)], codes[len(src) :], domains.tolist()


def end_user_counts(frame: pd.DataFrame, burned: np.ndarray, codes: np.ndarray, n: int) -> Any:
    """Distinct burn-transaction senders per code; null for a code with none known."""
    who, _ = pd.factorize(frame["burn_tx_from"].astype(schema.STRING)[burned])
    known = who >= 0
    count = np.zeros(n, dtype="int64")
    if known.any():
        pairs = np.unique(codes[known].astype("int64") * (who.max() + 1) + who[known])
        count = np.bincount(pairs // (who.max() + 1), minlength=n).astype("int64")
    return pd.arrays.IntegerArray(count, np.bincount(codes[known], minlength=n) == 0)


def signed_by(
    frame: pd.DataFrame, burned: np.ndarray, codes: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per code: burns signed by the depositor itself, and burns signed by another account
    (unknown signers count in neither)."""
    signer = frame["burn_tx_from"].astype(schema.STRING)[burned]
    sender = frame["message_sender"].astype(schema.STRING)[burned]
    known = signer.notna().to_numpy(dtype=bool)
    same = (signer == sender).fillna(False).to_numpy(dtype=bool)
    own = np.bincount(codes[known & same], minlength=n).astype("int64")
    other = np.bincount(codes[known & ~same], minlength=n).astype("int64")
    return own, other
