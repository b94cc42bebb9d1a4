"""``load``: CCTP data of any supported shape, from any number of files, as one ledger."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .. import chains, schema
from ..addressing import as_chain_format
from ..errors import CoverageWarning
from ..provenance import Provenance, attach
from ..provenance import combine as combine_records
from ..scratch import Scratch
from . import lazy, reading, steps
from .exports import xchaindatagen
from .files import expand
from .formats import FORMATS, FileRead
from .ledger import attested as attested_nonces
from .ledger import linking, sides
from .values import bad_frame, malformed_error

__all__ = ["BAD_ATTR", "bad_rows", "load"]

logger = logging.getLogger(__name__)

BAD_ATTR = "cctx_bad"
"""The key of ``DataFrame.attrs`` under which ``errors="report"`` keeps the bad rows."""

ChainArg = str | int | Mapping[str | Path, str | int] | None


def bad_rows(ledger: pd.DataFrame) -> pd.DataFrame:
    """The rows ``load(..., errors="report")`` left out: ``source_file``, ``index``, ``reason``.

    ``index`` is the line number in a CSV or JSON Lines file (the header is
    line 1), the row's position (from 0) in Parquet or a JSON list, or the
    log's position in an event-log file. Empty when nothing was left out.

    Examples
    --------
    >>> bad_rows(pd.DataFrame()).columns.tolist()
    ['source_file', 'index', 'reason']
    """
    if not isinstance(ledger, pd.DataFrame):
        raise TypeError(f"expected the DataFrame load() returned, got {type(ledger).__name__}")
    return bad_frame(ledger.attrs.get(BAD_ATTR, []))


def _chain_for(path: Path, chain: ChainArg, files: Sequence[Path] = ()) -> int | None:
    """The domain ``chain=`` gives ``path``: an exact (or resolved) path first, then a tail.

    A key that is a tail of the path (``"logs.json"``, ``"base/logs.json"``)
    counts only when it names one of ``files``: a bare name shared by two
    files is refused, never read as the first one's chain.
    """
    if chain is None:
        return None
    if not isinstance(chain, Mapping):
        return chains.domain(chain)
    keyed = [(key, Path(key).expanduser(), value) for key, value in chain.items()]
    for _, k, value in keyed:
        if k == path or k.resolve() == path.resolve():
            return chains.domain(value)
    for key, k, value in keyed:
        if not k.is_absolute() and path.parts[-len(k.parts):] == k.parts:
            matching = [f for f in files if f.parts[-len(k.parts):] == k.parts]
            if len(matching) > 1:
                raise ValueError(
                    f"chain={{{key!r}: {value!r}}}: {key!r} matches {len(matching)} files "
                    f"({', '.join(str(f) for f in matching[:3])}); key each file by its path"
                )
            return chains.domain(value)
    return None


def _check_arguments(format: str | None, errors: str, chain: ChainArg, ambiguous: str) -> None:
    if ambiguous not in linking.AMBIGUOUS:
        raise ValueError(
            f"ambiguous must be 'link' (identical transfers linked in time order) or 'keep' "
            f"(left unlinked), got {ambiguous!r}"
        )
    if format is not None and format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)} or None, got {format!r}")
    if errors not in ("raise", "report"):
        raise ValueError(f"errors must be 'raise' or 'report', got {errors!r}")
    if isinstance(chain, Mapping):
        for value in chain.values():
            chains.domain(value)
    elif chain is not None:
        chains.domain(chain)


def _say_empty(files: list[Path], rows_read: int) -> None:
    """A load that makes no transfer says why (a header-only CSV has said it already)."""
    names = ", ".join(Path(p).name for p in files)
    if rows_read:
        rows = f"{rows_read:,} row" if rows_read == 1 else f"{rows_read:,} rows"
        why = (f"{rows} read, none a burn or a mint "
               "(the provenance counts say what each became)")
    elif all(Path(p).suffix.lower() == ".csv" for p in files):
        return
    else:
        why = "the files hold no rows"
    warnings.warn(CoverageWarning(f"no transfers in {names}: {why}"), stacklevel=3)


def _stack(frames: list[pd.DataFrame]) -> pd.DataFrame:
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _events(frames: list[pd.DataFrame], extra: tuple[str, ...] = ()) -> tuple[pd.DataFrame, int]:
    """One event table from every file's, each log once: (table, duplicates dropped)."""
    frame = _stack(frames)
    for col in ("domain", "tx_hash", "log_index", "amount_raw", "mint_recipient",
                "destination_domain", *extra):
        if col not in frame.columns:
            frame[col] = pd.Series(dtype=object)
    if len(frames) < 2 or not len(frame):
        return frame, 0
    keys = ["domain", "tx_hash", "log_index"]
    known = frame[keys].notna().all(axis=1).to_numpy()
    dup = known & frame[keys].duplicated().to_numpy()
    return frame[~dup].reset_index(drop=True), int(dup.sum())


