"""CCTP V2 hook data: what the destination is asked to do next, decoded where published.

A V2 burn may carry ``hookData``; CCTP passes it through untouched and the
recipient (or the relayer that calls ``receiveMessage``) acts on it. Formats
with a published layout are decoded; every other hook is grouped by its
first four bytes (``hook_prefix``), which in practice name the integrator's
own format (a type byte, a selector or a magic word).

Formats
-------
``empty``
    No hook data (``"0x"``).
``circle_forward``
    Circle's Forwarding Service: bytes 0-23 the magic ``"cctp-forward"``
    (zero padded), 24-27 a ``uint32`` version, 28-31 a ``uint32`` length of
    Circle's own hook data, then integrator data. Source: Circle, "Forwarding
    Service", https://developers.circle.com/cctp/concepts/forwarding-service
    (section "Hook format").
``mayan_fast_mctp``
    Mayan's Fast MCTP order, carried to the FastMCTP contract: ``uint8``
    payload type, ``bytes32`` destination address, ``bytes32`` token out,
    ``uint64`` amount out min, gas drop, redeem fee, refund fee, deadline,
    ``bytes32`` referrer, ``uint8`` referrer bps (138 bytes). Decoded only
    when the mint recipient or destination caller is the FastMCTP contract
    (``0xc1062b7c...``). Source: L2BEAT's interop plugin
    (github:l2beat/l2beat, packages/backend/src/modules/interop/plugins/
    mayan-mctp-fast.ts @ 7ef4c831640aa23345eed1711132b08290f1551f,
    ``decodeOrderPayload``; MIT).
``unknown``
    Anything else: see ``hook_prefix``.

Examples
--------
>>> decode("0x636374702d666f7277617264" + "00" * 20)["format"]
'circle_forward'
>>> decode("0x")["format"]
'empty'
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .. import schema

__all__ = ["FAST_MCTP", "FORMATS", "FORWARD_MAGIC", "classify", "decode"]

FORMATS: tuple[str, ...] = ("empty", "circle_forward", "mayan_fast_mctp", "unknown")
"""The hook formats :func:`classify` tells apart."""

FORWARD_MAGIC = b"cctp-forward".hex().ljust(48, "0")
"""The first 24 bytes (hex, no ``0x``) of a Forwarding Service hook."""

FAST_MCTP = "0xc1062b7c5dc8e4b1df9f200fe360cdc0ed6e7741"
"""Mayan's FastMCTP contract (same address on each chain it is deployed on)."""

_MAYAN_FIELDS = (
    ("payload_type", 1),
    ("destination_address", 32),
    ("token_out", 32),
    ("amount_out_min", 8),
    ("gas_drop", 8),
    ("redeem_fee", 8),
    ("refund_fee", 8),
    ("deadline", 8),
    ("referrer", 32),
    ("referrer_bps", 1),
)
_MAYAN_BYTES = sum(n for _, n in _MAYAN_FIELDS)


def _hex(value: Any, what: str = "hook_data") -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a hex str such as '0x...', got {type(value).__name__}")
    text = value.strip().lower()
    text = text[2:] if text.startswith("0x") else text
    if len(text) % 2 or any(c not in "0123456789abcdef" for c in text):
        raise ValueError(f"{what} must be whole bytes of hex, got {value[:40]!r}")
    return text


