"""Every exception the library raises on purpose.

::

    CctxError                      base of everything raised on purpose
    ├── ConfigError                missing or invalid settings (CCTX_* variables)
    ├── DataError                  a data file or frame that does not fit the schema;
    │                              a sync dataset that cannot be read or written
    ├── ApiError                   the service answered with an error (carries status)
    │   ├── AuthError              401/403: missing or wrong API key
    │   ├── NotFoundError          404: unknown hash, operation or project
    │   ├── BadRequestError        400/413/415: the request was rejected
    │   ├── RateLimitError         429 after all retries (carries retry_after)
    │   └── ServerError            5xx, timeouts, dropped connections after all retries
    ├── ResponseSchemaError        the reply is not the documented envelope/shape
    ├── CacheMissError             offline=True and the answer is not in the cache
    └── CacheError                 the cache directory cannot be used (read-only,
                                   full, another user's, locked): names the
                                   directory and the ways out

    CctxWarning (UserWarning)      base of the warnings a user must see
    ├── CacheWarning               the cache is read-only: answers what it holds
    ├── OtherTokenWarning          an analysis left out transfers of other tokens
    ├── CoverageWarning            a window reaches past the service's clock or
    │                              outside the data it holds; says what it covers
    ├── LargeResultWarning         a request builds a large result: its size, first
    └── SyntheticDataWarning       the numbers come from the synthetic sample

Warnings are issued with :func:`warnings.warn`, so notebooks show them
without any logging set up, and ``warnings.simplefilter("error",
CoverageWarning)`` turns them into errors where a script wants that.

Bad arguments to public functions raise the built-in ``ValueError`` or
``TypeError`` with a message saying what to pass instead.

Every :class:`CctxError` carries ``operation``, ``status`` and ``hint``
attributes (``None`` where they do not apply). None of them ever holds the
API key: URLs are stored without credentials, and headers are never kept.
"""

from __future__ import annotations

__all__ = [
    "ApiError",
    "AuthError",
    "BadRequestError",
    "CacheError",
    "CacheMissError",
    "CacheWarning",
    "CctxError",
    "CctxWarning",
    "ConfigError",
    "CoverageWarning",
    "DataError",
    "LargeResultWarning",
    "NotFoundError",
    "OtherTokenWarning",
    "RateLimitError",
    "ResponseSchemaError",
    "ServerError",
    "SyntheticDataWarning",
]


class CctxError(Exception):
    """Base of every error raised on purpose by cctx_research."""

    def __init__(
        self,
        message: str,
        *,
        operation: str | None = None,
        status: int | None = None,
        hint: str | None = None,
    ) -> None:
        self.message = message
        self.operation = operation
        self.status = status
        self.hint = hint
        super().__init__(message)

    def __str__(self) -> str:
        parts = [self.message]
        if self.operation:
            parts.insert(0, f"[{self.operation}]")
        if self.status is not None:
            parts.append(f"(status {self.status})")
        text = " ".join(parts)
        if self.hint:
            text += f"\nhint: {self.hint}"
        return text


class ConfigError(CctxError):
    """Settings are missing or invalid."""


class DataError(CctxError, ValueError):
    """A data file or frame does not fit the canonical schema (also a ``ValueError``).

    Also raised by ``sync`` for a dataset it cannot use: another format, an
    unreadable state file, or a write that failed (a full disk), naming the
    dataset and what to do.
    """


class ApiError(CctxError):
    """The service answered with an error status."""


class AuthError(ApiError):
    """The API key is missing or wrong (401/403)."""


class NotFoundError(ApiError):
    """The transaction, operation or project does not exist (404)."""


class BadRequestError(ApiError):
    """The service rejected the request as invalid (400, 413, 415)."""


class RateLimitError(ApiError):
    """Rate limited (429) and retries are exhausted."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class ServerError(ApiError):
    """Server errors, timeouts or dropped connections persisted past all retries."""


class ResponseSchemaError(CctxError):
    """The reply is not the documented envelope or misses documented fields."""


class CacheMissError(CctxError):
    """``offline=True`` and the answer is not in the cache."""


class CacheError(CctxError):
    """The cache directory cannot be used: read-only, full, another user's or locked.

    Not damage (a damaged file is moved aside and rebuilt, with a warning):
    the files are healthy and are left as they are. The message names the
    directory; :attr:`directory` holds it.
    """

    def __init__(self, message: str, *, directory: object = None, **kwargs) -> None:
        kwargs.setdefault(
            "hint",
            "pass cache=False (the CLI's --no-cache), or point CCTX_CACHE_DIR "
            "(or cache_dir=) at a directory you can write",
        )
        super().__init__(message, **kwargs)
        self.directory = directory


class CctxWarning(UserWarning):
    """Base of the warnings cctx_research issues for its users to see."""


class CacheWarning(CctxWarning):
    """The cache directory is read-only: what it holds is answered, nothing is stored."""


class CoverageWarning(CctxWarning):
    """A window reaches past the service's clock or outside the data it holds."""


class OtherTokenWarning(CctxWarning):
    """An analysis counted USDC only and left out transfers of other tokens (USYC, EURC)."""


class LargeResultWarning(CctxWarning):
    """A request builds a large result (``load_sample(days=3650)``): said, with its size, first."""


class SyntheticDataWarning(CctxWarning):
    """The numbers come from the bundled synthetic sample, not from the chain."""
