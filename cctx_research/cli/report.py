"""``cctx-research report``: one self-contained HTML report."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .options import add_service_options, service_options

if TYPE_CHECKING:
    from ..report.progress import ProgressCallback


def add(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "report",
        allow_abbrev=False,  # "--api-key KEY" must not be read as --api-key-file
        help="write a self-contained HTML report (the embedded sample without credentials)",
        description=(
            "Fetch a window, analyse it and write one self-contained HTML file (figures "
            "embedded, no external assets). Default window: the last 30 days up to now. "
            "Without CCTX_API_KEY/CCTX_PROJECT_ID it reports on the embedded synthetic "
            "sample, and says so in the report."
        ),
    )
    p.add_argument("--start", default=None, metavar="DATE", help="window start (UTC)")
    p.add_argument("--end", default=None, metavar="DATE", help="window end, excluded (UTC)")
    p.add_argument(
        "--chains",
        nargs="+",
        default=None,
        metavar="CHAIN",
        help="keep transfers touching any of these chains (names or domain ids)",
    )
    p.add_argument("--title", default=None, help="the report's heading")
    p.add_argument("--out", default="report.html", metavar="PATH", help="output file (report.html)")
    p.add_argument(
        "--sample",
        action="store_true",
        help="use the embedded synthetic sample even with credentials",
    )
    p.add_argument(
        "--data",
        default=None,
        metavar="PATH",
        help="report on these files (anything `import` reads); "
        "default window: the data's whole span",
    )
    p.add_argument(
        "--engine",
        default=None,
        choices=("duckdb", "polars", "dask", "pandas"),
        help="where --data's ledger (a ledger dataset, or a ledger.parquet) is analysed: "
        "the sections aggregate in this engine and only their results come into memory "
        "(default duckdb; pandas reads the whole ledger into memory; other files are "
        "loaded into pandas whatever this says)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--no-figure-cache",
        action="store_true",
        help="draw every figure; by default a figure drawn before on the same data, "
        "options and code is taken from <cache dir>/figures/",
    )
    add_service_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .. import report
    from ..report.progress import progress_bar

    report.output_path(args.out)  # a wrong name or a missing directory: said before any work
    progress = not args.no_progress
    options: dict[str, Any] = {} if args.title is None else {"title": args.title}
    options["figure_cache"] = not args.no_figure_cache
    if args.data and args.sample:
        raise ValueError("--data and --sample exclude each other: pick one source")
    if args.engine is not None and not args.data:
        raise ValueError("--engine says where --data's ledger is analysed: pass --data too")
    # the command shows the report's steps as a bar on stderr (--no-progress: nothing)
    with progress_bar(progress) as on_step:
        if args.data:
            built = _report_on_data(args, on_step, options)
        else:
            from ..connection import connect  # the client: not imported for --data

            _check_window(args)  # before the sample is built or a service reached
            service = service_options(args)
            sample = True if args.sample else (False if service else None)
            with connect(sample=sample, progress=progress, **service) as client:
                built = report.build(
                    client,
                    args.start,
                    args.end,
                    chains=args.chains,
                    progress=on_step,
                    ledger=None if service else _embedded_ledger(args, progress),
                    **options,
                )
    path = built.save(args.out)
    print(path)
    return 0


def _check_window(args: argparse.Namespace) -> None:
    """--start/--end as the service can answer them: times, in order, from 1970 on."""
    from ..times import from_unix_epoch, to_timestamp, window

    if args.start is None and args.end is None:
        return
    start = None if args.start is None else to_timestamp(args.start, name="--start")
    end = None if args.end is None else to_timestamp(args.end, name="--end")
    if start is not None:
        from_unix_epoch(start)
    if start is not None and end is not None:
        window(start, end)  # start before end, or the error that says so


def _embedded_ledger(args: argparse.Namespace, progress: bool) -> Any:
    """The embedded sample's ledger when the report runs on it (else None).

    It is the data the embedded service serves (the last 30 days up to now),
    with both sides of each transfer: it feeds the report's latency, pending
    and V2 sections. The rule is connect()'s: the sample with ``--sample`` or
    without credentials.
    """
    from .. import config

    if not (args.sample or not config.Settings.from_env().has_credentials):
        return None
    from ..service.sample import load_sample

    return load_sample(progress=progress)


def _report_on_data(args: argparse.Namespace, on_step: ProgressCallback,
                    options: dict) -> object:  # fmt: skip
    """Build the report over ``--data``: a ledger dataset or file left in its engine, else
    the loaded ledger (no service)."""
    from pathlib import Path

    import pandas as pd

    from .. import report
    from ..report.engine_ledger import count
    from ..views.ledger_files import open_ledger

    engine = args.engine or "duckdb"
    ledger = None if engine == "pandas" else open_ledger(Path(args.data).expanduser(), engine)
    if ledger is None:
        from ..ingest import load  # the readers: only for files that are no ledger dataset

        ledger = load(args.data)
        if not len(ledger):
            raise ValueError(f"--data {args.data!r} holds no transfers to report on")
    elif not count(ledger.frame):
        raise ValueError(f"--data {args.data!r} holds no transfers to report on")
    # a directory of `sync --iris` holds what Circle said of its burns: why transfers wait
    said = Path(args.data).expanduser() / "iris" / "messages.parquet"
    if said.is_file():
        options["attestations"] = pd.read_parquet(said)
    return report.build(
        None, args.start, args.end, chains=args.chains, progress=on_step, ledger=ledger, **options
    )
