"""``cctx-research import``: read files into one ledger."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Callable

from ..errors import CctxError


def add(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "import",
        help="read event logs, Dune or XChainDataGen exports into one ledger file",
        description=(
            "Read CCTP data of any supported format (event logs, Dune, XChainDataGen, the "
            "toolkit's own frames; detected from each file) from files, globs or "
            "directories, link burns to their mints, and write one ledger (Parquet, or CSV). "
            "Prints a summary (rows read, decoded, linked by kind, pending, mint-only, skipped "
            "and why) and the links per route."
        ),
    )
    p.add_argument("sources", nargs="+", metavar="SRC", help="files, globs or directories")
    p.add_argument(
        "--format",
        default=None,
        choices=["evm-logs", "dune", "xchaindatagen", "solana", "cctx"],  # ingest's FORMATS
        help="the format of every SRC (default: detected per file)",
    )
    p.add_argument(
        "--chain",
        action="append",
        default=None,
        metavar="CHAIN|PATH=CHAIN",
        help="the chain of files whose rows do not say it; repeat PATH=CHAIN per file",
    )
    p.add_argument("--blocks", default=None, metavar="PATH",
                   help="block times for event logs (a file, or a folder of cryo's blocks files)")
    p.add_argument(
        "--errors",
        default="raise",
        choices=["raise", "report"],
        help="malformed rows: stop (raise, default) or keep the good rows and list the "
        "bad ones next to the output (report)",
    )
    p.add_argument(
        "--ambiguous",
        default="link",
        choices=["link", "keep"],
        help="identical V2 transfers: link each mint to the earliest free burn before it "
        "(link, default; pairing content_ambiguous) or keep them unlinked (keep)",
    )
    p.add_argument(
        "--engine",
        default="pandas",
        choices=["pandas", "duckdb"],  # load's engine= that build the ledger differently
        help="build the ledger in pandas (default; any --out) or out of core in DuckDB "
        "(the engines extra; --out DIR/ only: cryo's Parquet logs are decoded, linked and "
        "written to the dataset without a pandas frame, so a whole history fits)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--out",
        required=True,
        metavar="FILE|DIR/",
        help="output .parquet or .csv; or DIR/ for a partitioned dataset",
    )
    p.set_defaults(func=run)


def _chain_option(values: list[str] | None) -> object:
    if not values:
        return None
    pairs = [v for v in values if "=" in v]
    if pairs and len(pairs) != len(values):
        raise ValueError("--chain takes either one CHAIN for all files or PATH=CHAIN for each")
    if not pairs:
        if len(values) > 1:
            raise ValueError("give one --chain CHAIN, or PATH=CHAIN per file")
        return values[0]
    mapping = dict(v.rsplit("=", 1) for v in pairs)
    for path, chain in mapping.items():
        if _is_chain(path) and not _is_chain(chain):
            raise ValueError(
                f"--chain {path}={chain}: the chain goes after the '='; "
                f"did you mean --chain {chain}={path}?"
            )
    return mapping


def _is_chain(text: str) -> bool:
    """Whether ``text`` names a chain (a name or a domain), as --chain's CHAIN part."""
    from .. import chains

    try:
        chains.domain(text)
    except (ValueError, TypeError):
        return False
    return True