def _assemble(
    parts: FileRead,
    ambiguous: str,
    messages: pd.DataFrame | None = None,
    report: steps.Reporter | None = None,
    engine: str = "pandas",
) -> tuple[Any, dict[str, int]]:
    """The ledger of everything read, and counts of what each step merged, skipped or dropped.

    The ledger is a DataFrame, or for ``engine="duckdb"`` (without the toolkit's own ledger
    files among the inputs) a :class:`~.ledger.sqlrows.SqlLedger`: its rows are written
    from SQL into the dataset, never gathered into a frame."""
    report = report or steps.reporter(None)
    report("sides")
    counts: dict[str, int] = {}

    def add(more: dict[str, int]) -> None:
        for key, value in more.items():
            counts[key] = counts.get(key, 0) + value

    burns = list(parts.burn_rows)
    tables = {}
    for name, frames, extra in (
        ("deposits", parts.burns, ()),
        ("sent", parts.sent, ("source_domain",)),
        ("received", parts.received, ("source_domain", "nonce")),
        ("mints", parts.mints, ()),
    ):
        tables[name], dropped = _events(frames, extra)
        frames.clear()  # each file's frames, stacked now: freed before the sides are built
        add({"duplicates": dropped})
    deposits, sent, received, mints = (tables.pop(k) for k in ("deposits", "sent", "received",
                                                                "mints"))  # fmt: skip
    if len(deposits) or len(sent):
        made, tally = sides.burns(deposits, sent)
        burns.append(made)
        add(tally)
    del deposits, sent  # the events live on in their sides only
    arrivals = list(parts.arrivals)
    if len(received) or len(mints):
        made, tally = sides.arrivals(received, mints)
        arrivals.append(made)
        add(tally)
    made = None  # the sides live in their lists only: a linker may free them
    del received, mints
    times = _stack(parts.tx_times)
    if len(times):
        burns = [xchaindatagen.apply_times(b.copy(), times, "burn") for b in burns]
        arrivals = [xchaindatagen.apply_times(a.copy(), times, "mint") for a in arrivals]
    if messages is not None:
        given = [attested_nonces.attach(b, messages) for b in burns]
        burns = [b for b, _ in given]
        add({"attested_nonces": sum(n for _, n in given)})
    report("link")
    if engine == "duckdb" and not any(len(x) for x in (*parts.paired, *parts.ledgers)):
        ledger, tally = _link_in_sql(burns, arrivals, ambiguous)
    else:
        ledger, tally = _link(burns, arrivals, parts.paired, ambiguous, engine)
    add(tally)
    if not isinstance(ledger, pd.DataFrame):  # DuckDB's tables: the rows stay in SQL
        return ledger, counts
    own_rows = _stack(parts.ledgers)
    if len(own_rows):
        before = len(ledger) + len(own_rows)
        ledger = pd.concat([ledger, own_rows], ignore_index=True) if len(ledger) else own_rows
        ledger = ledger[~ledger["transfer_id"].duplicated()].reset_index(drop=True)
        counts["duplicates"] = counts.get("duplicates", 0) + before - len(ledger)
        # the links counted so far are the events' only: count the whole ledger's,
        # with the pairings the toolkit's own files carry
        counts.update(linking.pairing_counts(ledger))
    # Readers keep the messages' hex (linking compares it); every address is spelled
    # here, once, as its chain spells it, so a ledger joins with the client's frames.
    return as_chain_format(ledger), counts


