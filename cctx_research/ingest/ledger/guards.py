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
- **Emitters**: an event counts only when Circle's contract for it on the
  row's chain emitted it (V1's contract of that chain, or V2's, the same on
  every EVM chain but EDGE): a ``DepositForBurn`` or ``MintAndWithdraw`` of
  the TokenMessenger, a ``MessageSent`` or ``MessageReceived`` of the
  MessageTransmitter. Another contract's copy of the event (a real burn
  re-emitted by ``0x1234...``) is skipped and counted as
  ``skipped_unknown_emitter``, never a transfer (:func:`unknown_emitters`).
- **Amounts** are within USDC's supply (:data:`USDC_SUPPLY_CAP_RAW`): a
  larger one is a wrong unit (18 decimals) or a corrupt value.

Examples
--------
>>> import dataclasses

import numpy as np
>>> epoch_scale(np.array([1_717_200_000, 1_717_200_000_000, 1_717_200_000_000_000_000]))
array([1000000000,    1000000,          1])
"""

from __future__ import annotations

import dataclasses
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
    "USDC_SUPPLY_CAP_RAW",
    "amount_message",
    "emitters",
    "epoch_scale",
    "era_message",
    "not_a_domain",
    "outside_era",
    "outside_supply",
    "refuse_other_chain",
    "refuse_testnet",
    "screen_events",
    "skip_unknown_emitters",
    "unknown_emitters",
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


def _lowered(values: Any) -> tuple[np.ndarray, pd.Series]:
    """Each value's code into its distinct values (-1: missing), and those values as
    lowercase text: a file's contract columns hold a few addresses over millions of rows,
    so each is lowered once, not once a row."""
    if not isinstance(values, (pd.Series, pd.Index, pd.api.extensions.ExtensionArray)):
        values = np.asarray(values, dtype=object)
    codes, distinct = pd.factorize(values)
    lower = pd.Series(np.asarray(distinct, dtype=object)).astype("string").str.lower()
    return np.asarray(codes), lower


def _lowered_in(codes: np.ndarray, lower: pd.Series, known: Any) -> np.ndarray:
    """Per row (codes of :func:`_lowered`), whether its lowercase value is in ``known``."""
    hit = lower.isin(list(known)).fillna(False).to_numpy(dtype=bool)
    return np.append(hit, False)[codes]


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
    codes, lower = _lowered(values)
    hits = _lowered_in(codes, lower, TESTNET_CONTRACTS)
    if not hits.any():
        return
    first = int(np.flatnonzero(hits)[0])
    address = lower.iat[codes[first]]
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
    codes, lower = _lowered(contracts)
    domain = np.asarray(domains, dtype=np.int64)
    for address in lower.dropna().unique().tolist():
        try:
            owners = chains.contract_domains(address)
        except ValueError:  # not an address at all: no CCTP contract's either
            continue
        if not owners:
            continue
        rows = np.flatnonzero(_lowered_in(codes, lower, [address]))
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
    if len(decoded.sent):  # only a MessageTransmitter's messages say where they come from
        sent = decoded.sent
        for value in sent.loc[_transmitters(sent), "source_domain"].unique().tolist():
            said.setdefault(int(value), f"MessageSent whose message says source domain {value}")
    return said


def _transmitters(sent: pd.DataFrame) -> np.ndarray:
    """Which ``MessageSent`` rows a MessageTransmitter of any chain emitted."""
    return ~unknown_emitters(sent["contract"], np.full(len(sent), -1), "message_transmitter")


def screen_message_sources(decoded: Any) -> tuple[Any, list[dict[str, Any]]]:
    """Decoded events less the messages that say they were sent from no CCTP domain at all,
    and those as bad rows (``source_file``, ``index``, ``reason``).

    A ``MessageSent`` is emitted on its source chain, so its message names the file's own
    domain. One naming another chain's domain says the file is that chain's
    (:func:`check_log_chain` refuses the file, naming the chain to pass); one naming a
    domain no chain has is a damaged message: its row, not the file's chain, is wrong.
    """
    sent = decoded.sent
    if not len(sent):
        return decoded, []
    source = pd.to_numeric(sent["source_domain"], errors="coerce")
    # the file's own domain is a known one, so a domain no chain has is never it
    unknown = (source.notna() & ~source.isin(chains.all_domains())).to_numpy()
    damaged = _transmitters(sent) & unknown
    if not damaged.any():
        return decoded, []
    problems = [
        {
            "source_file": str(sent["source_file"].iat[i]),
            "index": int(sent["index"].iat[i]),
            "reason": f"log {sent['log_index'].iat[i]} of transaction {sent['tx_hash'].iat[i]}: "
            f"MessageSent whose message says source domain {int(source.iat[i])}, which no "
            "CCTP chain has (a damaged message)",
        }
        for i in np.flatnonzero(damaged).tolist()
    ]
    kept = sent[~damaged].reset_index(drop=True)
    return dataclasses.replace(decoded, sent=kept), problems


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


# --------------------------------------------------------------------------
# amounts within USDC's supply

USDC_SUPPLY_CAP_RAW = 10**17
"""The largest amount any reader accepts, in base units: USD 100 B of a 6-decimal token.

