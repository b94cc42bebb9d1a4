"""Request bodies of the interface's operations: parsing and validation.

:func:`parse_request` turns the decoded JSON body of one operation into the
keyword arguments of the matching :class:`~cctx_research.service.store.Store`
method, or raises :class:`FieldError` naming the field and what it allows.
Pure functions, no HTTP.

What is accepted (see :mod:`cctx_research.service`):

* ``startDate`` / ``endDate``: Unix seconds, 0 .. 253402300799, as a JSON
  integer or a string of digits;
* ``page``: 1 .. 1,000,000,000; ``limit``: 1 .. 1000 (same two forms);
* ``sourceDomain`` / ``destinationDomain``: a JSON-array-like string
  (``'["0","6"]'``, ``'[0,6]'``), a single domain (``"6"``, ``6``) or a
  JSON array of domains; domain ids are 0 .. 4294967295;
* ``txHash``: ``0x`` + 64 hex digits (any case), or a non-EVM chain's hash
  (a Solana signature in base58, a Noble hash in 64 hex digits);
  ``address``: ``0x`` + 40 or 64 hex digits (any case), or a non-EVM chain's
  own format (Solana base58, Noble ``noble1...``; see
  :mod:`cctx_research.addressing`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from .. import addressing
from . import store

__all__ = ["MAX_TIMESTAMP", "OPERATIONS", "FieldError", "parse_request"]

MAX_TIMESTAMP = 253_402_300_799
"""9999-12-31T23:59:59Z: the largest Unix second accepted."""
MAX_DOMAIN = 2**32 - 1
_MAX_DOMAINS = 64
_DIGITS = re.compile(r"^[0-9]{1,20}$")

_WINDOW = ("startDate", "endDate")
OPERATIONS: dict[str, tuple[str, ...]] = {
    "transactions-mint": (*_WINDOW, "sourceDomain", "destinationDomain", "page", "limit"),
    "transactions-txHash": ("txHash",),
    "transactions-address-recipient": ("address", *_WINDOW, "page", "limit"),
    "transactions-volume": _WINDOW,
    "stats-senders": (*_WINDOW, "limit"),
}
"""Operation name -> the request fields it accepts."""
_REQUIRED: dict[str, tuple[str, ...]] = {
    "transactions-txHash": ("txHash",),
    "transactions-address-recipient": ("address",),
}


class FieldError(ValueError):
    """A request field is missing, unknown or invalid.

    Attributes
    ----------
    field : str
        The field's name as the interface spells it.
    """

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(message)


def _describe(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else json.dumps(value[:40])
    return text if len(text) <= 60 else text[:57] + "..."


def _integer(name: str, value: Any, lo: int, hi: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise FieldError(
            name, f"{name} must be {what} ({lo}..{hi}) as a JSON integer or a string of digits"
        )
    if isinstance(value, str):
        if not _DIGITS.match(value):
            raise FieldError(
                name,
                f"{name} must be {what} ({lo}..{hi}) as a JSON integer or a string of "
                f"digits, got {_describe(value)}",
            )
        value = int(value)
    if not lo <= value <= hi:
        raise FieldError(name, f"{name} must be {what} between {lo} and {hi}, got {value}")
    return value


def _domain(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise FieldError(name, f"{name} lists domain ids: integers or strings of digits")
    if isinstance(value, str):
        value = value.strip()
        if not _DIGITS.match(value):
            raise FieldError(
                name, f'{name} lists domain ids (e.g. \'["0","6"]\'), got {_describe(value)}'
            )
        value = int(value)
    if not 0 <= value <= MAX_DOMAIN:
        raise FieldError(name, f"{name}: domain ids are 0..{MAX_DOMAIN}, got {value}")
    return value


def _domains(name: str, value: Any) -> list[int]:
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except (ValueError, RecursionError):
                raise FieldError(
                    name,
                    f"{name} must be a JSON-array-like string of domain ids such as "
                    f'\'["0","6"]\', got {_describe(text)}',
                ) from None
        else:
            return [_domain(name, text)]
    if isinstance(value, list):
        if not value:
            raise FieldError(name, f"{name} must list at least one domain id")
        if len(value) > _MAX_DOMAINS:
            raise FieldError(name, f"{name} may list at most {_MAX_DOMAINS} domain ids")
        return sorted({_domain(name, v) for v in value})
    return [_domain(name, value)]


def parse_request(operation: str, body: dict[str, Any]) -> dict[str, Any]:
    """Validate the body of ``operation`` and return the store method's arguments.

    Parameters
    ----------
    operation : str
        One of :data:`OPERATIONS`.
    body : dict
        The decoded JSON object.

    Returns
    -------
    dict
        Keyword arguments for the store (``start``, ``end``, ``page``,
        ``limit``, ``sources``, ``destinations``, ``tx_hash``, ``address``);
        absent optional fields are absent (the store applies the defaults).

    Raises
    ------
    FieldError
        For an unknown field, a missing required one or an invalid value.

    Examples
    --------
    >>> parse_request("stats-senders", {"limit": "5", "endDate": 1719792000})
    {'limit': 5, 'end': 1719792000}
    """
    allowed = OPERATIONS[operation]
    unknown = sorted(k for k in body if k not in allowed)
    if unknown:
        raise FieldError(
            unknown[0],
            f"unknown field(s) {', '.join(_describe(k) for k in unknown[:5])}; "
            f"{operation} accepts: {', '.join(allowed)}",
        )
    for name in _REQUIRED.get(operation, ()):
        if name not in body:
            raise FieldError(name, f"{name} is required by {operation}")
    out: dict[str, Any] = {}
    for name, value in body.items():
        if name == "startDate":
            out["start"] = _integer(name, value, 0, MAX_TIMESTAMP, "Unix seconds")
        elif name == "endDate":
            out["end"] = _integer(name, value, 0, MAX_TIMESTAMP, "Unix seconds")
        elif name == "page":
            out["page"] = _integer(name, value, 1, store.MAX_PAGE, "a page number")
        elif name == "limit":
            out["limit"] = _integer(name, value, 1, store.MAX_LIMIT, "a number of results")
        elif name == "sourceDomain":
            out["sources"] = _domains(name, value)
        elif name == "destinationDomain":
            out["destinations"] = _domains(name, value)
        elif name == "txHash":
            try:
                out["tx_hash"] = addressing.normalize_hash(value, name="txHash")
            except (TypeError, ValueError) as exc:
                raise FieldError(name, str(exc)) from None
        elif name == "address":
            try:
                out["address"] = addressing.normalize_address(value, name="address")
            except (TypeError, ValueError) as exc:
                raise FieldError(name, str(exc)) from None
    if "start" in out and "end" in out and out["start"] > out["end"]:
        raise FieldError(
            "startDate",
            f"startDate ({out['start']}) must not be after endDate ({out['end']}); "
            "both bounds are inclusive",
        )
    return out
