"""Solana's CCTP programs paged on the toolkit's runner: signatures, then their transactions.

One :class:`Pages` runs every program of a sync at once on
:func:`cctx_research.net.run` (the adaptive concurrency, retries,
``Retry-After`` and Ctrl-C behaviour of the EVM sync). For each program it
asks ``getSignaturesForAddress`` page after page, newest first (``before``
the last signature of the page before, ``until`` the newest signature of
the last run), and for each page ``getTransaction`` of the signatures it
keeps, in JSON-RPC batches where the node takes them. The next page is
listed while the last one's transactions are fetched, at most
:data:`LOOKAHEAD` pages ahead of the part being written.

A page's transactions become one part, written in the program's order, and
only then does the program's checkpoint (its run's ``cursor``) move past
the page: a stop loses at most the pages under way, and the next run
deletes a part its checkpoint does not count
(:meth:`~cctx_research.nodes.store.Dataset.drop_solana_leftovers`).

Which signatures are kept: those within the run's bounds (slots or block
times), not failed (``err``: counted, never fetched), and not held already:
a transaction that calls two CCTP programs (every burn and every mint calls
a TokenMessengerMinter and a MessageTransmitter) is listed under both, and
fetched and stored once, under the program that listed it first.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from .. import errors
from ..net import RequestStats, Task
from .rpc import Rpc, RpcError

__all__ = ["BATCH", "LOOKAHEAD", "TRANSACTION_CONFIG", "Bounds", "Pages", "Program"]

logger = logging.getLogger(__name__)

BATCH = 20
"""``getTransaction`` calls in one JSON-RPC batch (a reply is 3-20 kB each)."""

LOOKAHEAD = 2
"""Pages of a program listed before the oldest of them is written."""

TRANSACTION_CONFIG = {"encoding": "json", "maxSupportedTransactionVersion": 0,
                      "commitment": "finalized"}  # fmt: skip
"""``getTransaction``'s options: what ``load(format="solana")`` reads, version 0 too."""


@dataclass(frozen=True)
class Bounds:
    """A run's window: signatures older than the floor end it, newer than the ceiling are skipped.

    Each side is a slot (inclusive) or a Unix time compared with the entry's
    ``blockTime`` (the half-open ``[floor_time, ceiling_time)``).
    """

    floor_slot: int | None = None
    floor_time: int | None = None
    ceiling_slot: int | None = None
    ceiling_time: int | None = None

    def below(self, entry: dict[str, Any]) -> bool:
        when = entry.get("blockTime")
        return (self.floor_slot is not None and entry["slot"] < self.floor_slot) or (
            self.floor_time is not None and when is not None and when < self.floor_time
        )

    def above(self, entry: dict[str, Any]) -> bool:
        when = entry.get("blockTime")
        return (self.ceiling_slot is not None and entry["slot"] > self.ceiling_slot) or (
            self.ceiling_time is not None and when is not None and when >= self.ceiling_time
        )

    def as_dict(self) -> dict[str, int]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass
class _Page:
    index: int
    cursor: dict[str, Any] | None
    last: bool
    wanted: list[str]
    low: int | None = None
    high: int | None = None
    results: dict[str, Any] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return len(self.results) == len(self.wanted)


@dataclass
class Program:
    """One program's run: its checkpoint entry in the state file, and its pages under way.

    ``entry["run"]`` (saved with each part) holds the run's ``top`` (its
    newest signature within the bounds), ``cursor`` (the oldest signature
    whose page is written), ``until`` (where the last run stopped) and its
    bounds. When the listing ends, ``top`` becomes ``entry["newest"]``.
    """

    tag: str
    address: str
    entry: dict[str, Any]
    pages: dict[int, _Page] = field(default_factory=dict)
    listed: int = 0
    written: int = 0
    paused: bool = False
    before: str | None = None
    """The oldest signature listed so far in this run (the next page's ``before``)."""

    @property
    def run(self) -> dict[str, Any]:
        return self.entry["run"]

    @property
    def bounds(self) -> Bounds:
        return Bounds(**self.run.get("bounds", {}))


@dataclass
class Counts:
    """What the listing met, for the run's summary line."""

    signatures: int = 0
    failed: int = 0
    held: int = 0
    outside: int = 0
    transactions: int = 0
    parts: int = 0
    low: int | None = None


