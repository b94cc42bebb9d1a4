"""Solana's CCTP transactions as the event tables of the EVM decoder, vectorised.

:func:`decode` reads files of ``getTransaction`` replies (see
:mod:`cctx_research.ingest.solana.replies` for the shapes; :func:`decode_json`
the same text held in memory, both straight from the text with
:mod:`cctx_research.ingest.solana.text`) and decodes the
Anchor self-CPI events of Circle's programs (layouts in
:mod:`cctx_research.ingest.solana.layouts`) into the frames of
:class:`cctx_research.ingest.evm.decoder.DecodedLogs`: ``burns``
(``DepositForBurn``), ``mints`` (``MintAndWithdraw``), ``received``
(``MessageReceived``) and ``sent`` (the ``MessageSent`` accounts given in
the same file), so that :mod:`~cctx_research.ingest.ledger.sides` and
:mod:`~cctx_research.ingest.ledger.linking` make ledger rows of them that link to
their EVM sides (V1 by nonce, V2 by content).

Solana's columns: ``domain`` 5, ``chain_id`` ``"solana"``, ``tx_hash`` the
transaction's signature (base58), ``log_index`` the event instruction's
position in the transaction, ``block_number`` the slot, ``timestamp`` the
``blockTime``. Addresses are spelled as the EVM decoder spells a bytes32
from a message (``0x`` + 64 hex digits; ``0x`` + 40 where the first 12
bytes are zero), so a Solana account compares equal to itself in an EVM
burn's ``mint_recipient``; ``contract`` is the program id in that form.
``mints`` adds ``mint_recipient_owner``: the owner of the token account
minted to, from the transaction's token balances (``<NA>`` when they do
not list it).

Base58 decoding, the field reads (:mod:`cctx_research.ingest.solana.fields`)
and the message decoding run over all the events of a file at once, and
the walk over the replies' instructions over blocks of replies
(:mod:`cctx_research.ingest.solana.walk`); token balances and
``MessageSent`` accounts are read for the rows that need them.
Failed transactions, transactions of other programs, events of other
names, replies cut short and events whose bytes do not fit their layout
are each counted by reason, never guessed at.

Examples
--------
>>> from pathlib import Path
>>> fixture = Path("tests/fixtures/solana/v1_burn_solana_to_ethereum.json")
>>> decoded = decode(fixture)                                   # doctest: +SKIP
>>> decoded.burns[["nonce", "amount_raw", "destination_domain"]].values.tolist()  # doctest: +SKIP
[['67707', 30000000000, 3]]
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ... import chains, schema
from ...errors import DataError
from ..evm.decoder import DecodedLogs
from ..evm.messages import BODY_COLUMNS, decode_message
from ..formats import FileRead
from ..hexcodec import hex_slices, take_rows
from ..ledger import guards
from ..rows import Reasons, string_column
from .base58 import decode_many
from .fields import EventBytes, columns, pubkeys_hex
from .layouts import (
    CODES,
    EMITTERS,
    EVENT_TAG,
    LAYOUTS,
    MESSAGE_SENT_DISCRIMINATOR,
    MESSAGE_TRANSMITTERS,
    PROGRAM_IDS,
    PROGRAMS,
    discriminator,
)
from .replies import Flat, balances, flatten_documents, transmitter_calls
from .text import flatten_text

__all__ = ["DOMAIN", "decode", "decode_json", "decode_replies", "read"]

logger = logging.getLogger(__name__)

DOMAIN = 5
"""Solana's CCTP domain."""

