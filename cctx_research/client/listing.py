"""Listing calls (``mints``, ``received``): chunks, their pages, their frames.

The calls take the client's :class:`~.session.Session` and use only its
public methods (the clock, the cache policy, the page sizes, ``post`` and
``call``).

A listing's window ``[start, end)`` is cut into chunks (one UTC day by
default). A chunk is asked for with bounds that cover it whatever the
service's inclusivity (``startDate = floor(start) - 1``, ``endDate =
ceil(end)``), paged until a short or empty page (:mod:`.planner`,
:mod:`.paging`), parsed, filtered to ``start <= timestamp < end``,
de-duplicated by id and sorted by ``(timestamp, id)``, then stored in the
chunk cache when it can no longer change. :func:`assemble` joins the
chunks' tables into the frame.

:class:`ListingRun` is the state of one call, kept by the calling thread:
it turns each finished task (a page, a parsed chunk) into the next ones for
:func:`.runner.run`. While the page size is not yet known, only the first
chunk runs; the others start once its first page has been accepted.
"""

from __future__ import annotations

import json
import logging
import threading
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .. import addressing, chains, schema
from ..errors import BadRequestError, CoverageWarning
from ..net import Answer, Progress, RequestStats, Task
from ..times import TimeLike, chunk_window, to_unix, to_unix_ceil
from . import parse
from .cache_policy import CachePolicy
from .chunks import ChunkStore
from .paging import PageRequest
from .planner import ChunkPages, PageSize

if TYPE_CHECKING:
    from .calls import Call
    from .session import Session