def _read(named: list[tuple[Path, int | None]], format: str | None, blocks: Any,
          messages: pd.DataFrame | None, ambiguous: str, report: steps.Reporter,
          engine: str) -> tuple[FileRead, Any, dict[str, int]]:  # fmt: skip
    """Every file read and linked: cryo's Parquet logs in DuckDB for ``engine="duckdb"``, and
    for any engine past :data:`.sqlread.SQL_FROM_BYTES` (:mod:`.sqlread`: the ledger a
    :class:`~.ledger.sqlrows.SqlLedger`, no pandas frame of logs, sides or ledger; a frame
    of the ledger at the end for ``"pandas"``), everything else by the pandas readers."""
    from . import sqlread  # imports no DuckDB: read_and_link does, when it reads

    if blocks is None and messages is None and sqlread.wanted(engine, named):
        done = sqlread.read_and_link(named, format, ambiguous, report)
        if done is not None:
            return done
    parts = reading.read_all(named, format, blocks, report)
    ledger, counts = _assemble(parts, ambiguous, messages, report, engine)
    return parts, ledger, counts


def _link(burns: list[pd.DataFrame], arrivals: list[pd.DataFrame], paired: list[pd.DataFrame],
          ambiguous: str, engine: str) -> tuple[pd.DataFrame, dict[str, int]]:  # fmt: skip
    """Link in DuckDB (out of core, :mod:`~.ledger.sqllink`) for ``engine="duckdb"`` when no
    source paired rows; with the numpy linker (:mod:`~.ledger.linking`) otherwise."""
    if engine == "duckdb" and not any(len(p) for p in paired):
        from .ledger import sqllink  # DuckDB is the engines extra: imported when asked for

        # a directory of this link's own: two loads at once must not spill into one place
        with Scratch(sqllink.SPILL_PREFIX) as spill:
            con = sqllink.connect(temp_directory=spill)
            try:
                return sqllink.link(burns, arrivals, ambiguous=ambiguous, connection=con)
            finally:
                con.close()
    return linking.link(burns, arrivals, paired, ambiguous=ambiguous)


def _link_in_sql(burns: list[pd.DataFrame], arrivals: list[pd.DataFrame],
                 ambiguous: str) -> tuple[Any, dict[str, int]]:  # fmt: skip
    """The sides and their links as DuckDB tables (:class:`~.ledger.sqlrows.SqlLedger`, its
    own spill directory), and its counts of pairings and duplicates: SQL aggregates."""
    from .ledger import sqlrows  # DuckDB is the engines extra: imported when asked for

    ledger = sqlrows.from_sides(burns, arrivals, ambiguous=ambiguous)
    try:
        return ledger, ledger.summary().counts
    except BaseException:
        ledger.close()
        raise


_SIDE_SKIPS = {
    "skipped_generic_messages": "generic_messages",
    "skipped_mints_without_message": "mints_without_message",
}


def _tally(read: FileRead, assembled: dict[str, int], bad: int) -> dict[str, int]:
    """Every input row accounted for: ``decoded + skipped + duplicates + bad == rows_read``.

    ``decoded`` counts the rows and logs the readers decoded, less those the
    later steps skipped (generic messages, mints without their message) or
    dropped as duplicates (the same log in two files, a transfer a source
    already paired); ``merged`` counts the events folded into another's side.
    Each reason a row was skipped for is counted as ``skipped_<reason>``.
    """
    skipped = dict(read.skipped)
    tally = {k: v for k, v in read.counts.items()}
    for key, value in assembled.items():
        if key in _SIDE_SKIPS:
            skipped[_SIDE_SKIPS[key]] = skipped.get(_SIDE_SKIPS[key], 0) + value
        else:
            tally[key] = tally.get(key, 0) + value
    later = sum(assembled.get(k, 0) for k in (*_SIDE_SKIPS, "duplicates"))
    tally["decoded"] = tally.get("decoded", 0) - later
    tally["bad"] = bad
    tally.update({(k if k == "removed" else f"skipped_{k}"): v for k, v in skipped.items()})
    tally["skipped"] = sum(skipped.values())
    tally.setdefault("rows_read", 0)
    tally.setdefault("duplicates", 0)
    tally.setdefault("merged", 0)
    return tally


