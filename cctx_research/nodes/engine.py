"""One chain's sync: CCTP logs from a node into the dataset, resumable and reorg-safe.

:func:`sync_chain` asks ``eth_getLogs`` for every CCTP event of the chain's
V1 and V2 contracts (addresses from the registry, topics from
:mod:`cctx_research.ingest.evm.events`), in segments of blocks, all on one call
of the toolkit's runner (:func:`cctx_research.net.run`): the same
adaptive concurrency, retries, ``Retry-After`` and Ctrl-C behaviour as the
interface client. The next segment's ranges start while the last ranges of
the one before are still running, so no slot idles at a segment's end. A
range a node refuses as too large (:mod:`~cctx_research.nodes.ranges`) is
split and the endpoint's :class:`~cctx_research.nodes.ranges.Sizer`
remembers it. Block times come from the logs' ``blockTimestamp`` when the
node gives it, else from headers asked in JSON-RPC batches of
:data:`~cctx_research.nodes.blocks.BATCH`, gathered over a segment's ranges
and asked beside the ranges still running; the times of the coverage's two
ends are asked at the start, beside the first ranges.

Each finished segment is written as one part and only then checkpointed
(:mod:`~cctx_research.nodes.store`), in block order (a segment finished
before an earlier one waits for it): a stop loses at most the segments
under way. Blocks within ``confirmations`` of the head go to tip parts, fetched
again (and replaced) by the next run, so a reorg there is healed.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from .. import chains, errors
from ..ingest.evm import events
from ..net import Concurrency, RequestStats, Task, run
from . import blocks
from .ranges import Sizer, too_large
from .rpc import Rpc, RpcError
from .store import LOG_SCHEMA, Dataset

__all__ = ["DEFAULT_CONFIRMATIONS", "ChainSync", "contracts_of", "sync_chain"]

logger = logging.getLogger(__name__)

DEFAULT_CONFIRMATIONS = 64
"""Blocks behind the head treated as reorg-prone (Ethereum finalises in two epochs, 64 slots)."""

SEGMENT_RANGES = 16
"""Ranges (of the endpoint's current size) in one segment: one part, one checkpoint."""

TOPICS = sorted({spec.topic0 for spec in events.EVENTS})
"""topic0 of every CCTP event the decoder reads (V1 and V2)."""


def contracts_of(chain: str) -> list[str]:
    """The addresses of a chain's CCTP contracts that emit events (V1 and V2)."""
    domain = chains.domain(chain)
    found = []
    for version in (1, 2):
        c = chains.contracts(domain, version)
        if c is None:
            continue
        found += [a for a in (c.token_messenger, c.message_transmitter, c.token_minter) if a]
    if not found:
        raise ValueError(f"the registry knows no CCTP contract on {chain!r}")
    return sorted(set(found))


LOCAL_DOMAIN = "0x8d3638f4"
"""Call data of ``localDomain()`` (the first 4 bytes of keccak256 of the signature)."""


def domain_calls(chain: str) -> list[tuple[int, str, tuple[str, list[Any]]]]:
    """``(version, transmitter, call)``: the ``localDomain()`` call to each MessageTransmitter."""
    calls = []
    for version in (1, 2):
        contracts = chains.contracts(chains.domain(chain), version)
        if contracts is None or not contracts.message_transmitter:
            continue
        to = contracts.message_transmitter
        calls.append((version, to, ("eth_call", [{"to": to, "data": LOCAL_DOMAIN}, "latest"])))
    return calls


def check_domain(rpc: Rpc, chain: str, answers: list[Any] | None = None) -> int:
    """Ask the chain's MessageTransmitters their ``localDomain()``; how many answered.

    ``answers`` are the replies to :func:`domain_calls`' calls when the
    caller asked them already (``sync`` asks them in one batch with the chain
    id and the head: one round trip), an error as its :class:`RpcError`;
    otherwise they are asked here, in one batch.

    Raises
    ------
    ValueError
        A transmitter answers another domain than the registry's for ``chain``
        (the URL is another chain's node, or a fork of it).

    A transmitter without code at the address, or one that reverts, is not
    counted (a node whose state is pruned cannot answer ``eth_call``).
    """
    expected = chains.domain(chain)
    checks = domain_calls(chain)
    if answers is None:
        answers = rpc.batch([call for *_, call in checks], errors_as_results=True)
    answered = 0
    for (version, address, _), result in zip(checks, answers, strict=True):
        if isinstance(result, RpcError):
            logger.debug("%s: localDomain() of %s not answered: %s", chain, address, result)
            continue
        if not isinstance(result, str) or len(result) < 66:
            continue  # no contract there
        said = int(result[2:66], 16)
        if said != expected:
            name = chains.chain_name(said)
            raise ValueError(
                f"the node for {chain} ({rpc.host}): its V{version} MessageTransmitter {address} "
                f"says localDomain {said} ({name}), not {chain}'s {expected}; pass {chain}'s "
                "node URL"
            )
        answered += 1
    return answered


@dataclass
class ChainSync:
    """What one chain's sync did (one INFO line: :meth:`line`)."""

    chain: str
    host: str
    first: int | None = None
    last: int | None = None
    logs: int = 0
    parts: int = 0
    requests: int = 0
    splits: int = 0
    seconds: float = 0.0
    range: int = 0
    up_to_date: bool = False
    stats: RequestStats = field(default_factory=RequestStats)

    def line(self) -> str:
        if self.up_to_date:
            return f"{self.chain} ({self.host}): up to date at block {self.last:,}"
        blocks_n = (self.last - self.first + 1) if self.first is not None and self.last else 0
        rate = self.logs / self.seconds if self.seconds else 0.0
        return (
            f"{self.chain} ({self.host}): blocks {self.first:,}-{self.last:,} ({blocks_n:,}), "
            f"{self.logs:,} logs, {self.requests:,} requests, {self.splits} ranges split, "
            f"{self.seconds:.1f} s ({rate:,.0f} logs/s), range now {self.range:,} blocks"
        )


def _hex_bytes(value: Any) -> bytes | None:
    if value is None:
        return None
    return bytes.fromhex(value[2:] if value.startswith("0x") else value)


def _table(logs: list[dict[str, Any]], chain_id: int, block_times: dict[int, int]) -> pa.Table:
    """Logs of ``eth_getLogs`` as cryo's columns."""
    rows: dict[str, list[Any]] = {name: [] for name in LOG_SCHEMA.names}
    for log in logs:
        topics = list(log.get("topics") or [])
        data = _hex_bytes(log.get("data") or "0x") or b""
        number = int(log["blockNumber"], 16)
        rows["block_number"].append(number)
        rows["transaction_index"].append(int(log.get("transactionIndex") or "0x0", 16))
        rows["log_index"].append(int(log["logIndex"], 16))
        rows["transaction_hash"].append(_hex_bytes(log["transactionHash"]))
        rows["address"].append(_hex_bytes(log["address"]))
        for i in range(4):
            rows[f"topic{i}"].append(_hex_bytes(topics[i]) if i < len(topics) else None)
        rows["data"].append(data)
        rows["n_data_bytes"].append(len(data))
        rows["chain_id"].append(chain_id)
        rows["block_timestamp"].append(block_times[number])
    return pa.table(rows, schema=LOG_SCHEMA)


@dataclass
class _Segment:
    """Blocks ``lo..hi``: one part and one checkpoint once its ranges and headers are in."""

    lo: int
    hi: int
    open: int = 0  # its tasks not yet settled (ranges and header batches)
    ranges: int = 0  # its ranges not yet settled
    logs: list[dict[str, Any]] = field(default_factory=list)
    times: dict[int, int] = field(default_factory=dict)
    wanted: set[int] = field(default_factory=set)  # blocks whose times are still to ask
    splits: int = 0

    @property
    def done(self) -> bool:
        return self.open == 0


class _Fetch:
    """Every segment's ranges on one runner call; parts handed on in block order.

    The next segment's ranges are planned (at the endpoint's current range
    size) as soon as no planned task waits for a slot, so the tail of one
    segment overlaps the next; a segment is handed to ``finished`` once it
    and every segment before it are complete. Block times the logs do not
    carry are asked in batches of :data:`blocks.BATCH` headers, gathered
    over a segment's ranges.
    """

    def __init__(self, rpc: Rpc, addresses: list[str], sizer: Sizer, cancel: threading.Event,
                 concurrency: Concurrency, first: int, last: int, *, edges: set[int],
                 finished: Callable[[_Segment], None], ahead: int = 3):  # fmt: skip
        self.rpc, self.addresses, self.sizer, self.cancel = rpc, addresses, sizer, cancel
        self.concurrency, self.finished, self.ahead = concurrency, finished, ahead
        self.next_lo, self.last = first, last
        self.segments: collections.deque[_Segment] = collections.deque()
        self.open = 0  # tasks planned and not yet settled, all segments
        self.planned = False  # whether a segment was planned
        self.edges = edges  # blocks whose times the caller wants besides (the coverage's ends)
        self.edge_times: dict[int, int] = {}

    # ------------------------------------------------------------------ tasks

    def _headers(self, segment: _Segment | None, numbers: list[int]) -> Task:
        """The times of blocks whose logs carry none: one batch, beside the other ranges."""

        def fn(stats: RequestStats) -> Any:
            return blocks.times(self.rpc, numbers, stats=stats, cancel=self.cancel)

        if segment is not None:
            segment.open += 1
        self.open += 1
        return Task(("headers", segment), fn)

    def _range(self, segment: _Segment, lo: int, hi: int) -> Task:
        def fn(stats: RequestStats) -> Any:
            query = {"fromBlock": hex(lo), "toBlock": hex(hi), "address": self.addresses,
                     "topics": [TOPICS]}  # fmt: skip
            try:
                return self.rpc.call("eth_getLogs", [query], stats=stats, cancel=self.cancel)
            except (RpcError, errors.ServerError) as exc:
                # too large by the node's words, or any node error on a range above one block
                # (a timeout on a dense range); a refused single block is a real error
                dropped = isinstance(exc, errors.ServerError) and exc.status is None
                if hi > lo and not dropped:
                    return exc
                raise

        segment.open += 1
        segment.ranges += 1
        self.open += 1
        return Task(("logs", segment, lo, hi), fn)

    def start(self) -> list[Task]:
        """The first tasks: the edges' headers, and the first segments' ranges."""
        tasks = [self._headers(None, sorted(self.edges))] if self.edges else []
        return tasks + self._plan()

    def _plan(self) -> list[Task]:
        """The next segments' ranges, while a slot is free and no planned task waits for one.

        The runner puts follow-ups before the tasks still queued: planned only
        when none is queued, a later segment never runs before an earlier one's
        ranges (so a stop leaves the earlier ones complete, and checkpointed).
        The first segment is one round of ranges: the node's limit, if it
        has one, is learnt from it, and the segments after it are planned
        at the range the node takes (at a node that caps ranges at 2,000
        blocks, 16 ranges of 10,000 would make a first segment of 80
        requests, and 16 refusals).
        """
        tasks: list[Task] = []
        while (self.next_lo <= self.last and len(self.segments) < self.ahead
               and (self.open < self.concurrency.current or not self.segments)):  # fmt: skip
            step = self.sizer.size
            ranges = SEGMENT_RANGES if self.planned else self.concurrency.current
            self.planned = True
            lo, hi = self.next_lo, min(self.last, self.next_lo + step * ranges - 1)
            segment = _Segment(lo, hi)
            self.segments.append(segment)
            self.next_lo = hi + 1
            tasks += [self._range(segment, a, min(a + step - 1, hi))
                      for a in range(lo, hi + 1, step)]  # fmt: skip
        return tasks

    # ------------------------------------------------------------------ results

    def on_result(self, task: Task, value: Any) -> list[Task]:
        self.open -= 1
        kind, segment = task.tag[0], task.tag[1]
        follow: list[Task] = []
        if segment is None:  # the edges' headers
            self.edge_times.update(value)
        elif kind == "headers":
            segment.times.update(value)
            segment.open -= 1
        else:
            follow = self._logs(segment, task.tag[2], task.tag[3], value)
            segment.open -= 1
            segment.ranges -= 1
            if segment.ranges == 0:  # its last range is in: ask the times still missing
                follow += self._ask(segment, flush=True)
        while self.segments and self.segments[0].done:
            self.finished(self.segments.popleft())
        return follow + self._plan()

    def _logs(self, segment: _Segment, lo: int, hi: int, value: Any) -> list[Task]:
        if isinstance(value, Exception):
            self.sizer.failed(hi - lo + 1, value.message)
            segment.splits += 1
            logger.debug("%s: blocks %d-%d refused (%s): split", self.rpc.host, lo, hi,
                         "too large" if too_large(value.message) else "error")  # fmt: skip
            step = min(self.sizer.size, (hi - lo + 2) // 2)
            return [self._range(segment, a, min(a + step - 1, hi)) for a in range(lo, hi + 1, step)]
        if not isinstance(value, list):
            raise errors.ResponseSchemaError(
                f"{self.rpc.host} answered eth_getLogs with {type(value).__name__}, not a list",
                operation="eth_getLogs",
            )
        self.sizer.succeeded(hi - lo + 1)
        live = [g for g in value if not g.get("removed")]
        segment.logs.extend(live)
        for log in live:
            number = int(log["blockNumber"], 16)
            if log.get("blockTimestamp"):
                segment.times[number] = int(log["blockTimestamp"], 16)
            elif number not in segment.times:
                segment.wanted.add(number)
        return self._ask(segment, flush=False)

    def _ask(self, segment: _Segment, *, flush: bool) -> list[Task]:
        """Header batches for the segment's blocks without a time: full ones, or all (flush)."""
        wanted = sorted(segment.wanted - set(segment.times))
        tasks = []
        while len(wanted) >= blocks.BATCH or (flush and wanted):
            batch, wanted = wanted[: blocks.BATCH], wanted[blocks.BATCH :]
            tasks.append(self._headers(segment, batch))
        segment.wanted = set(wanted)
        return tasks


def sync_chain(
    dataset: Dataset,
    state: dict[str, Any],
    chain: str,
    rpc: Rpc,
    first: int,
    last: int,
    safe_line: int,
    *,
    sizer: Sizer,
    max_workers: int = 8,
    bar: Any = None,
) -> ChainSync:
    """Fetch blocks ``first..last`` of ``chain`` into ``dataset``, checkpointing ``state``.

    Blocks up to ``safe_line`` are final; later ones go to tip parts.
    ``state`` is the whole state file (saved after every part), and gets the
    times of the chain's first block and of ``last`` (its coverage).
    """
    entry = state["chains"][chain]
    chain_id = int(entry["chain_id"])
    result = ChainSync(chain, rpc.host, first, last)
    started = time.perf_counter()

    def finished(segment: _Segment) -> None:
        """Write one complete segment (final part, then tip part), then its checkpoint."""
        lo, hi = segment.lo, segment.hi
        logs = sorted(segment.logs, key=lambda g: (int(g["blockNumber"], 16),
                                                   int(g["logIndex"], 16)))  # fmt: skip
        table = _table(logs, chain_id, segment.times)
        if lo <= safe_line:
            final_hi = min(hi, safe_line)
            numbers = table.column("block_number").to_numpy()
            keep = numbers <= final_hi
            dataset.write_part(chain, lo, final_hi, table.filter(pa.array(keep)), tip=False)
            entry["safe"] = final_hi
            result.parts += 1
            if final_hi < hi:
                dataset.write_part(chain, final_hi + 1, hi, table.filter(pa.array(~keep)),
                                   tip=True)  # fmt: skip
                result.parts += 1
        else:
            dataset.write_part(chain, lo, hi, table, tip=True)
            result.parts += 1
        entry["tip"] = hi
        entry["range"] = sizer.size
        if entry.get("first") is None or lo < entry["first"]:
            entry["first"] = lo
        dataset.save_state(state)
        result.logs += len(logs)
        result.splits += segment.splits
        if bar is not None:
            bar.update(hi - lo + 1)

    cancel = threading.Event()
    concurrency = Concurrency(max_workers, start=min(4, max_workers))
    edges = {int(entry.get("first", first)), last}
    fetch = _Fetch(rpc, contracts_of(chain), sizer, cancel, concurrency, first, last,
                   edges=edges, finished=finished)  # fmt: skip
    run(fetch.start(), fetch.on_result, stats=result.stats, concurrency=concurrency,
        cancel=cancel, abort=rpc.sender.abort, resume=rpc.sender.resume)  # fmt: skip
    entry["first_time"] = fetch.edge_times[int(entry["first"])]  # asked beside the ranges
    entry["tip_time"] = fetch.edge_times[last]
    dataset.save_state(state)
    result.requests = result.stats.requests
    result.seconds = time.perf_counter() - started
    result.range = sizer.size
    return result
