"""The :class:`Client`: one method per question, each returning a canonical frame.

The parts behind it, one concern each:

- :mod:`.options`: the options, one frozen record (:class:`ClientOptions`);
- :mod:`.runner`: the call's tasks on worker threads, adaptive concurrency,
  cancellation (Ctrl-C) and progress;
- :mod:`.planner`: the page size (learned, remembered) and each chunk's pages,
  on the pure pager of :mod:`.paging`;
- :mod:`.listing`: chunks of a listing call, their parsing and the join;
- :mod:`.bounds`: the service's bound semantics, for aggregates;
- :mod:`.http` and :mod:`.cache`: one request, and the two cache levels.

Every public call goes through one path, :meth:`Client._call`: it counts
the call's requests, attaches the provenance record and logs one INFO
summary (rows, requests, cache hits, seconds). Any failure of any part of
a call fails the call with a typed error: never a silently partial result.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

import pandas as pd
import requests

from .. import addressing, chains
from ..config import Secret, validate_base_url, validate_project_id
from ..errors import ConfigError
from ..times import TimeLike, chunk_window, to_timestamp, window
from . import aggregates, bounds, coverage, parse
from .cache import NEVER_EXPIRE, ChunkStore, HttpCache, info, parse_age
from .calls import Call, record
from .http import Answer, RequestStats, Transport
from .listing import Chunk, Listing, fetch_listing
from .options import ClientOptions, check_type
from .planner import MEMO_FILE, PageSize

__all__ = ["Client"]

logger = logging.getLogger(__name__)


_Result = TypeVar("_Result", pd.DataFrame, pd.Series)


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
    **keywords
        The same options as keywords (``page_size=500, cache=False``);
        with ``options=`` they replace those fields of it.

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
        self.options = (options or ClientOptions()).replace(**keywords)
        self.base_url = validate_base_url(base_url)
        self.project_id = validate_project_id(project_id)
        self._api_key = api_key
        self.source = self.options.source or self.base_url
        opts = self.options

        self._http_cache: HttpCache | None = None
        self._chunks: ChunkStore | None = None
        if opts.cache:
            self._http_cache = HttpCache(
                self.cache_dir,
                base_url=self.base_url,
                namespace=f"{self.source}|{self.project_id}",
                expire_after=opts.expire_after,
            )
            self._chunks = ChunkStore(self.cache_dir, read_only=self._http_cache.read_only)
            factory: Callable[[], requests.Session] = self._http_cache.session
        else:
            factory = requests.Session
        # requests re-reads the proxy variables of the environment on every
        # request (a third of the client's CPU in a cold pull): read them once.
        # (They configure the HTTP stack, not the client.)
        proxies = requests.utils.get_environ_proxies(self.base_url)
        ca_bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")

        def session_factory() -> requests.Session:
            session = factory()
            session.trust_env = False
            session.proxies.update(proxies)
            if ca_bundle:
                session.verify = ca_bundle
            return session

        self._transport = Transport(
            self.base_url,
            self.project_id,
            api_key,
            session_factory=session_factory,
            timeout=opts.timeout,
            retries=opts.retries,
            backoff=opts.backoff,
        )
        memo = self.cache_dir / MEMO_FILE if opts.cache else None
        self._sizes = {
            op: PageSize(opts.page_size, memo=memo, key=f"{self.source}|{self.project_id}|{op}")
            for op in ("transactions-mint", "transactions-address-recipient")
        }
        self._bounds: bounds.Bounds | None = None
        self._lock = threading.Lock()
        self._owned: list[Any] = []
        self._coverage = coverage.for_client(self)

    # ------------------------------------------------------------------ basics

    _FROM_OPTIONS = frozenset(
        {"page_size", "max_workers", "retries", "decimals", "expire_after", "settle_after",
         "chunk", "offline", "progress", "synthetic", "cache_dir"}
    )  # fmt: skip

    def __getattr__(self, name: str) -> Any:
        # client.page_size etc. read the options record
        options = self.__dict__.get("options")
        if name in Client._FROM_OPTIONS and options is not None:
            return getattr(options, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def cache_enabled(self) -> bool:
        """Whether replies and chunks are cached on disk."""
        return self.options.cache

    @property
    def _limit(self) -> int:
        """The page size of mint listings now (learned, or as given)."""
        return self._sizes["transactions-mint"].limit

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
        """Close sessions and cache connections (and the embedded service it started)."""
        self._transport.close()
        if self._http_cache is not None:
            self._http_cache.close()
        while self._owned:
            self._owned.pop().close()

    def _now(self) -> pd.Timestamp:
        if self.options.clock is None:
            return pd.Timestamp.now(tz="UTC")
        return to_timestamp(self.options.clock(), name="clock()")

    def _settled(self, end: pd.Timestamp) -> bool:
        return end <= self._now() - self.settle_after

    def _window(
        self, start: TimeLike | None, end: TimeLike | None
    ) -> tuple[pd.Timestamp, pd.Timestamp]:
        return window(start, end, now=self._now())

    # ------------------------------------------------------------------ the call path

    def _post(
        self,
        operation: str,
        body: Mapping[str, Any],
        *,
        stats: RequestStats,
        check: Callable[[Any], None],
        forever: bool,
        store: bool = True,
        cancel: threading.Event | None = None,
    ) -> Answer:
        """One request; its reply is cached forever when ``forever``, else ``expire_after``.

        ``store=False`` keeps the reply out of the HTTP cache: for the pages
        of a settled chunk, whose parsed frame the chunk cache keeps.
        """
        return self._transport.post(
            operation,
            body,
            stats=stats,
            only_if_cached=self.offline,
            expire_after=(NEVER_EXPIRE if forever else self.expire_after)
            if self.cache_enabled
            else None,
            validate=check,
            # offline, the HTTP cache is all there is: always consult it
            store=store or self.offline,
            cancel=cancel,
        )

    def _call(
        self,
        operation: str,
        params: dict[str, Any],
        fetch: Callable[[Call], _Result],
    ) -> _Result:
        """Run one public call through the one call path (:func:`.calls.record`)."""
        call = Call(
            operation,
            cancel=threading.Event(),
            progress=self.progress,
            max_workers=self.max_workers,
            abort=self._transport.abort,
            resume=self._transport.resume,
        )
        start, end = params.get("start"), params.get("end")
        windowed = isinstance(start, pd.Timestamp) and isinstance(end, pd.Timestamp)
        if windowed:
            # what the data covers of the window, asked beside the call's own requests
            call.beside(
                lambda stats: self._coverage.check(start, end, stats=stats, cancel=call.cancel)
            )
        result = fetch(call)
        covered = None
        if windowed:
            # warns once (here, on the calling thread) when the data does not cover it all
            covered = self._coverage.covered(start, end, call.beside_result())
        return record(
            call, result, params, source=self.source, synthetic=self.synthetic,
            project_id=self.project_id, coverage=covered,
        )  # fmt: skip

    # ------------------------------------------------------------------ listings

    def _listing(
        self, call: Call, spec: Listing, start: pd.Timestamp, end: pd.Timestamp,
        key_parts: dict[str, Any],
    ) -> pd.DataFrame:  # fmt: skip
        chunks = [
            Chunk(i, cs, ce, self._chunk_key(spec, cs, ce, key_parts), self._settled(ce))
            for i, (cs, ce) in enumerate(chunk_window(start, end, self.chunk))
        ]
        max_age = None if self.offline else float(self.expire_after)
        return fetch_listing(
            call, spec, chunks, size=self._sizes[spec.operation], post=self._post,
            store=self._chunks, max_age=max_age,
        )  # fmt: skip

    def _chunk_key(
        self, spec: Listing, cs: pd.Timestamp, ce: pd.Timestamp, key_parts: dict[str, Any]
    ) -> str | None:
        """The chunk-cache key of a chunk (``None`` when it is not to be cached)."""
        if self._chunks is None:
            return None
        settled = self._settled(ce)
        if not settled and self.expire_after <= 0:
            return None
        return ChunkStore.key(
            **key_parts,
            settled=settled,
            source=self.source,
            project_id=self.project_id,
            operation=spec.operation,
            kind=spec.kind,
            start=cs.isoformat(),
            end=ce.isoformat(),
            decimals=self.decimals,
        )

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
            Default: the interface's default domains.

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
        src = chains.domains(source)
        dst = chains.domains(destination)
        start_ts, end_ts = self._window(start, end)
        body: dict[str, Any] = {}
        if src is not None:
            body["sourceDomain"] = json.dumps([str(d) for d in src])
        if dst is not None:
            body["destinationDomain"] = json.dumps([str(d) for d in dst])
        decimals = self.decimals

        def keep(frame: pd.DataFrame) -> pd.Series:
            ok = pd.Series(True, index=frame.index)
            if src is not None:
                ok &= frame["source_domain"].isin(src)
            if dst is not None:
                ok &= frame["destination_domain"].isin(dst)
            return ok

        spec = Listing(
            operation="transactions-mint",
            kind="transfers",
            id_column="transfer_id",
            body=body,
            records=parse.mint_records,
            check=parse.check_mints,
            parse=lambda recs: parse.transfers(recs, decimals=decimals),
            keep=keep if (src is not None or dst is not None) else None,
            one_chunk_per_id=True,
        )
        return self._call(
            "mints",
            {"start": start_ts, "end": end_ts, "source": src, "destination": dst},
            lambda call: self._listing(call, spec, start_ts, end_ts, {"src": src, "dst": dst}),
        )

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
        norm = addressing.normalize_address(address)
        wire = addressing.to_bytes32(norm)
        start_ts, end_ts = self._window(start, end)
        decimals = self.decimals
        spec = Listing(
            operation="transactions-address-recipient",
            kind="received",
            id_column="transfer_id",
            body={"address": wire},
            records=lambda body: body["transactions"],
            check=parse.check_received,
            parse=lambda recs: parse.received(recs, address=norm, decimals=decimals),
            final=lambda frame: not (frame["transaction_type"] == "burn").any(),
        )
        return self._call(
            "received",
            {"address": norm, "start": start_ts, "end": end_ts},
            lambda call: self._listing(call, spec, start_ts, end_ts, {"address": norm}),
        )

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
        check_type(tx_hash, str, "tx_hash", "a str such as '0x' followed by 64 hex digits")
        text = addressing.normalize_hash(tx_hash, name="tx_hash")

        def fetch(call: Call) -> pd.Series:
            answer = self._post(
                "transactions-txHash",
                {"txHash": text},
                stats=call.stats,
                check=parse.check_transaction,
                forever=False,
            )
            frame = parse.transaction(answer.body, decimals=self.decimals)
            if (
                bool(frame["is_completed"].iloc[0])
                and not answer.from_cache
                and self._http_cache is not None
                and answer.cache_key
            ):
                self._http_cache.keep_forever(answer.cache_key)
            row = frame.iloc[0].copy()
            row.name = text
            return row

        return self._call("transaction", {"tx_hash": text}, fetch)

    # ------------------------------------------------------------------ aggregates

    def _bound_semantics(self, call: Call, start: pd.Timestamp, end: pd.Timestamp) -> bounds.Bounds:
        """The service's bound semantics, learned once per client."""
        with self._lock:
            if self._bounds is not None:
                return self._bounds

        def post(operation: str, body: Mapping[str, Any], **kw: Any) -> Answer:
            return self._post(operation, body, stats=call.stats, cancel=call.cancel, **kw)

        mode = bounds.learn(
            post, start, end, size=self._sizes["transactions-mint"], settled=self._settled
        )
        with self._lock:
            self._bounds = mode
        return mode

    volume = aggregates.volume
    volume_history = aggregates.volume_history
    top_senders = aggregates.top_senders

    # ------------------------------------------------------------------ cache

    def cache_info(self) -> dict[str, Any]:
        """Where the cache is and how much it holds.

        Returns
        -------
        dict
            ``enabled``, ``location``, ``entries`` (replies + chunks),
            ``http_entries``, ``chunk_entries`` and ``bytes`` on disk.
        """
        return info(self.cache_dir, self._http_cache, self._chunks)

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
        age = None if older_than is None else parse_age(older_than, name="older_than")
        if self._http_cache is None or self._chunks is None:
            return 0
        removed = self._http_cache.clear(age) + self._chunks.clear(age)
        logger.info("cache: removed %d entries from %s", removed, self.cache_dir)
        return removed