def load(
    paths: str | Path | Iterable[str | Path],
    *,
    format: str | None = None,
    chain: ChainArg = None,
    blocks: str | Path | pd.DataFrame | None = None,
    errors: str = "raise",
    ambiguous: str = "link",
    attested: str | Path | pd.DataFrame | None = None,
    progress: bool | Callable[[steps.LoadStep], None] | None = None,
    engine: str = "pandas",
    out: str | Path | None = None,
) -> Any:
    """Load CCTP transfers from files of any supported format as one ledger.

    Parameters
    ----------
    paths : path, glob, directory, or a list of them
        One file per chain is normal: they load together, and a mint pairs
        with its burn from another file. A directory is read file by file
        (a directory of Parquet files is one dataset, but one of event logs,
        such as cryo's ``--output-dir``, is read file by file).
    format : {"evm-logs", "dune", "xchaindatagen", "solana", "cctx"}, optional
        Detected from each file's columns (or, for JSON, its records) when
        not given. See ``cctx_research.ingest.FORMATS``.
    chain : str, int or mapping, optional
        The chain of files whose rows do not say it (event logs without
        cryo's ``chain_id``, Dune's per-chain decoded tables): a name or
        domain for all files, or ``{path: chain}``.
    blocks : path or DataFrame, optional
        Block times for event logs without ``blockTimestamp``: cryo's blocks
        dataset (a file or its folder) or ``eth_getBlockByNumber`` results.
    errors : {"raise", "report"}
        ``"raise"``: malformed rows or logs raise :class:`DataError` with
        their count and the first line numbers or log indexes.
        ``"report"``: keep the good rows; :func:`bad_rows` of the result
        lists the others.
    ambiguous : {"link", "keep"}
        Identical V2 transfers (the same burn token, recipient, sender,
        amount, max fee and hook data more than once): ``"link"`` links each
        mint to the earliest unlinked burn before it and marks both
        ``pairing="content_ambiguous"`` (volumes right, latency uncertain);
        ``"keep"`` leaves them unlinked (burns ``"unpaired"``, mints
        ``"mint_only"``). See :mod:`cctx_research.ingest.ledger.linking`.
    attested : DataFrame or path, optional
        Circle's attested messages of the burns (the frames of
        :meth:`cctx_research.iris.IrisClient.messages`, or the
        ``iris/messages.parquet`` of ``sync --iris``): each V2 burn Iris
        knows takes its attested nonce and links on it
        (``pairing="attested"``), identical transfers included. See
        :mod:`cctx_research.ingest.ledger.attested`.
    progress : bool or callable, optional
        Progress through a long load, stage by stage (reading each file,
        decoding its logs, building the sides, linking, writing the
        dataset): ``True`` draws a bar on stderr, a callable is given a
        :class:`~cctx_research.ingest.steps.LoadStep` at each step (its
        ``stage``, ``done`` of ``total``, the file's ``path``), ``None`` or
        ``False`` shows nothing.
    engine : {"pandas", "polars", "duckdb", "dask"}
        ``"pandas"``: the ledger as a DataFrame. The others: the ledger is
        written as a partitioned ``ledger`` dataset (``docs/datasets.md``)
        and the engine's lazy frame over it is returned (a Polars
        ``LazyFrame``, a DuckDB relation, a Dask DataFrame), for the
        analyses to run in the engine. ``"duckdb"`` also links in DuckDB
        SQL (:mod:`~cctx_research.ingest.ledger.sqllink`: the same ledger,
        its sorts and joins spilled to disk past DuckDB's memory limit).
        From 32 MiB of cryo's Parquet logs (what ``sync`` writes) every engine
        reads and links them in DuckDB when it is installed: the same ledger in
        less time and memory (:data:`.sqlread.SQL_FROM_BYTES`).
    out : directory, optional
        Where the ledger dataset is written (any engine; with ``"pandas"``
        the DataFrame is still returned). It is written in a temporary
        directory beside ``out`` and swapped in, so a failure or Ctrl-C
        leaves ``out`` as it was; a previous ledger there is replaced.
        Without ``out``, a lazy engine's dataset goes to a new temporary
        directory (``cctx-ledger-*``), kept after ``load`` returns and
        removed when the Python process exits.

    Returns
    -------
    pandas.DataFrame, or the engine's lazy frame
        Kind ``"ledger"`` with the V2 columns, ``pairing``
        (:data:`cctx_research.schema.LEDGER_PAIRING`), ``link_group_size``
        and ``token``; every address in its chain's own format, whatever the
        source (:data:`cctx_research.schema.ADDRESS_CHAINS`;
        :func:`cctx_research.addressing.as_bytes32` for CCTP's bytes32).
        Its provenance names the files and format and counts
        every input row: ``rows_read == decoded + skipped + duplicates +
        bad`` (``skipped_<reason>`` for each reason; ``merged`` events
        folded into another's side), and the transfers by ``pairing``
        (``paired`` = every link; the toolkit's own ledger files by the
        pairing they carry, by their sides where it is null: see
        :func:`~cctx_research.ingest.ledger.linking.pairing_counts`) and
        ``missing_times``.

    Raises
    ------
    DataError
        A file that matches no format (naming each format, what it needs
        and which columns are missing); malformed rows (``errors="raise"``);
        an amount beyond int64 (naming the row).
    ValueError, TypeError
        Bad arguments.

    Examples
    --------
    >>> import cctx_research as cctx
    >>> ledger = cctx.load("eth_logs.json", chain="ethereum")  # doctest: +SKIP
    >>> ledger = cctx.load(["dune_flows.csv"], errors="report")  # doctest: +SKIP
    >>> cctx.provenance.provenance(ledger).count["paired"]      # doctest: +SKIP
    """
    _check_arguments(format, errors, chain, ambiguous)
    directory = lazy.check(engine, out)
    report = steps.reporter(progress)
    messages = None if attested is None else attested_nonces.read(attested)
    if blocks is not None and not isinstance(blocks, pd.DataFrame):
        from .evm import logs as evm_logs

        blocks = evm_logs.read_blocks(blocks)
    given = expand(paths)
    named = [(f, _chain_for(p, chain, given)) for p in given for f in reading.log_files(p, format)]
    files = [f for f, _ in named]
    try:
        parts, ledger, counts = _read(named, format, blocks, messages, ambiguous, report, engine)
    except BaseException:
        report.close()
        raise
    try:
        return _finish(ledger, parts, counts, files, errors, directory, engine, report)
    finally:
        report.close()
        if not isinstance(ledger, pd.DataFrame):
            ledger.close()


