"""One chain's sync: CCTP logs from a node into the dataset, resumable and reorg-safe.

:func:`sync_chain` asks ``eth_getLogs`` for every CCTP event of the chain's
V1 and V2 contracts (addresses from the registry, topics from
:mod:`cctx_research.ingest.events`), in segments of blocks. A segment's
ranges run on the client's runner (:func:`cctx_research.client.runner.run`):
the same adaptive concurrency, retries, ``Retry-After`` and Ctrl-C
behaviour as the interface client. A range a node refuses as too large
(:mod:`~cctx_research.sync.ranges`) is split in two and the endpoint's
:class:`~cctx_research.sync.ranges.Sizer` remembers it. Block times come
from the logs' ``blockTimestamp`` when the node gives it, else from headers
asked in JSON-RPC batches as soon as a range's logs are in, beside the
ranges still running.

Each finished segment is written as one part and only then checkpointed
(:mod:`~cctx_research.sync.store`): a stop loses at most the segment under
way. Blocks within ``confirmations`` of the head go to tip parts, fetched
again (and replaced) by the next run, so a reorg there is healed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from .. import chains, errors
from ..client.http import RequestStats
from ..client.runner import Concurrency, Task, run
from ..ingest import events
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


def check_domain(rpc: Rpc, chain: str) -> int:
    """Ask the chain's MessageTransmitters their ``localDomain()``; how many answered.

    Raises
    ------
    ValueError
        A transmitter answers another domain than the registry's for ``chain``
        (the URL is another chain's node, or a fork of it).

    A transmitter without code at the address, or one that reverts, is not
    counted (a node whose state is pruned cannot answer ``eth_call``).
    """
    expected = chains.domain(chain)
    answered = 0
    for version in (1, 2):
        contracts = chains.contracts(expected, version)
        if contracts is None or not contracts.message_transmitter:
            continue
        address = contracts.message_transmitter
        try:
            result = rpc.call("eth_call", [{"to": address, "data": LOCAL_DOMAIN}, "latest"])
        except RpcError as exc:
            logger.debug("%s: localDomain() of %s not answered: %s", chain, address, exc)
            continue
        if not isinstance(result, str) or len(result) < 66:
            continue  # no contract there
        said = int(result[2:66], 16)
        if said != expected:
            name = chains.chain_name(said) if chains.info(said) is not None else "unknown"
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


class _Fetch:
    """The ranges of one segment on the runner; splits what the node refuses."""

    def __init__(self, rpc: Rpc, addresses: list[str], sizer: Sizer, cancel: threading.Event):
        self.rpc, self.addresses, self.sizer, self.cancel = rpc, addresses, sizer, cancel
        self.logs: list[dict[str, Any]] = []
        self.times: dict[int, int] = {}
        self.splits = 0

    def headers(self, numbers: list[int]) -> Task:
        """The times of blocks whose logs carry none: one batch, beside the other ranges."""

        def fn(stats: RequestStats) -> Any:
            return blocks.times(self.rpc, numbers, stats=stats, cancel=self.cancel)

        return Task(("headers", len(numbers)), fn)

    def task(self, lo: int, hi: int) -> Task:
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

        return Task((lo, hi), fn)

    def on_result(self, task: Task, value: Any) -> list[Task]:
        if task.tag[0] == "headers":
            self.times.update(value)
            return []
        lo, hi = task.tag
        if isinstance(value, Exception):
            self.sizer.failed(hi - lo + 1, value.message)
            self.splits += 1
            logger.debug("%s: blocks %d-%d refused (%s): split", self.rpc.host, lo, hi,
                         "too large" if too_large(value.message) else "error")  # fmt: skip
            step = min(self.sizer.size, (hi - lo + 2) // 2)
            return [self.task(a, min(a + step - 1, hi)) for a in range(lo, hi + 1, step)]
        if not isinstance(value, list):
            raise errors.ResponseSchemaError(
                f"{self.rpc.host} answered eth_getLogs with {type(value).__name__}, not a list",
                operation="eth_getLogs",
            )
        self.sizer.succeeded(hi - lo + 1)
        self.logs.extend(value)
        live = [g for g in value if not g.get("removed")]
        for log in live:
            if log.get("blockTimestamp"):
                self.times[int(log["blockNumber"], 16)] = int(log["blockTimestamp"], 16)
        missing = sorted({int(g["blockNumber"], 16) for g in live} - set(self.times))
        return [
            self.headers(missing[i : i + blocks.BATCH])
            for i in range(0, len(missing), blocks.BATCH)
        ]


def _segments(first: int, last: int, size: Any) -> Iterator[tuple[int, int]]:
    lo = first
    while lo <= last:
        hi = min(last, lo + size() * SEGMENT_RANGES - 1)
        yield lo, hi
        lo = hi + 1


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
    ``state`` is the whole state file (saved after every part).
    """
    entry = state["chains"][chain]
    chain_id = int(entry["chain_id"])
    addresses = contracts_of(chain)
    result = ChainSync(chain, rpc.host, first, last)
    started = time.perf_counter()
    concurrency = Concurrency(max_workers, start=min(4, max_workers))
    for lo, hi in _segments(first, last, lambda: sizer.size):
        cancel = threading.Event()
        fetch = _Fetch(rpc, addresses, sizer, cancel)
        step = sizer.size
        tasks = [fetch.task(a, min(a + step - 1, hi)) for a in range(lo, hi + 1, step)]
        run(tasks, fetch.on_result, stats=result.stats, concurrency=concurrency, cancel=cancel,
            abort=rpc.sender.abort, resume=rpc.sender.resume)  # fmt: skip
        logs = [log for log in fetch.logs if not log.get("removed")]
        block_times = fetch.times
        logs.sort(key=lambda g: (int(g["blockNumber"], 16), int(g["logIndex"], 16)))
        table = _table(logs, chain_id, block_times)
        # the final part (up to the safe line), then the tip part, then the checkpoint
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
        result.splits += fetch.splits
        if bar is not None:
            bar.update(hi - lo + 1)
    result.requests = result.stats.requests
    result.seconds = time.perf_counter() - started
    result.range = sizer.size
    return result
