"""Who an address is: a table of known CCTP actors, each row with its source and licence.

The bundled table holds Circle's own contracts (TokenMessenger,
MessageTransmitter and TokenMinter of every version and chain, derived from
the domain registry :mod:`cctx_research.chains`, never copied) and the CCTP
contracts of integrators, read from openly licensed sources: L2BEAT's
interop configuration (MIT), Hyperlane's registry (MIT) and monorepo
(Apache-2.0), Circle's SDKs (Apache-2.0). Every row says where it was read
(repository, path and commit, or package) and under which licence. Nothing
comes from block explorers' label clouds or from Dune's spellbook (Business
Source License). The table lives in ``data/labels.json`` (shipped as
``cctx_research._data``).

Columns of a label table: ``chain`` (a registry chain name, or null for a
row that holds on any EVM chain: a CREATE2 address deployed everywhere),
``address`` (lowercase, canonical: 20 bytes for EVM), ``label``, ``kind``
(one of :data:`KINDS`), ``source``, ``licence``; :func:`table` adds
``origin`` (``"user"`` or ``"bundled"``).

Your own labels (a CSV file or a DataFrame with at least ``address``,
``label`` and ``kind``) are passed as ``user=`` and win over the bundled
ones. The conflict rule, for a look-up of an address on a chain:

1. a user row beats a bundled row, whatever chain either names (your
   chain-less row overrides a bundled row for a given chain);
2. among rows of the same origin, a row for that chain beats a chain-less row;
3. a look-up with no chain takes chain-less rows first, then the
   chain-specific row of the first chain in registry order;
4. two user rows for the same chain and address that disagree are an error
   (no silent pick).

Examples
--------
>>> lookup("0xBd3fa81B58Ba92a82136038B25aDec7066af3155", "ethereum").label
'Circle TokenMessenger'
>>> mine = pd.DataFrame({"address": ["0xbd3fa81b58ba92a82136038b25adec7066af3155"],
...                      "label": ["my messenger"], "kind": ["user"]})
>>> lookup("0xbd3fa81b58ba92a82136038b25adec7066af3155", "ethereum", user=mine).label
'my messenger'

The rows themselves (Circle's, the bundled file's, a user's: read and
checked) are built in :mod:`~cctx_research.labels.rows`.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .. import chains, schema
from .._codes import unique_ints
from .rows import COLUMNS, KINDS, _bundled, _canonical, bundled, read

__all__ = [
    "COLUMNS",
    "DEFAULT_COLUMNS",
    "KINDS",
    "Label",
    "Labels",
    "attach",
    "bundled",
    "chains_of",
    "labels",
    "lookup",
    "read",
    "table",
]

logger = logging.getLogger(__name__)

DEFAULT_COLUMNS: tuple[str, ...] = (
    "message_sender",
    "mint_recipient",
    "destination_caller",
    "relayer",
)
"""The ledger columns :func:`attach` labels by default (those present)."""

_SOURCE_SIDE = frozenset({"message_sender", "burn_token"})
"""Address columns that live on the source chain; the others on the destination."""


@dataclass(frozen=True)
class Label:
    """One address's label, with where it came from.

    Attributes
    ----------
    address : str
        Canonical lowercase address.
    chain : str or None
        The chain the row names; None: any EVM chain.
    label, kind, source, licence : str
        The row's fields (``kind`` one of :data:`KINDS`).
    origin : str
        ``"user"`` or ``"bundled"``.
    """

    address: str
    chain: str | None
    label: str
    kind: str
    source: str
    licence: str
    origin: str


class Labels:
    """A label table ready for look-ups: bundled rows, and a user's rows over them.

    Build one with :func:`labels`; :func:`lookup` and :func:`attach` use it.
    """

    def __init__(self, user: pd.DataFrame | None = None) -> None:
        parts = []
        if user is not None and len(user):
            parts.append(user.assign(origin="user"))
        parts.append(_bundled().assign(origin="bundled"))
        frame = pd.concat(parts, ignore_index=True)
        frame["origin"] = frame["origin"].astype(schema.STRING)
        self._table = frame
        # rank: user rows first, then within an origin chain-specific rows first
        rank = (frame["origin"] == "bundled").astype(int) * 2 + frame["chain"].isna().astype(int)
        order = np.lexsort((np.arange(len(frame)), rank.to_numpy()))
        self._rows: dict[str, list[int]] = {}
        for i in order:
            self._rows.setdefault(str(frame.at[i, "address"]), []).append(int(i))
        self._chain_order = {name: k for k, name in enumerate(chains.known_names())}
        self._known = pa.array(list(self._rows), type=pa.large_string())
        self._tails = pa.array(
            [k[2:] for k in self._rows if k.startswith("0x") and len(k) == 42],
            type=pa.large_string(),
        )

    @property
    def table(self) -> pd.DataFrame:
        """The rows (a copy), user rows first, with ``origin``."""
        return self._table.copy()

    def addresses(self) -> list[str]:
        """Every labelled address."""
        return list(self._rows)

    def _pick(self, address: str, chain: str | None) -> int | None:
        rows = self._rows.get(address)
        if not rows:
            return None
        chain_col = self._table["chain"]
        if chain is not None:
            for i in rows:
                row_chain = chain_col.iat[i]
                if pd.isna(row_chain) or row_chain == chain:
                    return i
            return None
        # no chain: chain-less rows of the best origin first, then the first chain
        best = self._table["origin"].iat[rows[0]]
        same = [i for i in rows if self._table["origin"].iat[i] == best]
        anywhere = [i for i in same if pd.isna(chain_col.iat[i])]
        if anywhere:
            return anywhere[0]
        return min(same, key=lambda i: self._chain_order.get(str(chain_col.iat[i]), 10**6))

    def lookup(self, address: str, chain: str | int | None = None) -> Label | None:
        """The label of ``address`` on ``chain`` (see the module's conflict rule), or None."""
        key, name = _key(address), _chain(chain)
        i = self._pick(key, name)
        if i is None:
            return None
        row = self._table.iloc[i]
        return Label(
            address=key,
            chain=None if pd.isna(row["chain"]) else str(row["chain"]),
            label=str(row["label"]),
            kind=str(row["kind"]),
            source=str(row["source"]),
            licence="" if pd.isna(row["licence"]) else str(row["licence"]),
            origin=str(row["origin"]),
        )

    def resolve(self, addresses: Any, chain_names: Sequence[Any] | None) -> tuple:
        """``label`` and ``kind`` arrays (object, None where unknown) for a column of addresses.

        A vectorised membership test (any case, bytes32-padded or not) picks
        the rows that may be labelled; only their distinct (address, chain)
        pairs are respelled and resolved.
        """
        values = pd.Series(addresses).astype(schema.STRING).reset_index(drop=True)
        labels, kinds = np.full(len(values), None, object), np.full(len(values), None, object)
        where = self._candidates(pa.array(values.array))
        if not len(where):
            return labels, kinds
        # respelled once per distinct value, looked up once per distinct (address, chain)
        v_codes, v_names = pd.factorize(values.iloc[where])
        a_codes, a_names = pd.factorize(np.asarray(_canonical(v_names), dtype=object))
        a_codes = np.append(a_codes, -1)[v_codes]
        chains_ = np.full(len(values), None, object) if chain_names is None else chain_names
        c_codes, c_names = pd.factorize(np.asarray(chains_, dtype=object)[where])
        width = len(c_names) + 1
        codes, pairs = pd.factorize(a_codes.astype("int64") * width + (c_codes + 1))
        found = np.full(len(pairs), -1, dtype="int64")
        for k, (a, c) in enumerate(divmod(p, width) for p in pairs.tolist()):
            i = None if a < 0 else self._pick(a_names[a], None if c == 0 else c_names[c - 1])
            found[k] = -1 if i is None else i
        rows = found[codes]
        hit = rows >= 0
        labels[where[hit]] = self._table["label"].to_numpy(dtype=object)[rows[hit]]
        kinds[where[hit]] = self._table["kind"].to_numpy(dtype=object)[rows[hit]]
        return labels, kinds

    def _candidates(self, values: pa.Array | pa.ChunkedArray) -> np.ndarray:
        """Positions of the values that may be a labelled address (in any spelling)."""
        # hex is ASCII: ascii_lower is exact for it and an order faster than utf8_lower
        lower = pc.ascii_lower(values)
        out = _true(pc.or_(pc.is_in(values, self._known), pc.is_in(lower, self._known)))
        # bytes32-padded spellings: only the rows of that length are sliced
        wide = np.flatnonzero(_true(pc.equal(pc.binary_length(values), 66)))
        tails = pc.utf8_slice_codeunits(lower.take(pa.array(wide, pa.int64())), 26)
        out[wide[_true(pc.is_in(tails, self._tails))]] = True
        return np.flatnonzero(out)


def _true(values: Any) -> np.ndarray:
    return np.asarray(pc.fill_null(values, False), dtype=bool)


def _key(address: Any) -> str:
    if not isinstance(address, str):
        raise TypeError(f"address must be a str, got {type(address).__name__}")
    found = _canonical([address.strip()])[0]
    if not found:
        raise ValueError(f"address must be an address such as 0x + 40 hex, got {address!r}")
    return found


def _chain(chain: Any) -> str | None:
    if chain is None:
        return None
    try:
        return chains.chain_name(chains.domain(chain))
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"chain={chain!r} is not a known chain; pass a registry name such as 'base', "
            "a domain id, or None for any chain"
        ) from exc


