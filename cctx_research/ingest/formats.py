"""The formats ``load`` reads, what each needs, and telling them apart.

Each format is recognised by the columns of a table (or, for event logs in
JSON, by the shape of its records). A table that fits none gets a
:class:`~cctx_research.errors.DataError` listing every format, the tables
it accepts, and the columns the table lacks for the closest of each.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..errors import DataError
from ..provenance import Provenance

__all__ = ["FORMATS", "TABLES", "FileRead", "combine", "detect", "no_format_error"]

FORMATS: dict[str, str] = {
    "evm-logs": "event logs: eth_getLogs JSON (list, JSON-RPC response or JSON Lines) "
    "or cryo's logs Parquet/CSV (block_number, transaction_hash, log_index, topic0, data)",
    "dune": "Dune exports: bridges_evms flows/deposits/withdrawals rows of CCTP, or the "
    "decoded circle_<chain> DepositForBurn / MintAndWithdraw / MessageReceived tables",
    "xchaindatagen": "XChainDataGen's cctp_deposit_for_burn, cctp_message_received, "
    "cctp_cross_chain_transactions (and cctp_blockchain_transactions for times)",
    "solana": "Solana getTransaction replies (encoding json or jsonParsed; one reply, a list, "
    "JSON-RPC responses or JSON Lines), with MessageSent accounts of getProgramAccounts",
    "cctx": "the toolkit's own 'ledger' or 'transfers' frames (Parquet, CSV, JSON)",
}
"""Format name -> what it is."""

TABLES: dict[tuple[str, str], tuple[str, ...]] = {
    ("evm-logs", "cryo_logs"): ("block_number", "transaction_hash", "log_index", "topic0", "data"),
    ("dune", "flows"): (
        "bridge_name", "bridge_transfer_id", "deposit_chain", "withdrawal_chain",
        "deposit_tx_hash", "withdrawal_tx_hash", "deposit_amount_raw",
    ),
    ("dune", "deposits"): (
        "bridge_name", "bridge_transfer_id", "deposit_chain", "tx_hash", "evt_index",
        "deposit_amount_raw", "block_time",
    ),
    ("dune", "withdrawals"): (
        "bridge_name", "bridge_transfer_id", "withdrawal_chain", "tx_hash", "evt_index",
        "withdrawal_amount_raw", "block_time",
    ),
    ("dune", "depositforburn"): (
        "evt_tx_hash", "evt_index", "evt_block_time", "burntoken", "amount", "depositor",
        "mintrecipient", "destinationdomain",
    ),
    ("dune", "mintandwithdraw"): (
        "evt_tx_hash", "evt_index", "evt_block_time", "mintrecipient", "amount", "minttoken",
    ),
    ("dune", "messagereceived"): (
        "evt_tx_hash", "evt_index", "evt_block_time", "caller", "sourcedomain", "nonce", "sender",
    ),
    ("xchaindatagen", "cctp_deposit_for_burn"): (
        "blockchain", "transaction_hash", "nonce", "depositor", "burn_token", "recipient",
        "dst_blockchain", "amount",
    ),
    ("xchaindatagen", "cctp_message_received"): (
        "blockchain", "transaction_hash", "nonce", "src_blockchain", "input_token", "depositor",
        "recipient", "amount",
    ),
    ("xchaindatagen", "cctp_cross_chain_transactions"): (
        "src_blockchain", "src_transaction_hash", "src_timestamp", "dst_blockchain",
        "dst_transaction_hash", "dst_timestamp", "deposit_id", "depositor", "recipient", "amount",
    ),
    ("xchaindatagen", "cctp_blockchain_transactions"): (
        "blockchain", "transaction_hash", "block_number", "timestamp",
    ),
}  # fmt: skip
"""(format, table) -> the columns that identify it (lowercase; Dune's camelCase folds)."""


@dataclass
class FileRead:
    """What one reader gave from one file: event tables, ready rows, counts and bad rows.

    Each reader builds its own and returns it; :func:`combine` joins those of
    every file. ``burns``/``sent``/``received``/``mints`` follow the event-log
    decoder's column names; ``burn_rows``/``arrivals``/``paired`` the linking
    module's (see :mod:`cctx_research.ingest.ledger.linking`); ``tx_times`` is
    ``domain, tx_hash, block_number, timestamp`` for transactions whose
    events carry no time (XChainDataGen); ``ledgers`` are the toolkit's own
    frames, with their ``provenance``. ``counts`` holds ``rows_read``,
    ``decoded``, ``duplicates`` and ``missing_times``; ``skipped`` the rows
    left out on purpose, by reason (``other_events``, ``other_bridges``,
    ``removed``, ...).
    """

    format: str
    burns: list[pd.DataFrame] = field(default_factory=list)
    sent: list[pd.DataFrame] = field(default_factory=list)
    received: list[pd.DataFrame] = field(default_factory=list)
    mints: list[pd.DataFrame] = field(default_factory=list)
    burn_rows: list[pd.DataFrame] = field(default_factory=list)
    arrivals: list[pd.DataFrame] = field(default_factory=list)
    paired: list[pd.DataFrame] = field(default_factory=list)
    tx_times: list[pd.DataFrame] = field(default_factory=list)
    ledgers: list[pd.DataFrame] = field(default_factory=list)
    provenance: list[Provenance] = field(default_factory=list)
    problems: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)

    def add(self, name: str, value: int) -> None:
        """Add to one of :attr:`counts`."""
        self.counts[name] = self.counts.get(name, 0) + int(value)

    def skip(self, reason: str, value: int) -> None:
        """Count rows left out on purpose, by reason."""
        if value:
            self.skipped[reason] = self.skipped.get(reason, 0) + int(value)


