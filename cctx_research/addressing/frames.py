"""A frame's address columns: each in its chain's own format, or all as the wire's bytes32.

Which chain spells a column is :data:`cctx_research.schema.ADDRESS_CHAINS`:
the burn's chain for ``message_sender``, ``burn_token`` and ``burn_tx_from``,
the mint's for ``mint_recipient``, ``destination_caller``,
``destination_token_messenger``, ``relayer`` and ``mint_recipient_owner``.
Every frame the toolkit gives (``load``, the client, the sample) is in the
chains' own formats, :func:`as_chain_format`; :func:`as_bytes32` gives the
form CCTP's messages and the interface carry (``0x`` + 64 hex digits), for a
join with a table that keeps bytes32, and :func:`as_chain_format` reads it
back. Both are a function of a frame rather than an option of each reader,
so one call serves a loaded ledger, a client's frame and the sample alike.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .. import chains, schema
from .columns import _format_codes, canonical_addresses
from .spellings import FORMATS, _format_of, to_bytes32

__all__ = ["as_bytes32", "as_chain_format"]

_PAD = "0x" + "0" * 24


def _chain_format(chain: Any) -> str | None:
    if chain is None or (not isinstance(chain, str) and pd.isna(chain)):
        return None
    try:
        return _format_of(chain.item() if hasattr(chain, "item") else chain)
    except (TypeError, ValueError):
        return None  # a carried-through unknown chain: its values are detected


def _chain_label(chain: Any) -> str:
    try:
        return chains.chain_name(int(chain)) if not isinstance(chain, str) else chain
    except (TypeError, ValueError):
        return str(chain)


def _chains(frame: pd.DataFrame, side: str, column: str, what: str) -> Any:
    """The chain of each row on ``side`` (domain ids, else chain names)."""
    for name in (f"{side}_domain", f"{side}_chain"):
        if name in frame.columns:
            values = frame[name]
            if pd.api.types.is_integer_dtype(values.dtype) and not values.hasnans:
                return values.to_numpy(dtype=np.int64)
            return pd.Series(values.to_numpy(dtype=object))
    raise ValueError(
        f"{what} needs the column {side + '_domain'!r} (or {side + '_chain'!r}) to know which "
        f"chain spells {column!r}; the frame has {', '.join(map(str, frame.columns[:20]))}. "
        "Pass a 'ledger', 'transfers' or 'transaction' frame, or name the columns to spell "
        "with columns=[...]"
    )


def _targets(frame: Any, columns: Iterable[str] | None, what: str) -> list[tuple[str, Any]]:
    """The address columns to spell, each with its rows' chains."""
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(
            f"{what} takes a pandas DataFrame (a lazy engine's frame: collect it first), "
            f"got {type(frame).__name__}"
        )
    if columns is None:
        names = [c for c in schema.ADDRESS_CHAINS if c in frame.columns]
    else:
        if isinstance(columns, str):
            raise TypeError(f"columns must be a list of column names, e.g. [{columns!r}]")
        names = list(columns)
        unknown = [c for c in names if c not in schema.ADDRESS_CHAINS]
        if unknown:
            raise ValueError(
                f"{what}: {', '.join(map(repr, unknown))} is not an address column; "
                f"use some of {', '.join(schema.ADDRESS_CHAINS)}"
            )
        absent = [c for c in names if c not in frame.columns]
        if absent:
            raise ValueError(f"{what}: the frame has no column {', '.join(map(repr, absent))}")
    return [(c, _chains(frame, schema.ADDRESS_CHAINS[c], c, what)) for c in names]