@functools.lru_cache(maxsize=1)
def _default() -> Labels:
    return Labels()


def labels(user: str | Path | pd.DataFrame | Labels | None = None) -> Labels:
    """The bundled labels, with ``user``'s over them (a :class:`Labels`).

    ``user`` may already be a :class:`Labels` (returned as is).
    """
    if isinstance(user, Labels):
        return user
    if user is None:
        return _default()
    return Labels(read(user))


def table(user: str | Path | pd.DataFrame | None = None) -> pd.DataFrame:
    """Every label row, user rows first, with ``origin`` (``"user"`` / ``"bundled"``)."""
    return labels(user).table


def lookup(
    address: str,
    chain: str | int | None = None,
    *,
    user: str | Path | pd.DataFrame | Labels | None = None,
) -> Label | None:
    """The label of one address, or None.

    Parameters
    ----------
    address : str
        Any spelling: hex in any case, bytes32-padded.
    chain : str or int, optional
        The chain it is on (name or domain id). ``None``: any chain (see the
        module's conflict rule).
    user : path, DataFrame or Labels, optional
        Your labels; they win over the bundled ones.

    Examples
    --------
    >>> lookup("0x" + "00" * 12 + "c1062b7c5dc8e4b1df9f200fe360cdc0ed6e7741", "base").label
    'Mayan FastMCTP'
    >>> lookup("0x" + "12" * 20) is None
    True
    """
    return labels(user).lookup(address, chain)