_DISCRIMINATORS = {name: np.frombuffer(discriminator(name), "<u8")[0] for name in EMITTERS}
_BASE = {
    "domain": schema.NULLABLE_INT, "chain_id": schema.STRING, "block_number": "int64",
    "timestamp": schema.TIMESTAMP, "tx_hash": schema.STRING, "log_index": "int64",
    "contract": schema.STRING, "cctp_version": "int64", "source_file": schema.STRING,
    "index": "int64",
}  # fmt: skip
_COLUMNS: dict[str, dict[str, Any]] = {
    "burns": {
        "nonce": schema.STRING, "burn_token": schema.STRING, "amount_raw": "int64",
        "message_sender": schema.STRING, "mint_recipient": schema.STRING,
        "destination_domain": "int64", "destination_token_messenger": schema.STRING,
        "destination_caller": schema.STRING, "max_fee_raw": schema.NULLABLE_INT,
        "min_finality_threshold": schema.NULLABLE_INT, "hook_data": schema.STRING,
    },
    "mints": {
        "mint_recipient": schema.STRING, "amount_raw": "int64", "mint_token": schema.STRING,
        "fee_raw": schema.NULLABLE_INT, "mint_recipient_owner": schema.STRING,
    },
    "sent": {
        "message": schema.STRING, "message_version": "int64", "source_domain": "int64",
        "destination_domain": "int64", "nonce": schema.STRING, "sender": schema.STRING,
        "recipient": schema.STRING, "destination_caller": schema.STRING,
        "min_finality_threshold": schema.NULLABLE_INT,
        "finality_threshold_executed": schema.NULLABLE_INT, **BODY_COLUMNS,
    },
    "received": {
        "caller": schema.STRING, "source_domain": "int64", "nonce": schema.STRING,
        "sender": schema.STRING, "finality_threshold_executed": schema.NULLABLE_INT,
        **BODY_COLUMNS,
    },
}  # fmt: skip
_KIND = {"DepositForBurn": "burns", "MintAndWithdraw": "mints", "MessageReceived": "received"}


def _frame(kind: str, parts: list[pd.DataFrame]) -> pd.DataFrame:
    dtypes = {**_BASE, **_COLUMNS[kind]}
    if not parts:  # each column empty, of its type
        return pd.DataFrame({name: pd.Series(dtype=dtype) for name, dtype in dtypes.items()})
    frame = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    frame = frame.reindex(columns=list(dtypes))
    # a column of its type already is kept (an astype costs as much as a small file's rows)
    changed = {name: dtype for name, dtype in dtypes.items() if frame[name].dtype != dtype}
    return frame.astype(changed) if changed else frame


class _Rows:
    """The columns of the transaction rows, made once for all the event tables."""

    def __init__(self, flat: Flat) -> None:
        self.flat = flat
        self.signature = pd.array(flat.signature, dtype=schema.STRING)
        self.times = pd.to_datetime(pd.array(flat.block_time, dtype="Int64"), unit="s", utc=True)
        self.slot = np.asarray(flat.slot, dtype=np.int64)
        self.entry = np.asarray(flat.entry, dtype=np.int64)
        # code -> the program's spelling (code 0: no program)
        self.contract = np.asarray([None, *pubkeys_hex(list(PROGRAM_IDS)).tolist()],
                                   dtype=object)  # fmt: skip

    def base(self, tx: np.ndarray, position: np.ndarray, code: np.ndarray,
             version: np.ndarray) -> dict[str, Any]:  # fmt: skip
        return {
            "domain": np.full(len(tx), DOMAIN), "chain_id": chains.chain_id(DOMAIN),
            "block_number": self.slot[tx], "timestamp": self.times[tx],
            "tx_hash": self.signature[tx], "log_index": position,
            "contract": self.contract[code], "cctp_version": version,
            "source_file": self.flat.source_file, "index": self.entry[tx],
        }  # fmt: skip


