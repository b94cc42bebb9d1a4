"""Each file of a ``load`` read by the reader of its format: event logs (decoded as they
are read), Solana transactions, Dune and XChainDataGen exports, the toolkit's own files."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from .. import chains, storage
from ..errors import DataError
from . import solana, steps
from .exports import dune, own, xchaindatagen
from .files import Table, read_table, sniff
from .formats import FileRead, combine, detect, no_format_error
from .ledger import guards
from .values import Rows

__all__ = ["log_files", "read_all"]


def _nothing() -> None:
    """No progress to say."""


def _read_logs(
    path: Path, chain: int | None, blocks: Any, decoding: Callable[[], None] = _nothing
) -> FileRead:
    try:
        from .evm import logs as evm_logs
    except ImportError as exc:  # pragma: no cover - the decoder ships with the package
        raise DataError("the event-log decoder is not available in this installation") from exc
    logs = evm_logs.read_logs(path, binary=True)
    # the decoder reads a number as an EVM chain id: pass the chain by name
    named = None if chain is None else chains.chain_name(chain)
    decoding()
    # the message's hex (its fields are decoded beside it) is no side's: not made
    decoded = evm_logs.decode_logs(logs, chain=named, blocks=blocks, message=False)
    guards.refuse_testnet_logs(path, decoded)
    decoded, damaged = guards.screen_message_sources(decoded)
    guards.check_log_chain(path, chain, logs, decoded)
    decoded, unknown = guards.skip_unknown_emitters(decoded)
    decoded, implausible = guards.screen_events(decoded, time_column="blockTimestamp")
    out = FileRead(
        format="evm-logs",
        burns=[decoded.burns],
        sent=[decoded.sent.drop(columns="message")],
        received=[decoded.received],
        mints=[decoded.mints],
    )
    c = decoded.counts
    out.add("rows_read", c["logs"])
    out.add("decoded", c["decoded"] - unknown - len(damaged) - len(implausible))
    out.add("duplicates", c["duplicates"])
    out.skip("other_events", c["skipped_other_events"])
    out.skip("unknown_emitter", unknown)
    out.skip("removed", c["removed"])
    bad = decoded.bad
    out.problems.extend(
        {"source_file": str(f), "index": int(i), "reason": str(r)}
        for f, i, r in zip(bad["source_file"], bad["index"], bad["reason"], strict=True)
    )
    out.problems.extend(damaged + implausible)
    return out


def log_files(path: Path, format: str | None) -> list[Path]:
    """The Parquet files of a directory of event logs (cryo's ``--output-dir``), one by one.

    A directory of Parquet files is otherwise one dataset; logs are read file by file
    (the decoder's unit), so a folder of a chain's whole history never has to fit at once.
    Anything else (a file, a dataset of another format, one ``cctx-research`` wrote)
    stays ``[path]``.
    """
    if format not in (None, "evm-logs") or not path.is_dir():
        return [path]
    if (path / storage.MANIFEST).is_file():
        return [path]
    import pyarrow.parquet as pq

    parts = sorted(p for p in path.rglob("*.parquet")
                   if p.is_file() and not p.name.startswith((".", "_")))  # fmt: skip
    if not parts:
        return [path]
    try:
        names = pq.read_schema(parts[0]).names
    except (OSError, ValueError) as exc:
        raise DataError(f"cannot read the Parquet file {str(parts[0])!r}: {exc}") from exc
    found = detect(names, wanted=format)
    return parts if found is not None and found[0] == "evm-logs" else [path]


def _logs_table(path: Path, kind: str, format: str | None) -> bool:
    """A Parquet file whose columns (its footer, not its rows) are cryo's logs: read once, by
    the log reader, never first as a table of some other format."""
    if format not in (None, "evm-logs") or kind != "parquet" or not path.is_file():
        return False
    import pyarrow.parquet as pq

    try:
        names = pq.read_schema(path).names
    except (OSError, ValueError):
        return False  # the table reader says what is wrong with it
    found = detect(names, wanted=format)
    return found is not None and found[0] == "evm-logs"


def _read_file(path: Path, format: str | None, chain: int | None, blocks: Any,
               decoding: Callable[[], None] = _nothing) -> FileRead:  # fmt: skip
    """Read one file with the reader of its format; ``decoding()`` says when its logs'
    decoding starts."""
    sniffed = sniff(path)
    if format == "solana" or (format is None and sniffed.solana):
        return solana.read(path, chain)
    logs = format == "evm-logs" or (format is None and sniffed.logs)
    if logs or _logs_table(path, sniffed.kind, format):
        return _read_logs(path, chain, blocks, decoding)
    table: Table = read_table(path, sniffed)
    columns = table.frame.columns
    found = detect(columns, wanted=format)
    if found is not None and found[0] == "evm-logs":
        return _read_logs(path, chain, blocks, decoding)
    rows = Rows(table.frame, table.path, first=table.first)
    if found is None:
        lacking = own.missing(columns)
        is_own = not lacking["ledger"] or not lacking["transfers"]
        if not is_own or format not in (None, "cctx"):
            raise no_format_error(table.path, columns, lacking, format)
        ledger = own.ledger_from_rows(rows)
        out = FileRead(format="cctx", ledgers=[ledger[~rows.bad]], problems=list(rows.problems))
        if table.provenance is not None:
            out.provenance.append(table.provenance)
    else:
        fmt, name = found
        if fmt == "dune":
            out = dune.read(rows, name, chain=chain)
        else:
            out = xchaindatagen.read(rows, name)
    out.add("rows_read", len(rows))
    out.add("decoded", len(rows) - len(out.problems) - sum(out.skipped.values()))
    return out


def read_all(named: list[tuple[Path, int | None]], format: str | None, blocks: Any,
              report: steps.Reporter) -> FileRead:  # fmt: skip
    """Every file read (its logs decoded) with the reader of its format, as one read."""
    reads = []
    for i, (path, domain) in enumerate(named):
        report("read", done=i, total=len(named), path=path)
        decoding = partial(report, "decode", done=i, total=len(named), path=path)
        reads.append(_read_file(path, format, domain, blocks, decoding))
    report("read", done=len(named), total=len(named))
    return combine(reads)
