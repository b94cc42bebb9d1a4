"""The :class:`Client`: one method per question, each returning a canonical frame.

How a listing call runs (``mints``, ``received``):

1. The window ``[start, end)`` is resolved (:func:`cctx_research.times.window`)
   and cut into chunks (default one UTC day, :func:`~cctx_research.times.chunk_window`).
2. Chunks run concurrently on ``max_workers`` threads. A settled chunk (it
   ended more than ``settle_after`` ago) is read from the chunk cache when
   there. Otherwise it is asked for with bounds that cover the chunk
   whatever the service's inclusivity (``startDate = floor(start) - 1``,
   ``endDate = ceil(end)``) and paged until a short or empty page
   (:mod:`.paging`).
3. Each chunk's rows are parsed, filtered to ``start <= timestamp < end``,
   de-duplicated by id and sorted by ``(timestamp, id)``; the chunks are
   joined (again de-duplicated and sorted).

Aggregates (``volume``, ``volume_history``, ``top_senders``) cannot be
filtered after the fact, so the client learns the service's bound
semantics once (:meth:`Client._bounds`) and asks for exactly the whole
seconds of ``[start, end)``.

Any failure of any chunk fails the call with a typed error: never a
silently partial result.
"""

from __future__ import annotations

import concurrent.futures as cf
import datetime as dt
import json
import logging
import math
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import requests

from .. import addressing, arguments, chains, schema
from ..config import Secret, Settings, validate_base_url, validate_project_id
from ..errors import BadRequestError, ConfigError
from ..provenance import Provenance, attach
from ..times import TimeLike, chunk_window, to_timestamp, to_unix, to_unix_ceil, window
from . import parse
from .cache import NEVER_EXPIRE, ChunkStore, HttpCache, default_cache_dir, info, parse_age
from .http import Answer, RequestStats, Transport
from .paging import pages
from .progress import Progress, wanted

__all__ = ["Client"]

logger = logging.getLogger(__name__)



class _Cancelled(Exception):
    """Another chunk of the same call failed; stop early."""


def _arrow_type(dtype: Any) -> pa.DataType:
    if isinstance(dtype, (pd.CategoricalDtype, pd.StringDtype)):
        return pa.large_string()
    if isinstance(dtype, pd.DatetimeTZDtype):
        return pa.timestamp("ns", tz="UTC")
    return pa.from_numpy_dtype(dtype)


def _arrow_schema(kind: str) -> pa.Schema:
    return pa.schema([(c, _arrow_type(d)) for c, d in schema.dtypes(kind).items()])


def _to_arrow(frame: pd.DataFrame, kind: str) -> pa.Table:
    arrow_schema = _arrow_schema(kind)
    cols = []
    for field in arrow_schema:
        s = frame[field.name]
        if isinstance(s.dtype, pd.CategoricalDtype):
            s = s.astype(schema.STRING)
        cols.append(pa.array(s, type=field.type, from_pandas=True))
    return pa.Table.from_arrays(cols, schema=arrow_schema)


def _types_mapper(arrow_type: pa.DataType) -> Any:
    if arrow_type in (pa.large_string(), pa.string()):
        return schema.STRING
    return None


@dataclass(frozen=True)
class _Listing:
    """What differs between the listing operations."""

    operation: str
    kind: str
    id_column: str
    body: dict[str, Any]
    records: Callable[[Any], list[dict[str, Any]]]
    check: Callable[[Any], None]
    parse: Callable[[list[dict[str, Any]]], pd.DataFrame]
    keep: Callable[[pd.DataFrame], pd.Series] | None = None
    final: Callable[[pd.DataFrame], bool] | None = None
    """Whether a chunk's rows can no longer change (default: always, once settled)."""