def _owners(flat: Flat, mints: pd.DataFrame, tx: np.ndarray) -> pd.Series:
    """The owner of each mint's recipient token account, from its transaction's balances."""
    rows, account, mint, owner = balances(flat, tx.tolist())
    if not rows or not len(mints):
        return pd.Series(pd.NA, index=mints.index, dtype=schema.STRING)
    # each name spelled once; balances and mints are then joined on the numbers of spellings
    codes, names = pd.factorize(pd.Series(account + mint + owner, dtype=object))
    spelled = pubkeys_hex(list(names))
    number, spellings = pd.factorize(spelled, use_na_sentinel=False)
    spellings = pd.Index(spellings)
    k, width = len(rows), len(spellings) + 1
    # one number for (transaction, token account, mint): the first balance of each is kept
    found = (np.asarray(rows, dtype=np.int64) * width + number[codes[:k]]) * width + number[
        codes[k : 2 * k]]  # fmt: skip
    keys, first = np.unique(found, return_index=True)
    owner_of = spelled.to_numpy(dtype=object)[codes[2 * k :]][first]
    wanted = (tx.astype(np.int64) * width + spellings.get_indexer(mints["mint_recipient"])) * (
        width) + spellings.get_indexer(mints["mint_token"])  # fmt: skip
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    hit = keys[at] == wanted
    out = np.full(len(wanted), pd.NA, dtype=object)
    out[hit] = owner_of[at[hit]]
    return pd.Series(out, index=mints.index, dtype=schema.STRING)


def _sent(flat: Flat, rows: _Rows) -> tuple[pd.DataFrame, int]:
    """``MessageSent`` accounts of this file's transactions as ``sent`` rows (and how many not)."""
    where: dict[str, tuple[int, int]] = {}
    if not flat.accounts:
        return _frame("sent", []), 0
    for row, position, account in transmitter_calls(flat):
        where.setdefault(account, (row, position))
    kept, raws, alone = [], [], 0
    for entry, pubkey, owner, data in flat.accounts:
        version = MESSAGE_TRANSMITTERS.get(owner)
        try:
            raw = base64.b64decode(data, validate=True)
        except (ValueError, TypeError):
            flat.bad(entry, "MessageSent account data is not base64")
            continue
        head = 44 if version == 1 else 52
        if version is None or raw[:8] != MESSAGE_SENT_DISCRIMINATOR or len(raw) < head:
            flat.bad(entry, "not a MessageSent account of a CCTP MessageTransmitter")
            continue
        size = int.from_bytes(raw[head - 4:head], "little")
        if len(raw) < head + size:
            flat.bad(entry, f"MessageSent account cut short: {len(raw)} of {head + size} bytes")
            continue
        if pubkey not in where:
            alone += 1
            continue
        kept.append((*where[pubkey], owner, version))
        raws.append(raw[head:head + size])
    if not kept:
        return _frame("sent", []), alone
    buffer = np.frombuffer(b"".join(raws), dtype=np.uint8)
    lengths = np.fromiter((len(r) for r in raws), dtype=np.int64, count=len(raws))
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    text = np.frombuffer(buffer.tobytes().hex().encode(), dtype=np.uint8)
    reasons = Reasons(len(raws))
    cols = decode_message(buffer, text, starts, lengths, reasons, header=True)
    version = cols.pop("cctp_version")
    tx = np.array([k[0] for k in kept])
    base = rows.base(tx, np.array([k[1] for k in kept]), np.array([CODES[k[2]] for k in kept]),
                     version)
    frame = pd.DataFrame({**base, "message": string_column(hex_slices(text, starts, lengths)),
                          **cols})
    return frame[~reasons.flagged].reset_index(drop=True), alone


