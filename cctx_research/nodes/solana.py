"""Solana's CCTP transactions from a JSON-RPC node into the sync dataset (``--chain solana=URL``).

The four programs of Circle's Solana CCTP (V1 and V2 MessageTransmitter
and TokenMessengerMinter, ids in
:mod:`cctx_research.ingest.solana.layouts`) are listed with
``getSignaturesForAddress`` and their transactions fetched with
``getTransaction`` (encoding ``json``, ``maxSupportedTransactionVersion``
0), all at commitment ``finalized`` (so nothing synced can be rolled back:
there is no tip to fetch again). The transactions are written as JSON Lines
under ``solana/transactions/`` (layout and crash rules in
``docs/datasets.md``), which ``load(format="solana")`` reads and
the dataset's ledger links with the EVM chains.

No ``MessageSent`` account is asked for (``getAccountInfo``): every field a
ledger side needs is in the transaction's events (a V1 burn's nonce is in
its ``DepositForBurn``; a V2 message's nonce is Circle's, which
``sync --iris`` asks of Iris), and the sender may already have closed the
account, so a request per burn would add nothing the link uses. Files that
do hold the accounts (``getProgramAccounts`` entries) are read by ``load``.

Each program keeps its own checkpoint in the dataset's manifest
(``_cctx.json``, ``state.chains.solana.programs.<program>``): ``newest`` (the newest signature of
its last complete run: the next run lists back to it with ``until``),
``parts`` and ``transactions`` written, and ``run`` while a run is under
way (see :mod:`cctx_research.nodes.solana_pages`). A run lists from the
newest finalized slot back to ``newest`` (or, on the first sync, to
``start``); a stopped run is resumed where its last written page ended,
then a fresh run follows.

``start`` and ``end`` are slots (whole numbers) or dates: a date is
compared with each signature's ``blockTime`` (listing stops at the first
signature older than ``start``; signatures at or after ``end`` are
skipped), so no slot needs to be looked up for it.

Examples
--------
>>> import cctx_research as cctx                                          # doctest: +SKIP
>>> cctx.sync("cctp/", {"solana": SOL_RPC, "base": BASE_RPC}, start="2026-11-01")  # doctest: +SKIP
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..ingest.solana.layouts import MESSAGE_TRANSMITTERS, TOKEN_MESSENGERS
from ..net import Concurrency, run
from ..times import to_timestamp
from .engine import ChainSync
from .options import SyncOptions
from .rpc import Rpc, RpcError
from .solana_pages import Bounds, Pages, Program
from .store import Dataset

__all__ = ["MAINNET_GENESIS", "PAGE_SIZE", "PROGRAMS", "SolanaSync", "sync_solana"]

logger = logging.getLogger(__name__)

_IDS = {"messenger": {v: k for k, v in TOKEN_MESSENGERS.items()},
        "transmitter": {v: k for k, v in MESSAGE_TRANSMITTERS.items()}}  # fmt: skip
PROGRAMS = {f"v{v}-{kind}": _IDS[kind][v] for v in (1, 2) for kind in ("messenger", "transmitter")}
"""Name in the dataset -> program id (TokenMessengerMinter and MessageTransmitter, V1 and V2)."""

MAINNET_GENESIS = "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d"
"""``getGenesisHash`` of Solana mainnet-beta, where the registry's programs are Circle's CCTP."""

_CLUSTERS = {"EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG": "devnet",
             "4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY": "testnet"}  # fmt: skip

PAGE_SIZE = 1000
"""Signatures asked per ``getSignaturesForAddress`` (the most a node gives)."""

_SKIPPED = {-32004, -32007, -32009}
"""Codes of a slot without a block: not available, skipped, skipped in long-term storage."""


@dataclass
class SolanaSync(ChainSync):
    """What a Solana sync did; ``first``/``last`` are slots, ``logs`` the transactions written."""

    signatures: int = 0
    failed: int = 0
    held: int = 0

    def line(self) -> str:
        if self.up_to_date:
            return f"{self.chain} ({self.host}): up to date at slot {self.last:,}"
        rate = self.logs / self.seconds if self.seconds else 0.0
        first = f"{self.first:,}" if self.first is not None else "?"
        return (
            f"{self.chain} ({self.host}): slots {first}-{self.last:,}, {self.logs:,} "
            f"transactions ({self.signatures:,} signatures listed: {self.failed:,} failed, "
            f"{self.held:,} held already), {self.parts} parts, {self.requests:,} requests, "
            f"{self.seconds:.1f} s ({rate:,.0f} tx/s)"
        )


def _bound(value: Any, what: str) -> dict[str, int]:
    """``{"slot": n}`` or ``{"time": unix seconds}`` from a slot number or a date."""
    if isinstance(value, bool):
        raise ValueError(f"{what} must be a slot number or a date, got {value!r}")
    if isinstance(value, int) or (isinstance(value, str) and value.strip().isdigit()):
        slot = int(value)
        if slot < 0:
            raise ValueError(f"{what} cannot be a negative slot, got {slot}")
        return {"slot": slot}
    try:
        when = to_timestamp(value, name=what)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{what} must be a slot number or a date (e.g. 2026-11-01), got {value!r}"
        ) from exc
    return {"time": int(when.value // 1_000_000_000)}


def _shown(bound: dict[str, int]) -> str:
    """A bound as a reader would write it: ``slot 1,234`` or a UTC time."""
    if "slot" in bound:
        return f"slot {bound['slot']:,}"
    return f"{dt.datetime.fromtimestamp(bound['time'], dt.timezone.utc):%Y-%m-%d %H:%M:%S} UTC"


def _floor(state: dict[str, Any], asked: dict[str, int] | None, start: Any, *, head: int,
           where: str) -> dict[str, int]:  # fmt: skip
    """Where the dataset's Solana history starts: the first sync's start, checked."""
    floor = state.get("floor")
    if floor is None:
        if asked is None:
            raise ValueError("the first sync of solana needs start= (a slot or a date, e.g. "
                             "--from 2026-11-01)")  # fmt: skip
        if asked.get("slot", -1) > head:
            # else the run records a floor past the head, says "up to date", and refuses
            # every later (right) start as earlier than that floor
            raise ValueError(
                f"start={start!r} is after the node's finalized slot {head:,}; pass a slot "
                "at or before it, or a date"
            )
        state["floor"] = asked
        return asked
    if asked is not None and _earlier(asked, floor):
        raise ValueError(
            f"solana in {where} starts at {_shown(floor)}; start={start!r} is earlier. Sync "
            "earlier slots into a new directory"
        )
    return floor


def _earlier(asked: dict[str, int], floor: dict[str, int]) -> bool:
    """Whether a start asks for more than the first sync's floor (same kind only)."""
    kind = next(iter(asked))
    return kind in floor and asked[kind] < floor[kind]


