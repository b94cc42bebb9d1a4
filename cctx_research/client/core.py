"""The :class:`Client`: one method per question, each returning a canonical frame.

The client is a thin, typed face: its options are readable as properties,
and every call is one of the endpoint families over its
:class:`~.session.Session` (the transport, both caches, page sizes, the
clock, the bound semantics and the one call path):

- :mod:`.listing`: ``mints``, ``received`` (chunks, pages, frames);
- :mod:`.aggregates`: ``volume``, ``volume_history``, ``top_senders``;
- :mod:`.lookup`: ``transaction``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from ..arguments import check_type
from ..config import Secret, validate_base_url, validate_project_id
from ..errors import ConfigError
from ..net import BaseTransport
from ..times import TimeLike
from . import aggregates, listing, lookup
from .options import ClientOptions
from .session import Session

__all__ = ["Client"]


class Client:
    """A client for the cross-chain transfer analytics interface.

    Parameters
    ----------
    base_url : str
        Where the service is, e.g. ``"http://127.0.0.1:8000"``.
    project_id : str
        The project path segment (UUID-shaped).
    api_key : str or Secret
        Sent as the ``x-api-key`` header; never stored, logged or shown.
    options : ClientOptions, optional
        Every other option, as one record (see :class:`~.options.ClientOptions`
        for each field and its default).
    transport : BaseTransport, optional
        What carries each HTTP request (see :mod:`cctx_research.net.transports`):
        default, sockets; a :class:`~cctx_research.net.WSGITransport` calls a WSGI
        application in this process. The client closes it when closed.
    **keywords
        The same options as keywords (``page_size=500, cache=False``);
        with ``options=`` they replace those fields of it.

    Attributes
    ----------
    options : ClientOptions
        The options, validated; each field is also a read-only property
        (``client.page_size``, ``client.timeout``, ...).
    session : Session
        The engine behind the calls (see :mod:`.session`).

    Notes
    -----
    A client built with explicit arguments never reads the environment
    (``CCTX_*``); :func:`cctx_research.connect` reads it and passes what it
    found on.

    Examples
    --------
    >>> import cctx_research as cctx
    >>> client = cctx.connect(sample=True)  # doctest: +SKIP
    >>> client.mints("2024-06-01", "2024-06-02", source="base")  # doctest: +SKIP
    """

    def __init__(
        self,
        base_url: str,
        project_id: str,
        api_key: str | Secret,
        *,
        options: ClientOptions | None = None,
        transport: BaseTransport | None = None,
        **keywords: Any,
    ) -> None:
        check_type(base_url, str, "base_url", "a str such as 'http://127.0.0.1:8000'")
        check_type(project_id, str, "project_id", "a str (the UUID-shaped project id)")
        if isinstance(api_key, str):
            api_key = Secret(api_key)
        check_type(api_key, Secret, "api_key", "a str")
        if not api_key.get().strip():
            raise ConfigError("api_key is empty", hint="set CCTX_API_KEY or pass api_key=")
        if options is not None:
            check_type(options, ClientOptions, "options", "a ClientOptions")
        if transport is not None:
            check_type(transport, BaseTransport, "transport", "a BaseTransport such as "
                       "WSGITransport(app)")  # fmt: skip
        resolved = (options or ClientOptions()).replace(**keywords)
        self._api_key = api_key
        self.session = Session(
            validate_base_url(base_url), validate_project_id(project_id), api_key,
            resolved, transport=transport,
        )  # fmt: skip

    @property
    def options(self) -> ClientOptions:
        """The options, one validated record (each field is also a property of its own)."""
        return self.session.options

    # ------------------------------------------------------------------ what it talks to

    @property
    def base_url(self) -> str:
        """The service's base URL."""
        return self.session.base_url

    @property
    def project_id(self) -> str:
        """The project path segment."""
        return self.session.project_id

    @property
    def source(self) -> str:
        """What the service is, in provenance and cache keys (``source`` option, or the URL)."""
        return self.session.source

    @property
    def transport(self) -> BaseTransport | None:
        """The transport given (``None``: sockets)."""
        return self.session.transport

    @property
    def cache_enabled(self) -> bool:
        """Whether replies and chunks are cached on disk (the ``cache`` option)."""
        return self.options.cache

    # ------------------------------------------------------------------ the options

    @property
    def cache(self) -> bool:
        """Replies and chunks are cached on disk."""
        return self.options.cache  # type: ignore[return-value]

    @property
    def cache_dir(self) -> Path:
        """The cache directory (resolved)."""
        return self.options.cache_dir  # type: ignore[return-value]

    @property
    def expire_after(self) -> int:
        """Seconds replies about the recent past stay fresh."""
        return self.options.expire_after  # type: ignore[return-value]

    @property
    def page_size(self) -> int | None:
        """Records per request as given (``None``: learned)."""
        return self.options.page_size  # type: ignore[return-value]

    @property
    def max_workers(self) -> int:
        """The most requests in flight at once."""
        return self.options.max_workers  # type: ignore[return-value]

    @property
    def timeout(self) -> float:
        """Seconds per request attempt."""
        return self.options.timeout  # type: ignore[return-value]

    @property
    def retries(self) -> int:
        """Retries of transient failures."""
        return self.options.retries  # type: ignore[return-value]

    @property
    def progress(self) -> bool | None:
        """Whether a progress bar is shown (``None``: by where output goes)."""
        return self.options.progress  # type: ignore[return-value]

    @property
    def decimals(self) -> int:
        """Token decimals: ``amount = amount_raw / 10**decimals``."""
        return self.options.decimals  # type: ignore[return-value]

    @property
    def offline(self) -> bool:
        """Answer from the cache alone."""
        return self.options.offline  # type: ignore[return-value]

    @property
    def settle_after(self) -> pd.Timedelta:
        """Windows that ended longer ago than this are final."""
        return self.options.settle_after  # type: ignore[return-value]

    @property
    def chunk(self) -> pd.Timedelta:
        """The length of the chunks long windows are split into."""
        return self.options.chunk  # type: ignore[return-value]

    @property
    def backoff(self) -> float:
        """Base of the exponential backoff, in seconds."""
        return self.options.backoff  # type: ignore[return-value]

    @property
    def synthetic(self) -> bool:
        """The data is synthetic (recorded in provenance).

        True when the client was told so (the ``synthetic`` option,
        ``CCTX_SYNTHETIC``) or once the service has said so in a reply
        (the ``x-cctx-synthetic`` header).
        """
        return self.session.synthetic

    @property
    def clock(self) -> Callable[[], pd.Timestamp] | None:
        """What gives "now" (``None``: the system clock)."""
        return self.options.clock  # type: ignore[return-value]

    @property
    def domains(self) -> tuple[int, ...] | None:
        """The domains the service's data holds, when known (``None``: unknown)."""
        return self.options.domains

    def __repr__(self) -> str:
        return (
            f"Client(base_url={self.base_url!r}, project_id={self.project_id!r}, "
            f"cache={self.cache_enabled}, offline={self.offline})"
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close sessions, cache connections, the transport (and the local service it started)."""
        self.session.close()

    # ------------------------------------------------------------------ listings

    def mints(
        self,
        start: TimeLike | None = None,
        end: TimeLike | None = None,
        *,
        source: int | str | Iterable[int | str] | None = None,
        destination: int | str | Iterable[int | str] | None = None,
    ) -> pd.DataFrame:
        """Mint transactions (completed transfers) in ``[start, end)``.

        Parameters
        ----------
        start, end : str, date, datetime, Timestamp or Unix seconds, optional
            The half-open window; naive means UTC. Default: the last day.
        source, destination : int, str or list of either, optional
            Domain ids or chain names (``"base"``, ``6``, ``["arbitrum", 0]``).
            Default: every chain of the registry (EVM, Solana, Noble, ...),
            named in the request: the interface alone would give its six
            default EVM chains.

        Returns
        -------
        pandas.DataFrame
            The ``transfers`` frame (:mod:`cctx_research.schema`), one row
            per transfer, sorted by ``(timestamp, transfer_id)``.

        Raises
        ------
        ValueError, TypeError
            Bad window or an unknown chain (the message lists valid names).
        CctxError
            A typed error when the service fails past all retries.

        Examples
        --------
        >>> df = client.mints("2024-06-01", "2024-06-08", source="base")  # doctest: +SKIP
        """
        return listing.mints(self.session, start, end, source=source, destination=destination)

    def received(
        self,
        address: str,
        start: TimeLike | None = None,
        end: TimeLike | None = None,
    ) -> pd.DataFrame:
        """Transactions received by ``address`` in ``[start, end)``.

        Parameters
        ----------
        address : str
            An address in its chain's own format (EVM ``0x`` hex, Solana
            base58, Noble ``noble1...``, Sui/Aptos ``0x`` + 64 hex) or the
            interface's bytes32 form; it goes on the wire as bytes32.
        start, end : time-like, optional
            The half-open window. Default: the last day.

        Returns
        -------
        pandas.DataFrame
            The ``received`` frame, sorted by ``(timestamp, transfer_id)``.

        Examples
        --------
        >>> client.received("0x" + "ab" * 20, "2024-06-01", "2024-06-08")  # doctest: +SKIP
        """
        return listing.received(self.session, address, start, end)

    # ------------------------------------------------------------------ look-up

    def transaction(self, tx_hash: str) -> pd.Series:
        """One burn or mint transaction by its hash.

        Parameters
        ----------
        tx_hash : str
            ``0x`` followed by 64 hex digits (any case), a Solana signature
            (base58) or a Noble hash (64 hex digits).

        Returns
        -------
        pandas.Series
            A row of the ``transaction`` frame (index: its columns).

        Raises
        ------
        NotFoundError
            No transaction has this hash.
        """
        return lookup.transaction(self.session, tx_hash)

    # ------------------------------------------------------------------ aggregates

    def volume(self, start: TimeLike | None = None, end: TimeLike | None = None) -> pd.Series:
        """Mint and burn volume and counts in ``[start, end)``.

        Returns
        -------
        pandas.Series
            One row of the ``volume`` frame: ``timestamp`` (start), ``end``,
            ``mint_volume``, ``burn_volume``, ``total_volume``, their raw
            integers, and the counts.
        """
        return aggregates.volume(self.session, start, end)

    def last_record(self, before: TimeLike | None = None) -> pd.Timestamp | None:
        """When the last mint or burn the service holds happened, to the minute.

        Asked through the volume operation's counts: one over everything before
        ``before``, then a bisection (about 25 requests over the whole history;
        those about windows that can no longer change are cached). For a service
        whose data ends in the past (a ledger of yours, served), this is where it ends.

        Parameters
        ----------
        before : str, date, datetime, Timestamp or Unix seconds, optional
            Look only before this time. Default: the service's "now".

        Returns
        -------
        pandas.Timestamp or None
            A time (UTC) within the minute before the last record (the record lies
            in ``[t, t + 1 minute)``), or None when the service holds nothing
            before ``before``.

        Raises
        ------
        ValueError
            If ``before`` is not a time after 1970-01-01.
        CctxError
            A typed error when the service fails past all retries.
        """
        return aggregates.last_record(self.session, before)

    def volume_history(
        self, start: TimeLike, end: TimeLike, *, freq: str | pd.Timedelta = "1D"
    ) -> pd.DataFrame:
        """Mint and burn volume and counts per ``freq`` bucket of ``[start, end)``.

        One volume request per bucket, run concurrently. Bucket edges fall on
        multiples of ``freq`` since the Unix epoch (UTC midnights for days); the
        first and last buckets are clipped to the window.

        Returns
        -------
        pandas.DataFrame
            The ``volume`` frame, one row per bucket, ``timestamp`` its start.
        """
        return aggregates.volume_history(self.session, start, end, freq=freq)

    def top_senders(
        self,
        start: TimeLike | None = None,
        end: TimeLike | None = None,
        *,
        limit: int = 100,
    ) -> pd.DataFrame:
        """Addresses that sent the most volume in ``[start, end)``.

        Parameters
        ----------
        limit : int, default 100
            How many addresses.

        Returns
        -------
        pandas.DataFrame
            The ``top_addresses`` frame, ranked by volume (descending, ties by address).
        """
        return aggregates.top_senders(self.session, start, end, limit=limit)

    # ------------------------------------------------------------------ cache

    def cache_info(self) -> dict[str, Any]:
        """Where the cache is and how much it holds.

        Returns
        -------
        dict
            ``enabled``, ``location``, ``entries`` (replies + chunks),
            ``http_entries``, ``chunk_entries`` and ``bytes`` on disk.
        """
        return self.session.cache_info()

    def clear_cache(self, older_than: Any = None) -> int:
        """Remove cached entries: all of them, or those older than ``older_than``.

        Parameters
        ----------
        older_than : duration, optional
            ``"7D"``, seconds or a timedelta; ``None`` removes everything.

        Returns
        -------
        int
            How many entries were removed.
        """
        return self.session.clear_cache(older_than)
