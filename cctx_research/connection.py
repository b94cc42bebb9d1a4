"""``connect()``: a Client for the configured service, for local data, or for the sample.

With ``CCTX_API_KEY`` and ``CCTX_PROJECT_ID`` set (or ``api_key=`` and
``project_id=`` passed), :func:`connect` talks to ``CCTX_BASE_URL``
(default :data:`~cctx_research.config.DEFAULT_BASE_URL`,
``http://127.0.0.1:8000``, where ``cctx-research serve`` listens), naming it
``CCTX_SOURCE`` and marking its data synthetic when ``CCTX_SYNTHETIC`` says so.

With ``data=`` (a ledger or transfers frame, or files
:func:`cctx_research.load` reads), or without credentials (the bundled
synthetic sample), it makes the data a local service
(:func:`cctx_research.service.local.local_service`) and joins the client
to it: in-process through a :class:`~cctx_research.client.WSGITransport`
(no socket, no server), or with ``loopback=True`` on a free loopback port,
which the client stops when it is closed. Synthetic data is announced with
a :class:`~cctx_research.errors.SyntheticDataWarning` (shown by notebooks
without any logging set up) and one log line.

For clients in other processes (the dashboard's kernels, which call
``connect()`` with ``CCTX_*`` variables), :func:`serve_on_loopback` serves
local data or the sample on a free loopback port and returns the settings
that reach it.

This is the one place that reads the ``CCTX_*`` settings for a client
(including ``CCTX_CACHE_DIR``, passed on as ``cache_dir``), and the one
that joins a client to a local service: :mod:`cctx_research.client`
never imports :mod:`cctx_research.service`.
"""

from __future__ import annotations

import errno
import logging
import secrets
import socket
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .client import Client, WSGITransport
from .config import Settings, cache_dir
from .errors import ConfigError, SyntheticDataWarning
from .times import TimeLike

if TYPE_CHECKING:
    from .service.local import LocalService

__all__ = ["IN_PROCESS_URL", "LoopbackService", "connect", "serve_on_loopback"]

logger = logging.getLogger(__name__)

_SAMPLE_OPTIONS = ("days", "per_day", "seed")

IN_PROCESS_URL = "http://in-process.invalid"
"""The base URL of a client joined to local data in-process (no socket: it never resolves)."""


