"""The interface's operations as a table of handlers: a parsed request in, a reply's body out.

:func:`parse` turns one operation's decoded JSON body into a
:class:`Request` (the store method's arguments, the window resolved on the
store's clock); :data:`HANDLERS` maps each operation of the interface to
the handler that answers it from a :class:`~cctx_research.service.store.Store`;
:func:`handle` runs one. What the client did wrong is a :class:`Reject`,
which the WSGI edge (:mod:`cctx_research.service.app`) sends as the error
envelope. No HTTP here: the edge reads the request, these answer it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import CctxError, NotFoundError
from .fields import OPERATIONS, FieldError, parse_request
from .store import Store

__all__ = ["HANDLERS", "Handler", "Reject", "Request", "handle", "parse"]

_WINDOWED = frozenset(op for op, fields in OPERATIONS.items() if "startDate" in fields)


class Reject(CctxError):
    """An error reply: HTTP status, error code and message.

    Attributes
    ----------
    status : int
        The HTTP status (also the envelope's ``status``).
    code : str
        The body's ``error`` (``invalid_field``, ``not_found``, ...).
    message : str
        The body's ``message``: what to send instead.
    """

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message, status=status)
        self.code = code


@dataclass(frozen=True)
class Request:
    """One operation's request, parsed: its name and the store method's arguments.

    Attributes
    ----------
    operation : str
        One of :data:`~cctx_research.service.fields.OPERATIONS`.
    args : mapping
        Keyword arguments of the store's method; a windowed operation's
        ``start`` and ``end`` are resolved (the store's defaults applied).
    """

    operation: str
    args: Mapping[str, Any]


def parse(store: Store, operation: str, body: dict[str, Any]) -> Request:
    """The request ``body`` of ``operation`` makes, its window resolved on ``store``'s clock.

    Raises
    ------
    Reject
        400 ``invalid_field``: a field is unknown, missing or invalid, or the
        window is empty.
    """
    try:
        args = parse_request(operation, body)
    except FieldError as exc:
        raise Reject(400, "invalid_field", str(exc)) from None
    if operation in _WINDOWED:
        try:
            args["start"], args["end"] = store.window(args.get("start"), args.get("end"))
        except ValueError as exc:
            raise Reject(400, "invalid_field", f"startDate/endDate: {exc}") from None
    return Request(operation, args)


Handler = Callable[[Store, Request], Any]
"""An operation's handler: the store and the parsed request in, the reply's ``body`` out."""


def _mints(store: Store, request: Request) -> Any:
    return store.mints(**request.args)


def _transaction(store: Store, request: Request) -> Any:
    return store.transaction(**request.args)


def _received(store: Store, request: Request) -> Any:
    return store.received(**request.args)


def _volume(store: Store, request: Request) -> Any:
    return store.volume(**request.args)


def _top_senders(store: Store, request: Request) -> Any:
    return store.top_senders(**request.args)


HANDLERS: dict[str, Handler] = {
    "transactions-mint": _mints,
    "transactions-txHash": _transaction,
    "transactions-address-recipient": _received,
    "transactions-volume": _volume,
    "stats-senders": _top_senders,
}
"""Operation name -> its handler; the keys are the operations of the interface."""


def handle(store: Store, request: Request) -> Any:
    """The reply's ``body`` for ``request``.

    Raises
    ------
    Reject
        404 ``not_found``: the hash looked up is not in the store.
    """
    try:
        return HANDLERS[request.operation](store, request)
    except NotFoundError:
        raise Reject(404, "not_found", "no transaction with that hash") from None