def chains_of(
    frame: pd.DataFrame, column: str, rows: np.ndarray | None = None
) -> np.ndarray | None:
    """The chain each row's address in ``column`` is on, or None if the frame does not say.

    ``message_sender`` (and ``burn_token``) live on the source chain, other
    address columns on the destination; read from ``source_chain`` /
    ``destination_chain``, else the domain columns. ``rows``: only those
    positions' chains.
    """
    side = "source" if column in _SOURCE_SIDE else "destination"
    if f"{side}_chain" in frame.columns:
        names = frame[f"{side}_chain"]
        names = names if rows is None else names.iloc[rows]
        if isinstance(names.dtype, pd.CategoricalDtype):
            # by code: one object per category, not one per row
            categories = np.append(np.asarray(names.cat.categories, dtype=object), None)
            return categories[names.cat.codes.to_numpy()]
        names = names.astype(object)
        return names.where(names.notna(), None).to_numpy(dtype=object)
    if f"{side}_domain" in frame.columns:
        domains = frame[f"{side}_domain"].to_numpy()
        uniq, inverse = unique_ints(domains if rows is None else domains[rows])
        names = np.array([chains.chain_name(int(d)) for d in uniq], dtype=object)
        return names[inverse.ravel()]
    return None


def attach(
    frame: pd.DataFrame,
    columns: Sequence[str] | None = None,
    *,
    user: str | Path | pd.DataFrame | Labels | None = None,
) -> pd.DataFrame:
    """A copy of ``frame`` with ``<column>_label`` and ``<column>_kind`` for address columns.

    Each address is looked up on its own chain: ``message_sender`` on the
    source chain, ``mint_recipient``, ``destination_caller`` and ``relayer``
    on the destination (``source_chain`` / ``destination_chain``, else the
    domain columns); a frame with neither looks addresses up on any chain.

    Parameters
    ----------
    frame : pandas.DataFrame
        A ledger, or any frame with address columns.
    columns : sequence of str, optional
        Address columns to label; default: those of :data:`DEFAULT_COLUMNS`
        that ``frame`` has.
    user : path, DataFrame or Labels, optional
        Your labels, which win over the bundled ones.

    Returns
    -------
    pandas.DataFrame
        The frame with string columns ``<column>_label`` and
        ``<column>_kind`` (null where the address is not labelled).

    Raises
    ------
    TypeError, ValueError
        If ``frame`` is not a DataFrame or lacks a named column.

    Examples
    --------
    >>> ledger = pd.DataFrame({"source_domain": [6], "destination_domain": [0],
    ...     "message_sender": ["0xb3fa262d0fb521cc93be83d87b322b8a23daf3f0"],
    ...     "mint_recipient": ["0x6778b84d06804ecc154998b3fc73e557a4f1062d"]})
    >>> attach(ledger)[["message_sender_label", "mint_recipient_label"]].iloc[0].tolist()
    ['Circle Bridge Kit', <NA>]
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"attach() takes a pandas DataFrame, got {type(frame).__name__}")
    if columns is None:
        columns = [c for c in DEFAULT_COLUMNS if c in frame.columns]
    elif isinstance(columns, str):
        columns = [columns]
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"the frame has no column(s) {missing}; it has {list(frame.columns)}")
    table_ = labels(user)
    out = frame.copy(deep=False)
    for col in columns:
        label, kind = table_.resolve(out[col], chains_of(out, col))
        out[f"{col}_label"] = pd.array(label, dtype=schema.STRING)
        out[f"{col}_kind"] = pd.array(kind, dtype=schema.STRING)
    return out
