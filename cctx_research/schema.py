"""Canonical frames: column names, dtypes, and :func:`validate`.

Every frame the toolkit returns or accepts follows one of these kinds.
Columns are snake_case; ``timestamp`` is tz-aware UTC; amounts are exact in
``amount_raw`` (integer base units) and in token units in ``amount``
(``amount_raw / 10**decimals``); chain names are categoricals whose
categories are the registry's names in domain order plus any unknown chain
seen; addresses are spelled in the format of the chain they live on
(:data:`ADDRESS_CHAINS` says which chain that is for each column): ``0x`` +
40 hex digits, lowercase, on EVM chains, base58 on Solana, bech32
(``noble1...``) on Noble, and so on (:mod:`cctx_research.addressing`),
whichever source a frame came from. A destination caller of zero (anyone
may relay) is the destination chain's zero address (``0x`` + 40 zeros on
EVM chains, ``1`` x 32 on Solana; :data:`cctx_research.addressing.ZERO_ADDRESSES`),
never null: every address column of a transfer is filled.
:func:`cctx_research.addressing.as_bytes32` gives the interface's bytes32
form of every address column on request, and
:func:`~cctx_research.addressing.as_chain_format` reads it back.

Kinds
-----
transfers
    One row per CCTP transfer from the mint listing.
transaction
    The detail of one burn or mint transaction (a row, or a Series).
received
    Transactions received by an address.
volume
    Mint and burn volume and counts of windows (``volume_history``; one
    row of it is the Series ``Client.volume`` returns).
top_addresses
    Addresses ranked by volume.
ledger
    One row per transfer with both its burn and its mint side: what the
    local service serves (the sample generator's output, or ``--data``) and
    what ``load`` returns. The CCTP V2 fields (``cctp_version``, ``nonce``,
    ``max_fee_raw``, ``fee_raw``, ``min_finality_threshold``,
    ``finality_threshold_executed``, ``hook_data``) are nullable: a source
    that lacks one leaves it null (:func:`complete` adds them), and so is
    ``pairing`` (:data:`LEDGER_PAIRING`: how burn and mint were joined).

Nullable integer columns (``Int64``) hold what a source may lack; the
provenance record is :mod:`cctx_research.provenance`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from . import chains
from . import provenance as _provenance
from .errors import DataError
from .provenance import Provenance

__all__ = [
    "ADDRESS_CHAINS",
    "ADDRESS_COLUMNS",
    "KINDS",
    "LEDGER_PAIRING",
    "LEDGER_V2",
    "LINKED",
    "NULLABLE_INT",
    "STRING",
    "chain_categorical",
    "chain_dtype",
    "columns",
    "complete",
    "dtypes",
    "empty",
    "optional_columns",
    "provenance",
    "validate",
]

STRING = pd.StringDtype("pyarrow")
NULLABLE_INT = pd.Int64Dtype()
TIMESTAMP = pd.DatetimeTZDtype("ns", "UTC")
CHAIN = "chain"  # marker: categorical of chain names

_TRANSFERS: dict[str, Any] = {
    "transfer_id": STRING,
    "timestamp": TIMESTAMP,
    "amount": np.dtype("float64"),
    "amount_raw": np.dtype("int64"),
    "is_completed": np.dtype("bool"),
    "source_domain": np.dtype("int64"),
    "destination_domain": np.dtype("int64"),
    "source_chain": CHAIN,
    "destination_chain": CHAIN,
    "mint_recipient": STRING,
    "message_sender": STRING,
    "burn_token": STRING,
    "destination_caller": STRING,
    "destination_token_messenger": STRING,
}

_TRANSACTION: dict[str, Any] = {
    "tx_hash": STRING,
    "transaction_type": STRING,
    **_TRANSFERS,
    "block_number": np.dtype("int64"),
    "chain_id": STRING,
    "record_id": STRING,
    "entity_id": STRING,
    "instance_id": STRING,
}

_RECEIVED: dict[str, Any] = {
    "transfer_id": STRING,
    "tx_hash": STRING,
    "transaction_type": STRING,
    "timestamp": TIMESTAMP,
    "amount": np.dtype("float64"),
    "amount_raw": np.dtype("int64"),
    "source_chain": CHAIN,
    "destination_chain": CHAIN,
    "address": STRING,
}

_VOLUME: dict[str, Any] = {
    "timestamp": TIMESTAMP,  # start of the window or bucket
    "end": TIMESTAMP,
    "mint_volume": np.dtype("float64"),
    "burn_volume": np.dtype("float64"),
    "total_volume": np.dtype("float64"),
    "mint_volume_raw": np.dtype("int64"),
    "burn_volume_raw": np.dtype("int64"),
    "mint_count": np.dtype("int64"),
    "burn_count": np.dtype("int64"),
    "total_count": np.dtype("int64"),
}

_TOP_ADDRESSES: dict[str, Any] = {
    "rank": np.dtype("int64"),
    "address": STRING,
    "volume": np.dtype("float64"),
    "volume_raw": np.dtype("int64"),
    "transaction_count": np.dtype("int64"),
}

_LEDGER: dict[str, Any] = {
    "transfer_id": STRING,
    "source_domain": np.dtype("int64"),
    "destination_domain": np.dtype("int64"),
    "amount_raw": np.dtype("int64"),
    "burn_timestamp": TIMESTAMP,
    "mint_timestamp": TIMESTAMP,  # NaT: never minted
    "burn_tx_hash": STRING,
    "mint_tx_hash": STRING,  # <NA>: never minted
    "burn_block": np.dtype("int64"),
    "mint_block": np.dtype("int64"),  # -1: never minted
    "message_sender": STRING,
    "mint_recipient": STRING,
    "burn_token": STRING,
    "destination_caller": STRING,
    "destination_token_messenger": STRING,
    # CCTP V2 and pairing fields: null where the source lacks them
    "cctp_version": NULLABLE_INT,  # 1 or 2
    "nonce": STRING,  # V1: decimal uint64; V2: 0x + 64 hex (bytes32)
    "max_fee_raw": NULLABLE_INT,  # V2 burn: the most the sender would pay
    "fee_raw": NULLABLE_INT,  # V2 mint: the fee collected
    "min_finality_threshold": NULLABLE_INT,  # V2 burn: 1000 fast, 2000 standard
    "finality_threshold_executed": NULLABLE_INT,  # V2 mint: at what finality it was attested
    "hook_data": STRING,  # V2: hex, "0x" when empty
    "pairing": STRING,  # how burn and mint were joined (see LEDGER_PAIRING)
    "link_group_size": NULLABLE_INT,  # identical V2 transfers sharing a content key (else null)
    "token": STRING,  # the burned token's symbol (USDC, EURC, USYC), null when unknown
    "relayer": STRING,  # who called receiveMessage (MessageReceived's caller), null when unknown
    "mint_recipient_owner": STRING,  # owner of a token-account mint recipient (Solana), else null
    "burn_tx_from": STRING,  # the burn transaction's sender (its `from`), where the source gives it
}

LEDGER_V2: tuple[str, ...] = (
    "cctp_version",
    "nonce",
    "max_fee_raw",
    "fee_raw",
    "min_finality_threshold",
    "finality_threshold_executed",
    "hook_data",
)
"""The ledger's nullable columns: a source may lack them (:func:`complete` adds them)."""