def _block_time(rpc: Rpc, slot: int, step: int) -> int | None:
    """The time of ``slot``, or of the next slot with a block (``step`` +1 or -1); None if none."""
    for i in range(32):
        try:
            found = rpc.call("getBlockTime", [slot + i * step])
        except RpcError as exc:
            if exc.code in _SKIPPED:
                continue  # a skipped slot has no time: the next one does
            logger.debug("solana: no time for slot %d: %s", slot, exc)
            return None
        return found if isinstance(found, int) else None
    return None


def _check_cluster(rpc: Rpc) -> None:
    genesis = rpc.call("getGenesisHash")
    if genesis != MAINNET_GENESIS:
        cluster = _CLUSTERS.get(genesis, "not mainnet-beta")
        raise ValueError(
            f"the node for solana ({rpc.host}) serves a cluster whose genesis hash is "
            f"{genesis!r} ({cluster}); the CCTP programs synced are mainnet-beta's: pass a "
            "mainnet-beta node URL"
        )


def _head(rpc: Rpc) -> int:
    head = rpc.call("getSlot", [{"commitment": "finalized"}])
    if isinstance(head, bool) or not isinstance(head, int):
        raise ValueError(f"{rpc.host} answered getSlot with {head!r}, not a slot number")
    return head


def sync_solana(
    url: str,
    root: str | Path,
    options: SyncOptions,
    *,
    state: dict[str, Any],
    save: Callable[[], None] | None = None,
    page_size: int = PAGE_SIZE,
) -> SolanaSync:
    """Sync Solana's CCTP transactions from the node at ``url`` into the dataset at ``root``.

    Parameters
    ----------
    url : str
        The node's JSON-RPC URL (may hold a key: never shown or stored).
    root : path
        The dataset directory.
    options : SyncOptions
        The run's options, as for the EVM chains: ``start`` and ``end`` are
        slots or dates (``start`` is needed on the first sync); ``progress``
        a bar counting transactions; ``transport`` the wire (tests);
        ``timeout``, ``retries`` and ``max_workers`` the seconds per
        request, the retries of a transient failure (honouring
        ``Retry-After``) and the most requests in flight. ``confirmations``
        and ``range_blocks`` do not apply: Solana is synced finalized only.
    state : dict
        The checkpoint entry for Solana in the manifest's state (updated in place).
    save : callable, optional
        Writes the whole state file; called after every part.
    page_size : int
        Signatures asked per ``getSignaturesForAddress`` (1..1000).

    Returns
    -------
    SolanaSync

    Raises
    ------
    ValueError
        Bad arguments, a node of another cluster, a first sync without ``start``.
    DataError
        The node lacks history it listed, or the checkpoint's signature.
    """
    if isinstance(page_size, bool) or not isinstance(page_size, int) or not 1 <= page_size <= 1000:
        raise ValueError(f"page_size must be a whole number from 1 to 1000, got {page_size!r}")
    dataset = Dataset(root)
    save = save or (lambda: None)
    start, end = options.start, options.end
    asked_start = None if start is None else _bound(start, "start")
    asked_end = None if end is None else _bound(end, "end")
    rpc = options.rpc(url)
    started = time.perf_counter()
    try:
        _check_cluster(rpc)
        head = _head(rpc)
        floor = _floor(state, asked_start, start, head=head, where=f"{dataset.root}")
        ceiling = {"ceiling_slot": min(head, asked_end.get("slot", head)) if asked_end else head}
        if asked_end and "time" in asked_end:
            ceiling["ceiling_time"] = asked_end["time"]
        state["host"] = rpc.host
        programs = _programs(dataset, state, floor, ceiling)
        result = SolanaSync("solana", rpc.host, None, ceiling["ceiling_slot"])
        if not programs:
            result.up_to_date = True
            return result
        runner = _Runner(rpc, dataset, state, programs, floor, ceiling, save, page_size)
        runner.go(max_workers=options.max_workers, progress=options.progress, result=result)
        _edges(rpc, state, floor, ceiling)
        state["synced_at"] = int(time.time())
        save()
        result.seconds = time.perf_counter() - started
        return result
    finally:
        rpc.close()