def _decode_flat(flat: Flat) -> tuple[DecodedLogs, dict[str, int]]:
    rows_ = _Rows(flat)
    buffer, starts, lengths, ok = decode_many(flat.ev_data)
    buffer = np.concatenate([buffer, np.zeros(512, dtype=np.uint8)])  # reads past a short event
    tx = np.asarray(flat.ev_tx, dtype=np.int64)
    position = np.asarray(flat.ev_position, dtype=np.int64)
    code = np.asarray(flat.ev_code, dtype=np.int64)
    head = take_rows(buffer, np.where(ok & (lengths >= 16), starts, 0), 16)
    is_event = ok & (lengths >= 16) & (head[:, :8] == np.frombuffer(EVENT_TAG, np.uint8)).all(1)
    said = np.ascontiguousarray(head[:, 8:16]).view("<u8").ravel()  # the discriminator
    counts = {"events": int(is_event.sum()), "other_events": 0}
    text: np.ndarray | None = None
    parts: dict[str, list[pd.DataFrame]] = {k: [] for k in _COLUMNS}
    owners_tx: list[np.ndarray] = []
    known = np.zeros(len(tx), dtype=bool)
    for (event, version), layout in LAYOUTS.items():
        emitters = [CODES[p] for p, v in PROGRAMS.items() if v == version and p in EMITTERS[event]]
        mine = is_event & (said == _DISCRIMINATORS[event]) & np.isin(code, emitters)
        known |= mine
        rows = np.flatnonzero(mine)
        if not len(rows):
            continue
        if layout.dynamic and text is None:  # a bytes field is read as hex text
            text = np.frombuffer(buffer.tobytes().hex().encode(), dtype=np.uint8)
        ev = EventBytes(layout, buffer, text if layout.dynamic else None, starts[rows],
                     lengths[rows])  # fmt: skip
        kind = _KIND[event]
        cols = columns(kind, ev)
        good = ~ev.reasons.flagged
        for i in np.flatnonzero(~good):
            flat.bad(flat.entry[tx[rows[i]]], f"{flat.signature[tx[rows[i]]]} instruction "
                     f"{position[rows[i]]}: {ev.reasons.text[i]}")
        base = rows_.base(tx[rows], position[rows], code[rows], np.full(len(rows), version))
        frame = pd.DataFrame({**base, **{k: v.reset_index(drop=True) if isinstance(v, pd.Series)
                                         else v for k, v in cols.items()}})
        parts[kind].append(frame[good].reset_index(drop=True))
        if kind == "mints":
            owners_tx.append(tx[rows][good])
    counts["other_events"] = int((is_event & ~known).sum())
    frames = {kind: _frame(kind, p) for kind, p in parts.items() if kind != "sent"}
    if len(frames["mints"]):
        frames["mints"]["mint_recipient_owner"] = _owners(flat, frames["mints"],
                                                          np.concatenate(owners_tx))
    frames["sent"], counts["accounts_without_transaction"] = _sent(flat, rows_)
    # a transaction whose candidate instructions held no event is one row, skipped
    with_events = np.zeros(len(flat.signature), dtype=bool)
    with_events[tx[is_event]] = True
    counts["no_cctp_events"] = int((~with_events).sum())
    bad = pd.DataFrame(flat.problems, columns=["source_file", "index", "reason"])
    decoded = DecodedLogs(bad=bad, counts=counts, **frames)
    return decoded, counts