LEDGER_PAIRING: dict[str, str] = {
    "exact": "V1 burn and mint joined on (source domain, nonce)",
    "attested": "V2 burn and mint joined on the attested nonce (a source gave the burn's nonce)",
    "content": "V2 burn and mint joined on the fields both carry, seen once on each side",
    "content_ambiguous": "one of several identical V2 transfers (link_group_size): each mint "
    "took the earliest free burn before it; volumes are right, latency is uncertain",
    "source": "paired by the source (a Dune flows row, XChainDataGen's cross-chain table)",
    "pending": "burn with no mint in the data (not minted yet, or the mint was not loaded)",
    "unpaired": "V2 burn among identical transfers, kept unlinked (load(..., ambiguous='keep'))",
    "mint_only": "mint whose burn is not in the data (burn side null, burn_block -1)",
}
"""Values of the ledger's optional ``pairing`` column and what each means.

Null for ledgers that do not say (the synthetic sample, a ``transfers``
file). A ``mint_only`` row has a null burn side: ``burn_timestamp`` NaT,
``burn_tx_hash`` null, ``burn_block`` -1. See :mod:`cctx_research.ingest.ledger.linking`.
"""

LINKED: tuple[str, ...] = ("exact", "attested", "content", "content_ambiguous", "source")
"""The ``pairing`` values of a transfer whose burn and mint are both in the ledger."""

