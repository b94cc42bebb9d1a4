"""Plausibility checks every reader applies to what it reads, in one place.

A file that a reader can parse may still say something impossible of CCTP:
a time from before the protocol existed (or in 2105: epoch milliseconds read
as seconds), a time in the future. These checks turn such values into a
refusal that names the file, the row and the column and says what to pass
instead (a bad row: :class:`~cctx_research.errors.DataError` under
``errors="raise"``, a row of :func:`~cctx_research.ingest.bad_rows` under
``errors="report"``), so that no plausible-looking wrong number gets through.

- **Times** are within CCTP's era: from its launch on 2023-04-26 (UTC) to
  now plus one day. Unix times are read in the unit their size says:
  seconds, milliseconds, microseconds or nanoseconds (:func:`epoch_scale`);
  within CCTP's era the four ranges are apart by factors of 1,000, so the
  unit is never a guess.
- **Network**: CCTP V2's testnet contracts (one address on every testnet
  EVM chain, not the mainnet one) and Sepolia's USDC mark testnet data. It
  is refused, whatever chain it is given as: the chain registry, the
  labels, the sample and every published figure the toolkit compares with
  are mainnet, so a testnet transfer can only be a wrong mainnet one
  (:func:`refuse_testnet`, :func:`refuse_testnet_logs`).
- **Chain**: what a file of EVM logs says of its chain (a ``chain_id``
  column, contracts of one chain only, a ``MessageSent``'s source domain)
  agrees with the ``chain=`` it was given (:func:`check_log_chain`).

Examples
--------
>>> import numpy as np
>>> epoch_scale(np.array([1_717_200_000, 1_717_200_000_000, 1_717_200_000_000_000_000]))
array([1000000000,    1000000,          1])
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ... import chains
from ...errors import DataError

__all__ = [
    "CCTP_LAUNCH",
    "TESTNET_CONTRACTS",
    "epoch_scale",
    "era_message",
    "not_a_domain",
    "outside_era",
    "refuse_other_chain",
    "refuse_testnet",
]

CCTP_LAUNCH = pd.Timestamp("2023-04-26", tz="UTC")
"""CCTP's mainnet launch (Ethereum and Avalanche); no CCTP event is older."""

_SLACK = pd.Timedelta(days=1)


def epoch_scale(whole: np.ndarray) -> np.ndarray:
    """Nanoseconds per unit of each Unix time, from its integer part's size.

    Seconds below 1e11 (the year 5138), milliseconds below 1e14,
    microseconds below 1e17, nanoseconds above.
    """
    size = np.abs(np.asarray(whole, dtype=np.int64))
    return np.select(
        [size < 10**11, size < 10**14, size < 10**17],
        [10**9, 10**6, 10**3],
        default=1,
    ).astype(np.int64)


def outside_era(times: pd.Series, *, now: pd.Timestamp | None = None) -> np.ndarray:
    """Which times fall before CCTP's launch or after ``now`` (default: the clock) plus a day."""
    latest = (pd.Timestamp.now(tz="UTC") if now is None else now) + _SLACK
    values = pd.Series(times)
    known = values.notna()
    return np.asarray(known & ((values < CCTP_LAUNCH) | (values > latest)), dtype=bool)


def era_message(column: str, cell: str, when: pd.Timestamp) -> str:
    """What a time outside CCTP's era is refused with: the column, the value, what to pass."""
    side = "before CCTP's launch on 2023-04-26" if when < CCTP_LAUNCH else "in the future"
    return (
        f"column {column!r}: {cell} reads as {when:%Y-%m-%d %H:%M:%S} UTC, {side}; pass UTC "
        "times within CCTP's era as ISO 8601 text or Unix seconds (milliseconds, micro- and "
        "nanoseconds are recognised by their size)"
    )


TESTNET_CONTRACTS = {
    "0x8fe6b999dc680ccfdd5bf7eb0974218be2542daa": "CCTP V2's testnet TokenMessengerV2",
    "0xe737e5cebeeba77efe34d4aa090756590b1ce275": "CCTP V2's testnet MessageTransmitterV2",
    "0x1c7d4b196cb0c7b01d743fbc6116a902379c7238": "Sepolia's USDC",
}
"""Addresses only testnet data holds (Circle's contract pages; ``reference/cctp.md``)."""


def refuse_testnet(
    source_file: str,
    column: str,
    values: Any,
    describe: Callable[[int], str] = lambda i: f"row {i}",
) -> None:
    """Raise :class:`DataError` when ``values`` hold a testnet contract, naming file, row, column.

    ``describe`` names the ``i``-th value's row as the reader counts them
    (a line number, or a log of a transaction).
    """
    lower = pd.Series(np.asarray(values, dtype=object)).astype("string").str.lower()
    hits = lower.isin(list(TESTNET_CONTRACTS)).fillna(False).to_numpy(dtype=bool)
    if not hits.any():
        return
    first = int(np.flatnonzero(hits)[0])
    address = lower.iat[first]
    raise DataError(
        f"{source_file!r} holds testnet data: {describe(first)}, column {column!r} is "
        f"{address}, {TESTNET_CONTRACTS[address]} ({int(hits.sum())} such rows); testnet "
        "transfers are not mainnet ones and are not analysed",
        hint="load mainnet data only (Circle's mainnet contracts), leaving this file out",
    )


