"""What an HTTP or envelope status means: the typed error, and how long to wait.

:func:`error_for_status` maps a status to the exception tree of
:mod:`cctx_research.errors`, with a hint saying what to do;
:func:`parse_retry_after` reads ``Retry-After`` in seconds or as an HTTP date.
"""

from __future__ import annotations

import email.utils
import time

from .. import errors

__all__ = ["error_for_status", "parse_retry_after"]


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP date).

    Examples
    --------
    >>> parse_retry_after("3")
    3.0
    >>> parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0)
    10.0
    >>> parse_retry_after("soon") is None
    True
    """
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    now = time.time() if now is None else now
    return max(0.0, when.timestamp() - now)


_BY_STATUS: dict[int, tuple[type[errors.CctxError], str]] = {
    400: (errors.BadRequestError, "check the arguments; the service rejected the request"),
    401: (errors.AuthError, "check CCTX_API_KEY / api_key and CCTX_PROJECT_ID / project_id"),
    403: (errors.AuthError, "check CCTX_API_KEY / api_key and CCTX_PROJECT_ID / project_id"),
    404: (errors.NotFoundError, "check the hash, the project id and the base URL"),
    413: (errors.BadRequestError, "the request body is too large"),
    415: (errors.BadRequestError, "the service expects Content-Type: application/json"),
    429: (errors.RateLimitError, "rate limited: wait, or lower max_workers"),
}


def error_for_status(
    status: int,
    message: str,
    *,
    operation: str | None,
    retry_after: float | None = None,
) -> errors.CctxError:
    """The typed error for an HTTP or envelope status."""
    if status in _BY_STATUS:
        cls, hint = _BY_STATUS[status]
    elif status >= 500:
        cls, hint = errors.ServerError, "the service failed; try again later"
    elif 400 <= status < 500:
        cls, hint = errors.BadRequestError, "the service rejected the request"
    else:
        cls, hint = errors.ResponseSchemaError, "the service answered with an unexpected status"
    if cls is errors.RateLimitError:
        return errors.RateLimitError(
            message, operation=operation, status=status, hint=hint, retry_after=retry_after
        )
    return cls(message, operation=operation, status=status, hint=hint)