No burn or mint can move more USDC than exists: Circle reported 50.6 B USDC
in circulation on 2022-05-13 (Circle's blog "How to Be Stable"), and
secondary reports put it near 45 B at the end of 2024 and 60-65 B in
2025-26 (``reference/cctp.md``). The cap sits above all of these, so it
refuses only impossible values: an amount written with 18 decimals, a
corrupt word. EURC and USYC, the other tokens CCTP burns, have 6 decimals
and far smaller supplies.
"""


def outside_supply(values: Any) -> np.ndarray:
    """Which amounts (base units) are negative or exceed :data:`USDC_SUPPLY_CAP_RAW`.

    Empty cells are not (a missing amount is another column's problem).

    Examples
    --------
    >>> outside_supply([1_000_000, -1, 10**18, None]).tolist()
    [False, True, True, False]
    """
    numbers = pd.to_numeric(pd.Series(np.asarray(values, dtype=object)), errors="coerce")
    wrong = (numbers < 0) | (numbers > USDC_SUPPLY_CAP_RAW)
    return np.asarray(wrong.fillna(False), dtype=bool)


def amount_message(column: str, cell: str, *, unit: str = "base units") -> str:
    """What an amount outside USDC's supply is refused with: the column, the value, what to pass.

    ``unit`` is ``"base units"`` (``amount_raw``, the events' ``amount``) or
    ``"USDC"`` (a ``transfers`` table's ``amount``).
    """
    raw = unit == "base units"
    cap = USDC_SUPPLY_CAP_RAW
    limit = f"{cap:,} base units" if raw else f"{cap // 10**6:,} USDC"
    what = ("amounts in the token's base units (6 decimals: 1 USDC is 1000000), not "
            "18-decimal wei") if raw else "amounts in USDC, or amount_raw in base units"
    return (
        f"column {column!r}: {cell} {unit} is not an amount of USDC (from 0 to {limit}, "
        f"USD 100 B, more than all the USDC there is); pass {what}"
    )


# --------------------------------------------------------------------------
# who emitted an event

_ROLES = ("token_messenger", "message_transmitter", "token_minter")

_EVENT_ROLES = {
    "burns": "token_messenger",
    "mints": "token_messenger",
    "sent": "message_transmitter",
    "received": "message_transmitter",
}
"""Which of Circle's contracts emits each event family (``circlefin/evm-cctp-contracts``:
``DepositForBurn`` and ``MintAndWithdraw`` the TokenMessenger, V1 and V2; ``MessageSent``
and ``MessageReceived`` the MessageTransmitter)."""


def emitters(domain: int, role: str | None = None) -> frozenset[str]:
    """Circle's CCTP contracts of a domain (V1 and V2), lowercase; ``role`` narrows to one kind.

    ``role`` is ``"token_messenger"``, ``"message_transmitter"`` or
    ``"token_minter"`` (``None``: all three). A domain the registry lists no
    contracts for (a chain newer than the registry, ``domain-<n>``) is given
    V2's CREATE2 contracts, which Circle deploys at one address on every EVM
    chain; the registry (``chains.toml``, :func:`cctx_research.chains.register`)
    names any other.

    Examples
    --------
    >>> sorted(emitters(6, "token_messenger"))
    ['0x1682ae6375c4e4a97e4b583bc394c861a46d8962', '0x28b5a0e9c621a5badaa536219b3a228c8168cf5d']
    >>> "0x28b5a0e9c621a5badaa536219b3a228c8168cf5d" in emitters(28)
    False
    """
    if role is not None and role not in _ROLES:
        raise ValueError(f"role must be one of {_ROLES} or None, got {role!r}")
    names = _ROLES if role is None else (role,)
    listed = []
    for version in (1, 2):
        try:
            found = chains.contracts(int(domain), version)
        except (TypeError, ValueError):
            found = None
        if found is not None:
            listed.append(found)
    if not listed:
        common = chains.contracts("ethereum", 2)
        listed = [] if common is None else [common]
    return frozenset(
        value.lower() for c in listed for n in names if (value := getattr(c, n)) is not None
    )


def unknown_emitters(contracts: Any, domains: Any, role: str | None = None) -> np.ndarray:
    """Which rows' emitting contract is not one of Circle's (:func:`emitters`) for the row's domain.

    An empty contract is unknown; a row without a domain (``-1``, a bad row)
    is checked against every domain's contracts of ``role``.
    """
    codes, lower = _lowered(contracts)
    domain = np.asarray(domains)
    if domain.dtype.kind in "iu":
        domain = domain.astype(np.int64, copy=False)
    else:  # missing or text domains: a bad row's (-1)
        domain = pd.to_numeric(pd.Series(np.asarray(domains, dtype=object)), errors="coerce")
        domain = domain.fillna(-1).to_numpy(dtype=np.int64)
    out = np.ones(len(codes), dtype=bool)
    for value in np.unique(domain).tolist():
        rows = domain == value
        if value >= 0:
            known = emitters(value, role)
        else:
            known = frozenset().union(*(emitters(d, role) for d in chains.all_domains()))
        out[rows] = ~_lowered_in(codes[rows], lower, known)
    return out


def skip_unknown_emitters(decoded: Any) -> tuple[Any, int]:
    """The decoded events less those no CCTP contract of their chain emitted, and how many."""
    frames, skipped = {}, 0
    for kind, role in _EVENT_ROLES.items():
        frame = getattr(decoded, kind)
        if not len(frame):
            continue
        unknown = unknown_emitters(frame["contract"], frame["domain"], role)
        if unknown.any():
            skipped += int(unknown.sum())
            frames[kind] = frame[~unknown].reset_index(drop=True)
    return (dataclasses.replace(decoded, **frames) if frames else decoded), skipped


def screen_events(
    decoded: Any, *, time_column: str, event: str = "log", now: pd.Timestamp | None = None
) -> tuple[Any, list[dict[str, Any]]]:
    """Decoded events less those with a time outside CCTP's era or an amount outside USDC's
    supply, and those as bad rows (``source_file``, ``index``, ``reason``).

    A reason names the event (``"<event> <log_index> of transaction <tx_hash>"``),
    the file's column (``time_column`` for times, ``amount`` for amounts) and
    what to pass.
    """
    frames, problems = {}, []
    for kind in _EVENT_ROLES:
        frame = getattr(decoded, kind)
        if not len(frame):
            continue
        late = outside_era(frame["timestamp"], now=now)
        big = outside_supply(frame["amount_raw"]) if "amount_raw" in frame.columns else late & False
        for i in np.flatnonzero(late | big).tolist():
            when = frame["timestamp"].iat[i]
            why = (era_message(time_column, f"{int(when.timestamp())}", when) if late[i] else
                   amount_message("amount", f"{int(frame['amount_raw'].iat[i]):,}"))  # fmt: skip
            problems.append({
                "source_file": str(frame["source_file"].iat[i]),
                "index": int(frame["index"].iat[i]),
                "reason": f"{event} {frame['log_index'].iat[i]} of transaction "
                f"{frame['tx_hash'].iat[i]}: {why}",
            })  # fmt: skip
        if (late | big).any():
            frames[kind] = frame[~(late | big)].reset_index(drop=True)
    return (dataclasses.replace(decoded, **frames) if frames else decoded), problems