def as_chain_format(frame: pd.DataFrame, *, columns: Iterable[str] | None = None) -> pd.DataFrame:
    """``frame`` with its address columns in the format of each row's chain.

    Parameters
    ----------
    frame : pandas.DataFrame
        A ``ledger``, ``transfers`` or ``transaction`` frame, its addresses
        in any spelling: bytes32 (``0x`` + 64 hex), ``0x`` + 40 hex, or a
        chain's own format. ``source_domain`` / ``destination_domain`` (or
        the ``*_chain`` columns) say which chain spells each row.
    columns : list of str, optional
        The address columns to spell (keys of
        :data:`cctx_research.schema.ADDRESS_CHAINS`); by default every one
        the frame has.

    Returns
    -------
    pandas.DataFrame
        A copy (the other columns and the provenance shared): EVM addresses
        ``0x`` + 40 hex digits, lowercase (a bytes32 that is not 12 zero
        bytes and 20 stays whole); Solana base58; Noble bech32; Sui, Aptos
        and Starknet ``0x`` + 64 hex; Stellar a strkey. Missing values stay
        missing; a value that fits no format, or on a chain the registry
        does not know, is kept as it is.

    Raises
    ------
    TypeError
        If ``frame`` is not a pandas DataFrame.
    ValueError
        If a column to spell is not an address column, or the frame lacks
        the domain (or chain) column that says its chain.

    Examples
    --------
    >>> usdc = "0xc6fa7af3bedbad3a3d65f36aabc97431b1bbe4c2d2f6e0e47ca60203452f5d61"
    >>> frame = pd.DataFrame({"source_domain": [0], "destination_domain": [5],
    ...     "message_sender": ["0x" + "00" * 12 + "AB" * 20], "mint_recipient": [usdc]})
    >>> as_chain_format(frame).iloc[0, 2:].tolist()
    ['0xabababababababababababababababababababab', 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v']
    """
    targets = _targets(frame, columns, "as_chain_format")
    out = frame.copy(deep=False)
    for column, chains_ in targets:
        out[column] = _chain_column(frame[column], chains_)
    return out


def _lower_hex40(text: pd.Series) -> np.ndarray:
    """Which values are ``0x`` + 40 characters with no upper case (read off Arrow's buffers)."""
    arrow = pa.array(text.array)
    if isinstance(arrow, pa.ChunkedArray):
        arrow = arrow.combine_chunks()
    arrow = arrow.cast(pa.large_string())
    n = len(arrow)
    offsets = np.frombuffer(arrow.buffers()[1], dtype=np.int64)[arrow.offset : arrow.offset + n + 1]
    data = arrow.buffers()[2]
    if data is None:
        return np.zeros(n, dtype=bool)
    chars = np.frombuffer(data, dtype=np.uint8)
    if len(chars) == 0:
        return np.zeros(n, dtype=bool)
    if ((chars >= ord("A")) & (chars <= ord("Z"))).any():  # upper case somewhere: row by row
        found = pc.match_substring_regex(arrow, r"^0x[0-9a-f]{40}$")
        return pc.fill_null(found, False).to_numpy(zero_copy_only=False)
    starts = offsets[:-1]
    out = np.diff(offsets) == 42
    at = np.where(out, starts, 0)
    return out & (chars[at] == ord("0")) & (chars[np.minimum(at + 1, len(chars) - 1)] == ord("x"))


def _chain_column(values: pd.Series, chains_: Any) -> pd.Series:
    """One address column in its rows' chains' formats.

    An EVM row that is already ``0x`` + 40 lowercase characters (nearly
    all, from the readers) is left as it is; the others go through
    :func:`~cctx_research.addressing.canonical_addresses`.
    """
    text = values.astype(schema.STRING)
    n = len(text)
    codes, formats = _format_codes(chains_, n)
    evm = np.isin(codes, [i for i, f in enumerate(formats) if f == "evm"])
    work = np.flatnonzero(~(evm & _lower_hex40(text)) & text.notna().to_numpy(dtype=bool))
    if len(work) == 0:
        return pd.Series(text.array, index=values.index)
    if len(work) == n:
        return pd.Series(canonical_addresses(text.array, chains_).array, index=values.index)
    part = chains_[work] if isinstance(chains_, np.ndarray) else chains_.iloc[work]
    out = text.array.copy()
    out[work] = canonical_addresses(text.array[work], part).array
    return pd.Series(out, index=values.index)