def connect(
    *,
    data: Any = None,
    sample: bool | None = None,
    as_of: TimeLike | None = None,
    loopback: bool = False,
    **overrides: Any,
) -> Client:
    """A :class:`Client` for the configured service, for local data, or for the embedded sample.

    Parameters
    ----------
    data : DataFrame, path or list of paths, optional
        Local data to serve and query: a ``ledger`` or ``transfers`` frame,
        or files :func:`cctx_research.load` reads. The client is joined to
        a local service over it (see ``loopback``); its provenance names
        the data (a file's size and modification time, a frame's digest)
        and says whether it is synthetic.
    sample : bool, optional
        ``True`` forces the embedded synthetic sample, ``False`` forbids it
        (missing credentials are then a :class:`~cctx_research.errors.ConfigError`).
        Default: the sample unless credentials are configured.
    as_of : date-like, optional
        Only with local data or the sample: pin the service's clock (and the
        client's) to this time, for reproducible results. Default: now, live.
    loopback : bool, default False
        Local data and the sample are served in-process, through a
        :class:`~cctx_research.client.WSGITransport` (no socket, no
        server). ``True`` serves them on a free loopback port instead and
        talks HTTP to it, as to a remote service; the client stops it when
        closed.
    **overrides
        Any :class:`Client` keyword (``base_url``, ``project_id``,
        ``api_key``, ``cache_dir``, ``page_size``, ...), taking precedence
        over the ``CCTX_*`` variables; and, for the sample, ``days``,
        ``per_day`` and ``seed``.

    Returns
    -------
    Client

    Examples
    --------
    >>> client = connect(sample=True, as_of="2024-07-01")  # doctest: +SKIP
    >>> client.volume("2024-06-30", "2024-07-01")  # doctest: +SKIP
    >>> client = connect(data="transfers.parquet")  # doctest: +SKIP
    """
    _check_sources(data, sample, loopback)
    settings = Settings.from_env()
    explicit = overrides.get("api_key") is not None and overrides.get("project_id") is not None
    use_sample = sample if sample is not None else not (explicit or settings.has_credentials)
    use_sample = use_sample or data is not None
    sample_options = {k: overrides.pop(k) for k in _SAMPLE_OPTIONS if k in overrides}
    if not use_sample:
        if as_of is not None or sample_options:
            raise ValueError(
                "as_of, days, per_day and seed apply to local data and the embedded sample "
                "only; pass data= or sample=True to use them"
            )
        if loopback:
            raise ValueError("loopback=True applies to local data and the embedded sample only")
        base_url = overrides.pop("base_url", None) or settings.base_url
        project_id = overrides.pop("project_id", None) or settings.project_id
        api_key = overrides.pop("api_key", None) or settings.api_key
        if project_id is None or api_key is None:
            raise ConfigError(
                "no credentials: set CCTX_API_KEY and CCTX_PROJECT_ID (and CCTX_BASE_URL), "
                "or pass api_key= and project_id=",
                hint="connect(sample=True) uses the embedded synthetic sample instead",
            )
        overrides.setdefault("cache_dir", settings.cache_dir)
        if settings.source is not None:
            overrides.setdefault("source", settings.source)
        if settings.synthetic:
            overrides.setdefault("synthetic", True)
        if settings.page_size is not None:
            overrides.setdefault("page_size", settings.page_size)
        return Client(base_url, project_id, api_key, **overrides)

    for name in ("base_url", "project_id", "api_key", "transport"):
        if overrides.get(name) is not None:
            raise ValueError(
                f"{name}= does not apply to local data or the embedded sample; "
                "pass sample=False to reach a service"
            )
        overrides.pop(name, None)
    from .service.local import local_service

    _refuse_a_file_as_cache(overrides, settings)
    # the sample's build bar follows the client's progress option (--no-progress: none)
    local = local_service(data, as_of=as_of, progress=overrides.get("progress"), **sample_options)
    why = (
        "data=" if data is not None
        else "sample=True" if sample else _missing_credentials(settings)
    )  # fmt: skip
    overrides.setdefault("cache_dir", settings.cache_dir)
    client = _join(local, loopback=loopback, **overrides)
    logger.info("%s: using the %s at %s", why, local.source, client.base_url)
    if local.synthetic:
        warnings.warn(
            SyntheticDataWarning(
                f"{why}: using the {local.source}; its numbers are synthetic, not on-chain data"
            ),
            stacklevel=2,
        )
    return client


def _check_sources(data: Any, sample: bool | None, loopback: bool) -> None:
    if sample is not None and not isinstance(sample, bool):
        raise TypeError(f"sample must be True, False or None, got {type(sample).__name__}")
    if not isinstance(loopback, bool):
        raise TypeError(f"loopback must be True or False, got {type(loopback).__name__}")
    if data is not None and sample is not None:
        raise ValueError("data= and sample= exclude each other: pass one source")


def _refuse_a_file_as_cache(overrides: dict[str, Any], settings: Settings) -> None:
    """A cache directory that is a file fails the client: say so before building the data."""
    if overrides.get("cache", True) is False:
        return
    directory = Path(overrides.get("cache_dir") or settings.cache_dir or cache_dir()).expanduser()
    if any(p.is_file() for p in (directory, *directory.parents)):
        from .net.cache import fault

        raise fault(directory, NotADirectoryError(errno.ENOTDIR, "Not a directory"), "open")