def _programs(dataset: Dataset, state: dict[str, Any], floor: dict[str, int],
              ceiling: dict[str, int]) -> list[Program]:  # fmt: skip
    """Each program with its run (resumed, or fresh if anything is new); none: up to date."""
    entries = state.setdefault("programs", {})
    out = []
    for tag, address in PROGRAMS.items():
        entry = entries.setdefault(tag, {"newest": None, "parts": 0, "transactions": 0,
                                         "run": None})  # fmt: skip
        # parts past the checkpoint were written by a run that stopped before counting them
        dataset.drop_solana_leftovers(tag, int(entry["parts"]))
        if entry.get("run") is None and not _fresh_run(entry, floor, ceiling):
            continue
        out.append(Program(tag, address, entry))
    return out


def _fresh_run(entry: dict[str, Any], floor: dict[str, int], ceiling: dict[str, int]) -> bool:
    """Set a new run, from the ceiling back to the last run's newest; False if nothing is new."""
    newest = entry.get("newest")
    if newest is not None and newest["slot"] >= ceiling["ceiling_slot"]:
        return False
    if newest is not None and "ceiling_time" in ceiling and newest.get("time") is not None and (
        newest["time"] >= ceiling["ceiling_time"]
    ):
        return False
    bounds = Bounds(floor_slot=floor.get("slot"), floor_time=floor.get("time"), **ceiling)
    entry["run"] = {"top": None, "cursor": None, "until": newest, "bounds": bounds.as_dict()}
    return True