_OPTIONAL: dict[str, tuple[str, ...]] = {
    "ledger": (
        *LEDGER_V2,
        "pairing",
        "link_group_size",
        "token",
        "relayer",
        "mint_recipient_owner",
        "burn_tx_from",
    )
}

ADDRESS_COLUMNS: tuple[str, ...] = (
    "message_sender",
    "mint_recipient",
    "burn_token",
    "destination_caller",
    "destination_token_messenger",
)
"""The address columns of the ``transfers`` and ``ledger`` kinds."""

ADDRESS_CHAINS: dict[str, str] = {
    "message_sender": "source",
    "burn_token": "source",
    "burn_tx_from": "source",
    "mint_recipient": "destination",
    "destination_caller": "destination",
    "destination_token_messenger": "destination",
    "relayer": "destination",
    "mint_recipient_owner": "destination",
}
"""Which chain spells each address column of a ``transfers``, ``transaction`` or ``ledger``
frame: the burn's (``"source"``: ``source_domain``) or the mint's (``"destination"``)."""

KINDS: dict[str, dict[str, Any]] = {
    "transfers": _TRANSFERS,
    "transaction": _TRANSACTION,
    "received": _RECEIVED,
    "volume": _VOLUME,
    "top_addresses": _TOP_ADDRESSES,
    "ledger": _LEDGER,
}


def _spec(kind: str) -> dict[str, Any]:
    if not isinstance(kind, str):
        raise TypeError(f"kind must be a str, one of {sorted(KINDS)}")
    try:
        return KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown frame kind {kind!r}; use one of {sorted(KINDS)}") from None


def columns(kind: str) -> list[str]:
    """Column names of a kind, in canonical order."""
    return list(_spec(kind))


def chain_categorical(values: Iterable[str]) -> pd.Categorical:
    """A categorical of chain names with the registry's names first.

    Unknown names (``"domain-42"``) are appended as extra categories, so they
    are kept, never turned into NaN.
    """
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"values must be an iterable of chain names, got {type(values).__name__}")
    values = pd.Series(values, dtype=object) if not isinstance(values, pd.Series) else values
    known = chains.known_names()
    extra = sorted(set(values.dropna().astype(str)) - set(known))
    return pd.Categorical(values, categories=known + extra)


def dtypes(kind: str) -> dict[str, Any]:
    """Column -> dtype of a kind (chain columns as a categorical of known names)."""
    chain = chain_dtype(tuple(chains.known_names()))
    return {col: (chain if dt is CHAIN else dt) for col, dt in _spec(kind).items()}


@functools.lru_cache(maxsize=64)
def chain_dtype(names: tuple[str, ...]) -> pd.CategoricalDtype:
    """The categorical dtype of these chain names, built once (a dtype checks its names)."""
    return pd.CategoricalDtype(list(names))


def empty(kind: str) -> pd.DataFrame:
    """An empty frame with every column of ``kind`` at its canonical dtype."""
    return pd.DataFrame({c: pd.Series([], dtype=d) for c, d in dtypes(kind).items()})


