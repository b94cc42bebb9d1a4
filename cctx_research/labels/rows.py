"""The rows of a label table: Circle's contracts, integrators' bundled rows, a user's rows.

Circle's TokenMessenger, MessageTransmitter and TokenMinter are derived
from the domain registry (:mod:`cctx_research.chains`); the integrators'
rows are read from ``data/labels.json`` (shipped as ``cctx_research._data``),
each with its source and licence; a user's rows from a CSV file or a
DataFrame. Every table is checked the same way: columns in order, addresses
canonical, kinds and chains known. :mod:`cctx_research.labels` looks
addresses up in them and re-exports the public names.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from .. import addressing, chains, schema

__all__ = ["COLUMNS", "KINDS", "bundled", "read"]

KINDS: tuple[str, ...] = ("integrator", "relayer", "exchange", "circle", "user")
"""What a labelled address is: an integrator's contract (or its operator), a relayer that
calls ``receiveMessage``, an exchange, Circle itself, or an end user."""

COLUMNS: tuple[str, ...] = ("chain", "address", "label", "kind", "source", "licence")
"""The columns of a label table (:func:`~cctx_research.labels.table` adds ``origin``)."""

_REGISTRY_SOURCE = (
    "cctx_research.chains (Circle's developer documentation, CCTP contract addresses; "
    "github:circlefin/evm-cctp-contracts)"
)
_CONTRACT_NAMES = (
    ("token_messenger", "TokenMessenger"),
    ("message_transmitter", "MessageTransmitter"),
    ("token_minter", "TokenMinter"),
)


def _missing(value: Any) -> bool:
    return value is None or (not isinstance(value, str) and bool(pd.isna(value)))


def _canonical(values: Iterable[Any]) -> list[Any]:
    out = addressing.canonical_addresses(list(values))
    return [None if pd.isna(v) else str(v) for v in out]


def _circle_rows() -> list[dict[str, Any]]:
    """Circle's contracts, derived from the registry (never typed in twice)."""
    rows: list[dict[str, Any]] = []
    for chain in chains.CHAINS:
        if chain.address_format != "evm":
            continue
        for version in (1, 2):
            found = chains.contracts(chain.domain, version)
            if found is None:
                continue
            for field, name in _CONTRACT_NAMES:
                address = getattr(found, field, None)
                if address:
                    rows.append(_circle_row(chain.name, address, name, version))
    return rows


def _circle_row(chain: str | None, address: str, name: str, version: int) -> dict[str, Any]:
    return {
        "chain": chain,
        "address": address.lower(),
        "label": f"Circle {name}{'V2' if version == 2 else ''}",
        "kind": "circle",
        "source": _REGISTRY_SOURCE,
        "licence": "Apache-2.0",
    }


def _data_file() -> dict[str, Any]:
    try:
        text = (resources.files("cctx_research._data") / "labels.json").read_text("utf-8")
    except (ModuleNotFoundError, FileNotFoundError):
        text = (Path(__file__).resolve().parents[2] / "data" / "labels.json").read_text("utf-8")
    return json.loads(text)


@functools.lru_cache(maxsize=1)
def _bundled() -> pd.DataFrame:
    data = _data_file()
    sources = data["sources"]
    rows = _circle_rows()
    for row in data["rows"]:
        origin = sources[row["from"]]
        rows.append(
            {
                "chain": row["chain"],
                "address": row["address"],
                "label": row["label"],
                "kind": row["kind"],
                "source": origin["source"],
                "licence": origin["licence"],
            }
        )
    return _checked(pd.DataFrame(rows, columns=list(COLUMNS)), what="bundled labels")


def bundled() -> pd.DataFrame:
    """The bundled label table (a copy): Circle's contracts first, then integrators'.

    Examples
    --------
    >>> set(bundled()["kind"]) <= set(KINDS)
    True
    """
    return _bundled().copy()


def _checked(frame: pd.DataFrame, *, what: str) -> pd.DataFrame:
    """Columns in order and typed, addresses canonical, kinds and chains known."""
    missing = [c for c in ("address", "label", "kind") if c not in frame.columns]
    if missing:
        raise ValueError(
            f"{what} lack the column(s) {missing}; pass a CSV or DataFrame with columns "
            f"address, label, kind (and optionally chain, source, licence)"
        )
    out = pd.DataFrame(index=range(len(frame)))
    for col in COLUMNS:
        values = frame[col].tolist() if col in frame.columns else [None] * len(frame)
        out[col] = pd.Series([None if _missing(v) else v for v in values], dtype=object)
    if out["address"].isna().any() or out["label"].isna().any():
        raise ValueError(f"{what}: every row needs an address and a label")
    bad = sorted(set(out["kind"].dropna()) - set(KINDS)) + (
        ["(missing)"] if out["kind"].isna().any() else []
    )
    if bad:
        raise ValueError(f"{what}: unknown kind(s) {bad}; use one of {list(KINDS)}")
    out["address"] = _canonical(str(a).strip() for a in out["address"])
    names = []
    for value in out["chain"]:
        if _missing(value) or str(value).strip() == "":
            names.append(None)
            continue
        try:
            names.append(chains.chain_name(chains.domain(value)))
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"{what}: unknown chain {value!r}; use a registry name "
                f"({', '.join(chains.known_names()[:6])}, ...) or leave it empty"
            ) from exc
    out["chain"] = names
    for col in COLUMNS:
        out[col] = out[col].astype(schema.STRING)
    return out


def read(user: str | Path | pd.DataFrame) -> pd.DataFrame:
    """Your labels as a checked label table (``origin`` not yet set).

    Parameters
    ----------
    user : path or DataFrame
        A CSV file, or a frame, with columns ``address``, ``label``, ``kind``
        and optionally ``chain``, ``source`` and ``licence``.

    Raises
    ------
    TypeError
        If ``user`` is neither a path nor a DataFrame.
    ValueError
        For a missing column, an unknown kind or chain, or two rows for one
        chain and address that disagree.
    """
    if isinstance(user, (str, Path)):
        frame = pd.read_csv(user, dtype=str, keep_default_na=False, na_values=[""])
        what = f"labels in {Path(user).name}"
    elif isinstance(user, pd.DataFrame):
        frame, what = user, "user labels"
    else:
        raise TypeError(f"user labels must be a CSV path or a DataFrame, got {type(user).__name__}")
    out = _checked(frame, what=what)
    out["source"] = out["source"].fillna("user")
    key = out["chain"].fillna("").astype(str) + "|" + out["address"].astype(str)
    clash = out.assign(key=key).groupby("key")[["label", "kind"]].nunique()
    clash = clash[(clash["label"] > 1) | (clash["kind"] > 1)]
    if len(clash):
        raise ValueError(
            f"{what}: rows for the same chain and address disagree: "
            f"{', '.join(clash.index[:5])}; keep one row per chain and address"
        )
    return out.loc[~key.duplicated()].reset_index(drop=True)