class _Runner:
    """One invocation's runs of every program on net's runner."""

    def __init__(self, rpc: Rpc, dataset: Dataset, state: dict[str, Any],
                 programs: list[Program], floor: dict[str, int], ceiling: dict[str, int],
                 save: Callable[[], None], page_size: int) -> None:  # fmt: skip
        self.rpc, self.dataset, self.state, self.programs = rpc, dataset, state, programs
        self.floor, self.ceiling, self.save, self.page_size = floor, ceiling, save, page_size

    def _held(self) -> set[str]:
        """Signatures already stored where this run's windows reach (fetched once only)."""
        lows = []
        for program in self.programs:
            until = program.run.get("until")
            lows.append(until["slot"] if until else self.floor.get("slot", 0))
        return self.dataset.solana_signatures(min(lows))

    def write(self, program: Program, low: int, high: int, lines: list[bytes]) -> None:
        entry = program.entry
        self.dataset.write_solana_part(program.tag, int(entry["parts"]), low, high, lines)
        entry["parts"] = int(entry["parts"]) + 1
        entry["transactions"] = int(entry.get("transactions", 0)) + len(lines)

    def finish(self, program: Program) -> bool:
        entry, run_ = program.entry, program.run
        if run_.get("top") is not None:
            entry["newest"] = run_["top"]
        if run_.get("oldest") is not None:
            entry["oldest"] = min(run_["oldest"], entry.get("oldest", run_["oldest"]))
        entry["tip"] = run_["bounds"]["ceiling_slot"]
        entry["run"] = None
        # a resumed run ends where it was started; what came since is a fresh run
        return entry["tip"] < self.ceiling["ceiling_slot"] and _fresh_run(
            entry, self.floor, self.ceiling
        )

    def checkpoint(self) -> None:
        programs = self.state["programs"].values()
        tips = [p.get("tip") for p in programs]
        if all(t is not None for t in tips):
            self.state["tip"] = min(tips)  # type: ignore[type-var]
        if "slot" in self.floor:
            self.state["first"] = self.floor["slot"]
        elif any(p.get("oldest") is not None for p in programs):
            self.state["first"] = min(p["oldest"] for p in programs if p.get("oldest") is not None)
        self.save()

    def go(self, *, max_workers: int, progress: bool, result: SolanaSync) -> None:
        cancel = threading.Event()
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(unit="tx", unit_scale=True, desc="solana", leave=False)
        pages = Pages(self.rpc, self.programs, self._held(), write=self.write,
                      checkpoint=self.checkpoint, finish=self.finish, page_size=self.page_size,
                      cancel=cancel, bar=bar)  # fmt: skip
        concurrency = Concurrency(max_workers, start=min(4, max_workers))
        try:
            run(pages.first_tasks(), pages.on_result, stats=result.stats, concurrency=concurrency,
                cancel=cancel, abort=self.rpc.sender.abort, resume=self.rpc.sender.resume)
        finally:
            if bar is not None:
                bar.close()
            counts = pages.counts
            result.first = counts.low
            result.logs, result.parts = counts.transactions, counts.parts
            result.signatures, result.failed, result.held = (
                counts.signatures, counts.failed, counts.held)  # fmt: skip
            result.requests = result.stats.requests
            result.up_to_date = counts.signatures == 0  # the node listed nothing new


def _edges(rpc: Rpc, state: dict[str, Any], floor: dict[str, int],
           ceiling: dict[str, int]) -> None:  # fmt: skip
    """The times of the first and last slots covered, for ``sync --status``."""
    if state.get("first_time") is None:
        state["first_time"] = floor.get("time") if "time" in floor else _block_time(
            rpc, floor["slot"], +1)
    tip = state.get("tip")
    if tip is not None:
        when = _block_time(rpc, tip, -1)
        if "ceiling_time" in ceiling and when is not None:
            when = min(when, ceiling["ceiling_time"])
        state["tip_time"] = when