def _words(text: str, fields: tuple[tuple[str, int], ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    at = 0
    for name, size in fields:
        chunk = text[at : at + 2 * size]
        at += 2 * size
        out[name] = "0x" + chunk if size == 32 else int(chunk, 16)
    return out


def decode(hook_data: str, *, recipient: str | None = None) -> dict[str, Any]:
    """One hook, decoded: ``format`` plus the fields of its layout.

    Parameters
    ----------
    hook_data : str
        Hex, with or without ``0x``.
    recipient : str, optional
        The transfer's mint recipient or destination caller; Mayan's layout
        is only read for hooks sent to the FastMCTP contract.

    Returns
    -------
    dict
        ``format`` (one of :data:`FORMATS`), ``length`` (bytes), ``prefix``
        (first four bytes, hex) and the decoded fields.

    Raises
    ------
    TypeError, ValueError
        If ``hook_data`` is not hex.

    Examples
    --------
    >>> hook = "0x636374702d666f7277617264" + "00" * 12 + "00000000" + "00000018" + "ab" * 20
    >>> fields = decode(hook)
    >>> fields["version"], fields["circle_data_length"], fields["extra"][:6]
    (0, 24, '0xabab')
    """
    text = _hex(hook_data)
    base = {"length": len(text) // 2, "prefix": "0x" + text[:8]}
    if not text:
        return {"format": "empty", **base}
    if text.startswith(FORWARD_MAGIC) and len(text) >= 64:
        return {
            "format": "circle_forward",
            **base,
            "version": int(text[48:56], 16),
            "circle_data_length": int(text[56:64], 16),
            "extra": "0x" + text[64:],
        }
    if (
        recipient is not None
        and recipient.strip().lower()[-40:] == FAST_MCTP[2:]
        and len(text) == 2 * _MAYAN_BYTES
    ):
        return {"format": "mayan_fast_mctp", **base, **_words(text, _MAYAN_FIELDS)}
    return {"format": "unknown", **base}


def classify(ledger: pd.DataFrame) -> pd.DataFrame:
    """The hook format of each transfer, vectorised: one row per row of ``ledger``.

    Parameters
    ----------
    ledger : pandas.DataFrame
        Needs ``hook_data``; ``mint_recipient`` and ``destination_caller``
        are used for Mayan's format when present.

    Returns
    -------
    pandas.DataFrame
        Same index as ``ledger``: ``hook_format`` (null where ``hook_data``
        is null: a V1 transfer or a source without it), ``hook_prefix`` (the
        first four bytes, null for empty hooks) and ``hook_length`` (bytes,
        Int64).

    Examples
    --------
    >>> frame = pd.DataFrame({"hook_data": ["0x", "0x636374702d666f7277617264" + "00" * 20,
    ...                                     "0x01020304ff", None]})
    >>> classify(frame)["hook_format"].tolist()
    ['empty', 'circle_forward', 'unknown', <NA>]
    """
    if not isinstance(ledger, pd.DataFrame) or "hook_data" not in ledger.columns:
        raise TypeError("classify() takes a pandas ledger frame with a 'hook_data' column")
    raw = ledger["hook_data"].astype(schema.STRING).str.strip().str.lower()
    text = raw.str.removeprefix("0x")
    known = raw.notna().to_numpy()
    length = text.str.len().to_numpy(dtype="float64", na_value=np.nan)
    fmt = np.full(len(raw), "unknown", dtype=object)
    fmt[length == 0] = "empty"
    fmt[
        text.str.startswith(FORWARD_MAGIC).to_numpy(dtype=bool, na_value=False) & (length >= 64)
    ] = "circle_forward"
    to_mayan = np.zeros(len(raw), dtype=bool)
    for col in ("mint_recipient", "destination_caller"):
        if col in ledger.columns:
            tail = ledger[col].astype(schema.STRING).str.lower().str[-40:]
            to_mayan |= (tail == FAST_MCTP[2:]).to_numpy(dtype=bool, na_value=False)
    fmt[to_mayan & (length == 2 * _MAYAN_BYTES) & (fmt == "unknown")] = "mayan_fast_mctp"
    fmt[~known] = None
    prefix = ("0x" + text.str[:8]).where(length > 0)
    return pd.DataFrame(
        {
            "hook_format": pd.array(fmt, dtype=schema.STRING),
            "hook_prefix": prefix.astype(schema.STRING),
            "hook_length": pd.array(
                np.where(known, length // 2, np.nan), dtype=schema.NULLABLE_INT
            ),
        },
        index=ledger.index,
    )