def _check_type(value: Any, types: type | tuple[type, ...], name: str, what: str) -> None:
    if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
        raise TypeError(f"{name} must be {what}, not a bool")
    if not isinstance(value, types):
        raise TypeError(f"{name} must be {what}, got {type(value).__name__}")


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
    cache : bool, default True
        Keep replies on disk (requests-cache, SQLite) and settled chunks as
        Arrow IPC files. ``False`` sends every request.
    cache_dir : str or Path, optional
        Default: ``CCTX_CACHE_DIR``, else the platform user cache directory.
    expire_after : duration, default 300 s
        How long replies about the recent past (windows that end less than
        ``settle_after`` ago, pending transactions) stay fresh. Older
        windows and completed transactions are kept forever.
    page_size : int, default 100
        Records per request (the interface's ``limit``).
    max_workers : int, default 4
        Chunks fetched concurrently.
    timeout : float, default 30
        Seconds per request attempt.
    retries : int, default 5
        Retries of 429, 5xx, timeouts, dropped connections and unreadable
        replies, with exponential backoff and jitter, honouring
        ``Retry-After``.
    progress : bool, optional
        A progress bar over chunks. ``None``: on in notebooks and terminals,
        off in CI and when output is redirected.
    decimals : int, default 6
        Token decimals: ``amount = amount_raw / 10**decimals``.
    offline : bool, default False
        Answer from the cache alone; what is not cached raises
        :class:`~cctx_research.errors.CacheMissError`.
    settle_after : duration, default "1h"
        The settling horizon: windows that ended longer ago than this are
        taken as final and cached forever.
    chunk : duration, default "1D"
        Length of the chunks long windows are split into.
    backoff : float, default 0.5
        Base of the exponential backoff, in seconds.
    source : str, optional
        What the service is, for provenance and cache keys (default: the
        base URL). :func:`~cctx_research.connect` sets it for the embedded
        sample, whose address changes on every start.
    clock : callable, optional
        Returns "now" as a tz-aware Timestamp (default: the system clock).
        Used for default windows and for deciding what has settled.

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
        cache: bool = True,
        cache_dir: str | Path | None = None,
        expire_after: Any = 300,
        page_size: int = 100,
        max_workers: int = 4,
        timeout: float = 30,
        retries: int = 5,
        progress: bool | None = None,
        decimals: int = 6,
        offline: bool = False,
        settle_after: Any = "1h",
        chunk: Any = "1D",
        backoff: float = 0.5,
        source: str | None = None,
        synthetic: bool = False,
        clock: Callable[[], pd.Timestamp] | None = None,
    ) -> None:
        _check_type(base_url, str, "base_url", "a str such as 'http://127.0.0.1:8000'")
        _check_type(project_id, str, "project_id", "a str (the UUID-shaped project id)")
        if isinstance(api_key, str):
            api_key = Secret(api_key)
        _check_type(api_key, Secret, "api_key", "a str")
        if not api_key.get().strip():
            raise ConfigError("api_key is empty", hint="set CCTX_API_KEY or pass api_key=")
        for name, value in (("cache", cache), ("offline", offline), ("synthetic", synthetic)):
            _check_type(value, bool, name, "True or False")
        if progress is not None:
            _check_type(progress, bool, "progress", "True, False or None")
        if cache_dir is not None:
            _check_type(cache_dir, (str, Path), "cache_dir", "a str or Path")
        if offline and not cache:
            raise ValueError("offline=True answers from the cache: it needs cache=True")
        self.base_url = validate_base_url(base_url)
        self.project_id = validate_project_id(project_id)
        self._api_key = api_key
        self.page_size = arguments.integer(page_size, "page_size", low=1)
        self.max_workers = arguments.integer(max_workers, "max_workers", low=1, high=64)
        self.retries = arguments.integer(retries, "retries", low=0, high=100)
        self.decimals = arguments.integer(decimals, "decimals", low=0, high=30)
        _check_type(timeout, (int, float), "timeout", "a number of seconds")
        if not timeout > 0 or not math.isfinite(timeout):
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout}")
        _check_type(backoff, (int, float), "backoff", "a number of seconds")
        if backoff < 0:
            raise ValueError(f"backoff must be >= 0 seconds, got {backoff}")
        self.expire_after = int(parse_age(expire_after, name="expire_after").total_seconds())
        self.settle_after = parse_age(settle_after, name="settle_after")
        self.chunk = parse_age(chunk, name="chunk")
        if self.chunk <= pd.Timedelta(0):
            raise ValueError(f"chunk must be a positive duration, got {chunk!r}")
        if source is not None:
            _check_type(source, str, "source", "a str")
        if clock is not None and not callable(clock):
            raise TypeError("clock must be a callable returning a tz-aware pandas.Timestamp")
        self.source = source or self.base_url
        self.synthetic = synthetic
        self.cache_enabled = cache
        self.offline = offline
        self.progress = progress
        self._clock = clock

        if cache_dir is None:
            cache_dir = Settings.from_env().cache_dir or default_cache_dir()
        self.cache_dir = Path(cache_dir).expanduser()
        self._http_cache: HttpCache | None = None
        self._chunks: ChunkStore | None = None
        if cache:
            self._http_cache = HttpCache(
                self.cache_dir,
                base_url=self.base_url,
                namespace=f"{self.source}|{self.project_id}",
                expire_after=self.expire_after,
            )
            self._chunks = ChunkStore(self.cache_dir)
            factory: Callable[[], requests.Session] = self._http_cache.session
        else:
            factory = requests.Session
        # requests re-reads the proxy variables of the environment on every
        # request (a third of the client's CPU in a cold pull): read them once.
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
            timeout=float(timeout),
            retries=self.retries,
            backoff=float(backoff),
        )
        self._limit = self.page_size
        self._limit_verified = False
        self._bound_mode: tuple[bool, bool] | None = None
        self._lock = threading.Lock()
        self._owned: list[Any] = []

    # ------------------------------------------------------------------ basics

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
        if self._clock is None:
            return pd.Timestamp.now(tz="UTC")
        return to_timestamp(self._clock(), name="clock()")

    def _settled(self, end: pd.Timestamp) -> bool:
        return end <= self._now() - self.settle_after

    def _window(
        self, start: TimeLike | None, end: TimeLike | None
    ) -> tuple[pd.Timestamp, pd.Timestamp]:
        return window(start, end, now=self._now())

    def _progress(self, total: int, desc: str) -> Progress:
        return Progress(enabled=wanted(self.progress), total=total, desc=desc)

    def _post(
        self,
        operation: str,
        body: Mapping[str, Any],
        *,
        stats: RequestStats,
        check: Callable[[Any], None],
        forever: bool,
        store: bool = True,
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
        )

    def _provenance(
        self,
        frame: pd.DataFrame | pd.Series,
        operation: str,
        params: dict[str, Any],
        stats: RequestStats,
        fetched_at: pd.Timestamp,
    ) -> None:
        window = None
        if isinstance(params.get("start"), pd.Timestamp) and isinstance(
            params.get("end"), pd.Timestamp
        ):
            window = (params["start"], params["end"])
        attach(
            frame,
            Provenance(
                source=self.source,
                synthetic=self.synthetic,
                project_id=self.project_id,
                operation=operation,
                window=window,
                parameters={k: _jsonable(v) for k, v in params.items()},
                fetched_at=fetched_at,
                requests=stats.requests,
                network_requests=stats.network,
                cache_hits=stats.cache_hits,
                retries=stats.retries,
            ),
        )

    # ------------------------------------------------------------------ listings

    def _run_chunks(
        self,
        spec: _Listing,
        start: pd.Timestamp,
        end: pd.Timestamp,
        key_parts: dict[str, Any],
        stats: RequestStats,
    ) -> pd.DataFrame:
        windows = list(chunk_window(start, end, self.chunk))
        keys = [self._chunk_key(spec, cs, ce, key_parts) for cs, ce in windows]
        # Stored chunks are read here, in order: a plain file read is faster
        # than a trip through the pool.
        tables: list[pa.Table | None] = [
            None if key is None or self._chunks is None else self._chunks.get(key, max_age=age)
            for key, age in keys
        ]
        hits = sum(t is not None for t in tables)
        if hits:
            stats.add(cache_hits=hits)
            logger.debug(
                "%s: %d of %d chunks from the chunk cache", spec.operation, hits, len(keys)
            )
        todo = [(i, cs, ce, keys[i][0]) for i, (cs, ce) in enumerate(windows) if tables[i] is None]
        cancel = threading.Event()
        with self._progress(len(todo), spec.operation) as bar:

            def run(_: int, i: int, cs: pd.Timestamp, ce: pd.Timestamp, key: str | None) -> None:
                tables[i] = self._chunk(spec, cs, ce, key, stats, bar, cancel)
                bar.advance()

            _run_all(run, todo, self.max_workers, cancel)
        return self._assemble(spec, [t for t in tables if t is not None])

    def _assemble(self, spec: _Listing, tables: list[pa.Table]) -> pd.DataFrame:
        if not tables:
            return schema.empty(spec.kind)
        table = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
        if table.num_rows == 0:
            return schema.empty(spec.kind)
        ids = table.column(spec.id_column)
        if len(pc.unique(ids)) != table.num_rows:
            frame = table.to_pandas(types_mapper=_types_mapper)
            # chunks are in time order: the last row of an id is its latest
            # state (a pending burn seen again later as its mint)
            frame = frame.drop_duplicates(spec.id_column, keep="last")
            table = pa.Table.from_pandas(frame, schema=table.schema, preserve_index=False)
        # Each chunk is sorted and the chunks are disjoint and in order, so the
        # join is sorted already unless duplicates were dropped across chunks.
        ts = table.column("timestamp")
        if (
            table.num_rows > 1
            and not pc.all(pc.greater_equal(ts.slice(1), ts.slice(0, table.num_rows - 1))).as_py()
        ):
            table = table.sort_by([("timestamp", "ascending"), (spec.id_column, "ascending")])
        frame = table.to_pandas(types_mapper=_types_mapper)
        return parse.coerce(frame, spec.kind)

    def _chunk_key(
        self, spec: _Listing, cs: pd.Timestamp, ce: pd.Timestamp, key_parts: dict[str, Any]
    ) -> tuple[str | None, float | None]:
        """The chunk-cache key of a chunk and the age up to which it may be used.

        ``(None, None)`` without a cache. Settled chunks have no age limit;
        recent ones ``expire_after`` (none when offline: the cache is all there is).
        """
        if self._chunks is None:
            return None, None
        settled = self._settled(ce)
        if not settled and self.expire_after <= 0:
            return None, None
        key = ChunkStore.key(
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
        max_age = None if settled or self.offline else float(self.expire_after)
        return key, max_age

    def _chunk(
        self,
        spec: _Listing,
        cs: pd.Timestamp,
        ce: pd.Timestamp,
        key: str | None,
        stats: RequestStats,
        bar: Progress,
        cancel: threading.Event,
    ) -> pa.Table:
        """Fetch, page, parse and filter one chunk; store it under ``key``."""
        settled = self._settled(ce)
        body = {
            **spec.body,
            # a second early covers an exclusive start; ceil(end) covers either end
            "startDate": str(to_unix(cs) - 1),
            "endDate": str(to_unix_ceil(ce)),
        }
        records: list[dict[str, Any]] = []
        pager = pages(self._limit, verified=self._limit_verified)
        request = next(pager)
        while True:
            if cancel.is_set():
                raise _Cancelled
            answer = self._post(
                spec.operation,
                {**body, "page": request.page, "limit": request.limit},
                stats=stats,
                check=spec.check,
                # A settled chunk is kept whole, parsed, in the chunk cache:
                # storing its pages as replies too would double the work. A
                # listing whose rows may still change (spec.final) keeps its
                # pages as replies for expire_after instead: whether this
                # chunk is final is known only once it is all here.
                forever=settled and spec.final is None,
                store=not (settled and key is not None and spec.final is None),
            )
            page = spec.records(answer.body)
            records.extend(page)
            bar.page()
            count = len(page)
            if request.probe and count > 0:
                with self._lock:
                    logger.info("the service caps limit at %d; paging with that", request.limit)
                    self._limit = min(self._limit, request.limit)
                    self._limit_verified = True
            elif count >= request.limit:
                self._limit_verified = True
            try:
                request = pager.send(count)
            except StopIteration:
                break
        frame = spec.parse(records)
        ts = frame["timestamp"]
        keep = (ts >= cs) & (ts < ce)
        if spec.keep is not None:
            keep &= spec.keep(frame)
        frame = frame.loc[keep.to_numpy()]
        frame = frame.drop_duplicates(spec.id_column, keep="first")
        frame = frame.sort_values(["timestamp", spec.id_column], kind="stable")
        table = _to_arrow(frame, spec.kind)
        # a settled chunk is kept forever, so only if none of its rows can
        # still change (a pending transfer listed by its burn will be minted)
        lasting = not settled or spec.final is None or spec.final(frame)
        if key is not None and self._chunks is not None and lasting:
            self._chunks.put(key, table)
        return table

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
        fetched_at = pd.Timestamp.now(tz="UTC")
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

        spec = _Listing(
            operation="transactions-mint",
            kind="transfers",
            id_column="transfer_id",
            body=body,
            records=parse.mint_records,
            check=parse.check_mints,
            parse=lambda recs: parse.transfers(recs, decimals=decimals),
            keep=keep if (src is not None or dst is not None) else None,
        )
        stats = RequestStats()
        frame = self._run_chunks(spec, start_ts, end_ts, {"src": src, "dst": dst}, stats)
        self._provenance(
            frame,
            "mints",
            {"start": start_ts, "end": end_ts, "source": src, "destination": dst},
            stats,
            fetched_at,
        )
        return frame

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
        fetched_at = pd.Timestamp.now(tz="UTC")
        decimals = self.decimals
        spec = _Listing(
            operation="transactions-address-recipient",
            kind="received",
            id_column="transfer_id",
            body={"address": wire},
            records=lambda body: body["transactions"],
            check=parse.check_received,
            parse=lambda recs: parse.received(recs, address=norm, decimals=decimals),
            final=lambda frame: not (frame["transaction_type"] == "burn").any(),
        )
        stats = RequestStats()
        frame = self._run_chunks(spec, start_ts, end_ts, {"address": norm}, stats)
        self._provenance(
            frame,
            "received",
            {"address": norm, "start": start_ts, "end": end_ts},
            stats,
            fetched_at,
        )
        return frame

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
        _check_type(tx_hash, str, "tx_hash", "a str such as '0x' followed by 64 hex digits")
        text = addressing.normalize_hash(tx_hash, name="tx_hash")
        fetched_at = pd.Timestamp.now(tz="UTC")
        stats = RequestStats()
        answer = self._post(
            "transactions-txHash",
            {"txHash": text},
            stats=stats,
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
        self._provenance(row, "transaction", {"tx_hash": text}, stats, fetched_at)
        return row

    # ------------------------------------------------------------------ aggregates

    def _bounds(
        self, start: pd.Timestamp, end: pd.Timestamp, stats: RequestStats
    ) -> tuple[bool, bool]:
        """Learn (once) whether the service's startDate/endDate are inclusive.

        Finds one mint at a known second ``t`` (in the window asked for, or
        else in the service's default window), counts the mints listed at
        ``t-1``, ``t`` and ``t+1``, and compares what the volume report
        counts for ``[t, t]``, ``[t, t+1]`` and ``[t-1, t]`` with what each
        reading of the bounds predicts; neighbouring mints cannot fool it.
        """
        if self._bound_mode is not None:
            return self._bound_mode
        probe_windows = [
            {"startDate": str(to_unix(start)), "endDate": str(to_unix_ceil(end))},
            {},
        ]
        t = None
        for w in probe_windows:
            answer = self._post(
                "transactions-mint",
                {**w, "page": 1, "limit": 1},
                stats=stats,
                check=parse.check_mints,
                forever=bool(w) and self._settled(end),
            )
            recs = parse.mint_records(answer.body)
            if recs:
                t = int(parse.timestamps([recs[0]["timestamp"]]).asi8[0] // 1_000_000_000)
                break
        if t is None:
            logger.info("no mint found to learn the bound semantics; assuming [start, end)")
            return (True, False)

        def mints_in(a: int, b: int) -> int:
            try:
                answer = self._post(
                    "transactions-volume",
                    {"startDate": str(a), "endDate": str(b)},
                    stats=stats,
                    check=parse.check_volume,
                    forever=self._settled(pd.Timestamp(b + 1, unit="s", tz="UTC")),
                )
            except BadRequestError:
                return 0
            return int(parse._ints([answer.body["mintCount"]], name="mintCount")[0])

        # How many mints fall on each of the seconds t-1, t, t+1: a listing of
        # [t-2, t+2] holds all of them whatever the bounds mean.
        seen: dict[int, int] = {}
        for record in self._list_all("transactions-mint", t - 2, t + 2, stats):
            second = int(parse.timestamps([record["timestamp"]]).asi8[0] // 1_000_000_000)
            seen[second] = seen.get(second, 0) + 1
        n = {d: seen.get(t + d, 0) for d in (-1, 0, 1)}
        # what the volume report would count for [t, t], [t, t+1], [t-1, t]
        # under each reading of the bounds, compared with what it does count
        expected = {
            (True, True): (n[0], n[0] + n[1], n[-1] + n[0]),
            (True, False): (0, n[0], n[-1]),
            (False, True): (0, n[1], n[0]),
            (False, False): (0, 0, 0),
        }
        observed = (mints_in(t, t), mints_in(t, t + 1), mints_in(t - 1, t))
        matches = [m for m, counts in expected.items() if counts == observed]
        if len(matches) != 1:
            logger.warning(
                "could not tell the service's bound semantics apart (%s); assuming [start, end)",
                "ambiguous" if matches else "inconsistent counts",
            )
            matches = [(True, False)]
        mode = matches[0]
        logger.info(
            "service bounds: startDate %s, endDate %s",
            "inclusive" if mode[0] else "exclusive",
            "inclusive" if mode[1] else "exclusive",
        )
        self._bound_mode = mode
        return mode

    def _list_all(
        self, operation: str, start_s: int, end_s: int, stats: RequestStats
    ) -> list[dict[str, Any]]:
        """Every mint record of a few seconds' window, paged until a short page."""
        records: list[dict[str, Any]] = []
        page = 1
        while True:
            answer = self._post(
                operation,
                {
                    "startDate": str(start_s),
                    "endDate": str(end_s),
                    "page": page,
                    "limit": self._limit,
                },
                stats=stats,
                check=parse.check_mints,
                forever=self._settled(pd.Timestamp(end_s + 1, unit="s", tz="UTC")),
            )
            got = parse.mint_records(answer.body)
            records.extend(got)
            if len(got) < self._limit or page >= 1000:
                return records
            page += 1

    def _aggregate_body(
        self, start: pd.Timestamp, end: pd.Timestamp, stats: RequestStats
    ) -> dict[str, str] | None:
        """Request bounds selecting exactly the whole seconds of ``[start, end)``.

        ``None`` when the window holds no whole second.
        """
        s, e = to_unix_ceil(start), to_unix_ceil(end)  # integer seconds t with start <= t < end
        if s >= e:
            return None
        start_incl, end_incl = self._bounds(start, end, stats)
        return {
            "startDate": str(s if start_incl else s - 1),
            "endDate": str(e - 1 if end_incl else e),
        }

    def _volume_row(
        self, start: pd.Timestamp, end: pd.Timestamp, stats: RequestStats
    ) -> dict[str, Any]:
        body = self._aggregate_body(start, end, stats)
        if body is None:
            zero = {"mintVolume": 0, "burnVolume": 0, "mintCount": 0, "burnCount": 0}
            return parse.volume(zero, start=start, end=end, decimals=self.decimals)
        answer = self._post(
            "transactions-volume",
            body,
            stats=stats,
            check=parse.check_volume,
            forever=self._settled(end),
        )
        return parse.volume(answer.body, start=start, end=end, decimals=self.decimals)

    def volume(self, start: TimeLike | None = None, end: TimeLike | None = None) -> pd.Series:
        """Mint and burn volume and counts in ``[start, end)``.

        Returns
        -------
        pandas.Series
            One row of the ``volume`` frame: ``timestamp`` (start), ``end``,
            ``mint_volume``, ``burn_volume``, ``total_volume``, their raw
            integers, and the counts.
        """
        start_ts, end_ts = self._window(start, end)
        fetched_at = pd.Timestamp.now(tz="UTC")
        stats = RequestStats()
        frame = parse.volume_frame([self._volume_row(start_ts, end_ts, stats)])
        row = frame.iloc[0].copy()
        row.name = "volume"
        self._provenance(row, "volume", {"start": start_ts, "end": end_ts}, stats, fetched_at)
        return row

    def volume_history(
        self, start: TimeLike, end: TimeLike, *, freq: str | pd.Timedelta = "1D"
    ) -> pd.DataFrame:
        """Mint and burn volume and counts per ``freq`` bucket of ``[start, end)``.

        One volume request per bucket, run concurrently. Bucket edges fall
        on multiples of ``freq`` since the Unix epoch (UTC midnights for
        days); the first and last buckets are clipped to the window.

        Returns
        -------
        pandas.DataFrame
            The ``volume`` frame, one row per bucket, ``timestamp`` its start.
        """
        if start is None or end is None:
            raise ValueError(
                "volume_history needs both start and end, e.g. ('2024-06-01', '2024-07-01')"
            )
        step = parse_age(freq, name="freq")
        if step <= pd.Timedelta(0):
            raise ValueError(f"freq must be a positive duration such as '1D' or '1h', got {freq!r}")
        start_ts, end_ts = self._window(start, end)
        buckets = list(chunk_window(start_ts, end_ts, step))
        if len(buckets) > 100_000:
            raise ValueError(
                f"{len(buckets)} buckets of {freq!r}: pass a larger freq or a shorter window"
            )
        fetched_at = pd.Timestamp.now(tz="UTC")
        stats = RequestStats()
        self._aggregate_body(start_ts, end_ts, stats)  # learn the bounds once, up front
        rows: list[dict[str, Any] | None] = [None] * len(buckets)
        with self._progress(len(buckets), "transactions-volume") as bar:

            def run(i: int, a: pd.Timestamp, b: pd.Timestamp) -> None:
                rows[i] = self._volume_row(a, b, stats)
                bar.page()
                bar.advance()

            _run_all(run, buckets, self.max_workers, threading.Event())
        frame = parse.volume_frame([r for r in rows if r is not None])
        self._provenance(
            frame,
            "volume_history",
            {"start": start_ts, "end": end_ts, "freq": str(step)},
            stats,
            fetched_at,
        )
        return frame

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
            The ``top_addresses`` frame, ranked by volume (descending, ties
            by address).
        """
        limit = arguments.integer(limit, "limit", low=1)
        start_ts, end_ts = self._window(start, end)
        fetched_at = pd.Timestamp.now(tz="UTC")
        stats = RequestStats()
        body = self._aggregate_body(start_ts, end_ts, stats)
        if body is None:
            frame = schema.empty("top_addresses")
        else:
            answer = self._post(
                "stats-senders",
                {**body, "limit": limit},
                stats=stats,
                check=parse.check_top,
                forever=self._settled(end_ts),
            )
            frame = parse.top_addresses(answer.body["topRecipients"], decimals=self.decimals)
            frame = frame.sort_values(
                ["volume_raw", "address"], ascending=[False, True], kind="stable"
            ).head(limit)
            frame["rank"] = np.arange(1, len(frame) + 1, dtype=np.int64)
            frame = frame.reset_index(drop=True)
        self._provenance(
            frame,
            "top_senders",
            {"start": start_ts, "end": end_ts, "limit": limit},
            stats,
            fetched_at,
        )
        return frame

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


def _jsonable(value: Any) -> Any:
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def _run_all(
    fn: Callable[..., None],
    items: list[tuple[Any, ...]],
    max_workers: int,
    cancel: threading.Event | None = None,
) -> None:
    """Run ``fn(i, *item)`` for every item on a pool; the first error wins.

    On a failure ``cancel`` is set (running items check it between
    requests), queued items are dropped, and the first real error is raised.
    """
    if len(items) <= 1 or max_workers == 1:
        for i, item in enumerate(items):
            fn(i, *item)
        return
    with cf.ThreadPoolExecutor(
        max_workers=min(max_workers, len(items)), thread_name_prefix="cctx"
    ) as pool:
        futures = [pool.submit(fn, i, *item) for i, item in enumerate(items)]
        cf.wait(futures, return_when=cf.FIRST_EXCEPTION)
        if not any(f.done() and f.exception() is not None for f in futures):
            return
        if cancel is not None:
            cancel.set()
        for f in futures:
            f.cancel()
        cf.wait(futures)
    failures = [
        f.exception()
        for f in futures
        if not f.cancelled()
        and f.exception() is not None
        and not isinstance(f.exception(), _Cancelled)
    ]
    raise failures[0]