def _whole_errors(command: Callable[[argparse.Namespace], int]) -> Callable[..., int]:
    """``command`` with a toolkit error told whole on stderr (exit 1): an import's errors
    list the formats and the missing columns, which the CLI's one-line message would cut."""

    @functools.wraps(command)
    def told(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except CctxError as exc:
            sys.stderr.write(f"cctx-research: error: {exc}\n")
            return 1

    return told


@_whole_errors
def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..ingest import bad_rows, load
    from ..ingest.output import summary
    from ..ingest.steps import Bar, reporter
    from ..storage import write_atomically

    out = Path(args.out)
    to_dataset = args.out.endswith(("/", os.sep)) or out.is_dir()
    if not to_dataset and out.suffix.lower() not in (".parquet", ".csv"):
        raise ValueError(
            f"--out must end in .parquet or .csv, or be a directory (DIR/) for a partitioned "
            f"dataset, got {args.out!r}"
        )
    if args.engine == "duckdb":
        return _run_in_duckdb(args, out, to_dataset)
    # one bar for every stage, the writing here included (--no-progress: nothing)
    bar = None if args.no_progress else Bar()
    report = reporter(bar)
    try:
        ledger = load(
            args.sources,
            format=args.format,
            chain=_chain_option(args.chain),
            blocks=args.blocks,
            errors=args.errors,
            ambiguous=args.ambiguous,
            progress=bar,
        )
        report("write")
        if to_dataset:
            from .. import datasets

            datasets.write(ledger, out)
        else:
            write_atomically(ledger, out)
        report("write", done=1)
    finally:
        if bar is not None:
            bar.close()
    bad = bad_rows(ledger)
    if len(bad):
        write_atomically(bad, out.with_name(out.name + ".bad.csv"))
    sys.stdout.write(summary(ledger, out, bad_file=len(bad) > 0) + "\n")
    sys.stdout.write(_links_by_route(ledger) + "\n")
    return 0


def _check_duckdb(args: argparse.Namespace, to_dataset: bool) -> None:
    """What ``--engine duckdb`` needs, said before anything is read."""
    import importlib.util

    if not to_dataset:
        raise ValueError(
            f"--engine duckdb writes a partitioned ledger dataset: pass --out DIR/ (a "
            f"directory), or --engine pandas for a .parquet or .csv file (got {args.out!r})"
        )
    if args.errors != "raise":
        raise ValueError(
            "--errors report lists the bad rows beside a ledger built in pandas: pass "
            "--engine pandas with it, or --errors raise (a malformed row stops the import)"
        )
    if importlib.util.find_spec("duckdb") is None:
        raise ValueError(
            "--engine duckdb needs DuckDB: pip install 'cctx-research[engines]' "
            "(or pass --engine pandas)"
        )


def _run_in_duckdb(args: argparse.Namespace, out: object, to_dataset: bool) -> int:
    """``import --engine duckdb``: the ledger written to the dataset ``out`` by DuckDB,
    its summary from the dataset's record and its routes counted in DuckDB."""
    from .. import storage
    from ..ingest import load
    from ..ingest.output import summary
    from ..ingest.steps import Bar
    from ..provenance import Provenance

    _check_duckdb(args, to_dataset)
    bar = None if args.no_progress else Bar()
    try:
        ledger = load(
            args.sources, format=args.format, chain=_chain_option(args.chain),
            blocks=args.blocks, ambiguous=args.ambiguous, progress=bar, engine="duckdb",
            out=out,
        )  # fmt: skip
    finally:
        if bar is not None:
            bar.close()
    manifest = storage.read_manifest(out, kinds=("ledger",), instead="import again")
    writes = manifest.state.get("writes", []) if manifest is not None else []
    record = Provenance.from_dict(writes[-1]) if writes else None
    sys.stdout.write(summary(ledger, out, record=record) + "\n")
    sys.stdout.write(_links_by_route(ledger) + "\n")
    return 0


def _links_by_route(ledger: object) -> str:
    """The per-route link table of an import (analysis.linking.quality), as text."""
    from ..analysis import linking

    table = linking.quality(ledger, freq=None)
    if not len(table):
        return "links by route: none (no transfers)"
    lines = ["links by route (burns, mints, linked, pending, mint only, link rate of the mints):"]
    for row in table.itertuples(index=False):
        rate = "-" if row.link_rate != row.link_rate else f"{row.link_rate:.0%}"
        lines.append(
            f"  {row.source_chain + ' -> ' + row.destination_chain:<28} {row.burns:>8,} "
            f"{row.mints:>8,} {row.linked:>8,} {row.pending:>8,} {row.mint_only:>8,} {rate:>6}"
        )
    return "\n".join(lines)
