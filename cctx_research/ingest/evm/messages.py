"""Decode packed CCTP messages (header and burn message body), vectorised.

A ``MessageSent`` log carries the whole message (header, then body); a
``MessageReceived`` log carries the body alone. Both are packed, not
ABI-encoded: fields sit at the fixed byte offsets of the layouts in
:mod:`cctx_research.ingest.evm.events`. Rows are read with numpy gathers from
the flat byte buffer of the log data; a body is decoded as a burn message
when its length fits one (V1: exactly 132 bytes; V2: at least 228, the rest
being hook data), and left <NA> otherwise (a message of another
application).

Examples
--------
>>> import numpy as np
>>> from cctx_research.ingest.rows import Reasons
>>> body = bytes(4) + bytes(12) + b"\\x11" * 20 + bytes(12) + b"\\x22" * 20 \\
...     + (5_000_000).to_bytes(32, "big") + bytes(12) + b"\\x33" * 20
>>> buf, text = np.frombuffer(body, dtype=np.uint8), np.frombuffer(body.hex().encode(), "u1")
>>> cols = decode_message(buf, text, np.array([0]), np.array([len(body)]), Reasons(1),
...                       body_version=1)
>>> int(cols["amount_raw"][0]), cols["hook_data"][0]
(5000000, <NA>)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from cctx_research import chains, schema
from cctx_research.ingest.evm import events as ev
from cctx_research.ingest.evm.abi_words import (
    be_uint,
    bytes32_address,
    hex_words,
    uint256_text,
    uint_word,
)
from cctx_research.ingest.hexcodec import slices_to_hex, take_rows
from cctx_research.ingest.ledger.guards import TESTNET_CONTRACTS
from cctx_research.ingest.rows import Reasons, nullable, string_column

__all__ = ["BODY_COLUMNS", "decode_message", "from_token_messenger"]

BODY_COLUMNS: dict[str, Any] = {
    "burn_token": schema.STRING,
    "mint_recipient": schema.STRING,
    "amount_raw": schema.NULLABLE_INT,
    "message_sender": schema.STRING,
    "max_fee_raw": schema.NULLABLE_INT,
    "fee_executed_raw": schema.NULLABLE_INT,
    "expiration_block": schema.NULLABLE_INT,
    "hook_data": schema.STRING,
}
"""The decoded burn message columns of the ``sent`` and ``received`` frames."""

_BODY_NAMES = {
    "burnToken": "burn_token",
    "mintRecipient": "mint_recipient",
    "amount": "amount_raw",
    "messageSender": "message_sender",
    "maxFee": "max_fee_raw",
    "feeExecuted": "fee_executed_raw",
    "expirationBlock": "expiration_block",
}


def _take(buffer: np.ndarray, starts: np.ndarray, offset: int, width: int) -> np.ndarray:
    return take_rows(buffer, starts + offset, width)


def _fields(
    buffer: np.ndarray, starts: np.ndarray, layout: ev.Layout, rows: np.ndarray, m: int
) -> dict[str, np.ndarray]:
    """Each field of ``layout`` as an ``(m, length)`` matrix, filled for ``rows`` only.

    The fixed part is gathered once, whole, and the fields are views of it.
    """
    fixed = np.zeros((m, layout.body_offset), dtype=np.uint8)
    if len(rows) == m:
        fixed = _take(buffer, starts, 0, layout.body_offset)
    elif len(rows):
        fixed[rows] = _take(buffer, starts[rows], 0, layout.body_offset)
    return {f.name: fixed[:, f.offset : f.offset + f.length] for f in layout.fields}


def _body(
    buffer: np.ndarray,
    text: np.ndarray | None,
    starts: np.ndarray,
    lengths: np.ndarray,
    version: np.ndarray,
    reasons: Reasons,
    token: np.ndarray | None = None,
) -> dict[str, Any]:
    m = len(starts)
    readable = ~reasons.flagged if token is None else ~reasons.flagged & token
    v1 = (version == 1) & (lengths == ev.BURN_MESSAGE_V1.body_offset) & readable
    v2 = (version == 2) & (lengths >= ev.BURN_MESSAGE_V2.body_offset) & readable
    words = _fields(buffer, starts, ev.BURN_MESSAGE_V1, np.flatnonzero(v1 | v2), m)
    words.update(
        {
            k: v
            for k, v in _fields(buffer, starts, ev.BURN_MESSAGE_V2, np.flatnonzero(v2), m).items()
            if k in ("maxFee", "feeExecuted", "expirationBlock")
        }
    )
    burn = v1 | v2
    cols: dict[str, Any] = {}
    for name in ("burnToken", "mintRecipient", "messageSender"):
        cols[_BODY_NAMES[name]] = string_column(bytes32_address(words[name])).where(burn)
    for name in ("amount", "maxFee", "feeExecuted", "expirationBlock"):
        present = burn if name == "amount" else v2
        values, fits = uint_word(words[name], 256)
        for i in np.flatnonzero(present & ~fits):
            reasons.set(i, f"message body {name} {uint256_text(words[name][i])} does not fit int64")
        cols[_BODY_NAMES[name]] = nullable(values.astype(np.int64), present)
    hook_start = starts + ev.BURN_MESSAGE_V2.body_offset
    hook_len = np.where(v2, lengths - ev.BURN_MESSAGE_V2.body_offset, 0)
    cols["hook_data"] = string_column(slices_to_hex(buffer, text, hook_start, hook_len)).where(v2)
    return cols


def from_token_messenger(sender: pd.Series, source_domain: np.ndarray) -> np.ndarray:
    """Which messages a TokenMessenger of their source domain sent (only those carry burns).

    A message of another application (Hyperlane's, say) shares the
    transmitter but not the sender; its body is never read as a burn, so a
    body that happens to have a burn's length is skipped, not an error.
    Where the registry lists no TokenMessenger for a domain, any sender counts
    (the ledger marks those rows unverified).
    """
    ok = np.zeros(len(sender), dtype=bool)
    lower = sender.astype(schema.STRING).str.lower()
    for value in np.unique(source_domain):
        rows = source_domain == value
        try:
            known = chains.token_messengers(int(value))
        except (TypeError, ValueError):
            known = frozenset()
        known = known | _TESTNET_TOKEN_MESSENGERS if known else known
        ok[rows] = True if not known else lower[rows].isin(known).to_numpy(dtype=bool)
    return ok


def _both_spellings(addresses: list[str]) -> frozenset[str]:
    return frozenset([*addresses, *("0x" + "00" * 12 + a[2:] for a in addresses)])


_TESTNET_TOKEN_MESSENGERS = _both_spellings(
    [a for a, what in TESTNET_CONTRACTS.items() if "TokenMessenger" in what]
)
"""Testnet TokenMessengers send burns too (Iris' sandbox replies carry them); whether
testnet data may be read at all is the guards' question (:mod:`..ledger.guards`)."""


def decode_message(
    buffer: np.ndarray,
    text: np.ndarray | None,
    starts: np.ndarray,
    lengths: np.ndarray,
    reasons: Reasons,
    *,
    header: bool = False,
    body_version: int | None = None,
    token: np.ndarray | None = None,
) -> dict[str, Any]:
    """Decode messages (``header=True``) or bare message bodies, one per row.

    Parameters
    ----------
    buffer, starts, lengths
        Row ``i`` is ``buffer[starts[i] : starts[i] + lengths[i]]``.
    text : ndarray or None
        The hex text the buffer was decoded from (see
        :func:`~cctx_research.ingest.hexcodec.hex_slices`), None if it was
        read as bytes.
    reasons : Reasons
        Rows already flagged are not read; new problems are recorded here.
    header : bool
        True for a whole message: the header's ``version`` picks the layout
        (0: V1, 1: V2) and the columns include the header fields and
        ``cctp_version``.
    body_version : int
        For a bare body (``MessageReceived``): the CCTP version, 1 or 2.
    token : ndarray of bool, optional
        For a bare body: which rows a TokenMessenger sent (the others are
        not read). A whole message's header says it itself
        (:func:`from_token_messenger`).
    """
    m = len(starts)
    lengths = lengths.astype(np.int64)
    if not header:
        return _body(buffer, text, starts, lengths, np.full(m, body_version), reasons, token)
    reasons.flag(lengths < 4, "message shorter than its 4-byte version")
    readable = np.flatnonzero(~reasons.flagged)
    message_version = np.full(m, -1, dtype=np.int64)
    if len(readable):
        message_version[readable] = be_uint(_take(buffer, starts[readable], 0, 4))
    reasons.flag(
        ~np.isin(message_version, list(ev.MESSAGE_VERSIONS)),
        "message version is not 0 (V1) or 1 (V2)",
    )
    v1, v2 = message_version == 0, message_version == 1
    for flag, layout in ((v1, ev.MESSAGE_V1), (v2, ev.MESSAGE_V2)):
        reasons.flag(
            flag & (lengths < layout.body_offset),
            f"{layout.name} shorter than its {layout.body_offset}-byte header",
        )
    ok = ~reasons.flagged
    h1 = _fields(buffer, starts, ev.MESSAGE_V1, np.flatnonzero(v1 & ok), m)
    h2 = _fields(buffer, starts, ev.MESSAGE_V2, np.flatnonzero(v2 & ok), m)
    cols: dict[str, Any] = {"cctp_version": np.where(v2, 2, 1), "message_version": message_version}
    for name, out in (
        ("sourceDomain", "source_domain"),
        ("destinationDomain", "destination_domain"),
    ):
        cols[out] = np.where(v2, be_uint(h2[name]), be_uint(h1[name])).astype(np.int64)
    nonce_v1 = pd.Series(be_uint(h1["nonce"]).astype(str), dtype=schema.STRING)
    nonce_v2 = string_column(hex_words(h2["nonce"]))
    cols["nonce"] = nonce_v2.where(v2, nonce_v1)
    for name, out in (
        ("sender", "sender"),
        ("recipient", "recipient"),
        ("destinationCaller", "destination_caller"),
    ):
        cols[out] = string_column(bytes32_address(np.where(v2[:, None], h2[name], h1[name])))
    for name, out in (
        ("minFinalityThreshold", "min_finality_threshold"),
        ("finalityThresholdExecuted", "finality_threshold_executed"),
    ):
        cols[out] = nullable(be_uint(h2[name]).astype(np.int64), v2)
    header_len = np.where(v2, ev.MESSAGE_V2.body_offset, ev.MESSAGE_V1.body_offset)
    body_len = np.where(ok, lengths - header_len, 0)
    token = from_token_messenger(cols["sender"], cols["source_domain"])
    cols.update(
        _body(buffer, text, starts + header_len, body_len, cols["cctp_version"], reasons, token)
    )
    return cols