def combine(reads: Iterable[FileRead]) -> FileRead:
    """One :class:`FileRead` of several files': every list joined, every count added."""
    reads = list(reads)
    formats = sorted({r.format for r in reads if r.format})
    out = FileRead(format="+".join(formats))
    for read in reads:
        for name in ("burns", "sent", "received", "mints", "burn_rows", "arrivals", "paired",
                     "tx_times", "ledgers", "provenance", "problems"):
            getattr(out, name).extend(getattr(read, name))
        for key, value in read.counts.items():
            out.add(key, value)
        for key, value in read.skipped.items():
            out.skip(key, value)
    return out


def _lower(columns: Iterable[Any]) -> set[str]:
    return {str(c).strip().lower() for c in columns}


def detect(columns: Iterable[Any], *, wanted: str | None = None) -> tuple[str, str] | None:
    """The (format, table) whose identifying columns ``columns`` has, or ``None``.

    ``cctx`` tables (ledger, transfers) are recognised by
    :func:`cctx_research.ingest.exports.own.missing`, not here.
    """
    have = _lower(columns)
    for (fmt, table), needs in TABLES.items():
        if wanted is not None and fmt != wanted:
            continue
        if all(c in have for c in needs):
            return fmt, table
    return None


def no_format_error(
    path: str, columns: Iterable[Any], cctx_missing: dict[str, list[str]], wanted: str | None
) -> DataError:
    """The error for a table that matches no format: one line, what it looks like, what to do.

    It names the file, how many columns it has (a few of them), and the
    closest table of any format (of ``wanted``, when forced) with the columns
    it lacks; the hint lists the formats.
    """
    have = _lower(columns)
    options = [
        (fmt, table, [c for c in needs if c not in have])
        for (fmt, table), needs in TABLES.items()
        if wanted is None or fmt == wanted
    ]
    if wanted in (None, "cctx"):
        options += [("cctx", kind, list(lacks)) for kind, lacks in cctx_missing.items()]
    names = sorted(str(c) for c in columns)
    shown = ", ".join(names[:6]) + (f", ... ({len(names)} in all)" if len(names) > 6 else "")
    head = f"{path!r} is not a {wanted!r} file" if wanted else f"{path!r} matches no known format"
    if len(names) == 1 and any(sep in names[0] for sep in ";|\t,"):
        looks = (
            f"its one column is {names[0][:60]!r}, so its delimiter is none of comma, "
            "semicolon or tab: save it as CSV with one of those"
        )
        options = []
    else:
        looks = f"its columns: {shown or '(none)'}"
    if options:
        fmt, table, lacks = min(options, key=lambda item: len(item[2]))
        shown_lacks = ", ".join(lacks[:6]) + (", ..." if len(lacks) > 6 else "")
        looks += f"; the closest is {fmt}'s {table!r} table, which also needs {shown_lacks}"
    return DataError(
        f"{head}: {looks}",
        hint="pass format= one of " + ", ".join(FORMATS) + " if the file is one of them "
        "(docs/sources.md lists the columns each needs)",
    )
