"""``connect()``: a Client for the configured service, or for the embedded sample.

With ``CCTX_API_KEY`` and ``CCTX_PROJECT_ID`` set (or ``api_key=`` and
``project_id=`` passed), :func:`connect` talks to ``CCTX_BASE_URL``
(default :data:`~cctx_research.config.DEFAULT_BASE_URL`,
``http://127.0.0.1:8000``, where ``cctx-research serve`` listens), naming it
``CCTX_SOURCE`` and marking its data synthetic when ``CCTX_SYNTHETIC`` says so.
Otherwise it starts the bundled synthetic sample in-process, on a free
loopback port with the demo credentials, and says so with a
:class:`~cctx_research.errors.SyntheticDataWarning` (shown by notebooks
without any logging set up) and one log line. The client stops that
service when it is closed.

This is the one place that reads the ``CCTX_*`` settings for a client
(including ``CCTX_CACHE_DIR``, passed on as ``cache_dir``), and the one
that joins the client to the local service: :mod:`cctx_research.client`
never imports :mod:`cctx_research.service`.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

from .client import Client
from .config import Secret, Settings
from .errors import ConfigError, SyntheticDataWarning
from .times import TimeLike, to_timestamp

__all__ = ["connect"]

logger = logging.getLogger(__name__)

_SAMPLE_OPTIONS = ("days", "per_day", "seed")


def connect(
    *,
    sample: bool | None = None,
    as_of: TimeLike | None = None,
    **overrides: Any,
) -> Client:
    """A :class:`Client` for the configured service, or for the embedded sample.

    Parameters
    ----------
    sample : bool, optional
        ``True`` forces the embedded synthetic sample, ``False`` forbids it
        (missing credentials are then a :class:`~cctx_research.errors.ConfigError`).
        Default: the sample unless credentials are configured.
    as_of : date-like, optional
        Only with the sample: pin its clock (and the client's) to this time,
        for reproducible results. Default: now, live.
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
    """
    if sample is not None and not isinstance(sample, bool):
        raise TypeError(f"sample must be True, False or None, got {type(sample).__name__}")
    settings = Settings.from_env()
    explicit = overrides.get("api_key") is not None and overrides.get("project_id") is not None
    use_sample = sample if sample is not None else not (explicit or settings.has_credentials)
    sample_options = {k: overrides.pop(k) for k in _SAMPLE_OPTIONS if k in overrides}
    if not use_sample:
        if as_of is not None or sample_options:
            raise ValueError(
                "as_of, days, per_day and seed apply to the embedded sample only; "
                "pass sample=True to use it"
            )
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

    for name in ("base_url", "project_id", "api_key"):
        if overrides.get(name) is not None:
            raise ValueError(f"{name}= does not apply to the embedded sample; pass sample=False")
        overrides.pop(name, None)
    from .service.server import embedded

    pinned = None if as_of is None else to_timestamp(as_of, name="as_of")
    handle = embedded(pinned, **sample_options)
    try:
        # The label is part of every cache key. A live sample's settled days
        # depend only on the seed and the day, so "live" is stable across
        # processes and a re-run reuses them; a pinned clock is its own source.
        label = "pinned " + pinned.isoformat() if pinned is not None else "live"
        options = ", ".join(f"{k}={v}" for k, v in sorted(sample_options.items()))
        source = f"embedded synthetic sample ({label}{', ' + options if options else ''})"
        overrides.setdefault("cache_dir", settings.cache_dir)
        if pinned is not None:
            overrides.setdefault("clock", lambda: pinned)
        key = handle.settings.api_key if handle.settings else None
        client = Client(
            handle.url,
            handle.settings.project_id,
            key if isinstance(key, Secret) else Secret(str(key)),
            source=source,
            synthetic=True,
            **overrides,
        )
    except BaseException:
        handle.close()
        raise
    client._owned.append(handle)
    why = "sample=True" if sample else "no CCTX_API_KEY/CCTX_PROJECT_ID set"
    logger.info("%s: using the %s at %s", why, source, handle.url)
    warnings.warn(
        SyntheticDataWarning(
            f"{why}: using the {source}; its numbers are synthetic, not on-chain data"
        ),
        stacklevel=2,
    )
    return client
