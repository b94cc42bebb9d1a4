"""The sender's options: one frozen record, and the checks of the fields users set.

:class:`SenderOptions` is everything that shapes how a
:class:`~.sender.Sender` sends: the retry policy (``timeout``, ``retries``,
``backoff``, ``max_backoff``), how the service is named and which header
carries its secret, and the wire (``transport``, ``pace``,
``session_factory``). It is built by the owners of a sender (the analytics
client's session, the Iris client, a node's endpoint) from their own
options, which check the fields a user sets with :func:`check_timeout`,
:func:`check_retries`, :func:`check_backoff` and :func:`check_max_backoff`,
so that a wrong value fails the same way everywhere.

Examples
--------
>>> SenderOptions(retries=2).retries
2
>>> check_retries(-1)
Traceback (most recent call last):
ValueError: retries must be an int between 0 and 100, got -1
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import requests

from .. import arguments
from ..arguments import check_type
from ..config import Secret
from .transports import BaseTransport

__all__ = [
    "SenderOptions",
    "check_backoff",
    "check_max_backoff",
    "check_retries",
    "check_timeout",
]


@dataclass(frozen=True)
class SenderOptions:
    """How a sender sends (every field has a default; the owner checked them).

    Parameters
    ----------
    timeout : float, default 30
        Seconds per attempt (connect and read).
    retries : int, default 5
        Retries after the first attempt for transient failures (429, 5xx,
        timeouts, dropped connections, unreadable replies).
    backoff : float, default 0.5
        Base of the exponential backoff in seconds (``backoff * 2**n``, full
        jitter), capped at ``max_backoff``.
    max_backoff : float, default 60
        Longest wait between attempts; a ``Retry-After`` beyond it gives up
        at once with :class:`~cctx_research.errors.RateLimitError`.
    name : str, optional
        How logs and errors name the service (default: its base URL). A
        base URL that carries a secret (a node's URL with its key in the
        path) is named by its host, and scrubbed from every message.
    secret_header : (str, Secret), optional
        A header sent with every request whose value is a secret (the
        analytics interface's ``x-api-key``): never logged, and scrubbed
        from every message a service echoes it in. An empty secret is not sent.
    transport : BaseTransport, optional
        The wire (default: sockets, tracked for ``Sender.abort``).
    pace : callable, optional
        Called before every request that goes over the wire (not before a
        cache hit), from the thread sending it; blocks to keep a rate (see
        :class:`~.pacing.TokenBucket`).
    session_factory : callable, default requests.Session
        Makes a :class:`requests.Session` (plain or cached); one per worker
        thread, pooled.
    """

    timeout: float = 30.0
    retries: int = 5
    backoff: float = 0.5
    max_backoff: float = 60.0
    name: str | None = None
    secret_header: tuple[str, Secret] | None = None
    transport: BaseTransport | None = None
    pace: Callable[[], Any] | None = None
    session_factory: Callable[[], requests.Session] = requests.Session


def check_timeout(value: Any) -> float:
    """``timeout`` as positive, finite seconds."""
    check_type(value, (int, float), "timeout", "a number of seconds")
    if not value > 0 or not math.isfinite(value):
        raise ValueError(f"timeout must be a positive number of seconds, got {value}")
    return float(value)


def check_retries(value: Any) -> int:
    """``retries`` as an int from 0 to 100."""
    return arguments.integer(value, "retries", low=0, high=100)  # type: ignore[return-value]


def check_backoff(value: Any) -> float:
    """``backoff`` as seconds, 0 or more."""
    check_type(value, (int, float), "backoff", "a number of seconds")
    if value < 0:
        raise ValueError(f"backoff must be >= 0 seconds, got {value}")
    return float(value)


def check_max_backoff(value: Any) -> float:
    """``max_backoff`` as seconds."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"max_backoff must be a number of seconds, got {value!r}")
    return float(value)
