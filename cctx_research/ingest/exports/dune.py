"""Dune exports (format ``"dune"``): the bridges spells and Circle's decoded event tables.

Column names are those Dune documents (spellbook's
``bridges_evms_{flows,deposits,withdrawals}`` and the decoded
``circle_<chain>.*_evt_*`` tables); the mapping is ours:

``bridges_evms.flows`` (one row per paired transfer; ``"source"`` pairing)
    ``deposit_chain``/``withdrawal_chain`` (Dune chain names),
    ``deposit_block_time``/``_number``, ``withdrawal_block_time``/``_number``,
    ``deposit_tx_hash``, ``withdrawal_tx_hash``, ``deposit_amount_raw``,
    ``sender`` (depositor), ``recipient``, ``deposit_token_address``,
    ``bridge_transfer_id`` (the CCTP nonce), ``bridge_version``.
``bridges_evms.deposits`` (burns) / ``.withdrawals`` (arrivals)
    ``block_time``, ``block_number``, ``tx_hash``, ``evt_index``,
    ``deposit_amount_raw`` / ``withdrawal_amount_raw``, ``sender``,
    ``recipient``, ``deposit_token_address``, ``bridge_transfer_id``,
    ``withdrawal_chain_id`` / ``deposit_chain_id`` (the other side's CCTP domain),
    ``contract_address`` (the TokenMessenger that emitted the DepositForBurn /
    MintAndWithdraw; checked against Circle's of the row's chain where the
    export has it; flows carries no contract).
``circle_<chain>.tokenmessenger[v2]_evt_depositforburn``, ``..._evt_mintandwithdraw``,
``messagetransmitter[v2]_evt_messagereceived``
    ``contract_address``, ``evt_tx_hash``, ``evt_index``, ``evt_block_time``,
    ``evt_block_number``, ``chain`` (cross-chain tables; else ``chain=``);
    ``evt_tx_from`` where the table has it (the ledger's ``burn_tx_from``)
    and the event's parameters (``nonce``, ``burnToken``, ``amount``,
    ``messageBody``, decoded as a BurnMessage,
    ``depositor``, ``mintRecipient``, ``destinationDomain``, ... V2:
    ``maxFee``, ``minFinalityThreshold``, ``hookData``, ``feeCollected``,
    ``finalityThresholdExecuted``). A table with ``maxFee`` (burns),
    ``feeCollected`` (mints) or a bytes32 nonce (messages) is V2.

Only rows whose ``bridge_name`` is CCTP are read from the bridges spells;
the others are skipped and counted. Amounts (uint256 decimal text in CSV)
are parsed exactly.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable

import numpy as np
import pandas as pd

from ... import chains, schema
from ...errors import DataError
from ..formats import FileRead
from ..ledger import guards
from ..values import Rows

__all__ = ["DUNE_CHAINS", "read"]

logger = logging.getLogger(__name__)

DUNE_CHAINS: dict[str, str] = {"avalanche_c": "avalanche", "worldchain": "world_chain"}
"""Dune's chain names that differ from the registry's."""


def chain_domains(
    rows: Rows, column: str, fallback: str | None = None, *, required: np.ndarray | None = None
) -> np.ndarray:
    """Domains of a column of chain names (Dune's or ours); bad names flag rows.

    An empty cell flags its row where ``required`` (every row by default), else gives -1.
    """
    text = rows.strings(column, lower=True)
    if fallback is not None and rows.has(fallback):
        text = text.fillna(rows.strings(fallback, lower=True))
    mapped = text.map(_named_domains(text), na_action="ignore")
    unknown = np.asarray(text.notna() & mapped.isna(), dtype=bool)
    rows.flag(unknown, lambda i: f"column {column!r}: unknown chain {text.iloc[i]!r}")
    out = mapped.fillna(-1).to_numpy(dtype=np.int64)
    empty = np.asarray(text.isna(), dtype=bool)
    rows.flag(empty if required is None else empty & required, f"column {column!r} is empty")
    return out


def _named_domains(text: pd.Series) -> dict[str, int]:
    """Each chain name of ``text`` (Dune's or ours) and its domain; what names none is left out.

    A number is no chain name: ``chains.domain`` passes an unknown domain id through,
    so only the registry's domains count (``'33132048973192757248'`` flags its row).
    """
    held, known = set(chains.all_domains()), {}
    for value in text.dropna().unique().tolist():
        with contextlib.suppress(ValueError):  # an unknown name flags its rows
            domain = chains.domain(DUNE_CHAINS.get(value, value))
            if domain in held:
                known[value] = domain
    return known


def _cctp_only(rows: Rows, parts: FileRead) -> Rows:
    name = rows.strings("bridge_name", lower=True)
    keep = np.asarray(name.str.contains("cctp").fillna(False), dtype=bool)
    parts.skip("other_bridges", int((~keep).sum()))
    return Rows(rows.frame[keep], rows.source_file, first=rows.offset) if not keep.all() else rows


def _version(rows: Rows) -> pd.Series:
    version = rows.nullable_integers("bridge_version") if rows.has("bridge_version") else None
    if version is None:
        return pd.Series(1, index=rows.frame.index, dtype=schema.NULLABLE_INT)
    return version.fillna(1)


def _flows(rows: Rows, parts: FileRead) -> Rows:
    """A flows row as it is: two-sided (paired by the spell), deposit-only or withdrawal-only.

    ``bridges_evms.flows`` is a full outer join of deposits and withdrawals:
    a withdrawal-only row (its burn outside the export, or on Solana or
    Noble) is an arrival, a deposit-only row a burn (pending until a mint
    links to it). The spell's ``sender`` is the depositor where the row has
    a deposit; on a withdrawal-only row it is the TokenMessenger, so it is
    not read as the message sender there.
    """
    rows = _cctp_only(rows, parts)
    deposit = np.asarray(rows.strings("deposit_tx_hash").notna(), dtype=bool)
    withdrawal = np.asarray(rows.strings("withdrawal_tx_hash").notna(), dtype=bool)
    rows.flag(~deposit & ~withdrawal, "neither deposit_tx_hash nor withdrawal_tx_hash is set")
    version = _version(rows)
    source = _domains_or_names(rows, "deposit_chain_id", "deposit_chain",
                               where=deposit | withdrawal)  # fmt: skip
    destination = _domains_or_names(rows, "withdrawal_chain_id", "withdrawal_chain",
                                    where=deposit | withdrawal)  # fmt: skip
    nonce = rows.strings("bridge_transfer_id")
    if deposit.all() or not rows.has("withdrawal_amount_raw"):
        amount = rows.amounts("deposit_amount_raw")
    else:  # a withdrawal-only row has no deposit amount: the minted amount stands in
        amount = np.where(
            deposit,
            rows.amounts("deposit_amount_raw", missing=0),
            rows.amounts("withdrawal_amount_raw", missing=0),
        )
    frame = pd.DataFrame(
        {
            "source_domain": source,
            "destination_domain": destination,
            "nonce": nonce,
            "cctp_version": version,
            "amount_raw": amount,
            "burn_timestamp": rows.times("deposit_block_time", optional=True),
            "mint_timestamp": rows.times("withdrawal_block_time", optional=True),
            "burn_tx_hash": rows.hashes("deposit_tx_hash"),
            "mint_tx_hash": rows.hashes("withdrawal_tx_hash"),
            "burn_block": rows.integers("deposit_block_number", missing=-1)
            if rows.has("deposit_block_number")
            else -1,
            "mint_block": rows.integers("withdrawal_block_number", missing=-1)
            if rows.has("withdrawal_block_number")
            else -1,
            "message_sender": rows.addresses("sender").where(deposit),
            "mint_recipient": rows.addresses("recipient"),
            "burn_token": rows.addresses("deposit_token_address"),
        }
    )
    good = ~rows.bad
    parts.paired.append(frame[good & deposit & withdrawal])
    burns = frame[good & deposit & ~withdrawal].drop(
        columns=["mint_timestamp", "mint_tx_hash", "mint_block"]
    )
    v2 = (burns["cctp_version"] == 2).fillna(False).to_numpy()
    burns.loc[v2, "nonce"] = pd.NA  # a V2 burn's nonce is the attestation's, not the deposit's
    parts.burn_rows.append(burns)
    parts.arrivals.append(
        frame[good & ~deposit & withdrawal].drop(
            columns=["burn_timestamp", "burn_tx_hash", "burn_block"]
        )
    )
    return rows


def _circles(rows: Rows, parts: FileRead, domain: np.ndarray, chain_column: str) -> np.ndarray:
    """Which rows to keep, by the contract that emitted their event.

    The spell's deposits and withdrawals carry ``contract_address``, the
    TokenMessenger that emitted the row's DepositForBurn or MintAndWithdraw
    (flows carries none). Where the column is there, a testnet contract or
    another chain's refuses the file (naming line and column) and any other
    contract's row is skipped and counted (``skipped_unknown_emitter``), as in
    the decoded tables.
    """
    if not rows.has("contract_address"):
        return np.ones(len(rows), dtype=bool)
    contract = rows.addresses("contract_address")
    line = rows.offset
    guards.refuse_testnet(rows.source_file, "contract_address", contract,
                          lambda i: f"line {i + line}")  # fmt: skip
    guards.refuse_other_chain(rows.source_file, "contract_address", contract, domain,
                              lambda i: f"line {i + line}", chain_column=chain_column)  # fmt: skip
    unknown = guards.unknown_emitters(contract, domain, "token_messenger") & ~rows.bad
    parts.skip("unknown_emitter", int(unknown.sum()))
    return ~unknown


def _deposits(rows: Rows, parts: FileRead) -> Rows:
    rows = _cctp_only(rows, parts)
    source = chain_domains(rows, "deposit_chain")
    frame = pd.DataFrame(
        {
            "source_domain": source,
            "destination_domain": _domains_or_names(
                rows, "withdrawal_chain_id", "withdrawal_chain"
            ),
            "burn_tx_hash": rows.hashes("tx_hash"),
            "burn_log_index": rows.integers("evt_index"),
            "burn_block": rows.integers("block_number", missing=-1),
            "burn_timestamp": rows.times("block_time"),
            "cctp_version": _version(rows),
            "nonce": rows.strings("bridge_transfer_id"),
            "amount_raw": rows.amounts("deposit_amount_raw"),
            "message_sender": rows.addresses("sender"),
            "mint_recipient": rows.addresses("recipient"),
            "burn_token": rows.addresses("deposit_token_address"),
        }
    )
    frame.loc[(frame["cctp_version"] == 2).fillna(False).to_numpy(), "nonce"] = pd.NA
    kept = _circles(rows, parts, source, "deposit_chain")
    parts.burn_rows.append(frame[~rows.bad & kept])
    return rows


def _withdrawals(rows: Rows, parts: FileRead) -> Rows:
    rows = _cctp_only(rows, parts)
    destination = chain_domains(rows, "withdrawal_chain")
    frame = pd.DataFrame(
        {
            "destination_domain": destination,
            "source_domain": _domains_or_names(rows, "deposit_chain_id", "deposit_chain"),
            "mint_tx_hash": rows.hashes("tx_hash"),
            "mint_log_index": rows.integers("evt_index"),
            "mint_block": rows.integers("block_number", missing=-1),
            "mint_timestamp": rows.times("block_time"),
            "cctp_version": _version(rows),
            "nonce": rows.strings("bridge_transfer_id"),
            "amount_raw": rows.amounts("withdrawal_amount_raw"),
            "mint_recipient": rows.addresses("recipient"),
        }
    )
    kept = _circles(rows, parts, destination, "withdrawal_chain")
    parts.arrivals.append(frame[~rows.bad & kept])
    return rows


def _domains_or_names(
    rows: Rows, ids: str, names: str, *, where: np.ndarray | None = None
) -> np.ndarray:
    """CCTP domains from a domain-id column, else from chain names; needed only ``where``.

    ``bridges_evms.flows`` is a full outer join: each side's chain id comes
    from the *other* side's table, so a one-sided row has it empty while its
    chain's name is there. An empty id is read from the name column; a row
    flags only when both are empty (or the name unknown) where it is needed.
    """
    need = np.ones(len(rows), dtype=bool) if where is None else where
    if not rows.has(ids):
        return chain_domains(rows, names, required=need)
    values = rows.nullable_integers(ids)
    missing = values.isna().to_numpy() & need
    out = values.fillna(-1).to_numpy(dtype=np.int64)
    if not missing.any():
        return out
    if not rows.has(names):
        rows.flag(missing, f"column {ids!r} is empty (and there is no {names!r} column)")
        return out
    text = rows.strings(names, lower=True).where(missing)
    mapped = text.map(_named_domains(text), na_action="ignore")
    rows.flag(np.asarray(text.notna() & mapped.isna(), dtype=bool),
              lambda i: f"column {names!r}: unknown chain {text.iloc[i]!r}")  # fmt: skip
    rows.flag(missing & np.asarray(text.isna(), dtype=bool),
              f"columns {ids!r} and {names!r} are empty")  # fmt: skip
    return np.where(missing, mapped.fillna(-1).to_numpy(dtype=np.int64), out)


# -- decoded Circle tables -----------------------------------------------------


def _event_base(rows: Rows, chain: int | None) -> pd.DataFrame:
    if rows.has("chain") or rows.has("blockchain"):
        domain = chain_domains(rows, "chain", fallback="blockchain")
    elif chain is not None:
        domain = np.full(len(rows), chain, dtype=np.int64)
    else:
        raise DataError(
            f"the chain of {rows.source_file!r} is unknown: Dune's per-chain decoded tables "
            "have no 'chain' column",
            hint=f"pass chain={_chain_guess(rows)!r} (or {{path: chain}}); on the command line "
            "--chain CHAIN or --chain PATH=CHAIN",
        )
    if not rows.has("contract_address"):
        raise DataError(
            f"{rows.source_file!r} has no 'contract_address' column: without the emitting "
            "contract, Circle's events cannot be told from another contract's copies",
            hint="export the decoded table with its contract_address column (Dune's "
            "circle_<chain> tables carry it)",
        )
    contract = rows.addresses("contract_address")
    line = rows.offset
    guards.refuse_testnet(rows.source_file, "contract_address", contract,
                          lambda i: f"line {i + line}")  # fmt: skip
    guards.refuse_other_chain(rows.source_file, "contract_address", contract, domain,
                              lambda i: f"line {i + line}")  # fmt: skip
    return pd.DataFrame(
        {
            "domain": domain,
            "tx_hash": rows.hashes("evt_tx_hash"),
            "log_index": rows.integers("evt_index"),
            "block_number": rows.integers("evt_block_number", missing=-1)
            if rows.has("evt_block_number")
            else -1,
            "timestamp": rows.times("evt_block_time"),
            "contract": contract,
            # the transaction's sender, in the decoded tables that carry it
            "transaction_from": rows.addresses("evt_tx_from"),
        }
    )


def _emitted(rows: Rows, parts: FileRead, frame: pd.DataFrame, role: str) -> pd.DataFrame:
    """The good rows whose ``contract_address`` is Circle's ``role`` contract of their chain;
    the others' count as ``skipped_unknown_emitter``."""
    unknown = guards.unknown_emitters(frame["contract"], frame["domain"], role) & ~rows.bad
    parts.skip("unknown_emitter", int(unknown.sum()))
    return frame[~rows.bad & ~unknown]


def _chain_guess(rows: Rows) -> str:
    """The chain a per-chain table most likely holds, for the hint; ``'<chain>'`` when unclear.

    Dune names the table after its chain (``circle_base.messagetransmitter_...``,
    exported as ``circle_base_...``); else Circle's V1 contracts differ per
    chain, so ``contract_address`` may name it (V2's are the same on most).
    """
    name = str(rows.source_file).replace("\\", "/").rsplit("/", 1)[-1].lower()
    for known in sorted(chains.known_names(), key=len, reverse=True):
        if name.startswith(f"circle_{known}_") or name.startswith(f"circle_{known}."):
            return known
    if rows.has("contract_address"):
        addresses = set(rows.strings("contract_address").dropna())
        found = {d for a in addresses for d in _domains_of(a)}
        if len(found) == 1:
            return chains.info(found.pop()).name
    return "<chain>"


def _domains_of(address: str) -> frozenset[int]:
    with contextlib.suppress(ValueError, TypeError):
        return chains.contract_domains(address)
    return frozenset()


def _depositforburn(rows: Rows, parts: FileRead, chain: int | None) -> Rows:
    v2 = rows.has("maxfee") or not rows.has("nonce")
    frame = _event_base(rows, chain).assign(
        cctp_version=2 if v2 else 1,
        nonce=pd.NA if v2 else rows.strings("nonce"),
        burn_token=rows.addresses("burntoken"),
        amount_raw=rows.amounts("amount"),
        message_sender=rows.addresses("depositor"),
        mint_recipient=rows.addresses("mintrecipient"),
        destination_domain=rows.domains("destinationdomain"),
        destination_token_messenger=rows.addresses("destinationtokenmessenger"),
        destination_caller=rows.addresses("destinationcaller"),
        max_fee_raw=rows.nullable_integers("maxfee"),
        min_finality_threshold=rows.nullable_integers("minfinalitythreshold"),
        hook_data=rows.strings("hookdata", lower=True),
    )
    parts.burns.append(_emitted(rows, parts, frame, "token_messenger"))
    return rows


def _mintandwithdraw(rows: Rows, parts: FileRead, chain: int | None) -> Rows:
    frame = _event_base(rows, chain).assign(
        cctp_version=2 if rows.has("feecollected") else 1,
        mint_recipient=rows.addresses("mintrecipient"),
        amount_raw=rows.amounts("amount"),
        mint_token=rows.addresses("minttoken"),
        fee_raw=rows.nullable_integers("feecollected"),
    )
    parts.mints.append(_emitted(rows, parts, frame, "token_messenger"))
    return rows


def _messagereceived(rows: Rows, parts: FileRead, chain: int | None) -> Rows:
    nonce = rows.strings("nonce", lower=True)
    v2 = nonce.str.startswith("0x").fillna(False) | rows.has("finalitythresholdexecuted")
    frame = _event_base(rows, chain).assign(
        cctp_version=np.where(np.asarray(v2, dtype=bool), 2, 1),
        source_domain=rows.domains("sourcedomain"),
        nonce=nonce,
        sender=rows.addresses("sender"),
        caller=rows.addresses("caller"),
        finality_threshold_executed=rows.nullable_integers("finalitythresholdexecuted"),
    )
    if rows.has("messagebody"):
        version = 2 if rows.has("finalitythresholdexecuted") else 1
        body = _bodies(rows.strings("messagebody"), version)
        frame = pd.concat([frame, body.set_index(frame.index)], axis=1)
    parts.received.append(_emitted(rows, parts, frame, "message_transmitter"))
    return rows


def _bodies(text: pd.Series, version: int) -> pd.DataFrame:
    """The BurnMessage fields of ``messageBody`` hex (null where it is another message)."""
    import pyarrow as pa

    from ..evm.messages import decode_message
    from ..hexcodec import hex_to_bytes
    from ..rows import Reasons

    column = hex_to_bytes(pa.array(text.array, type=pa.large_string(), from_pandas=True))
    reasons = Reasons(len(text))
    decoded = decode_message(
        column.buffer, column.text, column.starts, column.lengths, reasons, body_version=version
    )
    return pd.DataFrame({k: pd.Series(v).reset_index(drop=True) for k, v in decoded.items()})


_READERS: dict[str, Callable[..., Rows]] = {
    "flows": _flows,
    "deposits": _deposits,
    "withdrawals": _withdrawals,
}
_EVENTS: dict[str, Callable[..., Rows]] = {
    "depositforburn": _depositforburn,
    "mintandwithdraw": _mintandwithdraw,
    "messagereceived": _messagereceived,
}


def read(rows: Rows, table: str, *, chain: int | None = None) -> FileRead:
    """Read one Dune table (named by :func:`~.formats.detect`)."""
    out = FileRead(format="dune")
    rows.frame.columns = [str(c).strip().lower() for c in rows.frame.columns]
    reader = _READERS.get(table)
    used = reader(rows, out) if reader else _EVENTS[table](rows, out, chain)
    out.problems.extend(used.problems)
    return out