def refuse_other_chain(
    source_file: str,
    column: str,
    contracts: Any,
    domains: Any,
    describe: Callable[[int], str] = lambda i: f"row {i}",
    *,
    chain_column: str | None = None,
) -> None:
    """Raise :class:`DataError` when a row's contract is a CCTP contract of other chains only.

    ``chain_column`` names the file's column that gave the row its chain
    (default: the ``chain=`` argument did).

    V1's contracts have one address per chain, so an Ethereum table read as
    Base is told by its ``contract_address``; V2's contract, the same on
    every chain, says nothing and passes.
    """
    text = pd.Series(np.asarray(contracts, dtype=object)).astype("string").str.lower()
    domain = np.asarray(domains, dtype=np.int64)
    for address in text.dropna().unique().tolist():
        try:
            owners = chains.contract_domains(address)
        except ValueError:  # not an address at all: no CCTP contract's either
            continue
        if not owners:
            continue
        rows = np.flatnonzero((text == address).fillna(False).to_numpy(dtype=bool))
        wrong = rows[~np.isin(domain[rows], sorted(owners)) & (domain[rows] >= 0)]
        if len(wrong):
            i = int(wrong[0])
            given = chains.chain_name(int(domain[i]))
            names = ", ".join(chains.chain_name(d) for d in sorted(owners))
            right = chains.chain_name(min(owners))
            hint = (f"pass chain={right!r} for this file (--chain PATH={right})"
                    if chain_column is None else
                    f"correct column {chain_column!r} ({right}), or the contract")  # fmt: skip
            raise DataError(
                f"{source_file!r}, {describe(i)}: column {column!r} is {address}, a CCTP "
                f"contract of {names}, but the row is read as {given}",
                hint=hint,
            )


def not_a_domain(values: Any) -> np.ndarray:
    """Which values cannot be a CCTP domain: negative, or beyond a ``uint32``.

    A domain the registry does not list yet is kept (the analyses name it
    ``domain-<n>``); a value no message could carry is refused.
    """
    numbers = np.asarray(values, dtype=np.int64)
    return (numbers < 0) | (numbers > 2**32 - 1)


# --------------------------------------------------------------------------
# the chain and network of a file of EVM logs


def _evidence(decoded: Any) -> dict[int, str]:
    """What the logs themselves say of their chain: domain -> the fact that says it."""
    said: dict[int, str] = {}
    for frame, what in ((decoded.burns, "DepositForBurn"), (decoded.sent, "MessageSent"),
                        (decoded.received, "MessageReceived"), (decoded.mints, "MintAndWithdraw")):
        if not len(frame):
            continue
        for address in frame["contract"].dropna().unique().tolist():
            owners = chains.contract_domains(address)
            if len(owners) == 1:
                (only,) = owners
                said.setdefault(only, f"{what} emitted by {address}, a CCTP contract of "
                                f"{chains.chain_name(only)} only")
    if len(decoded.sent):
        for value in decoded.sent["source_domain"].unique().tolist():
            said.setdefault(int(value), f"MessageSent whose message says source domain {value}")
    return said


def check_log_chain(path: Path, chain: int | None, logs: pd.DataFrame, decoded: Any) -> None:
    """Raise when what the logs say of their chain contradicts ``chain=`` (or fills its gap)."""
    if chain is not None:
        ids = logs["chain_id"].dropna().unique().tolist()
        wanted = chains.chain_id(chain)
        other = [i for i in ids if str(i) != str(wanted)]
        if other:
            names = ", ".join(sorted({chains.name_from_chain_id(str(i)) for i in other}))
            raise DataError(
                f"{str(path)!r} was given chain={chains.chain_name(chain)!r}, but its chain_id "
                f"column says {names}",
                hint=f"pass chain={names.split(', ')[0]!r} for this file, or no chain= "
                "(the chain_id column is enough)",
            )
    said = _evidence(decoded)
    frames = (decoded.burns, decoded.sent, decoded.received, decoded.mints)
    unknown = any(f["domain"].isna().any() for f in frames if len(f))
    if unknown:
        guess = f"pass chain={chains.chain_name(next(iter(said)))!r}" if len(said) == 1 else (
            "pass chain='ethereum'")
        raise DataError(
            f"the chain of the logs in {str(path)!r} is unknown: they carry no chain id"
            + (f" ({'; '.join(said.values())})" if said else ""),
            hint=f"{guess} (or {{path: chain}}); on the command line "
            "--chain CHAIN or --chain PATH=CHAIN (cryo's logs carry chain_id)",
        )
    given = {int(d) for f in frames if len(f) for d in f["domain"].dropna().unique().tolist()}
    wrong = {d: why for d, why in said.items() if d not in given}
    if wrong:
        domain, why = next(iter(wrong.items()))
        claimed = ", ".join(chains.chain_name(d) for d in sorted(given))
        raise DataError(
            f"the logs in {str(path)!r} are read as {claimed}, but the data says "
            f"{chains.chain_name(domain)}: {why}",
            hint=f"pass chain={chains.chain_name(domain)!r} for this file "
            f"(--chain {path.name}={chains.chain_name(domain)})",
        )


def refuse_testnet_logs(path: Path, decoded: Any) -> None:
    """Refuse logs of CCTP's testnet contracts (or of Sepolia's USDC), naming the log."""
    for frame in (decoded.burns, decoded.sent, decoded.received, decoded.mints):
        if not len(frame):
            continue

        def where(i: int, frame: pd.DataFrame = frame) -> str:
            return f"log {frame['log_index'].iat[i]} of transaction {frame['tx_hash'].iat[i]}"

        refuse_testnet(str(path), "address", frame["contract"], where)
        if "burn_token" in frame.columns:
            refuse_testnet(str(path), "burnToken", frame["burn_token"], where)