class Pages:
    """The tasks of every program's run and what to do with their results (``on_result``).

    Parameters
    ----------
    rpc : Rpc
        The node.
    programs : list of Program
        Each with a fresh or resumed ``entry["run"]``.
    held : set of str
        Signatures stored already (in the parts this run's windows reach).
    write : callable
        ``write(program, page_index, low, high, lines)``: writes one part.
    checkpoint : callable
        Saves the state file (after each part).
    finish : callable
        ``finish(program)``: the program's run listed everything; True when
        it set a new run to start (a resumed run is followed by a fresh one).
    page_size : int
        ``limit`` of ``getSignaturesForAddress`` (at most 1000).
    cancel : threading.Event
        The run's cancel event.
    bar : optional
        A progress bar counting transactions.
    """

    def __init__(self, rpc: Rpc, programs: list[Program], held: set[str], *,
                 write: Callable[..., Any], checkpoint: Callable[[], None],
                 finish: Callable[[Program], bool], page_size: int,
                 cancel: threading.Event, bar: Any = None) -> None:  # fmt: skip
        self.rpc, self.programs, self.held = rpc, {p.tag: p for p in programs}, held
        self.write, self.checkpoint, self.finish = write, checkpoint, finish
        self.page_size, self.cancel, self.bar = page_size, cancel, bar
        self.claimed: dict[str, str] = {}
        self.counts = Counts()

    # ------------------------------------------------------------------ tasks

    def first_tasks(self) -> list[Task]:
        return [self._list(p) for p in self.programs.values()]

    def _list(self, program: Program) -> Task:
        index = program.listed
        program.listed += 1
        run = program.run
        # the first page continues from the checkpoint (a resumed run), later ones from the last
        before = program.before if index else (run.get("cursor") or {}).get("signature")
        until = (run.get("until") or {}).get("signature")
        options: dict[str, Any] = {"limit": self.page_size, "commitment": "finalized"}
        if before:
            options["before"] = before
        if until:
            options["until"] = until
        check = index == 0 and before is not None  # a resumed run: is its cursor still known?

        def fn(stats: RequestStats) -> Any:
            found = self.rpc.call("getSignaturesForAddress", [program.address, options],
                                  stats=stats, cancel=self.cancel)  # fmt: skip
            if check and isinstance(found, list) and not found:
                self._check_known(before, stats)  # type: ignore[arg-type]
            return found

        return Task(("list", program.tag, index), fn)

    def _check_known(self, signature: str, stats: RequestStats) -> None:
        """A node answers ``before`` it does not know with nothing: not the end of the listing."""
        reply = self.rpc.call("getSignatureStatuses",
                              [[signature], {"searchTransactionHistory": True}], stats=stats,
                              cancel=self.cancel)  # fmt: skip
        value = reply.get("value") if isinstance(reply, dict) else None
        if not value or value[0] is None:
            raise errors.DataError(
                f"{self.rpc.host} does not know the signature {signature} where this dataset's "
                "last run stopped, so it cannot list what comes before it",
                hint="resume with a node that keeps the full transaction history (an archival "
                "RPC), or sync into a new directory",
            )

    def _fetch(self, program: Program, index: int, signatures: list[str]) -> Task:
        def fn(stats: RequestStats) -> Any:
            calls = [("getTransaction", [s, TRANSACTION_CONFIG]) for s in signatures]
            if len(calls) == 1:
                return [self.rpc.call(*calls[0], stats=stats, cancel=self.cancel)]
            try:
                return self.rpc.batch(calls, stats=stats, cancel=self.cancel)
            except RpcError as exc:
                if self.rpc.takes_batches is not None:
                    raise
                # refused as a batch (an HTTP error with a JSON-RPC body): one call at a time
                logger.debug("%s refused a batch (%s); asking one call at a time",
                             self.rpc.host, exc.message)  # fmt: skip
                self.rpc.takes_batches = False
                return [self.rpc.call(*c, stats=stats, cancel=self.cancel) for c in calls]

        return Task(("fetch", program.tag, index, tuple(signatures)), fn)

    def _fetches(self, program: Program, page: _Page) -> list[Task]:
        size = 1 if self.rpc.takes_batches is False else BATCH
        return [self._fetch(program, page.index, page.wanted[i : i + size])
                for i in range(0, len(page.wanted), size)]  # fmt: skip

    # ------------------------------------------------------------------ results

    def on_result(self, task: Task, value: Any) -> list[Task]:
        kind, tag, index, *rest = task.tag
        program = self.programs[tag]
        if kind == "list":
            return self._listed(program, index, value)
        for signature, result in zip(rest[0], value, strict=True):
            if not isinstance(result, dict) or "transaction" not in result:
                raise errors.DataError(
                    f"{self.rpc.host} listed {signature} for {program.address} but answers "
                    f"getTransaction with {'nothing' if result is None else 'no transaction'}",
                    hint="the node may not keep the full transaction history: use an archival "
                    "RPC, or run again later",
                )
            program.pages[index].results[signature] = result
        return self._write_ready(program)

    def _listed(self, program: Program, index: int, entries: Any) -> list[Task]:
        if not isinstance(entries, list) or not all(_listing_entry(e) for e in entries):
            raise errors.ResponseSchemaError(
                f"{self.rpc.host} answered getSignaturesForAddress with something other than "
                "a list of {signature, slot, ...}", operation="getSignaturesForAddress",
            )  # fmt: skip
        run, bounds = program.run, program.bounds
        wanted: list[str] = []
        seen: set[str] = set()
        last = not entries
        page = _Page(index, entries[-1] if entries else None, last, wanted)
        for entry in entries:
            if bounds.below(entry):
                page.last = True
                break
            self.counts.signatures += 1
            if bounds.above(entry):
                self.counts.outside += 1
                continue
            signature = entry["signature"]
            if run.get("top") is None:
                run["top"] = _mark(entry)
            run["oldest"] = entry["slot"]
            page.low = entry["slot"] if page.low is None else min(page.low, entry["slot"])
            page.high = entry["slot"] if page.high is None else max(page.high, entry["slot"])
            if entry.get("err") is not None:
                self.counts.failed += 1
            elif signature in self.held or self.claimed.setdefault(signature, program.tag) != (
                program.tag
            ):
                self.counts.held += 1
            elif signature not in seen:
                seen.add(signature)
                wanted.append(signature)
        program.pages[index] = page
        if page.cursor is not None:
            program.before = page.cursor["signature"]
        tasks = self._fetches(program, page)
        if not page.last:
            if program.listed - program.written < LOOKAHEAD:
                tasks.append(self._list(program))
            else:
                program.paused = True
        return tasks + self._write_ready(program)

    def _write_ready(self, program: Program) -> list[Task]:
        """Write the program's complete pages in order, each followed by its checkpoint."""
        tasks: list[Task] = []
        while (page := program.pages.get(program.written)) is not None and page.complete:
            run = program.run
            if page.wanted:
                lines = [orjson.dumps(page.results[s]) for s in page.wanted]
                self.write(program, page.low, page.high, lines)
                self.held.update(page.wanted)
                self.counts.transactions += len(lines)
                self.counts.parts += 1
                if self.bar is not None:
                    self.bar.update(len(lines))
            if page.cursor is not None:
                run["cursor"] = _mark(page.cursor)
                low = page.cursor["slot"]
                self.counts.low = low if self.counts.low is None else min(self.counts.low, low)
            del program.pages[program.written]
            program.written += 1
            if page.last:
                program.pages.clear()
                program.listed = program.written = 0
                program.paused, program.before = False, None
                if self.finish(program):
                    tasks.append(self._list(program))
                self.checkpoint()
                return tasks
            self.checkpoint()
            if program.paused:
                program.paused = False
                tasks.append(self._list(program))
        return tasks


def _listing_entry(entry: Any) -> bool:
    return (isinstance(entry, dict) and isinstance(entry.get("signature"), str)
            and isinstance(entry.get("slot"), int))  # fmt: skip


def _mark(entry: dict[str, Any]) -> dict[str, Any]:
    """What a checkpoint keeps of a listed signature."""
    return {"signature": entry["signature"], "slot": entry["slot"],
            "time": entry.get("blockTime")}  # fmt: skip