def _finish(ledger: Any, parts: FileRead, counts: dict[str, int], files: list[Path], errors: str,
            directory: Path | None, engine: str, report: steps.Reporter) -> Any:  # fmt: skip
    """Check, count and attach provenance, then return the ledger or write and scan it."""
    if engine == "pandas" and not isinstance(ledger, pd.DataFrame):
        ledger = ledger.frame()  # read in DuckDB; the SqlLedger is closed by load
    problems = parts.problems
    if problems and errors == "raise":
        raise malformed_error(problems)
    if isinstance(ledger, pd.DataFrame):
        ledger = schema.validate(schema.complete(ledger, "ledger")[schema.columns("ledger")],
                                 "ledger")  # fmt: skip
        burned = ledger["burn_tx_hash"].notna() & ledger["burn_timestamp"].isna()
        minted = ledger["mint_tx_hash"].notna() & ledger["mint_timestamp"].isna()
        missing, transfers = int(burned.sum() + minted.sum()), len(ledger)
    else:
        summary = ledger.summary()
        missing, transfers = summary.missing_times, summary.transfers
    record = _record(parts, counts, len(problems), files, missing, transfers)
    if not isinstance(ledger, pd.DataFrame):
        from . import datasets

        if summary.untimed:  # refused before anything is written, as datasets.write refuses
            raise datasets.untimed_error(summary.untimed)
        return lazy.stream_and_scan(
            lambda tmp: datasets.write_stream(ledger.batches(), tmp, record=record),
            directory, engine, report,
        )  # fmt: skip
    attach(ledger, record)
    if problems:
        ledger.attrs[BAD_ATTR] = list(problems)
    if engine == "pandas" and directory is None:
        return ledger
    return lazy.write_and_scan(ledger, directory, engine, report)


def _record(parts: FileRead, counts: dict[str, int], bad: int, files: list[Path],
            missing_times: int, transfers: int) -> Provenance:  # fmt: skip
    """The load's provenance: every input row counted; warnings of no transfers, no times."""
    tally = _tally(parts, counts, bad)
    tally["missing_times"] = missing_times
    tally["transfers"] = transfers
    if not transfers:
        _say_empty(files, tally["rows_read"])
    if tally["missing_times"]:
        logger.warning(
            "%d burn or mint sides have no time: give event logs with blockTimestamp, "
            "a blocks file (blocks=), or XChainDataGen's cctp_blockchain_transactions",
            tally["missing_times"],
        )
    record = Provenance(
        source=", ".join(str(p) for p in files),
        operation="load",
        files=tuple(str(p) for p in files),
        format=parts.format,
        counts=tally,
    )
    if parts.provenance:  # own frames keep what they said (synthetic, where they came from)
        merged = combine_records(
            [*parts.provenance, record], operation="load", format=record.format, counts=tally
        )
        record = merged if merged is not None else record
    logger.info(
        "loaded %d transfers from %d file(s): %s",
        transfers, len(files), ", ".join(f"{k} {v}" for k, v in tally.items()),
    )
    return record
