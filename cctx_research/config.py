"""Settings: the only code that reads the ``CCTX_*`` environment variables.

=================  ==========================================================
variable           meaning
=================  ==========================================================
CCTX_BASE_URL      base URL of the service (default ``http://127.0.0.1:8000``,
                   where ``cctx-research serve`` listens)
CCTX_PROJECT_ID    project id (UUID-shaped path segment)
CCTX_API_KEY       API key, sent as the ``x-api-key`` header
CCTX_CACHE_DIR     cache directory (default: the platform user cache dir)
CCTX_SOURCE        a name for the configured service, shown in provenance and
                   part of every cache key (default: the base URL)
CCTX_SYNTHETIC     ``1``/``true``: mark everything fetched from the configured
                   service synthetic, for a service that does not say so
                   itself (``cctx-research serve`` says so in every reply,
                   with the ``x-cctx-synthetic`` header; default ``0``)
CCTX_IRIS_URL      Circle's attestation API for ``sync --iris`` (default its mainnet URL)
CCTX_LEDGER        the ledger behind the dashboard's data (``sample`` or a file), set by
                   ``cctx-research dashboard`` for its "Who moves the money" tab
CCTX_CONFIG_DIR    the toolkit's configuration directory, where ``chains.toml`` adds
                   or amends CCTP domains (default: the platform user config dir;
                   see :func:`config_dir`)
CCTX_PAGE_SIZE     rows per request to the configured service (default 100,
                   the interface's default ``limit``)
=================  ==========================================================

With both ``CCTX_API_KEY`` and ``CCTX_PROJECT_ID`` set, :func:`connect`
talks to ``CCTX_BASE_URL``; otherwise it serves the bundled synthetic
sample in-process, with the demo credentials below.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from .errors import ConfigError

__all__ = [
    "DEFAULT_BASE_URL", "DEMO_API_KEY", "DEMO_PROJECT_ID", "Secret", "Settings", "cache_dir",
    "config_dir", "iris_url", "ledger_source", "rpc_url", "rpc_variable",
]  # fmt: skip

DEFAULT_BASE_URL = "http://127.0.0.1:8000"
DEMO_PROJECT_ID = "00000000-0000-4000-8000-00000000cc7b"
"""Project id of the embedded sample service (and of ``serve`` unless told)."""
DEMO_API_KEY = "cctx-demo-key"
"""API key of the embedded sample service (and of ``serve`` unless told). Not a secret."""

_PROJECT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")


class Secret:
    """A string that never shows itself in a repr, str or format."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        if not isinstance(value, str):
            raise TypeError(f"an API key must be a str, got {type(value).__name__}")
        self._value = value

    def get(self) -> str:
        """The secret value; only for the request header."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return repr(self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(("Secret", self._value))

    def __reduce__(self):  # pickling would write the key to disk: refuse
        raise TypeError("Secret values cannot be pickled")


def validate_project_id(value: object) -> str:
    """Check a project id is a safe single path segment."""
    if not isinstance(value, str) or not _PROJECT_ID.match(value):
        raise ConfigError(
            f"project_id must be one path segment of letters, digits, '-' or '_' "
            f"(UUID-shaped), got {value!r}",
            hint="set CCTX_PROJECT_ID or pass project_id=",
        )
    return value


def validate_base_url(value: object) -> str:
    """Check a base URL is http(s) with a host, and carries no credentials."""
    if not isinstance(value, str) or not re.match(r"^https?://[^/\s]+", value):
        raise ConfigError(
            f"base_url must start with http:// or https:// and name a host, got {value!r}",
            hint="set CCTX_BASE_URL, e.g. http://127.0.0.1:8000",
        )
    if "@" in value.split("/", 3)[2]:
        raise ConfigError(
            "base_url must not carry credentials (user:password@host); "
            "pass the API key as api_key= or CCTX_API_KEY"
        )
    return value.rstrip("/")


_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def _flag(value: str | None, name: str) -> bool:
    if value is None:
        return False
    if value.lower() in _TRUE | _FALSE:
        return value.lower() in _TRUE
    raise ConfigError(f"{name} must be 1/true/yes or 0/false/no, got {value!r}")


def _positive(value: str | None, name: str) -> int | None:
    if value is None:
        return None
    if not value.isdigit() or int(value) < 1:
        raise ConfigError(f"{name} must be a whole number of at least 1, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class Settings:
    """Where the service is and how to reach it."""

    base_url: str = DEFAULT_BASE_URL
    project_id: str | None = None
    api_key: Secret | None = field(default=None, repr=True)
    cache_dir: Path | None = None
    source: str | None = None
    synthetic: bool = False
    page_size: int | None = None

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        """Read ``CCTX_*`` variables (empty values count as unset)."""

        def get(name: str) -> str | None:
            return _named(name, environ)

        key = get("CCTX_API_KEY")
        cache_dir = get("CCTX_CACHE_DIR")
        return cls(
            base_url=validate_base_url(get("CCTX_BASE_URL") or DEFAULT_BASE_URL),
            project_id=get("CCTX_PROJECT_ID"),
            api_key=Secret(key) if key else None,
            cache_dir=Path(cache_dir).expanduser() if cache_dir else None,
            source=get("CCTX_SOURCE"),
            synthetic=_flag(get("CCTX_SYNTHETIC"), "CCTX_SYNTHETIC"),
            page_size=_positive(get("CCTX_PAGE_SIZE"), "CCTX_PAGE_SIZE"),
        )

    @property
    def has_credentials(self) -> bool:
        """Both an API key and a project id are set."""
        return self.api_key is not None and self.project_id is not None

    def replace(self, **changes) -> Settings:
        """A copy with some fields changed."""
        return replace(self, **changes)


def cache_dir(environ: dict[str, str] | None = None) -> Path:
    """The toolkit's cache directory: ``CCTX_CACHE_DIR``, else the platform's.

    The platform's is ``platformdirs.user_cache_dir("cctx-research")``. It holds
    the client's caches (``http.sqlite``, ``chunks/``) and the built synthetic
    sample (``sample/``).

    Examples
    --------
    >>> str(cache_dir({"CCTX_CACHE_DIR": "/tmp/cctx-cache"}))
    '/tmp/cctx-cache'
    """
    value = _named("CCTX_CACHE_DIR", environ)
    if value:
        return Path(value).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("cctx-research", appauthor=False))


def config_dir(environ: dict[str, str] | None = None) -> Path:
    """The toolkit's configuration directory: ``CCTX_CONFIG_DIR``, else the platform's.

    The platform's is ``platformdirs.user_config_dir("cctx-research")``. It holds
    ``chains.toml`` (:mod:`cctx_research.chains`).

    Examples
    --------
    >>> str(config_dir({"CCTX_CONFIG_DIR": "/tmp/cctx"}))
    '/tmp/cctx'
    """
    value = (os.environ if environ is None else environ).get("CCTX_CONFIG_DIR", "").strip()
    if value:
        return Path(value).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("cctx-research"))


def _named(name: str, environ: dict[str, str] | None) -> str | None:
    """The variable's value, stripped; None when unset or blank."""
    value = (os.environ if environ is None else environ).get(name, "").strip()
    return value or None