def _missing_credentials(settings: Settings) -> str:
    """Why the settings name no service: which of the two variables is missing."""
    if settings.api_key is not None and settings.project_id is None:
        return "CCTX_API_KEY is set but CCTX_PROJECT_ID is not"
    if settings.project_id is not None and settings.api_key is None:
        return "CCTX_PROJECT_ID is set but CCTX_API_KEY is not"
    return "no CCTX_API_KEY or CCTX_PROJECT_ID set" + _listening(settings.base_url)


def _listening(base_url: str) -> str:
    """A note when a server answers at the configured loopback URL the sample is used instead of.

    ``cctx-research serve`` then ``fetch`` without ``CCTX_*`` variables would
    otherwise read the embedded sample without a word about the server. Only
    loopback hosts are probed (a connect on this machine, no request sent).
    """
    url = urlsplit(base_url)
    if url.hostname not in ("127.0.0.1", "localhost", "::1"):
        return ""
    try:
        with socket.create_connection((url.hostname, url.port or 80), timeout=0.2):
            pass
    except OSError:
        return ""
    return (
        f" (a server listens at {base_url}: to use it, set CCTX_PROJECT_ID and CCTX_API_KEY; "
        "serve's demo pair is in docs/configuration.md)"
    )


def _join(local: LocalService, *, loopback: bool, **overrides: Any) -> Client:
    """A client of ``local``: in-process through its WSGI app, or over a loopback port."""
    overrides.setdefault("page_size", local.page_size)
    if local.clock is not None:
        pinned = local.clock
        overrides.setdefault("clock", lambda: pinned)
    options = {
        "source": local.source, "synthetic": local.synthetic, "domains": local.domains,
        **overrides,
    }  # fmt: skip
    if not loopback:
        return Client(
            IN_PROCESS_URL, local.project_id, local.api_key,
            transport=WSGITransport(local.app), **options,
        )  # fmt: skip
    handle = local.serve()
    try:
        client = Client(handle.url, local.project_id, local.api_key, **options)
    except BaseException:
        handle.close()
        raise
    client.session.own(handle)
    return client


@dataclass(frozen=True)
class LoopbackService:
    """Local data served on a loopback port, for clients in other processes.

    Attributes
    ----------
    settings : Settings
        What a client needs to reach it: ``base_url``, ``project_id``,
        ``api_key``, and what it serves (``source``, ``synthetic``,
        ``page_size``), as ``CCTX_*`` variables would set them.
    description : str
        One line for a log: what is served, and where.
    """

    settings: Settings
    description: str
    handle: Any = field(repr=False)

    def close(self) -> None:
        """Stop serving (idempotent)."""
        self.handle.close()

    def __enter__(self) -> LoopbackService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def serve_on_loopback(data: Any = None, *, api_key: str | None = None) -> LoopbackService:
    """Serve local data (or the embedded sample) on a free loopback port, until closed.

    A client in this process wants :func:`connect` (``data=``, ``loopback=``);
    this is for clients elsewhere, such as the dashboard's kernels, which get
    :attr:`LoopbackService.settings` through their ``CCTX_*`` variables.

    Parameters
    ----------
    data : DataFrame, path or list of paths, optional
        As for :func:`connect`; default: the embedded sample, live.
    api_key : str, optional
        The key the service accepts. Default: one made for this service
        alone, so that no other local user can guess it.

    Returns
    -------
    LoopbackService
        Serving in a background thread; ``close()`` it (or use ``with``).

    Raises
    ------
    DataError
        If ``data`` is missing, unreadable or not a ledger or transfers frame.
    """
    from .service.local import local_service

    local = local_service(data, api_key=secrets.token_urlsafe(24) if api_key is None else api_key)
    handle = local.serve()
    settings = handle.settings.replace(
        source=local.source, synthetic=local.synthetic, page_size=local.page_size
    )
    return LoopbackService(settings, f"{local.description} at {handle.url}", handle)