def decode(path: str | Path) -> DecodedLogs:
    """Decode the CCTP events in one file of ``getTransaction`` replies.

    Parameters
    ----------
    path : str or Path
        JSON or JSON Lines of replies (see
        :mod:`cctx_research.ingest.solana.replies`), optionally with the
        ``MessageSent`` accounts of ``getProgramAccounts``.

    Returns
    -------
    DecodedLogs
        ``burns``, ``mints``, ``sent``, ``received`` in the EVM decoder's
        columns (``mints`` also ``mint_recipient_owner``), ``bad`` (entries
        and events that could not be read, with the reason) and ``counts``.

    Raises
    ------
    FileNotFoundError
        If ``path`` is not a file.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    return _decoded(flatten_text(path.read_bytes(), str(path)))


def decode_json(text: bytes | str, *, source_file: str = "<json>") -> DecodedLogs:
    """Decode the JSON text of ``getTransaction`` replies (as :func:`decode` a file holding it).

    What an RPC client receives, or a file's content: one reply, a list of
    them, JSON-RPC responses, or JSON Lines of any of these. Replies in
    encoding ``json`` are read straight from the text, only the fields the
    decoder needs (:mod:`cctx_research.ingest.solana.text`): several times
    faster than parsing the text first and passing the values to
    :func:`decode_replies`, with the same result (both are read by the same
    reader, :mod:`cctx_research.ingest.solana.replies`).

    Parameters
    ----------
    text : bytes or str
        UTF-8 JSON text.
    source_file : str
        What the ``source_file`` column and the bad rows name.

    Raises
    ------
    TypeError
        If ``text`` is neither bytes nor str.
    UnicodeDecodeError
        If ``text`` is bytes that are not UTF-8.

    Examples
    --------
    >>> decoded = decode_json(b"")
    >>> decoded.counts["events"], len(decoded.burns)
    (0, 0)
    """
    if isinstance(text, str):
        text = text.encode("utf-8")
    elif isinstance(text, (bytearray, memoryview)):
        text = bytes(text)
    elif not isinstance(text, bytes):
        raise TypeError(f"pass the JSON text as bytes or str, got {type(text).__name__} (for "
                        "parsed replies, use decode_replies)")
    return _decoded(flatten_text(text, source_file))


def decode_replies(replies: Iterable[Any], *, source_file: str = "<replies>") -> DecodedLogs:
    """Decode parsed ``getTransaction`` results or JSON-RPC responses (as :func:`decode` a file).

    Parameters
    ----------
    replies : iterable
        Each a result dict, a JSON-RPC response, or a list of them, as
        ``json.loads`` gives them (what an RPC client holds).
    source_file : str
        What the ``source_file`` column and the bad rows name.

    Raises
    ------
    TypeError
        If ``replies`` is not iterable, or is a single dict or string.
    """
    if isinstance(replies, (dict, str, bytes)) or not isinstance(replies, Iterable):
        raise TypeError("pass a list of replies (dicts as json.loads gives them), got "
                        f"{type(replies).__name__}")
    return _decoded(flatten_documents(((r, None) for r in replies), source_file))


def _decoded(flat: Flat) -> DecodedLogs:
    decoded, counts = _decode_flat(flat)
    for reason, value in flat.skipped.items():
        counts[reason] = counts.get(reason, 0) + value
    counts["duplicates"] = flat.duplicates
    return DecodedLogs(bad=decoded.bad, counts=counts, burns=decoded.burns, mints=decoded.mints,
                       sent=decoded.sent, received=decoded.received)


def read(path: Path, chain: int | None = None) -> FileRead:
    """Read one file for :func:`cctx_research.load` (format ``"solana"``).

    Every entry is one row unless it holds events, then each event is one:
    ``rows_read == decoded + skipped + duplicates + bad``.

    Raises
    ------
    DataError
        If ``chain`` names a chain other than Solana.
    """
    if chain is not None and chain != DOMAIN:
        raise DataError(
            f"{str(path)!r} holds Solana transactions, but chain={chains.chain_name(chain)!r} "
            "was given",
            hint="pass no chain= for Solana files (or chain='solana')",
        )
    decoded = decode(path)
    c = decoded.counts
    # times within CCTP's era, amounts within USDC's supply: the others are bad rows
    decoded, implausible = guards.screen_events(decoded, time_column="blockTime",
                                                event="instruction")  # fmt: skip
    out = FileRead(format="solana", burns=[decoded.burns], sent=[decoded.sent],
                   received=[decoded.received], mints=[decoded.mints])
    out.problems.extend(decoded.bad.to_dict("records"))
    out.problems.extend(implausible)
    n_events = sum(len(f) for f in (decoded.burns, decoded.mints, decoded.received))
    skipped = {k: c.get(k, 0) for k in ("failed_transactions", "other_programs", "no_cctp_events",
                                         "other_events", "accounts_without_transaction")}
    for reason, value in skipped.items():
        out.skip(reason, value)
    out.add("decoded", n_events + len(decoded.sent))
    out.add("duplicates", c.get("duplicates", 0))
    out.add("rows_read", n_events + len(decoded.sent) + sum(skipped.values())
            + c.get("duplicates", 0) + len(decoded.bad) + len(implausible))
    logger.info("%s: %d Solana CCTP events, %s", path, n_events,
                ", ".join(f"{k} {v}" for k, v in c.items()))
    return out