def rpc_url(chain: str, environ: dict[str, str] | None = None) -> str | None:
    """A chain's node URL from ``CCTX_RPC_<CHAIN>`` (upper case, ``-`` as ``_``), or ``None``.

    Examples
    --------
    >>> rpc_url("base", {"CCTX_RPC_BASE": "https://node.example/v2/key"})
    'https://node.example/v2/key'
    >>> rpc_url("arbitrum", {}) is None
    True
    """
    return _named(rpc_variable(chain), environ)


def rpc_variable(chain: str) -> str:
    """The environment variable that holds a chain's node URL (``CCTX_RPC_BASE``)."""
    return f"CCTX_RPC_{chain.strip().upper().replace('-', '_')}"


def iris_url(environ: dict[str, str] | None = None) -> str | None:
    """Circle's attestation API URL from ``CCTX_IRIS_URL`` (a mirror, the sandbox), or ``None``.

    Examples
    --------
    >>> iris_url({"CCTX_IRIS_URL": "https://iris-api-sandbox.circle.com"})
    'https://iris-api-sandbox.circle.com'
    >>> iris_url({}) is None
    True
    """
    return _named("CCTX_IRIS_URL", environ)


def ledger_source(environ: dict[str, str] | None = None) -> str | None:
    """The ledger the dashboard's kernels read (``CCTX_LEDGER``: ``sample`` or a path), or None.

    Examples
    --------
    >>> ledger_source({"CCTX_LEDGER": "sample"})
    'sample'
    >>> ledger_source({}) is None
    True
    """
    return _named("CCTX_LEDGER", environ)