def optional_columns(kind: str) -> tuple[str, ...]:
    """The columns of ``kind`` a source may lack (:func:`complete` adds them, null).

    >>> "token" in optional_columns("ledger"), optional_columns("transfers")
    (True, ())
    """
    _spec(kind)
    return _OPTIONAL.get(kind, ())


def complete(frame: pd.DataFrame, kind: str) -> pd.DataFrame:
    """Add the optional columns of ``kind`` that ``frame`` lacks, all null, in place.

    Only the optional columns (:func:`optional_columns`) are added; a
    missing required column is still an error for :func:`validate`.

    Examples
    --------
    >>> ledger = empty("ledger").drop(columns=["nonce", "fee_raw"])
    >>> "fee_raw" in complete(ledger, "ledger").columns
    True
    """
    types = dtypes(kind)
    for col in _OPTIONAL.get(kind, ()):
        if col not in frame.columns:
            frame[col] = pd.Series(pd.NA, index=frame.index, dtype=types[col])
    return frame


def _dtype_ok(series: pd.Series, expected: Any) -> bool:
    actual = series.dtype
    if expected is CHAIN:
        return isinstance(actual, pd.CategoricalDtype)
    if isinstance(expected, pd.DatetimeTZDtype):
        return isinstance(actual, pd.DatetimeTZDtype) and str(actual.tz) == "UTC"
    if isinstance(expected, pd.StringDtype):
        return pd.api.types.is_string_dtype(actual) and not isinstance(actual, pd.CategoricalDtype)
    if expected == np.dtype("bool"):
        return pd.api.types.is_bool_dtype(actual)
    if expected == np.dtype("int64") or isinstance(expected, pd.Int64Dtype):
        return pd.api.types.is_integer_dtype(actual)
    if expected == np.dtype("float64"):
        return pd.api.types.is_float_dtype(actual)
    return actual == expected


def _describe(expected: Any) -> str:
    if expected is CHAIN:
        return "category (chain names)"
    if isinstance(expected, pd.DatetimeTZDtype):
        return "datetime64[ns, UTC]"
    if isinstance(expected, pd.StringDtype):
        return "string"
    if isinstance(expected, pd.Int64Dtype):
        return "Int64 (nullable integer)"
    return str(expected)


def validate(frame: pd.DataFrame, kind: str, *, extra: bool = True) -> pd.DataFrame:
    """Check that ``frame`` follows the canonical schema of ``kind``.

    Parameters
    ----------
    frame : pandas.DataFrame
    kind : str
        One of :data:`KINDS`.
    extra : bool, default True
        Allow columns beyond the canonical ones.

    Returns
    -------
    pandas.DataFrame
        ``frame`` itself, so calls can be chained.

    Raises
    ------
    TypeError
        If ``frame`` is not a DataFrame.
    DataError
        Naming every missing or mistyped column, with the expected dtype.

    Examples
    --------
    >>> validate(empty("transfers"), "transfers").shape
    (0, 14)
    """
    spec = _spec(kind)
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"expected a pandas DataFrame of kind {kind!r}, got {type(frame).__name__}")
    problems = []
    missing = [c for c in spec if c not in frame.columns]
    if missing:
        problems.append("missing columns: " + ", ".join(missing))
    mistyped = [
        f"{c} is {frame[c].dtype}, expected {_describe(t)}"
        for c, t in spec.items()
        if c in frame.columns and not _dtype_ok(frame[c], t)
    ]
    if mistyped:
        problems.append("mistyped columns: " + "; ".join(mistyped))
    if not extra:
        surplus = [c for c in frame.columns if c not in spec]
        if surplus:
            problems.append("unexpected columns: " + ", ".join(map(str, surplus)))
    if problems:
        raise DataError(
            f"frame does not follow the {kind!r} schema: " + " | ".join(problems),
            hint=f"see cctx_research.schema.columns({kind!r}) and dtypes({kind!r})",
        )
    return frame


def provenance(frame: pd.DataFrame) -> Provenance | None:
    """The provenance record of a frame, or ``None`` (see :mod:`cctx_research.provenance`)."""
    return _provenance.provenance(frame)