__all__ = ["Chunk", "Listing", "ListingRun", "assemble", "fetch_listing", "mints", "received"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Listing:
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
    one_chunk_per_id: bool = False
    """An id's timestamp never changes, so an id is in one chunk only (mints)."""


@dataclass(frozen=True)
class Chunk:
    """One chunk of a listing call: ``[start, end)``, its cache key, whether it has settled."""

    index: int
    start: pd.Timestamp
    end: pd.Timestamp
    key: str | None
    settled: bool


def _arrow_type(dtype: Any) -> pa.DataType:
    if isinstance(dtype, (pd.CategoricalDtype, pd.StringDtype)):
        return pa.large_string()
    if isinstance(dtype, pd.DatetimeTZDtype):
        return pa.timestamp("ns", tz="UTC")
    return pa.from_numpy_dtype(dtype)


def _arrow_schema(kind: str) -> pa.Schema:
    return pa.schema([(c, _arrow_type(d)) for c, d in schema.dtypes(kind).items()])


def to_arrow(frame: pd.DataFrame, kind: str) -> pa.Table:
    """A canonical frame as the Arrow table the chunk cache keeps."""
    arrow_schema = _arrow_schema(kind)
    cols = []
    for f in arrow_schema:
        s = frame[f.name]
        if isinstance(s.dtype, pd.CategoricalDtype):
            s = s.astype(schema.STRING)
        cols.append(pa.array(s, type=f.type, from_pandas=True))
    return pa.Table.from_arrays(cols, schema=arrow_schema)


def _types_mapper(arrow_type: pa.DataType) -> Any:
    if arrow_type in (pa.large_string(), pa.string()):
        return schema.STRING
    return None


def assemble(spec: Listing, tables: list[pa.Table]) -> pd.DataFrame:
    """Join the chunks' tables (in time order) into the canonical frame."""
    if not tables:
        return schema.empty(spec.kind)
    table = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
    if table.num_rows == 0:
        return schema.empty(spec.kind)
    if not spec.one_chunk_per_id:
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


def _order(frame: pd.DataFrame, id_column: str) -> np.ndarray:
    """The positions that sort the rows by ``(timestamp, id)`` (ids ranked by Arrow)."""
    ids = pa.array(frame[id_column].astype(schema.STRING).array, type=pa.large_string())
    rank = np.empty(len(ids), dtype=np.int64)
    rank[np.asarray(pc.array_sort_indices(ids))] = np.arange(len(ids))
    return np.lexsort((rank, frame["timestamp"].array.asi8))


def _in_order(frame: pd.DataFrame, id_column: str) -> bool:
    """Whether the rows are sorted by ``(timestamp, id)`` already (ties compared by id)."""
    if len(frame) < 2:
        return True
    stamps = frame["timestamp"].array.asi8
    step = np.diff(stamps)
    if (step < 0).any():
        return False
    ties = np.flatnonzero(step == 0)
    if not len(ties):
        return True
    ids = frame[id_column].to_numpy(dtype=object)
    return bool(all(a <= b for a, b in zip(ids[ties], ids[ties + 1], strict=True)))


@dataclass(frozen=True)
class _Rejected:
    """A first page answered ``400``: perhaps the page size is too large."""

    error: BadRequestError
    limit: int


@dataclass
class _State:
    chunk: Chunk
    pager: ChunkPages | None = None
    records: list[dict[str, Any]] = field(default_factory=list)


class ListingRun:
    """One listing call's chunks, driven by the calling thread.

    Parameters
    ----------
    spec : Listing
    chunks : list of Chunk
        The chunks to fetch (those not read from the chunk cache).
    size : PageSize
        The page size of this operation (shared by the client's calls).
    post : callable
        The session's request path: ``post(operation, body, *, stats, check,
        keep, cancel)``.
    store : ChunkStore, optional
        Where finished chunks are kept.
    synthetic : callable
        Whether the data is synthetic (the session's flag, read when a
        chunk is stored, after its replies).
    cancel : threading.Event
        The call's cancel event (passed to every request).
    bar : Progress
        Advanced once per finished chunk.
    """

    def __init__(
        self,
        spec: Listing,
        chunks: list[Chunk],
        *,
        size: PageSize,
        post: Callable[..., Answer],
        store: ChunkStore | None,
        synthetic: Callable[[], bool],
        cancel: threading.Event,
        bar: Progress,
    ) -> None:
        self.spec = spec
        self.size = size
        self.post = post
        self.store = store
        self.synthetic = synthetic
        self.cancel = cancel
        self.bar = bar
        self.states = [_State(c) for c in chunks]
        self._by_index = {s.chunk.index: s for s in self.states}
        self.tables: dict[int, pa.Table] = {}
        self._held: list[_State] = []

    # ---------------------------------------------------------------- tasks

    def first_tasks(self) -> list[Task]:
        """The first pages: every chunk's, or only the first while the page size is unknown."""
        if not self.states:
            return []
        if self.size.known:
            return [self._start(s) for s in self.states]
        self._held = self.states[1:]
        return [self._start(self.states[0])]

    def _start(self, state: _State) -> Task:
        state.pager = ChunkPages(self.size)
        state.records = []
        assert state.pager.request is not None
        return self._page_task(state, state.pager.request)

    def _page_task(self, state: _State, request: PageRequest) -> Task:
        spec, chunk = self.spec, state.chunk
        body = {
            **spec.body,
            # a second early covers an exclusive start; ceil(end) covers either end
            "startDate": str(to_unix(chunk.start) - 1),
            "endDate": str(to_unix_ceil(chunk.end)),
            "page": request.page,
            "limit": request.limit,
        }
        # a settled chunk kept whole, parsed, is not kept as replies too
        keep = CachePolicy.page(
            settled=chunk.settled, final_known=spec.final is None, kept=chunk.key is not None
        )
        probing = request.page == 1 and not self.size.explicit

        def fetch(stats: RequestStats) -> list[dict[str, Any]] | _Rejected:
            try:
                answer = self.post(
                    spec.operation,
                    body,
                    stats=stats,
                    check=spec.check,
                    keep=keep,
                    cancel=self.cancel,
                )
            except BadRequestError as exc:
                if probing:
                    return _Rejected(exc, request.limit)
                raise
            return spec.records(answer.body)

        return Task(("page", state.chunk.index), fetch)

    def _finish_task(self, state: _State) -> Task:
        records, chunk = state.records, state.chunk
        state.records = []  # handed over to the worker

        def finish(stats: RequestStats) -> pa.Table:
            return self._finish(chunk, records)

        return Task(("finish", chunk.index), finish, cpu=True)

    # ---------------------------------------------------------------- results

    def on_result(self, task: Task, value: Any) -> list[Task]:
        """Turn a finished task into the next ones (calling thread only)."""
        what, index = task.tag
        state = self._by_index[index]
        if what == "finish":
            self.tables[index] = value
            self.bar.advance()
            return []
        if isinstance(value, _Rejected):
            if not self.size.rejected(value.limit):
                raise value.error
            return [self._start(state)]
        assert state.pager is not None
        state.records.extend(value)
        follow: list[Task] = []
        request = state.pager.answered(len(value))
        follow.append(
            self._finish_task(state) if request is None else self._page_task(state, request)
        )
        if self._held and self.size.known:
            held, self._held = self._held, []
            follow.extend(self._start(s) for s in held)
        return follow

    # ---------------------------------------------------------------- parsing

    def _finish(self, chunk: Chunk, records: list[dict[str, Any]]) -> pa.Table:
        """Parse, filter and sort one chunk's records; store the chunk under its key."""
        spec = self.spec
        frame = spec.parse(records)
        ts = frame["timestamp"]
        keep = (ts >= chunk.start) & (ts < chunk.end)
        if spec.keep is not None:
            keep &= spec.keep(frame)
        frame = frame.loc[keep.to_numpy()]
        frame = frame.drop_duplicates(spec.id_column, keep="first")
        if not _in_order(frame, spec.id_column):
            frame = frame.take(_order(frame, spec.id_column))
        table = to_arrow(frame, spec.kind)
        # a settled chunk is kept forever, so only if none of its rows can
        # still change (a pending transfer listed by its burn will be minted)
        lasting = not chunk.settled or spec.final is None or spec.final(frame)
        if chunk.key is not None and self.store is not None and lasting:
            self.store.put(chunk.key, table, synthetic=self.synthetic())
        return table


def fetch_listing(
    session: Session,
    call: Call,
    spec: Listing,
    start: pd.Timestamp,
    end: pd.Timestamp,
    key_parts: dict[str, Any],
) -> pd.DataFrame:
    """The frame of a listing call: stored chunks read, the others fetched, all joined."""
    chunks = []
    for i, (cs, ce) in enumerate(chunk_window(start, end, session.options.chunk)):
        settled = session.settled(ce)
        key = session.chunk_key(
            settled=settled, **key_parts, operation=spec.operation, kind=spec.kind,
            start=cs.isoformat(), end=ce.isoformat(),
        )  # fmt: skip
        chunks.append(Chunk(i, cs, ce, key, settled))
    store, max_age = session.chunks, session.policy.chunk_max_age
    # Stored chunks are read here, in order: a plain file read is faster
    # than a trip through the pool.
    tables: dict[int, pa.Table] = {}
    for c in chunks:
        if c.key is not None and store is not None:
            table = store.get(c.key, max_age=None if c.settled else max_age)
            if table is not None:
                tables[c.index] = table
                if ChunkStore.marked_synthetic(table):
                    session.note_synthetic()
    if tables:
        call.stats.add(cache_hits=len(tables))
        logger.debug(
            "%s: %d of %d chunks from the chunk cache", spec.operation, len(tables), len(chunks)
        )
    todo = [c for c in chunks if c.index not in tables]
    with call.progress(len(todo), spec.operation) as bar:
        state = ListingRun(
            spec, todo, size=session.page_size(spec.operation), post=session.post, store=store,
            synthetic=lambda: session.synthetic, cancel=call.cancel, bar=bar,
        )  # fmt: skip
        call.run(state.first_tasks(), state.on_result, bar)
    tables.update(state.tables)
    return assemble(spec, [tables[i] for i in sorted(tables)])


# ---------------------------------------------------------------------------
# the listing calls (the Client's methods of the same names)


def _not_held(session: Session, **asked: list[int] | None) -> None:
    """Warn when a filter names chains the service's data does not hold (when that is known)."""
    held = session.options.domains
    if held is None:
        return
    for name, domains in asked.items():
        missing = [d for d in domains or () if d not in held]
        if missing:
            names = ", ".join(chains.chain_name(d) for d in held)
            not_held = ", ".join(chains.chain_name(d) for d in missing)
            warnings.warn(
                CoverageWarning(
                    f"{name}={not_held}: the {session.source} holds {len(held)} chains "
                    f"({names}), not {not_held}: its 0 rows there say nothing about {not_held}"
                ),
                stacklevel=4,
            )


def mints(
    session: Session,
    start: TimeLike | None,
    end: TimeLike | None,
    *,
    source: int | str | Iterable[int | str] | None,
    destination: int | str | Iterable[int | str] | None,
) -> pd.DataFrame:
    """Mint transactions in ``[start, end)`` (see ``Client.mints``)."""
    src = chains.domains(source)
    dst = chains.domains(destination)
    start_ts, end_ts = session.window(start, end)
    _not_held(session, source=src, destination=dst)
    # no filter means every chain: the interface's own default is six EVM chains, so
    # the request always names the domains (every one in the registry when not given)
    body: dict[str, Any] = {
        "sourceDomain": json.dumps([str(d) for d in src or chains.all_domains()]),
        "destinationDomain": json.dumps([str(d) for d in dst or chains.all_domains()]),
    }
    decimals = session.options.decimals

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
    return session.call(
        "mints",
        {"start": start_ts, "end": end_ts, "source": src, "destination": dst},
        lambda call: fetch_listing(
            session, call, spec, start_ts, end_ts, {"src": src, "dst": dst}
        ),
    )


def received(
    session: Session, address: str, start: TimeLike | None, end: TimeLike | None
) -> pd.DataFrame:
    """Transactions received by ``address`` in ``[start, end)`` (see ``Client.received``)."""
    norm = addressing.normalize_address(address)
    wire = addressing.to_bytes32(norm)
    start_ts, end_ts = session.window(start, end)
    decimals = session.options.decimals
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
    return session.call(
        "received",
        {"address": norm, "start": start_ts, "end": end_ts},
        lambda call: fetch_listing(session, call, spec, start_ts, end_ts, {"address": norm}),
    )