def as_bytes32(frame: pd.DataFrame, *, columns: Iterable[str] | None = None) -> pd.DataFrame:
    """``frame`` with its address columns as the interface's bytes32: ``0x`` + 64 hex digits.

    The form CCTP's messages carry every address in: an EVM or Noble
    address (20 bytes) after 12 zero bytes, other chains' 32 bytes as they
    are. :func:`as_chain_format` reads it back.

    Parameters
    ----------
    frame : pandas.DataFrame
        A ``ledger``, ``transfers`` or ``transaction`` frame (``load``, the
        client, the sample), with ``source_domain`` / ``destination_domain``
        (or the ``*_chain`` columns).
    columns : list of str, optional
        The address columns to convert; by default every one the frame has
        (:data:`cctx_research.schema.ADDRESS_CHAINS`).

    Returns
    -------
    pandas.DataFrame
        A copy (the other columns and the provenance shared), addresses in
        lowercase bytes32; missing values stay missing.

    Raises
    ------
    TypeError
        If ``frame`` is not a pandas DataFrame.
    ValueError
        As :func:`as_chain_format`, and for a value that is no address of
        its row's chain (naming the column, the row and the formats
        accepted).

    Examples
    --------
    >>> frame = pd.DataFrame({"source_domain": [5], "destination_domain": [0],
    ...     "message_sender": ["EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"],
    ...     "mint_recipient": ["0x" + "ab" * 20]})
    >>> wire = as_bytes32(frame)
    >>> wire.loc[0, "message_sender"][:18], wire.loc[0, "mint_recipient"][:28]
    ('0xc6fa7af3bedbad3a', '0x000000000000000000000000ab')
    >>> as_chain_format(wire).equals(frame.astype({"message_sender": "string[pyarrow]",
    ...                                          "mint_recipient": "string[pyarrow]"}))
    True
    """
    targets = _targets(frame, columns, "as_bytes32")
    out = frame.copy(deep=False)
    for column, chains_ in targets:
        out[column] = _bytes32_column(frame[column], chains_, column)
    return out


def _bytes32_column(values: pd.Series, chains_: Any, column: str) -> pd.Series:
    """One address column as bytes32: hex in one vectorised pass, other spellings per value."""
    text = values.astype(schema.STRING).str.strip()
    lower = text.str.lower()
    short = lower.str.fullmatch(r"0x[0-9a-f]{40}").fillna(False).to_numpy(dtype=bool)
    wide = lower.str.fullmatch(r"0x[0-9a-f]{64}").fillna(False).to_numpy(dtype=bool)
    padded = (_PAD + lower.str.slice(2)).to_numpy(dtype=object, na_value=None)
    out = np.where(short, padded, lower.to_numpy(dtype=object, na_value=None))
    rest = np.flatnonzero(~(short | wide) & text.notna().to_numpy(dtype=bool))
    if len(rest):
        codes, uniques = pd.factorize(text.to_numpy(dtype=object)[rest])
        first = rest[np.unique(codes, return_index=True)[1]]
        wire = []
        for value, row in zip(uniques.tolist(), first.tolist(), strict=True):
            chain = chains_[row] if not isinstance(chains_, pd.Series) else chains_.iloc[row]
            fmt = _chain_format(chain)
            try:
                wire.append(to_bytes32(value, fmt))
            except ValueError:
                accepted = FORMATS.get(fmt or "", "an address of a format in addressing.FORMATS")
                raise ValueError(
                    f"column {column!r}, row {values.index[row]!r}: {value[:80]!r} is not an "
                    f"address of its chain, {_chain_label(chain)}; expected {accepted}"
                ) from None
        out[rest] = np.asarray(wire, dtype=object)[codes]
    return pd.Series(pd.array(out, dtype=schema.STRING), index=values.index)
